"""Gold check of annotators on expert-labelled claim pairs: ``biodivergence goldcheck``.

- SciFact: claims that share an evidence abstract; opposite labels (SUPPORT vs CONTRADICT) →
  conflict, the same label → no conflict (train + dev: 334 + 185 = 519 pairs).
- HealthVer: for every claim with both Supports and Refutes evidence, pairs of its non-neutral
  evidence passages; opposite labels → conflict, the same label → no conflict.
- PubMedQA (PQA-L): the question, read as a statement ("Do statins reduce X?" → "statins reduce
  X"), against the expert conclusion; the expert decision "no" → conflict, "yes" → no conflict
  ("maybe" is left out). The conclusion answers exactly the question, so every pair is same-question.
- PubMedQA with its question (``pubmedqa_question``): the same pairs carrying the PubMedQA question and no
  abstract, as a corpus of review conclusions grouped by question gives them; it scores the path such pairs
  take through an annotator (the conclusion's answer to a declared yes / no question).

The learned finding reader (``--reader``) is scored on two more sets, held-out items only
(``builder.reader.data.is_heldout``: it was trained on the rest): Evidence Inference findings (held-out
articles; accuracy and three-way macro-F1, beside a TF-IDF + logistic-regression floor trained on the other
articles) and HealthVer same-claim pairs that carry their claim as the question (``healthver_pairs(...,
with_question=True)``; κ of the reader's disagreement beside the negation rule).

NLI4CT is not used: its statements are checked against clinical-trial *tables* (eligibility
criteria, adverse-event counts), not against another claim's finding, so they make no claim pairs
(the learned judge trains on them, see ``judge_data``).

Pairs are wrapped into real ``CandidatePair`` records (claim ids via ``claim_id_for``, pair ids via
``pair_id_for``; mining scores are placeholders). ``gold_check`` reports the confusion matrix and
Cohen's κ for conflict vs no conflict, next to the negation-mismatch baseline ("exactly one claim
contains a negation word").
"""

from __future__ import annotations

import argparse
import csv
import functools
import hashlib
import itertools
import json
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from biodivergence_dataset import ontology
from biodivergence_dataset.records import CandidatePair, Claim, MiningScores, Question, claim_id_for, pair_id_for
from biodivergence_text import cues

from ..agreement import cohen_kappa, is_conflict
from ..frames import finding_cue_starts
from ..goldparts import PART_NAMES, in_part
from ..sources.scifact import parse_array_repr

SCIFACT_CLAIM_FILES = ("claims_train.jsonl", "claims_dev.jsonl")
HEALTHVER_FILES = ("healthver_dev.csv", "healthver_test.csv")
_PLACEHOLDER_SCORES = MiningScores(similarity=0.0, disagreement=0.0, entity_overlap=0.0, type_compatibility=1.0,
                                   year_penalty=0.0, combined_score=0.0)


@dataclass(frozen=True)
class GoldPair:
    pair: CandidatePair
    conflict: bool
    source: str
    #: The items the pair was made from (claim ids, a claim's text, a PMID): a learned annotator trained on some
    #: items of the source is scored only on pairs whose items it never saw (``heldout_gold``).
    keys: tuple[str, ...] = ()


def make_claim(article_uid: str, text: str, domain: str, source: str) -> Claim:
    """A Claim record for a whole gold sentence (offsets 0..len)."""
    text = " ".join(text.split())
    return Claim(claim_id=claim_id_for(article_uid, 0, len(text)), article_uid=article_uid, domain=domain,
                 source=source, sentence=text, claim_type=ontology.DEFAULT_CLAIM_TYPE, sentence_start=0,
                 sentence_end=len(text), confidence=1.0)


def make_pair(a: Claim, b: Claim, abstract_a: str = "", abstract_b: str = "",
              question: Question | None = None) -> CandidatePair:
    return CandidatePair(pair_id=pair_id_for(a.claim_id, b.claim_id), domain=a.domain, claim_a=a, claim_b=b,
                         abstract_a=abstract_a, abstract_b=abstract_b, scores=_PLACEHOLDER_SCORES, question=question)


