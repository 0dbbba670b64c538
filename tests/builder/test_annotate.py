"""The annotate stage on real SciFact pairs: outputs, provenance, resume, and the LLM path against a
protocol-faithful fake Ollama server with injected faults (HTTP 500, timeouts, non-JSON answers,
off-schema values, server down, kill and interrupt mid-run)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from pathlib import Path

import pytest
from llm_server import FakeOllama, Reply, claims_in, interruptible_cli, real_pairs, write_pairs
from repo_paths import REPO

from biodivergence_dataset import ontology
from biodivergence_dataset.io import is_done, read_jsonl, read_records
from biodivergence_dataset.records import Example, Question
from builder.annotate import run_stage
from builder.annotate_config import AnnotateConfig
from builder.annotators import ServerUnreachable, parse_json_lenient, parse_spec
from builder.folders import LOCK_FILE
from builder.prompt import PROMPT_VERSION, build_messages, response_schema

FAST = {"backoff_s": 0.01, "timeout_s": 5.0, "progress": False}


@pytest.fixture(scope="module")
def pairs_dir(tmp_path_factory) -> Path:
    return write_pairs(tmp_path_factory.mktemp("pairs") / "pairs", real_pairs(12))


def examples(out: Path) -> list[Example]:
    return list(read_records(out, Example))


def rows(out: Path, name: str) -> list[dict]:
    return list(read_jsonl(out / name))


def claims_in_pair(pair) -> tuple[str, str]:
    return pair.claim_a.sentence, pair.claim_b.sentence


# --------------------------------------------------------------------------- specs and parsing


def test_spec_parsing_accepts_the_three_forms_and_names_mistakes():
    assert parse_spec("heuristic").backend == "heuristic"
    s = parse_spec("ollama:http://127.0.0.1:11434?model=qwen2.5:7b")
    assert (s.backend, s.url, s.model) == ("ollama", "http://127.0.0.1:11434", "qwen2.5:7b")
    s = parse_spec("openai:http://localhost:8000/v1/?model=m&temperature=0.2&max_tokens=64")
    assert (s.url, s.options) == ("http://localhost:8000/v1", {"temperature": "0.2", "max_tokens": "64"})
    assert str(parse_spec(str(s))) == str(s)
    for bad, msg in [("gpt", "unknown annotator"), ("openai:http://x:1/v1", "model=NAME"),
                     ("ollama:localhost?model=m", "http"), ("openai:http://x:1?model=m&top_p=1", "unknown option"),
                     ("heuristic:x", "no parameters")]:
        with pytest.raises(ValueError, match=msg):
            parse_spec(bad)


def test_lenient_json_parsing():
    obj = {"conflict_type": ontology.NO_CONFLICT, "notes": "a"}
    assert parse_json_lenient("```json\n" + json.dumps(obj) + "\n```") == obj
    assert parse_json_lenient("Sure! Here it is: " + json.dumps(obj) + " Hope this helps.") == obj
    assert parse_json_lenient('{"notes": "line one\nline two", "x": [1, 2,],}') == {"notes": "line one\nline two",
                                                                                   "x": [1, 2]}
    for bad in ("no json here", "[1, 2]", '{"a": '):
        with pytest.raises(ValueError):
            parse_json_lenient(bad)


def test_response_schema_is_generated_from_the_ontology():
    schema = response_schema()
    props = schema["properties"]
    assert props["conflict_type"]["enum"] == list(ontology.CONFLICT_TYPE_NAMES)
    assert props["divergence_axes"]["items"]["enum"] == list(ontology.AXIS_NAMES)
    assert set(schema["required"]) == set(props)


def test_llm_prompt_states_the_question_when_the_pair_has_one():
    pair = real_pairs(1)[0]
    asked = Question(question_id="q1", text="In adults with migraine, is drug X better than placebo for pain relief?")
    without = build_messages(pair)[1]["content"]
    with_question = build_messages(pair.model_copy(update={"question": asked}))[1]["content"]
    assert "Clinical question" not in without
    assert f"Clinical question both claims answer: {asked.text}" in with_question
    assert pair.claim_a.sentence in with_question and pair.claim_b.sentence in with_question


# --------------------------------------------------------------------------- heuristic stage


def test_default_local_stage_writes_a_complete_resumable_folder(pairs_dir, tmp_path):
    out = tmp_path / "reader"
    stats = run_stage(pairs_dir, out, AnnotateConfig(progress=False))
    for name in ("part-00000.parquet", "stats.json", "manifest.json", "annotation_manifest.json",
                 "provenance.json", "annotations.jsonl", "_SUCCESS"):
        assert (out / name).exists(), name
    exs = examples(out)
    assert len(exs) == stats["kept"] == 12 and stats["seen"] == 12
    assert {e.annotator_kind for e in exs} == {"reader"}  # the learned finding reader is the default
    assert all(e.frame_a is not None and e.frame_b is not None and e.comparability for e in exs)
    for e in exs:
        for span in e.evidence_spans:
            claim = e.claim_a_text if span.role == ontology.SPAN_ROLES[0] else e.claim_b_text
            assert claim[span.start:span.end] == span.text
    manifest = json.loads((out / "annotation_manifest.json").read_text())
    assert manifest["provider"] == "reader" and manifest["sample_count"] == 12
    # a re-run rewrites nothing but the lock it holds while it runs (the PID in it)
    before = {p.name: p.stat().st_mtime_ns for p in out.iterdir() if p.name != LOCK_FILE}
    assert run_stage(pairs_dir, out, AnnotateConfig(progress=False)) == stats
    assert {p.name: p.stat().st_mtime_ns for p in out.iterdir() if p.name != LOCK_FILE} == before


def test_unfinished_input_folder_is_refused(tmp_path):
    folder = write_pairs(tmp_path / "pairs", real_pairs(2))
    (folder / "_SUCCESS").unlink()
    with pytest.raises(ValueError, match="not a finished stage"):
        run_stage(folder, tmp_path / "out", AnnotateConfig(progress=False))
    assert not (tmp_path / "out").exists()


# --------------------------------------------------------------------------- LLM path (fake Ollama)


def test_ollama_backend_sends_schema_and_records_provenance(pairs_dir, tmp_path):
    out = tmp_path / "llm"
    with FakeOllama() as server:
        stats = run_stage(pairs_dir, out, AnnotateConfig(annotator=server.spec(), concurrency=3, **FAST))
    assert len(server.requests) == 12 and stats["requests_total"] == 12
    body = server.requests[0]["body"]
    assert body["format"] == response_schema() and body["stream"] is False
    assert body["messages"][0]["role"] == "system" and body["options"]["num_predict"] == 512
    exs = examples(out)
    assert {e.annotator_kind for e in exs} == {"llm"} and {e.prompt_version for e in exs} == {PROMPT_VERSION}
    assert {e.annotator_id for e in exs} == {"ollama:qwen2.5:7b"}
    assert all(len(e.evidence_spans) == 2 for e in exs)
    manifest = json.loads((out / "annotation_manifest.json").read_text())
    assert (manifest["provider"], manifest["model"], manifest["prompt_version"]) == ("ollama", "qwen2.5:7b", PROMPT_VERSION)
    assert manifest["repairs_total"] == 0 and manifest["fallbacks"] == 0
    provenance = json.loads((out / "provenance.json").read_text())
    assert provenance["backend"]["url"] == server.url and provenance["execution"]["concurrency"] == 3
    assert len(rows(out, "raw_responses.jsonl")) == 12


def test_faults_are_retried_repaired_or_fall_back(pairs_dir, tmp_path):
    pairs = real_pairs(12)
    role = {claims_in_pair(p): i for i, p in enumerate(pairs[:4])}
    off_schema = {"conflict_type": "Contextual Contradiction", "divergence_axes": ["Population", "weather", "geography",
                  "Population"], "dominant_confounder": "weather", "evidence_spans_a": ["not in the claim"],
                  "evidence_spans_b": [], "confidence": 1.7, "reconciliation": 3}

    def behaviour(n, body):
        which = role.get(claims_in(body["messages"]))
        seen = sum(1 for r in server.requests if r["claims"] == claims_in(body["messages"]))
        if which == 0 and seen == 1:
            return Reply(status=500)                      # first attempt fails, second succeeds
        if which == 1:
            return Reply(content="I think these claims are in tension, but JSON is hard.")  # never JSON
        if which == 2:
            return Reply(delay_s=1.5)                     # always times out
        if which == 3:
            return Reply(content="```json\n" + json.dumps(off_schema) + "\n```")
        return Reply()

    out = tmp_path / "faults"
    with FakeOllama(behaviour=behaviour) as server:
        stats = run_stage(pairs_dir, out, AnnotateConfig(annotator=server.spec(), concurrency=4, max_attempts=3,
                                                         max_fallback_share=0.5, **{**FAST, "timeout_s": 0.5}))
    by_pair = {e.pair_id: e for e in examples(out)}
    assert len(by_pair) == 12
    counts = server.requests_by_pair()
    assert counts[claims_in_pair(pairs[0])] == 2 and by_pair[pairs[0].pair_id].annotator_kind == "llm"
    for i in (1, 2):
        assert counts[claims_in_pair(pairs[i])] == 3
        assert by_pair[pairs[i].pair_id].annotator_kind == "reader"  # the local fallback (the default annotator)
    failures = {f["pair_id"]: f for f in rows(out, "failures.jsonl")}
    assert set(failures) == {pairs[1].pair_id, pairs[2].pair_id}
    assert [a["status"] for a in failures[pairs[1].pair_id]["attempts"]] == ["not_json"] * 3
    assert [a["status"] for a in failures[pairs[2].pair_id]["attempts"]] == ["timeout"] * 3
    repaired = by_pair[pairs[3].pair_id]
    assert repaired.conflict_type == ontology.CONTEXTUAL
    assert repaired.divergence_axes == [ontology.AXIS_NAMES[0], ontology.AXIS_NAMES[1]]
    # 7 items stated (type, 4 axes, confounder, 1 span), 3 dropped: confidence 1.7 → at most 4/7
    assert repaired.dominant_confounder is None and repaired.evidence_spans == [] and repaired.confidence == 0.5714
    manifest = json.loads((out / "annotation_manifest.json").read_text())
    assert manifest["fallbacks"] == 2 == stats["fallbacks"]
    assert manifest["repairs"] == {"axis_duplicate_removed": 1, "axis_dropped_off_schema": 1,
                                   "axis_synonym_mapped": 1, "confidence_capped_by_repairs": 1, "confidence_clamped": 1,
                                   "confounder_off_schema_nulled": 1, "conflict_type_normalised": 1,
                                   "reconciliation_not_text": 1, "span_dropped_not_verbatim": 1}
    statuses = [r["status"] for r in rows(out, "raw_responses.jsonl")]
    assert statuses.count("http_error") == 1 and statuses.count("timeout") == 3 and statuses.count("not_json") == 3


def test_server_down_stops_the_run_and_the_same_command_resumes(pairs_dir, tmp_path):
    out = tmp_path / "down"
    server = FakeOllama()
    config = AnnotateConfig(annotator=server.spec(), concurrency=2, **FAST)
    with pytest.raises(ServerUnreachable, match="not usable"):
        run_stage(pairs_dir, out, config)
    assert not is_done(out) and not (out / "annotations.jsonl").exists()

    def die_after_five(n, body):
        return Reply(before=lambda: threading.Thread(target=server.stop).start()) if n == 6 else Reply()

    server.behaviour = die_after_five
    with server, pytest.raises(ServerUnreachable, match="stopped answering"):
        run_stage(pairs_dir, out, config)
    done = rows(out, "annotations.jsonl")
    assert 5 <= len(done) < 12 and not is_done(out) and not (out / "failures.jsonl").exists()
    revived = FakeOllama(port=server.port)
    with revived:
        stats = run_stage(pairs_dir, out, config)
    assert stats["kept"] == 12 and is_done(out)
    by_claims = {claims_in_pair(p): p.pair_id for p in real_pairs(12)}
    asked_again = {by_claims[r["claims"]] for r in revived.requests}
    assert not asked_again & {r["pair_id"] for r in done}


def test_answer_received_but_not_recorded_is_not_asked_again(pairs_dir, tmp_path):
    out = tmp_path / "raw"
    with FakeOllama() as server:
        config = AnnotateConfig(annotator=server.spec(), concurrency=2, **FAST)
        run_stage(pairs_dir, out, config)
        lines = (out / "annotations.jsonl").read_text().splitlines()
        (out / "annotations.jsonl").write_text("\n".join(lines[:4]) + "\n" + lines[4][:30])  # torn last line
        (out / "_SUCCESS").unlink()
        stats = run_stage(pairs_dir, out, config)
    assert len(server.requests) == 12
    assert stats["reused_raw_responses"] == 8 and stats["requests_this_run"] == 0 and stats["kept"] == 12


def test_other_settings_on_a_partial_run_are_refused_unless_overwrite(pairs_dir, tmp_path):
    out = tmp_path / "mixed"
    with FakeOllama(models=("a", "b")) as server:
        run_stage(pairs_dir, out, AnnotateConfig(annotator=server.spec("a"), **FAST))
        (out / "_SUCCESS").unlink()
        with pytest.raises(ValueError, match=r"other parameters \(annotator\); .*--overwrite; in a build config: "
                                             r"annotate: \{overwrite: true\}") as refused:
            run_stage(pairs_dir, out, AnnotateConfig(annotator=server.spec("b"), **FAST))
        assert server.spec("a") not in str(refused.value)  # the settings are named, not their values
        stats = run_stage(pairs_dir, out, AnnotateConfig(annotator=server.spec("b"), overwrite=True, **FAST))
    assert stats["kept"] == 12 and {e.annotator_id for e in examples(out)} == {"ollama:b"}
    with FakeOllama(models=("a",)) as server, pytest.raises(RuntimeError, match="ollama pull c"):
        run_stage(pairs_dir, tmp_path / "c", AnnotateConfig(annotator=server.spec("c"), **FAST))


def test_new_candidate_pairs_relabel_without_stale_rows_or_asking_again(tmp_path):
    """Re-mined pairs (another input fingerprint, same settings): the stage re-runs on its own, the labels of
    vanished pairs are gone, and the pairs answered before are not sent to the LLM again."""
    first, second = real_pairs(12)[:8], real_pairs(12)[4:]
    out = tmp_path / "out"
    with FakeOllama() as server:
        config = AnnotateConfig(annotator=server.spec(), **FAST)
        run_stage(write_pairs(tmp_path / "p1", first), out, config)
        stats = run_stage(write_pairs(tmp_path / "p2", second), out, config)
    assert {e.pair_id for e in examples(out)} == {p.pair_id for p in second}
    assert stats["reused_raw_responses"] == 4 and stats["requests_this_run"] == 4
    assert len(server.requests) == 12


def _cli(pairs_dir: Path, out: Path, spec: str, concurrency: int) -> subprocess.Popen:
    return interruptible_cli(["annotate", str(pairs_dir), "--out", str(out), "--annotator", spec,
                              "--concurrency", str(concurrency), "--no-progress"], REPO)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
def test_killed_or_interrupted_run_resumes_without_loss_or_resending(pairs_dir, tmp_path, sig):
    """The server signals the CLI process when the 6th request arrives. SIGINT cancels the request in flight
    at once (exit 130), SIGKILL kills it: either way only that request is sent again on resume and no
    answered pair is asked twice."""
    out = tmp_path / f"sig{int(sig)}"
    proc_box: list[subprocess.Popen] = []

    def behaviour(n, body):
        if n == 6:
            return Reply(before=lambda: os.kill(proc_box[0].pid, sig), delay_s=0.3)
        return Reply()

    with FakeOllama(behaviour=behaviour) as server:
        proc_box.append(_cli(pairs_dir, out, server.spec(), concurrency=1))
        _, err = proc_box[0].communicate(timeout=60)
        assert proc_box[0].returncode == (130 if sig == signal.SIGINT else -signal.SIGKILL), err.decode()
        first = {r["pair_id"] for r in rows(out, "annotations.jsonl")}
        stats = run_stage(pairs_dir, out, AnnotateConfig(annotator=server.spec(), concurrency=1, **FAST))
    counts = server.requests_by_pair()
    assert stats["kept"] == 12 and len({e.pair_id for e in examples(out)}) == 12
    assert len(first) == 5 and sum(counts.values()) == 13 and sorted(counts.values()) == [1] * 11 + [2]
    by_claims = {claims_in_pair(p): p.pair_id for p in real_pairs(12)}
    assert all(counts[c] == 1 for c, pid in by_claims.items() if pid in first)


@pytest.mark.slow  # the CLI in subprocesses over real pairs
def test_cli_annotate_and_agreement(pairs_dir, tmp_path, capsys):
    from biodivergence_cli.main import main

    assert main(["annotate", str(pairs_dir), "--out", str(tmp_path / "h"), "--no-progress"]) == 0
    with FakeOllama() as server:
        assert main(["annotate", str(pairs_dir), "--out", str(tmp_path / "o"), "--annotator", server.spec(),
                     "--no-progress"]) == 0
    assert "annotated 12 pairs" in capsys.readouterr().out
    assert main(["agreement", str(tmp_path / "h"), str(tmp_path / "h"), "--json", str(tmp_path / "a.json")]) == 0
    report = json.loads((tmp_path / "a.json").read_text())
    assert report["kappa"] == 1.0 and report["raw_agreement"] == 1.0 and report["axis_jaccard_mean"] == 1.0
    assert main(["agreement", str(tmp_path / "h"), str(tmp_path / "o")]) == 0
    assert "Cohen's kappa" in capsys.readouterr().out
    assert main(["annotate", str(pairs_dir), "--out", str(tmp_path / "x"), "--annotator", "nope"]) == 1


def test_repair_fixes_offsets_maps_synonyms_and_normalises_labels():
    from builder.repair import repair

    pair = real_pairs(1)[0]
    a = pair.claim_a.sentence
    word = a.split()[1]
    answer = {"conflict_type": "Contextual Contradiction", "divergence_axes": "Geography; sample type",
              "dominant_confounder": "Specimen", "confidence": "85%", "comparable": True,
              "evidence_spans_a": [{"text": word, "start": 0}, {"text": a[:5], "start": 0}, word],
              "evidence_spans_b": ["   "], "extra": 1}
    labels, repairs = repair(answer, pair)
    assert labels.conflict_type == ontology.CONTEXTUAL
    assert labels.divergence_axes == [ontology.AXIS_NAMES[1], ontology.AXIS_NAMES[10]]
    assert labels.dominant_confounder == ontology.AXIS_NAMES[10] and labels.confidence == 0.85
    assert [(s.text, s.start) for s in labels.evidence_spans] == [(word, a.find(word)), (a[:5], 0)]
    assert repairs == {"conflict_type_normalised": 1, "axes_not_a_list": 1, "axis_synonym_mapped": 2,
                       "confounder_synonym_mapped": 1, "span_offsets_fixed": 1, "span_duplicate_removed": 1,
                       "span_dropped_empty": 1, "unknown_keys_ignored": 1}
