"""``biodivergence evaluate``: score a predictions JSONL against a release split.

Prediction rows carry ``pair_id`` plus any task fields (``conflict_type``, ``divergence_axes``,
``dominant_confounder``, ``reconciliation``, ``evidence_spans``). They are matched to the
release's references by ``pair_id``; references without a prediction and predictions without
a reference are reported (missing predictions stop the command unless ``--allow-missing``, and
then the report says how many were missing), and the matched pairs are scored with the BioDivergence metric,
loaded through ``evaluate.load`` (``trainer.metric.load_metric``) exactly as users load it: macro-F1 over the
classes of the config's train split (as the card's leaderboard defines it), and Tasks 1-3 per clinical question
(the references carry the release's ``question_id``).
"""

from __future__ import annotations

import argparse
import json
import math
import re
from pathlib import Path
from typing import Any

from biodivergence_dataset import benchmark, ontology
from biodivergence_dataset.arguments import add_release_argument
from biodivergence_dataset.io import write_json_atomic
from biodivergence_dataset.tasks import load_tasks

from .metric import ENV_VAR, load_metric, versions

#: The reference field that groups rows by clinical question (the metric reports Tasks 1-3 per question).
QUESTION = "question_id"
#: (column, key) of the printed per-question table.
QUESTION_COLUMNS = (("n", "conflict_type/n"), ("accuracy", "conflict_type/accuracy"),
                    ("Ctx-F1", "conflict_type/ctx_f1"), ("axes micro-F1", "axes/micro_f1"),
                    ("confounder acc.", "confounder/accuracy"), ("confounder n", "confounder/n"))
#: How many unmatched ids the printed report lists (the JSON lists all of them).
SHOWN_IDS = 5


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--predictions", required=True, type=Path,
                        help="JSONL file: one object per pair with pair_id and task fields")
    add_release_argument(parser)
    parser.add_argument("--config", default=ontology.DEFAULT_CONFIG, choices=ontology.CONFIGS)
    parser.add_argument("--split", default="test")
    parser.add_argument("--out", type=Path, help="JSON report (default: PREDICTIONS with suffix .metrics.json)")
    parser.add_argument("--metric", type=Path,
                        help=f"metric folder (default: ${ENV_VAR}, else the installed metric)")
    parser.add_argument("--bootstrap", type=int, default=1000, metavar="N",
                        help="bootstrap resamples for 95%% intervals (0: none; as in `train`)")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    parser.add_argument("--semsim-model",
                        help="sentence-transformers name or path for SemSim (default: the metric's all-MiniLM-L6-v2)")
    parser.add_argument("--allow-missing", action="store_true",
                        help="score the covered pairs when some references have no prediction (default: an error)")
    parser.add_argument("--no-semsim", action="store_true",
                        help="skip SemSim (no sentence-transformers model is loaded)")


def task_fields() -> list[str]:
    """The record fields the metric scores, from the task declaration."""
    return [f for spec in load_tasks() for f in spec.target_fields]


def read_predictions(path: Path) -> tuple[dict[str, dict[str, Any]], dict[str, int]]:
    """``{pair_id: task fields}`` and ``{pair_id: line number}`` from a JSONL file; ValueError naming a bad line."""
    fields = task_fields()
    out: dict[str, dict[str, Any]] = {}
    lines: dict[str, int] = {}
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{number}: not JSON ({exc.msg})") from None
            pair_id = row.get("pair_id") if isinstance(row, dict) else None
            if not isinstance(pair_id, str) or not pair_id:
                raise ValueError(f"{path}:{number}: a prediction row needs a string pair_id")
            if pair_id in out:
                raise ValueError(f"{path}:{number}: duplicate pair_id {pair_id!r}")
            out[pair_id] = {f: row[f] for f in fields if f in row}
            lines[pair_id] = number
    return out, lines


