"""The baseline suite: which systems run, scoring each with the metric, and the results files.

Each system is fitted on the train split and predicts the evaluated split (default ``test``);
its predictions are written to ``predictions/<slug>.jsonl`` (metric input format, keyed by
``pair_id``) and scored by the metric's plain scorer on the tasks it covers. ``results.json``
holds one entry per system with every scalar score; ``results.md`` renders the paper's tables
(Task 1 as Table 4, Tasks 2–3 as Table 5, Task 4 as Table 7, Task 5 as Table 8).

``results.json`` is rewritten as each system finishes (``"complete": false`` until the last one), so an
interrupted run keeps the finished systems; re-running the same command on the same folder re-scores
nothing it already has (a system is kept when the run's inputs match and its predictions file is there).
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from biodivergence_dataset import ontology
from biodivergence_dataset.io import write_json_atomic, write_text_atomic
from biodivergence_dataset.tasks import task
from biodivergence_dataset.templating import reconciliation_templating

from ..metric import score
from ..predict import read_jsonl, reference_record, write_jsonl
from . import frequency, lexical, reconciliation, spans, transfer
from .baseline_system import Record, Row, System

log = logging.getLogger(__name__)

RESULTS_JSON = "results.json"
RESULTS_MD = "results.md"
PREDICTIONS_DIR = "predictions"
DEFAULT_SEED = 42

#: (title, task, [(column header, metric key)]) — the paper's table columns.
TABLES: tuple[tuple[str, str, tuple[tuple[str, str], ...]], ...] = (
    ("Task 1 — conflict type (paper Table 4)", "conflict_type", (
        ("Acc.", "conflict_type/accuracy"), ("Macro-F1", "conflict_type/macro_f1"),
        ("W-F1", "conflict_type/weighted_f1"), ("κ", "conflict_type/kappa"), ("Ctx F1", "conflict_type/ctx_f1"),
    )),
    ("Task 2 — divergence axes (paper Table 5)", "axes", (
        ("Micro-F1", "axes/micro_f1"), ("Macro-F1", "axes/macro_f1"), ("Prec.", "axes/micro_precision"),
        ("Recall", "axes/micro_recall"), ("Exact", "axes/exact_match"), ("Primary-9 Micro-F1", "axes_primary/micro_f1"),
    )),
    ("Task 3 — dominant confounder (paper Table 5)", "confounder", (
        ("Acc.", "confounder/accuracy"), ("n", "confounder/n"),
    )),
    ("Task 4 — reconciliation (paper Table 7)", "reconciliation", (
        ("BLEU", "reconciliation/bleu"), ("ROUGE-L", "reconciliation/rouge_l"), ("SemSim", "reconciliation/semsim"),
        ("Slot overlap", "reconciliation/slot_overlap"),
    )),
    ("Task 5 — claim-level evidence spans (paper Table 8)", "spans", (
        ("IoU", "spans/iou"), ("Prec.", "spans/precision"), ("Recall", "spans/recall"), ("F1", "spans/f1"),
    )),
)

#: task -> the record fields it scores (from the task declarations).
_TASK_FIELDS: dict[str, tuple[str, ...]] = {t: task(t).target_fields for _, t, _ in TABLES}
_HEADLINE = {key for _, _, columns in TABLES for _, key in columns}


@dataclass
class SuiteOptions:
    """What to run beyond the always-available baselines."""

    seed: int = DEFAULT_SEED
    nli_models: list[str] = field(default_factory=list)
    llm_specs: list[str] = field(default_factory=list)
    llm_limit: int | None = None
    llm_max_abstract_chars: int | None = None
    dense_model: str | None = None
    skip: list[str] = field(default_factory=list)
    extra: dict[str, str] = field(default_factory=dict)  # results-table name -> predictions JSONL


def standard_systems(seed: int = DEFAULT_SEED, dense_model: str | None = None) -> list[System]:
    """Every baseline of paper Table 31 that needs no external model or server."""
    return [
        System("majority", "Majority class", "floor", ("conflict_type",), frequency.majority),
        System("stratified-random", "Stratified random", "floor", ("conflict_type",), frequency.stratified_random(seed)),
        System("most-frequent-axes", "Most-frequent axes / frequency confounder", "floor", ("axes", "confounder"),
               frequency.most_frequent_axes),
        System("lexical-gbt", "Lexical / slot-mismatch gradient boosting", "lexical", ("conflict_type",),
               lexical.gradient_boosting(seed)),
        System("per-axis-pipeline", "Independent per-axis classifiers → pipeline confounder", "lexical",
               ("axes", "confounder"), lexical.per_axis_pipeline(seed)),
        System("constant-template", "Constant template (most frequent training reconciliation; floor)", "floor",
               ("reconciliation",), reconciliation.constant_template),
        System("extractive-reconciliation", "Extractive reconciliation", "reconciliation", ("reconciliation",),
               reconciliation.extractive),
        System("template-predicted", "Template reconciliation (predicted fields)", "reconciliation", ("reconciliation",),
               reconciliation.template_from("lexical-gbt", "per-axis-pipeline"), needs=("lexical-gbt", "per-axis-pipeline")),
        System("template-gold", "Template reconciliation (gold fields; construction check)", "reconciliation",
               ("reconciliation",), reconciliation.template_from_gold),
        System("span-heuristic", "Lexical span heuristic", "spans", ("spans",), spans.heuristic),
        System("bm25-spans", "BM25 clause retrieval", "spans", ("spans",), spans.bm25),
        System("dense-spans", "Dense retrieval (MiniLM)", "spans", ("spans",), spans.dense(dense_model)),
    ]


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in text.lower()).strip("-")


def optional_systems(options: SuiteOptions) -> list[System]:
    """NLI transfer and zero-shot LLM rows, one per model/server the user named."""
    systems = [
        System(f"nli-{_slug(Path(path).name)}", f"NLI transfer ({Path(path).name})", "transfer", ("conflict_type",),
               transfer.nli_transfer(path))
        for path in options.nli_models
    ]
    for spec in options.llm_specs:
        llm = transfer.ZeroShotLLM(spec, max_abstract_chars=options.llm_max_abstract_chars)
        systems.append(System(f"llm-{_slug(llm.backend.model)}", f"Zero-shot {llm.backend.model}", "llm",
                              tuple(_TASK_FIELDS), llm))
    return systems


def _restrict(record: Record, tasks: Sequence[str]) -> Record:
    return {f: record[f] for t in tasks for f in _TASK_FIELDS[t]}


class CachedEncoder:
    """The metric's SemSim model with embeddings memoised by text, so the references are encoded
    once for all reconciliation systems (same model, same ``encode`` arguments, same numbers)."""

    def __init__(self, model: Any = None):
        self._model = model
        self._cache: dict[str, np.ndarray] = {}

    def encode(self, texts: Sequence[str], **kwargs: Any) -> np.ndarray:
        if self._model is None:
            from ..metric import scoring_module

            self._model = scoring_module().load_semsim_model()
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            self._cache.update(zip(missing, self._model.encode(missing, **kwargs)))
        return np.stack([self._cache[t] for t in texts])


def score_system(predictions: list[Record], references: list[Record], tasks: Sequence[str],
                 semsim_model: Any = None) -> dict[str, float | None]:
    """Scalar metric scores of one system on the tasks it covers (references keep every field: the
    reconciliation's slot overlap reads the gold conflict type, axes and confounder), None where the
    metric says undefined. ``semsim_model`` defaults to the metric's own."""
    kwargs = {} if semsim_model is None else {"semsim_model": semsim_model}
    scores = score([_restrict(p, tasks) for p in predictions], references, **kwargs)
    return {k: None if v is None else float(v) for k, v in scores.items()
            if v is None or isinstance(v, (int, float)) and not isinstance(v, bool)}


def _tasks_in(records: list[Record]) -> tuple[str, ...]:
    return tuple(t for t, fields in _TASK_FIELDS.items() if all(f in records[0] for f in fields))


def load_extra(path: str | Path, rows: Sequence[Row]) -> list[Record]:
    """Predictions from a JSONL file (e.g. ``biodivergence predict``), ordered like ``rows`` by ``pair_id``."""
    by_id = {r["pair_id"]: r for r in read_jsonl(path)}
    missing = [r["pair_id"] for r in rows if r["pair_id"] not in by_id]
    if missing:
        raise ValueError(f"{path} has no prediction for {len(missing)} example(s), e.g. pair_id {missing[0]}")
    return [by_id[r["pair_id"]] for r in rows]


def chosen_systems(options: SuiteOptions) -> list[System]:
    """The systems to run: every available one but those ``options.skip`` names (an unknown name is an error)."""
    available = standard_systems(options.seed, options.dense_model) + optional_systems(options)
    unknown = sorted(set(options.skip) - {s.slug for s in available})
    if unknown:
        raise ValueError(f"--skip: unknown baseline(s) {unknown}; the suite has {[s.slug for s in available]}")
    return [s for s in available if s.slug not in options.skip]


def _inputs(meta: dict[str, Any], n: int, options: SuiteOptions) -> dict[str, Any]:
    """What a system's result depends on besides its code: a finished system is reused only when these match."""
    return {**{k: v for k, v in meta.items() if k != "command"}, "n": n, "seed": options.seed,
            "llm_limit": options.llm_limit, "llm_max_abstract_chars": options.llm_max_abstract_chars,
            "dense_model": options.dense_model}


def finished_systems(out_dir: Path, inputs: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """slug -> entry of the systems an earlier run of the same inputs finished (its predictions file still there)."""
    path = out_dir / RESULTS_JSON
    if not path.is_file():
        return {}
    try:
        earlier = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return {}
    if earlier.get("inputs") != inputs:
        return {}
    return {e["slug"]: e for e in earlier.get("systems", [])
            if e.get("family") != "external" and (out_dir / e["predictions"]).is_file()}


def _reload(out_dir: Path, entry: dict[str, Any], rows: Sequence[Row]) -> list[Record]:
    """A finished system's predictions, in ``rows`` order, without ``pair_id`` (as its predict returned them)."""
    by_id = {r.pop("pair_id"): r for r in read_jsonl(out_dir / entry["predictions"])}
    return [by_id[r["pair_id"]] for r in rows if r["pair_id"] in by_id]


def run_suite(train: Sequence[Row], rows: Sequence[Row], out_dir: str | Path, options: SuiteOptions | None = None,
              meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run, save and score every system; write ``results.json`` (after each system) and ``results.md``; return
    the results. Systems an interrupted run of the same inputs finished are reused, not run again."""
    from tqdm.auto import tqdm

    options = options or SuiteOptions()
    out_dir = Path(out_dir)
    references = [reference_record(r) for r in rows]
    systems = chosen_systems(options)
    results = {**(meta or {}), "n": len(rows), "inputs": _inputs(meta or {}, len(rows), options),
               "complete": False, "systems": []}
    finished = finished_systems(out_dir, results["inputs"])
    outputs: dict[str, list[Record]] = {}
    encoder = CachedEncoder()
    progress = tqdm(systems, desc="baselines", unit="system")
    for system in progress:
        progress.set_description(f"baselines: {system.slug}")
        if system.slug in finished:
            outputs[system.slug] = _reload(out_dir, finished[system.slug], rows)
            results["systems"].append(finished[system.slug])
            log.info("%s: kept from the earlier run", system.slug)
            continue
        skipped = [n for n in system.needs if n not in outputs]
        if skipped:
            log.warning("skipping %s: it needs %s", system.slug, skipped)
            continue
        limit = options.llm_limit if system.family == "llm" and options.llm_limit else len(rows)
        started = time.perf_counter()
        predictions = system.predict(train, rows[:limit], outputs)
        elapsed = time.perf_counter() - started
        outputs[system.slug] = predictions
        records = [{"pair_id": r["pair_id"], **_restrict(p, system.tasks)} for r, p in zip(rows, predictions)]
        path = write_jsonl(out_dir / PREDICTIONS_DIR / f"{system.slug}.jsonl", records)
        entry = _entry(system.slug, system.name, system.family, system.tasks, predictions, references[:limit], path,
                       out_dir, encoder)
        entry["seconds"] = round(elapsed, 2)
        if isinstance(system.predict, transfer.ZeroShotLLM):
            entry["failed_answers"] = system.predict.failures
        results["systems"].append(entry)
        write_json_atomic(out_dir / RESULTS_JSON, results)  # an interrupted run keeps what is finished
        log.info("%s: %s", system.slug,
                 {k: v if v is None else round(v, 4) for k, v in entry["scores"].items() if k in _HEADLINE})
    progress.close()
    for name, path in options.extra.items():
        predictions = load_extra(path, rows)
        tasks = _tasks_in(predictions)
        results["systems"].append(_entry(_slug(name), name, "external", tasks, predictions, references, Path(path),
                                         out_dir, encoder))
    results["reference_reconciliations"] = reconciliation_templating(r.get("reconciliation") for r in rows)
    results["complete"] = True
    write_json_atomic(out_dir / RESULTS_JSON, results)
    write_text_atomic(out_dir / RESULTS_MD, render_markdown(results))
    return results


def _entry(slug: str, name: str, family: str, tasks: Sequence[str], predictions: list[Record],
           references: list[Record], path: Path, out_dir: Path, encoder: CachedEncoder) -> dict[str, Any]:
    relative = path.relative_to(out_dir) if path.is_relative_to(out_dir) else path
    return {"system": name, "slug": slug, "family": family, "tasks": list(tasks), "n": len(predictions),
            "predictions": str(relative), "scores": score_system(predictions, references, tasks, encoder)}


def _cell(scores: dict[str, float | None], key: str) -> str:
    """A score; "—" when not scored, "n/a" when the metric says undefined."""
    if key not in scores:
        return "—"
    value = scores[key]
    if value is None:
        return "n/a"
    if key.endswith("/n"):
        return str(int(value))
    return "nan" if math.isnan(value) else f"{value:.4f}"


def _reconciliation_floor(results: dict[str, Any], systems: list[dict[str, Any]]) -> list[str]:
    """What the constant-template floor says about the generative scores, and whether the references are templated."""
    floor = next((s for s in systems if s["slug"] == "constant-template"), None)
    lines = []
    if floor:
        scores = ", ".join(f"{h} {_cell(floor['scores'], k)}" for h, k in (
            ("ROUGE-L", "reconciliation/rouge_l"), ("BLEU", "reconciliation/bleu"), ("SemSim", "reconciliation/semsim")))
        lines.append(f"Floor: the constant template (one training text for every row, reading nothing of the pair) "
                     f"scores {scores}; a reconciliation system is worth its margin over these numbers.")
    seen = results.get("reference_reconciliations") or {}
    if seen.get("templated"):
        lines.append(f"The evaluated references hold {seen['distinct']} distinct reconciliations over {seen['rows']} "
                     "rows: they are templated (rule annotators), so ROUGE-L, BLEU and SemSim mostly measure "
                     "matching the template.")
    return lines + [""] if lines else []


def render_markdown(results: dict[str, Any]) -> str:
    """The paper-style tables of a results dict."""
    lines = ["# BioDivergence baselines", ""]
    described = {k: results[k] for k in ("command", "release", "config", "split", "train_size") if k in results}
    lines += [f"- {k}: {v}" for k, v in described.items()] + [f"- evaluated examples: {results['n']}", ""]
    for title, task_name, columns in TABLES:
        systems = [s for s in results["systems"] if task_name in s["tasks"]]
        if not systems:
            continue
        lines += [f"## {title}", "", "| System | n | " + " | ".join(h for h, _ in columns) + " |",
                  "|---|---|" + "---|" * len(columns)]
        for s in systems:
            cells = [_cell(s["scores"], key) for _, key in columns]
            lines.append(f"| {s['system']} | {s['n']} | " + " | ".join(cells) + " |")
        lines.append("")
        if task_name == "reconciliation":
            lines += _reconciliation_floor(results, systems)
    lines.append(f"Labels: {', '.join(ontology.EVALUABLE_CLASSES)} are the evaluable classes of v1.0; "
                 "Ctx F1 is the F1 of contextual_contradiction.")
    return "\n".join(lines) + "\n"
