"""Issue 61's faults, part two: what an LLM server answers (nested 100,000 deep, 8 MB, a 20 MB reconciliation,
malformed JSON, HTTP 400/404/503, a closed connection), the start-up check of a busy server, Retry-After in
annotate and collect, damaged finding-reader folders and impossible option values."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path

from faultlib import (
    FAST_LLM,
    REFUSED,
    Case,
    FakeOllama,
    FakeOpenAI,
    Reply,
    claims_in,
    first_error,
    last_line,
    pairs,
    real_pairs,
    run_cli,
    write_pairs,
)
from faults_61_servers import Request, ScriptedServer, chat_completion, json_answer, openai
from llm_server import valid_answer

from biodivergence_dataset import io, ontology
from biodivergence_dataset.records import Example

RAW = "raw_responses.jsonl"


def statuses(out: Path) -> list[str]:
    return sorted({r["status"] for r in io.read_jsonl(out / RAW)})


def kinds(out: Path) -> list[str]:
    """The annotator kinds of the pairs' current labels (the last row of each pair in annotations.jsonl)."""
    last = {row["pair_id"]: row for row in io.read_jsonl(out / "annotations.jsonl")}
    return sorted({row["example"]["annotator_kind"] for row in last.values()})


def answered_with(content: str | Callable[[dict], str], *extra: str) -> Callable[[Path], str]:
    """Every pair answered ``content`` (``--max-fallback-share 1``: the run goes on whatever falls back); then the
    server heals and ``--retry-fallbacks`` asks again."""
    def run(work: Path) -> str:
        healthy = {"ok": False}

        def behaviour(n, body):
            if healthy["ok"]:
                return Reply()
            return Reply(content=content(body) if callable(content) else content)

        out = work / "labels"
        with FakeOllama(behaviour=behaviour) as server:
            args = ("annotate", pairs(work), "--out", out, "--annotator", server.spec(), *FAST_LLM, "--backoff", "0.01",
                    "--max-fallback-share", "1", *extra)
            code, _, err = run_cli(*args)
            sent, stats = len(server.requests), io.read_stats(out)
            seen, raw_bytes, labelled = statuses(out), (out / RAW).stat().st_size, kinds(out)
            healthy["ok"] = True
            again, _, _ = run_cli(*args, "--retry-fallbacks")
            asked = len(server.requests) - sent
        return (f"exit {code}; {sent} requests; attempts {seen}; fallbacks {stats['fallbacks']}; labels by "
                f"{labelled}; {RAW} {raw_bytes // 1024} kB; {last_line(err)[:140]}; --retry-fallbacks: exit {again}, "
                f"{asked} requests, labels by {kinds(out)}")
    return run


NESTED = '{"conflict_type": ' + "[" * 100_000 + "]" * 100_000 + "}"


def nested_body(work: Path) -> str:
    """The chat endpoint's whole HTTP body is a list nested 100,000 deep (not only the answer text)."""
    folder = pairs(work)
    body = b"[" * 100_000 + b"]" * 100_000
    with ScriptedServer(openai(chat=lambda r, n: (200, {"Content-Type": "application/json"}, body))) as server:
        code, _, _ = run_cli("annotate", folder, "--out", work / "labels", "--annotator", server.spec(), *FAST_LLM,
                             "--backoff", "0.01", "--max-fallback-share", "1")
        posts = len(server.posts)
    return f"exit {code}; {posts} requests; attempts {statuses(work / 'labels')}; labels by {kinds(work / 'labels')}"


