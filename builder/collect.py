"""``biodivergence collect``: fetch abstracts from NCBI E-utilities or Europe PMC REST, resumably.

Queries come from the query packs (``--domain``, optionally ``--group``), ``--query`` (PubMed
syntax; translated for Europe PMC) or a question pack (``--questions PACK``: one query per question, its
``query`` or one built from its terms, collected into the question's domain folder; ``questions.json`` in
the output folder maps each question to its query and the PMIDs or pages it gathered). Raw responses are cached on disk and are what
``biodivergence ingest`` reads; ``sources.yaml`` in the output folder lists them as ingest
sources pinned to their domain. Layout::

    OUT/pubmed/<domain>/efetch-<hash>.xml        efetch bodies (PubmedArticleSet)
    OUT/pubmed/<domain>/state/<query>.json       the query's PMIDs from esearch
    OUT/pubmed/<domain>/state/fetched.jsonl      PMIDs already fetched, per efetch file (append-only, fsync'ed)
    OUT/europepmc/<domain>/<query>-page-NNNNN.json   search pages (resultType=core)
    OUT/europepmc/<domain>/state/<query>.jsonl       one line per saved page: cursor, next cursor, count

PubMed: esearch (``usehistory=y``) lists the PMIDs, efetch downloads them in batches, by history
position when a batch is a contiguous run of the search result, else by posting the ids; ids
already fetched (by any query of the domain) are skipped, so a re-run only fetches what is
missing. Europe PMC: ``cursorMark`` paging with ``pageSize`` up to 1000, resumed from the last
saved page. Requests are rate-limited (NCBI: 3/s, 10/s with an API key; ``NCBI_API_KEY`` is read
from the environment), each bounded by one total deadline (``timeout``), and retried with exponential
back-off on 408, 429, 5xx, timeouts and dropped connections (``Retry-After`` honoured up to ``max_backoff``;
``builder.http``, shared with annotate). Error messages show URLs with ``api_key=***``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from biodivergence_dataset import io
from biodivergence_dataset.arguments import add_config_arguments, config_from_args
from biodivergence_dataset.ontology import DOMAIN_NAMES
from biodivergence_dataset.redact import redact, register_secret

from .domains import PACK_DIR as DOMAIN_PACKS
from .domains import QUERY_GROUPS, load_packs, to_europepmc
from .folders import add_force_argument, claim_output
from .http import Answer, BoundedClient, RequestFailed, RetryPolicy, http_error
from .stage import Opened, Stage, execute

STAGE = "collect"
NCBI_URL = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils/"
EUROPEPMC_URL = "https://www.ebi.ac.uk/europepmc/webservices/rest/"
UNASSIGNED_DIR = "unassigned"
SOURCES_FILE = "sources.yaml"
QUESTIONS_FILE = "questions.json"
_ESEARCH_MAX = 10_000  # PubMed esearch returns at most 10,000 ids per query


class CollectConfig(BaseModel):
    """Parameters of ``biodivergence collect`` (the ``collect:`` section of a build config)."""

    model_config = ConfigDict(extra="forbid")

    api: Literal["pubmed", "europepmc"] = "pubmed"
    groups: list[Literal[QUERY_GROUPS]] = Field(default_factory=lambda: list(QUERY_GROUPS),  # type: ignore[valid-type]
                                                description="query-pack groups to run")
    queries: list[str] = Field(default_factory=list, description="extra queries (PubMed syntax)")
    query_domain: str | None = Field(None, description="domain the extra queries are collected for")
    max_per_query: int = Field(1000, gt=0, description="most records fetched per query")
    batch_size: int = Field(200, gt=0, le=10_000, description="PMIDs per efetch request")
    page_size: int = Field(1000, gt=0, le=1000, description="Europe PMC results per page")
    rate: float | None = Field(None, gt=0, description="requests per second (default: 3, or 10 with an NCBI key)")
    retries: int = Field(5, ge=0, description="retries of a failed request")
    backoff: float = Field(1.0, ge=0, description="first retry delay in seconds, doubled each time")
    max_backoff: float = Field(60.0, ge=0, description="longest retry delay in seconds")
    timeout: float = Field(60.0, gt=0, description="seconds per request")
    email: str | None = Field(None, description="contact e-mail sent to NCBI (recommended by its usage policy)")
    tool: str = Field("biodivergence", description="tool name sent to NCBI")
    api_key: str | None = Field(None, description="NCBI API key (default: $NCBI_API_KEY)")
    base_url: str | None = Field(None, description="service base URL (for mirrors and tests)")
    querypacks: str | None = Field(None, description="folder of query packs (default: the packaged ones)")
    questions: str | None = Field(None, description="question pack YAML: one query per question (its query:, else "
                                                    "its terms); with --domain: the domain of questions that name "
                                                    "none")


# ---------------------------------------------------------------------------------------------
# HTTP with rate limit and retries


class HttpClient:
    """Requests spaced to ``rate`` per second, each within ``timeout`` seconds in all, retried on transient
    failures by the shared retry policy (``builder.http``: ``Retry-After`` honoured up to ``max_backoff``)."""

    def __init__(self, config: CollectConfig, rate: float):
        self._client = BoundedClient(config.timeout, follow_redirects=True,
                                     headers={"User-Agent": f"{config.tool} (biodivergence collect)"})
        self.config, self.interval = config, 1.0 / rate
        self.policy = RetryPolicy(config.backoff, config.max_backoff)
        self._last = 0.0
        self.requests = self.retried = 0

    def request(self, method: str, url: str, **kwargs: Any) -> Answer:
        """The response of a successful request; RuntimeError (URL and secrets redacted) after the last retry."""
        for attempt in range(1, self.config.retries + 2):
            self._wait_turn()
            self.requests += 1
            try:
                response = self._client.request(method, url, **kwargs)
                if response.status_code < 400:
                    return response
                raise http_error(method, response)
            except RequestFailed as exc:  # refused, reset, dropped mid-response, past the deadline, HTTP errors
                if not exc.retryable:
                    raise RuntimeError(f"{exc.detail[:400]}") from None
                problem, delay = exc.reason, exc.retry_after
            if attempt > self.config.retries:
                raise RuntimeError(f"{method} {redact(url)} failed after {attempt} attempts: {problem}")
            self.retried += 1
            self._client.sleep(self.policy.delay(attempt, delay))
        raise AssertionError("unreachable")

    def _wait_turn(self) -> None:
        wait = self._last + self.interval - time.monotonic()
        if wait > 0:
            self._client.sleep(wait)
        self._last = time.monotonic()

    def close(self) -> None:
        self._client.close()


# ---------------------------------------------------------------------------------------------
# collectors


def query_slug(query: str) -> str:
    """A short stable file name for a query."""
    return hashlib.sha1(query.encode("utf-8")).hexdigest()[:12]


class PubMedCollector:
    """esearch (history) + batched efetch into ``<out>/pubmed/<domain>/``, skipping fetched PMIDs."""

    def __init__(self, client: HttpClient, out_dir: Path, config: CollectConfig):
        self.client, self.out_dir, self.config = client, out_dir, config
        self.base = (config.base_url or NCBI_URL).rstrip("/") + "/"
        self.api_key = config.api_key or os.environ.get("NCBI_API_KEY")

    def folder(self, domain: str | None) -> Path:
        return self.out_dir / "pubmed" / (domain or UNASSIGNED_DIR)

    def collect(self, domain: str | None, query: str) -> dict[str, int]:
        folder = self.folder(domain)
        state = folder / "state"
        ledger = state / "fetched.jsonl"
        fetched = {pmid for row in io.read_jsonl(ledger) for pmid in row["ids"]}
        ids_file = state / f"{query_slug(query)}.json"
        cached = json.loads(ids_file.read_text()) if ids_file.exists() else None
        wanted = min(self.config.max_per_query, _ESEARCH_MAX)
        if cached is not None and all(i in fetched for i in cached["ids"]) \
                and len(cached["ids"]) >= min(cached["count"], wanted):
            return {"ids": len(cached["ids"]), "fetched": 0, "skipped": len(cached["ids"])}
        search = self._esearch(query)
        io.write_json_atomic(ids_file, {"query": query, "count": search["count"], "ids": search["ids"]})
        ids = search["ids"]
        todo = [(pos, pmid) for pos, pmid in enumerate(ids) if pmid not in fetched]
        for start in range(0, len(todo), self.config.batch_size):
            batch = todo[start:start + self.config.batch_size]
            body = self._efetch(search, batch)
            batch_ids = [pmid for _, pmid in batch]
            name = f"efetch-{query_slug(','.join(batch_ids))}.xml"
            io.write_text_atomic(folder / name, body)
            io.append_jsonl(ledger, {"file": name, "ids": batch_ids})  # after the body: a kill re-fetches
        return {"ids": len(ids), "fetched": len(todo), "skipped": len(ids) - len(todo)}

    def _params(self, **params: Any) -> dict[str, Any]:
        params = {"db": "pubmed", "tool": self.config.tool, **params}
        if self.config.email:
            params["email"] = self.config.email
        if self.api_key:
            params["api_key"] = self.api_key
        return params

    def _esearch(self, query: str) -> dict[str, Any]:
        retmax = min(self.config.max_per_query, _ESEARCH_MAX)
        response = self.client.request("GET", self.base + "esearch.fcgi", params=self._params(
            term=query, usehistory="y", retmode="json", retmax=retmax, retstart=0))
        try:
            result = response.json()["esearchresult"]
        except (ValueError, KeyError) as exc:
            raise RuntimeError(f"esearch for {query!r}: unexpected response {redact(response.text[:200])!r}") from exc
        if "ERROR" in result:
            raise RuntimeError(f"esearch for {query!r}: {redact(str(result['ERROR']))}")
        return {"count": int(result.get("count", 0)), "ids": list(result.get("idlist", []))[:retmax],
                "webenv": result.get("webenv"), "query_key": result.get("querykey")}

    def _efetch(self, search: dict[str, Any], batch: list[tuple[int, str]]) -> str:
        first = batch[0][0]
        contiguous = [pos for pos, _ in batch] == list(range(first, first + len(batch)))
        if contiguous and search.get("webenv") and search.get("query_key"):
            params = self._params(WebEnv=search["webenv"], query_key=search["query_key"], retstart=first,
                                  retmax=len(batch), retmode="xml", rettype="abstract")
            response = self.client.request("GET", self.base + "efetch.fcgi", params=params)
        else:
            data = self._params(id=",".join(pmid for _, pmid in batch), retmode="xml", rettype="abstract")
            response = self.client.request("POST", self.base + "efetch.fcgi", data=data)
        if "<PubmedArticleSet" not in response.text[:2000]:
            raise RuntimeError(f"efetch returned no PubmedArticleSet: {redact(response.text[:200])!r}")
        return response.text


class EuropePMCCollector:
    """Cursor-paged Europe PMC search into ``<out>/europepmc/<domain>/``, resumed from the last saved page."""

    def __init__(self, client: HttpClient, out_dir: Path, config: CollectConfig):
        self.client, self.out_dir, self.config = client, out_dir, config
        self.base = (config.base_url or EUROPEPMC_URL).rstrip("/") + "/"

    def folder(self, domain: str | None) -> Path:
        return self.out_dir / "europepmc" / (domain or UNASSIGNED_DIR)

    def collect(self, domain: str | None, query: str) -> dict[str, int]:
        folder = self.folder(domain)
        slug = query_slug(query)
        ledger = folder / "state" / f"{slug}.jsonl"
        ledger.parent.mkdir(parents=True, exist_ok=True)
        pages = list(io.read_jsonl(ledger))
        collected = sum(p["count"] for p in pages)
        if pages and pages[-1]["exhausted"] or collected >= self.config.max_per_query:
            return {"ids": collected, "fetched": 0, "skipped": collected}
        cursor, skipped, fetched = (pages[-1]["next_cursor"] if pages else "*"), collected, 0
        epmc_query = to_europepmc(query)
        while collected < self.config.max_per_query:
            size = min(self.config.page_size, self.config.max_per_query - collected)
            response = self.client.request("GET", self.base + "search", params={
                "query": epmc_query, "format": "json", "resultType": "core", "pageSize": size, "cursorMark": cursor})
            try:
                page = response.json()
                results = page["resultList"]["result"]
            except (ValueError, KeyError, TypeError) as exc:
                raise RuntimeError(f"Europe PMC search {epmc_query!r}: unexpected response "
                                   f"{redact(response.text[:200])!r}") from exc
            next_cursor = page.get("nextCursorMark")
            exhausted = not results or not next_cursor or next_cursor == cursor
            number = len(pages) + 1
            if results:
                io.write_text_atomic(folder / f"{slug}-page-{number:05d}.json", response.text)
            collected += len(results)
            fetched += len(results)
            entry = {"page": number, "cursor": cursor, "next_cursor": next_cursor, "count": len(results),
                     "exhausted": exhausted}
            io.append_jsonl(ledger, entry)
            pages.append(entry)
            cursor = next_cursor
            if exhausted:
                break
        return {"ids": collected, "fetched": fetched, "skipped": skipped}


# ---------------------------------------------------------------------------------------------
# stage


def planned_queries(domains: list[str], config: CollectConfig) -> list[tuple[str | None, str]]:
    """``(domain, query)`` to run: the chosen groups of each domain's pack, then the extra queries."""
    packs = load_packs(config.querypacks) if domains else {}
    unknown = [d for d in domains if d not in packs]
    if unknown:
        raise ValueError(f"no query pack for {unknown}; packs exist for {list(packs)}")
    plan = [(d, q) for d in domains for _, q in packs[d].queries(config.groups)]
    return plan + [(config.query_domain, q) for q in config.queries] + \
        [(domain, query) for _, domain, query in question_queries(config)]


