"""Training and prediction CLIs end to end on a small release of real SciFact claim pairs (MiniLM encoder):
Trainer's own records, one validation pass, resume, the model card, loading without our packages, the push."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from lm_eval_tasks import utils
from repo_paths import REPO
from trainer_release import write_scifact_release
from transformers import Trainer

from biodivergence_cli.main import main
from biodivergence_dataset import ontology, release
from trainer import metric
from trainer.constants import RESULTS_FILE
from trainer.predict import AXIS_THRESHOLD_GRID, CONFLICT_THRESHOLD_GRID, read_jsonl, reference_record
from trainer.train import TUNED_CONFLICT_THRESHOLD, TUNED_THRESHOLD, kept_evaluation
from trainer.training_args import BEST_METRIC

SIZES = {"train": 40, "validation": 12, "test": 12}
TRAIN_ARGS = ["--encoder", "minilm", "--batch-size", "8", "--max-length", "64", "--seed", "7", "--bootstrap", "200"]
MODEL_REPO, MODEL_TAG = "biodiv-org/biodivergence-reference", "v1.0"
#: (split prefix, rows) of every evaluation loop of the `trained` fixture's run
EVALUATION_PASSES: list[tuple[str, int]] = []


@pytest.fixture(scope="module", autouse=True)
def offline():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="module")
def scifact_release(tmp_path_factory):
    return write_scifact_release(tmp_path_factory.mktemp("release"), SIZES)


@pytest.fixture(scope="module")
def trained(scifact_release, tmp_path_factory):
    """One epoch through the CLI; records every evaluation pass Trainer makes (split prefix, number of rows)."""
    out = tmp_path_factory.mktemp("model")
    passes = EVALUATION_PASSES
    original = Trainer.evaluation_loop

    def recording(self, dataloader, *args, **kwargs):
        passes.append((kwargs.get("metric_key_prefix", "eval"), len(dataloader.dataset)))
        return original(self, dataloader, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Trainer, "evaluation_loop", recording)
        code = main(["train", "--release", str(scifact_release), "--epochs", "1", *TRAIN_ARGS, "--out", str(out)])
    assert code == 0
    return out


def _results(folder: Path) -> dict:
    return json.loads((folder / RESULTS_FILE).read_text())


def test_train_writes_model_trainer_records_and_our_summary(trained):
    for name in ("config.json", "model.safetensors", "modeling.py", "tokenizer.json", "README.md", "training_args.bin",
                 "trainer_state.json", "train_results.json", "eval_results.json", "test_results.json",
                 "all_results.json", "test_predictions.jsonl"):
        assert (trained / name).is_file(), name
    assert [p.name for p in trained.glob("checkpoint-*")] == ["checkpoint-5"]  # save_total_limit 1, kept for resume
    assert (trained / "checkpoint-5" / "optimizer.pt").is_file()
    results = _results(trained)
    assert results["split_sizes"] == SIZES == results["release_split_sizes"]
    assert results["encoder"] == "sentence-transformers/all-MiniLM-L6-v2"
    (run,) = results["runs"]
    assert run["seed"] == 7 and run["epochs_run"] == pytest.approx(1.0) and run["best_checkpoint"] == "checkpoint-5"
    assert run["best_validation_macro_f1"] == pytest.approx(run["validation"]["conflict_type/macro_f1"])
    assert 0.0 <= run["best_validation_score"] <= 1.0
    assert run["schedule"]["learning_rate"] == 2e-5 and run["schedule"]["per_device_train_batch_size"] == 8
    for key in ("conflict_type/accuracy", "conflict_type/ctx_f1", "axes/micro_f1", "axes_primary/micro_f1",
                "confounder/accuracy"):
        if run["test"][key] is None:  # undefined on these 12 rows (e.g. no contextual pair on either side)
            assert key != "conflict_type/accuracy"
            assert results["summary"]["test"][key] == {"mean": None, "std": None}
            continue
        assert 0.0 <= run["test"][key] <= 1.0
        assert results["summary"]["test"][key] == {"mean": run["test"][key], "std": None}
    for key in ("conflict_type/macro_f1", "axes/micro_f1"):  # 95% bootstrap intervals of the headline test scores
        assert run["test"][f"{key}/ci_low"] <= run["test"][key] <= run["test"][f"{key}/ci_high"]
    saved = json.loads((trained / "config.json").read_text())
    assert saved["max_length"] == 64 and saved["constraint_mode"] == "predicted_axes"
    assert run["axis_threshold"] in AXIS_THRESHOLD_GRID and saved["axis_threshold"] == run["axis_threshold"]
    assert 0.0 <= run["validation_axes_micro_f1_at_threshold"] <= 1.0
    assert len(saved["class_weights"]) == len(ontology.CONFLICT_TYPE_NAMES)
    # Trainer's files have Trainer's schema; ours is separate
    assert "train_loss" in json.loads((trained / "train_results.json").read_text())
    state = json.loads((trained / "trainer_state.json").read_text())
    assert state["global_step"] == 5 and state["best_model_checkpoint"].endswith("checkpoint-5")


def test_validation_is_evaluated_once_and_the_threshold_comes_from_that_pass(trained):
    assert EVALUATION_PASSES == [("eval", SIZES["validation"]), ("test", SIZES["test"])]
    state = json.loads((trained / "trainer_state.json").read_text())
    kept = kept_evaluation(SimpleNamespace(**state), load_best_model_at_end=True)
    eval_results = json.loads((trained / "eval_results.json").read_text())
    assert eval_results == {k: v for k, v in kept.items() if k.startswith("eval_")}
    assert kept[f"eval_{TUNED_THRESHOLD}"] == _results(trained)["runs"][0]["axis_threshold"]
    assert kept[f"eval_{TUNED_CONFLICT_THRESHOLD}"] == _results(trained)["runs"][0]["conflict_threshold"]


def test_the_saved_conflict_threshold_decides_which_pairs_are_conflicts(trained, scifact_release, tmp_path):
    """Training saves the tuned conflict threshold in the config; predict and the pipeline decode with it: a copy
    of the model whose saved threshold is 0.01 calls every pair a conflict, one whose threshold is 0.99 none."""
    from trainer.pipeline import conflict_pipeline

    run = _results(trained)["runs"][0]
    assert run["conflict_threshold"] in CONFLICT_THRESHOLD_GRID
    assert json.loads((trained / "config.json").read_text())["conflict_threshold"] == run["conflict_threshold"]
    test_rows = [r for _, r in release.iter_rows(scifact_release, "primary", "test")]
    for threshold, only_conflicts in ((0.01, True), (0.99, False)):
        folder = tmp_path / f"model-{threshold}"
        shutil.copytree(trained, folder, ignore=shutil.ignore_patterns("checkpoint-*"))
        config = json.loads((folder / "config.json").read_text())
        (folder / "config.json").write_text(json.dumps({**config, "conflict_threshold": threshold}))
        out = tmp_path / f"{threshold}.jsonl"
        assert main(["predict", "--model", str(folder), "--release", str(scifact_release), "--split", "test",
                     "--out", str(out)]) == 0
        types = [r["conflict_type"] for r in read_jsonl(out)]
        assert len(types) == SIZES["test"]
        if only_conflicts:
            assert ontology.NO_CONFLICT not in types
        else:
            assert set(types) == {ontology.NO_CONFLICT}
        piped = conflict_pipeline(str(folder))(test_rows[0])["conflict_type"]
        assert (piped != ontology.NO_CONFLICT) is only_conflicts
    overridden = tmp_path / "override.jsonl"  # --conflict-threshold overrides the saved value
    assert main(["predict", "--model", str(tmp_path / "model-0.99"), "--release", str(scifact_release),
                 "--split", "test", "--conflict-threshold", "0.01", "--out", str(overridden)]) == 0
    assert ontology.NO_CONFLICT not in {r["conflict_type"] for r in read_jsonl(overridden)}


def test_config_is_portable_and_the_card_describes_the_run(trained):
    text = (trained / "config.json").read_text()
    saved = json.loads(text)
    assert saved["encoder_name_or_path"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert saved["auto_map"] == {
        "AutoConfig": "modeling.MultiTaskConflictConfig", "AutoModel": "modeling.MultiTaskConflictModel",
        "AutoModelForSequenceClassification": "modeling.MultiTaskConflictForSequenceClassification"}
    assert str(sys.prefix) not in text and str(trained) not in text and '"_name_or_path"' not in text
    tokenizer_config = json.loads((trained / "tokenizer_config.json").read_text())
    assert not {"local_files_only", "is_local"} & set(tokenizer_config)  # how it was loaded here is not kept
    card = (trained / "README.md").read_text()
    assert card.startswith("---\n") and "base_model: sentence-transformers/all-MiniLM-L6-v2" in card
    assert "library_name: transformers" in card and "custom_code" in card
    assert str(trained) not in card and str(sys.prefix) not in card and "/tmp" not in card
    assert "trust_remote_code=True" in card and "## Limitations" in card and "silver" in card
    assert "1 epoch(s) instead of the paper's 8" in card
    test_scores = _results(trained)["runs"][0]["test"]
    assert f"{test_scores['conflict_type/macro_f1']:.3f} [{test_scores['conflict_type/macro_f1/ci_low']:.3f}, " in card


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
    trained_on = _results(trained)["runs"][0]["test"]
    for key in ("conflict_type/accuracy", "conflict_type/macro_f1", "axes/micro_f1", "confounder/accuracy"):
        assert scores[key] == pytest.approx(trained_on[key]), key
    written = read_jsonl(trained / "test_predictions.jsonl")  # the training run's own test predictions, same order
    assert [p["pair_id"] for p in written] == [r["pair_id"] for r in rows]


def test_predict_max_examples_predicts_the_rows_train_samples(trained, scifact_release, tmp_path, capsys):
    from trainer.train import load_training_splits
    from trainer.training_args import TrainSettings

    out = tmp_path / "preds.jsonl"
    assert main(["predict", "--model", str(trained), "--release", str(scifact_release), "--split", "test",
                 "--max-examples", "5", "--out", str(out)]) == 0
    predictions = read_jsonl(out)
    assert "wrote 5 predictions" in capsys.readouterr().out
    splits, _ = load_training_splits(scifact_release, "primary", TrainSettings(max_eval_examples=5))
    assert [p["pair_id"] for p in predictions] == [r["pair_id"] for r in splits["test"]]
    full = {p["pair_id"]: p for p in read_jsonl(trained / "test_predictions.jsonl")}
    assert predictions == [full[p["pair_id"]] for p in predictions]
    assert main(["predict", "--model", str(trained), "--release", str(scifact_release), "--max-examples", "0",
                 "--out", str(out)]) == 1
    assert "--max-examples must be at least 1" in capsys.readouterr().err


def test_card_evaluate_and_lm_eval_report_the_same_numbers_and_null_for_absent_classes(trained, scifact_release,
                                                                                        tmp_path, capsys):
    """The test scores of the model card (written by train), of ``biodivergence evaluate`` on the run's own test
    predictions and of the lm-eval task's aggregations agree; a class neither side has is null (n/a, n = 0)."""
    report = tmp_path / "test.metrics.json"
    assert main(["evaluate", "--predictions", str(trained / "test_predictions.jsonl"), "--release",
                 str(scifact_release), "--no-semsim", "--out", str(report)]) == 0
    evaluated = json.loads(report.read_text())["metrics"]
    test = _results(trained)["runs"][0]["test"]
    for key, value in test.items():
        if not key.endswith(("/ci_low", "/ci_high")) and key != "loss":
            assert value == evaluated[key] if value is None else value == pytest.approx(evaluated[key]), key
    absent = [c for c in ontology.CONFLICT_TYPE_NAMES if evaluated[f"conflict_type/f1/{c}"] is None]
    assert absent  # the small test split and a one-epoch model leave some classes on neither side
    predicted = {p["conflict_type"] for p in read_jsonl(trained / "test_predictions.jsonl")}
    card = (trained / "README.md").read_text()
    for name in ontology.CONFLICT_TYPE_NAMES:
        support = evaluated[f"conflict_type/support/{name}"]
        assert (name in absent) == (support == 0 and name not in predicted), name
        f1 = evaluated[f"conflict_type/f1/{name}"]
        assert f"| {name} | {'n/a (n=0)' if f1 is None else f'{f1:.3f}'} | {support} |" in card
    assert "| 1.000 |" not in card.split("Test F1 per conflict type")[1]
    rows = {r["pair_id"]: r for _, r in release.iter_rows(scifact_release, "primary", "test")}
    items = [(rows[p["pair_id"]]["conflict_type"], ontology.CONFLICT_TYPE_NAMES.index(p["conflict_type"]))
             for p in read_jsonl(trained / "test_predictions.jsonl")]
    for aggregate, key in ((utils.conflict_type_macro_f1, "conflict_type/macro_f1"),
                           (utils.conflict_type_ctx_f1, "conflict_type/ctx_f1"),
                           (utils.conflict_type_ctx_n, "conflict_type/support/contextual_contradiction")):
        value = aggregate(items)
        assert value == evaluated[key] if value is None else value == pytest.approx(evaluated[key]), key


