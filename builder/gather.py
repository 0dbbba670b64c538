"""Stage: Abstract → Abstract, each question's abstracts gathered from an ingested corpus as a search would.

A local corpus (e.g. every citation screened for a set of systematic reviews) holds far more abstracts
than a build can read in its time budget, most of them about none of the pack's questions. This stage
ranks the ingested abstracts (title and text) for each question with BM25 (``rank_bm25``) and keeps the
best ``top_n`` per question: the corpus a literature search for the question would have returned.
The query is the question's ``query`` (PubMed field tags and operators dropped), else its intervention,
comparator, outcome and population, a drug class expanded to its member drugs by the clinical lexicon.

Output: the gathered Abstract shards (corpus order), ``retrieved.jsonl`` (which question retrieved which
abstract, at which rank and BM25 score) and ``stats.json``. Configured by the build config's
``gather: {top_n: …}`` section (its pack defaults to the ``questions:`` section's); without a pack the build
skips it and claims reads every ingested abstract.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from biodivergence_dataset import io
from biodivergence_dataset.records import Abstract, Question

from .folders import claim_output
from .frameterms import GENERIC_WORDS
from .questionpacks import load_questions
from .questions.lexicon import LEXICON, alternatives, load_lexicon, stem
from .runtime import RuntimeConfig, check_stage_input
from .stage import Opened, Stage, execute

STAGE = "gather"
log = logging.getLogger(__name__)
RETRIEVED_FILE = "retrieved.jsonl"
_TOKEN = re.compile(r"[a-z][a-z0-9\-]*|\d+[a-z][a-z0-9\-]*")
_QUERY_SYNTAX = re.compile(r"\[[^\]]*\]|\b(?:AND|OR|NOT)\b|[()\"*]")


class GatherConfig(BaseModel):
    """Parameters of gathering (a YAML ``gather:`` section maps onto this)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)  # nan / inf: no BM25 parameter

    #: The question pack (the build fills it from the ``questions:`` section when left out).
    pack: str | None = None
    lexicon: str = str(LEXICON)
    #: Domain packs merged onto the lexicon (the build fills them from the ``questions:`` section when left out).
    domain_packs: list[str] = []
    #: Abstracts kept per question, best BM25 score first (an abstract may answer several questions).
    top_n: int = Field(80, ge=1)
    #: BM25 parameters (``rank_bm25.BM25Okapi``).
    k1: float = Field(1.5, gt=0)
    b: float = Field(0.75, ge=0, le=1)


def tokens(text: str) -> list[str]:
    """Lower-cased, lightly stemmed content words (the matcher's stemmer and stop words)."""
    return [stem(t) for t in _TOKEN.findall(text.lower()) if t not in GENERIC_WORDS]


def query_tokens(question: Question, lexicon_path: str = str(LEXICON), packs: tuple[str, ...] = ()) -> list[str]:
    """The search words of a question: its ``query`` without field tags and operators, else its slots with
    every alternative naming of each (drug-class members, synonyms of the lexicon and its domain ``packs``), each
    word once."""
    if question.query:
        return list(dict.fromkeys(tokens(_QUERY_SYNTAX.sub(" ", question.query))))
    lexicon = load_lexicon(lexicon_path, packs)
    words: list[str] = []
    for slot in (question.intervention, question.comparator, question.outcome, question.population):
        if slot:
            for alt in alternatives(slot, lexicon):
                words += tokens(alt.label.split(" (")[0])
    return list(dict.fromkeys(words or tokens(question.text)))  # its text when no slot was read


