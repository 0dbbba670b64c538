"""The question answerer: the shipped weights load offline, it reads sentences written here in fields outside the
demo's drug classes (oncology, infection, obstetrics, surgery), its training never sees the check part, and
``biodivergence reader read`` writes each row back with the finding and the answer."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from repo_paths import REPO, SHARED_DATA

from builder.goldparts import in_part, is_heldout
from builder.reader.answer_data import SOURCES, answer_examples
from builder.reader.answerer import SHIPPED, WEIGHTS_FILE, Answer, AnswererConfig, load_answerer


def test_the_shipped_answerer_is_a_delta_over_the_packaged_base(answerer, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert answerer.folder == SHIPPED
    assert (SHIPPED / WEIGHTS_FILE).stat().st_size < 25 * 2**20
    assert set(answerer.config.training["sources"]) == set(SOURCES)
    assert answerer.config.training["part"] == "training"  # the development part: the check part is never seen


# (question, text, relevant, answer): sentences written for this test, none from a data set.
SENTENCES = [
    # oncology
    ("Does adjuvant trastuzumab improve disease-free survival in HER2-positive breast cancer?",
     ("Adjuvant trastuzumab significantly improved disease-free survival compared with observation "
     "(hazard ratio 0.64, p < 0.001)."), True, "yes"),
    ("Does adjuvant trastuzumab improve disease-free survival in HER2-positive breast cancer?",
     "Disease-free survival did not differ between the trastuzumab and observation arms (p = 0.71).", True, "no"),
    ("Does adjuvant trastuzumab improve disease-free survival in HER2-positive breast cancer?",
     "Women aged 18 to 70 years with operable breast cancer were enrolled at 40 centres.", False, None),
    # infection
    ("Does amoxicillin shorten the duration of acute otitis media symptoms in children?",
     "Children given amoxicillin had symptoms for a median of 3 days, against 5 days with placebo (p = 0.002).",
     True, "yes"),
    ("Does amoxicillin shorten the duration of acute otitis media symptoms in children?",
     "Amoxicillin did not shorten the duration of symptoms compared with placebo.", True, "no"),
    # obstetrics
    ("Does low-dose aspirin reduce the risk of preterm pre-eclampsia?",
     "Aspirin 150 mg daily reduced preterm pre-eclampsia by 62% compared with placebo.", True, "yes"),
    ("Does low-dose aspirin reduce the risk of preterm pre-eclampsia?",
     "The incidence of pre-eclampsia was similar in the aspirin and placebo groups.", True, "no"),
    # surgery
    ("Does tranexamic acid reduce blood loss in total knee arthroplasty?",
     "Tranexamic acid significantly reduced total blood loss and transfusion rates after knee replacement.",
     True, "yes"),
    ("Does tranexamic acid reduce blood loss in total knee arthroplasty?",
     "Hospital stay was shorter in patients treated in the new surgical ward than in the old one.", False, None),
]


def test_it_reads_relevance_and_the_answer_on_sentences_of_other_fields(answerer):
    """Every relevance right; the answers of all but at most one relevant sentence right (the shipped answerer reads
    "Aspirin 150 mg daily reduced preterm pre-eclampsia by 62% compared with placebo" as "no": a miss kept in view,
    not a sentence rewritten until it passes)."""
    answers = answerer.read([(q, t) for q, t, _, _ in SENTENCES])
    for (_, t, relevant, _), got in zip(SENTENCES, answers, strict=True):
        assert got.relevant == relevant, (t, got)
    right = [got.answer == (answer if relevant else "neutral")
             for (_, _, relevant, answer), got in zip(SENTENCES, answers, strict=True)]
    assert sum(right) >= len(SENTENCES) - 1, [t for (_, t, _, _), ok in zip(SENTENCES, right, strict=True) if not ok]


def test_an_answer_is_neutral_only_when_the_text_does_not_speak_to_the_question():
    assert Answer(relevance=0.9, yes=0.3).answer == "no"
    assert Answer(relevance=0.9, yes=0.7).answer == "yes"
    assert Answer(relevance=0.2, yes=0.99).answer == "neutral"
    assert Answer(relevance=0.9, yes=0.3).as_dict()["answer_probs"] == {"yes": 0.3, "no": 0.7}


@pytest.mark.slow  # builds the training set from ../shared/data
def test_training_examples_come_from_the_development_part_only():
    examples = answer_examples(SHARED_DATA, part="training")
    assert {e.source for e in examples} == set(SOURCES)
    assert not any(is_heldout(e.source, e.key) for e in examples)
    assert sum(e.relevant for e in examples) and sum(not e.relevant for e in examples)
    assert {e.answer for e in examples} == {"yes", "no", None}
    check = answer_examples(SHARED_DATA, ("pubmedqa",), part="heldout")
    assert check and all(in_part("pubmedqa", e.key, "heldout") for e in check)


def test_the_check_part_is_the_same_in_every_process():
    """The split is a hash of the source and key, not of Python's salted ``hash``: two processes with different
    hash seeds put the same keys in the check part."""
    code = ("from builder.goldparts import is_heldout;"
            "print(''.join('1' if is_heldout('pubmedqa', str(k)) else '0' for k in range(300)))")
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO,
                           env={"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin"}).stdout for seed in ("1", "2")}
    assert len(outs) == 1
    share = next(iter(outs)).strip().count("1") / 300
    assert 0.1 < share < 0.3  # about the 20% it promises


def test_a_folder_without_an_answerer_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a question answerer folder"):
        AnswererConfig.load(tmp_path)
    (tmp_path / "answerer_config.json").write_text(json.dumps({"base_model": "x", "stray": 1}))
    with pytest.raises(ValueError, match="answerer_config.json"):
        AnswererConfig.load(tmp_path)


@pytest.mark.parametrize("damage, message", [
    ({"weights": b"\0" * 1024}, "sha256 differs"),
    ({"config": {"stray": 1}}, r"stray: Unexpected keyword argument"),
    ({"config": {"max_length": "long"}}, r"max_length: Input should be a valid integer"),
    ({"config": ["not", "an", "object"]}, r"Input should be a dictionary"),
    ({"config": {"base_model": "some-org/some-model"}}, r"neither a model folder nor an installed model"),
    ({"weights": b"", "sha": None}, "not a readable safetensors file"),
], ids=["zeroed_weights", "extra_key", "wrong_type", "a_list", "hub_id", "empty_weights_no_checksum"])
def test_a_damaged_folder_is_a_one_line_error_naming_the_file(tmp_path, damage, message):
    """Weights that are not the ones the config names, a config of the wrong shape, or a base model that would be
    fetched from the network: each a ValueError naming the file, before anything is read with it."""
    import shutil

    folder = tmp_path / "answerer"
    shutil.copytree(SHIPPED, folder)
    config = json.loads((folder / "answerer_config.json").read_text())
    if "config" in damage:
        config = ({**config, **damage["config"]} if isinstance(damage["config"], dict) else damage["config"])
    if "sha" in damage:
        config["weights_sha256"] = damage["sha"]
    (folder / "answerer_config.json").write_text(json.dumps(config))
    if "weights" in damage:
        (folder / WEIGHTS_FILE).write_bytes(damage["weights"])
    with pytest.raises(ValueError, match=message) as error:
        load_answerer(folder)
    assert str(folder) in str(error.value) and "\n" not in str(error.value)


def _cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "biodivergence_cli", "reader", *args], input=stdin, check=False,
                          capture_output=True, text=True, cwd=REPO, env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"})


@pytest.mark.slow  # the CLI in a subprocess, loading both models
def test_reader_read_writes_each_row_back_with_finding_and_answer(tmp_path):
    rows = [{"id": 1, "question": SENTENCES[0][0], "text": SENTENCES[0][1]},
            {"id": 2, "question": SENTENCES[4][0], "text": SENTENCES[4][1]}]
    src = tmp_path / "rows.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "read.jsonl"
    done = _cli("read", str(src), "--out", str(out))
    assert done.returncode == 0, done.stderr
    got = [json.loads(line) for line in out.read_text().splitlines()]
    assert [g["id"] for g in got] == [1, 2]
    assert [g["answer"] for g in got] == ["yes", "no"]
    assert got[0]["finding"] in ("increase", "decrease") and got[1]["finding"] == "no_difference"
    for g in got:
        assert abs(sum(g["finding_probs"].values()) - 1) < 0.01 and abs(sum(g["answer_probs"].values()) - 1) < 1e-6
        assert 0 <= g["relevance"] <= 1


def test_reader_read_names_the_file_and_line_of_a_bad_row(tmp_path):
    """A bad row fails before anything is written, naming where it is: a file's path, or standard input."""
    rows = json.dumps({"question": "Q?", "text": "T."}) + "\n" + json.dumps({"question": "Q?"}) + "\n"
    src = tmp_path / "bad.jsonl"
    src.write_text(rows)
    done = _cli("read", str(src), "--out", str(tmp_path / "out.jsonl"))
    assert done.returncode != 0 and f"{src} line 2" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out.jsonl").exists()
    piped = _cli("read", "-", stdin=rows)
    assert piped.returncode != 0 and "<stdin> line 2" in piped.stderr and not piped.stdout