def test_pipeline_gives_the_predictions_of_predict(trained, scifact_release):
    from transformers import pipeline

    from trainer.pipeline import TASK, conflict_pipeline
    from trainer.predict import load_model, predict_rows

    rows = [row for _, row in release.iter_rows(scifact_release, "primary", "test")]
    model, tokenizer = load_model(trained)
    expected = [{k: v for k, v in r.items() if k != "pair_id"} for r in predict_rows(model, tokenizer, rows)]
    classify = conflict_pipeline(str(trained))
    assert classify(rows) == expected
    assert classify(rows, batch_size=5) == expected
    assert pipeline(TASK, model=str(trained), device="cpu")(rows[0]) == expected[0]
    pair = (rows[0]["claim_a_text"], rows[0]["claim_b_text"])
    scored = classify(pair, return_scores=True)
    assert set(scored) == {"conflict_type", "divergence_axes", "dominant_confounder", "scores", "axis_probabilities"}
    probs = scored["scores"]
    assert sum(probs.values()) == pytest.approx(1.0)
    conflicts = {k: v for k, v in probs.items() if k != ontology.NO_CONFLICT}
    called = 1.0 - probs[ontology.NO_CONFLICT] >= model.config.conflict_threshold  # decoded at the saved threshold
    assert scored["conflict_type"] == (max(conflicts, key=conflicts.get) if called else ontology.NO_CONFLICT)
    with pytest.raises(TypeError, match="claim pair"):
        classify("just one claim")


