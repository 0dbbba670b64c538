"""The metric's scoring module loaded from its folder, the paper's Table 18 counts, and the records, stand-in encoder
and comparisons the metric tests share."""

from __future__ import annotations

import math

import numpy as np
import pytest
from repo_paths import REPO

from trainer.metric import scoring_module

METRIC_DIR = REPO / "metrics" / "biodivergence"
scoring = scoring_module(METRIC_DIR)

# Paper Table 18, legacy pair-level test column (n = 2,500).
TABLE18_TEST_CLASSES = {
    "no_conflict": 1782,
    "direct_contradiction": 7,
    "contextual_contradiction": 676,
    "underspecified_apparent_contradiction": 11,
    "evidence_insufficiency": 0,
    "unresolved_scientific_controversy": 24,
}
TABLE18_TEST_AXES = {
    "population_cohort": 168, "geography": 68, "year_time_period": 71, "assay_measurement_protocol": 62,
    "study_design": 47, "dosage_intervention": 3, "disease_subtype": 502, "organism_strain_lineage": 202,
    "gene_mutation_molecular_background": 5, "clinical_setting": 121, "sample_source": 1,
    "endpoint_definition": 46, "unknown_latent_factor": 3,
}
N_TEST = 2500


class FakeEncoder:
    """A deterministic stand-in for a SentenceTransformer: bag-of-letters vectors; counts encoded texts."""

    def __init__(self):
        self.encoded: list[str] = []

    def encode(self, texts, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=None):
        self.encoded += texts
        vectors = np.array([[t.lower().count(c) for c in "abcdefghijklmnopqrstuvwxyz"] for t in texts], dtype=float)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms != 0)


def full_record(ct="contextual_contradiction", axes=("geography",), conf="geography",
                rec="Geography differs between cohorts.", spans=({"text": "in Greek ICUs", "role": "claim_a"},)):
    return {
        "conflict_type": ct,
        "divergence_axes": list(axes),
        "dominant_confounder": conf,
        "reconciliation": rec,
        "evidence_spans": [{"start": 0, "end": len(s["text"]), **s} for s in spans],
    }


def table18_conflict_types() -> list[str]:
    return [name for name, count in TABLE18_TEST_CLASSES.items() for _ in range(count)]


def undefined(a) -> bool:
    """None (what ``compute`` reports) or NaN (what a task's scorer and scikit-learn give) for 0 / 0."""
    return a is None or (isinstance(a, float) and math.isnan(a))


def same(a: float | None, b: float | None) -> bool:
    return (undefined(a) and undefined(b)) or (not undefined(a) and not undefined(b)
                                               and a == pytest.approx(b, abs=1e-12))


def same_scores(a: dict, b: dict) -> bool:
    """Equal score dicts, None and NaN both undefined."""
    return a.keys() == b.keys() and all(
        same(a[k], b[k]) if undefined(a[k]) or isinstance(a[k], float) else a[k] == b[k] for k in a)


def random_records(seed: int, n: int) -> tuple[list[dict], list[dict]]:
    """Random full records with matching structure (texts drawn from a tiny vocabulary)."""
    rng = np.random.default_rng(seed)
    words = ["population cohort", "geography", "assay", "disease subtype", "differs", "between", "the", "two",
             "studies", "no conflict", "contextual contradiction"]

    def record():
        axes = [a for a in scoring.AXES if rng.random() < 0.15]
        return full_record(
            scoring.CONFLICT_TYPES[rng.integers(0, 3)], axes, axes[0] if axes else "",
            " ".join(rng.choice(words, rng.integers(1, 8))),
            [{"text": " ".join(rng.choice(words, rng.integers(1, 4))), "role": scoring.SPAN_ROLES[rng.integers(0, 2)]}
             for _ in range(rng.integers(0, 3))],
        )

    return [record() for _ in range(n)], [record() for _ in range(n)]
