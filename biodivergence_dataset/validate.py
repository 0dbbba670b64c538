"""Check a release folder: card YAML, the card's text (what a render from the data gives), ``eval.yaml``, configs,
shards and row counts against ``dataset_info``, schema, labels, leakage between splits of ``primary``, and that its
files are the ones its card describes (no link, nothing outside ``release_files.json``, nothing changed since the
card was written); warn about every
headline metric whose test support is below a minimum (its score would rest on a handful of examples)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from . import evidence_maps, ontology
from .benchmark import TEST_SPLIT, Support, supports, test_rows
from .card import render_card
from .cardmeta import DEFAULT_MIN_SUPPORT, CardMeta
from .features import release_features
from .records import RecordError
from .redact import find_credentials, redact
from .release import (
    EVAL_FILE,
    README,
    config_names,
    configs_yaml,
    file_problems,
    iter_examples,
    shard_name,
    split_files,
    split_names,
)

#: Identities that must not be shared between two splits of the article-disjoint config.
_IDENTITIES = {
    "article": ("article_uid_a", "article_uid_b"),
    "claim": ("claim_a_id", "claim_b_id"),
    "pair": ("pair_id",),
}


@dataclass
class ValidationReport:
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    rows: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems


def _card_header(release_dir: Path, report: ValidationReport) -> dict | None:
    """The card's YAML header, or None (with a problem) when there is none."""
    readme = release_dir / README
    if not readme.exists():
        report.problems.append(f"{readme}: missing (the card declares configs: and dataset_info:)")
        return None
    if readme.is_symlink() or not readme.is_file():  # a pipe would block the read for good
        report.problems.append(f"{readme}: not a regular file")
        return None
    try:
        text = readme.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        report.problems.append(f"{readme}: not UTF-8 text")
        return None
    if not text.startswith("---\n") or "\n---" not in text[4:]:
        report.problems.append(f"{readme}: no YAML header")
        return None
    try:
        header = yaml.safe_load(text[4:text.index("\n---", 4)]) or {}
    except yaml.YAMLError as exc:
        report.problems.append(f"{readme}: the YAML header does not parse ({type(exc).__name__})")
        return None
    if not isinstance(header, dict):
        report.problems.append(f"{readme}: the YAML header is a {type(header).__name__}, not a mapping")
        return None
    return header


def _card_text(release_dir: Path, rows: list[dict], report: ValidationReport) -> None:
    """The card must say what a render from the release's data and ``card_meta.json`` says: a number changed by
    hand in its prose ("59 test conflicts" where the data holds 39) is a card that lies. Not checked when the card
    cannot be rendered (the data's own problems are reported elsewhere)."""
    readme = release_dir / README
    try:
        want = redact(render_card(release_dir, CardMeta.load(release_dir), rows)).splitlines()
    except Exception:  # noqa: BLE001 (a release too broken to render: its problems are the other checks')
        return
    have = readme.read_text(encoding="utf-8").splitlines()
    body = want.index("---", 1) + 1 if "---" in want[1:] else 0  # the header's fields are checked one by one
    if have[body:] == want[body:]:
        return
    n = next((i for i, (a, b) in enumerate(zip(have, want)) if i >= body and a != b), min(len(have), len(want)))
    shown = [("(the end)" if n >= len(lines) else "a line not shown (it seems to hold a secret)"
              if find_credentials(lines[n]) else repr(lines[n][:100])) for lines in (have, want)]  # never echo one
    report.problems.append(f"{readme}: line {n + 1} reads {shown[0]} where the release's data gives {shown[1]}; "
                           "a card edited by hand or stale: re-run `biodivergence card` (it renders the card from the "
                           "data and card_meta.json)")


def _card_configs(release_dir: Path, header: dict, report: ValidationReport) -> None:
    readme = release_dir / README
    entries = header.get("configs", [])
    if not isinstance(entries, list) or not all(isinstance(c, dict) and "config_name" in c for c in entries):
        report.problems.append(f"{readme}: configs: is not a list of mappings with config_name")
        entries = []
    declared = {c["config_name"]: c for c in entries}
    for config in ontology.CONFIGS:
        if config not in declared:
            report.problems.append(f"{readme}: config {config!r} is not declared under configs:")
        if not (release_dir / config).is_dir():
            report.problems.append(f"{release_dir / config}: config folder {config!r} is missing")
    on_disk = {c["config_name"]: c for c in configs_yaml(release_dir)}
    for name, entry in declared.items():
        if name in on_disk and entry.get("data_files") != on_disk[name]["data_files"]:
            report.problems.append(f"{readme}: data_files of config {name!r} do not match the Parquet files on disk")


