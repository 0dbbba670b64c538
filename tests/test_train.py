"""Training and prediction CLIs end to end on a small release of real SciFact claim pairs (MiniLM encoder)."""

import json
import os

import numpy as np
import pytest
from trainer_release import write_scifact_release
from transformers import EvalPrediction

from biodivergence_dataset import ontology, release
from biodivergence_dataset.cli import main
from trainer import metric
from trainer.features import DISAGREEMENT, METADATA
from trainer.predict import AXIS_THRESHOLD_GRID, read_jsonl, reference_record, tune_axis_threshold
from trainer.train import (
    ABLATIONS,
    BEST_METRIC,
    RESULTS_FILE,
    TrainSettings,
    _training_arguments,
    best_evaluation,
    make_compute_metrics,
    model_config_kwargs,
    subsample,
    summarise,
)

SIZES = {"train": 40, "validation": 12, "test": 12}


@pytest.fixture(scope="module", autouse=True)
def offline():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="module")
def scifact_release(tmp_path_factory):
    return write_scifact_release(tmp_path_factory.mktemp("release"), SIZES)


@pytest.fixture(scope="module")
def trained(scifact_release, tmp_path_factory):
    out = tmp_path_factory.mktemp("model")
    code = main(["train", "--release", str(scifact_release), "--encoder", "minilm", "--epochs", "1",
                 "--batch-size", "8", "--max-length", "64", "--seed", "7", "--out", str(out)])
    assert code == 0
    return out


def test_train_writes_model_and_results(trained, scifact_release):
    assert (trained / "config.json").exists() and (trained / "model.safetensors").exists()
    assert (trained / "tokenizer.json").exists()
    assert not (trained / "checkpoints").exists()
    results = json.loads((trained / RESULTS_FILE).read_text())
    assert results["split_sizes"] == SIZES and results["encoder"].endswith("model")
    (run,) = results["runs"]
    assert run["seed"] == 7 and run["epochs_run"] == pytest.approx(1.0)
    assert run["best_validation_macro_f1"] == pytest.approx(run["validation"][BEST_METRIC])
    for key in ("conflict_type/accuracy", "conflict_type/ctx_f1", "axes/micro_f1", "axes_primary/micro_f1",
                "confounder/accuracy"):
        assert 0.0 <= run["test"][key] <= 1.0
        assert results["summary"]["test"][key] == {"mean": run["test"][key], "std": None}
    saved = json.loads((trained / "config.json").read_text())
    assert saved["max_length"] == 64 and saved["constraint_mode"] == "predicted_axes"
    assert run["axis_threshold"] in AXIS_THRESHOLD_GRID and saved["axis_threshold"] == run["axis_threshold"]
    assert 0.0 <= run["validation_axes_micro_f1_at_threshold"] <= 1.0
    assert len(saved["class_weights"]) == len(ontology.CONFLICT_TYPE_NAMES)


def test_predict_rows_score_through_evaluate_and_match_training_eval(trained, scifact_release, tmp_path):
    out = tmp_path / "preds.jsonl"
    assert main(["predict", "--model", str(trained), "--release", str(scifact_release), "--split", "test",
                 "--out", str(out)]) == 0
    predictions = read_jsonl(out)
    rows = [row for _, row in release.iter_rows(scifact_release, "primary", "test")]
    assert [p["pair_id"] for p in predictions] == [r["pair_id"] for r in rows]
    for p in predictions:
        assert set(p) == {"pair_id", "conflict_type", "divergence_axes", "dominant_confounder"}
        assert p["conflict_type"] in ontology.CONFLICT_TYPE_NAMES
        assert set(p["divergence_axes"]) <= set(ontology.AXIS_NAMES)
        assert p["dominant_confounder"] in p["divergence_axes"] or p["dominant_confounder"] == ""
    references = [reference_record(r) for r in rows]
    scores = metric.load_metric().compute(predictions=predictions, references=references, semsim_model=None)
    trained_on = json.loads((trained / RESULTS_FILE).read_text())["runs"][0]["test"]
    for key in ("conflict_type/accuracy", "conflict_type/macro_f1", "axes/micro_f1", "confounder/accuracy"):
        assert scores[key] == pytest.approx(trained_on[key]), key


