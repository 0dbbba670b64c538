"""Issue 61's faults in what the user hands in (second part): a stop signal during ingest or claims then a resume
(byte-identical output), text bombs and BOM + CRLF files through ingest, a full disk while claims or split write,
impossible option values and build configs with a typo. Inputs built from ../shared/data."""

from __future__ import annotations

import json
import os
import signal
import time
import unicodedata
from collections.abc import Callable
from pathlib import Path

from faultlib import ROOT, Case, cases, first_error, ingest_summary, interruptible_cli, last_line, run_cli

from biodivergence_dataset import io

DATA = cases.SHARED_DATA
COHEN = DATA / "cohen2006_drug_class_reviews"
SCIFACT_CORPUS = DATA / "scifact" / "corpus_train.csv"


def cli(*argv: object) -> tuple[int, str, str]:
    """run_cli, where argparse's own refusal (SystemExit) is an exit code too."""
    try:
        return run_cli(*map(str, argv))
    except SystemExit as exc:
        return int(exc.code or 0), "", "(argparse usage error, stderr not captured)"


def parquet_bytes(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.glob("*.parquet"))}


# --- a stop signal, then the same command again ----------------------------------------------------------------------

def interrupted(command: str, signum: int) -> Callable[[Path], str]:
    """Run ``command`` uninterrupted, then again in a subprocess stopped by ``signum`` 1 s after it began writing
    its stage (ingest: its scratch folder; claims: its manifest), then resumed: the Parquet files of the two finished runs, byte for byte."""
    def run(work: Path) -> str:
        if command == "ingest":
            def args(out: Path) -> list[str]:
                return ["ingest", f"csv:{COHEN}/*.csv", f"scifact_corpus:{SCIFACT_CORPUS}",
                        f"pubmedqa:{DATA / 'pubmedqa_pqal' / 'ori_pqal.json'}", "--out", str(out), "--domain", "oncology"]
        else:
            assert run_cli("ingest", f"scifact_corpus:{SCIFACT_CORPUS}", "--out", work / "abstracts",
                           "--domain", "oncology")[0] == 0

            def args(out: Path) -> list[str]:
                return ["claims", str(work / "abstracts"), "--out", str(out)]
        whole = run_cli(*args(work / "whole"))[0]
        proc = interruptible_cli(args(work / "stopped"), ROOT)
        deadline = time.monotonic() + 60
        begun = work / "stopped" / (".partial" if command == "ingest" else io.MANIFEST_FILE)  # its first write
        while not begun.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(1.0)
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=60)
        finished = (work / "stopped" / io.SUCCESS_MARKER).exists()
        resumed = run_cli(*args(work / "stopped"))[0]
        same = parquet_bytes(work / "whole") == parquet_bytes(work / "stopped")
        return (f"uninterrupted exit {whole}; signalled exit {proc.returncode}: {last_line(err.decode())}; finished "
                f"when stopped: {finished}; resumed exit {resumed}; Parquet files ({len(parquet_bytes(work / 'whole'))}) "
                f"byte-identical: {same}")
    return run


# --- text bombs and byte-order marks through ingest ----------------------------------------------------------------

def real_rows(n: int = 5) -> list[dict]:
    results = [r for r in json.loads(cases.EPMC_CORE.read_text(encoding="utf-8"))["resultList"]["result"]
               if r.get("abstractText")][:n]
    return [{"pmid": str(700000 + i), "title": r["title"], "text": r["abstractText"]} for i, r in enumerate(results)]