def _shards(release_dir: Path, config: str, split: str, report: ValidationReport) -> None:
    """The split's shards are exactly ``SPLIT-00000-of-N`` … ``SPLIT-(N-1)-of-N``."""
    names = [p.name for p in split_files(release_dir, config, split)]
    counts = {int(name.rsplit("-of-", 1)[1].split(".")[0]) for name in names}
    expected = [shard_name(split, i, n) for n in sorted(counts) for i in range(n)]
    missing = sorted(set(expected) - set(names))
    if missing or len(counts) > 1:
        report.problems.append(f"{release_dir / config}: split {split!r} has shards {names} but needs {expected}; "
                               f"missing {missing} (rebuild the release or restore the files)")


def _schema(release_dir: Path, config: str, split: str, report: ValidationReport) -> bool:
    expected = release_features().arrow_schema.remove_metadata()
    ok = True
    for path in split_files(release_dir, config, split):
        try:
            schema = pq.read_schema(path).remove_metadata()
        except (pa.ArrowException, OSError) as exc:
            report.problems.append(f"{path}: not a readable Parquet file (truncated or corrupt?): {exc}")
            ok = False
            continue
        if not schema.equals(expected):
            got, want = set(schema.names), set(expected.names)
            detail = (f"missing columns {sorted(want - got)}, unexpected {sorted(got - want)}"
                      if got != want else "column types differ from the release features")
            report.problems.append(f"{path}: schema mismatch: {detail}")
            ok = False
    return ok


def _rows(release_dir: Path, config: str, split: str, report: ValidationReport) -> dict[str, set[str]]:
    """Validate every row; return the identities (articles, claims, pairs) the split uses."""
    ids: dict[str, set[str]] = defaultdict(set)
    seen_pairs: set[str] = set()
    n = 0
    try:
        for ex in iter_examples(release_dir, config, split):
            n += 1
            if ex.pair_id in seen_pairs:
                report.problems.append(f"{config}/{split}: pair_id {ex.pair_id!r} appears twice")
            seen_pairs.add(ex.pair_id)
            for kind, columns in _IDENTITIES.items():
                ids[kind].update(getattr(ex, c) for c in columns)
    except (RecordError, ValueError) as exc:
        report.problems.append(str(exc))
    if n == 0:
        report.problems.append(f"{config}/{split}: empty split (datasets.load_dataset cannot read an empty split)")
    report.rows.setdefault(config, {})[split] = n
    return ids


def _evidence_maps(release_dir: Path, report: ValidationReport) -> None:
    """The evidence maps, when the release has them, are valid rows (counted for the card's row check)."""
    if not evidence_maps.has_maps(release_dir):
        return
    try:
        n = len(evidence_maps.read_maps(release_dir))
    except (RecordError, pa.ArrowException, OSError) as exc:
        report.problems.append(f"{ontology.EVIDENCE_MAP_CONFIG}: {exc}")
        return
    report.rows[ontology.EVIDENCE_MAP_CONFIG] = {ontology.EVIDENCE_MAP_SPLIT: n}


def _may_share(split_a: str, split_b: str) -> bool:
    """Test-family splits are drawn from the same held-out pool and may overlap each other."""
    test_family = {"test", *ontology.EXTRA_TEST_SPLITS}
    return split_a in test_family and split_b in test_family


def _leakage(config: str, by_split: dict[str, dict[str, set[str]]], report: ValidationReport) -> None:
    for a, b in combinations(by_split, 2):
        if _may_share(a, b):
            continue
        for kind in _IDENTITIES:
            shared = by_split[a][kind] & by_split[b][kind]
            if shared:
                examples = ", ".join(sorted(shared)[:3])
                report.problems.append(
                    f"{config}: {len(shared)} {kind}(s) appear in both {a} and {b} (e.g. {examples}); "
                    f"{config} must be article-disjoint"
                )


