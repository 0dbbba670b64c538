"""``biodivergence reader read FILE``: how the reader and the answerer read sentences a user gives.

FILE holds JSONL rows ``{"question": ..., "text": ...}`` (``-``: standard input); each row is written back, all
its keys kept, with the finding read relative to the question (``finding``, ``finding_probs``), the answer to the
question as written (``answer``: yes / no, ``neutral`` only for a text that does not speak to it;
``answer_probs``) and the probability that the text reports a result on the question (``relevance``).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from biodivergence_dataset.io import write_text_atomic

from .answerer import QuestionAnswerer
from .model import FindingReader

FIELDS = ("question", "text")


def read_rows(lines: Iterable[str], name: str) -> Iterator[dict[str, Any]]:
    """The JSONL rows of ``name``; ValueError naming the file and line for a row that is not an object with a
    string ``question`` and ``text``."""
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{name} line {n}: not JSON ({exc.msg})") from None
        if not isinstance(row, dict) or not all(isinstance(row.get(k), str) and row[k].strip() for k in FIELDS):
            raise ValueError(f"{name} line {n}: expected an object with non-empty string fields {list(FIELDS)}")
        yield row


def read_sentences(rows: list[dict[str, Any]], reader: FindingReader, answerer: QuestionAnswerer) -> list[dict]:
    """Each row with the reader's finding and the answerer's answer to its question added."""
    pairs = [(r["question"], r["text"]) for r in rows]
    readings, answers = reader.read(pairs), answerer.read(pairs)
    return [{**row, "finding": rd.finding, "finding_probs": rd.finding_probs, **ans.as_dict()}
            for row, rd, ans in zip(rows, readings, answers, strict=True)]


def run_read(path: str, out: str | None, load: Callable[[], tuple[FindingReader, QuestionAnswerer]],
             stdin: IO[str] | None = None) -> int:
    """Read ``path`` (``-``: standard input), write the rows to ``out`` (atomically) or standard output; the
    networks (``load``) are loaded only once every row has been read and found well formed."""
    if path == "-":
        rows = list(read_rows(stdin or sys.stdin, "<stdin>"))
    else:
        file = Path(path)
        if not file.is_file():
            raise FileNotFoundError(f"{file}: no such file (expected JSONL rows {{question, text}})")
        with open(file, encoding="utf-8") as fh:
            rows = list(read_rows(fh, str(file)))
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in read_sentences(rows, *load()))
    if out:
        write_text_atomic(Path(out), text)
    else:
        sys.stdout.write(text)
    return 0
