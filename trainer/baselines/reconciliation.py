"""Reconciliation baselines (paper Table 7): extractive and template-filled.

* extractive: from each abstract, the sentence with the most context cues (ties: the most words
  shared with its claim); the claim itself when there is no abstract; the two joined.
* template: a sentence naming the conflict type, the axes and the dominant confounder by their
  ontology titles. Filled from *gold* fields it is the paper's construction check (its slot
  overlap is near 1 by design); filled from the lexical pipeline's *predicted* fields it is a
  real baseline.
* constant template: the most frequent training reconciliation, the same text for every row. It
  reads nothing of the pair, so it is the floor of ROUGE-L / BLEU / SemSim; on a release whose
  reconciliations come from a few templates (rule annotators) that floor is high.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from biodivergence_dataset import ontology
from biodivergence_text import cues

from .baseline_system import Record, Row, sentences, words


def _best_sentence(abstract: str, claim: str) -> str:
    claim_words = set(words(claim))
    candidates = sentences(abstract) or [claim]
    return max(candidates, key=lambda s: (len(cues.axis_cues(s)), len(claim_words & set(words(s)))))


def extractive(train: Sequence[Row], rows: Sequence[Row], previous: Mapping[str, list[Record]]) -> list[Record]:
    out = []
    for r in rows:
        a = _best_sentence(r.get("abstract_a") or "", r["claim_a_text"])
        b = _best_sentence(r.get("abstract_b") or "", r["claim_b_text"])
        out.append({"reconciliation": f"{a} {b}"})
    return out


def template_text(conflict_type: str, axes: Sequence[str], confounder: str | None) -> str:
    """One explanation sentence built from ontology titles."""
    title = ontology.conflict_type(conflict_type).title
    if not axes:
        return f"{title}: the claims can be read together without a contextual difference."
    names = ", ".join(ontology.axis(a).title.lower() for a in axes)
    text = f"{title}: the claims differ in {names}."
    if confounder:
        text += f" The dominant confounder is {ontology.axis(confounder).title.lower()}."
    return text


def template_from_gold(train: Sequence[Row], rows: Sequence[Row], previous: Mapping[str, list[Record]]) -> list[Record]:
    return [{"reconciliation": template_text(r["conflict_type"], r["divergence_axes"], r.get("dominant_confounder"))}
            for r in rows]


def template_from(conflict_slug: str, axes_slug: str):
    """Template filled from two earlier systems' predictions (conflict type; axes + confounder)."""

    def predict(train: Sequence[Row], rows: Sequence[Row], previous: Mapping[str, list[Record]]) -> list[Record]:
        conflict, axes = previous[conflict_slug], previous[axes_slug]
        return [{"reconciliation": template_text(c["conflict_type"], x["divergence_axes"], x.get("dominant_confounder"))}
                for c, x in zip(conflict, axes)]

    return predict


def constant_template(train: Sequence[Row], rows: Sequence[Row], previous: Mapping[str, list[Record]]) -> list[Record]:
    """The most frequent non-empty training reconciliation (ties: the first seen) for every row; "" if none."""
    counts = Counter(t for r in train if (t := r.get("reconciliation") or "").strip())
    text = counts.most_common(1)[0][0] if counts else ""
    return [{"reconciliation": text} for _ in rows]