def _extra_tests(config: str, by_split: dict[str, dict[str, set[str]]], report: ValidationReport) -> None:
    """An extra test split holding exactly the rows of ``test`` adds nothing (the split no longer writes one)."""
    test = by_split.get(TEST_SPLIT, {}).get("pair")
    for extra in ontology.EXTRA_TEST_SPLITS:
        if extra in by_split and test and by_split[extra]["pair"] == test:
            report.warnings.append(f"{config}/{extra}: holds exactly the rows of {config}/{TEST_SPLIT}, so it adds "
                                   "nothing; rebuild the split (it is no longer written in that case)")


def _declared_rows(header: dict) -> dict[str, dict[str, int]]:
    """``{config: {split: num_examples}}`` from the card's ``dataset_info:``."""
    return {info.get("config_name"): {s["name"]: s.get("num_examples") for s in info.get("splits") or []}
            for info in header.get("dataset_info") or []}


def _row_counts(release_dir: Path, header: dict, report: ValidationReport) -> None:
    """Rows per split on disk equal the card's ``dataset_info`` (what ``load_dataset`` verifies)."""
    readme = release_dir / README
    declared = _declared_rows(header)
    for config, on_disk in report.rows.items():
        want = declared.get(config, {})
        for split in sorted(set(want) | set(on_disk)):
            held = on_disk.get(split, None if split_files(release_dir, config, split) else 0)
            if held is not None and want.get(split) != held:  # None: unreadable, reported by _schema
                report.problems.append(
                    f"{readme}: dataset_info of {config}/{split} declares {want.get(split)} rows but the Parquet "
                    f"files hold {held}; load_dataset would fail (NonMatchingSplitsSizesError): "
                    f"restore the missing files, or re-render the card with `biodivergence card` if the data is right")


def _eval_yaml(release_dir: Path, rows: list[dict], report: ValidationReport) -> None:
    """``eval.yaml`` (the Hub benchmark registration) has the Hub's fields and one task per leaderboard of
    ``tasks.yaml`` with enough test support for the card's minimum, each on a split the release holds; with
    none, there is no ``eval.yaml``."""
    path = release_dir / EVAL_FILE
    fix = "re-render it with `biodivergence card`"
    try:
        meta = CardMeta.load(release_dir)
    except (ValueError, TypeError) as exc:
        report.problems.append(f"{exc}; fix or remove it, then {fix}")
        return
    want = [s.board.id for s in supports(release_dir, meta.min_support, rows) if s.listed]
    if not want:
        if path.exists():
            report.problems.append(f"{path}: lists leaderboards although no headline metric has "
                                   f"{meta.min_support} test examples; {fix}")
        return
    if not path.exists():
        report.problems.append(f"{path}: missing (registers the release as a Hub benchmark); {fix}")
        return
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        report.problems.append(f"{path}: not valid YAML ({exc}); {fix}")
        return
    data = data if isinstance(data, dict) else {}
    missing = [k for k in ("name", "description", "evaluation_framework", "tasks") if not data.get(k)]
    if missing:
        report.problems.append(f"{path}: missing field(s) {missing}; {fix}")
        return
    tasks = [t for t in data["tasks"] if isinstance(t, dict)]
    ids = [t.get("id") for t in tasks]
    if ids != want:
        report.problems.append(f"{path}: task ids {ids} do not match the leaderboards of tasks.yaml with at least "
                               f"{meta.min_support} test examples {want}; {fix}")
    scored = dict.fromkeys((t.get("config", ontology.DEFAULT_CONFIG), t.get("split", TEST_SPLIT)) for t in tasks)
    for config, split in scored:
        if not split_files(release_dir, config, split):
            report.problems.append(f"{path}: tasks are scored on {config}/{split}, which the release does not hold")


#: File starts of the binary files a release holds (PNG plots): not text in any encoding.
_BINARY_MAGIC = (b"\x89PNG", b"%PDF", b"GIF8", b"\xff\xd8\xff")