def _scifact_abstracts(data_dir: Path, doc_ids: set[str]) -> dict[str, str]:
    csv.field_size_limit(sys.maxsize)
    with open(data_dir / "corpus_train.csv", newline="", encoding="utf-8") as fh:
        return {row["doc_id"]: " ".join(parse_array_repr(row["abstract"]) or [])
                for row in csv.DictReader(fh) if row["doc_id"] in doc_ids}


def scifact_pairs(data_dir: str | Path, with_abstracts: bool = True) -> list[GoldPair]:
    """The 519 SciFact claim pairs sharing an evidence abstract (train + dev)."""
    data_dir = Path(data_dir)
    by_doc: dict[str, list[tuple[int, str, str]]] = defaultdict(list)
    for name in SCIFACT_CLAIM_FILES:
        for line in (data_dir / name).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            for doc, evidence in row["evidence"].items():
                labels = {e["label"] for e in evidence}
                if len(labels) == 1:
                    by_doc[doc].append((row["id"], row["claim"], labels.pop()))
    abstracts = _scifact_abstracts(data_dir, set(by_doc)) if with_abstracts else {}
    domain = ontology.domain("clinical_trials_epidemiology").name
    out = []
    for doc in sorted(by_doc, key=int):
        for (ia, ta, la), (ib, tb, lb) in itertools.combinations(by_doc[doc], 2):
            a = make_claim(f"scifact-claim:{ia}", ta, domain, "scifact")
            b = make_claim(f"scifact-claim:{ib}", tb, domain, "scifact")
            abstract = abstracts.get(doc, "")
            out.append(GoldPair(make_pair(a, b, abstract, abstract), la != lb, "scifact",
                                (a.article_uid, b.article_uid)))
    return out


def healthver_rows(data_dir: str | Path) -> Iterator[tuple[str, dict[str, str]]]:
    """(file name, row) of every HealthVer claim–evidence row (columns id, evidence, claim, label, …)."""
    for name in HEALTHVER_FILES:
        with open(Path(data_dir) / name, newline="", encoding="utf-8") as fh:
            yield from ((name, row) for row in csv.DictReader(fh))


def claim_key(claim: str) -> str:
    """A HealthVer claim as the key of its evidence rows and same-claim pairs (whitespace folded, lower case)."""
    return " ".join(claim.split()).lower()


def healthver_question(name: str, claim: str) -> Question:
    """A HealthVer claim as the question its evidence texts are judged against."""
    claim = " ".join(claim.split())
    return Question(question_id=f"healthver:{name}:{hashlib.sha1(claim.encode()).hexdigest()[:12]}", text=claim)


def healthver_pairs(data_dir: str | Path, with_question: bool = False) -> list[GoldPair]:
    """Evidence–evidence pairs of HealthVer claims that have both Supports and Refutes evidence; with
    ``with_question`` each pair carries its claim as its question (the same-claim pair set)."""
    domain = ontology.domain("infectious_disease").name
    by_claim: dict[tuple[str, str], list[dict[str, str]]] = defaultdict(list)
    for name, row in healthver_rows(data_dir):
        by_claim[name, row["claim"]].append(row)
    out = []
    for (name, claim), rows in by_claim.items():
        evidence = [r for r in rows if r["label"] in ("Supports", "Refutes")]
        if {r["label"] for r in evidence} != {"Supports", "Refutes"}:
            continue
        question = healthver_question(name, claim) if with_question else None
        for ra, rb in itertools.combinations(evidence, 2):
            a = make_claim(f"healthver:{name}:{ra['id']}", ra["evidence"], domain, "healthver")
            b = make_claim(f"healthver:{name}:{rb['id']}", rb["evidence"], domain, "healthver")
            out.append(GoldPair(make_pair(a, b, question=question), ra["label"] != rb["label"],
                                "healthver_question" if with_question else "healthver", (claim_key(claim),)))
    return out


