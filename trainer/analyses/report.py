"""The analysis report: renders the six result records as markdown tables and PNG figures.

``report.md`` reads top to bottom; ``figures.json`` holds every figure's title, axis labels and data;
``analysis.json`` holds every record; ``robustness.md`` is the short section a dataset card includes.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from biodivergence_dataset import ontology
from biodivergence_dataset.io import write_json_atomic, write_text_atomic
from biodivergence_dataset.release import ROBUSTNESS_FILE as ROBUSTNESS

from .annotators import AnnotatorAuditResult
from .confidence import ConfidenceSlicesResult
from .counterfactual import CounterfactualResult
from .edits import DIRECT
from .errors import NO_CONFOUNDER, ErrorAnalysisResult
from .leave_domain_out import LeaveOneDomainOutResult
from .perturbation import PerturbationResult
from .plots import Figure, bar_chart, heatmap

REPORT = "report.md"
FIGURES = "figures.json"
RECORDS = "analysis.json"
#: below this many pairs of a conflict class in the evaluated split, its scores are flagged as not readable
FEW = 10


@dataclass
class AnalysisResults:
    """Every record of one ``biodivergence analyze`` run, with what was analysed."""

    release: str
    config: str
    split: str
    class_counts: dict[str, int]
    predictor: str
    live_predictor: str
    perturbation: PerturbationResult
    counterfactual: CounterfactualResult
    domains: LeaveOneDomainOutResult | None
    confidence: ConfidenceSlicesResult
    annotators: AnnotatorAuditResult
    errors: ErrorAnalysisResult
    notes: list[str] = field(default_factory=list)


def score_text(value: float | None, digits: int = 3) -> str:
    """A score; "n/a" where the metric says undefined (None), never a made-up value."""
    return "n/a" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def _table(header: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _title(name: str) -> str:
    """Display title of a conflict type or axis name (the name itself otherwise)."""
    for kind in (ontology.conflict_type, ontology.axis, ontology.domain):
        try:
            return kind(name).title
        except KeyError:
            continue
    return name


def _image(fig: Figure) -> str:
    return f"![{fig.title}]({fig.file})"


def data_warnings(results: AnalysisResults) -> list[str]:
    """What the evaluated split's label counts allow one to read from the analyses."""
    counts = results.class_counts
    out = [f"The `{results.split}` split holds {counts.get(c, 0)} {_title(c).lower()} pairs: scores of that class "
           "(and Ctx-F1) rest on too few pairs to read." for c in (*ontology.EVALUABLE_CLASSES, DIRECT)
           if counts.get(c, 0) < FEW]
    if counts.get(ontology.CONTEXTUAL, 0) == 0:
        out.append("With no contextual contradiction to edit, the counterfactual analysis has nothing to measure.")
    return out


def render_perturbation(r: PerturbationResult, out: Path) -> tuple[str, list[Figure]]:
    rows = [[f"`{f.family}`", f.description, "yes" if f.label_preserving else "no", f.n, score_text(f.flip_rate),
             score_text(f.expected_rate), score_text(f.label_changed)] for f in r.families]
    fig = bar_chart(out, "perturbation", f"Perturbation robustness ({r.predictor})", "edit family", "share of edited pairs",
                    [f.family for f in r.families], {"prediction flips": [f.flip_rate for f in r.families],
                                                     "prediction = edit's label": [f.expected_rate for f in r.families]})
    text = (f"Predictor: {r.predictor}; {r.pairs} pairs sampled from the evaluated split. A *flip* is a changed "
            "conflict-type prediction; *edit's label* is the label the edit implies (unchanged for label-preserving "
            "families). A robust model flips rarely under label-preserving edits and follows label-changing ones.\n\n"
            + _table(["family", "edit", "label-preserving", "pairs", "flip rate", "= edit's label", "gold label changed"], rows)
            + "\n\n" + _image(fig))
    return text, [fig]


