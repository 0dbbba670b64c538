"""Stage: Claim → Assignment (claims → the pack's questions they answer), between claims and mine: the
sharded work of either assigner, the article pass, ``questions.json`` and the command line.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import numpy as np

from biodivergence_dataset import io
from biodivergence_dataset.arguments import add_config_arguments, config_from_args
from biodivergence_dataset.records import Abstract, Claim, Question

from ..folders import claim_output
from ..questionpacks import load_questions, unread_fields
from ..runtime import RuntimeConfig, ShardJob, check_stage_input, clear_tasks, run_sharded
from ..stage import Opened, Stage, execute
from .compiled import CompiledQuestion, compile_questions
from .config import QUESTIONS_FILE, STAGE, Assignment, QuestionsConfig
from .filters import (
    GENERAL_FILTERS,
    claim_words,
    reports_baseline,
    reports_correlation,
    reports_interaction,
    reports_mediation,
)
from .match import QuestionIndex, answers, article_answers, claim_may_answer, claim_stems


def abstract_texts(abstracts_dir: str | Path | None, needed: set[str]) -> dict[str, str]:
    """The texts of the ``needed`` articles' abstracts (by ``article_uid``) in an abstracts stage folder; {} without
    one. Claims are read with their abstracts here and in mining."""
    if not abstracts_dir or not needed:
        return {}
    return {a.article_uid: a.text for a in io.read_records(abstracts_dir, Abstract) if a.article_uid in needed}


def assign_claims(claims: Iterable[Claim], config: QuestionsConfig, stats: io.StageStats) -> Iterator[Assignment]:
    """One rank's work (see :mod:`builder.runtime`): the assignments of its claims (vectors from the cache)."""
    from tqdm import tqdm

    from ..embeddings import embed_texts, embedding_dimension, load_encoder, open_cache

    claims = list(claims)
    compiled = compile_questions(load_questions(config.pack), config.read_lexicon())
    index = QuestionIndex(compiled)
    encoder = load_encoder(config.model, config.device, config.precision)
    cache = open_cache(config.cache_dir, config.model, embedding_dimension(encoder), config.precision)
    q_emb = embed_texts([c.question.text for c in compiled], encoder, cache, config.batch_size)
    if config.assigner == "learned":
        yield from _learned(claims, compiled, q_emb, config, stats,
                            lambda s: embed_texts(s, encoder, cache, config.batch_size))
        return
    texts = abstract_texts(config.abstracts_dir, {c.article_uid for c in claims})
    reading = tqdm(claims, desc=f"{STAGE}: reading claims", unit=" claims", mininterval=2.0, leave=False)
    read = [_may_answer(c, texts.get(c.article_uid, ""), compiled, index, config) for c in reading]
    words = [w for w, _ in read]
    possible = [i for i, (_, reach) in enumerate(read) if reach]
    similarities = dict(zip(possible, embed_texts([claims[i].sentence for i in possible], encoder, cache,
                                                  config.batch_size) @ q_emb.T, strict=True))
    for i, claim in enumerate(tqdm(claims, desc=STAGE, unit=" claims", mininterval=2.0, leave=False)):
        stats.seen += 1
        found = (answers(claim.sentence, texts.get(claim.article_uid, ""), similarities[i].tolist(), compiled, config,
                         words[i], only=read[i][1]) if i in similarities else [])
        for q, (score, why) in found:
            stats.count("assignments_per_question", q.question.question_id)
            yield Assignment(claim_id=claim.claim_id, question_id=q.question.question_id,
                             article_uid=claim.article_uid, score=score, why=why)
        if found:
            stats.kept += 1
            stats.count("questions_per_claim", len(found) if len(found) < 3 else "3+")
        else:
            stats.drop("baseline" if reports_baseline(claim.sentence)
                       else "correlation" if i in similarities and reports_correlation(claim.sentence)
                       else "interaction" if i in similarities and reports_interaction(claim.sentence)
                       else "mediation" if i in similarities and reports_mediation(claim.sentence)
                       else "no_question")


def _may_answer(claim: Claim, abstract: str, compiled: list[CompiledQuestion], index: QuestionIndex,
                config: QuestionsConfig) -> tuple[frozenset[str], set[int]]:
    """A claim's ``claim_words`` and the questions it may answer (``claim_may_answer``, tried on the questions
    the index reaches from its stems): none when it may answer no question."""
    words = claim_words(claim.sentence, abstract)
    reach = index.reachable(claim_stems(claim.sentence, abstract, words))
    if not claim_may_answer(claim.sentence, abstract, words, [compiled[k] for k in sorted(reach)], config):
        return words, set()
    return words, reach