def question_queries(config: CollectConfig) -> list[tuple[str, str | None, str]]:
    """``(question id, domain, query)`` of each question of ``config.questions`` (none without a pack)."""
    if not config.questions:
        return []
    from .questionpacks import load_questions, search_query

    return [(q.question_id, q.domain or config.query_domain, search_query(q)) for q in load_questions(config.questions)]


def open_stage(domains: list[str], out_dir: Path, config: CollectConfig) -> Opened:
    if not planned_queries(list(domains), config):
        raise ValueError("nothing to collect: give --domain, --query or --questions")
    params = {"domains": list(domains), "config": config.model_dump(exclude={"api_key", "email"}),
              "questions": question_queries(config)}
    out_dir = claim_output(out_dir, STAGE)  # never into a folder of the user's: its files would be overwritten
    return Opened(STAGE, config, [], out_dir, params, extra={"domains": list(domains)})


def data_files(config: CollectConfig) -> list[Path]:
    """The query packs (each domain's query) and the question pack, if any."""
    return [Path(config.querypacks) if config.querypacks else DOMAIN_PACKS,
            *([Path(config.questions)] if config.questions else [])]


def work(opened: Opened, runtime: Any) -> io.StageStats:
    """Collect the planned queries; the stage folder is opened (manifest naming the folders written) at the end."""
    config, out_dir = opened.config, opened.out
    plan, asked = planned_queries(opened.extra["domains"], config), opened.params["questions"]
    api_key = config.api_key or os.environ.get("NCBI_API_KEY")
    register_secret(config.api_key)  # a key given on the command line is masked as one from the environment is
    rate = config.rate or (10.0 if config.api == "pubmed" and api_key else 3.0)
    client = HttpClient(config, rate)
    collector = (PubMedCollector if config.api == "pubmed" else EuropePMCCollector)(client, out_dir, config)
    stats = io.StageStats(STAGE, unit="records")  # identifiers found; kept: fetched
    by_query: dict[tuple[str | None, str], dict[str, int]] = {}
    try:
        from tqdm import tqdm

        for domain, query in tqdm(plan, desc=f"collect {config.api}", unit=" queries", disable=None):
            result = by_query[(domain, query)] = collector.collect(domain, query)
            stats.seen += result["ids"]
            stats.kept += result["fetched"]
            stats.count("fetched_by_domain", domain or UNASSIGNED_DIR, result["fetched"])
            stats.count("already_fetched_by_domain", domain or UNASSIGNED_DIR, result["skipped"])
            if result["skipped"]:
                stats.drop("already_fetched", result["skipped"])
    finally:
        client.close()
    stats.figures.update({"api": config.api, "queries": len(plan), "requests": client.requests,
                          "retries": client.retried})
    if asked:
        stats.figures["questions"] = len(asked)
        for qid, domain, query in asked:
            stats.count("records_by_question", qid, by_query[(domain, query)]["ids"])
        io.write_json_atomic(out_dir / QUESTIONS_FILE, [
            {"question_id": qid, "domain": domain, "query": query, "slug": query_slug(query),
             "folder": str(collector.folder(domain)), "records": by_query[(domain, query)]["ids"]}
            for qid, domain, query in asked])
    folders = sorted({collector.folder(d) for d, _ in plan})
    sources = [_ingest_source(config.api, folder) for folder in folders if folder.exists()]
    replace(opened, inputs=[str(f) for f in folders]).begin()
    io.write_text_atomic(out_dir / SOURCES_FILE, "".join(f"- {json.dumps(s)}\n" for s in sources))
    return stats