def negation_mismatch(pair: CandidatePair) -> bool:
    """Baseline: exactly one claim contains a negation word."""
    return cues.has_negation(pair.claim_a.sentence) != cues.has_negation(pair.claim_b.sentence)


def gold_check(gold: Iterable[GoldPair], predict: Callable[[CandidatePair], str]) -> dict[str, Any]:
    """Confusion matrix (gold conflict / no conflict × predicted class) and binary κ vs the baseline."""
    gold = list(gold)
    truth = [g.conflict for g in gold]
    labels = [predict(g.pair) for g in gold]
    predicted = [is_conflict(x) for x in labels]
    baseline = [negation_mismatch(g.pair) for g in gold]
    matrix = {("conflict" if t else "no_conflict_gold"): Counter() for t in (True, False)}
    for t, label in zip(truth, labels):
        matrix["conflict" if t else "no_conflict_gold"][label] += 1
    return {
        "pairs": len(gold),
        "gold_conflict": sum(truth),
        "gold_no_conflict": len(gold) - sum(truth),
        "confusion": {k: dict(sorted(v.items())) for k, v in matrix.items()},
        "accuracy": sum(p == t for p, t in zip(predicted, truth)) / len(gold) if gold else 0.0,
        "kappa": cohen_kappa(truth, predicted),
        "baseline_negation_mismatch_kappa": cohen_kappa(truth, baseline),
    }


# --------------------------------------------------------------------------- PubMedQA-derived pairs

_QUESTION_AUX = re.compile(r"^\s*(do|does|did|is|are|was|were|can|could|should|has|have|had|will|would|may|might)"
                           r"\s+", re.IGNORECASE)
#: Auxiliaries that carry no meaning of their own once the question is a statement ("Does X reduce Y?").
_DO_SUPPORT = frozenset({"do", "does", "did"})
#: Words that open a predicate before its finding word: the auxiliary goes before them ("is a risk factor").
_PREDICATE_OPENERS = frozenset(["a", "an", "the", "more", "less", "most", "least", "also"])
#: A finding word after one of these sits inside the subject ("a prediction of different subtypes").
_PREPOSITIONS = frozenset(["of", "in", "on", "for", "with", "to", "between", "among", "from", "by", "at"])
_MODALS = frozenset(["can", "could", "should", "will", "would", "may", "might"])
#: Noun endings: a finding word with one names a thing in the subject ("stimulation", "treatment").
_NOUN_ENDINGS = ("ion", "ions", "ment", "ments", "ance", "ence", "ity")
_WORD = re.compile(r"\S+")


def _auxiliary_position(aux: str, text: str) -> int | None:
    """Where the fronted auxiliary ``aux`` of a yes/no question goes back in its statement: before
    ``there``; a modal before "be"; else before the predicate of the first verb-like finding word not
    inside the subject (stepping back over "a", "more" …); else before the first later unhyphenated
    past participle; None if unknown."""
    words = [(m.start(), m.group(0).lower().strip(",;()")) for m in _WORD.finditer(text)]
    if words and words[0][1] == "there":
        return words[1][0] if len(words) > 1 else None
    if aux in _MODALS:
        return next((start for start, w in words[1:] if w == "be"), None) or _cue_position(words, text)
    return _cue_position(words, text) or next(
        (start for start, w in words[1:] if len(w) > 4 and w.endswith("ed") and "-" not in w), None)


def _cue_position(words: list[tuple[int, str]], text: str) -> int | None:
    index = {start: i for i, (start, _) in enumerate(words)}
    for cue in finding_cue_starts(text):
        i = index.get(cue)
        if not i or words[i - 1][1] in _PREPOSITIONS or words[i][1].endswith(_NOUN_ENDINGS):
            continue
        while i > 0 and words[i - 1][1] in _PREDICATE_OPENERS:
            i -= 1
        if i:  # else the finding word is the subject's own noun ("a prediction of …")
            return words[i][0]
    return None