#: The start of a script that cannot import our packages.
WITHOUT_OURS = """
import importlib.abc, json, sys
OURS = {"trainer", "biodivergence_dataset", "builder", "metrics", "biodivergence", "tests"}

class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in OURS:
            raise ModuleNotFoundError(f"{name} is not importable here")
        return None

sys.meta_path.insert(0, Block())
"""

FRESH_PROCESS = WITHOUT_OURS + """import torch
from transformers import AutoModel, AutoTokenizer

inputs, text_a, text_b = torch.load(sys.argv[1]), sys.argv[2], sys.argv[3]
out = {}
for source in sys.argv[4:]:
    repo, _, revision = source.partition("@")
    model = AutoModel.from_pretrained(repo, revision=revision or None, trust_remote_code=True).eval()
    tokenizer = AutoTokenizer.from_pretrained(repo, revision=revision or None)
    with torch.no_grad():
        result = model(**inputs)
    out[source] = {"class": type(model).__module__ + "." + type(model).__name__,
                   "input_ids": tokenizer(text_a, text_b)["input_ids"],
                   **{k: result[k].tolist() for k in ("conflict_logits", "axis_logits", "confounder_logits")}}
out["ours_imported"] = sorted(m for m in sys.modules if m.partition(".")[0] in OURS)
out["sys_path"] = sys.path
print(json.dumps(out))
"""


