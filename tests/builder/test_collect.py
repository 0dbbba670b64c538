"""``biodivergence collect`` against a local HTTP server on 127.0.0.1 that replays real responses.

E-utilities: esearch lists the PMIDs of the READ-BioMed MEDLINE files; efetch answers with those
real ``PubmedArticle`` elements (by history position or posted ids). Europe PMC: the real search
results of the pyEuropePMC fixtures (25 ``core`` results, then the 1000 ``lite`` ones), paged by
cursor. The server can answer 429, 5xx or drop the connection, and counts what it is asked.
"""

from __future__ import annotations

import base64
import json
import re
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from repo_paths import SHARED_DATA

from biodivergence_dataset import io
from biodivergence_dataset.records import Abstract
from builder.collect import CollectConfig, HttpClient, run_stage
from builder.folders import claim_output
from builder.ingest import IngestConfig, read_sources_file
from builder.ingest import run_stage as ingest
from builder.sources.raw_records import open_binary

READBIOMED = SHARED_DATA / "readbiomed_pathogens_medline" / "manual-set" / "articles-xml-format"
EPMC = SHARED_DATA / "europepmc_pyeuropepmc_fixtures"


class Replay:
    """State and fault plan of the replay server."""

    def __init__(self):
        self.articles: dict[str, bytes] = {}
        for path in sorted(READBIOMED.glob("*.xml.gz")):
            with open_binary(path) as fh:
                data = fh.read()
            chunk = data[data.index(b"<PubmedArticle>"):data.rindex(b"</PubmedArticle>") + len(b"</PubmedArticle>")]
            pmid = re.search(rb"<PMID[^>]*>(\d+)</PMID>", chunk).group(1).decode()
            self.articles[pmid] = chunk
        self.ids = list(self.articles)
        core = json.loads((EPMC / "search_cancer_core.json").read_text())
        lite = json.loads((EPMC / "search_1000results_cancer.json").read_text())
        self.epmc_envelope = {k: v for k, v in core.items() if k != "resultList"}
        self.epmc_results = core["resultList"]["result"] + lite["resultList"]["result"]
        self.requests: Counter = Counter()
        self.faults: dict[tuple[str, int], str] = {}  # (endpoint, n-th request) -> "429" | "503" | "drop"
        self.fail_after: dict[str, int] = {}  # endpoint -> successes after which every request gets 500
        self.successes: Counter = Counter()
        self.efetch_ids: list[str] = []
        self.cursors: list[str] = []

    def reset(self) -> None:
        self.requests.clear(), self.successes.clear(), self.faults.clear(), self.fail_after.clear()
        self.efetch_ids.clear(), self.cursors.clear()


def make_handler(state: Replay):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # keep pytest output clean
            pass

        def do_GET(self):
            url = urlparse(self.path)
            self._serve(url.path.rsplit("/", 1)[-1], {k: v[0] for k, v in parse_qs(url.query).items()})

        def do_POST(self):
            url = urlparse(self.path)
            body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
            self._serve(url.path.rsplit("/", 1)[-1], {k: v[0] for k, v in parse_qs(body).items()})

        def _serve(self, endpoint: str, params: dict[str, str]):
            state.requests[endpoint] += 1
            fault = state.faults.get((endpoint, state.requests[endpoint]))
            if fault == "drop":  # close the connection without any response
                self.close_connection = True
                return
            if fault in ("429", "503"):
                return self._send(int(fault), b"slow down", "text/plain", {"Retry-After": "0"})
            if endpoint in state.fail_after and state.successes[endpoint] >= state.fail_after[endpoint]:
                return self._send(500, b"server error", "text/plain")
            state.successes[endpoint] += 1
            if endpoint == "esearch.fcgi":
                ids = state.ids[: int(params.get("retmax", 20))]
                body = {"esearchresult": {"count": str(len(state.ids)), "retmax": str(len(ids)), "retstart": "0",
                                          "querykey": "1", "webenv": "MCID_replay", "idlist": ids}}
                return self._send(200, json.dumps(body).encode(), "application/json")
            if endpoint == "efetch.fcgi":
                if "id" in params:
                    ids = params["id"].split(",")
                else:
                    start = int(params["retstart"])
                    ids = state.ids[start:start + int(params["retmax"])]
                state.efetch_ids.extend(ids)
                body = b'<?xml version="1.0" ?>\n<PubmedArticleSet>\n' + b"\n".join(
                    state.articles[i] for i in ids if i in state.articles) + b"\n</PubmedArticleSet>\n"
                return self._send(200, body, "text/xml")
            if endpoint == "search":
                cursor = params.get("cursorMark", "*")
                state.cursors.append(cursor)
                offset = 0 if cursor == "*" else int(base64.b64decode(cursor))
                page = state.epmc_results[offset:offset + int(params.get("pageSize", 25))]
                end = offset + len(page)
                nxt = base64.b64encode(str(end).encode()).decode() if end < len(state.epmc_results) else cursor
                body = {**state.epmc_envelope, "nextCursorMark": nxt, "resultList": {"result": page}}
                return self._send(200, json.dumps(body).encode(), "application/json")
            return self._send(404, b"unknown endpoint", "text/plain")

        def _send(self, status: int, body: bytes, kind: str, headers: dict | None = None):
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)

    return Handler