def _as_statement(question: str) -> str:
    """One yes/no question as the statement it asks about; unchanged when it opens with no auxiliary."""
    m = _QUESTION_AUX.match(question)
    if not m:
        return question.strip().rstrip(" ?")
    aux, rest = m.group(1).lower(), question[m.end():].strip().rstrip(" ?")
    where = None if aux in _DO_SUPPORT else _auxiliary_position(aux, rest)
    return rest if where is None else f"{rest[:where]}{aux} {rest[where:]}"


def question_as_claim(question: str) -> str:
    """A yes/no question read as the statement it asks about, the auxiliary put back after the subject
    ("Do statins reduce X?" → "Statins reduce X.", "Is X associated with Y?" → "X is associated with Y.")."""
    head, colon, tail = question.partition(": ")
    if colon and _QUESTION_AUX.match(tail):  # "Title: does X improve Y?" keeps the title as context
        return f"{head}: {_as_statement(tail)}."
    text = _as_statement(question)
    return (text[:1].upper() + text[1:] + ".") if text else question


def pubmedqa_records(data_dir: str | Path) -> dict[str, dict[str, Any]]:
    """PMID → PQA-L record (QUESTION, CONTEXTS, LONG_ANSWER, final_decision, …)."""
    return json.loads((Path(data_dir) / "ori_pqal.json").read_text(encoding="utf-8"))


def pubmedqa_pairs(data_dir: str | Path, with_question: bool = False) -> list[GoldPair]:
    """PQA-L question-as-claim vs expert conclusion: decision "no" → conflict, "yes" → no conflict. With
    ``with_question`` each pair carries the PubMedQA question and no abstract, as a corpus of review conclusions
    grouped by question gives them: the conflict is the conclusion answering its question "no"."""
    data = pubmedqa_records(data_dir)
    domain = ontology.domain("clinical_trials_epidemiology").name
    out = []
    for pmid, rec in sorted(data.items()):
        if rec["final_decision"] not in ("yes", "no"):
            continue
        context = "" if with_question else " ".join(rec["CONTEXTS"])
        question = (Question(question_id=f"pubmedqa:{pmid}", text=" ".join(rec["QUESTION"].split()))
                    if with_question else None)
        a = make_claim(f"pubmedqa-question:{pmid}", question_as_claim(rec["QUESTION"]), domain, "pubmedqa")
        b = make_claim(f"pmid:{pmid}", rec["LONG_ANSWER"], domain, "pubmedqa")
        out.append(GoldPair(make_pair(a, b, context, context, question=question), rec["final_decision"] == "no",
                            "pubmedqa_question" if with_question else "pubmedqa", (pmid,)))
    return out


# --------------------------------------------------------------------------- the gold sources

#: Gold source name → (folder under the data directory, reader).
GOLD_SOURCES: dict[str, tuple[str, Callable[[Path], list[GoldPair]]]] = {
    "scifact": ("scifact", scifact_pairs),
    "healthver": ("healthver", healthver_pairs),
    # the same pairs, each carrying its claim as the question both evidence texts answer
    "healthver_question": ("healthver", functools.partial(healthver_pairs, with_question=True)),
    "pubmedqa": ("pubmedqa_pqal", pubmedqa_pairs),
    # the same pairs carrying the PubMedQA question, conclusions without their abstracts
    "pubmedqa_question": ("pubmedqa_pqal", functools.partial(pubmedqa_pairs, with_question=True)),
}
#: A gold set made from another source's items (what "trained on" means for it).
ITEMS_OF: dict[str, str] = {"healthver_question": "healthver", "pubmedqa_question": "pubmedqa"}
#: A panel member must beat the negation rule by this much κ on every source (issue 12's bar).
MIN_KAPPA_GAIN = 0.15


