"""The learned finding reader: the shipped weights load from the package with no network, read sentences
written here (not taken from any data set), ``disagreement`` names each kind of disagreement and never a
negation word alone, the held-out partition is deterministic and kept out of training, and the goldcheck sets
build from ``../shared/data`` with their n."""

from __future__ import annotations

import dataclasses
import re

import pytest
from llm_server import SCIFACT

from biodivergence_dataset import ontology
from builder import goldparts
from builder.goldsources import healthver_pairs
from builder.reader import READER_VERSION, Reading, disagreement, load_reader, reader_examples
from builder.reader.model import (
    CONFIG_FILE,
    SHIPPED,
    WEIGHTS_FILE,
    ReaderConfig,
    finding_disagreement,
    mark_arms,
    unmarked,
)
from builder.reader.out_of_fold import evidence_inference_findings, goldcheck_sets, scored_part

DATA = SCIFACT.parent
Q = "Does drug X lower blood pressure compared to placebo?"


def _reading(finding: str, stance: str) -> Reading:
    """A certain reading: all probability on ``finding`` and on ``stance``."""
    return Reading(finding, {f: float(f == finding) for f in ontology.READER_FINDINGS}, stance,
                   {s: float(s == stance) for s in ontology.READER_STANCES}, None, 1.0)


