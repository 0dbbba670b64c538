import json
import re
import shutil

import pyarrow.parquet as pq
import pytest
import yaml
from datasets import ClassLabel, get_dataset_config_names, load_dataset
from release_factory import make_example, make_splits, write_small_release

from biodivergence_cli.main import main
from biodivergence_dataset import ontology, release
from biodivergence_dataset.card import card_yaml, size_category
from biodivergence_dataset.cardmeta import CardMeta
from biodivergence_dataset.features import MISSING_INT
from biodivergence_dataset.io import write_text_atomic
from biodivergence_dataset.validate import validate_release

# Hub vocabularies (huggingface.js tasks + dataset card spec) for the values our card uses.
HUB_TASK_CATEGORIES = {"text-classification", "token-classification", "text-generation", "question-answering",
                       "summarization", "sentence-similarity", "zero-shot-classification", "feature-extraction"}
HUB_TASK_IDS = {"natural-language-inference", "multi-class-classification", "multi-label-classification",
                "fact-checking", "semantic-similarity-classification", "named-entity-recognition"}
HUB_SIZES = {"n<1K", "1K<n<10K", "10K<n<100K", "100K<n<1M", "1M<n<10M", "10M<n<100M", "100M<n<1B", "1B<n<10B",
             "10B<n<100B", "100B<n<1T", "n>1T"}
HUB_ANNOTATION_CREATORS = {"crowdsourced", "expert-generated", "found", "machine-generated", "no-annotation", "other"}
HUB_LANGUAGE_CREATORS = HUB_ANNOTATION_CREATORS
HUB_SOURCE_DATASETS = {"original", "extended"}
HUB_LICENSES = {"cc-by-4.0", "cc-by-sa-4.0", "cc-by-nc-4.0", "mit", "apache-2.0", "odc-by", "cc0-1.0", "other"}


@pytest.fixture(scope="module")
def small_release(tmp_path_factory):
    return write_small_release(tmp_path_factory.mktemp("release"))


def test_load_dataset_reads_both_configs_with_typed_features(small_release):
    assert set(get_dataset_config_names(str(small_release))) == {"primary", "pairlevel"}
    for config in ontology.CONFIGS:
        ds = load_dataset(str(small_release), config)
        assert {s: len(ds[s]) for s in ds} == {"train": 8, "validation": 2, "test": 3}
        features = ds["train"].features
        assert isinstance(features["conflict_type"], ClassLabel)
        assert features["conflict_type"].names == list(ontology.CONFLICT_TYPE_NAMES)
        assert features["divergence_axes"].feature.names == list(ontology.AXIS_NAMES)
        row = ds["train"][1]
        assert features["conflict_type"].int2str(row["conflict_type"]) == ontology.CONTEXTUAL
        assert [features["divergence_axes"].feature.int2str(a) for a in row["divergence_axes"]] == [
            "geography", "clinical_setting"]
        assert ds["train"][0]["dominant_confounder"] == MISSING_INT  # no confounder: -1, as datasets marks no label
        assert ds["train"][0]["pub_year_b"] == MISSING_INT
        assert row["evidence_spans"][0]["text"] == "Greek"


def test_iter_examples_round_trips(small_release):
    back = list(release.iter_examples(small_release, "primary", "train"))
    assert back == make_splits()["train"]


def test_validate_accepts_good_release(small_release):
    report = validate_release(small_release)
    assert report.ok, report.problems
    assert report.rows["primary"] == {"train": 8, "validation": 2, "test": 3}
    assert main(["validate", "--release", str(small_release)]) == 0


def _rewrite_first_row(path, column, value):
    table = pq.read_table(path)
    values = table.column(column).to_pylist()
    values[0] = value
    table = table.set_column(table.schema.get_field_index(column), table.schema.field(column),
                             [values])
    pq.write_table(table, path)


def test_validate_rejects_unknown_label(small_release, tmp_path, capsys):
    bad = shutil.copytree(small_release, tmp_path / "bad")
    shard = release.split_files(bad, "primary", "test")[0]
    _rewrite_first_row(shard, "conflict_type", 42)
    report = validate_release(bad)
    assert not report.ok
    assert any(str(shard) in p and "conflict_type" in p and "42" in p for p in report.problems), report.problems
    assert main(["validate", "--release", str(bad)]) == 1
    assert "conflict_type" in capsys.readouterr().out


def test_validate_rejects_article_in_train_and_test(small_release, tmp_path, capsys):
    bad = shutil.copytree(small_release, tmp_path / "leaky")
    splits = make_splits()
    train_article = splits["train"][0].article_uid_a
    splits["test"].append(make_example(train_article, "pmid:999"))
    release.write_config(bad, "primary", splits)
    report = validate_release(bad)
    assert any("article(s) appear in both train and test" in p and train_article in p for p in report.problems)
    assert main(["validate", "--release", str(bad)]) == 1
    assert train_article in capsys.readouterr().out