def source_folder(source: str, data_dir: str | Path, table: dict[str, tuple[str, Any]], kind: str) -> tuple[Path, Any]:
    """The folder of ``source`` under ``data_dir`` and its reader(s) in ``table`` (ValueError naming the known
    sources, FileNotFoundError naming the folder)."""
    if source not in table:
        raise ValueError(f"unknown {kind} source {source!r}; expected one of {sorted(table)}")
    folder, readers = table[source]
    path = Path(data_dir) / folder
    if not path.is_dir():
        raise FileNotFoundError(f"{kind} source {source!r}: folder {path} does not exist")
    return path, readers


def load_gold(source: str, data_dir: str | Path) -> list[GoldPair]:
    """The pairs of one gold source (ValueError naming the known sources, FileNotFoundError naming the folder)."""
    path, reader = source_folder(source, data_dir, GOLD_SOURCES, "gold")
    return reader(path)


def available_sources(data_dir: str | Path) -> list[str]:
    return [s for s, (folder, _) in GOLD_SOURCES.items() if (Path(data_dir) / folder).is_dir()]


# --------------------------------------------------------------------------- scoring


def kappa_ci(truth: list[bool], predicted: list[bool], n_boot: int, seed: int) -> tuple[float, float]:
    """95% percentile bootstrap interval of binary Cohen's κ (pairs resampled with replacement)."""
    import numpy as np

    if n_boot <= 0 or not truth:
        return (float("nan"), float("nan"))
    t, p = np.asarray(truth, dtype=bool), np.asarray(predicted, dtype=bool)
    idx = np.random.default_rng(seed).integers(0, len(t), size=(n_boot, len(t)))
    tt, pp = t[idx], p[idx]
    po = (tt == pp).mean(axis=1)
    pt, ppr = tt.mean(axis=1), pp.mean(axis=1)
    pe = pt * ppr + (1 - pt) * (1 - ppr)
    with np.errstate(divide="ignore", invalid="ignore"):
        kappas = np.where(pe < 1, (po - pe) / (1 - pe), 0.0)
    lo, hi = np.percentile(kappas, [2.5, 97.5])
    return (round(float(lo), 4), round(float(hi), 4))


def score_source(gold: list[GoldPair], labels: list[str], n_boot: int = 1000, seed: int = 0) -> dict[str, Any]:
    """κ, accuracy and bootstrap intervals of an annotator's labels next to the negation rule's."""
    truth = [g.conflict for g in gold]
    predicted = [is_conflict(x) for x in labels]
    rule = [negation_mismatch(g.pair) for g in gold]
    kappa, rule_kappa = cohen_kappa(truth, predicted), cohen_kappa(truth, rule)
    return {
        "pairs": len(gold), "gold_conflict": sum(truth), "predicted_conflict": sum(predicted),
        "accuracy": round(sum(p == t for p, t in zip(predicted, truth, strict=True)) / len(gold), 4) if gold else 0.0,
        "kappa": round(kappa, 4), "kappa_ci": kappa_ci(truth, predicted, n_boot, seed),
        "rule_kappa": round(rule_kappa, 4), "rule_kappa_ci": kappa_ci(truth, rule, n_boot, seed),
        "gain": round(kappa - rule_kappa, 4), "beats_rule": kappa - rule_kappa >= MIN_KAPPA_GAIN,
    }


def make_local_annotator(spec: str, heldout: str | None = None):
    """A panel member that labels pairs in-process (frames, heuristic, judge:PATH); for ``judge``, the
    fold trained without ``heldout`` when the folder has one."""
    from . import make_local

    return make_local(spec, heldout=heldout)


def with_slot_similarity(gold: list[GoldPair], encoder) -> list[GoldPair]:
    """The gold pairs with the exposure/outcome phrase similarities the miner gives every mined pair, so
    annotators see gold pairs exactly as they see pipeline pairs."""
    from .frames import slot_similarities

    sims = slot_similarities([g.pair for g in gold], encoder)
    return [GoldPair(g.pair.model_copy(update={"scores": g.pair.scores.model_copy(
        update={"exposure_similarity": e, "outcome_similarity": o})}), g.conflict, g.source, g.keys)
        for g, (e, o) in zip(gold, sims, strict=True)]


