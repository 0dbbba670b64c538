"""Gold check of annotators on expert-labelled claim pairs (run by ``biodivergence goldcheck`` and the build's
goldcheck stage, both in :mod:`builder.goldcheck_stage`).

The pairs are the gold sources of ``builder.goldsources`` (SciFact, HealthVer, PubMedQA and the same pairs carrying
their question); the PubMedQA pairs with their question score the path such pairs take through an annotator (the
conclusion's answer to a declared yes / no question).

The learned finding reader (``--reader``) is scored on two more sets, held-out items only
(``builder.reader.reader_examples.is_heldout``: it was trained on the rest): Evidence Inference findings (held-out
articles; accuracy and three-way macro-F1, beside a TF-IDF + logistic-regression floor trained on the other
articles) and HealthVer same-claim pairs that carry their claim as the question (``healthver_pairs(...,
with_question=True)``; κ of the reader's disagreement beside the negation rule).

NLI4CT is not used: its statements are checked against clinical-trial *tables* (eligibility
criteria, adverse-event counts), not against another claim's finding, so they make no claim pairs
(the learned judge trains on them, see ``judge_data``).

``gold_check`` reports the confusion matrix and Cohen's κ for conflict vs no conflict, next to the
negation-mismatch baseline ("exactly one claim contains a negation word").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from biodivergence_dataset.records import CandidatePair
from biodivergence_text import cues

from ..agreement import cohen_kappa, is_conflict
from ..goldparts import PART_NAMES
from ..goldsources import ITEMS_OF, GoldPair, available_sources, gold_part, load_gold


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



#: A panel member must beat the negation rule by this much κ on every source (issue 12's bar).
MIN_KAPPA_GAIN = 0.15


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
    from .frame_annotator import slot_similarities

    sims = slot_similarities([g.pair for g in gold], encoder)
    return [GoldPair(g.pair.model_copy(update={"scores": g.pair.scores.model_copy(
        update={"exposure_similarity": e, "outcome_similarity": o})}), g.conflict, g.source, g.keys)
        for g, (e, o) in zip(gold, sims, strict=True)]


def reader_sets(reader: str | None, data_dir: str | Path) -> dict[str, Any]:
    """The finding reader's gold sets (held-out items only): ``reader`` is a folder / Hub id, or None for the
    shipped reader."""
    from ..reader import load_reader
    from ..reader.out_of_fold import goldcheck_sets

    return {"reader": reader or "shipped", **goldcheck_sets(load_reader(reader), data_dir)}


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
