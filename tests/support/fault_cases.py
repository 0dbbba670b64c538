"""Bad inputs of the fault probe (issue 14), built in a scratch folder from the real files in ../shared/data.

Shared by ``tests/builder/test_faults.py`` (which asserts on each case) and ``benchmarks/faults.py`` (which
runs each case through the CLI and writes the fault table). Nothing here copies a shared record
into the repository: every file is derived at run time.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from repo_paths import SHARED_DATA

PUBMED_XML = SHARED_DATA / "pubmed_xml_ncbiutils" / "pubmed.xml"  # 5 articles
EPMC_CORE = SHARED_DATA / "europepmc_pyeuropepmc_fixtures" / "search_cancer_core.json"  # 25 core results
CORD19 = SHARED_DATA / "cord19_metadata_sample_coronawhy" / "test_metadata.csv"


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


#: Secrets planted by the leak probe (issue 29): one in an annotator URL, three in the environment.
URL_SECRET = "sk-SECRET-planted-in-the-url-0123456789"
ENV_SECRETS = {"NCBI_API_KEY": "ncbi0planted0key0123456789", "OPENAI_API_KEY": "sk-openai-planted-0123456789",
               "HF_TOKEN": "hf_plantedHubToken0123456789"}
PLANTED = (URL_SECRET, *ENV_SECRETS.values())


@contextmanager
def secret_environment() -> Iterator[None]:
    """The planted environment secrets set for the block (the environment restored after it)."""
    import os

    saved = {name: os.environ.get(name) for name in ENV_SECRETS}
    os.environ.update(ENV_SECRETS)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def files_holding_secrets(root: Path) -> dict[str, list[str]]:
    """Planted secret → the files under ``root`` that hold it (a ``grep -r`` for each)."""
    found: dict[str, list[str]] = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        for secret in PLANTED:
            if secret.encode() in data:
                found.setdefault(secret, []).append(str(path.relative_to(root)))
    return found


def plant_credential(release_dir: Path, secret: str) -> Path:
    """A ``provenance.json`` in the release that names an annotator URL holding ``secret`` (as older code wrote it)."""
    path = release_dir / "provenance.json"
    path.write_text(json.dumps({"annotator": ["openai"], "backend": {"url": secret}}, indent=2), encoding="utf-8")
    return path


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


class FakeHub:
    """A Hub on 127.0.0.1 (``with FakeHub() as hub``, then ``HF_ENDPOINT=hub.endpoint``) that keeps what it is sent.

    It answers what ``HfApi`` sends for a push (``list_repo_refs``, ``create_repo``, ``upload_folder``'s
    tree listing, preupload and commit, ``create_tag``) and what a download asks for at a revision
    (``HEAD``/``GET /[datasets/|spaces/]ORG/NAME/resolve/REV/PATH``, as ``hf_hub_download`` and
    ``evaluate.load('ORG/NAME', revision=...)`` request them). Every file is a regular blob sent inline
    in the commit. ``fail_status``: every call but reading the refs answers that status (refs: 404).
    ``upload_folder`` also posts a README's YAML header to ``/api/validate-yaml``. ``requests`` records ``(method, path)`` of every call.
    """

    def __init__(self, fail_status: int | None = None):
        self.fail_status = fail_status
        self.repos: dict[tuple[str, str], dict] = {}  # (type, id) -> {"commits": {oid: files}, "main": oid, "tags": {}}
        self.requests: list[tuple[str, str]] = []

    # --- state ------------------------------------------------------------------------------------

    def files(self, repo_type: str, repo_id: str, revision: str = "main") -> dict[str, bytes]:
        repo = self.repos[(repo_type, repo_id)]
        oid = repo["tags"].get(revision) or (repo["main"] if revision == "main" else revision)
        return repo["commits"].get(oid, {})

    def _commit(self, repo: dict, body: bytes) -> str:
        import base64
        import hashlib

        files = dict(repo["commits"].get(repo["main"], {}))
        for line in body.splitlines():
            item = json.loads(line)
            if item["key"] == "file":
                files[item["value"]["path"]] = base64.b64decode(item["value"]["content"])
            elif item["key"] == "deletedFile":
                files.pop(item["value"]["path"], None)
            elif item["key"] != "header":
                raise ValueError(f"fake Hub: unsupported commit item {item['key']}")
        oid = hashlib.sha1(repr((repo["main"], sorted(files.items()))).encode()).hexdigest()
        repo["commits"][oid] = files
        repo["main"] = oid
        return oid

    # --- HTTP -------------------------------------------------------------------------------------

    def answer(self, method: str, path: str, body: bytes) -> tuple[int, dict, bytes]:
        """(status, headers, body) for one request."""
        import re
        from urllib.parse import unquote, urlsplit

        path = unquote(urlsplit(path).path)
        api = re.match(r"^/api/(model|dataset|space)s/([^/]+/[^/]+)/(refs|tree|preupload|commit|tag)(?:/([^/]+))?", path)
        key = (api.group(1), api.group(2)) if api else None
        if api and api.group(3) == "refs" and key not in self.repos:
            return 404, {"X-Error-Code": "RepoNotFound"}, b'{"error": "Repository not found"}'
        if self.fail_status is not None:
            return self.fail_status, {}, b'{"error": "boom"}'
        if method == "POST" and path == "/api/validate-yaml":  # upload_folder checks a README's YAML header
            import yaml

            content = json.loads(body)["content"]
            try:
                yaml.safe_load(content.split("---", 2)[1] if content.startswith("---") else "")
            except yaml.YAMLError as exc:
                return 400, {}, json.dumps({"errors": [{"message": str(exc)}], "warnings": []}).encode()
            return 200, {}, b'{"errors": [], "warnings": []}'
        if method == "POST" and path == "/api/repos/create":
            req = json.loads(body)
            kind = req.get("type") or "model"
            repo_id = f"{req['organization']}/{req['name']}" if req.get("organization") else req["name"]
            url = f"{self.endpoint}/{'' if kind == 'model' else kind + 's/'}{repo_id}"
            if (kind, repo_id) in self.repos:
                return 409, {}, json.dumps({"error": "You already created this repo", "url": url}).encode()
            self.repos[(kind, repo_id)] = {"commits": {}, "main": None, "tags": {}, "create": req}
            return 200, {}, json.dumps({"url": url}).encode()
        if api:
            if key not in self.repos:
                return 404, {"X-Error-Code": "RepoNotFound"}, b'{"error": "Repository not found"}'
            repo, action, rev = self.repos[key], api.group(3), api.group(4)
            if action == "refs":
                tags = [{"name": t, "ref": f"refs/tags/{t}", "targetCommit": oid} for t, oid in repo["tags"].items()]
                branches = [{"name": "main", "ref": "refs/heads/main", "targetCommit": repo["main"]}] if repo["main"] else []
                return 200, {}, json.dumps({"branches": branches, "converts": [], "tags": tags}).encode()
            if action == "tree":
                files = self.files(*key, rev or "main")
                return 200, {}, json.dumps([{"type": "file", "path": p, "size": len(d), "oid": "0" * 40}
                                            for p, d in sorted(files.items())]).encode()
            if action == "preupload":
                paths = [f["path"] for f in json.loads(body)["files"]]
                return 200, {}, json.dumps({"files": [{"path": p, "uploadMode": "regular", "shouldIgnore": False}
                                                      for p in paths]}).encode()
            if action == "commit":
                oid = self._commit(repo, body)
                url = f"{self.endpoint}/{key[0]}s/{key[1]}/commit/{oid}"
                return 200, {}, json.dumps({"commitUrl": url, "commitOid": oid, "pullRequestUrl": None}).encode()
            if action == "tag":
                tag = json.loads(body)["tag"]
                if tag in repo["tags"]:
                    return 409, {}, b'{"error": "tag exists"}'
                repo["tags"][tag] = repo["main"] if rev == "main" else rev
                return 200, {}, b"{}"
        download = re.match(r"^/(?:(dataset|space)s/)?([^/]+/[^/]+)/resolve/([^/]+)/(.+)$", path)
        if download and method in ("GET", "HEAD"):
            key = (download.group(1) or "model", download.group(2))
            if key not in self.repos:
                return 404, {"X-Error-Code": "RepoNotFound"}, b'{"error": "Repository not found"}'
            repo, rev = self.repos[key], download.group(3)
            oid = repo["tags"].get(rev) or (repo["main"] if rev == "main" else rev)
            data = repo["commits"].get(oid, {}).get(download.group(4))
            if data is None:
                return 404, {"X-Error-Code": "EntryNotFound"}, b'{"error": "Entry not found"}'
            import hashlib

            return 200, {"ETag": f'"{hashlib.sha1(data).hexdigest()}"', "X-Repo-Commit": oid,
                         "Content-Type": "application/octet-stream"}, data
        return 404, {}, b'{"error": "not served by the fake Hub"}'

    def __enter__(self) -> FakeHub:  # noqa: PYI034 (typing.Self needs Python 3.11; we support 3.10)
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        hub = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                hub.requests.append((self.command, self.path))
                status, headers, data = hub.answer(self.command, self.path, body)
                self.send_response(status)
                headers.setdefault("Content-Type", "application/json")
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _answer

            def log_message(self, *args) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()


@contextmanager
def failing_hub(create_status: int = 500) -> Iterator[str]:
    """A Hub on 127.0.0.1 where the repo does not exist yet and every other call answers ``create_status``."""
    with FakeHub(fail_status=create_status) as hub:
        yield hub.endpoint


def folder_bytes(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` with its content, to show that a folder did not change."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# --- issue 29: folders, bad values, OS errors (folders29) ---------------------------------------------

#: A structured abstract long enough to pass ingest's filters; ``{n}`` makes each record distinct.
ABSTRACT = ("Background: colistin resistance rose in hospitals of the region during the study period. Results: "
            "resistance increased significantly among isolates from intensive care units in {n} hospitals.")


def wrong_type_jsonl(root: Path, n: int = 5) -> Path:
    """JSONL records in the Abstract schema; record 2 has ``"title": 123`` and record 3 ``"mesh_terms": 5``."""
    rows = [{"pmid": str(i + 1), "title": f"Study {i + 1}", "text": ABSTRACT.format(n=i + 2)} for i in range(n)]
    rows[1]["title"], rows[2]["mesh_terms"] = 123, 5
    path = root / "wrong_types.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def at_sign_folder(root: Path) -> Path:
    """A folder whose name holds an ``@`` that is not a domain suffix (``in/user@host``), with one JSONL file."""
    folder = root / "in" / "user@host"
    folder.mkdir(parents=True)
    (folder / "a.jsonl").write_text(json.dumps({"pmid": "1", "title": "T", "text": ABSTRACT.format(n=2)}) + "\n",
                                    encoding="utf-8")
    return folder


def user_folder(root: Path) -> Path:
    """A folder of the user's own files: Parquet, JSON, another ``excluded-*.parquet``, a README and a config-like
    subfolder (what ``--out`` must not touch)."""
    folder = root / "theirs"
    (folder / "primary").mkdir(parents=True)
    for name, data in {"mine.parquet": b"PAR1 user data", "notes.json": b'{"keep": true}', "README.md": b"# mine\n",
                       "excluded-00000.parquet": b"PAR1 other", "primary/mynotes.txt": b"do not delete\n"}.items():
        (folder / name).write_bytes(data)
    return folder


def tampered_judge(root: Path) -> Path:
    """A judge folder whose weights file is cut short (its settings and config intact)."""
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    folder = root / "judge"
    folder.mkdir()
    vocab = folder / "vocab.txt"
    vocab.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\ncolistin\nresistance\n")
    BertTokenizerFast(vocab_file=str(vocab)).save_pretrained(folder)
    config = BertConfig(vocab_size=7, hidden_size=8, num_hidden_layers=1, num_attention_heads=1, intermediate_size=8,
                        num_labels=2)
    BertForSequenceClassification(config).save_pretrained(folder)
    (folder / "judge_config.json").write_text(json.dumps({"base_model": "tiny", "trained_on": ["scifact"]}))
    weights = folder / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:200])
    return folder


def change_a_number_in_the_card(release_dir: Path) -> tuple[int, str, str]:
    """Add 20 to the first number of the card's body (after the YAML header), as a hand edit would; returns the
    1-based line number, the line as the card had it and as it reads now."""
    import re

    readme = release_dir / "README.md"
    lines = readme.read_text(encoding="utf-8").splitlines()
    body = lines.index("---", 1) + 1
    n = next(i for i, line in enumerate(lines) if i > body and re.search(r"\b\d+\b", line))
    before = lines[n]
    lines[n] = re.sub(r"\b(\d+)\b", lambda m: str(int(m.group(1)) + 20), before, count=1)
    readme.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return n + 1, before, lines[n]
