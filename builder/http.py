"""HTTP for annotate's LLM backends and collect: one wall-clock deadline per request, cancellation on
interrupt, and one retry policy (exponential back-off, ``Retry-After`` honoured up to a cap).

httpx's timeouts bound each read, not the request: a server that trickles one byte a second never trips
them. :class:`BoundedClient` runs each request in a daemon thread that reads the body in chunks and gives
up once the deadline has passed, while the caller waits at most until the deadline (or until
:meth:`BoundedClient.cancel`), so a request costs at most its deadline whatever the server does. After
``cancel()`` (Ctrl-C, SIGTERM) waiting requests fail at once with :class:`Cancelled` and no request or
back-off sleep starts any more. Error messages name URLs redacted (``biodivergence_dataset.redact``).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from biodivergence_dataset.redact import redact

#: Statuses worth another attempt (the server is busy or failed transiently).
RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})


class Cancelled(Exception):
    """The run was interrupted: the request was abandoned and no other is sent."""


class RequestFailed(Exception):
    """One failed request: ``kind`` is unreachable | timeout | http_error | bad_response; ``detail`` names the request and
    ``reason`` what went wrong; ``retry_after`` is the server's ``Retry-After`` in seconds when it sent one."""

    def __init__(self, kind: str, detail: str, status: int | None = None, retry_after: float | None = None,
                 reason: str = ""):
        super().__init__(f"{kind}: {detail}")
        self.kind, self.detail, self.status, self.retry_after = kind, detail, status, retry_after
        self.reason = reason or detail

    @property
    def retryable(self) -> bool:
        return self.kind != "http_error" or self.status in RETRY_STATUS


@dataclass(frozen=True)
class RetryPolicy:
    """How long to wait before attempt ``n + 1``: the server's ``Retry-After`` when it sent one, else
    ``backoff_s · 2^(n-1)``; never more than ``max_backoff_s``."""

    backoff_s: float = 1.0
    max_backoff_s: float = 60.0

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        wanted = retry_after if retry_after is not None else self.backoff_s * 2 ** (attempt - 1)
        return max(0.0, min(wanted, self.max_backoff_s))


def retry_after_s(headers: httpx.Headers) -> float | None:
    """A ``Retry-After`` header in seconds (delta-seconds or an HTTP date); None when absent or unreadable."""
    value = headers.get("Retry-After")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


@dataclass
class Answer:
    """A whole response, read before the deadline."""

    status_code: int
    headers: httpx.Headers
    content: bytes
    url: str

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")

    def json(self) -> Any:
        import json

        return json.loads(self.content)


class _Call:
    """One request in flight: its thread fills ``answer`` or ``error`` and sets ``done``."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.answer: Answer | None = None
        self.error: BaseException | None = None


class BoundedClient:
    """An httpx client whose requests each end within ``deadline_s`` seconds (connect, send and the whole body)
    and, with ``max_body_bytes``, read no longer answer than that (a failed request of kind ``bad_response``)."""

    def __init__(self, deadline_s: float, max_body_bytes: int | None = None, **client_args: Any):
        self.deadline_s, self.max_body_bytes = deadline_s, max_body_bytes
        self._client = httpx.Client(timeout=httpx.Timeout(deadline_s), **client_args)
        self._cancelled = threading.Event()
        self._lock = threading.Lock()
        self._calls: set[_Call] = set()

    @property
    def headers(self) -> httpx.Headers:
        return self._client.headers

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def cancel(self) -> None:
        """Abandon the requests in flight (they raise :class:`Cancelled`) and refuse new ones and sleeps."""
        self._cancelled.set()
        with self._lock:
            calls = list(self._calls)
        for call in calls:
            call.done.set()

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` unless cancelled first (:class:`Cancelled`)."""
        if self._cancelled.wait(seconds):
            raise Cancelled("interrupted")

    def request(self, method: str, url: str, **kwargs: Any) -> Answer:
        """The whole response within the deadline; :class:`RequestFailed` (timeout, unreachable) or
        :class:`Cancelled` otherwise. HTTP error statuses are returned, not raised."""
        if self._cancelled.is_set():
            raise Cancelled("interrupted")
        call, deadline = _Call(), time.monotonic() + self.deadline_s
        with self._lock:
            self._calls.add(call)
        threading.Thread(target=self._run, args=(call, deadline, method, url, kwargs), daemon=True,
                         name="bounded-request").start()
        try:
            finished = call.done.wait(self.deadline_s)
        finally:
            with self._lock:
                self._calls.discard(call)
        if self._cancelled.is_set():
            raise Cancelled("interrupted")
        where = f"{method} {redact(url)}"
        if not finished or isinstance(call.error, httpx.TimeoutException):
            reason = f"no whole answer within {self.deadline_s:g}s"
            raise RequestFailed("timeout", f"{where}: {reason}", reason=reason)
        if isinstance(call.error, httpx.TransportError):
            reason = f"{type(call.error).__name__}: {redact(str(call.error))}"
            raise RequestFailed("unreachable", f"{where}: {reason}", reason=reason)
        if call.error is not None:
            raise call.error
        assert call.answer is not None
        return call.answer

    def _run(self, call: _Call, deadline: float, method: str, url: str, kwargs: dict[str, Any]) -> None:
        try:
            with self._client.stream(method, url, **kwargs) as response:
                chunks, size = [], 0
                for chunk in response.iter_bytes():
                    if time.monotonic() > deadline or self._cancelled.is_set():
                        return  # the caller has given up: stop reading
                    size += len(chunk)
                    if self.max_body_bytes is not None and size > self.max_body_bytes:
                        reason = f"answer longer than {self.max_body_bytes} bytes"
                        call.error = RequestFailed("bad_response", f"{method} {redact(url)}: {reason}", reason=reason)
                        return
                    chunks.append(chunk)
                call.answer = Answer(response.status_code, response.headers, b"".join(chunks), str(response.url))
        except Exception as exc:  # noqa: BLE001 (re-raised in the caller's thread)
            call.error = exc
        finally:
            call.done.set()

    def close(self) -> None:
        self._client.close()


def http_error(method: str, answer: Answer) -> RequestFailed:
    """The :class:`RequestFailed` for an error status (the body's start and the URL redacted)."""
    reason = f"HTTP {answer.status_code}: {redact(answer.text[:300])}"
    return RequestFailed("http_error", f"{method} {redact(answer.url)}: {reason}", status=answer.status_code,
                         retry_after=retry_after_s(answer.headers), reason=reason)
