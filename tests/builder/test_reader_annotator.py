"""The reader annotator's boundary rules and condition phrases, on sentences written for these tests."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from repo_paths import SHARED_DATA

from biodivergence_dataset import ontology
from biodivergence_dataset.records import Question
from builder.annotators.reader_annotator import asked_words, classify, conditions, differences
from builder.goldsources import make_claim, make_pair
from builder.questionpacks import question_from
from builder.questions.compiled import compile_questions
from builder.questions.lexicon import load_lexicon

DOMAIN = "clinical_trials_epidemiology"


#: Two sentences of abstracts, as a build pairs them (the abstracts' text does not matter to these tests).
ABSTRACTS = {"abstract_a": "Abstract A.", "abstract_b": "Abstract B."}


def pair(a: str, b: str, question: str | None = None):
    p = make_pair(make_claim("art-a", a, DOMAIN, "test"), make_claim("art-b", b, DOMAIN, "test"))
    return p.model_copy(update={"question": Question(question_id="q1", text=question)}) if question else p


@pytest.mark.parametrize(("a", "b", "question", "expected", "axes"), [
    # a condition that differs on both sides -> contextual, with that axis
    ("In children with asthma, montelukast reduced exacerbations.",
     "In adults with asthma, montelukast had no effect on exacerbations.",
     "Does montelukast reduce asthma exacerbations?", ontology.CONTEXTUAL, ["population_cohort"]),
    # dose against a co-treatment, and two patient groups: both read as conditions
    ("Pravastatin 40 mg daily did not reduce blood pressure in hypercholesterolaemic patients.",
     "Statins in combination with antihypertensive drugs improve blood pressure control in hypertensive patients.",
     "Do statins reduce blood pressure?", ontology.CONTEXTUAL, ["dosage_intervention", "population_cohort"]),
    # a concrete condition stated by one claim only is still recoverable (the preference rule)
    ("Aspirin reduced mortality in elderly patients with diabetes.", "Aspirin did not reduce mortality.",
     "Does aspirin reduce mortality?", ontology.CONTEXTUAL, ["population_cohort"]),
    # the form a drug is given in: a one-sided dose condition; the same form spelled two ways is no difference
    ("Tolterodine was as effective as oxybutynin.",
     "Extended-release oxybutynin was more effective than tolterodine (p < 0.05).",
     "Is tolterodine as effective as oxybutynin?", ontology.CONTEXTUAL, ["dosage_intervention"]),
    ("Extended release oxybutynin was as effective as tolterodine.",
     "Extended-release oxybutynin was more effective than tolterodine (p < 0.05).",
     "Is tolterodine as effective as oxybutynin?", "direct_contradiction", []),
    # the same stated condition on both sides and opposed findings -> direct
    ("Aspirin reduced mortality in elderly patients.", "Aspirin did not reduce mortality in elderly patients.",
     "Does aspirin reduce mortality?", "direct_contradiction", []),
    # nothing stated on either side -> underspecified
    ("Aspirin reduced mortality.", "Aspirin did not reduce mortality.",
     "Does aspirin reduce mortality?", "underspecified_apparent_contradiction", []),
    # explicit controversy and weak evidence come first
    ("Whether aspirin reduces mortality in elderly patients remains controversial.",
     "Aspirin did not reduce mortality in children.", "Does aspirin reduce mortality?",
     "unresolved_scientific_controversy", []),
    ("Preliminary evidence suggests aspirin reduces mortality in elderly patients.",
     "Aspirin did not reduce mortality in children.", "Does aspirin reduce mortality?", "evidence_insufficiency", []),
])
def test_boundary_rules_in_order(a, b, question, expected, axes):
    conflict, chosen, confidence = classify(pair(a, b, question))
    assert conflict == expected
    assert sorted(d.axis for d in chosen) == sorted(axes)
    assert 0 < confidence <= 1


def _asked(a: str, b: str, text: str):
    question = question_from({"id": "q1", "text": text})
    return pair(a, b).model_copy(update={"question": question}), compile_questions([question], load_lexicon())[0]


def test_different_drugs_for_an_arm_of_the_question_are_a_condition():
    """A question about a class, or against "other" drugs, pools comparisons: claims naming different drugs for
    one arm answer different ones, which is a condition the preference rule recovers."""
    asked, compiled = _asked("Blood pressure was reduced similarly by losartan and atenolol.",
                             "Atenolol, but not nifedipine, significantly reduced systolic blood pressure.",
                             "Is atenolol as effective as other antihypertensive drugs for blood pressure reduction?")
    conflict, chosen, _ = classify(asked, compiled)
    assert conflict == ontology.CONTEXTUAL and [d.axis for d in chosen] == ["dosage_intervention"]
    assert [c.span.text for c in chosen[0].a] == ["losartan"] and [c.span.text for c in chosen[0].b] == ["nifedipine"]
    # two members of the asked class
    asked, compiled = _asked("Captopril did not reduce mortality (p = 0.3).", "Ramipril reduced mortality (p = 0.002).",
                             "After myocardial infarction, do ACE inhibitors reduce mortality compared with placebo?")
    conflict, chosen, _ = classify(asked, compiled)
    assert conflict == ontology.CONTEXTUAL and [c.span.text for d in chosen for c in d.a + d.b] == [
        "Captopril", "Ramipril"]
    # a condition a claim states explains more than the drug: it comes first, the drugs after it
    subgroup, in_hf = _asked("In patients with asymptomatic LV dysfunction, enalapril did not reduce mortality.",
                             "Trandolapril reduced mortality (p = 0.001).",
                             "In patients with heart failure, do ACE inhibitors reduce mortality?")
    conflict, chosen, _ = classify(subgroup, in_hf)
    assert conflict == ontology.CONTEXTUAL
    assert [d.axis for d in chosen] == ["population_cohort", "dosage_intervention"]
    assert [c.span.text for c in chosen[1].a + chosen[1].b] == ["enalapril", "Trandolapril"]
    # a class and a member of it are one comparison; without the compiled question no drug is read
    same, compiled = _asked("ACE inhibitors did not reduce mortality (p = 0.3).", "Ramipril reduced mortality.",
                            "After myocardial infarction, do ACE inhibitors reduce mortality compared with placebo?")
    assert classify(same, compiled)[0] == classify(asked)[0] == "underspecified_apparent_contradiction"


def test_placebo_is_the_arm_a_question_without_a_comparator_asks_about():
    """Beta blockers against placebo is what "do beta blockers reduce mortality?" asks: one claim naming its
    placebo arm states no design difference. Against an active comparator, a placebo arm is one."""
    a = "Mortality was lower with bisoprolol than with placebo (p < 0.0001)."
    b = "Carvedilol did not reduce mortality (p = 0.4)."
    asked, compiled = _asked(a, b, "In patients with heart failure, do beta blockers reduce mortality?")
    conflict, chosen, _ = classify(asked, compiled)
    assert "study_design" not in [d.axis for d in chosen]
    assert conflict == ontology.CONTEXTUAL and [d.axis for d in chosen] == ["dosage_intervention"]
    active, compiled = _asked(a, b, "Do beta blockers reduce mortality more than ACE inhibitors?")
    assert "study_design" in [d.axis for d in classify(active, compiled)[1]]


def test_words_of_the_question_are_not_conditions():
    """'acute kidney injury' asked about is the outcome, not a disease-subtype difference."""
    a = "Contrast media increased the risk of acute kidney injury."
    b = "Contrast media did not increase the risk of acute kidney injury."
    asked = pair(a, b, "Does contrast media increase the risk of acute kidney injury?")
    assert conditions(asked.claim_a, asked_words(asked)) == []
    conflict, chosen, _ = classify(asked)
    assert conflict != ontology.CONTEXTUAL and chosen == []
    # the same words outside the question are a condition: chronic vs acute disease
    c = "Contrast media did not increase creatinine in chronic kidney disease."
    d = "Contrast media increased creatinine in acute kidney injury."
    conflict, chosen, _ = classify(pair(c, d, "Does contrast media increase creatinine?"))
    assert conflict == ontology.CONTEXTUAL and chosen[0].axis == "disease_subtype"


def test_condition_phrases_cover_the_whole_condition():
    text = "Drug X 20 mg twice daily in combination with metformin lowered HbA1c in obese adults aged over 65 years."
    p = pair(text, "Drug X did not lower HbA1c.", "Does drug X lower HbA1c?")
    found = {c.span.text for c in conditions(p.claim_a, asked_words(p))}
    assert "20 mg twice daily" in found
    assert "in combination with metformin" in found
    assert any(t.startswith("in obese adults aged over 65") for t in found)
    # the claim without conditions makes the difference one-sided
    diffs = differences(conditions(p.claim_a, asked_words(p)), conditions(p.claim_b, asked_words(p)))
    assert diffs and not any(d.two_sided for d in diffs)


@pytest.mark.parametrize("sentence, question, recalled, own", [
    # oncology: the earlier trials' women are not this trial's
    (("Although adjuvant trastuzumab has been shown to improve survival in women with HER2-positive early breast "
     "cancer, it did not improve survival in elderly women in this trial."),
     "Does adjuvant trastuzumab improve survival?", "in women with HER2-positive", "in elderly women"),
    # infection
    (("While previous trials reported a benefit in children under two years, amoxicillin did not shorten symptoms "
     "among adolescents with otitis media."),
     "Does amoxicillin shorten symptoms of otitis media?", "in children under two", "among adolescents"),
    # obstetrics, the recalled finding after a semicolon
    (("Low-dose aspirin reduced pre-eclampsia among nulliparous women; earlier studies found no effect in women "
     "with chronic hypertension."),
     "Does low-dose aspirin reduce pre-eclampsia?", "in women with chronic hypertension", "among nulliparous women"),
])
def test_a_clause_that_recalls_other_research_states_no_condition_of_this_study(sentence, question, recalled, own):
    """Conditions come from the claim's own finding, not from a clause reporting what other studies showed."""
    p = pair(sentence, "The drug had no effect.", question)
    found = [c.span.text for c in conditions(p.claim_a, asked_words(p))]
    assert not any(recalled in t for t in found), found
    assert any(t.startswith(own) for t in found), found


