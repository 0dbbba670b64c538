"""The gold check as Markdown: the agreement tables of ``goldcheck.json`` (each annotator against the negation
rule, by development / check part) and the finding reader's report, for the build report, the ``goldcheck`` and
``reader`` commands and the card.

The card (``biodivergence_dataset.card``) does not know the report's layout: the release stage renders it here into
``goldcheck.md`` beside ``goldcheck.json`` (:func:`write_goldcheck_summary`), and the card shows that text.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from biodivergence_dataset.io import write_text_atomic
from biodivergence_dataset.release import GOLDCHECK_FILE, GOLDCHECK_SUMMARY


def goldcheck_table(result: dict[str, Any]) -> str:
    """The gold-agreement table (same layout as ``biodivergence goldcheck``; empty without a result)."""
    if not result:
        return ""
    lines = [("| annotator | gold source | pairs | κ [95% CI] | negation rule κ [95% CI] | gain | beats rule by "
              f"≥ {result['min_kappa_gain']} |"), "|---|---|---|---|---|---|---|"]
    for name, cells in result["scores"].items():
        for source, c in cells.items():
            if c["in_fold"]:
                lines.append(f"| `{name}` | {source} | {c['pairs']} | trained on this source: not scored | | | |")
                continue
            lo, hi = c["kappa_ci"]
            rlo, rhi = c["rule_kappa_ci"]
            lines.append(f"| `{name}` | {source} | {c['pairs']} | {c['kappa']:.3f} [{lo:.2f}, {hi:.2f}] | "
                         f"{c['rule_kappa']:.3f} [{rlo:.2f}, {rhi:.2f}] | {c['gain']:+.3f} | "
                         f"{'yes' if c['beats_rule'] else '**no**'} |")
    if result.get("parts"):
        lines += ["", goldcheck_parts_table(result)]
    for name, report in result.get("readers", {}).items():
        lines += ["", (f"The finding reader of `{name}`, out of fold (its own held-out items; the report shipped "
                       "with its weights):"), "", reader_sets_table(report)]
    return "\n".join(lines)


def goldcheck_parts_table(result: dict[str, Any]) -> str:
    """Each annotator's κ on the development and the check part of every gold source, beside the negation rule's,
    with n: the check part is what to read (nothing was tuned there); a development cell of an annotator that
    learned from it is marked, its score being no estimate."""
    lines = ["By part (development: where rules are read and models trained; check: never tuned on):", "",
             "| annotator | gold source | part | pairs | κ | negation rule κ | gain |", "|---|---|---|---|---|---|---|"]
    for name, sources in result.get("parts", {}).items():
        for source, cells in sources.items():
            for part, c in cells.items():
                label = f"{part} (trained on)" if c.get("trained_on") else f"**{part}**" if part == "check" else part
                lines.append(f"| `{name}` | {source} | {label} | {c['pairs']} | {c['kappa']:.3f} | "
                             f"{c['rule_kappa']:.3f} | {c['gain']:+.3f} |")
    return "\n".join(lines)


def reader_scope(report: dict[str, Any]) -> str:
    """What a reader report scored: "held-out" items, or "development" ones for a reader trained without them
    (a report without ``part`` is a held-out one)."""
    return "development" if report.get("part") == "development" else "held-out"


#: The rows of a reader report's Evidence Inference table: its cell, and what the row says.
READER_ROWS = {"reader": "reader, each finding asked in one of its training phrasings",
               "reader_as_annotated": "reader, asked as the annotator asks a claim",
               "tfidf_floor": "TF-IDF floor"}


def reader_sets_table(report: dict[str, Any]) -> str:
    """A finding reader's two gold sets (Evidence Inference findings beside the TF-IDF floor, HealthVer
    same-claim pairs beside the negation rule), every number with its n; and, where the report has it, how the
    reader reads those findings with the question's two arms exchanged (``arm_exchange_line``)."""
    ei, hv, scope = report["evidence_inference_findings"], report["healthver_same_claim"], reader_scope(report)
    lines = [f"Evidence Inference findings of {ei['articles']} {scope} articles (three-way):", "",
             "| reader | accuracy | macro-F1 | n |", "|---|---|---|---|"]
    for name, label in READER_ROWS.items():
        if name in ei:
            lines.append(f"| {label} | {ei[name]['accuracy']:.3f} | {ei[name]['macro_f1']:.3f} | {ei[name]['n']} |")
    lines += ["", (f"HealthVer same-claim pairs of {hv['claims']} {scope} claims: κ {hv['kappa']:.3f} vs negation "
                   f"rule {hv['rule_kappa']:.3f} (gain {hv['gain']:+.3f}; n = {hv['pairs']} pairs, "
                   f"{hv['gold_conflict']} conflicts)"), *arm_exchange_line(report.get("arm_exchange"))]
    return "\n".join(lines)


def arm_exchange_line(cell: dict[str, Any] | None) -> list[str]:
    """A reader report's arms-exchanged diagnostic as Markdown lines (none for a report without it): the
    Evidence Inference findings whose text marks an arm, read as asked and with intervention and comparator
    exchanged (direction swapped back), and how many effects the reader reads in the same direction both ways."""
    if not cell:
        return []
    asked, exchanged = cell["as_asked"], cell["exchanged"]
    return ["", (f"Arms exchanged (findings whose text marks an arm, n = {asked['n']}): three-way macro-F1 "
                 f"{asked['macro_f1']:.3f} as asked, {exchanged['macro_f1']:.3f} with intervention and comparator "
                 f"exchanged and the direction swapped back; {cell['effects_same_both_ways']} of {cell['effects']} "
                 "effects read as asked are read in the same direction both ways.")]


#: How a warning line starts in Markdown (the card) and in plain text (the terminal, the build report).
MARKDOWN_WARNING, PLAIN_WARNING = "**Warning:** ", "WARNING: "


def goldcheck_warnings(result: dict[str, Any], prefix: str = MARKDOWN_WARNING) -> list[str]:
    """One line per annotator and source where the annotator does not beat the negation rule."""
    return [f"{prefix}`{name}` does not beat the negation rule on {source} (κ {c['kappa']:.3f} vs "
            f"{c['rule_kappa']:.3f}, needs +{result['min_kappa_gain']}): its labels there are no better than a "
            "word rule."
            for name, cells in result.get("scores", {}).items() for source, c in cells.items()
            if not c["in_fold"] and not c["beats_rule"]]


def goldcheck_summary(result: dict[str, Any]) -> str:
    """What the card shows of a gold check: the table, then one list item per warning."""
    return goldcheck_table(result) + "\n\n" + "".join(f"- {w}\n" for w in goldcheck_warnings(result))


def write_goldcheck_summary(release_dir: str | Path) -> Path | None:
    """Render the release's ``goldcheck.json`` into ``goldcheck.md`` for the card; without a gold check, remove
    the summary instead (none is returned)."""
    source, summary = Path(release_dir) / GOLDCHECK_FILE, Path(release_dir) / GOLDCHECK_SUMMARY
    if not source.exists():
        summary.unlink(missing_ok=True)
        return None
    return write_text_atomic(summary, goldcheck_summary(json.loads(source.read_text(encoding="utf-8"))))
