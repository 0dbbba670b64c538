"""Issue 61's faults in what the user hands in (first part): question packs (61.14), gather on a corpus it cannot
read (61.15), a release's README.md that is no card (61.16), output folders that hold or are links to inputs (61.17).
Each input is built in the scratch folder from ../shared/data or the shipped question pack."""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path

import yaml
from faultlib import REFUSED, ROOT, Case, cases, first_error, run_cli, write_small_release

from biodivergence_dataset import io

SHIPPED_PACK = ROOT / "builder" / "questionpacks" / "cohen2006_drug_classes.yaml"
#: One well-formed entry taken from the shipped pack (its first question).
ENTRY = next(line.strip()[2:] for line in SHIPPED_PACK.read_text(encoding="utf-8").splitlines()
             if line.strip().startswith("- {id:"))


def alias_bomb() -> str:
    """A pack whose first id is nine levels of nine aliases (9**9 strings if rendered)."""
    levels = ['l0: &l0 ["lol"]'] + [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 9)]
    return "\n".join(levels) + f"\nquestions:\n  - {{id: *l8, text: {json.dumps(yaml.safe_load(ENTRY)['text'])}}}\n"


#: name → the pack's bytes (each derived from the shipped pack's first entry).
PACKS: dict[str, Callable[[], bytes]] = {
    "string": lambda: f"questions:\n  - {json.dumps(ENTRY)}\n".encode(),
    "list": lambda: b"questions:\n  - [acei_hf_mortality, heart failure]\n",
    "bomb": lambda: alias_bomb().encode(),
    "latin1": lambda: f"# r\xe9sum\xe9 of the reviews\nquestions:\n  - {ENTRY}\n".encode("latin-1"),
    "tab": lambda: f"questions:\n\t- {ENTRY}\n".encode(),
    "unclosed": lambda: f"questions:\n  - {ENTRY[:-1]}\n".encode(),
    "duplicate": lambda: f"questions:\n  - {ENTRY}\n  - {ENTRY}\n".encode(),
    "no_text": lambda: b"questions:\n  - {id: acei_hf_mortality}\n",
    "unknown_field": lambda: f"questions:\n  - {ENTRY[:-1]}, txet: typo}}\n".encode(),
    "empty": lambda: b"",
}


def pack_case(kind: str, command: str) -> Callable[[Path], str]:
    """``questions CLAIMS --pack P`` or ``collect pubmed --questions P`` (an unreachable base URL: the pack is read
    first) with the pack ``kind`` (``folder``: a directory given as the pack)."""
    def run(work: Path) -> str:
        pack = work / f"{kind}.yaml"
        if kind == "folder":
            pack.mkdir()
        else:
            pack.write_bytes(PACKS[kind]())
        if command == "questions":
            args = ("questions", work / "claims", "--pack", pack, "--out", work / "out")
        else:
            args = ("collect", "pubmed", "--out", work / "out", "--questions", pack, "--base-url", "http://127.0.0.1:9/")
        start = time.monotonic()
        code, _, err = run_cli(*args)
        took = time.monotonic() - start
        lines = err.strip().splitlines()
        return (f"exit {code} in {'under 5 s' if took < 5 else f'{took:.0f} s'}; {len(lines)} line, "
                f"{len(err.strip())} chars: {err.strip()[:300]}; value rendered: {'lol' in err}; "
                f"traceback: {'Traceback' in err}")
    return run


#: A one-line refusal naming the pack file (the tmp path is cut by the runner).
def one_line(name: str, what: str) -> str:
    return (r"^exit 1 in under 5 s; 1 line, [1-3]?\d\d chars: biodivergence \w+: error: (question pack )?"
            rf"{name}\.yaml[: ].*{what}.*; value rendered: False; traceback: False$")


# --- 61.15: gather on a corpus without a word it reads -----------------------------------------------------------

GREEK = str.maketrans("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
                      "αβψδεφγηιξκλμνοπϙρστθωςχυζΑΒΨΔΕΦΓΗΙΞΚΛΜΝΟΠϘΡΣΤΘΩΣΧΥΖ")