# The one-line rule "exactly one claim contains a negation word", written here independently of the project's cue
# lexicon, so the bar below moves with the data, not with our code.
#: How much κ the default annotator must gain over the rule on a check part (issue 58).
MIN_GAIN = 0.05
NEGATION = re.compile(r"\b(?:no|not|never|without|neither|nor|none|cannot|\w+n't)\b", re.IGNORECASE)


@pytest.mark.slow  # about half a minute: the reader reads ~1,900 (claim, evidence) texts
def test_the_default_annotator_beats_the_negation_rule_on_held_out_same_claim_pairs():
    """HealthVer same-claim pairs of claims the reader never saw (its held-out partition): the default annotator
    agrees with the experts better than the negation rule does, both scored by scikit-learn."""
    n, kappa, rule_kappa = held_out_kappas("healthver_question")
    assert n > 300 and kappa >= rule_kappa + MIN_GAIN


def held_out_kappas(source: str) -> tuple[int, float, float]:
    """(pairs, κ of the default annotator, κ of the negation rule) on the held-out pairs of a gold set that carry
    their question, both scored by scikit-learn."""
    from sklearn.metrics import cohen_kappa_score

    from builder.annotators import DEFAULT_ANNOTATOR, make_local
    from builder.goldsources import load_gold

    annotator = make_local(DEFAULT_ANNOTATOR)
    gold = [g for g in load_gold(source, SHARED_DATA) if annotator.heldout_gold(g)]
    assert all(g.pair.question is not None for g in gold)
    truth = [g.conflict for g in gold]
    labels = annotator.annotate_many([g.pair for g in gold])
    kappa = cohen_kappa_score(truth, [lab.conflict_type != ontology.NO_CONFLICT for lab in labels])
    negation = [bool(NEGATION.search(g.pair.claim_a.sentence)) != bool(NEGATION.search(g.pair.claim_b.sentence))
                for g in gold]
    return len(gold), kappa, cohen_kappa_score(truth, negation)


