"""The training's parts, each without a training run: the settings, the ablations and TrainingArguments, compute_metrics
and the conflict and axis thresholds it tunes (and selects checkpoints by), the summary over seeds, the kept checkpoint, the rows a short schedule samples,
the message of an interrupted run."""

from types import SimpleNamespace

import numpy as np
import pytest
import torch
from transformers import EvalPrediction

from biodivergence_dataset import ontology
from trainer.data import subsample
from trainer.pair_features import DISAGREEMENT, METADATA
from trainer.predict import conflict_classes, tune_axis_threshold, tune_conflict_threshold
from trainer.train import (
    TUNED_CONFLICT_THRESHOLD,
    TUNED_THRESHOLD,
    interrupted_message,
    kept_evaluation,
    make_compute_metrics,
    model_config_kwargs,
    parse_namespace,
    summarise,
)
from trainer.training_args import ABLATIONS, BEST_METRIC, PAPER_DEFAULTS, TrainSettings, parser, training_arguments


def test_interrupted_run_says_how_to_resume(tmp_path):
    assert "starts over" in interrupted_message(tmp_path, [7])
    (tmp_path / "checkpoint-5").mkdir()
    message = interrupted_message(tmp_path, [7])
    assert "checkpoint-5" in message and "--resume-from-checkpoint true" in message
    (tmp_path / "seed-2" / "checkpoint-3").mkdir(parents=True)
    message = interrupted_message(tmp_path, [1, 2])
    assert "seed-2/checkpoint-3" in message and "finished seeds are kept" in message


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
    # no gold axis: 0.5 predicts none; the metric calls that F1 undefined (None), and nothing wrongly found wins
    assert tune_axis_threshold(logit(np.full((2, 3), 0.2)), np.zeros((2, 3))) == (0.5, None)


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
    assert "class_weights" not in model_config_kwargs(TrainSettings(class_weights=False), rows)
    with pytest.raises(ValueError, match="unknown ablation"):
        TrainSettings(ablation="no_encoder")
    with pytest.raises(ValueError, match="three numbers"):
        TrainSettings(loss_weights=[1.0, 2.0])


def test_training_arguments_follow_the_paper_and_take_trainers_options(tmp_path):
    args = training_arguments(tmp_path, 123)
    assert (args.learning_rate, args.weight_decay, args.num_train_epochs, args.max_grad_norm) == (2e-5, 0.01, 8, 1.0)
    assert args.get_warmup_steps(1000) == 100
    assert (args.per_device_train_batch_size, args.per_device_eval_batch_size, args.seed) == (16, 32, 123)
    assert args.load_best_model_at_end and args.metric_for_best_model == BEST_METRIC and args.greater_is_better
    assert args.save_total_limit == PAPER_DEFAULTS["save_total_limit"] and args.report_to == []

    run_args, settings, training = parser().parse_args_into_dataclasses(
        ["--release", "R", "--out", "M"], look_for_args_file=False)
    assert (run_args.release, training.output_dir, training.seed, settings.patience) == ("R", "M", [42], 3)

    import argparse

    cli = argparse.ArgumentParser()
    from trainer.train import add_arguments

    add_arguments(cli)
    ns = cli.parse_args(["--release", "R", "--out", "M", "--seed", "42", "123", "7", "--epochs", "3", "--lr", "1e-4",
                         "--batch-size", "4", "--eval-batch-size", "64", "--gradient-accumulation-steps", "2",
                         "--report-to", "tensorboard", "--max-eval-examples", "50", "--no-class-weights",
                         "--loss-weights", "1", "0.5", "0"])
    run_args, settings, training, seeds = parse_namespace(ns)
    assert seeds == [42, 123, 7] and settings.max_eval_examples == 50 and settings.class_weights is False
    assert settings.loss_weights == [1.0, 0.5, 0.0]
    one = training_arguments("M", 7, **training)
    assert (one.num_train_epochs, one.learning_rate, one.per_device_train_batch_size) == (3.0, 1e-4, 4)
    assert (one.per_device_eval_batch_size, one.gradient_accumulation_steps, one.report_to) == (64, 2, ["tensorboard"])
    assert cli.parse_args(["--release", "R", "--out", "M", "--bf16"]).bf16 is True
    if not torch.cuda.is_available():  # TrainingArguments' own check runs before any data is read
        with pytest.raises(ValueError, match="bf16"):
            parse_namespace(cli.parse_args(["--release", "R", "--out", "M", "--bf16"]))


