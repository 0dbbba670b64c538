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
             "key_metrics": list(t.key_metrics), "headline": list(t.headline), "scope": t.scope}
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
                     f"metrics={','.join(t['metrics'])} key={','.join(t['key_metrics'])} "
                     f"headline={','.join(t['headline'])} ({t['scope']})")
    return "\n".join(lines)


def sample_rows(release_dir: str, n: int, seed: int = 0, config: str = ontology.DEFAULT_CONFIG,
                split: str = "test") -> dict[str, list[dict]]:
    """Up to ``n`` random rows of each conflict type of a release split, decoded (the reading test)."""
    import random

    from .features import decode_row
    from .release import load_release, resolve_release

    splits = load_release(resolve_release(release_dir), config)
    if split not in splits:
        raise ValueError(f"split {split!r} is not in {release_dir} ({config}); it has {list(splits)}")
    by_type: dict[str, list[dict]] = {}
    for row in splits[split]:
        row = decode_row(row)
        by_type.setdefault(row["conflict_type"], []).append(row)
    rng = random.Random(seed)
    return {t: rng.sample(rows, min(n, len(rows))) for t, rows in sorted(by_type.items())}


_BRACKETS = ("()", "[]", "{}")


def readable(text: str) -> bool:
    """Whether a frame slot reads as a phrase: it has a word, its brackets close, and it is not cut off after a
    function word ("we observed an") or inside brackets ("CD4(+")."""
    import re

    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    words = re.findall(r"[A-Za-z]+", text)
    if not words or text.strip().startswith("…") or text.strip().endswith("…"):
        return False
    if any(text.count(opening) != text.count(closing) for opening, closing in _BRACKETS):
        return False
    return words[-1].lower() not in ENGLISH_STOP_WORDS


def _frame_line(frame: dict | None) -> str:
    """A claim frame in one line: the finding, the readable exposure / outcome, the context slots."""
    if not frame:
        return "no frame"
    finding = frame.get("finding") or "none found"
    if frame.get("significance"):
        finding += f" ({frame['significance']})"
    parts = [f"finding: {finding}"]
    unreadable = 0
    for slot in ("exposure", "outcome"):
        value = (frame.get(slot) or "").strip()
        if value and readable(value):
            parts.append(f"{slot}: {value!r}")
        elif value:
            unreadable += 1
    context = ", ".join(f"{c['axis']}={c['value']}" for c in frame.get("context") or [])
    if context:
        parts.append(f"context: {context}")
    if unreadable:
        parts.append(f"{unreadable} unreadable slot(s) not shown")
    return " | ".join(parts)


def sample_header(release: str, config: str, split: str, n: int, seed: int, sample: dict[str, list[dict]]) -> str:
    """What ``info --sample`` shows: the release, config and split, and how the rows were drawn."""
    shown = sum(len(rows) for rows in sample.values())
    return (f"# {release}: config {config}, split {split}; {shown} row(s), up to {n} random one(s) of each of "
            f"{len(sample)} conflict type(s) (seed {seed})")


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
    from .arguments import RELEASE_HELP, add_release_argument

    add_release_argument(parser, f"with --sample: {RELEASE_HELP}", required=False)
    parser.add_argument("--sample", type=int, default=0, metavar="N",
                        help="print N random rows of each conflict type of the release (claims, frames, spans)")
    parser.add_argument("--config", default=ontology.DEFAULT_CONFIG, choices=ontology.CONFIGS)
    parser.add_argument("--split", default="test")
    parser.add_argument("--seed", type=int, default=0, help="seed of the --sample draw")


def run(args) -> int:
    if args.sample:
        if not args.release:
            raise ValueError("--sample needs --release (a folder or ORG/NAME[@REVISION])")
        sample = sample_rows(args.release, args.sample, args.seed, args.config, args.split)
        if args.format == "json":
            print(json.dumps({"release": args.release, "config": args.config, "split": args.split, "seed": args.seed,
                              "rows": sample}, indent=2, default=str))
        else:
            print(sample_header(args.release, args.config, args.split, args.sample, args.seed, sample))
            print(format_sample(sample))
        return 0
    data = info_dict()
    print(json.dumps(data, indent=2) if args.format == "json" else format_info(data))
    return 0
