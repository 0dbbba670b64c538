"""LLM answers that fail loudly and waits that end (issue 29), against fake servers on 127.0.0.1:

- an answer whose label is outside the ontology, or empty, is a failed attempt (retried, then a fallback),
  never a confident ``no_conflict``; above ``--max-fallback-share`` the run fails, keeping the good answers;
- a request ends at its deadline, trickling server included; Ctrl-C cancels the request in flight and sends
  no retry; ``Retry-After`` is honoured up to ``--max-backoff``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
from llm_server import FakeOllama, FakeOpenAI, Reply, claims_in, interruptible_cli, real_pairs, write_pairs
from repo_paths import REPO

from biodivergence_cli.main import main
from biodivergence_dataset import ontology
from biodivergence_dataset.io import is_done, read_jsonl, read_records
from biodivergence_dataset.records import Example
from builder.annotate import run_stage
from builder.annotate_config import AnnotateConfig
from builder.http import BoundedClient, RetryPolicy
from builder.pair_annotator import RAW_FILE
from builder.repair import MAX_TEXT_CHARS, InvalidAnswer, repair

NONSENSE = {"conflict_type": "total_contradiction", "divergence_axes": ["moon_phase"], "confidence": 0.99}


@pytest.fixture(scope="module")
def pairs_dir(tmp_path_factory) -> Path:
    return write_pairs(tmp_path_factory.mktemp("pairs") / "pairs", real_pairs(6))


def statuses(out: Path) -> list[str]:
    return [r["status"] for r in read_jsonl(out / RAW_FILE)]


def _annotate(pairs_dir: Path, out: Path, spec: str, *extra: str) -> int:
    return main(["annotate", str(pairs_dir), "--out", str(out), "--annotator", spec, "--max-attempts", "2",
                 "--timeout", "5", "--backoff", "0.01", "--no-progress", *extra])


# --------------------------------------------------------------------------- answers


@pytest.mark.parametrize("answer", [NONSENSE, {}], ids=["outside_the_ontology", "empty"])
def test_nonsense_answers_are_failures_not_labels(pairs_dir, tmp_path, capsys, answer):
    out = tmp_path / "labels"
    with FakeOllama(behaviour=lambda n, body: Reply(content=json.dumps(answer))) as server:
        assert _annotate(pairs_dir, out, server.spec()) == 1
    err = capsys.readouterr().err
    assert "6 of 6 pairs (100.0%) fell back" in err and "6 invalid_answer" in err and not is_done(out)
    assert len(server.requests) == 12 and statuses(out) == ["invalid_answer"] * 12  # each retried once
    labelled = [json.loads(line)["example"] for line in (out / "annotations.jsonl").read_text().splitlines()]
    assert {e["annotator_kind"] for e in labelled} == {"reader"}  # the local fallback, never an LLM label


def test_failed_share_over_the_threshold_fails_and_keeps_the_good_answers(pairs_dir, tmp_path, capsys):
    bad = {(p.claim_a.sentence, p.claim_b.sentence) for p in real_pairs(6)[:2]}
    healthy = {"ok": False}

    def behaviour(n, body):
        nonsense = claims_in(body["messages"]) in bad and not healthy["ok"]
        return Reply(content=json.dumps(NONSENSE)) if nonsense else Reply()

    out = tmp_path / "labels"
    with FakeOllama(behaviour=behaviour) as server:
        assert _annotate(pairs_dir, out, server.spec()) == 1  # 2 of 6 failed, above the 5% default
        err = capsys.readouterr().err
        assert "2 of 6 pairs (33.3%) fell back" in err and "2 invalid_answer" in err
        assert "'total_contradiction' is not one of" in err
        assert statuses(out).count("ok") == 4 and not is_done(out)
        healthy["ok"] = True
        before = len(server.requests)
        assert _annotate(pairs_dir, out, server.spec(), "--retry-fallbacks") == 0
        asked = {r["claims"] for r in server.requests[before:]}
    assert asked == bad  # the 4 good answers were kept, only the failed pairs asked again
    assert {e.annotator_kind for e in read_records(out, Example)} == {"llm"}


def test_an_off_schema_axis_is_dropped_and_the_confidence_follows_what_is_left():
    pair = real_pairs(1)[0]
    labels, repairs = repair({**NONSENSE, "conflict_type": ontology.CONTEXTUAL}, pair)
    assert labels.divergence_axes == [] and labels.confidence == 0.5  # 1 of 2 stated items kept
    assert repairs == {"axis_dropped_off_schema": 1, "confidence_capped_by_repairs": 1}
    labels, repairs = repair({"conflict_type": ontology.CONTEXTUAL, "confidence": 0.9}, pair)
    assert labels.confidence == 0.9 and not repairs
    for answer in (NONSENSE, {}, {"divergence_axes": ["geography"]}):
        with pytest.raises(InvalidAnswer):
            repair(answer, pair)


@pytest.mark.parametrize("content, status", [
    ('{"conflict_type": ' + "[" * 200_000 + "]" * 200_000 + "}", "not_json"),
    ("{" + " " * (5 * 1024 * 1024) + "}", "bad_response"),
], ids=["nested_deeper_than_python_parses", "longer_than_the_answer_bound"])
def test_a_pathological_answer_is_a_failed_attempt_that_falls_back(pairs_dir, tmp_path, capsys, content, status):
    """JSON nested 200,000 deep (Python's parser recurses) and a 5 MB answer (read no further than 4 MB) are
    failed attempts like any unusable answer: the pairs fall back to the local annotator and the run goes on."""
    out = tmp_path / "labels"
    with FakeOllama(behaviour=lambda n, body: Reply(content=content)) as server:
        assert _annotate(pairs_dir, out, server.spec()) == 1  # every pair fell back: over the allowed share
    assert "6 of 6 pairs (100.0%) fell back" in capsys.readouterr().err
    assert set(statuses(out)) == {status} and len(server.requests) == 12
    labelled = [json.loads(line)["example"] for line in (out / "annotations.jsonl").read_text().splitlines()]
    assert len(labelled) == 6 and {e["annotator_kind"] for e in labelled} == {"reader"}


def test_a_runaway_reconciliation_is_cut_and_counted():
    labels, repairs = repair({"conflict_type": ontology.CONTEXTUAL, "confidence": 0.9,
                              "reconciliation": "Different cohorts. " * 100_000}, real_pairs(1)[0])
    assert len(labels.reconciliation) <= MAX_TEXT_CHARS and repairs["reconciliation_cut"] == 1


# --------------------------------------------------------------------------- bounded time


@pytest.mark.parametrize("busy, code", [(2, 0), (3, 1)], ids=["ready_within_the_attempts", "still_loading"])
def test_the_start_up_check_waits_for_a_busy_server_as_it_asks(pairs_dir, tmp_path, capsys, busy, code):
    """A server that answers its health check 503 with Retry-After (a model still loading) is asked again after
    the time it asks for, up to --max-attempts; one still busy then stops the run with a one-line error."""
    with FakeOllama() as server:
        server.health_busy = busy
        started = time.monotonic()
        assert _annotate(pairs_dir, tmp_path / "labels", server.spec(), "--max-attempts", "3") == code
        waited = time.monotonic() - started
    assert server.health_checks == min(busy + 1, 3) and waited >= 1.9  # two waits of Retry-After: 1 s
    if code:
        assert "is not usable" in capsys.readouterr().err


@pytest.mark.parametrize("reply", [Reply(trickle=6), Reply(delay_s=6)], ids=["trickling", "never_answering"])
def test_a_request_ends_at_its_deadline(pairs_dir, tmp_path, reply):
    """A server that sends one byte a second (each read succeeds) or nothing: the attempt fails at the
    1.5 s deadline, it is not answered after 6 s."""
    out = tmp_path / "slow"
    with FakeOpenAI(behaviour=lambda n, body: reply) as server:
        stats = run_stage(pairs_dir, out, AnnotateConfig(annotator=server.spec(), limit=1, max_attempts=1,
                                                         timeout_s=1.5, max_fallback_share=1.0, progress=False))
    assert statuses(out) == ["timeout"] and stats["fallbacks"] == 1
    assert "no whole answer within 1.5s" in next(read_jsonl(out / RAW_FILE))["error"]


#: How long the fake server holds each request; the CLI allows a little more, with 3 attempts.
HANG_S = 60


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_cancels_the_request_in_flight_and_sends_no_retry(pairs_dir, tmp_path, sig):
    """Every request hangs for a minute then fails (500); the CLI allows 75 s and 3 attempts. The signal arrives
    during the first request: the command returns well before the hanging request would end (the wait is timed
    from the signal, not from the start, which loads the fallback reader first) and the server never sees a
    second request."""
    proc_box: list[subprocess.Popen] = []
    signalled: list[float] = []

    def interrupt() -> None:
        signalled.append(time.monotonic())
        os.kill(proc_box[0].pid, sig)

    def behaviour(n, body):
        if n == 1:
            threading.Timer(0.5, interrupt).start()
        return Reply(delay_s=HANG_S, status=500)

    with FakeOllama(behaviour=behaviour) as server:
        proc_box.append(interruptible_cli(["annotate", str(pairs_dir), "--out", str(tmp_path / "out"),
                                           "--annotator", server.spec(), "--concurrency", "1",
                                           "--timeout", str(HANG_S + 15), "--backoff", "0.01", "--no-progress"],
                                          REPO))
        try:
            _, err = proc_box[0].communicate(timeout=3 * HANG_S)
        finally:
            proc_box[0].kill()
        ended = time.monotonic()
        expected = {130} if sig == signal.SIGINT else {-signal.SIGTERM, 128 + signal.SIGTERM, 130}
        assert proc_box[0].returncode in expected, err.decode()
        assert len(signalled) == 1 and ended - signalled[0] < HANG_S / 2, err.decode()
        assert len(server.requests) == 1


@pytest.mark.parametrize("retry_after, expected", [("2", 2.0), ("1000", 5.0)], ids=["honoured", "capped"])
def test_retry_after_is_honoured_up_to_the_cap(pairs_dir, tmp_path, monkeypatch, retry_after, expected):
    waits: list[float] = []
    monkeypatch.setattr(BoundedClient, "sleep", lambda self, seconds: waits.append(seconds))

    def behaviour(n, body):
        return Reply(status=429, headers={"Retry-After": retry_after}) if n == 1 else Reply()

    with FakeOpenAI(behaviour=behaviour) as server:
        run_stage(pairs_dir, tmp_path / "out", AnnotateConfig(annotator=server.spec(), limit=1, backoff_s=0.01,
                                                              max_backoff_s=5.0, progress=False))
    assert waits == [expected] and statuses(tmp_path / "out") == ["http_error", "ok"]


def test_retry_policy_is_one_rule_for_annotate_and_collect():
    policy = RetryPolicy(backoff_s=1.0, max_backoff_s=10.0)
    assert [policy.delay(n) for n in (1, 2, 3, 4, 5)] == [1.0, 2.0, 4.0, 8.0, 10.0]
    assert policy.delay(1, retry_after=7.0) == 7.0 and policy.delay(1, retry_after=60.0) == 10.0


@pytest.mark.parametrize("option, value, named", [
    ("--timeout", "0", "timeout_s"), ("--timeout", "-5", "timeout_s"), ("--timeout", "nan", "timeout_s"),
    ("--max-attempts", "0", "max_attempts"), ("--max-fallback-share", "nan", "max_fallback_share"),
    ("--temperature", "nan", "temperature"),
])
def test_an_impossible_numeric_option_is_refused_before_any_work(pairs_dir, tmp_path, capsys, option, value, named):
    """Named as typed on the command line, as the config's field elsewhere (a build config's annotate section)."""
    out = tmp_path / "labels"
    assert main(["annotate", str(pairs_dir), "--out", str(out), "--annotator", "heuristic", option, value]) == 1
    assert capsys.readouterr().err.startswith(f"biodivergence annotate: error: {option}: must be ") and not out.exists()
    with pytest.raises(ValueError, match=f"^annotate: {named} must be "):
        AnnotateConfig(**{named: float(value)})


def test_a_second_annotate_of_a_folder_in_use_fails_at_once(pairs_dir, tmp_path, capsys):
    """Two annotate runs on one --out would leave one annotator's labels under the other's manifest: the second
    fails at once, naming the first's PID, and writes nothing."""
    import os

    from builder.annotate import STAGE
    from builder.folders import build_lock, claim_output

    out = claim_output(tmp_path / "labels", STAGE)
    with build_lock(out):
        assert main(["annotate", str(pairs_dir), "--out", str(out), "--annotator", "heuristic", "--no-progress"]) == 1
    assert f"in use by another run (PID {os.getpid()})" in capsys.readouterr().err
    assert not is_done(out) and not (out / "annotations.jsonl").exists()
    assert main(["annotate", str(pairs_dir), "--out", str(out), "--annotator", "heuristic", "--no-progress"]) == 0