def test_compute_metrics_decodes_heads_calls_the_metric_and_tunes_the_threshold():
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
    prediction = EvalPrediction(predictions=(conflict, axes, confounder), label_ids=(labels, axis_labels, confounder_labels))
    scores = make_compute_metrics("predicted_axes", 0.5)(prediction)
    assert scores["conflict_type/accuracy"] == pytest.approx(2 / 3)
    assert scores["axes/micro_f1"] == 1.0
    assert scores["confounder/accuracy"] == 1.0  # row 2: axis 4 scores higher but is not predicted; 3 is
    assert "conflict_type/confusion_matrix" not in scores and TUNED_THRESHOLD not in scores
    tuned = make_compute_metrics("predicted_axes", 0.5, tune=True)(prediction)
    assert tuned[TUNED_THRESHOLD] == 0.5 and tuned["axes/micro_f1_at_tuned_threshold"] == 1.0


NC_ID = ontology.CONFLICT_TYPE_NAMES.index(ontology.NO_CONFLICT)
CTX_ID = ontology.CONFLICT_TYPE_NAMES.index(ontology.CONTEXTUAL)


def near_tie_logits(conflict_margins: list[float]) -> np.ndarray:
    """Conflict-type logits where no_conflict leads contextual_contradiction by ``margin`` (row by row) and every
    other class trails far behind: the arg-max says no_conflict on every row."""
    logits = np.full((len(conflict_margins), len(ontology.CONFLICT_TYPE_NAMES)), -8.0)
    logits[:, NC_ID] = 0.0
    logits[:, CTX_ID] = -np.asarray(conflict_margins)
    return logits


def test_the_conflict_threshold_calls_a_pair_a_conflict_where_one_minus_p_no_conflict_reaches_it():
    logits = near_tie_logits([0.1, 0.5, 3.0])  # 1 − p(no_conflict) ≈ 0.475, 0.378, 0.047
    assert list(conflict_classes(logits)) == [NC_ID] * 3  # the arg-max
    assert list(conflict_classes(logits, 0.4)) == [CTX_ID, NC_ID, NC_ID]
    assert list(conflict_classes(logits, 0.3)) == [CTX_ID, CTX_ID, NC_ID]
    assert list(conflict_classes(logits, 0.01)) == [CTX_ID] * 3  # the most probable conflict class, not another
    direct = ontology.CONFLICT_TYPE_NAMES.index("direct_contradiction")
    logits[2, direct] = -2.0  # another conflict class now leads the conflicts of row 2
    assert conflict_classes(logits, 0.01)[2] == direct


def test_conflict_threshold_tuning_picks_the_best_ctx_f1_and_the_highest_threshold_on_ties():
    # two conflicts ranked above three non-conflicts, all within 0.6 of a logit: the arg-max finds none
    logits = near_tie_logits([0.1, 0.2, 0.5, 0.6, 0.55])
    labels = np.array([CTX_ID, CTX_ID, NC_ID, NC_ID, NC_ID])
    threshold, f1 = tune_conflict_threshold(logits, labels)
    assert f1 == 1.0
    assert threshold == 0.45  # 1 − p(nc) is 0.475 / 0.450 on the conflicts, 0.378 at most elsewhere: highest of the ties
    assert list(conflict_classes(logits, threshold)) == list(labels)
    labels[3] = CTX_ID  # a third conflict ranked last: the top two (F1 0.8) beat all five (0.75) and the top four
    assert tune_conflict_threshold(logits, labels) == (0.45, pytest.approx(0.8))
    # nothing to find and nothing found: undefined Ctx-F1, the highest threshold wins
    assert tune_conflict_threshold(near_tie_logits([3.0, 3.0]), np.array([NC_ID, NC_ID])) == (0.99, None)