def test_a_claim_that_does_not_answer_the_question_is_never_in_conflict():
    from builder.annotators.reader_annotator import ReaderAnnotator
    from builder.reader import Reading

    def reading(finding, stance, yes_no):
        stances = {"yes": yes_no[0], "no": yes_no[1], "neutral": 1 - sum(yes_no)}
        return Reading(finding, {f: float(f == finding) for f in ontology.READER_FINDINGS}, stance, stances, None, 0.9)

    silent = reading("not_reported", "neutral", (0.0, 0.45))  # unanswered, yet some mass on "no"
    effect = reading("decrease", "yes", (0.9, 0.1))
    annotator = ReaderAnnotator.__new__(ReaderAnnotator)
    labels = annotator.decide(pair("Drug X lowered blood pressure.", "Drug X was given at night.",
                                    "Does drug X lower blood pressure?"), effect, silent)
    assert labels.conflict_type == ontology.NO_CONFLICT and labels.comparability == "off_question"


def test_the_reader_loads_on_first_use_once_whichever_threads_ask(monkeypatch, tmp_path):
    """An LLM run builds this annotator as its fallback: the network loads only when a pair needs it (once, also
    when the LLM's worker threads fall back together); a folder that holds no reader fails at once."""
    import time
    from concurrent.futures import ThreadPoolExecutor

    from builder.annotators import reader_annotator

    loads: list[Path] = []

    def load(folder):
        loads.append(folder)
        time.sleep(0.05)  # long enough for the other threads to ask meanwhile
        return object()

    monkeypatch.setattr(reader_annotator, "FindingReader", load)
    annotator = reader_annotator.ReaderAnnotator()
    assert loads == [] and "evidence_inference" in annotator.trained_on
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda _: annotator.reader, range(8)))
    assert loads == [annotator.folder] and all(g is got[0] for g in got)
    with pytest.raises(FileNotFoundError, match="not a finding reader folder"):
        reader_annotator.ReaderAnnotator(str(tmp_path))