def test_validate_rejects_missing_config(small_release, tmp_path):
    bad = shutil.copytree(small_release, tmp_path / "noconf")
    shutil.rmtree(bad / "pairlevel")
    assert any("'pairlevel' is missing" in p for p in validate_release(bad).problems)


def test_card_yaml_uses_hub_vocabularies(small_release):
    header = card_yaml(small_release, CardMeta())
    assert set(header["task_categories"]) <= HUB_TASK_CATEGORIES
    assert set(header["task_ids"]) <= HUB_TASK_IDS
    assert set(header["size_categories"]) <= HUB_SIZES
    assert set(header["annotations_creators"]) <= HUB_ANNOTATION_CREATORS
    assert set(header["language_creators"]) <= HUB_LANGUAGE_CREATORS
    assert set(header["source_datasets"]) <= HUB_SOURCE_DATASETS
    assert header["license"] in HUB_LICENSES
    assert header["size_categories"] == ["n<1K"]
    assert [c["config_name"] for c in header["configs"]] == ["primary", "pairlevel"]
    info = {c["config_name"]: c for c in header["dataset_info"]}
    splits = {s["name"]: s["num_examples"] for s in info["primary"]["splits"]}
    assert splits == {"train": 8, "validation": 2, "test": 3}
    features = {f["name"]: f for f in info["primary"]["features"]}
    assert "list" in features["divergence_axes"] and "list" in features["evidence_spans"]


def test_card_body_generated_from_ontology_and_data(small_release):
    text = (small_release / "README.md").read_text()
    header = yaml.safe_load(text.split("---\n")[1])
    assert header["pretty_name"] == "BioDivergence"
    for name in ontology.CONFLICT_TYPE_NAMES + ontology.AXIS_NAMES:
        assert f"`{name}`" in text
    assert "| `primary` | 8 | 2 | 3 | 13 |" in text


@pytest.mark.parametrize("n,expected", [(0, "n<1K"), (999, "n<1K"), (1000, "1K<n<10K"), (11865, "10K<n<100K")])
def test_size_category(n, expected):
    assert size_category(n) == expected


def test_atomic_write_keeps_old_file_on_failure(tmp_path):
    target = write_text_atomic(tmp_path / "x.txt", "old")

    class Boom(Exception):
        pass

    from biodivergence_dataset.io import atomic_path
    with pytest.raises(Boom), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise Boom
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["x.txt"]


# --- Hub benchmark registration: eval.yaml and the card's "Evaluate a model" (huggingface.co/docs/hub/eval-results)

#: eval.yaml fields of the Hub's specification: required top-level keys, and the keys of a tasks[] item.
HUB_EVAL_FIELDS = {"name", "description", "evaluation_framework", "tasks"}
HUB_EVAL_TASK_FIELDS = {"id", "config", "split"}


def _card_block(text, heading, lang):
    """The first fenced ``lang`` block after ``heading`` in the card."""
    section = text[text.index(heading):]
    return section.split(f"```{lang}\n", 1)[1].split("```", 1)[0]


def test_eval_yaml_is_the_hub_benchmark_format_and_lists_every_task(small_release):
    from biodivergence_dataset.benchmark import EVALUATION_FRAMEWORK
    from biodivergence_dataset.tasks import load_tasks

    data = yaml.safe_load((small_release / "eval.yaml").read_text())
    assert set(data) == HUB_EVAL_FIELDS
    assert data["name"] == CardMeta().pretty_name and data["description"].strip()
    assert data["evaluation_framework"] == EVALUATION_FRAMEWORK
    ids = [t["id"] for t in data["tasks"]]
    assert len(ids) == len(set(ids))
    for item in data["tasks"]:
        assert set(item) <= HUB_EVAL_TASK_FIELDS and isinstance(item["id"], str)
        assert (item["config"], item["split"]) == (ontology.DEFAULT_CONFIG, "test")
        assert release.split_files(small_release, item["config"], item["split"])
    tasks = load_tasks()
    assert ids == [key for t in tasks for key in t.headline_keys()]  # every headline of every task, in order
    assert {i.split("/")[0] for i in ids} == {t.name for t in tasks if t.headline}
    assert set(ids) <= {key for t in tasks for key in t.metric_keys()}  # ids are keys the metric returns


