"""Bad inputs of the fault probe (issue 14), built in a scratch folder from the real files in ../shared/data.

Shared by ``tests/test_faults.py`` (which asserts on each case) and ``benchmarks/faults.py`` (which
runs each case through the CLI and writes the fault table). Nothing here copies a shared record
into the repository: every file is derived at run time.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
PUBMED_XML = DATA / "pubmed_xml_ncbiutils" / "pubmed.xml"  # 5 articles
EPMC_CORE = DATA / "europepmc_pyeuropepmc_fixtures" / "search_cancer_core.json"  # 25 core results
CORD19 = DATA / "cord19_metadata_sample_coronawhy" / "test_metadata.csv"


def article_offsets(data: bytes) -> list[int]:
    """Byte offsets of the ``<PubmedArticle>`` start tags."""
    out, i = [], data.find(b"<PubmedArticle>")
    while i >= 0:
        out.append(i)
        i = data.find(b"<PubmedArticle>", i + 1)
    return out


def empty_jsonl(root: Path) -> Path:
    path = root / "empty.jsonl"
    path.write_bytes(b"")
    return path


def half_article_gz(root: Path) -> Path:
    """A .xml.gz holding only the first article of pubmed.xml, cut in half."""
    data = PUBMED_XML.read_bytes()
    first, second = article_offsets(data)[:2]
    path = root / "half.xml.gz"
    path.write_bytes(gzip.compress(data[:first + (second - first) // 2]))
    return path


def truncated_epmc(root: Path, keep: int = 10) -> Path:
    """A Europe PMC core response cut in the middle of result ``keep + 1``."""
    text = EPMC_CORE.read_text(encoding="utf-8")
    results = json.loads(text)["resultList"]["result"]
    start = text.index(f'"id": "{results[keep]["id"]}"')
    path = root / "truncated.json"
    path.write_text(text[:start + 200], encoding="utf-8")
    return path


def unclosed_title_xml(root: Path) -> Path:
    """pubmed.xml whose third article breaks off inside ``<ArticleTitle>``; the fourth follows."""
    data = PUBMED_XML.read_bytes()
    offsets = article_offsets(data)
    title = data.index(b"</ArticleTitle>", offsets[2])
    path = root / "unclosed.xml"
    path.write_bytes(data[:title] + b"\n" + data[offsets[3]:])
    return path


def conflicting_jsonl(root: Path, n: int = 3) -> tuple[Path, Path]:
    """Two JSONL files with the same ``n`` PMIDs and different abstracts (taken from Europe PMC results)."""
    results = [r for r in json.loads(EPMC_CORE.read_text(encoding="utf-8"))["resultList"]["result"]
               if r.get("abstractText")]
    paths = []
    for name, offset in (("a.jsonl", 0), ("b.jsonl", n)):
        rows = [{"pmid": str(900000 + i), "title": results[offset + i]["title"],
                 "text": results[offset + i]["abstractText"]} for i in range(n)]
        path = root / name
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        paths.append(path)
    return paths[0], paths[1]


def headerless_tsv(root: Path, rows: int = 5) -> Path:
    """CORD-19 rows as a TSV without a header: pmid, title, abstract."""
    import csv

    with CORD19.open(encoding="utf-8-sig", newline="") as fh:
        records = [r for r in csv.DictReader(fh) if r["abstract"] and r["pubmed_id"]][:rows]
    path = root / "noheader.tsv"
    path.write_text("".join(f"{r['pubmed_id']}\t{r['title']}\t{' '.join(r['abstract'].split())}\n" for r in records),
                    encoding="utf-8")
    return path


def two_shard_release(root: Path) -> Path:
    """A small release whose pairlevel train split has two shards."""
    from release_factory import make_splits

    from biodivergence_dataset import card, release

    splits = make_splits()
    release.write_config(root, "primary", splits)
    release.write_config(root, "pairlevel", splits, shard_rows=4)
    card.write_card(root)
    return root


def release_missing_shard(root: Path) -> Path:
    """The two-shard release with ``pairlevel/train-00001-of-00002.parquet`` deleted."""
    release_dir = two_shard_release(root)
    (release_dir / "pairlevel" / "train-00001-of-00002.parquet").unlink()
    return release_dir


def release_truncated_shard(root: Path) -> Path:
    """The two-shard release with its first pairlevel train shard cut in half."""
    release_dir = two_shard_release(root)
    shard = release_dir / "pairlevel" / "train-00000-of-00002.parquet"
    shard.write_bytes(shard.read_bytes()[: shard.stat().st_size // 2])
    return release_dir


def partial_predictions(root: Path, release_dir: Path, bad_line: int | None = None) -> Path:
    """Predictions (gold labels, last reference first) for all but the first reference of primary/test;
    ``bad_line``: that line predicts an unknown conflict type."""
    from biodivergence_dataset.release import iter_examples

    refs = list(iter_examples(release_dir, "primary", "test"))[1:][::-1]
    rows = [{"pair_id": ex.pair_id, "conflict_type": ex.conflict_type, "divergence_axes": ex.divergence_axes}
            for ex in refs]
    if bad_line is not None:
        rows[bad_line - 1]["conflict_type"] = "clash"
    path = root / "preds.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@contextmanager
def failing_hub(create_status: int = 500) -> Iterator[str]:
    """A Hub on 127.0.0.1 where the dataset repo does not exist yet and every other call answers ``create_status``."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            missing = self.path.startswith("/api/datasets/") and "/refs" in self.path
            status, body = (404, b'{"error": "Repository not found"}') if missing else (create_status, b'{"error": "boom"}')
            self.send_response(status)
            if missing:
                self.send_header("X-Error-Code", "RepoNotFound")
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _answer

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def folder_bytes(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` with its content, to show that a folder did not change."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}