def _fresh_process(tmp_path: Path, inputs_file: Path, texts: tuple[str, str], sources: list[str], env_extra: dict) -> dict:
    """Run FRESH_PROCESS in an isolated interpreter (-I: no PYTHONPATH, no cwd on sys.path) outside the repo."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(HF_HOME=str(tmp_path / "hf-home"), HF_MODULES_CACHE=str(tmp_path / "hf-modules"),
               HF_UPDATE_DOWNLOAD_COUNTS="0", **env_extra)
    done = subprocess.run([sys.executable, "-I", "-c", FRESH_PROCESS, str(inputs_file), *texts, *sources],
                          env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_model_loads_without_our_packages_from_the_folder_and_from_the_hub(trained, scifact_release, tmp_path,
                                                                          monkeypatch):
    """AutoModel + trust_remote_code in a fresh process that cannot import our packages (from the folder, then
    pushed to the fake Hub and loaded by repo id at the tag) predicts exactly what our loader predicts."""
    from fault_cases import FakeHub
    from huggingface_hub import constants

    from trainer.data import PairCollator, encode_rows
    from trainer.hub_model import push_model
    from trainer.predict import load_model

    rows = [row for _, row in release.iter_rows(scifact_release, "primary", "test")][:5]
    model, tokenizer = load_model(trained)
    batch = PairCollator(tokenizer)(encode_rows(rows, tokenizer, model.config.max_length))
    inputs = {k: v for k, v in batch.items() if k not in ("labels", "axis_labels", "confounder_labels")}
    torch.save(inputs, tmp_path / "inputs.pt")
    with torch.no_grad():
        ours = model(**inputs)
    texts = (rows[0]["claim_a_text"], rows[0]["claim_b_text"])
    folder = tmp_path / "model"
    shutil.copytree(trained, folder)

    with FakeHub() as fake:
        monkeypatch.setenv("HF_TOKEN", "hf_fake_token")
        monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
        monkeypatch.setattr(constants, "ENDPOINT", fake.endpoint)
        oid = push_model(folder, MODEL_REPO, MODEL_TAG)
        pushed = fake.files("model", MODEL_REPO, MODEL_TAG)
        env = {"HF_ENDPOINT": fake.endpoint, "HF_HUB_OFFLINE": "0"}
        loaded = _fresh_process(tmp_path, tmp_path / "inputs.pt", texts, [str(folder), f"{MODEL_REPO}@{MODEL_TAG}"], env)
    assert fake.repos[("model", MODEL_REPO)]["tags"] == {MODEL_TAG: oid}
    assert {"config.json", "modeling.py", "model.safetensors", "README.md", "tokenizer.json", "trainer_state.json",
            "biodivergence_results.json"} <= set(pushed)
    assert not [p for p in pushed if p.startswith("checkpoint-")]
    assert f'AutoModel.from_pretrained("{MODEL_REPO}", revision="{MODEL_TAG}", trust_remote_code=True)' in \
        pushed["README.md"].decode()
    assert loaded["ours_imported"] == [] and str(REPO) not in loaded["sys_path"]
    for source in (str(folder), f"{MODEL_REPO}@{MODEL_TAG}"):
        got = loaded[source]
        assert got["class"].startswith("transformers_modules.") and got["class"].endswith("modeling.MultiTaskConflictModel")
        assert got["input_ids"] == tokenizer(*texts)["input_ids"]
        for key in ("conflict_logits", "axis_logits", "confounder_logits"):
            np.testing.assert_allclose(np.array(got[key]), ours[key].numpy(), rtol=0, atol=1e-6, err_msg=f"{source} {key}")


SNIPPET_PROCESS = WITHOUT_OURS + """namespace = {}
exec(sys.argv[1], namespace)
print(json.dumps({"result": namespace["result"], "ours_imported": sorted(m for m in sys.modules if m.partition(".")[0] in OURS),
                  "sys_path": sys.path}))