def reconciliation(chars: int, via_config: bool) -> Callable[[Path], str]:
    """A valid label whose reconciliation is ``chars`` long: by the CLI (under the 4 MiB answer bound) or through a
    build config's annotate section with ``max_answer_bytes`` raised to 64 MiB."""
    def content(body: dict) -> str:
        answer = valid_answer(body["messages"])
        answer["reconciliation"] = ("Different cohorts. " * (chars // 19 + 1))[:chars]
        return json.dumps(answer)

    def run(work: Path) -> str:
        from builder.annotate import run_stage
        from builder.annotate_config import AnnotateConfig

        out = work / "labels"
        with FakeOllama(behaviour=lambda n, body: Reply(content=content(body))) as server:
            if via_config:
                code = 0
                run_stage(pairs(work), out, AnnotateConfig(annotator=server.spec(), limit=2, max_attempts=1,
                                                           max_answer_bytes=64 * 1024 * 1024, progress=False))
            else:
                code, _, _ = run_cli("annotate", pairs(work), "--out", out, "--annotator", server.spec(), "--limit",
                                     "2", *FAST_LLM)
        longest = max(len(e.reconciliation or "") for e in io.read_records(out, Example))
        repairs = json.loads((out / "annotation_manifest.json").read_text())["repairs"]
        return (f"exit {code}; attempts {statuses(out)}; labels by {kinds(out)}; longest reconciliation in the Parquet "
                f"{longest} chars; reconciliation_cut {repairs.get('reconciliation_cut', 0)}")
    return run


# --------------------------------------------------------------------------- busy servers, Retry-After


def busy_check(busy: int) -> Callable[[Path], str]:
    def run(work: Path) -> str:
        with FakeOpenAI(models=("m",)) as server:
            server.health_busy = busy
            start = time.monotonic()
            code, _, err = run_cli("annotate", pairs(work), "--out", work / "labels", "--annotator", server.spec("m"),
                                   "--max-attempts", "3", "--timeout", "5", "--backoff", "0.01", "--no-progress")
            waited = time.monotonic() - start
        return (f"exit {code}: {first_error(err)[:200] if code else 'annotated'}; health checks {server.health_checks}; "
                f"chat requests {len(server.requests)}; waited >= 1 s per Retry-After: {waited >= server.health_checks - 1}")
    return run


def chat_retry_after(status: int) -> Callable[[Path], str]:
    def run(work: Path) -> str:
        def behaviour(n, body):
            return Reply(status=status, headers={"Retry-After": "2"}) if n == 1 else Reply()

        with FakeOpenAI(behaviour=behaviour) as server:
            code, _, _ = run_cli("annotate", pairs(work), "--out", work / "labels", "--annotator", server.spec(),
                                 "--limit", "1", "--backoff", "0.1", "--no-progress")
            gap = server.requests[1]["at"] - server.requests[0]["at"]
        return f"exit {code}; second attempt {gap:.1f} s after the {status} (back-off alone: 0.1 s)"
    return run


def collect_retry_after(work: Path) -> str:
    def answer(request: Request, n: int):
        if len([r for r in server.requests if "esearch" in r.path]) == 1:
            return json_answer(503, {"error": "busy"}, **{"Retry-After": "2"})
        return json_answer(200, {"esearchresult": {"count": "0", "idlist": []}})

    with ScriptedServer(answer) as server:
        code, _, err = run_cli("collect", "pubmed", "--out", work / "raw", "--query", "x[tiab]", "--base-url",
                               server.url + "/eutils/", "--rate", "100")
        gap = server.requests[1].at - server.requests[0].at if len(server.requests) > 1 else 0.0
    return (f"exit {code}; {len(server.requests)} requests; second {gap:.1f} s after the 503 (back-off alone: 1 s); "
            f"retries recorded {io.read_stats(work / 'raw').get('retries') if code == 0 else last_line(err)}")


# --------------------------------------------------------------------------- what the chat endpoint answers


def chat_status(status: int) -> Callable[[Path], str]:
    def run(work: Path) -> str:
        with FakeOpenAI(behaviour=lambda n, body: Reply(status=status)) as server:
            code, _, err = run_cli("annotate", pairs(work), "--out", work / "labels", "--annotator", server.spec(),
                                   *FAST_LLM, "--backoff", "0.01")
        return (f"exit {code}: {first_error(err)[:300]}; {len(server.requests)} requests for 6 pairs; attempts "
                f"{statuses(work / 'labels')}; labels by {kinds(work / 'labels')}")
    return run


def connection_closed(work: Path) -> str:
    """Every chat request's connection closed unanswered (a crashing server): the run stops, resumable; once the
    server answers, the same command finishes."""
    folder = pairs(work)
    healthy = {"ok": False}
    default = openai()
    with ScriptedServer(openai(chat=lambda r, n: default(r, n) if healthy["ok"] else None)) as server:
        args = ("annotate", folder, "--out", work / "labels", "--annotator", server.spec(), *FAST_LLM, "--backoff",
                "0.01")
        start = time.monotonic()
        code, _, err = run_cli(*args)
        wall, posts = time.monotonic() - start, len(server.posts)
        seen = statuses(work / "labels")
        healthy["ok"] = True
        again, _, _ = run_cli(*args)
    return (f"exit {code}: {first_error(err)[:160]}…; says a re-run resumes: {'re-run the same command to resume' in err}; "
            f"{posts} requests; attempts {seen}; took under 30 s: {wall < 30}; re-run: exit {again}, labels by "
            f"{kinds(work / 'labels')}")


def truncated(body: dict) -> str:
    text = json.dumps(valid_answer(body["messages"]))
    return text[:len(text) // 2]


def with_garbage(body: dict) -> str:
    return json.dumps(valid_answer(body["messages"])) + "\n<|eot_id|> Hope this helps!"


def two_objects(body: dict) -> str:
    answer = json.dumps(valid_answer(body["messages"]))
    return f"[{answer}, {json.dumps({**valid_answer(body['messages']), 'conflict_type': ontology.NO_CONFLICT})}]"


def unknown_axis_only(body: dict) -> str:
    return json.dumps({**valid_answer(body["messages"]), "divergence_axes": ["moon_phase"],
                       "dominant_confounder": "moon_phase", "confidence": 0.9})


def unknown_axis(work: Path) -> str:
    with FakeOllama(behaviour=lambda n, body: Reply(content=unknown_axis_only(body))) as server:
        code, _, _ = run_cli("annotate", pairs(work), "--out", work / "labels", "--annotator", server.spec(), *FAST_LLM)
    examples = list(io.read_records(work / "labels", Example))
    repairs = json.loads((work / "labels" / "annotation_manifest.json").read_text())["repairs"]
    return (f"exit {code}; labels by {kinds(work / 'labels')}; axes {sorted({a for e in examples for a in e.divergence_axes})}; "
            f"highest confidence {max(e.confidence for e in examples)}; repairs {repairs}")


def query_secret(work: Path) -> str:
    secret = "sk-queryPlanted61abcdef0123"
    with FakeOpenAI(models=("m",)) as server:
        code, out, err = run_cli("annotate", pairs(work), "--out", work / "labels", "--annotator",
                                 f"openai:{server.url}/v1?model=m&api_key={secret}", "--no-progress")
        asked = len(server.requests) + server.health_checks
    files = [str(p.relative_to(work)) for p in work.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]
    return f"exit {code}: {first_error(err)[:200]}; requests {asked}; secret printed: {secret in out + err}; in files: {files}"


KINDS = ("timeout", "http_error", "not_json", "invalid_answer", "bad_response")


def every_failure_kind(work: Path) -> str:
    """8 pairs: 5 fail, each its own way (hangs past --timeout 1, HTTP 500, not JSON, nonsense labels, a null
    content), 3 are answered; the server heals; --retry-fallbacks asks exactly the 5 again."""
    chosen = real_pairs(8)
    failing = {(p.claim_a.sentence, p.claim_b.sentence): kind for p, kind in zip(chosen, KINDS)}
    healthy = {"ok": False}

    def chat(request: Request, n: int):
        messages = request.json()["messages"]
        kind = None if healthy["ok"] else failing.get(claims_in(messages))
        if kind == "timeout":
            time.sleep(1.5)
        if kind == "http_error":
            return json_answer(500, {"error": "boom"})
        if kind == "not_json":
            return chat_completion("I think these claims conflict.")
        if kind == "invalid_answer":
            return chat_completion(json.dumps({"conflict_type": "total_contradiction", "confidence": 0.99}))
        if kind == "bad_response":
            return json_answer(200, {"choices": [{"index": 0, "message": {"role": "assistant", "content": None}}]})
        return chat_completion(json.dumps(valid_answer(messages)))

    folder = write_pairs(work / "pairs", chosen)
    with ScriptedServer(openai(chat=chat)) as server:
        args = ("annotate", folder, "--out", work / "labels", "--annotator", server.spec(), "--max-attempts", "1",
                "--timeout", "1", "--backoff", "0.01", "--no-progress", "--max-fallback-share", "1")
        code, _, _ = run_cli(*args)
        seen = statuses(work / "labels")
        fallbacks = io.read_stats(work / "labels")["fallbacks"]
        before = len(server.posts)
        healthy["ok"] = True
        again, _, _ = run_cli(*args, "--retry-fallbacks")
        asked = {claims_in(r.json()["messages"]) for r in server.posts[before:]}
    return (f"exit {code}; attempts {seen}; fallbacks {fallbacks}; --retry-fallbacks: exit {again}, asked exactly the "
            f"5 failed pairs: {asked == set(failing)}; labels by {kinds(work / 'labels')}")


# --------------------------------------------------------------------------- 61.13: the reader folder


def damaged_reader(damage: Callable[[Path], None]) -> Callable[[Path], str]:
    """A copy of the shipped finding reader, damaged, named by ``--annotator reader:FOLDER``."""
    def run(work: Path) -> str:
        from builder.reader.model import SHIPPED

        folder = work / "reader"
        shutil.copytree(SHIPPED, folder)
        damage(folder)
        code, _, err = run_cli("annotate", pairs(work), "--out", work / "labels", "--annotator", f"reader:{folder}",
                               "--no-progress")
        lines = [line for line in err.splitlines() if line.strip() and "it/s" not in line]
        return f"exit {code}: {first_error(err)[:260]}; stderr lines {len(lines)}; traceback: {'Traceback' in err}"
    return run


def weights(change: Callable[[bytes], bytes], drop_checksum: bool = False) -> Callable[[Path], None]:
    def damage(folder: Path) -> None:
        path = folder / "reader.safetensors"
        path.write_bytes(change(path.read_bytes()))
        if drop_checksum:  # a reader saved before checksums: the file itself must be checked
            config(lambda c: {k: v for k, v in c.items() if k != "weights_sha256"})(folder)
    return damage


def config(change: Callable[[dict], object]) -> Callable[[Path], None]:
    def damage(folder: Path) -> None:
        path = folder / "reader_config.json"
        path.write_text(json.dumps(change(json.loads(path.read_text()))), encoding="utf-8")
    return damage


def option(name: str, value: str) -> Callable[[Path], str]:
    def run(work: Path) -> str:
        with FakeOpenAI(models=("m",)) as server:
            code, _, err = run_cli("annotate", pairs(work), "--out", work / "labels", "--annotator", server.spec("m"),
                                   "--no-progress", name, value)
            asked = len(server.requests) + server.health_checks
        return f"exit {code}: {first_error(err)}; requests sent {asked}; --out created: {(work / 'labels').exists()}"
    return run


READER_REFUSED = REFUSED + r".*reader/reader.safetensors: {}.*stderr lines 1; traceback: False$"
CONFIG_REFUSED = REFUSED + r".*reader/reader_config.json: not a finding reader config \({}.*stderr lines 1; traceback: False$"
FALLS_BACK = r"^exit 0; 12 requests; attempts \['{}'\]; fallbacks 6; labels by \['reader'\];"
HEALED = r"--retry-fallbacks: exit 0, 6 requests, labels by \['llm'\]$"

CASES: list[Case] = [
    Case("61.7", "the LLM answers a list nested 100,000 deep for every pair (--max-fallback-share 1)",
         "each attempt fails (not_json), the pairs fall back, the run goes on; a healed re-run is not blocked",
         answered_with(NESTED), FALLS_BACK.format("not_json") + ".*" + HEALED),
    Case("61.7", "the chat endpoint's whole HTTP body is a list nested 100,000 deep",
         "bad_response attempts, fallbacks, the run goes on", nested_body,
         r"^exit 0; 12 requests; attempts \['bad_response'\]; labels by \['reader'\]$"),
    Case("61.8", "an 8 MB answer (the bound is 4 MiB)", "bad_response, not cached whole, fallbacks; heals on re-run",
         answered_with("{" + " " * (8 * 1024 * 1024) + "}"),
         FALLS_BACK.format("bad_response") + r" raw_responses.jsonl [0-9] kB;.*" + HEALED),
    Case("61.8", "a valid label whose reconciliation is 3 MB (under the answer bound)",
         "the label kept, the reconciliation cut to 2000 chars in the Parquet and counted", reconciliation(3_000_000, False),
         r"^exit 0; attempts \['ok'\]; labels by \['llm'\]; longest reconciliation in the Parquet ([1-9]\d{0,2}|1\d{3}|2000) "
         r"chars; reconciliation_cut 2$"),
    Case("61.8", "a valid label with a 20 MB reconciliation (max_answer_bytes 64 MiB in the build config)",
         "the label kept, the reconciliation cut in the Parquet and counted", reconciliation(20_000_000, True),
         r"^exit 0; attempts \['ok'\]; labels by \['llm'\]; longest reconciliation in the Parquet ([1-9]\d{0,2}|1\d{3}|2000) "
         r"chars; reconciliation_cut 2$"),
    Case("61.9", "the start-up check answered 503 with Retry-After: 1 twice, then healthy (--max-attempts 3)",
         "the check waits as asked and the run proceeds", busy_check(2),
         r"^exit 0: annotated; health checks 3; chat requests 6; waited >= 1 s per Retry-After: True$"),
    Case("61.9", "the start-up check answered 503 forever", "exit 1 naming the server, no chat request",
         busy_check(1000), REFUSED + r".*openai server at http://127\.0\.0\.1:PORT/v1 is not usable.*HTTP 503.*"
         r"health checks 3; chat requests 0;"),
    Case("61.9", "a chat request answered 503 with Retry-After: 2", "the next attempt waits 2 s",
         chat_retry_after(503), r"^exit 0; second attempt 2\.\d s after the 503"),
    Case("61.9", "collect: esearch answered 503 with Retry-After: 2, then answered",
         "the next request waits 2 s; collect finishes", collect_retry_after,
         r"^exit 0; 2 requests; second 2\.\d s after the 503 \(back-off alone: 1 s\); retries recorded 1$"),
    Case("61.g", "every chat request answered HTTP 400", "not retried (a client error), fallbacks, exit 1 saying why",
         chat_status(400), REFUSED + r".*6 of 6 pairs .*http_error.*6 requests for 6 pairs; attempts \['http_error'\]; "
         r"labels by \['reader'\]$"),
    Case("61.g", "every chat request answered HTTP 404 (model not served)", "not retried, fallbacks, exit 1",
         chat_status(404), REFUSED + r".*6 of 6 pairs .*http_error.*6 requests for 6 pairs; attempts \['http_error'\]; "
         r"labels by \['reader'\]$"),
    Case("61.g", "the server closes the connection on every chat request without answering",
         "the run stops at once naming the server (resumable); once it answers, the re-run finishes",
         connection_closed, REFUSED + r".*openai server at http://127\.0\.0\.1:PORT/v1 stopped answering.*says a "
         r"re-run resumes: True; \d+ requests; attempts \['unreachable'\]; took under 30 s: True; re-run: exit 0, "
         r"labels by \['llm'\]$"),
    Case("61.7", "an answer cut in half (truncated JSON)", "a failed attempt (not_json), fallbacks, heals on re-run",
         answered_with(truncated), FALLS_BACK.format("not_json") + ".*" + HEALED),
    Case("61.7", "a valid answer followed by trailing text ('<|eot_id|> Hope this helps!')",
         "the object is read (lenient parsing), LLM labels", answered_with(with_garbage),
         r"^exit 0; 6 requests; attempts \['ok'\]; fallbacks 0; labels by \['llm'\];"),
    Case("61.7", "a list of two different answer objects", "no guess between them: a failed attempt, fallbacks",
         answered_with(two_objects), FALLS_BACK.format("not_json") + ".*" + HEALED),
    Case("61.7", "a JSON string instead of an object ('\"contextual\"')", "a failed attempt (not_json), fallbacks",
         answered_with(json.dumps(ontology.CONTEXTUAL)), FALLS_BACK.format("not_json") + ".*" + HEALED),
    Case("61.7", "a valid conflict type whose only axis (and confounder) is 'moon_phase', confidence 0.9",
         "the LLM label kept, the axis dropped and counted, the confidence capped", unknown_axis,
         r"^exit 0; labels by \['llm'\]; axes \[\]; highest confidence 0\.[0-8]\d*; repairs \{.*'axis_dropped_off_schema': "
         r"[1-9]"),
    Case("61.3", "an annotator spec with the key in its query (…?model=m&api_key=sk-…)",
         "exit 1 naming the option, the key masked; no request; the key in no file", query_secret,
         REFUSED + r".*api_key=\*\*\*.*requests 0; secret printed: False; in files: \[\]$"),
    Case("61.g", "5 of 8 pairs fail each its own way (timeout, HTTP 500, not JSON, nonsense, content null); the "
         "server heals; --retry-fallbacks", "the 5 kinds recorded; --retry-fallbacks asks exactly the 5",
         every_failure_kind, r"^exit 0; attempts \['bad_response', 'http_error', 'invalid_answer', 'not_json', 'ok', "
         r"'timeout'\]; fallbacks 5; --retry-fallbacks: exit 0, asked exactly the 5 failed pairs: True; labels by "
         r"\['llm'\]$"),
    Case("61.13", "reader:FOLDER whose reader.safetensors is cut in half", "exit 1, one line naming the file",
         damaged_reader(weights(lambda b: b[:len(b) // 2])), READER_REFUSED.format("not the weights")),
    Case("61.13", "reader:FOLDER whose reader.safetensors is empty", "exit 1, one line naming the file",
         damaged_reader(weights(lambda b: b"")), READER_REFUSED.format("not the weights")),
    Case("61.13", "reader:FOLDER with a corrupt reader.safetensors and no checksum in its config (an older reader)",
         "exit 1, one line naming the file", damaged_reader(weights(lambda b: b"\xff" * 64 + b[64:], True)),
         READER_REFUSED.format("not a readable safetensors file")),
    Case("61.13", "reader:FOLDER whose weights are zeroed (the right size)", "refused: checksum mismatch",
         damaged_reader(weights(lambda b: bytes(len(b)))), READER_REFUSED.format(r"not the weights .*sha256 differs")),
    Case("61.13", "reader_config.json with max_length 'long'", "exit 1 naming the file and the field",
         damaged_reader(config(lambda c: {**c, "max_length": "long"})), CONFIG_REFUSED.format("max_length")),
    Case("61.13", "reader_config.json with an extra key", "exit 1 naming the file and the key",
         damaged_reader(config(lambda c: {**c, "dropout": 0.1})), CONFIG_REFUSED.format("dropout")),
    Case("61.13", "reader_config.json holding a list", "exit 1 naming the file",
         damaged_reader(config(lambda c: [c])), CONFIG_REFUSED.format("")),
    Case("61.13", "reader_config.json naming a Hub id as base_model", "refused without network",
         damaged_reader(config(lambda c: {**c, "base_model": "someorg/unseen-encoder"})),
         REFUSED + r".*reader: base_model 'someorg/unseen-encoder' is neither a model folder nor an installed model "
         r"\(nothing is downloaded\).*traceback: False$"),
    *(Case("61.17", f"annotate (LLM annotator) {name} {value}", "exit 1 naming the option as typed, no request sent",
           option(name, value), REFUSED + rf".*error: {name}: must be .*requests sent 0; --out created: False$")
      for name, value in (("--timeout", "0"), ("--timeout", "-5"), ("--timeout", "nan"), ("--max-attempts", "0"),
                          ("--max-fallback-share", "nan"), ("--temperature", "nan"))),
]
