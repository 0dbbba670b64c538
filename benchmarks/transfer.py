"""Does "conflict" learned on some expert sources transfer to another? (issue 12, leave-one-source-out)

A cheap learned judge — scikit-learn on pair features a CPU computes in milliseconds — is trained on every
expert-labelled source in ``../shared/data`` but one and scored on the gold pairs of the one left out, the
way ``goldcheck`` scores any annotator. Features of a pair (``pair_features``): the negation rule and each
claim's negation; the frames reader's same-question verdict and slot overlaps, the reason its findings
disagree (whether or not the gate passes), each side's null / effect findings; content-word overlap and the
words only one side has (a negation, an antonym); lengths; and the all-MiniLM-L6-v2 cosine of the two texts.
Models: logistic regression and gradient boosting, class-balanced, cut at probability 0.5 (no threshold is
fitted on the scored source). Training pairs: ``judge_data`` (gold pairs, SciFact claim–rationale and
HealthVer claim–evidence pairs, NLI4CT, Citation-Integrity); the variant ``gold sources only`` leaves NLI4CT
and Citation-Integrity out and trains on the other gold sources' pairs alone.

Run: ``python benchmarks/transfer.py`` (writes benchmarks/results/transfer.json and transfer.md; about 5
minutes on 2 cores, most of it reading frames of the long NLI4CT and Citation-Integrity texts).
"""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "transfer"
DATA = ROOT.parent / "shared" / "data"
sys.path.insert(0, str(ROOT))

from results_files import load_averages, machine_fields, write_results

from biodivergence_text import cues
from builder import framealign, frameterms, goldsources
from builder import frames as fr
from builder.agreement import cohen_kappa
from builder.annotators import judge_data
from builder.embeddings import embed_texts, load_encoder

FEATURES = ("negation_rule", "both_negated", "gate_comparable", "exposure_overlap", "outcome_overlap",
            "null_vs_effect", "opposite_direction", "significance", "findings_disagree", "null_mismatch",
            "any_null_mismatch", "effect_vs_null_anywhere", "word_overlap", "word_jaccard", "negation_in_diff",
            "antonym_in_diff", "shorter_chars", "longer_chars", "cosine")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'-]*")


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def pair_features(a: str, b: str) -> list[float]:
    """The features of one pair, in ``FEATURES`` order (the cosine is filled in later)."""
    frames_a, frames_b = fr.extract_frames(a), fr.extract_frames(b)
    fa, fb, al = framealign.best_alignment(frames_a, frames_b)
    why = framealign.findings_disagree(fa.finding, fb.finding)
    null_a, null_b = (any(f.finding.is_null for f in fs) for fs in (frames_a, frames_b))
    effect_a, effect_b = (any(f.finding.direction and not f.finding.is_null for f in fs) for fs in (frames_a, frames_b))
    wa, wb = _words(a), _words(b)
    ca = {frameterms.stem(w) for w in wa - frameterms.GENERIC_WORDS}
    cb = {frameterms.stem(w) for w in wb - frameterms.GENERIC_WORDS}
    shared = len(ca & cb)
    return [cues.has_negation(a) != cues.has_negation(b), cues.has_negation(a) and cues.has_negation(b),
            al.comparable, al.exposure_overlap, al.outcome_overlap,
            why == "null_vs_effect", why == "opposite_direction", why == "significance", why is not None,
            fa.finding.is_null != fb.finding.is_null, null_a != null_b, (effect_a and null_b) or (effect_b and null_a),
            shared / max(1, min(len(ca), len(cb))), shared / max(1, len(ca | cb)),
            any(cues.is_negation_word(w) for w in wa ^ wb), cues.opposite_words(frozenset(wa - wb), frozenset(wb - wa)),
            min(len(a), len(b)) / 500, max(len(a), len(b)) / 500, 0.0]


def featurise(pairs: list[tuple[str, str]], encoder) -> np.ndarray:
    x = np.array([pair_features(a, b) for a, b in pairs], dtype=float)
    texts = sorted({t for p in pairs for t in p})
    vectors = dict(zip(texts, embed_texts(texts, encoder), strict=True))
    x[:, FEATURES.index("cosine")] = [float(vectors[a] @ vectors[b]) for a, b in pairs]
    return x


def models():
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return {"logistic regression": lambda: make_pipeline(StandardScaler(), LogisticRegression(
                C=0.3, max_iter=2000, class_weight="balanced")),
            "gradient boosting": lambda: HistGradientBoostingClassifier(max_iter=200, learning_rate=0.05,
                                                                        class_weight="balanced", random_state=0)}


def main() -> dict:
    from sklearn.metrics import roc_auc_score

    load_before = load_averages()
    encoder = load_encoder()
    scored = goldsources.available_sources(DATA)
    sources = [*scored, *(s for s in judge_data.TRAINING_ONLY if (DATA / judge_data.TRAINING_SOURCES[s][0]).is_dir())]
    train, gold = {}, {}
    for source in sources:
        start = time.perf_counter()
        pairs = judge_data.load_source(source, DATA)  # a scored source's gold pairs come first
        x, y = featurise([(p.text_a, p.text_b) for p in pairs], encoder), np.array([p.conflict for p in pairs])
        train[source] = (x, y)
        if source in scored:
            n = len(judge_data.gold_training_pairs(source, DATA))
            gold[source] = (x[:n], y[:n])  # the pairs goldcheck scores, featurised once
        print(f"{source}: {len(pairs)} training pairs featurised in {time.perf_counter() - start:.0f} s", flush=True)
    rows = []
    for variant, pool in (("all sources", sources), ("gold sources only", scored)):
        for name, make in models().items():
            for held in scored:
                others = [s for s in pool if s != held]
                model = make().fit(np.vstack([train[s][0] for s in others]), np.concatenate([train[s][1] for s in others]))
                x, truth = gold[held]
                p = model.predict_proba(x)[:, 1]
                rows.append({"variant": variant, "model": name, "scored": held, "trained_on": others,
                             "pairs": len(truth), "kappa": round(cohen_kappa(list(truth), list(p >= 0.5)), 3),
                             "auc": round(float(roc_auc_score(truth, p)), 3),
                             "rule_kappa": round(cohen_kappa(list(truth), list(x[:, 0] > 0)), 3)})
    result = {"features": list(FEATURES), **machine_fields(load_before),
              "load_average_1min_at_end": load_averages()[0], "folds": rows}
    write_results(RESULTS, result, render(result))
    return result


def render(result: dict) -> str:
    lines = ["# Leave-one-source-out transfer of a cheap learned judge (benchmarks/transfer.py)", "",
             (f"{len(result['features'])} pair features ({', '.join(result['features'])}); class-balanced models "
              "cut at 0.5; each row scores one gold source with a model that never saw it. "
              f"{result['machine']}, {result['machine_state']} at the start, load average "
              f"{result['load_average_1min_at_end']} at the end."), "",
             "| trained on | model | scored source | pairs | κ | AUC | negation rule κ |", "|---|---|---|---|---|---|---|"]
    for r in result["folds"]:
        lines.append(f"| {r['variant']} | {r['model']} | {r['scored']} | {r['pairs']} | {r['kappa']} | {r['auc']} | "
                     f"{r['rule_kappa']} |")
    return "\n".join(lines + [""])


if __name__ == "__main__":
    main()