def _learned(claims: list[Claim], compiled: list[CompiledQuestion], q_emb, config: QuestionsConfig,
             stats: io.StageStats, embed: Callable[[list[str]], np.ndarray]) -> Iterator[Assignment]:
    """``assigner: learned``: the general filters, then the answerer's relevance among the closest questions."""
    from ..reader.answerer import load_answerer
    from .relevance import drop_reason, learned_assignments

    reasons = [drop_reason(c.sentence, GENERAL_FILTERS) for c in claims]
    kept = [i for i, r in enumerate(reasons) if r is None]
    read = learned_assignments(
        [claims[i].sentence for i in kept], embed([claims[i].sentence for i in kept]) @ q_emb.T if kept
        else np.zeros((0, len(compiled))), [q.question.text for q in compiled], load_answerer(config.answerer),
        config.learned_candidates, config.min_similarity)
    found = dict(zip(kept, read, strict=True))
    for i, claim in enumerate(claims):
        stats.seen += 1
        answered, why_not = found.get(i, ([], reasons[i]))
        for j, relevance, cosine in answered:
            q = compiled[j].question
            stats.count("assignments_per_question", q.question_id)
            yield Assignment(claim_id=claim.claim_id, question_id=q.question_id, article_uid=claim.article_uid,
                             score=round(relevance, 4), why=f"answerer relevance {relevance:.2f}, cosine {cosine:.2f}")
        if answered:
            stats.kept += 1
            stats.count("questions_per_claim", len(answered) if len(answered) < 3 else "3+")
        else:
            stats.drop(why_not)


def _best_of_articles(assignments: list[Assignment], stats: io.StageStats) -> list[Assignment]:
    """``assigner: learned``: each (article, question) answered once, by its row of highest relevance
    (``relevance.best_per_article``), over all shards; a claim left with no question is ``not_best_of_article``."""
    from .relevance import best_per_article

    keep = best_per_article([(a.article_uid, a.question_id, a.score) for a in assignments])
    kept = [a for a, k in zip(assignments, keep, strict=True) if k]
    for a, k in zip(assignments, keep, strict=True):
        if not k:
            stats.count("assignments_per_question", a.question_id, -1)
    if lost := len({a.claim_id for a in assignments} - {a.claim_id for a in kept}):
        stats.kept -= lost
        stats.drop("not_best_of_article", lost)
    per_claim = Counter(a.claim_id for a in kept)
    stats.counts["questions_per_claim"] = Counter(str(n if n < 3 else "3+") for n in per_claim.values())
    return kept


def _read_claims(claims_dir: Path, questions: list[Question], config: QuestionsConfig
                 ) -> tuple[list[Claim], dict[str, str], list[CompiledQuestion]]:
    """The stage's claims, their abstracts' texts and the compiled pack, for the passes run before and after the
    sharded one (each reads them afresh, so the sharded pass never runs beside a whole corpus held in memory)."""
    claims = list(io.read_records(claims_dir, Claim))
    return (claims, abstract_texts(config.abstracts_dir, {c.article_uid for c in claims}),
            compile_questions(questions, config.read_lexicon()))


def _article_answers(claims: list[Claim], texts: dict[str, str], compiled: list[CompiledQuestion],
                     assignments: list[Assignment], config: QuestionsConfig, encoder, cache) -> list[Assignment]:
    """``article_answers`` over the stage's claims, after the claims' own assignments."""
    from ..embeddings import embed_texts

    q_emb = embed_texts([q.question.text for q in compiled], encoder, cache, config.batch_size)
    return list(article_answers(claims, texts, {(a.article_uid, a.question_id) for a in assignments}, compiled,
                                config, lambda s: embed_texts(s, encoder, cache, config.batch_size), q_emb))


def _possible_sentences(claims: list[Claim], texts: dict[str, str], compiled: list[CompiledQuestion],
                        config: QuestionsConfig) -> list[str]:
    """The sentences of the claims that ``may_answer`` a question: the only ones the stage embeds (every claim's
    under ``assigner: learned``, which reads no lexicon)."""
    from tqdm import tqdm

    if config.assigner == "learned":
        return [c.sentence for c in claims]
    index = QuestionIndex(compiled)
    reading = tqdm(claims, desc=f"{STAGE}: claims to embed", unit=" claims", mininterval=2.0, leave=False)
    return [c.sentence for c in reading if _may_answer(c, texts.get(c.article_uid, ""), compiled, index, config)[1]]


def _abstracts_dir(claims_dir: Path, config: QuestionsConfig) -> str | None:
    if config.abstracts_dir:
        return config.abstracts_dir
    try:
        inputs = io.read_manifest(claims_dir).get("inputs", [])
    except FileNotFoundError:
        return None
    return inputs[0] if inputs and Path(inputs[0]).is_dir() else None


def open_stage(claims_dir: str | Path, out_dir: Path, config: QuestionsConfig) -> Opened:
    if not config.pack:
        raise ValueError("the questions stage needs a question pack (questions: {pack: FILE} or --pack FILE)")
    load_questions(config.pack)  # a bad pack fails before any work
    config.read_lexicon()
    claims_dir = check_stage_input(claims_dir, "claims")
    out_dir = claim_output(out_dir, STAGE, [claims_dir])
    config = config.model_copy(update={"abstracts_dir": _abstracts_dir(claims_dir, config),
                                       "cache_dir": config.cache_dir or str(out_dir / "embedding_cache")})
    params = {"config": config.model_dump(), "input": io.done_fingerprint(claims_dir)}
    return Opened(STAGE, config, [str(claims_dir)], out_dir, params)


