"""benchmarks/scale.py --resume with every size done redraws the results it reads, as they were written before
``results_files`` named the machine (``cpus`` and a hand-written ``state``) and before the build grew stages: the
committed ``benchmarks/results/scale*.json`` are such files. Nothing is re-measured; what the old record never
measured reads "not recorded"."""

from __future__ import annotations

import importlib.util
import json

from repo_paths import REPO

from biodivergence_dataset import io
from biodivergence_dataset.records import Abstract

#: The stages a build ran when the committed scale results were measured (before gather, questions, evidence_map
#: and goldcheck).
OLD_STAGES = ("ingest", "claims", "mine", "annotate", "split", "audit", "release")
#: A machine record as scale.py wrote it before results_files (the committed scale.json's).
OLD_MACHINE = {"python": "3.11.7", "cpus": 2, "load_average_1min_at_end": 1.12,
               "state": "loaded: other engineers' builds and tests ran alongside"}


def _module(monkeypatch, tmp_path):
    """The script as a module writing its results under ``tmp_path``, its shared corpus one abstract (the count is
    all a redraw reads of it)."""
    monkeypatch.syspath_prepend(str(REPO / "benchmarks"))
    spec = importlib.util.spec_from_file_location("scale", REPO / "benchmarks" / "scale.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    corpus = tmp_path / "abstracts"
    io.write_records(corpus, [Abstract(article_uid="pmid:1", pmid="1", text="Aspirin lowered pain.")])
    monkeypatch.setattr(module, "RESULTS", tmp_path / "results")
    monkeypatch.setattr(module.claims_bench, "shared_corpus", lambda: corpus)
    return module


def _results(machine: dict, stages: tuple[str, ...], sizes: tuple[int, ...]) -> dict:
    """A results file of the float32 run at ``sizes``, each timing ``stages``, with the ``machine`` record."""
    runs = {str(n): {name: {"seconds": n / 1000 + i, "peak_rss_mib": 100.0} for i, name in enumerate(stages)}
            for n in sizes}
    embedding = {str(n): {"texts": 2 * n, "unique_texts": n, "from_cache": 0, "embedded": n,
                          "mine_seconds": {"embed": 1.0, "search_and_score": 2.0, "slot_similarity": 3.0}}
                 for n in sizes}
    return {"machine": machine, "embedding_precision": "float32", "base_abstracts": 4591, "sizes": list(sizes),
            "runs": runs, "mine_embedding": embedding}


def _write(module, results: dict) -> None:
    path = module.results_stem("float32").with_suffix(".json")
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(results), encoding="utf-8")


def test_resume_reads_an_old_machine_record_and_says_what_it_did_not_record(tmp_path, monkeypatch):
    scale = _module(monkeypatch, tmp_path)
    _write(scale, _results(OLD_MACHINE, OLD_STAGES, (5000, 20000)))

    result = scale.main([5000, 20000], "float32", resume=True)

    assert result["machine"] == {
        "python": "3.11.7", "machine": "2 cores, architecture not recorded", "machine_state": "not recorded",
        "load_average_1min_at_start": "not recorded", "load_average_1min_at_end": 1.12,
        "state_noted": "loaded: other engineers' builds and tests ran alongside"}
    markdown = scale.results_stem("float32").with_suffix(".md").read_text(encoding="utf-8")
    assert "machine state at the start: not recorded" in markdown and "idle" not in markdown
    assert "noted by hand: loaded: other engineers' builds and tests ran alongside" in markdown
    # the file it wrote back is in today's fields and redraws to the same record
    assert scale.main([5000, 20000], "float32", resume=True)["machine"] == result["machine"]


def test_resume_summarises_the_stages_the_results_measured(tmp_path, monkeypatch):
    scale = _module(monkeypatch, tmp_path)
    machine = {"python": "3.11.7", "machine": "x86_64, 2 cores", "machine_state": "idle",
               "load_average_1min_at_start": 0.2, "load_average_1min_at_end": 0.4}
    _write(scale, _results(machine, OLD_STAGES, (5000, 20000)))

    result = scale.main([5000, 20000], "float32", resume=True)

    assert list(result["growth"]) == list(OLD_STAGES)
    assert result["machine"] == machine
    table = scale.results_stem("float32").with_suffix(".md").read_text(encoding="utf-8")
    assert "| release | 11.0 / 100.0 | 26.0 / 100.0 |" in table


def test_the_stages_fitted_are_those_every_size_measured(tmp_path, monkeypatch):
    scale = _module(monkeypatch, tmp_path)
    runs = {"5000": {"ingest": {}, "claims": {}}, "80000": {"ingest": {}, "gather": {}, "claims": {}}}
    assert scale.timed_stages(runs, [5000, 80000]) == ["ingest", "claims"]