def test_readings_are_taken_relative_to_the_questions_intervention(reader_annotator):
    """Both claims say enalapril causes more cough than candesartan. Each is asked the question in its own arm
    names (enalapril for the ACE inhibitors); the reader reads the direction for the arm the sentence is about,
    so the claim naming candesartan first reads a decrease, the annotator reverses it, and the pair agrees. A
    claim naming no asked drug is asked the question as written."""
    from builder.questionpacks import question_from

    q = question_from({"id": "cough", "text": "Do ACE inhibitors cause more cough than angiotensin receptor blockers?"})
    annotator = reader_annotator
    p = pair("Cough was significantly more frequent with enalapril than with candesartan.",
             "Cough was significantly less frequent with candesartan than with enalapril.").model_copy(
                 update={"question": q, **ABSTRACTS})
    asks = annotator.asks(p)
    assert [a[0] for a in asks] == ["Is cough higher, lower, or the same with enalapril compared to candesartan?"] * 2
    assert asks[1][1] == "Cough was significantly less frequent with { candesartan } than with [ enalapril ]."
    ra, rb = annotator.reader.read(asks)
    assert (ra.finding, rb.finding) == ("increase", "decrease")
    assert annotator.oriented(p, ra, rb) == (ra, rb.reversed())
    assert annotator.annotate(p).conflict_type == ontology.NO_CONFLICT
    assert annotator.ask("Cough was common in the trial.", q) == (q.text, "Cough was common in the trial.")


def test_under_a_declared_question_only_a_stated_effect_against_a_stated_null_is_a_conflict(reader_annotator):
    """Asked in their arm names, the claims conflict when one states a significant effect and the other a
    null; rates set side by side with no test are no finding to disagree with."""
    from builder.questionpacks import question_from

    q = question_from({"id": "cough", "text": "Do ACE inhibitors cause more cough than angiotensin receptor blockers?"})
    annotator = reader_annotator
    effect = "Cough was significantly more frequent with enalapril than with candesartan (p < 0.001)."
    null = "In elderly patients, cough did not differ significantly between lisinopril and losartan (p = 0.45)."
    untested = "Cough was reported by 12% of patients on enalapril and 9% of patients on candesartan."
    conflict, plain = annotator.annotate_many([pair(effect, null).model_copy(update={"question": q, **ABSTRACTS}),
                                               pair(effect, untested).model_copy(update={"question": q, **ABSTRACTS})])
    assert conflict.conflict_type != ontology.NO_CONFLICT and conflict.notes == "null_vs_effect"
    assert conflict.comparability == "same_question"
    assert plain.conflict_type == ontology.NO_CONFLICT


