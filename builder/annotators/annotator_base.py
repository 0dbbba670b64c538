"""Annotator specs, the HTTP chat-backend base class, and lenient JSON parsing.

A spec names the annotator on the command line:
``reader[:PATH]`` | ``frames`` | ``heuristic`` | ``judge:PATH`` | ``openai:URL?model=NAME[&temperature=T&max_tokens=N]`` |
``ollama:URL?model=NAME[...]``.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from biodivergence_dataset.redact import redact, register_url_secrets

from ..http import BoundedClient, RequestFailed, RetryPolicy, http_error

#: Annotators that label pairs in-process (no server); ``judge`` takes the path of a saved judge.
LOCAL_BACKENDS = ("reader", "frames", "heuristic", "judge")
LLM_BACKENDS = ("openai", "ollama")
BACKENDS = LOCAL_BACKENDS + LLM_BACKENDS
#: Query parameters a spec may carry besides ``model`` (all optional).
SPEC_OPTIONS = ("temperature", "max_tokens", "seed", "response_format")


@dataclass(frozen=True)
class AnnotatorSpec:
    """A parsed ``--annotator`` value."""

    backend: str
    url: str = ""
    model: str = ""
    options: dict[str, str] = field(default_factory=dict)

    @property
    def is_llm(self) -> bool:
        return self.backend in LLM_BACKENDS

    def __str__(self) -> str:
        """The spec as written, credentials redacted: what a release, a log or an error names the annotator by."""
        if self.backend in ("frames", "heuristic"):
            return self.backend
        if self.backend in ("judge", "reader") and self.url:
            return f"{self.backend}:{redact(self.url)}"
        if self.backend == "reader":
            return self.backend
        query = "&".join(f"{k}={v}" for k, v in {"model": self.model, **self.options}.items())
        return redact(f"{self.backend}:{self.url}?{query}")


def parse_spec(text: str) -> AnnotatorSpec:
    """Parse ``reader[:PATH]`` / ``frames`` / ``heuristic`` / ``judge:PATH`` / ``openai:URL?model=NAME`` /
    ``ollama:URL?model=NAME`` (ValueError otherwise)."""
    text = text.strip()
    backend, _, rest = text.partition(":")
    register_url_secrets(rest)  # a server that echoes the URL's user and password is masked too
    shown = redact(text)
    if backend not in BACKENDS:
        raise ValueError(f"unknown annotator {shown!r}; expected one of: reader[:PATH], frames, heuristic, judge:PATH, "
                         "openai:URL?model=NAME, ollama:URL?model=NAME")
    if backend in ("frames", "heuristic"):
        if rest:
            raise ValueError(f"the {backend} annotator takes no parameters: {shown!r}")
        return AnnotatorSpec(backend)
    if backend == "reader":
        return AnnotatorSpec(backend, url=rest)
    if backend == "judge":
        if not rest:
            raise ValueError(f"annotator {shown!r}: add the judge folder, judge:PATH")
        return AnnotatorSpec(backend, url=rest)
    parts = urlsplit(rest)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"annotator {shown!r}: expected an http(s) URL after '{backend}:'")
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    model = query.pop("model", "")
    if not model:
        raise ValueError(f"annotator {shown!r}: add ?model=NAME")
    unknown = set(query) - set(SPEC_OPTIONS)
    if unknown:
        raise ValueError(f"annotator {shown!r}: unknown option(s) {sorted(unknown)}; allowed: {list(SPEC_OPTIONS)}")
    url = urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))
    return AnnotatorSpec(backend, url, model, query)


class LocalAnnotator:
    """Base of the in-process annotators (frames, heuristic, judge): ``annotate_many`` labels a batch;
    annotators backed by a batched model override it."""

    def annotate_many(self, pairs: list) -> list:
        return [self.annotate(p) for p in pairs]


#: One failed request (``kind``: unreachable | timeout | http_error | bad_response); the HTTP layer's error.
BackendError = RequestFailed


class ServerUnreachable(RuntimeError):
    """The annotation server cannot be reached at all: the run stops (and can be resumed later)."""


@dataclass
class Completion:
    """The text a backend returned for one request, with the wall time it took."""

    content: str
    elapsed_s: float
    started: float


#: The longest chat answer read (a chat answer is a few kB; a server that sends more is not read whole or kept).
MAX_ANSWER_BYTES = 4 * 1024 * 1024


class ChatBackend:
    """Base for HTTP chat backends: one POST per attempt, errors mapped to :class:`BackendError`."""

    provider = ""
    health_path = ""
    chat_path = ""

    def __init__(self, spec: AnnotatorSpec, timeout_s: float = 120.0, max_tokens: int = 512,
                 temperature: float = 0.0, max_answer_bytes: int = MAX_ANSWER_BYTES):
        self.spec = spec
        self.url, self.model = spec.url, spec.model
        self.temperature = float(spec.options.get("temperature", temperature))
        self.max_tokens = int(spec.options.get("max_tokens", max_tokens))
        self.seed = int(spec.options["seed"]) if "seed" in spec.options else None
        self.timeout_s = timeout_s
        self._client = BoundedClient(timeout_s, max_body_bytes=max_answer_bytes)

    @property
    def annotator_id(self) -> str:
        return f"{self.provider}:{self.model}"

    def settings(self) -> dict[str, Any]:
        """Backend settings recorded in provenance.json."""
        return {"provider": self.provider, "url": redact(self.url), "model": self.model, "temperature": self.temperature,
                "max_tokens": self.max_tokens, "seed": self.seed, "timeout_s": self.timeout_s}

    def close(self) -> None:
        self._client.close()

    def cancel(self) -> None:
        """Abandon the requests in flight and send no more (Ctrl-C / SIGTERM)."""
        self._client.cancel()

    def sleep(self, seconds: float) -> None:
        """Back off before another attempt, unless cancelled (``builder.http.Cancelled``)."""
        self._client.sleep(seconds)

    def _request(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        answer = self._client.request(method, self.url + path, json=body)
        if answer.status_code >= 400:
            raise http_error(method, answer)
        try:
            return answer.json()
        except (ValueError, RecursionError) as exc:  # RecursionError: JSON nested deeper than Python parses
            raise BackendError("bad_response", f"server answer is not JSON: {redact(answer.text[:300])!r}") from exc

    def check(self, attempts: int = 1, policy: RetryPolicy | None = None) -> None:
        """Preflight: the server answers; raises ServerUnreachable (or RuntimeError) otherwise. A busy server
        (429 / 503, any retryable failure) is asked up to ``attempts`` times, waiting as ``policy`` says (its
        ``Retry-After`` honoured up to the policy's cap)."""
        policy = policy or RetryPolicy()
        for attempt in range(1, attempts + 1):
            try:
                listing = self._request("GET", self.health_path)
                break
            except BackendError as exc:
                if attempt == attempts or not exc.retryable:
                    raise ServerUnreachable(f"{self.provider} server at {redact(self.url)} is not usable ({exc}); "
                                            "start it, then re-run the same command to resume") from exc
                self.sleep(policy.delay(attempt, exc.retry_after))
        self._check_model(listing)

    def _check_model(self, listing: Any) -> None:
        """Subclasses may verify that the model is served."""

    def complete(self, messages: list[dict[str, str]], schema: dict[str, Any]) -> Completion:
        """Send one chat request; return the answer text (BackendError on any failure)."""
        started = time.time()
        t0 = time.perf_counter()
        data = self._request("POST", self.chat_path, self.body(messages, schema))
        content = self.extract(data)
        return Completion(content, time.perf_counter() - t0, started)

    def body(self, messages: list[dict[str, str]], schema: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def extract(self, data: Any) -> str:
        raise NotImplementedError


_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


def parse_json_lenient(text: str) -> dict[str, Any]:
    """The JSON object in a model answer: tolerates code fences, prose around it, raw newlines in
    strings and trailing commas. ValueError when there is no JSON object."""
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for candidate in candidates:
        start, end = candidate.find("{"), candidate.rfind("}")
        if start < 0 or end <= start:
            continue
        chunk = candidate[start:end + 1]
        for attempt in (chunk, _TRAILING_COMMA.sub(r"\1", chunk)):
            try:
                value = json.loads(attempt, strict=False)
            except (json.JSONDecodeError, RecursionError):  # nested deeper than Python parses: no answer
                continue
            if isinstance(value, dict):
                return value
    raise ValueError(f"no JSON object in the answer: {text[:200]!r}")