def test_checkpoints_are_selected_on_ctx_f1_at_the_tuned_conflict_threshold():
    """The selection metric is the thresholded validation Ctx-F1: a checkpoint whose arg-max finds no conflict but
    whose ranking is perfect scores 1.0 on it (macro-F1 at the arg-max would say it does nothing)."""
    n_axes = len(ontology.AXIS_NAMES)
    logits = near_tie_logits([0.1, 0.2, 0.5, 0.6, 0.55])
    labels = np.array([CTX_ID, CTX_ID, NC_ID, NC_ID, NC_ID])
    prediction = EvalPrediction(predictions=(logits, np.full((5, n_axes), -5.0), np.zeros((5, n_axes))),
                                label_ids=(labels, np.zeros((5, n_axes)), np.full(5, -100)))
    assert PAPER_DEFAULTS["metric_for_best_model"] == BEST_METRIC == "conflict_type/ctx_f1_at_tuned_threshold"
    raw = make_compute_metrics("predicted_axes", 0.5)(prediction)
    assert raw["conflict_type/ctx_f1"] == 0.0 and BEST_METRIC not in raw  # test passes are not tuned
    tuned = make_compute_metrics("predicted_axes", 0.5, tune=True)(prediction)
    assert tuned[BEST_METRIC] == 1.0 and tuned[TUNED_CONFLICT_THRESHOLD] == 0.45
    assert tuned["conflict_type/ctx_f1"] == 1.0 and tuned["conflict_type/accuracy"] == 1.0  # decoded at it
    saved = make_compute_metrics("predicted_axes", 0.5, conflict_threshold=0.45)(prediction)  # the test pass
    assert saved["conflict_type/ctx_f1"] == 1.0
    undefined = EvalPrediction(predictions=(near_tie_logits([3.0, 3.0]), *[x[:2] for x in prediction.predictions[1:]]),
                               label_ids=(np.array([NC_ID, NC_ID]), *[x[:2] for x in prediction.label_ids[1:]]))
    assert make_compute_metrics("predicted_axes", 0.5, tune=True)(undefined)[BEST_METRIC] == 0.0  # comparable


def test_summary_reports_mean_and_sample_std_over_seeds():
    runs = [{"test": {"conflict_type/ctx_f1": v}} for v in (0.4, 0.5, 0.6)]
    summary = summarise(runs, "test")
    assert summary["conflict_type/ctx_f1"]["mean"] == pytest.approx(0.5)
    assert summary["conflict_type/ctx_f1"]["std"] == pytest.approx(0.1)
    # an undefined score (None: the class on neither side) is left out of the mean, None on every seed stays None
    undefined = summarise([{"test": {"conflict_type/ctx_f1": v}} for v in (None, 0.5, None)], "test")
    assert undefined["conflict_type/ctx_f1"] == {"mean": 0.5, "std": None}
    assert summarise([{"test": {"conflict_type/ctx_f1": None}}] * 2, "test")["conflict_type/ctx_f1"] == {
        "mean": None, "std": None}


def test_validation_scores_are_those_of_the_kept_checkpoint():
    history = [{"loss": 2.0, "epoch": 1.0}]
    history += [{f"eval_{BEST_METRIC}": f1, "eval_conflict_type/ctx_f1": ctx, "eval_loss": 1.0, "eval_runtime": 3.0,
                 "epoch": e} for e, (f1, ctx) in enumerate([(0.2, 0.1), (0.4, 0.3), (0.4, 0.5), (0.3, 0.2)], 1)]
    history = [{**h, "step": 10 * h["epoch"]} for h in history]
    assert kept_evaluation(SimpleNamespace(log_history=history, best_global_step=20, global_step=40), True)["epoch"] == 2
    assert kept_evaluation(SimpleNamespace(log_history=history, best_global_step=20, global_step=40), False)["epoch"] == 4
    assert kept_evaluation(SimpleNamespace(log_history=history[:1], best_global_step=None, global_step=10), True) == {}


def test_short_schedules_sample_the_same_training_rows_for_every_seed():
    rows = [{"i": i} for i in range(100)]
    assert subsample(rows, None) is rows and subsample(rows, 500) is rows
    sample = subsample(rows, 10)
    assert len(sample) == 10 and sample == subsample(rows, 10) and len({r["i"] for r in sample}) == 10
    assert [rows[i] for i in subsample(list(range(100)), 10)] == sample  # sampling indices picks the same rows