def data_files(config: QuestionsConfig) -> list[Path]:
    """The pack, the lexicon with its domain packs, and for the learned assigner the question answerer's folder."""
    files = [Path(p) for p in (config.pack, config.lexicon, *config.domain_packs)]
    if config.assigner == "learned":
        from ..reader.answerer import SHIPPED

        files.append(Path(config.answerer) if config.answerer else SHIPPED)
    return files


def work(opened: Opened, runtime: RuntimeConfig) -> io.StageStats:
    """Assign the claims to the pack's questions (the claims embedded and read on ``runtime.tasks`` ranks)."""
    from ..embeddings import EmbedConfig, embedding_dimension, fill_cache, load_encoder, open_cache

    config, out_dir, claims_dir = opened.config, opened.out, Path(opened.inputs[0])
    questions = load_questions(config.pack)
    encoder = load_encoder(config.model, config.device, config.precision)
    cache = open_cache(config.cache_dir, config.model, embedding_dimension(encoder), config.precision)
    to_embed = _possible_sentences(*_read_claims(claims_dir, questions, config), config) + [q.text for q in questions]
    embedded = fill_cache(to_embed, cache, out_dir, EmbedConfig.of(config), runtime)
    job = ShardJob(STAGE, assign_claims, config, claims_dir, Claim, Assignment, "claims", config.shard_size)
    assignments, stats = run_sharded(job, out_dir, runtime)
    if config.assigner == "learned":
        assignments = _best_of_articles(list(assignments), stats)
    if config.whole_abstract and config.assigner == "rules":  # assignments are few (a claim answers few questions): held to see who answered what
        assignments = list(assignments)
        added = _article_answers(*_read_claims(claims_dir, questions, config), assignments, config, encoder, cache)
        newly = {a.claim_id for a in added} - {a.claim_id for a in assignments}
        stats.kept += len(newly)  # counted as answering no question by the sharded pass, which could not see them
        stats.dropped["no_question"] -= len(newly)
        assignments += added
        for a in added:
            stats.count("assignments_per_question", a.question_id)
        stats.figures["article_answers"] = len(added)
    io.write_json_atomic(out_dir / QUESTIONS_FILE, [q.model_dump(mode="json") for q in questions])
    per_question = stats.counts.setdefault("assignments_per_question", {})
    for q in questions:
        per_question.setdefault(q.question_id, 0)
    stats.figures.update({"questions": len(questions), "claims_embedded": embedded,
                          "questions_unread": sum(1 for q in questions if unread_fields(q)),
                          "questions_without_claims": sum(1 for n in per_question.values() if n == 0)})
    io.write_shards(out_dir, assignments, shard_size=config.shard_size)
    clear_tasks(out_dir)
    return stats


stage = Stage(STAGE, QuestionsConfig, open_stage, work, reads=("claims",), writes="questions", module=__name__,
              needs="pack", data_files=data_files)


def run_stage(claims_dir: str | Path, out_dir: str | Path, config: QuestionsConfig | None = None,
              runtime: RuntimeConfig | None = None) -> dict:
    """Assign the claims of a finished Claim stage folder to the pack's questions (resumable)."""
    return execute(stage, claims_dir, out_dir, config, runtime)


def read_assignments(questions_dir: str | Path) -> tuple[dict[str, Question], dict[str, dict[str, float]]]:
    """A finished questions folder: its questions by id, and each assigned claim's ``{question_id: score}``."""
    folder = check_stage_input(questions_dir, "questions")
    questions = {q["question_id"]: Question(**q)
                 for q in json.loads((folder / QUESTIONS_FILE).read_text(encoding="utf-8"))}
    by_claim: dict[str, dict[str, float]] = {}
    for a in io.read_records(folder, Assignment):
        by_claim.setdefault(a.claim_id, {})[a.question_id] = a.score
    return questions, by_claim


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("claims_dir", metavar="CLAIMS", help="finished claims stage folder")
    parser.add_argument("--out", required=True, help="output folder for the assignments")
    add_config_arguments(parser, QuestionsConfig, options={"pack": {"required": True}},
                         aliases={"abstracts_dir": "--abstracts", "domain_packs": "--domain-pack",
                                  "model": "--encoder"})


def run(args: argparse.Namespace) -> int:
    config = config_from_args(QuestionsConfig, args)
    stats = run_stage(args.claims_dir, args.out, config)
    per = stats.get("assignments_per_question", {})
    print(f"questions: {stats['kept']} of {stats['seen']} claims answer at least one of {len(per)} questions "
          f"({sum(per.values())} assignments) -> {args.out}")
    return 0