def read_references(release: Path, config: str, split: str) -> dict[str, dict[str, Any]]:
    """``{pair_id: task fields and question_id}`` of one release split, labels as names, no confounder as ""."""
    from biodivergence_dataset.release import config_names, iter_rows, split_names

    if config not in config_names(release):
        raise ValueError(f"{release} has no config {config!r}; it holds {config_names(release)}")
    if split not in split_names(release, config):
        raise ValueError(f"{release} has no split {split!r} in {config}; choose one of {split_names(release, config)}")
    fields = task_fields()
    out: dict[str, dict[str, Any]] = {}
    for _, row in iter_rows(release, config, split):
        record = {f: row[f] for f in fields}
        record["dominant_confounder"] = record["dominant_confounder"] or ""
        record[QUESTION] = row.get(QUESTION) or ""
        out[row["pair_id"]] = record
    if not out:
        raise ValueError(f"no rows for config {config!r}, split {split!r} in {release}")
    return out


def match(predictions: dict[str, Any], references: dict[str, Any]) -> tuple[list[str], list[str], list[str]]:
    """Matched ids (reference order), references without a prediction, predictions without a reference."""
    matched = [i for i in references if i in predictions]
    missing = [i for i in references if i not in predictions]
    extra = [i for i in predictions if i not in references]
    return matched, missing, extra


# --- the printed report ----------------------------------------------------------------------------


