"""Small releases built from real SciFact claim pairs, for the trainer and baseline tests.

The pairs are the annotator gold check's (``builder.goldsources.scifact_pairs``): two
SciFact claims judged against one evidence abstract (``/work/shared/data/scifact/SOURCE.md``,
"Derived claim pairs"). Opposite SciFact labels → a contradiction (contextual with the axes whose
cues differ between the claims, every fifth one direct), equal labels → no conflict. The labels
exercise the mechanics (all heads, masked confounders, spans, reconciliations); they are not a
benchmark. Pairs are split by evidence abstract, so splits share no claim.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from repo_paths import SHARED_DATA

from biodivergence_dataset import card, ontology, release
from biodivergence_dataset.records import CandidatePair, EvidenceSpan, Example
from biodivergence_text import cues
from builder.goldsources import scifact_pairs

SCIFACT = SHARED_DATA / "scifact"
_WORDS = re.compile(r"[a-z0-9]+")


def _stable(text: str) -> int:
    return int(hashlib.sha1(text.encode()).hexdigest()[:8], 16)


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


def make_example(pair: CandidatePair, conflict_pair: bool, index: int) -> Example:
    a, b = pair.claim_a, pair.claim_b
    words_a, words_b = set(_WORDS.findall(a.sentence.lower())), set(_WORDS.findall(b.sentence.lower()))
    similarity = _jaccard(words_a, words_b)
    disagreement = float(cues.polarity(a.sentence) != cues.polarity(b.sentence))
    if conflict_pair:
        axes = _differing_axes(a.sentence, b.sentence)[:3] or [ontology.LATENT_AXIS]
        conflict = "direct_contradiction" if index % 5 == 0 else ontology.CONTEXTUAL
        confounder = None if index % 4 == 0 else axes[0]
        reconciliation = "The claims differ in " + ", ".join(ontology.axis(x).title.lower() for x in axes) + "."
    else:
        axes, conflict, confounder = [], ontology.NO_CONFLICT, None
        reconciliation = "Both claims are compatible readings of the same evidence."
    return Example(
        example_id=pair.pair_id, pair_id=pair.pair_id,
        domain=ontology.DOMAIN_NAMES[_stable(pair.abstract_a) % len(ontology.DOMAIN_NAMES)],
        claim_a_id=a.claim_id, claim_b_id=b.claim_id, claim_a_text=a.sentence, claim_b_text=b.sentence,
        claim_a_type=_claim_type(a.sentence), claim_b_type=_claim_type(b.sentence),
        article_uid_a=a.article_uid, article_uid_b=b.article_uid, abstract_a=pair.abstract_a, abstract_b=pair.abstract_b,
        pub_year_a=2000 + _stable(a.article_uid) % 20,
        pub_year_b=None if index % 3 == 0 else 2000 + _stable(b.article_uid) % 20,
        similarity=similarity, disagreement=disagreement, entity_overlap=similarity / 2,
        type_compatibility=1.0, year_penalty=0.0, combined_score=(similarity + disagreement) / 2,
        conflict_type=conflict, divergence_axes=axes, dominant_confounder=confounder,
        reconciliation=reconciliation,
        evidence_spans=[_span(a.sentence, a.article_uid, "claim_a"), _span(b.sentence, b.article_uid, "claim_b")],
        annotator_id="scifact-test-labels", annotator_kind="heuristic", confidence=0.8, prompt_version="",
    )


def scifact_splits(sizes: dict[str, int]) -> dict[str, list[Example]]:
    """Splits of the requested sizes; each evidence abstract (hence each claim pair family) in one split."""
    names = list(sizes)
    splits: dict[str, list[Example]] = {name: [] for name in names}
    claim_split: dict[str, str] = {}
    total = sum(sizes.values())
    bounds = [sum(sizes[n] for n in names[:k + 1]) / total for k in range(len(names))]
    for i, gold in enumerate(scifact_pairs(SCIFACT)):
        pair = gold.pair
        draw = (_stable(pair.abstract_a) % 10_000) / 10_000
        name = next(n for n, bound in zip(names, bounds) if draw < bound)
        claims = (pair.claim_a.claim_id, pair.claim_b.claim_id)
        if len(splits[name]) >= sizes[name] or any(claim_split.get(c, name) != name for c in claims):
            continue
        claim_split.update(dict.fromkeys(claims, name))
        splits[name].append(make_example(pair, gold.conflict, i))
    short = {n: (len(splits[n]), sizes[n]) for n in names if len(splits[n]) < sizes[n]}
    assert not short, f"not enough SciFact pairs for {short}"
    return splits


def write_scifact_release(root: Path, sizes: dict[str, int]) -> Path:
    """A primary-config release (with its card) from SciFact claim pairs."""
    release.write_config(root, ontology.DEFAULT_CONFIG, scifact_splits(sizes))
    card.write_card(root)
    return root