def test_a_claim_setting_the_two_arms_equal_reads_no_difference_between_them(reader_annotator):
    """"Similar and significant reductions with tolterodine and oxybutynin" is each arm's effect against placebo;
    under the head-to-head question it finds no difference, and so disagrees with a claim that one arm is better
    (and not with one that finds them alike)."""
    from builder.questionpacks import question_from

    q = question_from({"id": "oab", "text": "Is tolterodine as effective as oxybutynin for urinary incontinence?"})
    annotator = reader_annotator
    equal = ("Tolterodine and oxybutynin led to similar and significant reductions in urinary incontinence episodes "
             "(p < 0.001).")
    better = "Oxybutynin was significantly more effective than tolterodine for urinary incontinence (p = 0.003)."
    alike = "Urinary incontinence episodes did not differ between tolterodine and oxybutynin (p = 0.41)."
    p_equal = pair(equal, better).model_copy(update={"question": q, **ABSTRACTS})
    ra, rb = annotator.reader.read(annotator.asks(p_equal))
    oriented = annotator.oriented(p_equal, ra, rb)
    assert oriented[0].finding == "no_difference" and oriented[0].stated
    assert oriented[0].finding_probs["increase"] == oriented[0].finding_probs["decrease"] == 0.0
    conflict, agree = annotator.annotate_many([p_equal, pair(equal, alike).model_copy(update={"question": q,
                                                                                          **ABSTRACTS})])
    assert conflict.notes == "null_vs_effect"
    assert agree.conflict_type == ontology.NO_CONFLICT


def test_only_stated_findings_conflict_between_abstract_sentences_or_claims_asked_in_their_arm_names():
    from builder.annotators.reader_annotator import stated_only

    q = "Do statins reduce blood pressure?"
    bare = pair("Pravastatin lowered blood pressure.", "Statins did not change blood pressure.", q)
    with_abstracts = bare.model_copy(update=ABSTRACTS)
    assert not stated_only(pair("x", "y"), "x", "y")  # no question
    assert not stated_only(bare, q, q)  # review conclusions / evidence asked as written: any answer counts
    assert stated_only(with_abstracts, q, q)  # result sentences of abstracts state their tests
    arms = "Is blood pressure higher, lower, or the same with {} compared to placebo?"
    assert stated_only(bare, arms.format("pravastatin"), arms.format("statins"))  # both asked in their arm names
    assert not stated_only(bare, arms.format("pravastatin"), q)


def test_a_difference_read_only_from_the_abstracts_is_named_without_phrases():
    from builder.annotators.reader_annotator import Difference, reconciliation
    from builder.reader import Reading

    def read(finding):
        return Reading(finding, {f: float(f == finding) for f in ontology.READER_FINDINGS}, "yes",
                       {s: float(s == "yes") for s in ontology.READER_STANCES}, None, 1.0)

    text = reconciliation(ontology.CONTEXTUAL, [Difference("endpoint_definition", False, (), ())],
                          read("decrease"), read("no_difference"), "Does X reduce mortality?")
    assert "endpoint definition (as their abstracts state it)" in text and "not stated vs not stated" not in text


def test_a_follow_up_window_in_weeks_is_an_endpoint_condition():
    asked = pair("Captopril was associated with a non-significant reduction in 4-week mortality.",
                 "Captopril reduced mortality.", "Does captopril reduce mortality?")
    conds = conditions(asked.claim_a, asked_words(asked))
    assert [(c.axis, c.span.text) for c in conds if c.axis == "endpoint_definition"] == [
        ("endpoint_definition", "4-week")]