stage = Stage(STAGE, CollectConfig, open_stage, work, reads=(), writes="collected", module=__name__,
              data_files=data_files, begins_itself=True)


def run_stage(domains: list[str], out_dir: str | Path, config: CollectConfig | dict | None = None) -> dict:
    """Collect the queries of ``domains`` (and ``config.queries``) into ``out_dir``; returns the stats."""
    return execute(stage, domains, out_dir, config)


def _ingest_source(api: str, folder: Path) -> str:
    """The ingest source for a collected folder, pinned to its domain."""
    fmt = "pubmed_xml" if api == "pubmed" else "europepmc_json"
    pin = f"@{folder.name}" if folder.name in DOMAIN_NAMES else ""
    return f"{fmt}:{folder}{pin}"


# ---------------------------------------------------------------------------------------------
# CLI


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("api", choices=["pubmed", "europepmc"], help="which service to query")
    parser.add_argument("--out", required=True, help="output folder (raw response cache; re-run to resume)")
    parser.add_argument("--domain", action="append", default=[], choices=DOMAIN_NAMES,
                        help="run this domain's query pack (repeatable); with --query: the queries' domain")
    add_config_arguments(parser, CollectConfig, skip=("api", "query_domain"),
                         aliases={"groups": "--group", "queries": "--query"}, options={"questions": {"metavar": "PACK"}})
    add_force_argument(parser)


def run(args: argparse.Namespace) -> int:
    if (args.queries or args.questions) and len(args.domain) > 1:
        raise ValueError("--query and --questions take at most one --domain (the domain the queries are for)")
    config = config_from_args(CollectConfig, args, api=args.api,
                              query_domain=args.domain[0] if (args.queries or args.questions) and args.domain else None)
    domains = [] if args.queries or args.questions else args.domain
    if args.force:
        claim_output(args.out, STAGE, force=True)
    stats = run_stage(domains, args.out, config)
    print(json.dumps({k: stats.get(k) for k in ("seen", "kept", "requests", "retries")}, indent=2))
    print(f"ingest with: biodivergence ingest --sources-file {Path(args.out) / SOURCES_FILE} --out DIR")
    return 0