def test_predict_with_gold_axes_restricts_confounders_to_gold(trained, scifact_release, tmp_path):
    out = tmp_path / "gold.jsonl"
    assert main(["predict", "--model", str(trained), "--release", str(scifact_release), "--split", "test",
                 "--constraint-mode", "gold_axes", "--out", str(out)]) == 0
    gold = {r["pair_id"]: r for _, r in release.iter_rows(scifact_release, "primary", "test")}
    for p in read_jsonl(out):
        axes = gold[p["pair_id"]]["divergence_axes"]
        assert (p["dominant_confounder"] in axes) if axes else p["dominant_confounder"] == ""


def test_axis_threshold_override_changes_only_the_axes(trained, scifact_release, tmp_path):
    low, high = tmp_path / "low.jsonl", tmp_path / "high.jsonl"
    for path, threshold in ((low, "0.01"), (high, "0.99")):
        assert main(["predict", "--model", str(trained), "--release", str(scifact_release), "--split", "test",
                     "--axis-threshold", threshold, "--out", str(path)]) == 0
    low_rows, high_rows = read_jsonl(low), read_jsonl(high)
    assert [r["conflict_type"] for r in low_rows] == [r["conflict_type"] for r in high_rows]
    assert sum(len(r["divergence_axes"]) for r in low_rows) > sum(len(r["divergence_axes"]) for r in high_rows)
    assert main(["predict", "--model", str(trained), "--release", str(scifact_release), "--axis-threshold", "1.5",
                 "--out", str(tmp_path / "bad.jsonl")]) != 0


def test_axis_threshold_tuning_picks_the_best_micro_f1_nearest_one_half():
    logit = lambda p: np.log(p / (1 - p))
    gold = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 0], [0, 0, 0]])
    # positives at 0.32, negatives at 0.12: every threshold in (0.12, 0.32] is perfect; 0.30 is nearest 0.5
    probs = np.where(gold == 1, 0.32, 0.12)
    assert tune_axis_threshold(logit(probs), gold) == (0.3, 1.0)
    # a negative at 0.62: above 0.62 nothing is found; at 0.30 two tp and one fp
    probs[2, 2] = 0.62
    assert tune_axis_threshold(logit(probs), gold) == (0.3, pytest.approx(0.8))
    # a positive at 0.72 as well: 0.65 / 0.70 give F1 2/3, 0.35–0.60 give 1/2, 0.15–0.30 still 0.8
    probs[0, 0] = 0.72
    assert tune_axis_threshold(logit(probs), gold) == (0.3, pytest.approx(0.8))
    probs[1, 1] = 0.72  # now 0.65 / 0.70 find both positives and no fp
    assert tune_axis_threshold(logit(probs), gold) == (0.65, 1.0)
    # no gold axis: 0.5 predicts none, which the metric scores 1 (nothing to find, nothing wrongly found)
    assert tune_axis_threshold(logit(np.full((2, 3), 0.2)), np.zeros((2, 3))) == (0.5, 1.0)


def test_train_refuses_a_release_without_card_or_validation(tmp_path, capsys):
    splits = {"train": [], "test": []}
    from trainer_release import scifact_splits

    data = scifact_splits({"train": 6, "test": 2})
    splits.update(data)
    release.write_config(tmp_path, "primary", splits)
    assert main(["train", "--release", str(tmp_path), "--out", str(tmp_path / "m")]) == 1
    assert "has no README.md" in capsys.readouterr().err
    from biodivergence_dataset.card import write_card

    write_card(tmp_path)
    assert main(["train", "--release", str(tmp_path), "--out", str(tmp_path / "m")]) == 1
    assert "lacks the split(s) ['validation']" in capsys.readouterr().err


