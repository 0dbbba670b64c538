"""Assigning claims to clinical questions on lexical signals (the cosine is given): the words that name a
question's drugs and outcome, abbreviations, synonyms, spellings."""

from __future__ import annotations

import os

import pytest
from question_packs import answered, compiled_pack

from builder import questions
from builder.questions.filters import claim_words
from builder.questions.lexicon import stem, terms
from builder.questions.match import assess, may_answer

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    return compiled_pack(tmp_path_factory.mktemp("pack") / "p.yaml", """
questions:
  - {id: statin_bp, text: "Do statins reduce blood pressure?"}
  - {id: statin_ldl, text: "Do statins lower LDL cholesterol?"}
  - {id: ppi_heal, text: "Is the rate of healing higher, lower, or the same when comparing lansoprazole to omeprazole?"}
  - {id: bb_lvef, text: "In heart failure, do beta blockers improve left ventricular ejection fraction?"}
""")


def test_a_hyphenated_pair_of_words_is_named_apart_but_a_longer_phrase_is_not(tmp_path):
    pack = compiled_pack(tmp_path / "p.yaml", """
questions:
  - {id: ldl, text: "Does bezafibrate lower LDL-cholesterol compared with placebo?"}
  - {id: er, text: "Is extended-release oxybutynin more effective than immediate-release oxybutynin for urge incontinence?"}
""")
    assert answered(pack, "Bezafibrate reduced LDL cholesterol by 9% compared with placebo.") == {"ldl"}
    assert answered(pack, "Bezafibrate reduced low-density lipoprotein (LDL)-cholesterol by 9% versus placebo.") == {"ldl"}
    # read apart, "immediate-release oxybutynin" would be named by two of its three words
    assert answered(pack, "Extended release oxybutynin was significantly more effective then long acting tolterodine "
                          "for complete resolution of diurnal incontinence (p <0.05).") == set()


def test_a_long_outcome_is_named_only_with_its_head_noun(tmp_path):
    pack = compiled_pack(tmp_path / "p.yaml", """
questions:
  - {id: lvm, text: "Do ACE inhibitors reduce left ventricular mass in hypertensive patients?"}
""")
    assert answered(pack, "Lisinopril reduced left ventricular mass in hypertension.") == {"lvm"}
    assert answered(pack, "Lisinopril improved left ventricular ejection fraction in hypertension.") == set()


def test_a_condition_asked_as_acute_is_answered_by_claims_naming_it_without_the_word(tmp_path):
    pack = compiled_pack(tmp_path / "p.yaml", """
questions:
  - {id: triptan, text: "Triptans for acute migraine"}
  - {id: hypo, text: "Does insulin glargine reduce severe hypoglycaemia compared with NPH insulin?"}
""")
    assert answered(pack, "Almotriptan was significantly more effective than placebo in relieving migraine pain.",
                    ) == {"triptan"}
    # a word of severity changes the endpoint: any hypoglycaemia is not severe hypoglycaemia
    assert answered(pack, "Hypoglycaemia was less frequent with insulin glargine than with NPH insulin (p = 0.02).",
                    ) == set()


def test_a_question_of_healing_is_answered_by_healing_not_by_other_ulcer_outcomes(tmp_path):
    pack = compiled_pack(tmp_path / "p.yaml", """
questions:
  - {id: heal, text: "Do proton pump inhibitors heal duodenal ulcers faster than H2 receptor antagonists?"}
""")
    assert answered(pack, "Lansoprazole healed more ulcers than ranitidine at 4 weeks (P < 0.05).") == {"heal"}
    assert answered(pack, "Duodenal ulcer healing was faster with omeprazole than with ranitidine.") == {"heal"}
    # pain, acid and bleeding in ulcer patients are other outcomes
    assert answered(pack, "Improvement in ulcer pain was better with pantoprazole than with ranitidine "
                          "(81% versus 62%, p < 0.01).") == set()
    assert answered(pack, "Time below pH 6 was 0.15% with omeprazole and 20.1% with ranitidine (p = 0.0015) in "
                          "patients with duodenal ulcer.") == set()


def test_the_oral_hypoglycemic_classes_are_distinct(tmp_path):
    pack = compiled_pack(tmp_path / "p.yaml", """
questions:
  - {id: su, text: "Do sulfonylureas cause more weight gain than placebo?"}
  - {id: any, text: "Do oral hypoglycemics cause weight gain compared with placebo?"}
""")
    assert answered(pack, "Glipizide increased weight gain compared with placebo.") == {"su", "any"}
    assert answered(pack, "Metformin increased weight gain compared with placebo.") == {"any"}


def test_only_claims_that_may_answer_a_question_are_embedded(compiled):
    config, qs = questions.QuestionsConfig(), list(compiled.values())
    words = claim_words
    assert may_answer(words("Pravastatin lowered blood pressure."), qs, config)
    assert not may_answer(words("Pravastatin was well tolerated."), qs, config)  # no outcome named
    assert not may_answer(words("Blood pressure fell in both groups."), qs, config)  # no intervention
    # when a close similarity may stand in for the outcome, naming the intervention is enough
    assert may_answer(words("Pravastatin was well tolerated."), qs,
                                questions.QuestionsConfig(similarity_alone=0.8))


def test_a_member_drug_answers_a_question_about_its_class_not_the_reverse(compiled, tmp_path):
    assert answered(compiled, "Pravastatin 40 mg daily did not reduce blood pressure in the elderly.") == {"statin_bp"}
    # a claim about the class does not answer a question about one member drug
    member = compiled_pack(tmp_path / "m.yaml",
                           'questions:\n  - {id: m, text: "Does pravastatin reduce blood pressure?"}\n')["m"]
    words = claim_words("Statins reduced blood pressure in treated patients.")
    assert assess(words, 0.5, member, questions.QuestionsConfig()) is None