@pytest.mark.slow  # trains an answerer
def test_train_answerer_saves_a_folder_that_loads_and_reads(tmp_path):
    """A few steps on PubMedQA's development part, from the base model: the saved delta and config load back and
    read a pair; the config records the development part and the steps run."""
    from builder.reader.answerer import AnswererTrainConfig, train_answerer

    saved = train_answerer(tmp_path / "a", AnswererTrainConfig(data_dir=str(SHARED_DATA), sources=("pubmedqa",),
                                                               init_reader=None, epochs=0.02, max_length=64))
    n = 2 * len(answer_examples(SHARED_DATA, ("pubmedqa",)))  # PubMedQA's examples are repeated twice
    assert saved.training["examples_per_source"] == {"pubmedqa": n} and saved.training["part"] == "training"
    assert saved.training["steps"] == int(-(-n // 32) * 0.02)
    (got,) = load_answerer(tmp_path / "a").read([(SENTENCES[0][0], SENTENCES[0][1])])
    assert 0 <= got.relevance <= 1 and 0 <= got.yes <= 1
    assert saved.weights_sha256 and AnswererConfig.load(tmp_path / "a").weights_sha256 == saved.weights_sha256


def test_cross_trial_negatives_are_other_trials_results_on_a_like_outcome_with_another_treatment():
    """``--cross-trial``: one more negative per Evidence Inference prompt, the evidence of another article's prompt
    whose outcome shares a content word with this one and whose intervention shares none."""
    from builder.frameterms import terms
    from builder.reader.answer_data import ei_answer_examples, ei_findings, other_trials_on_like_outcomes
    from builder.reader.reader_examples import source_path

    folder = source_path("evidence_inference", SHARED_DATA)
    plain = list(ei_answer_examples(folder, "development"))
    extra = list(ei_answer_examples(folder, "development", cross_trial=True))
    assert [e for e in extra if e.relevant] == [e for e in plain if e.relevant]
    added = len(extra) - len(plain)
    findings = [f for f in ei_findings(folder) if in_part("evidence_inference", f.prompt.pmcid, "development")]
    prompts = {f.prompt for f in findings}
    assert 0.5 * len(prompts) < added <= len(prompts)
    checked = 0
    for prompt in sorted(prompts, key=lambda p: int(p.prompt_id))[:30]:
        for text in other_trials_on_like_outcomes(prompt, findings)[:5]:
            checked += 1
            assert any(f.prompt.pmcid != prompt.pmcid and terms(f.prompt.outcome) & terms(prompt.outcome)
                       and not terms(f.prompt.intervention) & terms(prompt.intervention)
                       for f in findings if f.text == text)
    assert checked >= 30
