"""The learned judge: trained on gold sources (tiny CPU schedule), saved with save_pretrained, calibrated,
loaded as ``judge:PATH`` into a panel; its leave-one-source-out folds are what goldcheck scores."""

from __future__ import annotations

import json

import pytest
from llm_server import SCIFACT

from biodivergence_dataset import ontology
from builder.annotators import goldcheck as gc
from builder.annotators import make_local
from builder.annotators.goldcheck import make_claim, make_pair
from builder.annotators.judge import JUDGE_CONFIG, JudgeAnnotator, TrainConfig, judge_folder, train_judge

DATA = SCIFACT.parent
TINY = TrainConfig(data_dir=str(DATA), sources=("scifact", "pubmedqa"), max_pairs=48, batch_size=8, max_length=48)


@pytest.fixture(scope="module")
def judge_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("judge")
    train_judge(root, TINY)
    train_judge(root / "heldout-scifact", TINY, leave_out="scifact")
    return root


def test_a_trained_judge_is_a_saved_calibrated_cross_encoder(judge_dir):
    settings = json.loads((judge_dir / JUDGE_CONFIG).read_text())
    assert settings["trained_on"] == ["scifact", "pubmedqa"] and settings["train_pairs"] > 0
    assert settings["calibration_pairs"] > 0 and set(settings["calibration"]) == {"a", "b"}
    assert (judge_dir / "config.json").exists() and (judge_dir / "tokenizer_config.json").exists()
    fold = json.loads((judge_dir / "heldout-scifact" / JUDGE_CONFIG).read_text())
    assert fold["trained_on"] == ["pubmedqa"]


def test_judge_labels_pairs_and_defers_the_type_to_the_frames(judge_dir):
    judge = make_local(f"judge:{judge_dir}")
    assert isinstance(judge, JudgeAnnotator) and judge.trained_on == {"scifact", "pubmedqa"}
    p = make_pair(make_claim("doc:a", "Zinc reduced diarrhoea in children.", ontology.DOMAIN_NAMES[0], "t"),
                  make_claim("doc:b", "Zinc did not reduce diarrhoea in adults.", ontology.DOMAIN_NAMES[0], "t"))
    labels = judge.annotate_many([p, p])
    assert labels[0] == labels[1] and 0.0 <= labels[0].confidence <= 1.0
    assert labels[0].conflict_type in ontology.CONFLICT_TYPE_NAMES and labels[0].notes.startswith("judge p=")
    if labels[0].conflict_type != ontology.NO_CONFLICT:  # the frames' boundary rules give the type
        assert labels[0].conflict_type == ontology.CONTEXTUAL
    assert 0.0 < judge.probability(0.0) < 1.0


def test_goldcheck_scores_each_source_with_the_fold_that_never_saw_it(judge_dir):
    assert judge_folder(judge_dir, "scifact") == judge_dir / "heldout-scifact"
    assert judge_folder(judge_dir, "pubmedqa") == judge_dir  # no fold: the main judge, marked in fold
    result = gc.goldcheck([f"judge:{judge_dir}"], DATA, ["scifact", "pubmedqa"], n_boot=20)
    cells = result["scores"][f"judge:{judge_dir}"]
    assert not cells["scifact"]["in_fold"] and cells["scifact"]["pairs"] == 519
    assert cells["pubmedqa"] == {"in_fold": True, "pairs": 890}


def test_missing_judge_folder_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a judge folder"):
        make_local(f"judge:{tmp_path}")