@pytest.fixture(scope="module")
def server():
    state = Replay()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(state))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield state, f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


def fast(url: str, **overrides) -> CollectConfig:
    return CollectConfig(base_url=url, rate=1000, backoff=0.01, retries=2, email="test@example.org", **overrides)


def test_pubmed_collect_retries_and_resumes(server, tmp_path):
    state, url = server
    state.reset()
    out = tmp_path / "raw"
    config = fast(url, api="pubmed", groups=["broad_recall"], batch_size=20)
    # first run: a 429 on esearch, a dropped connection on efetch, then the server fails for good
    state.faults.update({("esearch.fcgi", 1): "429", ("efetch.fcgi", 2): "drop"})
    state.fail_after["efetch.fcgi"] = 2
    with pytest.raises(RuntimeError, match="efetch.fcgi failed after 3 attempts: HTTP 500"):
        run_stage(["infectious_disease"], out, config)
    assert state.requests["esearch.fcgi"] == 2 and state.requests["efetch.fcgi"] == 6
    first_ids = list(state.efetch_ids)
    assert len(first_ids) == 40 and len(set(first_ids)) == 40
    assert len(list((out / "pubmed" / "infectious_disease").glob("efetch-*.xml"))) == 2
    assert not io.is_done(out)

    # second run: only the 47 missing PMIDs are fetched; later queries of the pack fetch nothing
    state.reset()
    stats = run_stage(["infectious_disease"], out, config)
    assert set(state.efetch_ids).isdisjoint(first_ids) and len(state.efetch_ids) == 87 - 40
    assert state.requests["esearch.fcgi"] == 14 and state.requests["efetch.fcgi"] == 3
    assert stats["kept"] == 47 and stats["requests"] == 17
    assert stats["already_fetched_by_domain"]["infectious_disease"] == 40 + 13 * 87
    assert stats["seen"] == stats["kept"] + stats["dropped_total"]

    # third run: the stage is current, nothing is requested
    state.reset()
    assert run_stage(["infectious_disease"], out, config) == json.loads(json.dumps(stats))
    assert sum(state.requests.values()) == 0

    # the cache is what ingest reads: 87 articles, 85 with an abstract, pinned to the pack's domain
    sources = read_sources_file(out / "sources.yaml")
    assert sources == [f"pubmed_xml:{out / 'pubmed' / 'infectious_disease'}@infectious_disease"]
    result = ingest(sources, tmp_path / "abstracts", IngestConfig(progress=False))
    assert result["seen"] == 87 and result["kept"] == 85 and io.dropped_counts(result) == {"no_abstract": 2}
    assert {a.domain for a in io.read_records(tmp_path / "abstracts", Abstract)} == {"infectious_disease"}


def test_pubmed_partial_batches_post_ids(server, tmp_path):
    state, url = server
    state.reset()
    out = claim_output(tmp_path / "raw", "collect")  # an earlier run of collect, stopped after one batch
    ledger = out / "pubmed" / "genomics" / "state" / "fetched.jsonl"
    ledger.parent.mkdir(parents=True)
    io.append_jsonl(ledger, {"file": "earlier.xml", "ids": state.ids[::2]})  # every other PMID already fetched
    stats = run_stage([], out, fast(url, api="pubmed", queries=["measles[tiab]"], query_domain="genomics",
                                    batch_size=50))
    assert sorted(state.efetch_ids) == sorted(state.ids[1::2]) and stats["kept"] == 43
    assert state.requests["efetch.fcgi"] == 1  # one POST of 43 scattered ids