"""


def _usage_snippet(card: str) -> str:
    """The first Python block of the card's "How to use" section."""
    section = card.split("## How to use", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def test_the_cards_pipeline_snippet_runs_without_our_packages(trained, tmp_path):
    """The card's usage snippet, verbatim but for the model id, in an isolated process that cannot import our
    packages: transformers' text-classification pipeline gives the conflict type our model gives the text pair."""
    from transformers import AutoTokenizer

    from trainer.model_card import EXAMPLE_PAIR
    from trainer.predict import load_model

    card = (trained / "README.md").read_text()
    assert "pipeline_tag: text-classification" in card
    snippet = _usage_snippet(card)
    assert 'pipeline("text-classification", model="PATH/TO/THIS/FOLDER", trust_remote_code=True)' in snippet
    assert '"text_pair": ' in snippet
    folder = tmp_path / "model"
    shutil.copytree(trained, folder)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(HF_HOME=str(tmp_path / "hf-home"), HF_MODULES_CACHE=str(tmp_path / "hf-modules"), HF_HUB_OFFLINE="1")
    done = subprocess.run([sys.executable, "-I", "-c", SNIPPET_PROCESS, snippet.replace("PATH/TO/THIS/FOLDER", str(folder))],
                          env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["ours_imported"] == [] and str(REPO) not in got["sys_path"]
    model, _ = load_model(trained)
    tokenizer = AutoTokenizer.from_pretrained(trained)
    with torch.no_grad():
        probs = model(**tokenizer(*EXAMPLE_PAIR, return_tensors="pt")).conflict_logits.softmax(-1)[0]
    assert got["result"]["label"] == ontology.CONFLICT_TYPE_NAMES[int(probs.argmax())]
    assert got["result"]["score"] == pytest.approx(float(probs.max()), abs=1e-5)


def test_model_index_gives_each_test_score_with_its_support(trained, tmp_path):
    import yaml

    from trainer.model_card import MODEL_INDEX, render

    folder = tmp_path / "model"
    shutil.copytree(trained, folder, ignore=shutil.ignore_patterns("checkpoint-*", "*.safetensors"))
    results = _results(folder)
    results["release_reference"] = {"repo_id": "biodiv-org/biodivergence", "revision": "v1.0", "version": "1.0"}
    (folder / RESULTS_FILE).write_text(json.dumps(results))
    header = yaml.safe_load(render(folder).split("---\n")[1])
    test = results["runs"][0]["test"]
    shown = {m["name"]: m for r in header["model-index"][0]["results"] for m in r["metrics"]}
    expected = [(name, key, n) for _, _, name, key, n in MODEL_INDEX if test.get(key) is not None]
    assert expected and len(shown) == len(expected)
    for name, key, n_key in expected:
        metric_ = shown[f"{name} (n={test[n_key]:.0f})"]
        assert metric_["value"] == round(test[key], 4) and metric_["args"] == {"n": test[n_key]}
    assert test["conflict_type/n"] == SIZES["test"]


def test_resume_from_the_last_checkpoint_continues_the_run(trained, scifact_release, tmp_path):
    folder = tmp_path / "model"
    shutil.copytree(trained, folder)
    assert main(["train", "--release", str(scifact_release), "--epochs", "2", *TRAIN_ARGS, "--max-eval-examples", "8",
                 "--resume-from-checkpoint", "true", "--out", str(folder)]) == 0
    state = json.loads((folder / "trainer_state.json").read_text())
    assert state["global_step"] == 10 and state["epoch"] == pytest.approx(2.0)
    assert [h["epoch"] for h in state["log_history"] if f"eval_{BEST_METRIC}" in h] == [1.0, 2.0]  # epoch 1 kept
    results = _results(folder)
    assert results["runs"][0]["resumed_from"].endswith("checkpoint-5")
    assert results["split_sizes"] == {"train": 40, "validation": 8, "test": 8}
    assert results["release_split_sizes"] == SIZES
    assert len(read_jsonl(folder / "test_predictions.jsonl")) == 8
    assert len(list(folder.glob("checkpoint-*"))) <= 2  # the best and the last


@pytest.fixture(scope="module")
def tiny_encoder(tmp_path_factory):
    """A randomly initialised 2-layer BERT with MiniLM's tokenizer: training steps cost next to nothing."""
    from transformers import AutoTokenizer, BertConfig, BertModel

    from trainer.encoders import packaged_minilm

    folder = tmp_path_factory.mktemp("tiny-encoder")
    tokenizer = AutoTokenizer.from_pretrained(packaged_minilm())
    torch.manual_seed(0)
    BertModel(BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=64, max_position_embeddings=128)).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def test_trainer_keeps_the_checkpoint_with_the_best_thresholded_validation_ctx_f1(scifact_release, tiny_encoder,
                                                                                  tmp_path):
    """Three epochs of a tiny encoder: Trainer's best checkpoint is the evaluation with the highest Ctx-F1 at its
    own tuned conflict threshold (not macro-F1), and that evaluation's threshold is the one saved."""
    out = tmp_path / "model"
    assert main(["train", "--release", str(scifact_release), "--encoder", str(tiny_encoder), "--epochs", "3",
                 "--batch-size", "4", "--lr", "1e-3", "--max-length", "64", "--bootstrap", "0", "--patience", "5",
                 "--out", str(out)]) == 0
    state = json.loads((out / "trainer_state.json").read_text())
    evaluations = [h for h in state["log_history"] if f"eval_{BEST_METRIC}" in h]
    assert len(evaluations) == 3
    best = max(h[f"eval_{BEST_METRIC}"] for h in evaluations)
    kept = next(h for h in evaluations if h[f"eval_{BEST_METRIC}"] == best)
    assert state["best_metric"] == pytest.approx(best) and state["best_global_step"] == kept["step"]
    run = _results(out)["runs"][0]
    assert run["best_validation_score"] == pytest.approx(best)
    assert run["conflict_threshold"] == kept[f"eval_{TUNED_CONFLICT_THRESHOLD}"]
    assert json.loads((out / "config.json").read_text())["conflict_threshold"] == run["conflict_threshold"]


@pytest.mark.slow  # two real training processes (torchrun-style)
def test_two_processes_train_save_once_and_scale_the_loss_like_one(scifact_release, tiny_encoder, tmp_path):
    """torchrun (what ``accelerate launch`` runs) with two CPU processes: every process saves through
    Trainer.save_model, the main one writes our files; the loss is the batch mean, never multiplied by the
    number of processes (the model does not take Trainer's loss kwargs)."""
    out = tmp_path / "model"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", "-m", "biodivergence_cli",
         "train", "--release", str(scifact_release), "--encoder", str(tiny_encoder), "--epochs", "1", "--batch-size", "4",
         "--max-length", "64", "--bootstrap", "0", "--use-cpu", "--ddp-backend", "gloo", "--out", str(out)],
        env=env, cwd=REPO, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    (run,) = _results(out)["runs"]
    assert run["schedule"]["world_size"] == 2 and run["global_step"] == 5  # 40 rows / (2 processes × 4)
    assert (out / "model.safetensors").is_file() and (out / "README.md").is_file()
    assert len(read_jsonl(out / "test_predictions.jsonl")) == SIZES["test"]
    state = json.loads((out / "trainer_state.json").read_text())
    (train_log,) = [h for h in state["log_history"] if "train_loss" in h]
    assert train_log["train_loss"] == pytest.approx(run["validation"]["loss"], rel=0.5)  # ~ln(6)+..., not doubled