def test_ablations_map_to_model_settings():
    rows = [{"conflict_type": ontology.CONTEXTUAL, "divergence_axes": ["geography"]},
            {"conflict_type": ontology.NO_CONFLICT, "divergence_axes": []}]
    assert model_config_kwargs(TrainSettings(ablation="no_metadata"), rows)["disabled_feature_groups"] == [METADATA]
    assert model_config_kwargs(TrainSettings(ablation="no_disagreement"), rows)["disabled_feature_groups"] == [DISAGREEMENT]
    assert model_config_kwargs(TrainSettings(ablation="no_cross_attention"), rows)["use_cross_attention"] is False
    assert model_config_kwargs(TrainSettings(ablation="single_task"), rows)["tasks"] == ["conflict_type"]
    full = model_config_kwargs(TrainSettings(), rows)
    assert set(ABLATIONS) == {"full", "no_metadata", "no_disagreement", "no_cross_attention", "single_task"}
    assert (full["loss_weight_conflict_type"], full["loss_weight_axes"], full["loss_weight_confounder"]) == (1.0, 1.0, 0.3)
    assert "class_weights" not in model_config_kwargs(TrainSettings(class_weighting=False), rows)
    with pytest.raises(ValueError, match="unknown ablation"):
        TrainSettings(ablation="no_encoder")


def test_training_arguments_follow_the_paper(tmp_path):
    args = _training_arguments(TrainSettings(), 123, tmp_path)
    assert (args.learning_rate, args.weight_decay, args.num_train_epochs, args.max_grad_norm) == (2e-5, 0.01, 8, 1.0)
    assert args.get_warmup_steps(1000) == 100
    assert (args.per_device_train_batch_size, args.per_device_eval_batch_size, args.seed) == (16, 32, 123)
    assert args.load_best_model_at_end and args.metric_for_best_model == BEST_METRIC and args.greater_is_better


def test_compute_metrics_decodes_heads_and_calls_the_metric():
    n_axes = len(ontology.AXIS_NAMES)
    conflict = np.full((3, 6), -5.0)
    conflict[[0, 1, 2], [2, 0, 2]] = 5.0
    axes = np.full((3, n_axes), -5.0)
    axes[0, 1] = axes[2, 3] = 5.0
    confounder = np.zeros((3, n_axes))
    confounder[0, 1] = confounder[2, 4] = 5.0
    labels = np.array([2, 0, 0])
    axis_labels = np.zeros((3, n_axes))
    axis_labels[0, 1] = axis_labels[2, 3] = 1.0
    confounder_labels = np.array([1, -100, 3])
    scores = make_compute_metrics("predicted_axes", 0.5)(
        EvalPrediction(predictions=(conflict, axes, confounder), label_ids=(labels, axis_labels, confounder_labels)))
    assert scores["conflict_type/accuracy"] == pytest.approx(2 / 3)
    assert scores["axes/micro_f1"] == 1.0
    assert scores["confounder/accuracy"] == 1.0  # row 2: axis 4 scores higher but is not predicted; 3 is
    assert "conflict_type/confusion_matrix" not in scores


def test_summary_reports_mean_and_sample_std_over_seeds():
    runs = [{"test": {"conflict_type/ctx_f1": v}} for v in (0.4, 0.5, 0.6)]
    summary = summarise(runs, "test")
    assert summary["conflict_type/ctx_f1"]["mean"] == pytest.approx(0.5)
    assert summary["conflict_type/ctx_f1"]["std"] == pytest.approx(0.1)


def test_validation_scores_are_those_of_the_kept_checkpoint():
    history = [{"loss": 2.0, "epoch": 1.0}]
    history += [{f"eval_{BEST_METRIC}": f1, "eval_conflict_type/ctx_f1": ctx, "eval_loss": 1.0, "eval_runtime": 3.0,
                 "epoch": e} for e, (f1, ctx) in enumerate([(0.2, 0.1), (0.4, 0.3), (0.4, 0.5), (0.3, 0.2)], 1)]
    assert best_evaluation(history) == {BEST_METRIC: 0.4, "conflict_type/ctx_f1": 0.3, "loss": 1.0}


def test_short_schedules_sample_the_same_training_rows_for_every_seed():
    rows = [{"i": i} for i in range(100)]
    assert subsample(rows, None) is rows and subsample(rows, 500) is rows
    sample = subsample(rows, 10)
    assert len(sample) == 10 and sample == subsample(rows, 10) and len({r["i"] for r in sample}) == 10
