"""Small releases built from real SciFact claim pairs, for the trainer and baseline tests.

SciFact annotators wrote claims that agree or disagree about the same evidence abstract
(``/work/shared/data/scifact/SOURCE.md``, "Derived claim pairs"). Two claims on one abstract
become one release row: opposite SciFact labels → a contradiction (contextual with the axes
whose cues differ between the claims, every fifth one direct), equal labels → no conflict.
The labels exercise the mechanics (all heads, masked confounders, spans, reconciliations);
they are not a benchmark. Pairs are split by evidence abstract, so splits share no claim.
"""

from __future__ import annotations

import ast
import csv
import hashlib
import io
import json
import re
import sys
import tokenize
from itertools import combinations
from pathlib import Path

from biodivergence_dataset import card, cues, ontology, release
from biodivergence_dataset.records import EvidenceSpan, Example, pair_id_for

SCIFACT = Path(__file__).resolve().parents[2] / "shared" / "data" / "scifact"
_WORDS = re.compile(r"[a-z0-9]+")


def _stable(text: str) -> int:
    return int(hashlib.sha1(text.encode()).hexdigest()[:8], 16)


def _claims() -> list[dict]:
    out = []
    for name in ("claims_train.jsonl", "claims_dev.jsonl"):
        with open(SCIFACT / name, encoding="utf-8") as fh:
            out.extend(json.loads(line) for line in fh if line.strip())
    return out


def _abstracts(doc_ids: set[str]) -> dict[str, str]:
    """Abstract text of the wanted corpus documents (the CSV stores a NumPy repr of the sentence list)."""
    csv.field_size_limit(sys.maxsize)
    out = {}
    with open(SCIFACT / "corpus_train.csv", encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            if row["doc_id"] in doc_ids:
                tokens = tokenize.generate_tokens(io.StringIO(row["abstract"]).readline)
                out[row["doc_id"]] = " ".join(ast.literal_eval(t.string) for t in tokens if t.type == tokenize.STRING)
    return out


def claim_pairs() -> list[tuple[dict, dict, str, bool]]:
    """``(claim, claim, evidence doc id, labels differ)`` for every two claims judged on one abstract."""
    by_doc: dict[str, list[tuple[dict, str]]] = {}
    for claim in _claims():
        for doc, evidence in claim["evidence"].items():
            by_doc.setdefault(doc, []).append((claim, evidence[0]["label"]))
    pairs = []
    for doc in sorted(by_doc):
        for (a, la), (b, lb) in combinations(sorted(by_doc[doc], key=lambda x: x[0]["id"]), 2):
            pairs.append((a, b, doc, la != lb))
    return pairs


def _claim_type(text: str) -> str:
    for claim_type in ontology.CLAIM_TYPES:
        if any(re.search(p, text, re.IGNORECASE) for p in claim_type.cue_patterns):
            return claim_type.name
    return ontology.DEFAULT_CLAIM_TYPE


def _jaccard(a: set, b: set) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def _differing_axes(a: str, b: str) -> list[str]:
    va, vb = cues.axis_values(a), cues.axis_values(b)
    return [axis for axis in ontology.AXIS_NAMES if va.get(axis, set()) != vb.get(axis, set())]


def _span(text: str, article_uid: str, role: str) -> EvidenceSpan:
    hits = cues.axis_cues(text)
    start, end = (hits[0].start, hits[0].end) if hits else (0, len(" ".join(text.split()[:4])))
    return EvidenceSpan(article_uid=article_uid, text=text[start:end], start=start, end=end, role=role)


def make_example(a: dict, b: dict, doc: str, opposite: bool, index: int, abstract: str) -> Example:
    text_a, text_b = a["claim"], b["claim"]
    uid_a, uid_b = f"scifact:claim-{a['id']}", f"scifact:claim-{b['id']}"
    id_a, id_b = f"c{a['id']}", f"c{b['id']}"
    words_a, words_b = set(_WORDS.findall(text_a.lower())), set(_WORDS.findall(text_b.lower()))
    similarity = _jaccard(words_a, words_b)
    disagreement = float(cues.polarity(text_a) != cues.polarity(text_b))
    if opposite:
        axes = _differing_axes(text_a, text_b)[:3] or [ontology.LATENT_AXIS]
        conflict = "direct_contradiction" if index % 5 == 0 else ontology.CONTEXTUAL
        confounder = None if index % 4 == 0 else axes[0]
        reconciliation = "The claims differ in " + ", ".join(ontology.axis(x).title.lower() for x in axes) + "."
    else:
        axes, conflict, confounder = [], ontology.NO_CONFLICT, None
        reconciliation = "Both claims are compatible readings of the same evidence."
    pair_id = pair_id_for(id_a, id_b)
    return Example(
        example_id=pair_id, pair_id=pair_id,
        domain=ontology.DOMAIN_NAMES[_stable(doc) % len(ontology.DOMAIN_NAMES)],
        claim_a_id=id_a, claim_b_id=id_b, claim_a_text=text_a, claim_b_text=text_b,
        claim_a_type=_claim_type(text_a), claim_b_type=_claim_type(text_b),
        article_uid_a=uid_a, article_uid_b=uid_b, abstract_a=abstract, abstract_b=abstract,
        pub_year_a=2000 + _stable(uid_a) % 20, pub_year_b=None if index % 3 == 0 else 2000 + _stable(uid_b) % 20,
        similarity=similarity, disagreement=disagreement, entity_overlap=similarity / 2,
        type_compatibility=1.0, year_penalty=0.0, combined_score=(similarity + disagreement) / 2,
        conflict_type=conflict, divergence_axes=axes, dominant_confounder=confounder,
        reconciliation=reconciliation,
        evidence_spans=[_span(text_a, uid_a, "claim_a"), _span(text_b, uid_b, "claim_b")],
        annotator_id="scifact-test-labels", annotator_kind="heuristic", confidence=0.8, prompt_version="",
    )


def scifact_splits(sizes: dict[str, int]) -> dict[str, list[Example]]:
    """Splits of the requested sizes; each evidence abstract (hence each claim pair family) in one split."""
    pairs = claim_pairs()
    names = list(sizes)
    wanted = {doc for _, _, doc, _ in pairs}
    abstracts = _abstracts(wanted)
    splits: dict[str, list[Example]] = {name: [] for name in names}
    claim_split: dict[int, str] = {}
    total = sum(sizes.values())
    bounds = [sum(sizes[n] for n in names[:k + 1]) / total for k in range(len(names))]
    for i, (a, b, doc, opposite) in enumerate(pairs):
        draw = (_stable(doc) % 10_000) / 10_000
        name = next(n for n, bound in zip(names, bounds) if draw < bound)
        if len(splits[name]) >= sizes[name] or any(claim_split.get(c["id"], name) != name for c in (a, b)):
            continue
        claim_split[a["id"]] = claim_split[b["id"]] = name
        splits[name].append(make_example(a, b, doc, opposite, i, abstracts.get(doc, "")))
    short = {n: (len(splits[n]), sizes[n]) for n in names if len(splits[n]) < sizes[n]}
    assert not short, f"not enough SciFact pairs for {short}"
    return splits


def write_scifact_release(root: Path, sizes: dict[str, int]) -> Path:
    """A primary-config release (with its card) from SciFact claim pairs."""
    release.write_config(root, ontology.DEFAULT_CONFIG, scifact_splits(sizes))
    card.write_card(root)
    return root