def test_card_evaluate_a_model_section_is_rendered_from_tasks_yaml(small_release):
    from biodivergence_dataset.benchmark import lm_eval_task
    from biodivergence_dataset.tasks import load_tasks

    text = (small_release / "README.md").read_text()
    assert "## Evaluate a model" in text
    section = text[text.index("## Evaluate a model"):text.index("## Conflict taxonomy")]
    ids = [t["id"] for t in yaml.safe_load((small_release / "eval.yaml").read_text())["tasks"]]
    meta = CardMeta()
    for task_id in ids:
        assert f"| `{task_id}` |" in section
    for t in load_tasks():
        assert t.title in section
    command = _card_block(text, "## Evaluate a model", "bash")
    assert "lm_eval --model hf" in command and "--include_path metrics/lm_eval" in command
    assert f'--metadata \'{{"dataset_path": "{meta.repo_id}", "revision": "v{meta.version}"}}\'' in command
    assert f"`{lm_eval_task(load_tasks()[0].name)}`" in section
    code = _card_block(section, "```python", "python")
    assert f'evaluate.load("{meta.metric_id}", revision="{meta.metric_revision}")' in code
    assert "`ORG/biodivergence`" in section and "push-metric --space ORG/biodivergence --tag vX.Y" in section
    compile(code, "card", "exec")
    results = yaml.safe_load(_card_block(section, ".eval_results/", "yaml"))
    assert [r["dataset"]["task_id"] for r in results] == ids
    for r in results:  # the Hub's .eval_results entry: dataset.id + dataset.task_id + value
        assert r["dataset"]["id"] == meta.repo_id and isinstance(r["value"], float)


def test_lm_eval_names_match_the_task_group(small_release):
    from pathlib import Path

    from biodivergence_dataset import benchmark

    folder = Path(benchmark.__file__).resolve().parent.parent / benchmark.LM_EVAL_INCLUDE / benchmark.LM_EVAL_PREFIX
    groups = {}
    for path in folder.glob("_*.yaml"):
        data = yaml.safe_load(path.read_text())
        groups[data["group"]] = data["task"]
    for config in ontology.CONFIGS:
        assert list(benchmark.lm_eval_tasks(config).values()) == groups[benchmark.lm_eval_group(config)]


def test_validate_checks_eval_yaml(small_release, tmp_path):
    bad = shutil.copytree(small_release, tmp_path / "noeval")
    (bad / "eval.yaml").unlink()
    assert any("eval.yaml: missing" in p for p in validate_release(bad).problems)
    data = yaml.safe_load((small_release / "eval.yaml").read_text())
    data["tasks"] = data["tasks"] + data["tasks"][:1]  # a leaderboard listed twice
    write_text_atomic(bad / "eval.yaml", yaml.safe_dump(data))
    assert any("do not match the leaderboards of tasks.yaml" in p for p in validate_release(bad).problems)
    data = yaml.safe_load((small_release / "eval.yaml").read_text())
    data["tasks"][0]["split"] = "holdout"
    write_text_atomic(bad / "eval.yaml", yaml.safe_dump(data))
    assert validate_release(bad).problems == [
        f"{bad / 'eval.yaml'}: tasks are scored on primary/holdout, which the release does not hold"]
    assert main(["card", "--release", str(bad)]) == 0  # re-rendering restores it
    assert validate_release(bad).ok


# --- minimum support: a key metric resting on a handful of test examples is warned about and not ranked ---

#: The small release's test split: two contextual rows with axes, confounder and spans, one no_conflict row; so
#: each key metric's support (macro_f1 rests on its rarest evaluable class: the one no_conflict row).
SMALL_SUPPORT = {"conflict_type/macro_f1": 1, "conflict_type/ctx_f1": 2, "axes/micro_f1": 2, "confounder/accuracy": 2}