def render_counterfactual(r: CounterfactualResult, out: Path) -> tuple[str, list[Figure]]:
    head = (f"Predictor: {r.predictor}; {r.contextual_pairs} contextual contradictions edited. Identical contexts → "
            f"predicted direct: {score_text(r.identical_consistency)} of {r.identical_n}; a difference on a new axis → the axes "
            f"head includes it: {score_text(r.new_axis_consistency)} of {r.new_axis_n}.")
    if not r.per_axis:
        return head, []
    rows = [[_title(a.axis), a.identical_n, score_text(a.identical_consistency), a.new_axis_n, score_text(a.new_axis_consistency)] for a in r.per_axis]
    fig = bar_chart(out, "counterfactual", f"Counterfactual consistency per axis ({r.predictor})", "divergence axis",
                    "consistent share", [_title(a.axis) for a in r.per_axis],
                    {"identical context → direct": [a.identical_consistency for a in r.per_axis],
                     "new axis → axes head follows": [a.new_axis_consistency for a in r.per_axis]})
    table = _table(["axis", "made identical", "→ direct", "added as new", "→ axis predicted"], rows)
    return f"{head}\n\n{table}\n\n{_image(fig)}", [fig]


def render_domains(r: LeaveOneDomainOutResult | None, out: Path) -> tuple[str, list[Figure]]:
    if r is None:
        return "Not run (`--skip-domains`).", []
    header = ["held-out domain", "train rows", "test rows", "contextual in test"]
    header += [f"{s} {m}" for s in r.systems for m in ("macro-F1", "Ctx-F1")]
    rows = [[_title(f.domain), f.n_train, f.n_test, f.n_test_contextual]
            + [score_text(f.scores.get(s, {}).get(m)) for s in r.systems for m in ("macro_f1", "ctx_f1")] for f in r.folds]
    fig = bar_chart(out, "leave_one_domain_out", "Leave-one-domain-out conflict-type macro-F1", "held-out domain",
                    "macro-F1", [_title(f.domain) for f in r.folds],
                    {s: [f.scores.get(s, {}).get("macro_f1") for f in r.folds] for s in r.systems})
    schedule = f" Reference model schedule: {r.schedule}." if r.schedule else ""
    return (f"Each system is fitted on the train rows of four domains and scored on the fifth domain's evaluated rows."
            f"{schedule}\n\n{_table(header, rows)}\n\n{_image(fig)}"), [fig]


def render_confidence(r: ConfidenceSlicesResult, out: Path) -> tuple[str, list[Figure]]:
    rows = [[s.column, s.bin, s.n, score_text(s.accuracy), score_text(s.macro_f1), score_text(s.ctx_f1)] for s in r.slices]
    missing = ", ".join(f"{k}: {v}" for k, v in r.missing.items() if v)
    figs = []
    for column in dict.fromkeys(s.column for s in r.slices):
        mine = [s for s in r.slices if s.column == column]
        figs.append(bar_chart(out, f"slices_{column}", f"Conflict-type scores by {column} ({r.predictor})",
                              f"{column} bin (pairs in the bin)", "score", [f"{s.bin}\n(n = {s.n})" for s in mine],
                              {"accuracy": [s.accuracy for s in mine], "macro-F1": [s.macro_f1 for s in mine]}))
    text = (f"Predictor: {r.predictor}. `confidence` is the release label's annotation confidence, `label_quality` "
            f"the panel's consensus quality." + (f" Rows without a value: {missing}." if missing else "") + "\n\n"
            + _table(["column", "bin", "pairs", "accuracy", "macro-F1", "Ctx-F1"], rows) + "\n\n"
            + "\n".join(_image(f) for f in figs))
    return text, figs


