"""The OpenAI-compatible backend against a real llama.cpp server (xllamacpp) serving
SmolLM2-135M-Instruct on 127.0.0.1: schema-constrained requests, validation/repair of whatever the
tiny model writes, and kill-free resume (SIGINT) with the server's own request count.
Label quality is not checked: a 135M model is a protocol partner, not an annotator."""

from __future__ import annotations

import json
import signal
import time

import pytest
from llm_server import chat_requests_served, interruptible_cli, real_pairs, write_pairs
from repo_paths import REPO

from biodivergence_dataset import ontology
from biodivergence_dataset.io import read_jsonl, read_records
from biodivergence_dataset.records import Example
from builder.annotate import run_stage
from builder.annotate_config import AnnotateConfig
from builder.prompt import PROMPT_VERSION, response_schema

pytestmark = pytest.mark.slow


def test_schema_constrained_answer_is_validated_into_an_example(llama, tmp_path):
    url, log = llama
    pairs = write_pairs(tmp_path / "pairs", real_pairs(1, with_abstracts=False))
    before = chat_requests_served(log)
    config = AnnotateConfig(annotator=f"openai:{url}?model=smollm2&response_format=json_object", max_tokens=256,
                            max_attempts=1, timeout_s=300, progress=False)
    stats = run_stage(pairs, tmp_path / "out", config)
    assert chat_requests_served(log) - before == 1 == stats["requests_this_run"]
    (raw,) = list(read_jsonl(tmp_path / "out" / "raw_responses.jsonl"))
    (example,) = list(read_records(tmp_path / "out", Example))
    assert raw["status"] == "ok", raw
    answer = json.loads(raw["content"])
    assert set(answer) == set(response_schema()["properties"])
    assert answer["conflict_type"] in ontology.CONFLICT_TYPE_NAMES
    assert set(answer["divergence_axes"]) <= set(ontology.AXIS_NAMES)
    assert (example.annotator_kind, example.annotator_id, example.prompt_version) == ("llm", "openai:smollm2", PROMPT_VERSION)
    assert example.conflict_type == answer["conflict_type"]


def test_unconstrained_answers_are_repaired_and_an_interrupted_run_resumes_exactly_once(llama, tmp_path):
    url, log = llama
    pairs = write_pairs(tmp_path / "pairs", real_pairs(3, with_abstracts=False))
    out = tmp_path / "out"
    spec = f"openai:{url}?model=smollm2&response_format=none"
    before = chat_requests_served(log)
    proc = interruptible_cli(["annotate", str(pairs), "--out", str(out), "--annotator", spec, "--concurrency", "1",
                              "--max-tokens", "64", "--max-attempts", "1", "--no-progress"], REPO)
    deadline = time.monotonic() + 240
    while not (out / "raw_responses.jsonl").exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=240)
    assert proc.returncode == 130, err.decode()[-2000:]
    first = len(list(read_jsonl(out / "annotations.jsonl")))
    assert 1 <= first < 3
    stats = run_stage(pairs, out, AnnotateConfig(annotator=spec, concurrency=1, max_tokens=64, max_attempts=1,
                                                 max_fallback_share=1.0, timeout_s=300, progress=False))
    served = chat_requests_served(log) - before
    # every pair is recorded from exactly one answer; the request in flight at Ctrl-C is abandoned at once (the
    # server may still log it, when it had already started) and asked again on resume
    assert stats["requests_total"] == 3 and stats["kept"] == 3 and 3 <= served <= 4
    examples = list(read_records(out, Example))
    assert len(examples) == 3
    raw = list(read_jsonl(out / "raw_responses.jsonl"))
    assert sorted(r["pair_id"] for r in raw) == sorted(e.pair_id for e in examples)
    for r, e in zip(sorted(raw, key=lambda r: r["pair_id"]), sorted(examples, key=lambda e: e.pair_id)):
        assert e.annotator_kind == ("llm" if r["status"] == "ok" else "reader")  # the local fallback (the default)
    manifest = json.loads((out / "annotation_manifest.json").read_text())
    assert manifest["requests_total"] == 3
    assert manifest["fallbacks"] + manifest["counts"]["by_source"].get("llm", 0) == 3