@pytest.mark.parametrize(("sentence", "doses"), [
    ("Captopril 25 mg twice daily did not reduce proteinuria.", ["25 mg twice daily"]),
    ("Captopril at 5 mg/kg reduced proteinuria.", ["5 mg"]),
    # an amount per day or per litre of what is measured is a result, not a dose
    ("Albumin excretion was 95.6 mg/24 h with captopril.", []),
    ("Creatinine rose to 1.4 mg/dl with captopril.", []),
    ("Proteinuria fell to 0.3 g/24h with captopril.", []),
    ("Left ventricular mass fell by 21 g/m(2) with captopril.", []),
    ("Captopril 50 mg/day did not reduce proteinuria.", ["50 mg/day"]),
])
def test_a_measured_amount_per_time_or_volume_is_no_dose(sentence, doses):
    asked = pair(sentence, "Captopril reduced proteinuria.", "Does captopril reduce proteinuria?")
    assert [c.span.text for c in conditions(asked.claim_a, asked_words(asked))
            if c.axis == "dosage_intervention"] == doses


@pytest.mark.parametrize(("sentence", "question", "expected"), [
    # a blood pressure measured over the day is a measurement protocol, not a clinical setting
    ("Mean ambulatory blood pressure was equally reduced with atenolol and nifedipine.",
     "Do beta blockers lower blood pressure?", [("assay_measurement_protocol", "ambulatory blood pressure")]),
    ("The reduction in ambulatory 24-h SBP/DBP was 13/9 mmHg with atenolol.",
     "Do beta blockers lower blood pressure?", [("assay_measurement_protocol", "ambulatory 24-h SBP")]),
    ("Atenolol lowered blood pressure in ambulatory care.",
     "Do beta blockers lower blood pressure?", [("clinical_setting", "ambulatory")]),
    # "blood" in the name of a measure is no specimen; blood drawn is one
    ("ACE inhibitors reduced mortality despite modest decreases in blood pressure.",
     "Do ACE inhibitors reduce mortality?", []),
    ("Troponin measured in whole blood was lower with ramipril.",
     "Does ramipril lower troponin?", [("sample_source", "blood")]),
    # a count of patients names no population; patients who report the outcome are not a population either
    ("Death occurred in 117 (38.9%) of 301 patients and 83 (27.5%) of 302 patients assigned enalapril.",
     "Does enalapril reduce mortality?", []),
    ("The percentage of patients who complained of cough was higher with lisinopril than with losartan.",
     "Does lisinopril cause more cough than losartan?", []),
    # the patients of a placebo arm are an arm, not a population, whatever the question compares
    # (that the trial had a placebo arm is a design cue under a question with an active comparator)
    ("Dry mouth was more common with oxybutynin than with tolterodine and occurred in 9.8% of placebo patients.",
     "Does tolterodine cause less dry mouth than oxybutynin?", [("study_design", "placebo")]),
    ("Headache was reported in 4% of sham-treated subjects and in placebo recipients.",
     "Does acupuncture reduce headache more than drug X?", [("study_design", "placebo")]),
    ("Dry mouth was more common in elderly placebo patients.", "Does tolterodine cause less dry mouth than oxybutynin?",
     [("population_cohort", "in elderly placebo patients")]),
    # the form a drug is given in is a dose condition, hyphenated or not
    ("Extended release oxybutynin was more effective than long-acting tolterodine.",
     "Is tolterodine as effective as oxybutynin?",
     [("dosage_intervention", "Extended release"), ("dosage_intervention", "long-acting")]),
])
def test_measures_and_counts_are_not_conditions(sentence, question, expected):
    asked = pair(sentence, "Nothing was stated.", question)
    assert [(c.axis, c.span.text) for c in conditions(asked.claim_a, asked_words(asked))] == expected