BOMBS: dict[str, Callable[[str], str]] = {
    "50 MB abstract": lambda text: (text + " ") * (50_000_000 // (len(text) + 1)),
    "10^6-character word": lambda text: text + " " + "a" * 1_000_000,
    "20,000 nested brackets": lambda text: "(" * 20_000 + text + ")" * 20_000,
    "zero-width and RTL characters": lambda text: "\u200b\u202e".join(text.split(" ")) + "\u2067\u200d\u2069",
    "NUL bytes": lambda text: text.replace(". ", ".\x00 "),
}


def text_bomb(kind: str) -> Callable[[Path], str]:
    """Record 3 of 5 real abstracts made into ``kind``; ingest, then claims over what was kept."""
    def run(work: Path) -> str:
        rows = real_rows()
        rows[2]["text"] = BOMBS[kind](rows[2]["text"])
        path = work / "bomb.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        start = time.monotonic()
        code, _, err = run_cli("ingest", f"jsonl:{path}", "--out", work / "out", "--domain", "oncology")
        if code:
            return f"ingest exit {code}: {first_error(err)}"
        stats = io.read_stats(work / "out")
        texts = [a.text for a in io.read_records(work / "out", io_abstract())]
        claims, _, err = run_cli("claims", work / "out", "--out", work / "claims")
        took = time.monotonic() - start
        hidden = sorted({f"U+{ord(c):04X}" for t in texts for c in t if unicodedata.category(c) in ("Cc", "Cf")})
        return (f"ingest exit {code}; seen {stats['seen']}, kept {stats['kept']}, dropped {io.dropped_counts(stats)}; "
                f"control or format characters kept: {hidden}; claims "
                f"exit {claims}; both in {'under 60 s' if took < 60 else f'{took:.0f} s'}; traceback: {'Traceback' in err}")
    return run


def io_abstract():
    from biodivergence_dataset.records import Abstract

    return Abstract


def bom_crlf(fmt: str) -> Callable[[Path], str]:
    """5 real abstracts as JSONL or TSV (with a header) with a UTF-8 byte-order mark and CRLF line ends."""
    def run(work: Path) -> str:
        rows = real_rows()
        if fmt == "jsonl":
            body = "".join(json.dumps(r) + "\r\n" for r in rows)
        else:
            body = "pmid\ttitle\ttext\r\n" + "".join(f"{r['pmid']}\t{r['title']}\t{r['text']}\r\n" for r in rows)
        path = work / f"bom.{fmt}"
        path.write_bytes(b"\xef\xbb\xbf" + body.encode("utf-8"))
        code, _, err = run_cli("ingest", f"{fmt}:{path}", "--out", work / "out", "--domain", "oncology")
        if code:
            return f"exit {code}: {first_error(err)}"
        pmids = sorted(a.pmid for a in io.read_records(work / "out", io_abstract()))
        carriage = any("\r" in a.text or "\ufeff" in a.title + a.text for a in io.read_records(work / "out", io_abstract()))
        return f"exit {code}; {ingest_summary(work / 'out')}; pmids {pmids}; a CR or BOM left in a text: {carriage}"
    return run


# --- a full disk while claims or split write ------------------------------------------------------------------------

def disk_full(command: str) -> Callable[[Path], str]:
    def run(work: Path) -> str:
        import pyarrow.parquet as pq

        if command == "claims":
            assert run_cli("ingest", f"jsonl:{cases.wrong_type_jsonl(work)}", "--out", work / "in", "--domain",
                           "amr")[0] == 0
            args: tuple = ("claims", work / "in", "--out", work / "out")
        else:
            from release_factory import make_splits

            io.write_records(work / "in", [e for split in make_splits().values() for e in split])
            (work / "in" / io.SUCCESS_MARKER).touch()
            args = ("split", work / "in", "--out", work / "out")
        real = pq.write_table

        def failing(*a, **k):
            raise OSError(28, os.strerror(28))

        pq.write_table = failing
        try:
            code, _, err = run_cli(*args)
        finally:
            pq.write_table = real
        finished = (work / "out" / io.SUCCESS_MARKER).exists() if command == "claims" else "n/a"
        again, _, _ = run_cli(*args)
        return (f"exit {code}; stderr: {first_error(err)}; traceback: {'Traceback' in err}; "
                f"marked finished: {finished}; same command with space again: exit {again}")
    return run


# --- impossible option values, build configs with a typo ------------------------------------------------------------

def bad_option(command: str, option: str, value: str) -> Callable[[Path], str]:
    def run(work: Path) -> str:
        source = cases.wrong_type_jsonl(work)
        prefix = {
            "ingest": ("ingest", f"jsonl:{source}", "--out", work / "out"),
            "claims": ("claims", work / "abstracts", "--out", work / "out"),
            "mine": ("mine", work / "claims", "--out", work / "out"),
            "questions": ("questions", work / "claims", "--pack", ROOT / "builder" / "questionpacks" /
                          "cohen2006_drug_classes.yaml", "--out", work / "out"),
            "split": ("split", work / "annotations", "--out", work / "out"),
            "collect": ("collect", "pubmed", "--out", work / "out", "--query", "x[tiab]", "--base-url",
                        "http://127.0.0.1:9/"),
        }[command]
        code, _, err = cli(*prefix, option, value)
        return f"exit {code}: {first_error(err)}; nothing written: {not (work / 'out').exists()}"
    return run


def build_config(body: str, key: str) -> Callable[[Path], str]:
    def run(work: Path) -> str:
        config = work / "build.yaml"
        config.write_text(body.format(source=f"jsonl:{cases.wrong_type_jsonl(work)}"), encoding="utf-8")
        code, _, err = run_cli("build", "--config-file", config, "--out", work / "work")
        lines = err.strip().splitlines()
        return (f"exit {code}: {lines[0][:200] if lines else ''}; {len(lines)} line(s); key {key!r} named: "
                f"{key in err}; work folder made: {(work / 'work').exists()}")
    return run


def option_refused(option: str, why: str) -> str:
    return rf"^exit 1: biodivergence \w+: error: {option}: {why}[^;]*; nothing written: True$"


CASES: list[Case] = [
    Case("61.g", "SIGINT during `ingest` (Cohen, SciFact and PubMedQA abstracts), then the same command",
         "exit 130 saying how to resume; the resumed run's Parquet byte-identical to an uninterrupted run's",
         interrupted("ingest", signal.SIGINT), r"^uninterrupted exit 0; signalled exit 130: interrupted; re-run the "
         r"same command to resume; finished when stopped: False; resumed exit 0; Parquet files \([1-9]\d*\) "
         r"byte-identical: True$"),
    Case("61.g", "SIGTERM during `claims` (5,183 SciFact abstracts), then the same command",
         "exit 143; the resumed run's Parquet byte-identical to an uninterrupted run's",
         interrupted("claims", signal.SIGTERM), r"^uninterrupted exit 0; signalled exit 143: interrupted; re-run the "
         r"same command to resume; finished when stopped: False; resumed exit 0; Parquet files \([1-9]\d*\) "
         r"byte-identical: True$"),
    Case("61.g", "ingest a record with a 50 MB abstract (4 real ones beside it)",
         "the record dropped as too long, the others kept; claims runs; seconds, not minutes",
         text_bomb("50 MB abstract"), r"^ingest exit 0; seen 5, kept 4, dropped \{'too_long': 1\}.*claims exit 0; "
         r"both in under 60 s; traceback: False$"),
    *[Case("61.g", f"ingest a record whose abstract holds {kind}",
           "finished in seconds: no record lost silently, no invisible control character kept; claims runs",
           text_bomb(kind), r"^ingest exit 0; seen 5, kept [45], dropped \{('\w+': 1)?\}; control or format "
           r"characters kept: \[\]; claims exit 0; both in under 60 s; traceback: False$")
      for kind in ("10^6-character word", "20,000 nested brackets", "zero-width and RTL characters", "NUL bytes")],
    Case("61.g", "ingest JSONL with a UTF-8 BOM and CRLF line ends", "every record read, no CR or BOM in a text",
         bom_crlf("jsonl"), r"^exit 0; seen 5, kept 5, dropped \{\}.*faults \[\]; pmids \['700000'.*'700004'\]; "
         r"a CR or BOM left in a text: False$"),
    Case("61.g", "ingest TSV (header pmid/title/text) with a UTF-8 BOM and CRLF line ends",
         "every record read by its header (the BOM not part of 'pmid'), no CR in a text", bom_crlf("tsv"),
         r"^exit 0; seen 5, kept 5, dropped \{\}.*faults \[\]; pmids \['700000'.*'700004'\]; "
         r"a CR or BOM left in a text: False$"),
    Case("61.g", "disk full while claims writes (injected ENOSPC)",
         "exit 1, one line naming the file, not marked finished; the same command then finishes", disk_full("claims"),
         r"^exit 1; stderr: .*No space left on device: out/\S+; traceback: False; marked finished: False; same "
         r"command with space again: exit 0$"),
    Case("61.g", "disk full while split writes the release (injected ENOSPC)",
         "exit 1, one line naming the file; the same command then finishes", disk_full("split"),
         r"^exit 1; stderr: .*No space left on device: out/\S+; traceback: False; marked finished: n/a; same "
         r"command with space again: exit 0$"),
    *[Case("61.g", f"{command} {option} {value}", "exit 1 naming the option, before any work",
           bad_option(command, option, value), option_refused(option, why))
      for command, option, value, why in [
          ("claims", "--min-score", "nan", "Input should be a finite number"),
          ("claims", "--min-score", "inf", "Input should be a finite number"),
          ("claims", "--max-claims-per-abstract", "-3", "Input should be greater than or equal to 1, got -3"),
          ("mine", "--min-combined", "inf", "Input should be a finite number"),
          ("mine", "--min-similarity", "nan", "Input should be a finite number"),
          ("mine", "--top-k", "0", "Input should be greater than or equal to 1, got 0"),
          ("mine", "--cap-per-domain", "-1", "Input should be greater than or equal to 0, got -1"),
          ("ingest", "--min-chars", "-1", "Input should be greater than or equal to 0, got -1"),
          ("questions", "--min-similarity", "nan", "Input should be"),
          ("collect", "--rate", "nan", "Input should be greater than 0, got nan"),
      ]],
    Case("61.g", "ingest --min-domain-score nan (an integer option)", "refused by the parser (usage error, exit 2)",
         bad_option("ingest", "--min-domain-score", "nan"), r"^exit 2: \(argparse usage error.*nothing written: True$"),
    Case("61.g", "split --seed 1.5 (an integer option)", "refused by the parser (usage error, exit 2)",
         bad_option("split", "--seed", "1.5"), r"^exit 2: \(argparse usage error.*nothing written: True$"),
    Case("61.g", "build --config-file with a top-level typo (splti:)", "exit 1, one line naming the file and the key",
         build_config("sources: [{source}]\nsplti: {{seed: 3}}\n", "splti"),
         r"^exit 1: biodivergence build: error: build.yaml: splti: Extra inputs are not permitted; 1 line\(s\); key "
         r"'splti' named: True; work folder made: False$"),
    Case("61.g", "build --config-file with a typo inside a section (ingest: {min_char: 5})",
         "exit 1, one line naming the section and the key",
         build_config("sources: [{source}]\ningest: {{min_char: 5}}\n", "min_char"),
         r"^exit 1: biodivergence build: error: build config section 'ingest': min_char: Extra inputs are not "
         r"permitted; 1 line\(s\); key 'min_char' named: True; work folder made: False$"),
    Case("61.g", "build --config-file that is a YAML list, not a mapping", "exit 1, one line naming the file",
         build_config("- {source}\n", "list"), r"^exit 1: biodivergence build: error: build.yaml: a build config is a "
         r"mapping of sections, got list; 1 line\(s\); key 'list' named: True; work folder made: False$"),
]
