"""``biodivergence info``: print the ontology and the five tasks."""

from __future__ import annotations

import json

from . import __version__, ontology
from .records import ClaimFrame
from .tasks import load_tasks


def info_dict() -> dict:
    """The ontology and task declarations as plain data."""
    return {
        "biodivergence": __version__,
        "ontology_version": ontology.ONTOLOGY_VERSION,
        "conflict_types": [
            {"name": c.name, "definition": c.definition, "boundary_rule": c.boundary_rule, "evaluable": c.evaluable}
            for c in ontology.CONFLICT_TYPES
        ],
        "preference_rule": ontology.PREFERENCE_RULE,
        "axes": [{"name": a.name, "description": a.description, "primary": a.primary} for a in ontology.AXES],
        "claim_types": list(ontology.CLAIM_TYPE_NAMES),
        "domains": list(ontology.DOMAIN_NAMES),
        "evaluable_classes": list(ontology.EVALUABLE_CLASSES),
        "claim_frames": {
            "fields": list(ClaimFrame.model_fields),
            "findings": list(ontology.FINDING_DIRECTIONS),
            "significance": list(ontology.SIGNIFICANCE_VALUES),
            "comparability": dict(ontology.COMPARABILITY),
            "disagreement": dict(ontology.DISAGREEMENT_REASONS),
        },
        "tasks": [
            {"number": t.number, "name": t.name, "targets": list(t.target_fields), "metrics": list(t.metrics),
             "headline": list(t.headline), "scope": t.scope}
            for t in load_tasks()
        ],
    }


def format_info(data: dict) -> str:
    lines = [f"BioDivergence {data['biodivergence']} (ontology {data['ontology_version']})", "", "Conflict types:"]
    for c in data["conflict_types"]:
        mark = "evaluable" if c["evaluable"] else "exploratory"
        lines.append(f"  {c['name']:<40} [{mark}] {c['definition']}")
    lines += ["", f"Preference rule: {data['preference_rule']}", "", "Divergence axes (* = primary):"]
    lines += [f"  {'*' if a['primary'] else ' '} {a['name']:<36} {a['description']}" for a in data["axes"]]
    frames = data["claim_frames"]
    lines += ["", "Claim types: " + ", ".join(data["claim_types"]), "Domains: " + ", ".join(data["domains"]), "",
              "Claim frames (release columns frame_a / frame_b): " + ", ".join(frames["fields"]),
              "  findings: " + ", ".join(frames["findings"]),
              "  significance: " + ", ".join(frames["significance"]),
              "  same question? (column comparability):"]
    lines += [f"    {k:<20} {v}" for k, v in frames["comparability"].items()]
    lines += ["  findings disagree when:"] + [f"    {k:<20} {v}" for k, v in frames["disagreement"].items()]
    lines += ["", "Tasks:"]
    for t in data["tasks"]:
        lines.append(f"  {t['number']}. {t['name']:<15} targets={','.join(t['targets'])} "
                     f"metrics={','.join(t['metrics'])} headline={','.join(t['headline'])} ({t['scope']})")
    return "\n".join(lines)


def sample_rows(release_dir: str, n: int, seed: int = 0, config: str = ontology.DEFAULT_CONFIG,
                split: str = "test") -> dict[str, list[dict]]:
    """Up to ``n`` random rows of each conflict type of a release split, decoded (the reading test)."""
    import random

    from .features import decode_row
    from .release import load_release, resolve_release

    ds = load_release(resolve_release(release_dir), config)[split]
    by_type: dict[str, list[dict]] = {}
    for row in ds:
        row = decode_row(row)
        by_type.setdefault(row["conflict_type"], []).append(row)
    rng = random.Random(seed)
    return {t: rng.sample(rows, min(n, len(rows))) for t, rows in sorted(by_type.items())}


def _frame_line(frame: dict | None) -> str:
    if not frame:
        return "no frame"
    return f"exposure: {frame['exposure']!r} | outcome: {frame['outcome']!r} | finding: {frame['finding']}"


def format_sample(sample: dict[str, list[dict]]) -> str:
    lines = []
    for conflict_type, rows in sample.items():
        lines += ["", f"== {conflict_type}: {len(rows)} random row(s)"]
        for r in rows:
            lines += [f"-- {r['example_id']}  axes={r['divergence_axes']}  same question: {r['comparability'] or '?'}",
                      f"   A: {r['claim_a_text']}", f"      {_frame_line(r['frame_a'])}",
                      f"   B: {r['claim_b_text']}", f"      {_frame_line(r['frame_b'])}",
                      "   spans: " + "; ".join(f"{s['role']}: {s['text']!r}" for s in r["evidence_spans"]),
                      f"   reconciliation: {r['reconciliation']}"]
    return "\n".join(lines)


def add_arguments(parser) -> None:
    parser.add_argument("--format", choices=("text", "json"), default="text", help="how to print")
    from .cli import RELEASE_HELP, add_release_argument

    add_release_argument(parser, f"with --sample: {RELEASE_HELP}", required=False)
    parser.add_argument("--sample", type=int, default=0, metavar="N",
                        help="print N random rows of each conflict type of the release (claims, frames, spans)")
    parser.add_argument("--config", default=ontology.DEFAULT_CONFIG, choices=ontology.CONFIGS)
    parser.add_argument("--split", default="test")
    parser.add_argument("--seed", type=int, default=0)


def run(args) -> int:
    if args.sample:
        if not args.release:
            raise ValueError("--sample needs --release (a folder or ORG/NAME[@REVISION])")
        sample = sample_rows(args.release, args.sample, args.seed, args.config, args.split)
        print(json.dumps(sample, indent=2, default=str) if args.format == "json" else format_sample(sample))
        return 0
    data = info_dict()
    print(json.dumps(data, indent=2) if args.format == "json" else format_info(data))
    return 0