@pytest.mark.parametrize(("text", "yes_or_no"), [
    ("Do statins reduce blood pressure?", True),
    ("In women with pre-eclampsia, does L-arginine, compared to placebo, reduce blood pressure?", True),
    ("Is there a difference in mortality between enalapril and captopril?", True),
    ("Is X more effective than placebo for migraine?", True),
    ("Vitamin C cures COVID-19.", True),  # a claim asked as a question
    ("Is the rate of healing higher, lower, or the same when comparing lansoprazole to omeprazole?", False),
    ("Is blood pressure higher, lower or similar with X compared to Y?", False),
    ("What is the effect of aspirin on stroke?", False),
    ("Effect of aspirin on stroke", False),
    ("How effective is zolpidem for insomnia?", False),
    ("Paracetamol versus ibuprofen for fever in children", False),
])
def test_which_questions_are_answered_yes_or_no(text, yes_or_no):
    from builder.questionpacks import asks_yes_or_no

    assert asks_yes_or_no(text) is yes_or_no


def _reading(finding, yes, no):
    from builder.reader import Reading

    stances = {"yes": yes, "no": no, "neutral": round(1 - yes - no, 6)}
    return Reading(finding, {f: float(f == finding) for f in ontology.READER_FINDINGS},
                   max(stances, key=stances.get), stances, None, 0.9)


def test_claims_asked_a_yes_or_no_question_as_written_disagree_by_their_answers():
    """Two review conclusions without abstracts, asked "Does aspirin prevent pre-eclampsia?" as written: their
    answers decide, not the findings the reader reads against arms the question does not name."""
    from builder.annotators.reader_annotator import ReaderAnnotator, by_answers

    annotator = ReaderAnnotator.__new__(ReaderAnnotator)  # decide() needs no weights
    annotator._compiled = {}
    question = "Does aspirin prevent pre-eclampsia?"
    p = pair("Low-dose aspirin prevents pre-eclampsia in high-risk women.",
             "Aspirin did not prevent pre-eclampsia in nulliparous women at low risk.", question)
    assert by_answers(p)
    # the same finding read for both, but opposite answers: a conflict by the answers only
    yes, no = _reading("decrease", 0.9, 0.05), _reading("decrease", 0.1, 0.85)
    assert annotator.decide(p, yes, no, answers=True).notes == "opposite_answer"
    assert annotator.decide(p, yes, no).conflict_type == ontology.NO_CONFLICT
    # different findings, the same answer: no conflict by the answers
    a, b = _reading("decrease", 0.8, 0.1), _reading("no_difference", 0.7, 0.2)
    assert annotator.decide(p, a, b, answers=True).conflict_type == ontology.NO_CONFLICT
    assert annotator.decide(p, a, b).notes == "null_vs_effect"
    # sentences of abstracts, or a question answered by a direction: findings decide
    assert not by_answers(p.model_copy(update=ABSTRACTS))
    open_question = "Is pre-eclampsia higher, lower, or the same with aspirin compared to placebo?"
    assert not by_answers(pair(p.claim_a.sentence, p.claim_b.sentence, open_question))
    assert not by_answers(pair(p.claim_a.sentence, p.claim_b.sentence))  # no question


def test_an_open_pair_conflicts_only_on_a_question_both_claims_speak_to():
    """Without a declared question, unrelated findings share no question (``no_common_question``), claims that
    answer each other "yes" (two nulls on one question) agree, and claims that answer each other "no" conflict."""
    from builder.annotators.reader_annotator import NO_COMMON_QUESTION, ReaderAnnotator
    from builder.reader.answerer import Answer

    annotator = ReaderAnnotator.__new__(ReaderAnnotator)
    annotator._compiled = {}
    effect, null = _reading("decrease", 0.8, 0.1), _reading("no_difference", 0.1, 0.8)
    p = pair("Vaccination significantly reduced influenza hospitalisation in older adults (p < 0.01).",
             "Hernia recurrence did not differ between mesh and suture repair (p = 0.6).")
    off = annotator.decide(p, effect, null, open_answers=(Answer(0.9, 0.1), Answer(0.1, 0.1)))
    assert off.conflict_type == ontology.NO_CONFLICT and off.notes == NO_COMMON_QUESTION
    assert off.comparability == "off_question"
    assert annotator.decide(p, null, null, open_answers=(Answer(0.9, 0.8), Answer(0.8, 0.7))).notes == "same_finding"
    assert annotator.decide(p, effect, null, open_answers=(Answer(0.9, 0.2), Answer(0.8, 0.4))).notes == "opposite_answer"
    # the mean of the two answers decides: one firm "no" outweighs a faint "yes"
    assert annotator.decide(p, effect, null, open_answers=(Answer(0.9, 0.05), Answer(0.8, 0.6))).notes == "opposite_answer"
    assert annotator.decide(p, effect, null).notes == NO_COMMON_QUESTION  # nothing read: no shared question