def _strings(value) -> Iterator[str]:
    """Every string inside a Parquet row (lists and structs walked)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _release_text(path: Path) -> str | None:
    """What a release file says as text, whatever its encoding (UTF-8, UTF-16 with a BOM, else Latin-1, which
    reads any byte), the string cells of a Parquet file included; None for a binary file or one not readable."""
    try:
        if path.suffix == ".parquet":
            return "\n".join(_strings(pq.read_table(path).to_pylist()))
        data = path.read_bytes()
    except (pa.ArrowException, OSError):
        return None
    if data.startswith(_BINARY_MAGIC):
        return None
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def _credentials(release_dir: Path, report: ValidationReport) -> None:
    """No file of the release holds something that looks like a credential (it would be published): text in any
    encoding and the string cells of its Parquet files."""
    for path in sorted(p for p in release_dir.rglob("*") if p.is_file() and not p.is_symlink()):
        text = _release_text(path)
        if text is None:
            continue
        kinds = find_credentials(text)
        if kinds:
            report.problems.append(f"{path}: holds what looks like a credential ({', '.join(kinds)}); remove it "
                                   "(or rebuild with this version, which writes secrets as ***) before publishing")


def _scored_rows(release_dir: Path, report: ValidationReport) -> list[dict]:
    """The scored split's rows for the support counts (none when unreadable: the schema check says why)."""
    try:
        return test_rows(release_dir)
    except (pa.ArrowException, OSError, ValueError):
        return []


def support_warning(support: Support) -> str:
    """Why a key metric's score is not to be trusted on this release."""
    rule = support.board.rule
    kind = "headline" if support.board.ranked else "key metric"
    return (f"{ontology.DEFAULT_CONFIG}/{TEST_SPLIT}: {kind} {support.board.id} rests on {support.n} "
            f"test example(s) ({rule.describe()}), fewer than {support.min_support}: its score is noise"
            + ("; the card leaves it off the leaderboard" if support.board.ranked else ""))


def validate_release(release_dir: str | Path, min_support: int = DEFAULT_MIN_SUPPORT) -> ValidationReport:
    """Problems (the release is broken) and warnings (key metrics with test support below ``min_support``)."""
    release_dir = Path(release_dir)
    report = ValidationReport()
    if not release_dir.is_dir():
        report.problems.append(f"{release_dir}: not a folder")
        return report
    header = _card_header(release_dir, report)
    if header is not None:
        _card_configs(release_dir, header, report)
    rows = _scored_rows(release_dir, report)
    if header is not None:
        _card_text(release_dir, rows, report)
    _eval_yaml(release_dir, rows, report)
    for config in config_names(release_dir):
        splits = split_names(release_dir, config)
        missing = [s for s in ontology.SPLITS if s not in splits]
        if missing:
            report.problems.append(f"{config}: missing split(s) {missing}")
        for split in splits:
            _shards(release_dir, config, split, report)
        by_split = {s: _rows(release_dir, config, s, report) for s in splits if _schema(release_dir, config, s, report)}
        if config == ontology.DEFAULT_CONFIG:
            _leakage(config, by_split, report)
            _extra_tests(config, by_split, report)
    _evidence_maps(release_dir, report)
    if header is not None:
        _row_counts(release_dir, header, report)
    report.warnings += [support_warning(s) for s in supports(release_dir, min_support, rows) if not s.enough]
    _credentials(release_dir, report)
    report.problems.extend(file_problems(release_dir))
    return report


def add_arguments(parser) -> None:
    from .arguments import RELEASE_HELP, add_release_argument

    add_release_argument(parser, RELEASE_HELP, legacy_positional=True)
    parser.add_argument("--min-support", type=int, default=DEFAULT_MIN_SUPPORT, metavar="N",
                        help="warn about every headline metric resting on fewer test examples")


def run(args) -> int:
    from .release import resolve_release

    report = validate_release(resolve_release(args.release), args.min_support)
    for config, splits in report.rows.items():
        print(f"{config}: " + ", ".join(f"{s}={n}" for s, n in splits.items()))
    for warning in report.warnings:
        print(f"warning: {warning}")
    if report.ok:
        print(f"{args.release}: OK")
        return 0
    for problem in report.problems:
        print(f"error: {problem}")
    print(f"{args.release}: {len(report.problems)} problem(s)")
    return 1