def test_push_options_are_checked_before_training(scifact_release, tmp_path, capsys):
    base = ["train", "--release", str(scifact_release), "--out", str(tmp_path / "m"), "--push-to-hub"]
    assert main(base) == 1
    assert "needs --hub-model-id ORG/NAME and --hub-tag vX.Y" in capsys.readouterr().err
    assert main([*base, "--hub-model-id", "org/name", "--hub-tag", "1.0"]) == 1
    assert "vX.Y" in capsys.readouterr().err
    assert main([*base, "--hub-model-id", "org/name", "--hub-tag", "v1.0", "--seed", "1", "2"]) == 1
    assert "publishes one model" in capsys.readouterr().err
    assert not (tmp_path / "m").exists()


def test_push_dry_run_lists_the_model_files(trained, capsys):
    from trainer import hub_model

    assert main(["push-model", "--model", str(trained), "--repo", MODEL_REPO, "--tag", MODEL_TAG, "--dry-run",
                 "--commit-message", "Reference model v1.0"]) == 0
    out = capsys.readouterr().out
    assert "commit_message='Reference model v1.0'" in out
    assert "modeling.py" in out and "model.safetensors" in out and "checkpoint-5" not in out and "model is valid" in out
    assert hub_model.model_problems(trained.parent) != []