def rank(corpus: list[list[str]], queries: dict[str, list[str]], config: GatherConfig
         ) -> dict[str, list[tuple[int, float]]]:
    """``{question id: [(document index, score), …]}``: each query's best ``top_n`` documents with a
    positive score, best first (ties: corpus order)."""
    from rank_bm25 import BM25Okapi

    if not any(corpus):  # no document holds a word this tokenizer reads (BM25 would divide by a length of 0)
        return {qid: [] for qid in queries}
    bm25 = BM25Okapi(corpus, k1=config.k1, b=config.b)
    out = {}
    for qid, words in queries.items():
        scores = bm25.get_scores(words) if words else np.zeros(len(corpus))
        order = np.lexsort((np.arange(len(corpus)), -scores))[: config.top_n]
        out[qid] = [(int(i), round(float(scores[i]), 4)) for i in order if scores[i] > 0]
    return out


def _document(abstract: Abstract) -> list[str]:
    return tokens(f"{abstract.title} {abstract.text}")


def open_stage(abstracts_dir: str | Path, out_dir: Path, config: GatherConfig) -> Opened:
    if not config.pack:
        raise ValueError("the gather stage needs a question pack (gather: {pack: FILE} or questions: {pack: FILE})")
    load_questions(config.pack)  # a bad pack fails before any work
    abstracts_dir = check_stage_input(abstracts_dir, "abstracts")
    out_dir = claim_output(out_dir, STAGE, [abstracts_dir])
    params = {"config": config.model_dump(), "input": io.done_fingerprint(abstracts_dir)}
    return Opened(STAGE, config, [str(abstracts_dir)], out_dir, params)


def data_files(config: GatherConfig) -> list[Path]:
    """The pack and the lexicon with its domain packs (the words of each question's query)."""
    return [Path(p) for p in (config.pack, config.lexicon, *config.domain_packs)]


def work(opened: Opened, runtime: RuntimeConfig) -> io.StageStats:
    """Gather the pack's questions' abstracts (one global search, so ``runtime`` is not used)."""
    config, out_dir = opened.config, opened.out
    questions = load_questions(config.pack)
    abstracts = list(io.read_records(opened.inputs[0], Abstract))
    ranked = rank([_document(a) for a in _progress(abstracts)],
                  {q.question_id: query_tokens(q, config.lexicon, tuple(config.domain_packs)) for q in questions}, config)
    stats = io.StageStats(STAGE, unit="abstracts")
    retrieved, kept = [], set()
    for qid, hits in ranked.items():
        stats.count("abstracts_per_question", qid, len(hits))
        for position, (i, score) in enumerate(hits, 1):
            retrieved.append({"question_id": qid, "article_uid": abstracts[i].article_uid, "rank": position,
                              "score": score})
            kept.add(i)
    stats.seen, stats.kept = len(abstracts), len(kept)
    if abstracts and not kept:
        log.warning("gather: no question retrieved any of the %d abstracts (none holds a word of the questions' "
                    "search words); the gathered corpus is empty", len(abstracts))
    stats.drop("not_retrieved", len(abstracts) - len(kept))
    stats.figures.update({"questions": len(questions), "top_n": config.top_n,
                          "retrievals": len(retrieved)})
    io.write_text_atomic(out_dir / RETRIEVED_FILE, "".join(json.dumps(r) + "\n" for r in retrieved))
    io.write_shards(out_dir, _kept(abstracts, kept))
    return stats


stage = Stage(STAGE, GatherConfig, open_stage, work, reads=("abstracts",), writes="gathered", module=__name__,
              needs="pack", data_files=data_files)


def run_stage(abstracts_dir: str | Path, out_dir: str | Path, config: GatherConfig | None = None,
              runtime: RuntimeConfig | None = None) -> dict:
    """Gather the pack's questions' abstracts from a finished Abstract stage folder into ``out_dir`` (resumable)."""
    return execute(stage, abstracts_dir, out_dir, config, runtime)


def _kept(abstracts: list[Abstract], kept: set[int]) -> Iterable[Abstract]:
    return (a for i, a in enumerate(abstracts) if i in kept)


def _progress(items: list) -> Iterable:
    from tqdm import tqdm

    return tqdm(items, desc=STAGE, unit=" abstracts", mininterval=2.0, leave=False)