def render_annotators(r: AnnotatorAuditResult, out: Path) -> tuple[str, list[Figure]]:
    parts = []
    if r.members:
        parts.append("Each member against the release label (build manifest):\n\n" + _table(
            ["member", "pairs", "agreement", "κ"],
            [[f"`{m}`", v.get("pairs"), score_text(v.get("agreement")), score_text(v.get("kappa"))] for m, v in r.members.items()]))
    if not r.pairs:
        parts.append(f"No two annotators labelled the same pairs ({r.labelled_rows} rows carry panel labels): there is "
                     "nothing to compare. A release annotated by a single annotator (or without `annotator_labels`) "
                     "cannot be audited this way.")
        return "\n\n".join(parts), []
    parts.append(_table(["annotator A", "annotator B", "pairs", "raw agreement", "κ", "axis-set Jaccard"],
                        [[f"`{p.a}`", f"`{p.b}`", p.n, score_text(p.raw_agreement), score_text(p.kappa),
                          score_text(p.axis_jaccard) if p.axis_jaccard is not None else "n/a (no member axes)"] for p in r.pairs]))
    classes = list(dict.fromkeys(c for p in r.pairs for c in p.per_class_kappa))
    parts.append("κ per class (one vs rest):\n\n" + _table(
        ["annotator pair", *(_title(c) for c in classes)],
        [[f"`{p.a}` / `{p.b}`", *(score_text(p.per_class_kappa.get(c)) for c in classes)] for p in r.pairs]))
    domains = list(dict.fromkeys(d for p in r.pairs for d in p.per_domain_kappa))
    parts.append("κ per domain:\n\n" + _table(
        ["annotator pair", *(_title(d) for d in domains)],
        [[f"`{p.a}` / `{p.b}`", *(score_text(p.per_domain_kappa.get(d)) for d in domains)] for p in r.pairs]))
    fig = heatmap(out, "annotator_kappa", "Pairwise Cohen's κ of annotators (conflict type)", "annotator", "annotator",
                  r.annotators, r.annotators, r.kappa_matrix, fmt="{:.2f}", vmin=-1, vmax=1)
    parts.append(_image(fig))
    return "\n\n".join(parts), [fig]


def render_errors(r: ErrorAnalysisResult, out: Path) -> tuple[str, list[Figure]]:
    shown = ["conflict_type/accuracy", "conflict_type/macro_f1", "conflict_type/kappa", "conflict_type/ctx_f1",
             "axes/micro_f1", "axes/macro_f1", "confounder/accuracy"]
    parts = [f"Predictor: {r.predictor}; {r.n} pairs, {r.errors} conflict-type errors.",
             _table(["metric", "score"], [[k, score_text(r.scores[k])] for k in shown if k in r.scores])]
    figs = []
    for c in r.confusions:
        names = [_title(x) if x != NO_CONFOUNDER else x for x in c.labels]
        task = "conflict type" if c.task == "conflict_type" else "dominant confounder"
        figs.append(heatmap(out, f"confusion_{c.task}", f"Confusion matrix: {task} ({r.predictor})",
                            "predicted", "gold", names, names, c.matrix))
        parts.append(_image(figs[-1]))
    if r.axes:
        parts.append("Divergence axes, one-vs-rest counts:\n\n" + _table(
            ["axis", "TP", "FP", "FN", "TN"], [[_title(a.axis), a.tp, a.fp, a.fn, a.tn] for a in r.axes]))
    if r.questions:
        parts.append(question_table(r.questions))
    order = "by the predictor's confidence" if r.ranked_by_confidence else "in release order (the predictions carry no confidence)"
    rows = [[i + 1, f"`{e.pair_id}`", _title(e.domain), _title(e.gold), _title(e.predicted), score_text(e.confidence, 2),
             _cell(e.claim_a), _cell(e.claim_b)] for i, e in enumerate(r.top_errors)]
    if rows:
        parts.append(f"The {len(r.top_errors)} most confident conflict-type errors ({order}):\n\n"
                     + _table(["#", "pair", "domain", "gold", "predicted", "confidence", "claim A", "claim B"], rows))
    return "\n\n".join(parts), figs