def reader_sets(reader: str | None, data_dir: str | Path) -> dict[str, Any]:
    """The finding reader's gold sets (held-out items only): ``reader`` is a folder / Hub id, or None for the
    shipped reader."""
    from ..reader import load_reader
    from ..reader.evaluate import goldcheck_sets

    return {"reader": reader or "shipped", **goldcheck_sets(load_reader(reader), data_dir)}


def gold_part(gold: GoldPair) -> str | None:
    """The part (``goldparts.PART_NAMES``: development or check) every item of a gold pair is in, else None."""
    return next((name for part, name in PART_NAMES.items() if gold_in_part(gold, part)), None)


def gold_in_part(gold: GoldPair, part: str) -> bool:
    """Whether a goldcheck pair is made only of items of ``part`` (``goldparts.PARTS``) of the source they come
    from (its ``keys``: claim ids, a claim's text, a PMID)."""
    source = ITEMS_OF.get(gold.source, gold.source)
    return bool(gold.keys) and all(in_part(source, key, part) for key in gold.keys)


def score_parts(gold: list[GoldPair], labels: list[str], trained: bool, n_boot: int, seed: int) -> dict[str, Any]:
    """``score_source`` on the development and the check part of one source; ``trained_on`` marks the
    development part of an annotator that learned from it (its score there is no estimate)."""
    out: dict[str, Any] = {}
    parts = [gold_part(g) for g in gold]
    for name in PART_NAMES.values():
        idx = [i for i, part in enumerate(parts) if part == name]
        if idx:
            out[name] = {**score_source([gold[i] for i in idx], [labels[i] for i in idx], n_boot, seed),
                         "trained_on": trained and name == PART_NAMES["training"]}
    return out


def goldcheck(specs: list[str], data_dir: str | Path, sources: list[str] | None = None, n_boot: int = 1000,
              seed: int = 0, encoder: Any = None, parts: bool = False) -> dict[str, Any]:
    """Score every annotator spec (and, for several, their consensus) on every gold source, out of fold.

    A member that was trained on a source is never scored on it: the ``heldout-<source>`` fold is used
    when it exists, else the cell is marked ``in_fold`` and left out of the verdict. With ``encoder``
    (the miner's sentence encoder) the pairs carry the miner's slot similarities, as mined pairs do. With
    ``parts`` every member is also scored on the development and the check part of each source apart
    (``result["parts"]``, ``score_parts``; ``goldparts`` is the one partition)."""
    from .panel import DEFAULT_WEIGHTS, Vote, consensus

    if n_boot < 0:
        raise ValueError(f"goldcheck: bootstrap must be at least 0 resamples, got {n_boot}")
    sources = sources or available_sources(data_dir)
    result: dict[str, Any] = {"sources": sources, "annotators": list(specs), "min_kappa_gain": MIN_KAPPA_GAIN,
                              "bootstrap": n_boot, "slot_similarity": encoder is not None, "scores": {}}
    for source in sources:
        gold = load_gold(source, data_dir)
        if encoder is not None:
            gold = with_slot_similarity(gold, encoder)
        per_member: dict[str, list] = {}
        for spec in specs:
            annotator = make_local_annotator(spec, heldout=ITEMS_OF.get(source, source))
            scored = gold
            trained = ITEMS_OF.get(source, source) in getattr(annotator, "trained_on", ())
            if trained:
                keep = getattr(annotator, "heldout_gold", None)
                if keep is None:
                    result["scores"].setdefault(spec, {})[source] = {"in_fold": True, "pairs": len(gold)}
                    continue
                scored = [g for g in gold if keep(g)]  # only pairs made of items it was never trained on
            if parts:
                every = dict(zip((g.pair.pair_id for g in gold), annotator.annotate_many([g.pair for g in gold]),
                                 strict=True))
                labels = [every[g.pair.pair_id] for g in scored]
                result.setdefault("parts", {}).setdefault(spec, {})[source] = score_parts(
                    gold, [every[g.pair.pair_id].conflict_type for g in gold], trained, n_boot, seed)
            else:
                labels = annotator.annotate_many([g.pair for g in scored])
            if scored is gold:
                per_member[spec] = [(annotator, lab) for lab in labels]
            result["scores"].setdefault(spec, {})[source] = {
                **score_source(scored, [lab.conflict_type for lab in labels], n_boot, seed), "in_fold": False,
                "heldout_only": scored is not gold}
        if len(per_member) > 1:
            panel = [consensus([Vote(a.annotator_id, a.kind, lab, DEFAULT_WEIGHTS[a.kind])
                                for a, lab in (per_member[s][i] for s in per_member)]).labels.conflict_type
                     for i in range(len(gold))]
            result["scores"].setdefault("panel", {})[source] = {**score_source(gold, panel, n_boot, seed),
                                                                "in_fold": False}
    result["verdict"] = {name: all(c["beats_rule"] for c in cells.values() if not c["in_fold"])
                         for name, cells in result["scores"].items()}
    return result