def foreign_corpus(work: Path, script: str) -> Path:
    """Real Europe PMC abstracts with every Latin letter written in Greek, or every word replaced by CJK + emoji."""
    results = [r for r in json.loads(cases.EPMC_CORE.read_text(encoding="utf-8"))["resultList"]["result"]
               if r.get("abstractText")][:12]

    def convert(text: str) -> str:
        if script == "greek":
            return text.translate(GREEK)
        return " ".join("研究" + chr(0x1F600 + len(word) % 40) for word in text.split())

    rows = [{"pmid": str(800000 + i), "title": convert(r["title"]), "text": convert(r["abstractText"])}
            for i, r in enumerate(results)]
    path = work / f"{script}.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def gather_foreign(script: str) -> Callable[[Path], str]:
    def run(work: Path) -> str:
        from builder import gather

        code, _, err = run_cli("ingest", f"jsonl:{foreign_corpus(work, script)}", "--out", work / "abstracts",
                               "--domain", "oncology", "--min-chars", "10")
        if code:
            return f"ingest exit {code}: {first_error(err)}"
        warnings: list[str] = []
        handler = logging.Handler()
        handler.emit = lambda record: warnings.append(record.getMessage())  # type: ignore[method-assign]
        logging.getLogger("builder.gather").addHandler(handler)
        try:
            stats = gather.run_stage(work / "abstracts", work / "gathered", gather.GatherConfig(pack=str(SHIPPED_PACK)))
        finally:
            logging.getLogger("builder.gather").removeHandler(handler)
        retrieved = (work / "gathered" / gather.RETRIEVED_FILE).read_text().count("\n")
        return (f"gather: seen {stats['seen']}, kept {stats['kept']}, dropped {io.dropped_counts(stats)}, "
                f"{retrieved} rows in retrieved.jsonl; warned: {' / '.join(warnings)[:200]}")
    return run


# --- 61.16: a README.md that is no card ---------------------------------------------------------------------------

def broken_readme(kind: str) -> Callable[[Path], str]:
    def run(work: Path) -> str:
        release = write_small_release(work / "release")
        readme = release / "README.md"
        text = readme.read_text(encoding="utf-8")
        body = text[text.index("\n---", 4) + 4:]
        if kind == "list":
            readme.write_text("---\n- configs\n- license\n---" + body, encoding="utf-8")
        elif kind == "invalid":
            readme.write_text("---\nconfigs: [{config_name: primary\nlicense: [\n---" + body, encoding="utf-8")
        elif kind == "latin1":
            readme.write_bytes(text.replace("---\n", "---\npretty_name: Biodivergence r\xe9sum\xe9\n", 1)
                               .encode("latin-1", "replace"))
        else:
            readme.unlink()
            os.mkfifo(readme)
        observed = []
        for args in (("validate", "--release", release),
                     ("push", "--release", release, "--repo", "org/biodivergence", "--tag", "v1.0", "--dry-run")):
            result: dict = {}
            thread = threading.Thread(target=lambda a=args, r=result: r.update(r=run_cli(*a)), daemon=True)
            thread.start()
            thread.join(30)
            if "r" not in result:
                observed.append(f"{args[0]} still running after 30 s")
                continue
            code, out, err = result["r"]
            errors = [line for line in (out + err).splitlines() if line.startswith("error:") or ": error:" in line]
            observed.append(f"{args[0]} exit {code} (returned within 30 s), {len(errors)} error line: "
                            f"{' / '.join(errors)[:160]}; traceback: {'Traceback' in out + err}")
        return "; ".join(observed)
    return run


def readme_refused(what: str) -> str:
    one = rf"1 error line: error: release/README.md: {what}; traceback: False"
    return rf"^validate exit 1 \(returned within 30 s\), {one}; push exit 1 \(returned within 30 s\), {one}$"


# --- 61.17: output folders that hold, or link to, the input ---------------------------------------------------------

def out_holds_input(command: str) -> Callable[[Path], str]:
    """``split PARENT/annotations --out PARENT --force`` (or ``claims PARENT/abstracts --out PARENT --force``),
    PARENT also holding a file of the user's."""
    def run(work: Path) -> str:
        parent = work / "mine"
        if command == "split":
            source = parent / "annotations"
            io.write_records(source, [])
        else:
            source = parent / "abstracts"
            code, _, err = run_cli("ingest", f"jsonl:{cases.wrong_type_jsonl(work)}", "--out", source, "--domain", "amr")
        (parent / "notes.txt").write_text("the user's\n")
        before = cases.folder_bytes(parent)
        code, _, err = run_cli(command, source, "--out", parent, "--force")
        moved = sorted(p.name for p in work.glob("mine.aside*"))
        return (f"exit {code}: {first_error(err)}; folder unchanged: {cases.folder_bytes(parent) == before}; "
                f"moved aside: {moved}")
    return run


def symlinked(kind: str) -> Callable[[Path], str]:
    """ingest through a symlink: the input file is one, --out is one, or an input folder holds one."""
    def run(work: Path) -> str:
        source = cases.wrong_type_jsonl(work)
        out, spec = work / "out", f"jsonl:{source}"
        if kind == "input":
            (work / "link.jsonl").symlink_to(source)
            spec = f"jsonl:{work / 'link.jsonl'}"
        elif kind == "out":
            (work / "target").mkdir()
            out.symlink_to(work / "target")
        else:
            (work / "folder").mkdir()
            shutil.copy(source, work / "folder" / "a.jsonl")
            (work / "folder" / "b.jsonl").symlink_to(source)
            spec = f"jsonl:{work / 'folder'}"
        code, _, err = run_cli("ingest", spec, "--out", out, "--domain", "amr")
        if code:
            return f"exit {code}: {first_error(err)}"
        where = (f"; written into the link's target: {(work / 'target' / io.SUCCESS_MARKER).exists()}, "
                 f"link kept: {out.is_symlink()}") if kind == "out" else ""
        stats = io.read_stats(out)
        return f"exit {code}; seen {stats['seen']}, kept {stats['kept']}, dropped {io.dropped_counts(stats)}{where}"
    return run



