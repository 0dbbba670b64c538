"""Fixtures of the issue-61 fault cases and ``tests/builder/test_secrets.py``: a scripted HTTP server, whose every answer is
decided by a function of the request, so a case can echo what the client sent (a 401 body quoting the URL's user and
password, NCBI's ``API key invalid`` quoting the key), close the connection without answering, or answer a body no
fixture of ``llm_server`` sends (JSON nested 100,000 deep); and a token planted in a release in a given encoding."""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from llm_server import QuietServer, valid_answer


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    at: float = field(default_factory=time.monotonic)

    @property
    def basic_auth(self) -> str:
        """``user:password`` of a Basic Authorization header ('' without one)."""
        value = self.headers.get("Authorization", "")
        return base64.b64decode(value[6:]).decode("utf-8", "replace") if value.startswith("Basic ") else ""

    def json(self) -> Any:
        return json.loads(self.body or b"{}")


#: ``(status, headers, body)``, or None to close the connection without an answer.
Answer = "tuple[int, dict[str, str], bytes] | None"


def json_answer(status: int, payload: Any, **headers: str) -> tuple[int, dict[str, str], bytes]:
    return status, {"Content-Type": "application/json", **headers}, json.dumps(payload).encode()


def chat_completion(content: str) -> tuple[int, dict[str, str], bytes]:
    """An OpenAI chat completion carrying ``content``."""
    return json_answer(200, {"id": "chatcmpl-1", "object": "chat.completion", "model": "m", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]})


def openai(chat: Callable[[Request, int], Any] | None = None,
           health: Callable[[Request], Any] | None = None) -> Callable[[Request, int], Any]:
    """An OpenAI-compatible server: ``GET …/models`` lists model ``m`` (or ``health``'s answer), ``POST
    …/chat/completions`` gets ``chat(request, n)`` (n counts chat requests from 1), by default a valid answer."""
    def answer(request: Request, n: int) -> Any:
        if request.method == "GET" and request.path.endswith("/models"):
            return health(request) if health else json_answer(200, {"object": "list", "data": [{"id": "m"}]})
        if request.method == "POST" and request.path.endswith("/chat/completions"):
            if chat is not None:
                return chat(request, n)
            return chat_completion(json.dumps(valid_answer(request.json()["messages"])))
        return json_answer(404, {"error": "not found"})
    return answer


class ScriptedServer:
    """``answer(request, n)`` on 127.0.0.1 (n counts POST requests from 1); every request is kept in ``requests``."""

    def __init__(self, answer: Callable[[Request, int], Any]):
        self.answer = answer
        self.requests: list[Request] = []
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def spec(self, userinfo: str = "", model: str = "m") -> str:
        at = f"{userinfo}@" if userinfo else ""
        return f"openai:http://{at}127.0.0.1:{self.port}/v1?model={model}"

    @property
    def posts(self) -> list[Request]:
        return [r for r in self.requests if r.method == "POST"]

    def __enter__(self) -> ScriptedServer:  # noqa: PYI034 (typing.Self needs Python 3.11; we support 3.10)
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _answer(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                parts = urlsplit(self.path)
                request = Request(self.command, parts.path, parse_qs(parts.query), dict(self.headers), body)
                with fake._lock:
                    fake.requests.append(request)
                    n = sum(r.method == "POST" for r in fake.requests)
                reply = fake.answer(request, n)
                if reply is None:  # hang up without a word
                    self.close_connection = True
                    return
                status, headers, data = reply
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _answer

        self._server = QuietServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


#: Where :func:`plant_token` can put a token in a release.
TOKEN_PLACES = ("latin-1", "UTF-16", "Parquet")


def plant_token(release: Path, where: str, token: str) -> Path:
    """Write ``token`` into ``release``: in a latin-1 or UTF-16 ``notes.txt`` beside it, or in the first
    ``reconciliation`` cell of its primary test shard (``where``: one of :data:`TOKEN_PLACES`); returns the file."""
    if where == "latin-1":
        target = release / "notes.txt"
        target.write_bytes(f"Caf\xe9 token {token}\n".encode("latin-1"))
    elif where == "UTF-16":
        target = release / "notes.txt"
        target.write_text(f"token {token}\n", encoding="utf-16")
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        target = min((release / "primary").glob("test-*.parquet"))
        table = pq.read_table(target)
        column = table.column_names.index("reconciliation")
        values = table.column(column).to_pylist()
        values[0] = f"see {token}"
        pq.write_table(table.set_column(column, "reconciliation", pa.array(values, pa.string())), target)
    return target