def test_predict_with_gold_axes_restricts_confounders_to_gold(trained, scifact_release, tmp_path):
    out = tmp_path / "gold.jsonl"
    assert main(["predict", "--model", str(trained), "--release", str(scifact_release), "--split", "test",
                 "--constraint-mode", "gold_axes", "--conflict-threshold", "0.01", "--out", str(out)]) == 0
    gold = {r["pair_id"]: r for _, r in release.iter_rows(scifact_release, "primary", "test")}
    for p in read_jsonl(out):
        axes = gold[p["pair_id"]]["divergence_axes"]
        assert (p["dominant_confounder"] in axes) if axes else p["dominant_confounder"] == ""


def test_axis_threshold_override_changes_only_the_axes(trained, scifact_release, tmp_path):
    low, high = tmp_path / "low.jsonl", tmp_path / "high.jsonl"
    for path, threshold in ((low, "0.01"), (high, "0.99")):
        assert main(["predict", "--model", str(trained), "--release", str(scifact_release), "--split", "test",
                     "--axis-threshold", threshold, "--conflict-threshold", "0.01", "--out", str(path)]) == 0
    low_rows, high_rows = read_jsonl(low), read_jsonl(high)
    assert [r["conflict_type"] for r in low_rows] == [r["conflict_type"] for r in high_rows]
    assert sum(len(r["divergence_axes"]) for r in low_rows) > sum(len(r["divergence_axes"]) for r in high_rows)
    assert main(["predict", "--model", str(trained), "--release", str(scifact_release), "--axis-threshold", "1.5",
                 "--out", str(tmp_path / "bad.jsonl")]) != 0


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