CASES: list[Case] = [
    *[Case("61.14", f"{command} with a question pack {what}", "exit 1, one short line naming the file and entry",
           pack_case(kind, command), one_line(kind, message))
      for command, kind, what, message in [
          ("questions", "string", "entry that is a plain string", r"question 1: expected a mapping .*got str"),
          ("collect", "list", "entry that is a list", r"question 1: expected a mapping .*got list"),
          ("questions", "bomb", "id that is a billion-laughs alias bomb", r"question 1: id: "),
          ("collect", "latin1", "file in Latin-1 (not UTF-8)", r"not UTF-8 text \(byte \d+\)"),
          ("questions", "folder", "that is a directory", r"is a folder, not a YAML file"),
          ("collect", "tab", "indented with a tab", r"not valid YAML: found character '\\t'.* at line 2"),
          ("questions", "unclosed", "entry with an unclosed brace", r"not valid YAML: expected ',' or '}'.* at line"),
          ("collect", "duplicate", "with the same id twice", r"question 2 \('acei_hf_mortality'\): duplicate id"),
          ("questions", "no_text", "entry without its text", r"question 1 \('acei_hf_mortality'\): text: Field requ"),
          ("questions", "unknown_field", "entry with an unknown field (txet)", r"question 1 .*txet: Extra inputs"),
          ("collect", "empty", "file that is empty", r"a question pack is a mapping with a non-empty 'questions:'"),
      ]],
    Case("61.15", "gather over real abstracts written in Greek letters (no Latin-script word)",
         "no ZeroDivisionError: nothing retrieved, and a warning says so", gather_foreign("greek"),
         r"^gather: seen 12, kept 0, dropped \{'not_retrieved': 12\}, 0 rows in retrieved.jsonl; warned: gather: no "
         r"question retrieved any of the 12 abstracts"),
    Case("61.15", "gather over abstracts whose words are CJK + emoji", "nothing retrieved, and a warning says so",
         gather_foreign("cjk"), r"^gather: seen 12, kept 0, .*0 rows in retrieved.jsonl; warned: gather: no question"),
    Case("61.16", "validate / push --dry-run, README.md header a YAML list",
         "both exit 1 with one line naming README.md", broken_readme("list"),
         readme_refused("the YAML header is a list, not a mapping")),
    Case("61.16", "validate / push --dry-run, README.md header invalid YAML", "both exit 1, one line naming README.md",
         broken_readme("invalid"), readme_refused(r"the YAML header does not parse \(\w+\)")),
    Case("61.16", "validate / push --dry-run, README.md in Latin-1", "both exit 1, one line naming README.md",
         broken_readme("latin1"), readme_refused("not UTF-8 text")),
    Case("61.16", "validate / push --dry-run, README.md a FIFO (os.mkfifo)",
         "both return at once (no hang), exit 1 naming README.md", broken_readme("fifo"),
         readme_refused("not a regular file")),
    Case("61.17", "split PARENT/annotations --out PARENT --force", "refused naming the input; nothing moved",
         out_holds_input("split"),
         REFUSED + r".*--out mine holds the input mine/annotations.*folder unchanged: True; moved aside: \[\]$"),
    Case("61.17", "claims PARENT/abstracts --out PARENT --force", "refused naming the input; nothing moved",
         out_holds_input("claims"),
         REFUSED + r".*--out mine holds the input mine/abstracts.*folder unchanged: True; moved aside: \[\]$"),
    Case("61.17", "ingest jsonl:LINK, LINK a symlink to a JSONL file", "read as the file it names, nothing lost",
         symlinked("input"), r"^exit 0; seen 5, kept 3, dropped \{'malformed': 2\}"),
    Case("61.17", "ingest --out LINK, LINK a symlink to an empty folder",
         "written into the folder it names, the link left in place", symlinked("out"),
         r"^exit 0; seen 5, kept 3, .*written into the link's target: True, link kept: True$"),
    Case("61.17", "ingest a folder holding a.jsonl and b.jsonl, a symlink to the same records",
         "each record kept once (the link's copies reported as duplicates)", symlinked("inside"),
         r"^exit 0; seen 10, kept 3, dropped \{'duplicate_pmid': 3, 'malformed': 4\}"),
]