def test_the_shipped_reader_loads_from_the_package_offline(reader, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert reader.folder == SHIPPED and (SHIPPED / CONFIG_FILE).is_file()
    weights = SHIPPED / WEIGHTS_FILE
    assert weights.stat().st_size < 25 * 2**20  # a delta over the packaged base, not a whole model
    assert reader.config.version == READER_VERSION
    assert reader.config.findings == list(ontology.READER_FINDINGS)
    assert reader.config.stances == list(ontology.READER_STANCES)
    assert set(reader.trained_on) == set(reader_examples.SOURCES)
    assert reader.config.training["data_fingerprint"] and reader.config.training["examples"] > 1000


def test_it_reads_findings_relative_to_the_question(reader):
    lower, same, unrelated, higher = reader.read([
        (Q, "Drug X significantly reduced systolic blood pressure compared with placebo."),
        (Q, "There was no significant difference in blood pressure between the drug X and placebo groups."),
        (Q, "Participants were recruited from three rural clinics between 2015 and 2017."),
        (Q, "Systolic blood pressure rose significantly more with drug X than with placebo."),
    ])
    assert (lower.finding, lower.stance) == ("decrease", "yes")
    assert lower.significance == "significant" and lower.confidence > max(lower.finding_probs["increase"], 0.4)
    assert same.finding == "no_difference" and same.stance == "no" and same.significance == "not_significant"
    assert unrelated.finding == "not_reported" and unrelated.significance is None
    assert higher.finding == "increase"
    assert abs(sum(lower.finding_probs.values()) - 1) < 1e-3 and abs(sum(lower.stance_probs.values()) - 1) < 1e-3
    assert disagreement(lower, higher) == "opposite_direction" and disagreement(lower, same) == "null_vs_effect"
    assert disagreement(lower, unrelated) is None


def test_readings_are_cached_per_question_and_text(reader):
    first = reader.read([(Q, "Drug X  significantly reduced systolic blood pressure compared with placebo.")])
    n = len(reader._cache)
    again = reader.read([(Q, "Drug X significantly reduced systolic blood pressure compared with placebo.")])
    assert first == again and len(reader._cache) == n


def test_disagreement_kinds_and_never_a_negation_word_alone():
    inc, dec, nod = _reading("increase", "yes"), _reading("decrease", "no"), _reading("no_difference", "no")
    assert disagreement(inc, dec) == "opposite_direction"
    assert disagreement(inc, nod) == disagreement(nod, dec) == "null_vs_effect"
    yes, no = _reading("not_reported", "yes"), _reading("not_reported", "no")
    assert disagreement(yes, no) == "opposite_answer"
    silent = _reading("not_reported", "neutral")
    assert disagreement(silent, inc) is None and disagreement(silent, no) is None
    assert disagreement(inc, _reading("increase", "yes")) is None and disagreement(nod, nod) is None
    # both findings read: they decide, whatever the answers (the same finding worded "yes" and "no" agrees)
    assert disagreement(_reading("increase", "yes"), _reading("increase", "no")) is None
    # different findings the reader is unsure of: more likely alike than not, so no disagreement
    unsure_inc = Reading(
        "increase", {"increase": 0.5, "decrease": 0.0, "no_difference": 0.4, "not_reported": 0.1}, "yes",
        {"yes": 1.0, "no": 0.0, "neutral": 0.0}, None, 0.5)
    unsure_nod = Reading(
        "no_difference", {"increase": 0.4, "decrease": 0.0, "no_difference": 0.5, "not_reported": 0.1}, "no",
        {"yes": 0.0, "no": 1.0, "neutral": 0.0}, None, 0.5)
    assert finding_disagreement(unsure_inc, unsure_nod) == pytest.approx(0.41)
    assert disagreement(unsure_inc, unsure_nod) is None and disagreement(unsure_inc, dec) == "opposite_direction"
    # a reading with its arms swapped: increase and decrease exchanged, probabilities too
    flipped = _reading("increase", "yes").reversed()
    assert flipped.finding == "decrease" and flipped.finding_probs["decrease"] == 1.0
    assert nod.reversed() == nod
    assert set(ontology.DISAGREEMENT_REASONS) >= {"opposite_direction", "null_vs_effect", "opposite_answer"}


@pytest.mark.slow  # builds the training sets twice
def test_the_held_out_partition_is_deterministic_and_kept_out_of_training():
    keys = [f"{i}" for i in range(5000)]
    held = [k for k in keys if goldparts.is_heldout("evidence_inference", k)]
    assert held == [k for k in keys if goldparts.is_heldout("evidence_inference", k)]
    assert 0.17 < len(held) / len(keys) < 0.23
    assert held != [k for k in keys if goldparts.is_heldout("pubmedqa", k)]  # salted by source
    for source in reader_examples.SOURCES:
        train = reader_examples.load_examples(source, DATA)
        test = reader_examples.load_examples(source, DATA, "heldout")
        assert train and test and not {e.key for e in train} & {e.key for e in test}
        assert not any(goldparts.is_heldout(source, e.key) for e in train)
        assert all(goldparts.is_heldout(source, e.key) for e in test)


@pytest.mark.slow  # builds the training sets from ../shared/data
def test_the_development_part_splits_training_in_two_and_never_touches_the_held_out_part():
    """training = fit + development, disjoint; development is about 20% of the training keys, salted by source;
    a reader trains on training or fit only, and the floor beside a development score trains on fit."""
    keys = [f"{i}" for i in range(5000)]
    dev = [k for k in keys if goldparts.is_development("evidence_inference", k)]
    assert not any(goldparts.is_heldout("evidence_inference", k) for k in dev)
    training = [k for k in keys if goldparts.in_part("evidence_inference", k, "training")]
    assert 0.17 < len(dev) / len(training) < 0.23
    assert dev != [k for k in keys if goldparts.is_development("pubmedqa", k)]
    for source in reader_examples.SOURCES:
        parts = {part: {e.key for e in reader_examples.load_examples(source, DATA, part)}
                 for part in ("training", "fit", "development")}
        assert parts["fit"] and parts["development"] and not parts["fit"] & parts["development"]
        assert parts["fit"] | parts["development"] == parts["training"]
    with pytest.raises(ValueError, match="unknown part 'test'"):
        goldparts.in_part("pubmedqa", "1", "test")
    with pytest.raises(ValueError, match="a reader trains on one of"):
        reader_examples.training_examples(DATA, ("pubmedqa",), part="heldout")

    findings = reader_examples.ei_findings(DATA / "evidence_inference")
    articles = {part: {f.prompt.pmcid for f in findings if goldparts.in_part("evidence_inference", f.prompt.pmcid,
                                                                                 part)} for part in ("fit", "development")}
    ei = evidence_inference_findings(None, DATA, part="development")
    assert (ei["articles"], ei["train_articles"]) == (len(articles["development"]), len(articles["fit"]))
    assert ei["tfidf_floor"]["n"] == sum(f.prompt.pmcid in articles["development"] for f in findings)

    import json

    from builder.reader.model import REPORT_FILE
    from builder.reader.out_of_fold import render_report

    shipped = json.loads((SHIPPED / REPORT_FILE).read_text())
    assert "held-out articles" in render_report(shipped) and "development" not in render_report(shipped)
    text = render_report({**shipped, "part": "development"})
    assert "development articles" in text and "development claims" in text and "held-out" not in text


def test_evidence_inference_questions_carry_the_stance_they_ask_for():
    assert reader_examples.stance_for("decrease", "decrease") == "yes"
    assert reader_examples.stance_for("decrease", "increase") == reader_examples.stance_for("increase", "no_difference") == "no"
    assert reader_examples.stance_for("change", "increase") == "yes" and reader_examples.stance_for("change", "no_difference") == "no"
    assert reader_examples.stance_for(None, "increase") is None
    examples = {(e.question, e.text): e for e in reader_examples.load_examples("evidence_inference", DATA)}
    findings = reader_examples.ei_findings(DATA / "evidence_inference")
    for f in findings[:300]:
        if not goldparts.is_heldout("evidence_inference", f.prompt.pmcid):
            template = reader_examples.phrasing(f)
            e = examples[f.prompt.question(template), f.text]
            assert (e.finding, e.stance) == (f.finding, reader_examples.stance_for(
                reader_examples.QUESTION_TEMPLATES[template][1], f.finding))
    assert {e.finding for e in examples.values()} == set(ontology.READER_FINDINGS)
    assert all(e.stance == "neutral" for e in examples.values() if e.finding == "not_reported")


def test_each_finding_can_be_asked_in_several_phrasings_each_with_its_own_stance():
    one = reader_examples.load_examples("evidence_inference", DATA, "fit")
    assert reader_examples.load_examples("evidence_inference", DATA, "fit", phrasings=1) == one
    three = reader_examples.load_examples("evidence_inference", DATA, "fit", phrasings=3)
    found = [e for e in three if e.finding != "not_reported"]
    assert len(found) == 3 * sum(e.finding != "not_reported" for e in one)
    assert [e for e in three if e.finding == "not_reported"] == [e for e in one if e.finding == "not_reported"]
    patterns = [(re.compile(re.escape(t).replace(re.escape("{i}"), ".+").replace(re.escape("{c}"), ".+")
                            .replace(re.escape("{o}"), ".+")), direction)
                for t, direction in reader_examples.QUESTION_TEMPLATES]
    for e in found:
        direction = next(d for pattern, d in patterns if pattern.fullmatch(e.question))
        assert e.stance == reader_examples.stance_for(direction, e.finding)
    for i in range(0, len(found), 3):  # a finding's phrasings come together: one text, three distinct questions
        assert len({e.text for e in found[i:i + 3]}) == 1 and len({e.question for e in found[i:i + 3]}) == 3
    for bad in (0, len(reader_examples.QUESTION_TEMPLATES) + 1):
        with pytest.raises(ValueError, match="phrasings must be"):
            reader_examples.load_examples("evidence_inference", DATA, "fit", phrasings=bad)


def test_a_finding_asked_with_its_arms_exchanged_flips_its_direction_only_when_its_text_marks_an_arm():
    prompt = reader_examples.EIPrompt("1", "9", "lisinopril", "losartan", "cough")
    finding = reader_examples.EIFinding(prompt, "Cough was more frequent with lisinopril (p < 0.01).", "increase")
    other = reader_examples.exchanged_example(finding)
    assert other.text == "Cough was more frequent with { lisinopril } (p < 0.01)."
    assert other.finding == "decrease" and "losartan" in other.question
    assert other.question.index("losartan") < other.question.index("lisinopril")
    template = next(d for t, d in reader_examples.QUESTION_TEMPLATES if t.format(i="losartan", c="lisinopril", o="cough")
                    == other.question)
    assert other.stance == reader_examples.stance_for(template, "decrease")
    null = dataclasses.replace(finding, finding="no_difference")
    assert reader_examples.exchanged_example(null).finding == "no_difference"
    assert reader_examples.exchanged_example(dataclasses.replace(finding, text="Cough did not differ.")) is None
    plain = reader_examples.load_examples("evidence_inference", DATA, "development", arm_marks=True)
    both = reader_examples.load_examples("evidence_inference", DATA, "development", arm_marks=True, exchange_arms=True)
    added = [e for e in both if e not in set(plain)]
    assert len(both) == len(plain) + len(added) and 0 < len(added) < len(plain)
    assert all(re.search(r"[\[{] ", e.text) and e.finding != "not_reported" for e in added)
    # without the marks the same words would be asked both ways: nothing is exchanged
    assert reader_examples.load_examples("evidence_inference", DATA, "development", exchange_arms=True) == \
        reader_examples.load_examples("evidence_inference", DATA, "development")


def test_exchanged_arms_without_arm_marks_is_refused_not_a_silent_no_op(tmp_path, capsys):
    from biodivergence_cli.main import main
    from builder.reader.reader_training import TrainConfig

    with pytest.raises(ValueError, match="needs arm_marks"):
        TrainConfig(arm_marks=False, exchange_arms=True)
    out = tmp_path / "reader"
    assert main(["reader", "train", "--out", str(out), "--no-arm-marks", "--exchange-arms"]) == 1
    assert "drop --no-arm-marks" in capsys.readouterr().err and not out.exists()


class _ArmsReader:
    """A stand-in reader that takes the direction from the marks alone: an increase when the first arm a text marks
    is the intervention ("[ … ]"), a decrease when it is the comparator; ``subject`` reads an increase whatever
    the marks say, as a reader of the sentence's subject would."""

    def __init__(self, subject: bool = False, arm_marks: bool = True):
        self.config, self.subject = ReaderConfig("base", arm_marks=arm_marks), subject

    def read(self, pairs):
        def finding(text):
            i, c = text.find("[ "), text.find("{ ")
            return "increase" if self.subject or c < 0 or 0 <= i < c else "decrease"
        return [_reading(finding(text), "yes") for _, text in pairs]


def test_the_arms_exchanged_diagnostic_tells_a_reader_of_the_arms_from_a_reader_of_the_subject():
    from builder.goldreport import arm_exchange_line
    from builder.reader.out_of_fold import arm_exchange

    arms = arm_exchange(_ArmsReader(), DATA, max_items=60)
    assert arms["as_asked"]["n"] == arms["exchanged"]["n"] == 60
    assert arms["as_asked"] == arms["exchanged"] and arms["effects_same_both_ways"] == 0 < arms["effects"] == 60
    subject = arm_exchange(_ArmsReader(subject=True), DATA, max_items=60)
    assert subject["effects_same_both_ways"] == subject["effects"] == 60
    assert subject["exchanged"]["macro_f1"] != subject["as_asked"]["macro_f1"]
    assert "60 of 60 effects" in arm_exchange_line(subject)[1] and arm_exchange_line(None) == []
    assert arm_exchange(_ArmsReader(arm_marks=False), DATA) is None


@pytest.mark.slow  # builds the shipped reader's training data
def test_the_default_recipe_trains_on_the_shipped_readers_data():
    import json

    from builder.reader.reader_training import TrainConfig

    d = TrainConfig()
    examples = reader_examples.training_examples(DATA, d.sources, d.max_per_source, d.seed, d.arm_marks, d.part,
                                             d.phrasings)
    shipped = json.loads((SHIPPED / CONFIG_FILE).read_text())["training"]
    assert reader_examples.data_fingerprint(examples) == shipped["data_fingerprint"]


def test_arm_marks_set_off_the_words_that_name_one_arm_only():
    assert mark_arms("Cough was more frequent with Lisinopril than with losartan (p < 0.01).", "lisinopril",
                     "losartan") == "Cough was more frequent with [ Lisinopril ] than with { losartan } (p < 0.01)."
    # words both arms share (the drug of a dose comparison, its unit) stay plain
    assert mark_arms("Low-dose aspirin 75 mg reduced stroke more than high-dose aspirin 300 mg.", "low-dose aspirin",
                     "high-dose aspirin") == ("[ Low-dose ] aspirin 75 mg reduced stroke more than { high-dose } "
                                              "aspirin 300 mg.")
    assert mark_arms("Deaths fell by a quarter.", "carvedilol", "placebo") == "Deaths fell by a quarter."


def test_evidence_inference_texts_are_marked_only_for_a_reader_that_learned_the_marks(reader, monkeypatch):
    """Marked examples are the plain ones with their arm words set off, label for label; the shipped reader
    learned the marks, and a reader that did not reads every text unchanged."""
    plain = reader_examples.load_examples("evidence_inference", DATA, "heldout")
    marked = reader_examples.load_examples("evidence_inference", DATA, "heldout", arm_marks=True)
    assert [(e.question, e.finding, e.stance, e.key) for e in plain] == [
        (e.question, e.finding, e.stance, e.key) for e in marked]
    assert [unmarked(e.text) for e in marked] == [e.text for e in plain]
    assert sum("[ " in e.text for e in marked) > len(marked) / 3
    assert reader.config.arm_marks
    assert reader.marked("Enalapril raised potassium.", "enalapril", "placebo") == "[ Enalapril ] raised potassium."
    monkeypatch.setattr(reader, "config", dataclasses.replace(reader.config, arm_marks=False))
    assert reader.marked("Enalapril raised potassium.", "enalapril", "placebo") == "Enalapril raised potassium."
    assert ReaderConfig(base_model="m").arm_marks is False  # a config saved before the marks reads plain text


@pytest.mark.slow  # reads every gold source in ../shared/data
def test_the_goldcheck_sets_build_from_shared_data_with_their_n(reader):
    sets = goldcheck_sets(reader, DATA, max_items=40)
    ei, hv = sets["evidence_inference_findings"], sets["healthver_same_claim"]
    assert ei["reader"]["n"] == ei["reader_as_annotated"]["n"] == ei["tfidf_floor"]["n"] == 40 and ei["articles"] >= 1
    assert all(0 <= ei[name]["macro_f1"] <= 1 for name in ("reader", "reader_as_annotated", "tfidf_floor"))
    assert hv["pairs"] == 40 and hv["claims"] >= 1 and 0 < hv["gold_conflict"] < 40
    assert {"kappa", "rule_kappa", "gain"} <= set(hv)

    questions = {g.pair.question.question_id: g.pair.question.text
                 for g in healthver_pairs(DATA / "healthver", with_question=True)}
    assert len(set(questions.values())) == len(questions)  # one question per claim


@pytest.mark.parametrize(("text", "effect", "null"), [
    ("Drug X significantly reduced blood pressure (p < 0.01).", True, False),
    ("There was no significant difference in blood pressure between the groups.", False, True),
    ("Healing rates were similar with drug X and drug Y.", False, True),
    ("Relief at 2 hours was 46% with drug X and 52% with drug Y, and no patient withdrew.", False, False),
    ("Pain fell with both doses (10 mg: p = 0.015; 5 mg: p = 0.47).", True, True),
    ("Both drugs were superior to placebo and were not significantly different from each other.", True, True),
    ("Cough did not differ significantly between the two drugs.", False, True),
    # a null beside a difference put in words is a mixed result; a difference whose own test is null is the null
    ("Losartan had adverse effects similar to placebo and a reduced incidence of cough versus ACE inhibitors.",
     True, True),
    ("Cough was similar to placebo, and lower than on enalapril, but this difference was not significant.",
     False, True),
    # a null between subgroups, or of an interaction, is no null between the arms
    ("There is no difference between the younger and the elderly in survival with captopril.", False, False),
    ("The use of captopril did not significantly modify these relations.", False, False),
    ("No significant difference in response was seen in patients with or without spasticity.", False, False),
    ("Sumatriptan was not associated with an increased adverse event profile from that previously reported.",
     False, False),
    # a contrast with another arm makes the null one arm's
    ("Valsartan, unlike captopril, is not associated with dry cough.", True, True),
    ("Adverse events were similar with drugs X and Y but slightly lower in the placebo group.", True, True),
    # a change within each group is no difference between the arms
    ("Episodes fell by 85% with drug X and by 58% with drug Y (both P = 0.0001 vs baseline).", False, False),
    ("The efficacy of drug X is equal to that of drug Y, but drug X is significantly better tolerated.", True, True),
    # an equivalence put as a noun phrase beside an effect makes a mixed result; alone it may repeat an effect
    ("Drug X prevented more strokes than drug Y for a similar reduction in blood pressure.", True, True),
    (("Left ventricular mass fell more with drug X than with drug Y (p = 0.02), with similar reductions in blood "
      "pressure."), True, True),
    ("Patients with severe disease received a similar reduction in hospitalizations with drug X.", False, False),
    # a trend short of significance beside a significant result is a mixed result
    ("Drug X showed a trend toward fewer deaths and a significant reduction in nonfatal MI.", True, True),
    ("Mortality was comparable in these 2 subgroups (11% vs 9%; NS).", False, False),
    (("The relative benefit of beta-blockers on mortality after infarction is similar in the presence or absence of "
      "heart failure."), False, False),
    # a reason for withdrawal is no finding
    ("Two percent withdrew due to lack of efficacy and 92% were satisfied with drug X.", False, False),
    # a negator does not reach into a parenthesis; a decimal with a stray space is still a number
    ("Mortality was 7.8% with drug X compared with 14.0% in those who were not (a 44% reduction).", False, False),
    ("There were fewer deaths with drug X (3. 4% versus 8.1%), and there was a similar number of admissions.",
     True, True),
    # both arms changed alike: each arm's test beside a null between them is a mixed result
    ("Blood pressure decreased significantly and comparably with drugs X and Y (p < 0.01).", True, True),
    ("During therapy with drugs X and Y, blood pressure was equally reduced (p < 0.05).", True, True),
    # a null of part of a comparison, or a difference set against a null, leaves the difference stated
    (("Drug X showed reduced risks compared with drug Y, although some of these findings did not reach "
      "statistical significance."), True, True),
    ("Drug X had no benefits in efficacy, but it still caused fewer side effects.", True, True),
    (("Adverse events were similar with drugs X and Y, but with a greater incidence of headaches with drug Y and of "
      "oedema with drug X."), True, True),
    # a cancelling verb negated leaves the effect standing: no null
    ("Drug Y, irrespective of the dose, did not negate the beneficial effects of drug X on lipids.", False, False),
    # an effect not yet studied is no null
    ("Effects of drug X on survival have not been determined, but drug Y improved survival.", False, False),
    # a fall from one value to another is a change within a group
    ("Blood pressure was reduced from 160/103 to 147/92 mm Hg with drug X (p < 0.0001).", False, False),
])
def test_a_sentence_states_an_effect_a_null_both_or_neither(text, effect, null):
    from builder.significance import stated_tests

    assert stated_tests(text) == (effect, null)


def test_what_a_claim_states_is_read_from_its_own_words_not_its_arm_marks(reader):
    """The marks set off the arms for the network; the tests a claim states are read from the claim as written."""
    from builder.significance import stated_tests

    text = ("Proteinuria was comparable in the placebo and in the ACEI group for MAP < or = 100 mmHg, but was higher "
            "in the placebo group for MAP > 100 mmHg.")
    marked = reader.marked(text, "ACEI", "placebo")
    assert marked != text and unmarked(marked) == text
    [reading] = reader.read([("Is proteinuria higher, lower, or the same with ACEI compared to placebo?", marked)])
    assert (reading.states_effect, reading.states_null) == stated_tests(text) == (True, True)
    assert not reading.stated


def test_stated_only_calls_a_stated_effect_against_a_stated_null_and_nothing_else(reader):
    effect, null, untested, mixed = reader.read([
        (Q, "Drug X significantly reduced systolic blood pressure compared with placebo (p < 0.001)."),
        (Q, "There was no significant difference in blood pressure between the drug X and placebo groups."),
        (Q, "Mean systolic blood pressure was 128 mm Hg with drug X and 131 mm Hg with placebo."),
        (Q, "Drug X lowered systolic (p = 0.01) but not diastolic blood pressure (p = 0.40) compared with placebo."),
    ])
    assert effect.stated and null.stated and effect.majority and null.majority
    assert disagreement(effect, null, stated_only=True) == "null_vs_effect"
    # numbers side by side with no test and a mixed result state no single finding
    assert not untested.states_effect and not untested.states_null and not untested.stated
    assert mixed.states_effect and mixed.states_null and not mixed.stated
    assert disagreement(effect, untested, stated_only=True) is None
    assert disagreement(mixed, null, stated_only=True) is None
    # opposite effects, an unsure reading and an answer without a finding are not called
    inc, dec = _reading("increase", "yes"), _reading("decrease", "no")
    assert disagreement(inc, dec) == "opposite_direction" and disagreement(inc, dec, stated_only=True) is None
    unsure = Reading("no_difference", {"increase": 0.3, "decrease": 0.2, "no_difference": 0.45, "not_reported": 0.05},
                     "no", {"yes": 0.0, "no": 1.0, "neutral": 0.0}, None, 0.45)
    assert not unsure.majority and disagreement(inc, unsure, stated_only=True) is None
    yes, no = _reading("not_reported", "yes"), _reading("not_reported", "no")
    assert disagreement(yes, no) == "opposite_answer" and disagreement(yes, no, stated_only=True) is None


@pytest.mark.slow  # trains a reader
def test_reader_train_saves_a_delta_over_the_base_model_that_loads_and_records_its_run(tmp_path):
    import json

    from safetensors.torch import load_file

    from biodivergence_cli.main import main

    out = tmp_path / "reader"
    assert main(["reader", "train", "--out", str(out), "--source", "pubmedqa", "--max-steps", "2",
                 "--batch-size", "4", "--device", "cpu", "--phrasings", "2", "--no-evaluate"]) == 0
    training = json.loads((out / CONFIG_FILE).read_text())["training"]
    assert training["steps"] == 2 and training["sources"] == ["pubmedqa"] and training["device"] == "cpu"
    assert training["phrasings"] == 2
    assert set(training["examples_per_source"]) == {"pubmedqa"} and len(training["data_fingerprint"]) == 64
    names = set(load_file(str(out / WEIGHTS_FILE)))
    assert {"finding.weight", "stance.weight"} <= names
    assert not any(n.startswith("encoder.embeddings.") for n in names)  # frozen: read from the base model
    [reading] = load_reader(out).read([(Q, "Drug X lowered blood pressure more than placebo (p < 0.01).")])
    assert reading.finding in ontology.READER_FINDINGS and reading.stance in ontology.READER_STANCES


@pytest.mark.slow  # trains a reader
def test_a_reader_trained_on_the_fit_part_never_saw_the_development_part_and_is_scored_there(tmp_path):
    import json

    from biodivergence_cli.main import main

    out = tmp_path / "dev-reader"
    assert main(["reader", "train", "--out", str(out), "--source", "pubmedqa", "--max-steps", "1",
                 "--batch-size", "4", "--part", "fit", "--no-evaluate"]) == 0
    training = json.loads((out / CONFIG_FILE).read_text())["training"]
    fit = reader_examples.training_examples(DATA, ("pubmedqa",), {"pubmedqa": 1000}, 13, True, "fit")
    assert training["part"] == "fit" and training["data_fingerprint"] == reader_examples.data_fingerprint(fit)
    assert not any(goldparts.in_part("pubmedqa", e.key, "development") for e in fit)
    assert scored_part(load_reader(out)) == "development" and scored_part(load_reader()) == "heldout"


def test_reader_train_names_a_device_torch_cannot_see(tmp_path, monkeypatch, capsys):
    import torch

    from biodivergence_cli.main import main

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert main(["reader", "train", "--out", str(tmp_path / "r"), "--source", "pubmedqa", "--max-steps", "1",
                 "--device", "cuda", "--no-evaluate"]) != 0
    assert "reader train --device cuda: torch sees no CUDA device" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()  # nothing written


def test_the_reader_card_shows_the_shipped_reports_scores_and_base_model():
    import json

    from huggingface_hub import ModelCard

    from builder.reader.model import REPORT_FILE

    card = ModelCard.load(SHIPPED / "README.md")
    assert card.data.base_model == ReaderConfig.load(SHIPPED).base_model
    report = json.loads((SHIPPED / REPORT_FILE).read_text())
    ei, hv = report["evidence_inference_findings"], report["healthver_same_claim"]
    assert f"**{ei['reader']['macro_f1']:.3f}**" in card.text
    assert f"floor {ei['tfidf_floor']['macro_f1']:.3f}" in card.text
    assert f"as the annotator asks a claim ({ei['reader_as_annotated']['n']} findings) | " \
           f"{ei['reader_as_annotated']['macro_f1']:.3f} |" in card.text
    assert f"({ei['reader']['n']} findings, {ei['articles']} articles)" in card.text
    assert f"**{hv['kappa']:.3f}**" in card.text and f"negation rule {hv['rule_kappa']:.3f}" in card.text
    assert f"({hv['pairs']:,} pairs, {hv['claims']} claims)" in card.text
    assert " / ".join(f"{cell['stance_accuracy']:.3f}" for cell in report["per_source"].values()) in card.text


def test_the_readers_encoder_is_written_as_a_plain_model_folder_that_reads_as_the_reader_does(reader, tmp_path):
    """``biodivergence reader encoder`` writes the encoder without heads: ``AutoModel`` loads it and it gives the
    reader's own token states (a model started from it starts from what the reader learned)."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    from biodivergence_cli.main import main

    out = tmp_path / "encoder"
    assert main(["reader", "encoder", "--out", str(out)]) == 0
    assert not any(p.name.startswith(".") for p in tmp_path.iterdir())  # the staging folder was swapped in
    encoder, tokenizer = AutoModel.from_pretrained(out), AutoTokenizer.from_pretrained(out)
    batch = tokenizer(["Is pain lower with ibuprofen than with placebo?"],
                      ["Ibuprofen reduced pain scores at 24 hours in children with otitis media."], return_tensors="pt")
    with torch.inference_mode():
        mine = encoder.eval()(**batch).last_hidden_state
        readers = reader.network.encoder(**batch).last_hidden_state
    assert torch.allclose(mine, readers, atol=1e-5)
    from builder.embeddings import resolve_model

    base = AutoModel.from_pretrained(resolve_model(reader.config.base_model))
    with torch.inference_mode():
        assert not torch.allclose(base.eval()(**batch).last_hidden_state, mine, atol=1e-3)  # not the base model
