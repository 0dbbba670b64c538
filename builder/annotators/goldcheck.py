"""Gold check of an annotator on expert-labelled claim pairs (a check, never training data).

- SciFact: claims that share an evidence abstract; opposite labels (SUPPORT vs CONTRADICT) →
  conflict, the same label → no conflict (train + dev: 334 + 185 = 519 pairs).
- HealthVer: for every claim with both Supports and Refutes evidence, pairs of its non-neutral
  evidence passages; opposite labels → conflict, the same label → no conflict.

Pairs are wrapped into real ``CandidatePair`` records (claim ids via ``claim_id_for``, pair ids via
``pair_id_for``; mining scores are placeholders). ``gold_check`` reports the confusion matrix and
Cohen's κ for conflict vs no conflict, next to the negation-mismatch baseline ("exactly one claim
contains a negation word").
"""

from __future__ import annotations

import ast
import csv
import io
import itertools
import json
import sys
import tokenize
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from biodivergence_dataset import cues, ontology
from biodivergence_dataset.records import CandidatePair, Claim, MiningScores, claim_id_for, pair_id_for

from ..agreement import cohen_kappa, is_conflict

SCIFACT_CLAIM_FILES = ("claims_train.jsonl", "claims_dev.jsonl")
HEALTHVER_FILES = ("healthver_dev.csv", "healthver_test.csv")
_PLACEHOLDER_SCORES = MiningScores(similarity=0.0, disagreement=0.0, entity_overlap=0.0, type_compatibility=1.0,
                                   year_penalty=0.0, combined_score=0.0)


@dataclass(frozen=True)
class GoldPair:
    pair: CandidatePair
    conflict: bool
    source: str


def make_claim(article_uid: str, text: str, domain: str, source: str) -> Claim:
    """A Claim record for a whole gold sentence (offsets 0..len)."""
    text = " ".join(text.split())
    return Claim(claim_id=claim_id_for(article_uid, 0, len(text)), article_uid=article_uid, domain=domain,
                 source=source, sentence=text, claim_type=ontology.DEFAULT_CLAIM_TYPE, sentence_start=0,
                 sentence_end=len(text), confidence=1.0)


def make_pair(a: Claim, b: Claim, abstract_a: str = "", abstract_b: str = "") -> CandidatePair:
    return CandidatePair(pair_id=pair_id_for(a.claim_id, b.claim_id), domain=a.domain, claim_a=a, claim_b=b,
                         abstract_a=abstract_a, abstract_b=abstract_b, scores=_PLACEHOLDER_SCORES)


def parse_numpy_sentences(text: str) -> list[str]:
    """Sentences of a NumPy array repr "['One.'\\n 'Two.']" (SciFact corpus CSV)."""
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    return [ast.literal_eval(t.string) for t in tokens if t.type == tokenize.STRING]


def _scifact_abstracts(data_dir: Path, doc_ids: set[str]) -> dict[str, str]:
    csv.field_size_limit(sys.maxsize)
    with open(data_dir / "corpus_train.csv", newline="", encoding="utf-8") as fh:
        return {row["doc_id"]: " ".join(parse_numpy_sentences(row["abstract"]))
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
            out.append(GoldPair(make_pair(a, b, abstract, abstract), la != lb, "scifact"))
    return out


def healthver_pairs(data_dir: str | Path) -> list[GoldPair]:
    """Evidence–evidence pairs of HealthVer claims that have both Supports and Refutes evidence."""
    data_dir = Path(data_dir)
    domain = ontology.domain("infectious_disease").name
    out = []
    for name in HEALTHVER_FILES:
        by_claim: dict[str, list[dict[str, str]]] = defaultdict(list)
        with open(data_dir / name, newline="", encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                by_claim[row["claim"]].append(row)
        for rows in by_claim.values():
            evidence = [r for r in rows if r["label"] in ("Supports", "Refutes")]
            if {r["label"] for r in evidence} != {"Supports", "Refutes"}:
                continue
            for ra, rb in itertools.combinations(evidence, 2):
                a = make_claim(f"healthver:{name}:{ra['id']}", ra["evidence"], domain, "healthver")
                b = make_claim(f"healthver:{name}:{rb['id']}", rb["evidence"], domain, "healthver")
                out.append(GoldPair(make_pair(a, b), ra["label"] != rb["label"], "healthver"))
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