@pytest.mark.slow  # about twenty seconds: both networks read 200 pairs both ways
def test_findings_of_two_different_trials_are_seldom_called_conflicts(reader_annotator):
    """Pairs of expert findings from two different check articles of Evidence Inference (no pair a conflict):
    at most 5 % labelled a conflict by the default annotator, as issue 58 asks of rows whose abstracts answer no
    common question (the replaced rule labelled 174 of 400 development pairs)."""
    import random

    from builder.goldparts import in_part
    from builder.reader.reader_examples import ei_findings

    findings = [f for f in ei_findings(SHARED_DATA / "evidence_inference")
                if in_part("evidence_inference", f.prompt.pmcid, "heldout")]
    rng, pairs = random.Random(7), []
    while len(pairs) < 200:
        a, b = rng.sample(findings, 2)
        if a.prompt.pmcid != b.prompt.pmcid:
            pairs.append(pair(a.text, b.text).model_copy(update=ABSTRACTS))
    labels = reader_annotator.annotate_many(pairs)
    assert sum(lab.conflict_type != ontology.NO_CONFLICT for lab in labels) <= 0.05 * len(pairs)


def test_conclusions_are_asked_a_yes_or_no_question_as_written_whatever_arms_they_name():
    """The question's fields name statins and blood pressure, and both conclusions name a statin; without
    abstracts they are asked the question as written (their answers decide), with abstracts in the statin's own
    name (their findings decide, stated by the sentence)."""
    from builder.annotators.reader_annotator import ReaderAnnotator

    q = question_from({"id": "bp", "text": "Do statins reduce blood pressure?"})
    assert (q.intervention, q.outcome) == ("statins", "blood pressure")
    annotator = ReaderAnnotator()
    annotator._reader = type("Marks", (), {"marked": staticmethod(lambda text, i, c: text)})()  # no weights needed
    p = pair("Pravastatin 40 mg daily did not reduce blood pressure in normotensive men.",
             "Statins in combination with antihypertensive drugs improve blood pressure control.").model_copy(
                 update={"question": q})
    assert [a[0] for a in annotator.asks(p)] == [q.text, q.text]
    with_abstracts = p.model_copy(update=ABSTRACTS)
    assert [a[0] for a in annotator.asks(with_abstracts)] == [
        "Is blood pressure higher, lower, or the same with pravastatin compared to placebo?",
        "Is blood pressure higher, lower, or the same with statins compared to placebo?"]


def test_pubmedqa_pairs_with_their_question_are_conclusions_without_abstracts():
    from builder.goldsources import load_gold

    plain, asked = load_gold("pubmedqa", SHARED_DATA), load_gold("pubmedqa_question", SHARED_DATA)
    assert len(plain) == len(asked) > 400
    assert [g.conflict for g in plain] == [g.conflict for g in asked]
    assert all(g.pair.question is not None and g.pair.question.text.endswith("?") for g in asked)
    assert all(not g.pair.abstract_a and not g.pair.abstract_b for g in asked)
    assert all(g.pair.abstract_a for g in plain) and all(g.pair.question is None for g in plain)


@pytest.mark.slow  # about ten seconds: the reader reads ~340 (question, text) pairs
def test_the_default_annotator_beats_the_negation_rule_on_held_out_conclusions_carrying_their_question():
    """PubMedQA conclusions the reader never saw, each with its question (the shape of review conclusions grouped
    by question): the default annotator agrees with the experts' yes / no better than the negation rule does,
    both scored by scikit-learn. Reading findings against the question instead of its answers scored below the
    rule here."""
    n, kappa, rule_kappa = held_out_kappas("pubmedqa_question")
    assert n > 100 and kappa >= rule_kappa + MIN_GAIN