def test_abbreviations_defined_in_the_abstract_and_lexicon_synonyms(compiled):
    # "BP" is a synonym of blood pressure in the lexicon; "LVEF" is defined only by the abstract
    assert answered(compiled, "Simvastatin lowered BP by 4 mmHg.") == {"statin_bp"}
    abstract = "We measured the left ventricular ejection fraction (LVEF) of 120 patients with heart failure."
    assert answered(compiled, "Carvedilol increased LVEF by 8 units.", abstract) == {"bb_lvef"}
    assert answered(compiled, "Carvedilol increased LVEF by 8 units.") == set()


def test_a_claim_answering_two_questions_and_one_answering_none(compiled):
    both = "Rosuvastatin reduced LDL cholesterol by 45% and blood pressure by 3 mmHg."
    assert answered(compiled, both) == {"statin_bp", "statin_ldl"}
    assert answered(compiled, "Exercise training improved quality of life in heart failure.") == set()
    # the intervention alone is not enough, nor are the words when the claim is far from the question
    assert answered(compiled, "Pravastatin was well tolerated.") == set()
    assert answered(compiled, "Pravastatin reduced blood pressure.", similarity=0.05) == set()


def test_words_of_change_and_half_synonyms_do_not_make_an_outcome(tmp_path):
    q = compiled_pack(tmp_path / "p.yaml", 'questions:\n  - {id: q, text: "Do statins differ in blood pressure '
                                           'reduction?"}\n')["q"]
    config = questions.QuestionsConfig()
    # "reduction" is how the outcome moves; "BP" replacing "blood pressure" must itself be there
    off = claim_words("Simvastatin gave a 30% relative risk reduction in mortality.")
    assert assess(off, 0.5, q, config) is None
    on = claim_words("Simvastatin lowered BP by 4 mmHg.")
    assert "BP (= blood pressure)" in assess(on, 0.5, q, config)[1]


def test_similarity_stands_in_for_the_outcome_only_when_configured_and_very_close(compiled):
    words = claim_words("Pravastatin was studied in 300 adults.")  # the drug, no outcome words
    assert assess(words, 1.0, compiled["statin_bp"], questions.QuestionsConfig()) is None  # off by default
    config = questions.QuestionsConfig(similarity_alone=0.8)
    assert assess(words, 0.75, compiled["statin_bp"], config) is None
    _, why = assess(words, 0.85, compiled["statin_bp"], config)
    assert "outcome: by similarity" in why


def test_a_sentence_about_the_groups_before_treatment_answers_no_question(compiled):
    assert answered(compiled, "Baseline characteristics, including blood pressure, did not differ between the "
                              "pravastatin and placebo groups.") == set()
    assert answered(compiled, "Blood pressure before treatment was higher in the pravastatin group.") == set()
    # a change from baseline is a finding
    assert answered(compiled, "Pravastatin reduced blood pressure from baseline by 4 mmHg.") == {"statin_bp"}


def test_why_names_the_matched_words(compiled):
    words = claim_words("Healing at 8 weeks was 92% with lansoprazole and 89% with omeprazole.")
    score, why = assess(words, 0.6, compiled["ppi_heal"], questions.QuestionsConfig())
    assert "intervention: lansoprazole" in why and "comparator: omeprazole" in why and "outcome:" in why
    assert 0.0 < score <= 1.0


@pytest.mark.parametrize("british, american", [
    ("oesophagitis", "esophagitis"), ("haemoglobin", "hemoglobin"), ("oedema", "edema"), ("coeliac", "celiac"),
    ("tumours", "tumors"), ("centre", "center"), ("sulphonylureas", "sulfonylureas"), ("paediatric", "pediatric"),
])
def test_a_british_spelling_is_read_as_the_american_one(british, american):
    assert stem(british) == stem(american)
    assert terms(f"healing of {british}") == terms(f"healing of {american}")


def test_a_claim_in_british_spelling_answers_a_question_asked_in_american(tmp_path):
    pack = compiled_pack(tmp_path / "p.yaml", """
questions:
  - {id: hb, text: "In anemia, does erythropoietin raise hemoglobin compared with placebo?"}
""")
    abstract = "Patients with renal anaemia were randomised to erythropoietin or placebo."
    assert answered(pack, "Erythropoietin raised haemoglobin compared with placebo (P < 0.01).", abstract) == {"hb"}
    assert answered(pack, "Erythropoietin raised hemoglobin compared with placebo (P < 0.01).", abstract) == {"hb"}


def test_a_hyphenated_word_names_its_one_word_spelling_too(tmp_path):
    pack = compiled_pack(tmp_path / "p.yaml", """
questions:
  - {id: pe, text: "In women with pre-eclampsia, does L-arginine, compared to placebo, reduce blood pressure?"}
""")
    claim = "L-arginine reduced systolic blood pressure compared with placebo (P < 0.01)."
    for spelling in ("pre-eclampsia", "preeclampsia"):
        assert answered(pack, claim, f"Women with {spelling} were randomized to L-arginine or placebo.") == {"pe"}
    assert answered(pack, "Larginine reduced blood pressure compared with placebo (P < 0.01).",
                    "Women with pre-eclampsia were randomized.") == {"pe"}
    assert answered(pack, claim, "Women with gestational hypertension were randomized.") == set()