def test_metrics_below_the_minimum_support_are_warned_about_and_left_off_the_leaderboard(tmp_path, capsys):
    from biodivergence_dataset.benchmark import key_metrics, leaderboards

    assert [k.id for k in key_metrics()] == list(SMALL_SUPPORT)
    rel = write_small_release(tmp_path / "rel", min_support=2)
    ranked = [b.id for b in leaderboards() if SMALL_SUPPORT[b.id] >= 2]
    assert ranked, "tasks.yaml ranks no key metric with support 2: the leaderboard below is not exercised"
    assert [t["id"] for t in yaml.safe_load((rel / "eval.yaml").read_text())["tasks"]] == ranked
    report = validate_release(rel, min_support=2)
    assert report.ok, report.problems
    kind = "headline" if "conflict_type/macro_f1" in [b.id for b in leaderboards()] else "key metric"
    assert report.warnings == [(
        f"primary/test: {kind} conflict_type/macro_f1 rests on 1 test example(s) (rows of the rarest of "
        "no_conflict, contextual_contradiction), fewer than 2: its score is noise"
        + ("; the card leaves it off the leaderboard" if kind == "headline" else ""))]
    section = (rel / "README.md").read_text().split("## Evaluate a model")[1].split("\n## ")[0]
    assert "| `conflict_type/macro_f1` | 1 Conflict-type classification | macro_f1 | 1 |" in section
    for key in SMALL_SUPPORT:  # every key metric has a row, ranked or not
        assert f"| `{key}` |" in section
    ctx_row = next(line for line in section.splitlines() if line.startswith("| `conflict_type/ctx_f1`"))
    assert "| 2 | rows of contextual_contradiction |" in ctx_row
    assert ("| yes |" if "conflict_type/ctx_f1" in ranked else "| **no** (not a headline) |") in ctx_row
    results = yaml.safe_load(section.split("```yaml\n")[1].split("```")[0])
    assert [r["dataset"]["task_id"] for r in results] == ranked

    assert main(["validate", "--release", str(rel)]) == 0  # the default minimum (30): warnings, not failure
    out = capsys.readouterr().out
    assert [re.search(r" (\S+) rests on ", line).group(1) for line in out.splitlines()
            if line.startswith("warning:")] == list(SMALL_SUPPORT)
    assert main(["card", "--release", str(rel), "--min-support", "30"]) == 0
    assert not (rel / "eval.yaml").exists() and json.loads((rel / "card_meta.json").read_text())["min_support"] == 30
    assert "declares no leaderboard (no `eval.yaml`)" in (rel / "README.md").read_text()
    assert validate_release(rel).ok
    write_text_atomic(rel / "eval.yaml", yaml.safe_dump({"tasks": [{"id": "axes/micro_f1"}]}))
    assert [p for p in validate_release(rel).problems if "lists leaderboards although" in p]
    write_text_atomic(rel / "card_meta.json", "{")
    assert [p for p in validate_release(rel).problems if p.startswith(f"{rel / 'card_meta.json'}: not valid JSON")]


def test_support_rules_are_checked_against_the_task_and_the_ontology():
    from biodivergence_dataset.tasks import headline_metrics, load_tasks, support_rules

    raw = {"name": "t", "key_metrics": ["f1"], "headline": ["f1"], "target_fields": ["conflict_type"]}
    with pytest.raises(ValueError, match=r"unknown conflict_type labels \['nope'\]"):
        support_rules({**raw, "support": {"f1": {"field": "conflict_type", "labels": ["nope"]}}})
    with pytest.raises(ValueError, match="not one of its targets"):
        support_rules({**raw, "support": {"f1": {"field": "reconciliation"}}})
    with pytest.raises(ValueError, match="exactly the key metrics"):
        support_rules({**raw, "support": {}})
    with pytest.raises(ValueError, match=r"headline metrics \['kappa'\] are not among its key_metrics"):
        headline_metrics({**raw, "headline": ["f1", "kappa"]})
    macro = load_tasks()[0].support_rule("macro_f1")
    assert macro.labels == ontology.EVALUABLE_CLASSES
    rows = [{"conflict_type": ontology.CONTEXTUAL}] * 3 + [{"conflict_type": ontology.NO_CONFLICT}]
    assert macro.support(rows) == 1


def test_validate_warns_about_a_matched_test_identical_to_test(tmp_path):
    splits = make_splits()
    matched = ontology.EXTRA_TEST_SPLITS[0]
    release.write_config(tmp_path, "primary", {**splits, matched: splits["test"]})
    release.write_config(tmp_path, "pairlevel", splits)
    from biodivergence_dataset.card import write_card

    write_card(tmp_path, CardMeta(min_support=1))
    report = validate_release(tmp_path)
    assert report.ok, report.problems
    assert f"primary/{matched}: holds exactly the rows of primary/test" in "\n".join(report.warnings)


@pytest.mark.parametrize("readme, problem", [
    ("---\n- a list\n- not a mapping\n---\n# card\n", "the YAML header is a list, not a mapping"),
    ("---\nconfigs: [unclosed\n---\n# card\n", "the YAML header does not parse"),
    ("---\nconfigs: primary\n---\n# card\n", "configs: is not a list of mappings with config_name"),
    (None, "not a regular file"),
    (b"---\npretty_name: caf\xe9\n---\n", "not UTF-8 text"),
])
def test_validate_reports_a_broken_card_header_instead_of_crashing_or_hanging(tmp_path, capsys, readme, problem):
    """A header that is a list, does not parse or holds configs of the wrong shape, a README that is a named pipe
    (reading it would block for good) or not UTF-8: validate and push --dry-run name the problem and exit 1."""
    import os

    root = write_small_release(tmp_path / "release")
    card = root / "README.md"
    card.unlink()
    if readme is None:
        os.mkfifo(card)
    elif isinstance(readme, bytes):
        card.write_bytes(readme)
    else:
        card.write_text(readme, encoding="utf-8")
    assert any(problem in p for p in validate_release(root).problems)
    assert main(["validate", "--release", str(root)]) == 1
    assert main(["push", "--release", str(root), "--repo", "org/biodivergence", "--tag", "v1.0", "--dry-run"]) == 1
    assert problem in capsys.readouterr().out