def test_europepmc_cursor_paging_with_faults_and_resume(server, tmp_path):
    state, url = server
    state.reset()
    out = tmp_path / "raw"
    config = fast(url, api="europepmc", queries=['"Neoplasms"[MeSH] AND cancer[tiab]'], query_domain="oncology",
                  max_per_query=100, page_size=25)
    state.faults.update({("search", 2): "503", ("search", 3): "drop"})
    state.fail_after["search"] = 2
    with pytest.raises(RuntimeError, match="failed after 3 attempts"):
        run_stage([], out, config)
    folder = out / "europepmc" / "oncology"
    assert len(list(folder.glob("*-page-*.json"))) == 2

    state.reset()
    stats = run_stage([], out, config)
    assert state.requests["search"] == 2 and state.cursors[0] != "*"  # resumed at page 3's cursor
    assert stats["kept"] == 50 and io.dropped_counts(stats) == {"already_fetched": 50} and stats["seen"] == 100
    pages = sorted(folder.glob("*-page-*.json"))
    assert len(pages) == 4
    first = json.loads(pages[0].read_text())
    assert first["resultList"]["result"][0]["pmid"] == "39709209"

    result = ingest(read_sources_file(out / "sources.yaml"), tmp_path / "abstracts", IngestConfig(progress=False))
    assert result["seen"] == 100 and result["kept"] == 21 and result["by_domain"] == {"oncology": 21}

    state.reset()  # a larger limit continues from the last cursor instead of starting over
    more = run_stage([], out, config.model_copy(update={"max_per_query": 150}))
    assert state.requests["search"] == 2 and more["kept"] == 50 and len(list(folder.glob("*-page-*.json"))) == 6


def test_http_client_rate_limit_and_retry_after(server):
    state, url = server
    state.reset()
    state.faults[("search", 1)] = "429"
    client = HttpClient(fast(url), rate=25)
    start = time.monotonic()
    for _ in range(4):
        client.request("GET", url + "search", params={"query": "x", "pageSize": 1})
    elapsed = time.monotonic() - start
    client.close()
    assert client.requests == 5 and client.retried == 1
    assert elapsed >= 4 * (1 / 25) * 0.9  # five requests, at least 1/25 s apart


def test_collect_cli_and_query_plan_errors(server, tmp_path, capsys):
    from biodivergence_cli.main import main

    state, url = server
    state.reset()
    code = main(["collect", "pubmed", "--out", str(tmp_path / "o"), "--query", "tuberculosis[tiab]",
                 "--domain", "infectious_disease", "--base-url", url, "--rate", "1000", "--max-per-query", "10"])
    assert code == 0 and json.loads(capsys.readouterr().out.split("\ningest with")[0])["kept"] == 10
    with pytest.raises(ValueError, match="nothing to collect"):
        run_stage([], tmp_path / "none", fast(url))


def test_collect_questions_gathers_each_question_with_its_own_query(server, tmp_path, capsys):
    from biodivergence_cli.main import main

    state, url = server
    state.reset()
    pack = tmp_path / "pack.yaml"
    pack.write_text('questions:\n  - {id: a, text: "Do statins reduce blood pressure?"}\n'
                    '  - {id: b, text: "Is olanzapine as safe as risperidone?", query: "olanzapine[tiab]"}\n')
    out = tmp_path / "o"
    code = main(["collect", "pubmed", "--out", str(out), "--questions", str(pack), "--domain",
                 "clinical_trials_epidemiology", "--base-url", url, "--rate", "1000", "--max-per-query", "4"])
    assert code == 0 and state.requests["esearch.fcgi"] == 2
    asked = json.loads((out / "questions.json").read_text())
    assert [(q["question_id"], q["query"], q["records"]) for q in asked] == [
        ("a", '"statins"[tiab] AND "blood pressure"[tiab]', 4), ("b", "olanzapine[tiab]", 4)]
    assert all(Path(q["folder"]).name == "clinical_trials_epidemiology" for q in asked)
    stats = json.loads((out / "stats.json").read_text())
    assert stats["records_by_question"] == {"a": 4, "b": 4} and stats["questions"] == 2
    assert "clinical_trials_epidemiology" in (out / "sources.yaml").read_text()


def test_collect_refuses_a_folder_of_the_users_and_force_moves_it_aside(server, tmp_path, capsys):
    """A folder holding the user's own files (named as collect names its outputs) is refused, byte for byte
    untouched; ``--force`` moves it aside whole and collects into a new one; a re-run resumes in collect's own."""
    from biodivergence_cli.main import main

    state, url = server
    state.reset()
    out = tmp_path / "mine"
    out.mkdir()
    theirs = {name: f"the user's {name}\n" for name in ("manifest.json", "stats.json", "sources.json",
                                                        "questions.json")}
    for name, text in theirs.items():
        (out / name).write_text(text, encoding="utf-8")
    argv = ["collect", "pubmed", "--out", str(out), "--query", "tuberculosis[tiab]", "--domain",
            "infectious_disease", "--base-url", url, "--rate", "1000", "--max-per-query", "10"]
    assert main(argv) != 0
    assert f"{out} is not the output of any stage" in capsys.readouterr().err
    assert {p.name: p.read_text(encoding="utf-8") for p in out.iterdir()} == theirs
    assert main([*argv, "--force"]) == 0
    aside = [p for p in tmp_path.iterdir() if p.name.startswith("mine.aside")]
    assert len(aside) == 1 and {p.name: p.read_text(encoding="utf-8") for p in aside[0].iterdir()} == theirs
    assert (out / io.SUCCESS_MARKER).exists() and main(argv) == 0