#: (column, metric key) of the per-question table.
QUESTION_COLUMNS = (("accuracy", "conflict_type/accuracy"), ("Ctx-F1", "conflict_type/ctx_f1"),
                    ("axes micro-F1", "axes/micro_f1"), ("confounder acc.", "confounder/accuracy"),
                    ("confounder n", "confounder/n"))


def question_table(questions: list) -> str:
    """Which questions the predictor gets wrong: per question its rows, conflicts, conflict-type errors and scores."""
    rows = [[f"`{q.question_id}`", q.n, q.conflicts, q.errors, *(score_text(q.scores.get(k)) if not k.endswith("/n")
                                                                 else q.scores.get(k, "–") for _, k in QUESTION_COLUMNS)]
            for q in questions]
    return ("Per clinical question, most conflict-type errors first (rows without a question count in the pooled "
            "scores only):\n\n" + _table(["question", "n", "conflicts", "errors", *(c for c, _ in QUESTION_COLUMNS)], rows))


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


SECTIONS = (
    ("1. Perturbation robustness", "perturbation", render_perturbation),
    ("2. Counterfactual context", "counterfactual", render_counterfactual),
    ("3. Leave-one-domain-out", "domains", render_domains),
    ("4. Confidence slices", "confidence", render_confidence),
    ("5. Annotator audit", "annotators", render_annotators),
    ("6. Error analysis", "errors", render_errors),
)


def robustness_section(results: AnalysisResults) -> str:
    """The short card section: perturbation flips, counterfactual consistency and leave-one-domain-out macro-F1."""
    p, c = results.perturbation, results.counterfactual
    lines = [(f"Measured with `biodivergence analyze` for the {p.predictor} on the `{results.split}` split "
             f"({p.pairs} pairs sampled)."), "",
             _table(["edit family", "label-preserving", "pairs", "flip rate", "= edit's label"],
                    [[f"`{f.family}`", "yes" if f.label_preserving else "no", f.n, score_text(f.flip_rate), score_text(f.expected_rate)]
                     for f in p.families]), "",
             (f"Counterfactual context on {c.contextual_pairs} contextual contradictions: identical contexts → direct "
             f"{score_text(c.identical_consistency)} (n = {c.identical_n}); new axis followed {score_text(c.new_axis_consistency)} "
             f"(n = {c.new_axis_n}).")]
    if results.domains is not None:
        lines += ["", "Leave-one-domain-out conflict-type macro-F1: " + "; ".join(
            f"{_title(f.domain)}: " + ", ".join(f"{s} {score_text(f.scores.get(s, {}).get('macro_f1'))}" for s in results.domains.systems)
            for f in results.domains.folds) + "."]
    lines += ["", *(f"- {w}" for w in data_warnings(results))]
    return "\n".join(lines) + "\n"


def write_report(results: AnalysisResults, out_dir: str | Path) -> Path:
    """Write report.md, figures.json, analysis.json, robustness.md and plots/ under ``out_dir``."""
    out = Path(out_dir)
    counts = ", ".join(f"{_title(c)} {n}" for c, n in results.class_counts.items())
    parts = [(f"# BioDivergence analyses\n\nRelease `{results.release}` (config `{results.config}`, split "
             f"`{results.split}`: {counts}). Predictions scored: {results.predictor}. Edited pairs (analyses 1–2) "
             f"are labelled by: {results.live_predictor}.")]
    warnings = data_warnings(results) + results.notes
    if warnings:
        parts.append("\n".join(f"- {w}" for w in warnings))
    figures: list[Figure] = []
    for heading, attr, render in SECTIONS:
        text, figs = render(getattr(results, attr), out)
        parts.append(f"## {heading}\n\n{text}")
        figures += figs
    write_json_atomic(out / FIGURES, {f.file: asdict(f) for f in figures})
    write_json_atomic(out / RECORDS, asdict(results))
    write_text_atomic(out / ROBUSTNESS, robustness_section(results))
    return write_text_atomic(out / REPORT, "\n\n".join(parts) + "\n")

