"""The release's evidence maps: one per declared question, as Parquet, a Markdown table and a plot.

Layout inside a release (the folder is ``ontology.EVIDENCE_MAP_CONFIG``)::

    evidence_map/questions-00000-of-00001.parquet   # one EvidenceMap row per question
    evidence_map/<question_id>.md                   # the map as a table (what `biodivergence map` prints)
    evidence_map/<question_id>.png                  # direction per study, grouped by the condition that differs

``load_dataset(release, "evidence_map")`` reads the Parquet (the card declares the config and its features). The
folder is replaced whole, so a question that lost its map leaves no stale table or plot behind. The builder
computes the maps (``builder.evidence_map``); this module writes, reads and renders them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from . import ontology
from .features import evidence_map_features, rounded
from .io import staging_folder, swap_folder, write_table_atomic, write_text_atomic
from .records import EvidenceMap

MAP_DIR = ontology.EVIDENCE_MAP_CONFIG
MAP_SPLIT = ontology.EVIDENCE_MAP_SPLIT
MAP_FILE = f"{MAP_SPLIT}-00000-of-00001.parquet"
#: Characters of a claim shown in a map's table (the Parquet holds it whole).
CLAIM_CHARS = 220
WORDS = ontology.READER_FINDING_WORDS


def file_stem(question_id: str) -> str:
    """The file name (without suffix) of a question's table and plot: its id, any character outside letters,
    digits, ``.``, ``-`` and ``_`` replaced by ``_``."""
    return re.sub(r"[^\w.-]", "_", question_id)


def table_path(question_id: str) -> str:
    """A question's Markdown table, relative to the release."""
    return f"{MAP_DIR}/{file_stem(question_id)}.md"


def plot_path(question_id: str) -> str:
    """A question's plot, relative to the release."""
    return f"{MAP_DIR}/{file_stem(question_id)}.png"


def data_path(release_dir: str | Path) -> Path:
    return Path(release_dir) / MAP_DIR / MAP_FILE


def has_maps(release_dir: str | Path) -> bool:
    return data_path(release_dir).is_file()


# ---------------------------------------------------------------------------------------------
# writing and reading


def write_maps(release_dir: str | Path, maps: Iterable[EvidenceMap],
               draw: Callable[[EvidenceMap, Path], Any] | None = None) -> list[EvidenceMap]:
    """Write the maps (Parquet, one table each, and one plot each drawn by ``draw(map, path)`` when given) into a
    staging folder, then swap it in for the release's evidence-map folder. Returns the maps written."""
    release_dir = Path(release_dir)
    maps = list(maps)
    staging = staging_folder(release_dir / MAP_DIR)
    rows = [m.model_dump(mode="json") for m in maps]
    write_table_atomic(staging / MAP_FILE, pa.Table.from_pylist(rows, schema=evidence_map_features().arrow_schema))
    for m in maps:
        write_text_atomic(staging / Path(table_path(m.question_id)).name, markdown(m))
        if draw is not None and m.studies:
            draw(m, staging / Path(plot_path(m.question_id)).name)
    swap_folder(staging, release_dir / MAP_DIR)
    return maps


def read_maps(release_dir: str | Path) -> list[EvidenceMap]:
    """The release's evidence maps, validated (none when it has no evidence-map folder)."""
    path = data_path(release_dir)
    if not path.is_file():
        return []
    return [EvidenceMap.parse(rounded(row), where=f"{path}:{i}") for i, row in enumerate(pq.read_table(path).to_pylist())]


def find_map(release_dir: str | Path, question_id: str) -> EvidenceMap:
    """One question's map; ValueError naming the questions that have one otherwise."""
    maps = read_maps(release_dir)
    for m in maps:
        if m.question_id == question_id:
            return m
    known = ", ".join(m.question_id for m in maps) or "none (the release has no evidence maps)"
    raise ValueError(f"no evidence map for question {question_id!r} in {release_dir}; questions with a map: {known}")


# ---------------------------------------------------------------------------------------------
# the card's YAML (configs: and dataset_info:)


def config_entry(release_dir: str | Path) -> list[dict[str, Any]]:
    """The ``configs:`` entry of the evidence maps (none when the release has none)."""
    if not has_maps(release_dir):
        return []
    return [{"config_name": MAP_DIR, "data_files": [{"split": MAP_SPLIT, "path": f"{MAP_DIR}/{MAP_SPLIT}-*"}]}]


def info_entry(release_dir: str | Path) -> list[dict[str, Any]]:
    """The ``dataset_info:`` entry of the evidence maps: typed features and the split's size."""
    from datasets import DatasetInfo, SplitDict, SplitInfo

    path = data_path(release_dir)
    if not path.is_file():
        return []
    table = pq.read_table(path)
    splits = SplitDict()
    splits.add(SplitInfo(name=MAP_SPLIT, num_bytes=table.nbytes, num_examples=table.num_rows))
    info = DatasetInfo(features=evidence_map_features(), splits=splits, config_name=MAP_DIR,
                       download_size=path.stat().st_size, dataset_size=table.nbytes)
    return [{"config_name": MAP_DIR, **info._to_yaml_dict()}]