def _fmt(value: Any) -> str:
    """A table cell: scores to 4 decimals, "n/a" for a score the metric reports as undefined (None)."""
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return "n/a" if math.isnan(value) else f"{value:.4f}"
    return str(value)


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    cells = [header] + [[_fmt(v) for v in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    return ["  " + "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))
            for row in cells]


def _group(scores: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Scores by key prefix: scalars, intervals, per-label values, the labels each macro average is over
    and the confusion matrix (``notes`` are not grouped)."""
    groups: dict[str, dict[str, Any]] = {}
    for key, value in scores.items():
        if key in ("notes", "per_question"):
            continue
        prefix, metric, *rest = key.split("/")
        group = groups.setdefault(prefix, {"scalars": {}, "intervals": {}, "labels": {}, "over": {}, "matrix": None})
        if rest and rest[0] == "over":
            group["over"][metric] = value
        elif isinstance(value, list):
            group["matrix"] = value
        elif rest and rest[0] in ("ci_low", "ci_high"):
            group["intervals"].setdefault(metric, {})[rest[0]] = value
        elif rest:
            group["labels"].setdefault(rest[0], {})[metric] = value
        else:
            group["scalars"][metric] = value
    return groups


def _label_cell(values: dict[str, Any], metric: str) -> Any:
    """A per-label value; an undefined score shows the label's support: "n/a (n=0)"."""
    value = values.get(metric, "")
    return f"n/a (n={values['support']})" if value is None and "support" in values else value


def format_report(scores: dict[str, Any]) -> str:
    """One table per task (and one for the primary-axis view), then the metric's notes."""
    titles = {spec.name: f"Task {spec.number}: {spec.title}" for spec in load_tasks()}
    titles["axes_primary"] = f"{titles['axes']} (9 primary axes)"
    lines: list[str] = []
    for prefix, group in _group(scores).items():
        lines += ["", f"{titles.get(prefix, prefix)}  [{prefix}]"]
        with_ci = bool(group["intervals"])
        header = ["metric", "value"] + (["95% CI"] if with_ci else [])
        rows = []
        for metric, value in group["scalars"].items():
            ci = group["intervals"].get(metric)
            interval = f"[{_fmt(ci['ci_low'])}, {_fmt(ci['ci_high'])}]" if ci else ""
            rows.append([metric, value] + ([interval] if with_ci else []))
        lines += _table(header, rows)
        lines += [f"  {metric} over {len(names)} label(s): {', '.join(names) or 'none'}"
                  for metric, names in group["over"].items()]
        if group["labels"]:
            metrics = list(dict.fromkeys(m for values in group["labels"].values() for m in values))
            lines += [""] + _table(["label"] + metrics, [[label] + [_label_cell(v, m) for m in metrics]
                                                         for label, v in group["labels"].items()])
        if group["matrix"] is not None:
            names = list(group["labels"])
            lines += ["", "  confusion matrix (rows: reference, columns: prediction)"]
            lines += _table(["reference"] + [f"#{i}" for i in range(len(names))],
                            [[f"#{i} {name}"] + row for i, (name, row) in enumerate(zip(names, group["matrix"]))])
    if scores.get("per_question"):
        lines += ["", "Per clinical question (Tasks 1-3; rows without a question are in the pooled figures only)"]
        lines += _table(["question", *(c for c, _ in QUESTION_COLUMNS)],
                        [[q, *(s.get(k) for _, k in QUESTION_COLUMNS)] for q, s in scores["per_question"].items()])
    if scores.get("notes"):
        lines += ["", "Notes:"] + [f"  - {note}" for note in scores["notes"]]
    return "\n".join(lines)


# --- the command -----------------------------------------------------------------------------------


def _report_unmatched(kind: str, ids: list[str]) -> str:
    shown = ", ".join(ids[:SHOWN_IDS]) + (", ..." if len(ids) > SHOWN_IDS else "")
    return f"{len(ids)} {kind}: {shown}"


_PREDICTION_INDEX = re.compile(r"^predictions\[(\d+)\]\.?")


def _on_line(exc: ValueError, path: Path, matched: list[str], lines: dict[str, int]) -> ValueError:
    """The metric's ``predictions[i]...`` error restated with the line of the predictions file."""
    m = _PREDICTION_INDEX.match(str(exc))
    if not m or int(m.group(1)) >= len(matched):
        return exc
    return ValueError(f"{path}:{lines[matched[int(m.group(1))]]}: {str(exc)[m.end():]}")


def run(args: argparse.Namespace) -> int:
    predictions, lines = read_predictions(args.predictions)
    from biodivergence_dataset.release import resolve_release

    release = resolve_release(args.release)
    references = read_references(release, args.config, args.split)
    matched, missing, extra = match(predictions, references)
    print(f"{len(matched)} of {len(references)} references of {args.config}/{args.split} have a prediction")
    if missing:
        print(_report_unmatched("references without a prediction (not scored)", missing))
    if extra:
        print(_report_unmatched("predictions whose pair_id is not in the split (ignored)", extra))
    if not matched:
        raise ValueError(f"no prediction in {args.predictions} matches a pair_id of {args.config}/{args.split}")
    if missing and not args.allow_missing:
        raise ValueError(f"{args.predictions}: {len(missing)} of {len(references)} references of {args.config}/"
                         f"{args.split} have no prediction (e.g. {', '.join(missing[:SHOWN_IDS])}); predict every "
                         f"pair, or pass --allow-missing to score the {len(matched)} covered ones")
    options: dict[str, Any] = {"bootstrap": args.bootstrap, "seed": args.seed,
                               "classes": benchmark.train_classes(release, args.config) or None}
    if args.no_semsim or args.semsim_model:
        options["semsim_model"] = None if args.no_semsim else args.semsim_model
    metric = load_metric(args.metric)
    try:
        scores = metric.compute(
            predictions=[predictions[i] for i in matched], references=[references[i] for i in matched], **options
        )
    except ValueError as exc:
        raise _on_line(exc, args.predictions, matched, lines) from None
    print(format_report(scores))
    if missing:
        print(f"\nscored {len(matched)} of {len(references)} references; {len(missing)} without a prediction "
              f"were left out (--allow-missing)")
    out = args.out or args.predictions.with_suffix(".metrics.json")
    report = {
        "predictions": str(args.predictions),
        "release": str(args.release),
        "config": args.config,
        "split": args.split,
        "n_references": len(references),
        "n_predictions": len(predictions),
        "n_scored": len(matched),
        "n_missing": len(missing),
        "missing_pair_ids": missing,
        "extra_pair_ids": extra,
        "bootstrap": args.bootstrap,
        "seed": args.seed,
        **versions(args.metric),  # which metric version produced these numbers
        "metrics": {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in scores.items()},
    }
    write_json_atomic(out, report)
    print(f"\nwrote {out}")
    return 0