def render_table(result: dict[str, Any]) -> str:
    """The markdown table of ``build_report.md``, the card and the CLI (rendered by ``builder.goldreport``)."""
    from ..goldreport import goldcheck_table

    return goldcheck_table(result)


def warnings_for(result: dict[str, Any]) -> list[str]:
    """One loud line per annotator and source where it does not beat the negation rule."""
    from ..goldreport import goldcheck_warnings

    return [f"WARNING: {w.removeprefix('**Warning:** ')}" for w in goldcheck_warnings(result)]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--annotator", action="append", dest="annotators",
                        help="reader[:PATH] | frames | heuristic | judge:PATH (repeat for a panel; default: reader)")
    parser.add_argument("--data-dir", default="../shared/data", help="folder holding the gold sources")
    parser.add_argument("--source", action="append", choices=sorted(GOLD_SOURCES), dest="sources",
                        help="score only these sources (repeat; default: every source found)")
    parser.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples for the intervals")
    parser.add_argument("--json", dest="json_out", default=None, help="also write the result to this JSON file")
    parser.add_argument("--encoder", default=None,
                        help="sentence encoder for the slot similarities (default: the miner's, all-MiniLM-L6-v2)")
    parser.add_argument("--no-slot-similarity", action="store_true",
                        help="compare frames by their words only (no encoder is loaded)")
    parser.add_argument("--no-parts", action="store_true",
                        help="skip the development / check table (each member then reads only the pairs it is scored on)")
    parser.add_argument("--reader", nargs="?", const="shipped", default=None,
                        help="also score the finding reader (a folder or Hub id; no value: the shipped one) on the "
                             "Evidence Inference findings and HealthVer same-claim pairs, held-out items only")


def run(args: argparse.Namespace) -> int:
    from biodivergence_dataset.io import write_json_atomic

    from ..embeddings import DEFAULT_MODEL, load_encoder

    encoder = None if args.no_slot_similarity else load_encoder(args.encoder or DEFAULT_MODEL)
    from . import DEFAULT_ANNOTATOR

    result = goldcheck(args.annotators or [DEFAULT_ANNOTATOR], args.data_dir, args.sources, args.bootstrap,
                       encoder=encoder, parts=not args.no_parts)
    print(render_table(result))  # with the development / check table when the parts were scored
    if args.reader:
        from ..reader.evaluate import render_sets

        result["reader"] = reader_sets(None if args.reader == "shipped" else args.reader, args.data_dir)
        print(render_sets(result["reader"]))
    for line in warnings_for(result):
        print(line, file=sys.stderr)
    if args.json_out:
        write_json_atomic(Path(args.json_out), result)
    return 0