# ---------------------------------------------------------------------------------------------
# Markdown


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _short(text: str, limit: int = CLAIM_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit].rstrip() + " …"


def _axis_title(axis: str) -> str:
    return ontology.axis(axis).title.lower() if axis else ""


def _agrees(value: bool | None) -> str:
    return "–" if value is None else "yes" if value else "**no**"


def headline(m: EvidenceMap) -> str:
    """One line: the pooled direction and how many studies agree, disagree and report no finding."""
    return (f"pooled direction **{WORDS[m.pooled_direction]}** (the direction most studies report; no difference on a "
            f"tie): {m.n_studies} studies, {m.n_agree} agree, {m.n_disagree} disagree, {m.n_unread} report no finding "
            f"read; {len(m.conflicts)} released conflicts among them")


def markdown(m: EvidenceMap, plot: bool = True) -> str:
    """The map as Markdown: the question, the pooled direction, the plot, a table of studies (grouped by the
    condition the map groups by) and a table of the conflicts among them."""
    asked = "; ".join(f"{k}: {v}" for k, v in (("intervention", m.intervention), ("comparator", m.comparator),
                                               ("outcome", m.outcome), ("population", m.population)) if v)
    group = _axis_title(m.grouping_axis) or "group"
    lines = [f"# Evidence map: `{m.question_id}`", "", f"**{m.question}**", ""]
    lines += [f"{asked}.", ""] if asked else []
    lines += [f"{headline(m)[0].upper()}{headline(m)[1:]}.", ""]
    if plot and m.studies:
        lines += [f"![Direction per study, grouped by {group}]({Path(plot_path(m.question_id)).name})", ""]
    lines += [f"Studies, grouped by {group} (a condition that differs in this question's conflicts, the one most "
              "studies state):"
              if m.grouping_axis else "Studies (not grouped: its conflicts name no condition the studies state, nor do two studies state one "
              "on the same axis):", ""]
    lines += [(f"| study | year | {group} | direction | significance | agrees | claims (finding read) | conditions "
               "stated | conflicts |"), "|---|---|---|---|---|---|---|---|---|"]
    for s in m.studies:
        claims = "<br>".join(f"{_cell(_short(c.text))} (*{WORDS[c.finding]}*)" for c in s.claims)
        conditions = "; ".join(f"{_axis_title(c.axis)}: {_cell(c.text)}" for c in s.conditions) or "–"
        lines.append(f"| {s.article_uid} | {s.pub_year or '–'} | {_cell(s.group) or '–'} | {WORDS[s.direction]} | "
                     f"{(s.significance or '–').replace('_', ' ')} | {_agrees(s.agrees)} | {claims} | {conditions} | "
                     f"{len(s.conflict_pair_ids)} |")
    if m.conflicts:
        lines += ["", "Conflicts among them (released rows labelled other than no_conflict):", "",
                  "| pair | study A | study B | conflict type | axes | split |", "|---|---|---|---|---|---|"]
        lines += [f"| `{c.pair_id}` | {c.article_uid_a} | {c.article_uid_b} | {c.conflict_type} | "
                  f"{', '.join(c.divergence_axes) or '–'} | {c.split or 'pairlevel only'} |" for c in m.conflicts]
    return "\n".join(lines) + "\n"


def summary_rows(release_dir: str | Path) -> list[dict[str, Any]]:
    """One row per map for the card: the question, its counts, the pooled direction and the links."""
    return [{"question_id": m.question_id, "question": m.question, "studies": m.n_studies, "agree": m.n_agree,
             "disagree": m.n_disagree, "unread": m.n_unread, "conflicts": len(m.conflicts),
             "pooled": WORDS[m.pooled_direction], "table": table_path(m.question_id),
             "plot": plot_path(m.question_id) if m.studies and (Path(release_dir) / plot_path(m.question_id)).exists()
             else ""} for m in read_maps(release_dir)]


# ---------------------------------------------------------------------------------------------
# `biodivergence map`


def add_arguments(parser) -> None:
    from .arguments import add_release_argument

    add_release_argument(parser, "release folder or Hub id ORG/NAME[@REVISION] whose evidence maps to read")
    parser.add_argument("--question", metavar="ID",
                        help="the question whose map to print (default: list the questions that have one)")


def run(args) -> int:
    from .release import resolve_release

    release = resolve_release(args.release)
    if args.question:
        print(markdown(find_map(release, args.question), plot=False), end="")
        return 0
    maps = read_maps(release)
    if not maps:
        raise ValueError(f"{release}: no evidence maps ({MAP_DIR}/{MAP_FILE} is missing)")
    print("| question | studies | agree | disagree | no finding | conflicts | pooled |")
    print("|---|---|---|---|---|---|---|")
    for m in maps:
        print(f"| {m.question_id} | {m.n_studies} | {m.n_agree} | {m.n_disagree} | {m.n_unread} | {len(m.conflicts)} "
              f"| {WORDS[m.pooled_direction]} |")
    return 0
