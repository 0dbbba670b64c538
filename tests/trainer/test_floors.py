"""The trivial floors of a release (``biodivergence floors``), on a small release whose floor scores follow by hand
from its counts; the card and ``eval.yaml`` show them."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import yaml
from release_factory import CLAIM_A, CLAIM_B, make_example

from biodivergence_cli.main import main
from biodivergence_dataset import benchmark, card, cardmeta, ontology, release
from trainer import floors

NC, CTX, DIRECT = ontology.NO_CONFLICT, ontology.CONTEXTUAL, "direct_contradiction"
AGREE, GEO = "The claims agree.", "Geography explains the difference."


def row(i: int, conflict: str, axes: tuple[str, ...], reconciliation: str):
    return make_example(f"pmid:{2 * i}", f"pmid:{2 * i + 1}", conflict, axes).model_copy(
        update={"reconciliation": reconciliation})


@pytest.fixture(scope="module")
def small_release(tmp_path_factory):
    """train: 4 no conflict, 2 contextual (geography), 1 direct; test: 2 no conflict, 2 contextual (geography and
    clinical setting); every row has the span "Greek" on claim A."""
    train = [row(i, NC, (), AGREE) for i in range(4)] + [row(i, CTX, ("geography",), GEO) for i in (4, 5)] \
        + [row(6, DIRECT, (), AGREE)]
    test = [row(i, NC, (), AGREE) for i in (10, 11)] + [row(i, CTX, ("geography", "clinical_setting"), GEO)
                                                        for i in (12, 13)]
    root = tmp_path_factory.mktemp("release")
    release.write_config(root, ontology.DEFAULT_CONFIG, {"train": train, "validation": train[:1], "test": test})
    card.write_card(root, cardmeta.CardMeta(min_support=1))
    return root


@pytest.fixture(scope="module")
def measured(small_release):
    return floors.measure_floors(small_release)


def test_floors_fit_on_train_and_score_the_test_split(measured):
    from trainer.metric import scoring_module

    assert measured["n"] == 4 and measured["train_rows"] == 7
    assert measured["classes"] == [NC, DIRECT, CTX]  # ontology order, the classes train holds
    majority, template = (measured["systems"][s]["scores"] for s in ("majority", "constant_template"))
    # majority: no conflict, no axes, confounder geography, "The claims agree." on every row
    f1_nc = 2 * 2 / (2 * 2 + 2)  # tp 2, fp 2
    assert majority["conflict_type/accuracy"] == 0.5 and majority["conflict_type/ctx_f1"] == 0.0
    assert majority["conflict_type/macro_f1"] == pytest.approx(f1_nc / 3)  # over the 3 train classes
    assert majority["axes/micro_f1"] == 0.0 and majority["confounder/accuracy"] == 1.0  # gold confounder: geography
    rouge = scoring_module().rouge_l(AGREE, GEO)
    assert majority["reconciliation/rouge_l"] == pytest.approx((1 + 1 + rouge + rouge) / 4)
    assert majority["spans/f1"] is None  # the majority predicts no spans
    # constant template: contextual, {geography}, geography, the same text, both claims whole
    assert template["conflict_type/ctx_f1"] == pytest.approx(2 * 2 / (2 * 2 + 2))  # tp 2, fp 2
    assert template["conflict_type/macro_f1"] == pytest.approx(template["conflict_type/ctx_f1"] / 3)
    assert template["axes/micro_f1"] == pytest.approx(2 * 2 / (2 * 2 + 2 + 2))  # tp 2, fp 2, fn 2 (setting)
    words = len(re.findall(r"\w+", CLAIM_A)) + len(re.findall(r"\w+", CLAIM_B))
    assert template["spans/f1"] == pytest.approx(2 * 1 / (words + 1))  # one reference token ("greek")
    best = measured["best"]
    assert best["conflict_type/ctx_f1"] == {"system": "constant_template", "score": template["conflict_type/ctx_f1"]}
    assert best["conflict_type/accuracy"]["score"] == max(
        s["scores"]["conflict_type/accuracy"] for s in measured["systems"].values())


def test_stratified_random_draws_training_rows_with_its_seed(small_release):
    train = benchmark.split_rows(small_release, "train")
    test = benchmark.test_rows(small_release)
    drawn = np.random.default_rng(3).integers(0, len(train), len(test))
    predicted = floors.stratified_random(train, test, seed=3)
    assert [p["conflict_type"] for p in predicted] == [train[i]["conflict_type"] for i in drawn]
    assert [p["divergence_axes"] for p in predicted] == [train[i]["divergence_axes"] for i in drawn]
    assert predicted == floors.stratified_random(train, test, seed=3)


def test_the_random_floor_scores_the_mean_of_its_seeded_draws(small_release, measured):
    from trainer.metric import score

    train, test = benchmark.split_rows(small_release, "train"), benchmark.test_rows(small_release)
    references = [floors.reference(r) for r in test]
    with pytest.warns(UserWarning):
        accuracy = [score(floors.stratified_random(train, test, seed), references, semsim_model=None,
                          classes=measured["classes"])["conflict_type/accuracy"] for seed in range(floors.RANDOM_DRAWS)]
    random = measured["systems"]["stratified_random"]
    assert random["draws"] == floors.RANDOM_DRAWS == measured["random_draws"]
    assert len(set(accuracy)) > 1  # the draws differ, so one draw would not be the floor
    assert random["scores"]["conflict_type/accuracy"] == pytest.approx(np.mean(accuracy))
    assert random["std"]["conflict_type/accuracy"] == pytest.approx(np.std(accuracy))
    assert "draws" not in measured["systems"]["majority"]  # a deterministic floor is scored once
    # undefined stays undefined: a key no draw defines has no mean, and undefined draws are left out of the mean
    means, stds = floors.mean_scores([{"k": None}, {"k": 1.0}, {"k": 0.0}], ["k", "j"])
    assert means == {"k": 0.5, "j": None} and stds == {"k": 0.5, "j": None}


def test_the_command_writes_floors_and_the_card_shows_them(small_release):
    assert main(["floors", "--release", str(small_release), "--no-semsim"]) == 0
    written = json.loads((small_release / release.FLOORS_FILE).read_text())
    ctx = written["systems"]["constant_template"]["scores"]["conflict_type/ctx_f1"]
    line = benchmark.floor_line("conflict_type/ctx_f1", written)
    assert f"constant template {ctx:.3f}" in line
    readme = (small_release / release.README).read_text()
    assert "| `conflict_type/ctx_f1` |" in readme and line in readme
    assert "averages over the 3 classes of the train split" in readme and "perfect predictions score 0.667" in readme
    # the Limitations count each split's conflicts by question and the largest claim share
    assert "- `primary/test`: 2 conflicts of 4 rows, from 0 questions; one claim (" in readme
    description = yaml.safe_load((small_release / release.EVAL_FILE).read_text())["description"]
    assert f"conflict_type/ctx_f1: {line}" in description and str([NC, DIRECT, CTX]) in description
