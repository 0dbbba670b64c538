"""Clinical questions: packs (from text alone or from fields), claim assignment, mining within questions,
gathering a question's abstracts from a local corpus, the cohen2006 source, collect --questions."""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

import numpy as np
import pytest
from repo_paths import REPO, SHARED_DATA

from biodivergence_dataset import io, ontology
from biodivergence_dataset.records import Abstract, CandidatePair, Claim, Question, claim_id_for
from builder import gather, mine, questionpacks, questions
from builder.embeddings import DEFAULT_MODEL
from builder.questions.arms import (
    arm_drugs,
    claim_arms,
    comparator_first,
    compares_arms,
    compares_itself,
    fixed_combination,
    sets_arms_equal,
)
from builder.questions.compiled import (
    INACTIVE,
    NAMED,
    OTHER,
    CompiledQuestion,
    comparison_kind,
    compile_questions,
    names_a_drug,
)
from builder.questions.endpoints import cause_specific_death
from builder.questions.filters import (
    claim_words,
    doses,
    reports_correlation,
    reports_interaction,
    reports_no_comparison,
    without_non_findings,
)
from builder.questions.groups import (
    abstract_names_arms,
    arms_named_apart,
    arms_named_by_group,
    drug_add_on,
    group_name_words,
    group_names,
    names_arms_by_role,
    selection_groups,
    sentence_stems,
    sets_groups_against,
    untreated_against_active,
)
from builder.questions.lexicon import COHEN_PACK, LEXICON, load_lexicon, stem, terms
from builder.questions.match import answers, article_answers, assess, may_answer, names_part_of
from builder.questions.population import population_mentions
from builder.sources import RawRecord, SourceSpec

os.environ.setdefault("HF_HUB_OFFLINE", "1")
COHEN = SHARED_DATA / "cohen2006_drug_class_reviews"


def write_pack(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def compiled_pack(path: Path, text: str, packs: tuple[str, ...] = ()) -> dict[str, CompiledQuestion]:
    """The questions of a pack written to ``path``, compiled with the shipped lexicon (and domain ``packs``), by id."""
    return {q.question.question_id: q for q in
            compile_questions(questionpacks.load_questions(write_pack(path, text)), load_lexicon(LEXICON, packs))}


# --- packs --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, want", [
    ("In women with pre-eclampsia, does L-arginine, compared to placebo, reduce blood pressure?",
     ("L-arginine", "placebo", "blood pressure", "women with pre-eclampsia")),
    ("Is the rate of healing higher, lower, or the same when comparing lansoprazole to omeprazole?",
     ("lansoprazole", "omeprazole", "rate of healing", None)),
    ("In adults with migraine, is rizatriptan more effective than sumatriptan for pain relief at 2 hours?",
     ("rizatriptan", "sumatriptan", "pain relief at 2 hours", "adults with migraine")),
    ("What is the effect of ACE inhibitors versus placebo on mortality in patients with heart failure?",
     ("ACE inhibitors", "placebo", "mortality", "patients with heart failure")),
    ("Does atenolol reduce stroke compared with placebo in elderly patients with hypertension?",
     ("atenolol", "placebo", "stroke", "elderly patients with hypertension")),
    ("Do proton pump inhibitors differ in healing rates of erosive esophagitis?",
     ("proton pump inhibitors", None, "healing rates of erosive esophagitis", None)),
    ("Do atypical antipsychotics cause fewer extrapyramidal symptoms than haloperidol?",
     ("atypical antipsychotics", "haloperidol", "extrapyramidal symptoms", None)),
    ("Effect of statins on blood pressure", ("statins", None, "blood pressure", None)),
    ("Is tolterodine vs oxybutynin associated with dry mouth?", ("tolterodine", "oxybutynin", "dry mouth", None)),
    ("Does amlodipine cause more edema than other calcium channel blockers?",
     ("amlodipine", "other calcium channel blockers", "edema", None)),
    ("Do antihistamines reduce pruritus in chronic idiopathic urticaria?",
     ("antihistamines", None, "pruritus", "chronic idiopathic urticaria")),
    # "heal" and "relieve" name the outcome: the object is the condition healed or relieved
    ("Do proton pump inhibitors heal duodenal ulcers faster than H2 receptor antagonists?",
     ("proton pump inhibitors", "H2 receptor antagonists", "duodenal ulcers healing", None)),
    ("Does sumatriptan relieve migraine pain compared with placebo?",
     ("sumatriptan", "placebo", "migraine pain relief", None)),
    # "comparing X to Y" whose intervention holds "and", "with" or "to" of its own: the last "to" joins the arms
    (("Is delirium higher, lower, or the same when comparing mobilisation and orientation in addition to usual care"
      " to usual care alone?"),
     ("mobilisation and orientation in addition to usual care", "usual care alone", "delirium", None)),
    ("Is pain higher, lower, or the same when comparing rocuronium with lidocaine to placebo?",
     ("rocuronium with lidocaine", "placebo", "pain", None)),
    ("Is HbA1c higher, lower, or the same when comparing dapagliflozin 2.5 to 10 mg plus metformin to placebo?",
     ("dapagliflozin 2.5 to 10 mg plus metformin", "placebo", "HbA1c", None)),
    ("Is mortality higher, lower, or the same when comparing captopril and diuretics versus diuretics alone?",
     ("captopril and diuretics", "diuretics alone", "mortality", None)),
    ("Is mortality higher, lower, or the same when comparing captopril and placebo?",
     ("captopril", "placebo", "mortality", None)),
    # a measure set between two named arms keeps its own "in …"
    ("Is time in remission higher, lower, or the same when comparing infliximab to placebo?",
     ("infliximab", "placebo", "time in remission", None)),
    # the ways reviewers ask whether something works, and review titles
    ("Are probiotics effective in preventing antibiotic-associated diarrhoea?",
     ("probiotics", None, "antibiotic-associated diarrhoea", None)),
    ("Is early surgery better than conservative treatment for sciatica?",
     ("early surgery", "conservative treatment", "sciatica", None)),
    ("Is ondansetron non-inferior to metoclopramide for postoperative nausea?",
     ("ondansetron", "metoclopramide", "postoperative nausea", None)),
    ("How effective is nicotine replacement therapy for smoking cessation?",
     ("nicotine replacement therapy", None, "smoking cessation", None)),
    ("Are corticosteroids beneficial for patients with septic shock?",
     ("corticosteroids", None, "efficacy", "patients with septic shock")),
    ("Should antibiotics be given to prevent infection after dog bites?",
     ("antibiotics", None, "infection", "dog bites")),
    ("Is there a difference in mortality between early and delayed surgery?",
     ("early surgery", "delayed surgery", "mortality", None)),
    ("Is the incidence of stroke lower with warfarin than with aspirin in atrial fibrillation?",
     ("warfarin", "aspirin", "incidence of stroke", "atrial fibrillation")),
    ("Is laparoscopic appendectomy associated with less pain than open appendectomy?",
     ("laparoscopic appendectomy", "open appendectomy", "pain", None)),
    ("Paracetamol versus ibuprofen for fever in children", ("Paracetamol", "ibuprofen", "fever", "children")),
    # a verb of the intervention's own ("glucose control") and the condition studied after the outcome
    ("Does intensive glucose control reduce cardiovascular events in type 2 diabetes?",
     ("intensive glucose control", None, "cardiovascular events", "type 2 diabetes")),
    ("Do beta-blockers reduce mortality after myocardial infarction?",
     ("beta-blockers", None, "mortality", "myocardial infarction")),
    ("Does intensive therapy reduce the change in HbA1c?", ("intensive therapy", None, "change in HbA1c", None)),
    ("Does early mobilisation reduce days in hospital?", ("early mobilisation", None, "days in hospital", None)),
    # an add-on: the added drug with the base, against the base alone
    ("Does the addition of rituximab to chemotherapy improve overall survival in follicular lymphoma?",
     ("rituximab plus chemotherapy", "chemotherapy alone", "overall survival", "follicular lymphoma")),
    # systematic reviews' titles (written for these tests, in the shapes review titles take; a development set)
    ("Statins for the primary prevention of cardiovascular disease", ("Statins", None, "cardiovascular disease", None)),
    ("Omega-3 fatty acids and the risk of cardiovascular disease",
     ("Omega-3 fatty acids", None, "cardiovascular disease", None)),
    ("Effectiveness of statins in reducing cardiovascular events in elderly patients",
     ("statins", None, "cardiovascular events", "elderly patients")),
    ("Compression stockings to prevent deep vein thrombosis in airline passengers",
     ("Compression stockings", None, "deep vein thrombosis", "airline passengers")),
    # a title naming who was studied and no outcome asks whether the treatment works there
    ("Tranexamic acid in trauma patients", ("Tranexamic acid", None, "efficacy", "trauma patients")),
    # arms that change a treatment both share
    ("Early versus delayed cord clamping in preterm infants",
     ("Early cord clamping", "delayed cord clamping", "efficacy", "preterm infants")),
    ("Intermittent versus continuous enteral feeding in critically ill adults",
     ("Intermittent enteral feeding", "continuous enteral feeding", "efficacy", "critically ill adults")),
    # "safe in P" is safety in P; "effective in healing" names the aim
    ("Is metformin safe in pregnancy?", ("metformin", None, "adverse events", "pregnancy")),
    ("Is esomeprazole more effective than lansoprazole in healing erosive esophagitis?",
     ("esomeprazole", "lansoprazole", "healing erosive esophagitis", None)),
    ("Antibiotics for acute otitis media in children", ("Antibiotics", None, "acute otitis media", "children")),
    ("Insulin versus oral hypoglycaemic agents for gestational diabetes",
     ("Insulin", "oral hypoglycaemic agents", "gestational diabetes", None)),
    ("Antiplatelet therapy after coronary stenting", ("Antiplatelet therapy", None, "efficacy", "coronary stenting")),
    ("Efficacy and safety of triptans in migraine", ("triptans", None, "efficacy", "migraine")),
    ("Comparative efficacy of second-generation antidepressants",
     ("second-generation antidepressants", None, "efficacy", None)),
    ("Psychological interventions for depression: are they effective?",
     ("Psychological interventions", None, "depression", None)),
    # the passive, "benefit from", "which … is most effective", "how do … compare", "is there evidence that"
    ("Can falls be prevented by exercise in older people?", ("exercise", None, "falls", "older people")),
    ("Do patients with heart failure benefit from beta-blockers?",
     ("beta-blockers", None, "efficacy", "patients with heart failure")),
    ("Which antidepressant is most effective for major depression?",
     ("antidepressant", None, "major depression", None)),
    ("How do ACE inhibitors compare with angiotensin receptor blockers in reducing mortality?",
     ("ACE inhibitors", "angiotensin receptor blockers", "mortality", None)),
    ("Is there evidence that acupuncture relieves chronic pain?", ("acupuncture", None, "chronic pain relief", None)),
    # the comparator set off before the question, alone or after the population
    ("Compared with standard care, does early mobilisation after hip fracture surgery improve functional recovery?",
     ("early mobilisation", "standard care", "functional recovery", "hip fracture surgery")),
    ("Compared to placebo, do SSRIs reduce depressive symptoms in adolescents?",
     ("SSRIs", "placebo", "depressive symptoms", "adolescents")),
    ("In adults with asthma, compared with placebo, do leukotriene antagonists reduce exacerbations?",
     ("leukotriene antagonists", "placebo", "exacerbations", "adults with asthma")),
    # "is there any benefit of X in P"; "treatment with X during pregnancy"
    ("Is there any benefit of steroids in bacterial meningitis?", ("steroids", None, "efficacy", "bacterial meningitis")),
    ("Is there a role for magnesium in the treatment of asthma attacks?",
     ("magnesium", None, "asthma attacks", None)),
    ("Does treatment with low-dose aspirin during pregnancy prevent pre-eclampsia?",
     ("low-dose aspirin", None, "pre-eclampsia", "pregnancy")),
    # two arms joined by "or" in a comparison; an intervention with an aim of its own; "as effectively as"
    ("Is surgery or radiotherapy better for localised prostate cancer?",
     ("surgery", "radiotherapy", "localised prostate cancer", None)),
    ("Do interventions to improve adherence reduce blood pressure?",
     ("interventions to improve adherence", None, "blood pressure", None)),
    ("Does single-dose azithromycin cure chlamydia as effectively as doxycycline?",
     ("single-dose azithromycin", "doxycycline", "chlamydia cure", None)),
    ("Are aspirin or heparin effective for preventing stroke?", ("aspirin or heparin", None, "stroke", None)),
])
def test_fields_are_read_from_the_text(text, want):
    read = questionpacks.read_question(text)
    assert (read.intervention, read.comparator, read.outcome, read.population) == want


def test_pack_from_text_only_and_from_fields(tmp_path):
    pack = write_pack(tmp_path / "p.yaml", """
questions:
  - {id: q1, text: "Do statins reduce blood pressure?"}
  - id: q2
    text: "Which drug is best for reflux?"
    intervention: esomeprazole
    comparator: omeprazole
    outcome: heartburn relief
    domain: clinical_trials_epidemiology
    query: esomeprazole[tiab] AND heartburn[tiab]
""")
    q1, q2 = questionpacks.load_questions(pack)
    assert (q1.question_id, q1.intervention, q1.outcome, q1.comparator) == ("q1", "statins", "blood pressure", None)
    assert (q2.intervention, q2.comparator, q2.outcome) == ("esomeprazole", "omeprazole", "heartburn relief")
    assert q2.domain == "clinical_trials_epidemiology"
    assert questionpacks.search_query(q2) == "esomeprazole[tiab] AND heartburn[tiab]"
    assert questionpacks.search_query(q1) == '"statins"[tiab] AND "blood pressure"[tiab]'
    # a title naming no outcome (efficacy, read) is searched with its population instead
    txa = questionpacks.question_from({"id": "txa", "text": "Tranexamic acid in trauma patients"})
    assert questionpacks.search_query(txa) == '"Tranexamic acid"[tiab] AND "trauma patients"[tiab]'
    laser = questionpacks.question_from({"id": "laser", "text": "Is laser therapy effective?"})
    assert questionpacks.search_query(laser) == '"laser therapy"[tiab]'


@pytest.mark.parametrize("body, message", [
    ('questions:\n  - {id: vague, text: "Why?"}\n  - {id: best, text: "What is the best treatment for gout?"}\n',
     r"p\.yaml: question 1 \('vague'\): cannot read the intervention and the outcome.*question 2 \('best'\)"),
    ('questions:\n  - {id: q1, text: "Do statins reduce blood pressure?", dose: high}\n',
     r"p\.yaml: question 1 \('q1'\): dose: Extra inputs"),
    ('questions:\n  - {text: "Do statins reduce blood pressure?"}\n', r"p\.yaml: question 1: id: Field required"),
    ('questions:\n  - {id: a, text: "Do statins reduce BP?"}\n  - {id: a, text: "Do statins reduce BP?"}\n',
     r"question 2 \('a'\): duplicate id"),
    ('questions:\n  - {id: a, text: "Do statins reduce BP?", domain: astrology}\n', r"question 1 \('a'\): .*domain"),
    ("questions: []\n", r"p\.yaml: a question pack is a mapping with a non-empty 'questions:' list"),
    ('questions:\n  - {id: 7, text: "Do statins reduce BP?"}\n  - {id: "7", text: "Do fibrates reduce BP?"}\n',
     r"question 2 \('7'\): duplicate id '7'"),
])
def test_bad_packs_name_the_file_and_the_entry(tmp_path, body, message):
    with pytest.raises(ValueError, match=message):
        questionpacks.load_questions(write_pack(tmp_path / "p.yaml", body))


@pytest.mark.parametrize("body, message", [
    ('questions:\n  - "Do statins reduce blood pressure?"\n', r"p\.yaml: question 1: expected a mapping .* got str"),
    ('questions:\n  - [a, b]\n', r"p\.yaml: question 1: expected a mapping .* got list"),
])
def test_a_pack_entry_that_is_no_mapping_is_a_one_line_error(tmp_path, body, message):
    with pytest.raises(questionpacks.PackError, match=message):
        questionpacks.load_questions(write_pack(tmp_path / "p.yaml", body))


def test_a_pack_error_never_renders_a_huge_value_and_names_odd_files(tmp_path):
    """An id that is an alias bomb (nine levels of nine: 9**9 strings if rendered) is named by position only; a
    non-UTF-8 pack and a folder given as the pack are named."""
    levels = ['a: &l0 ["lol"]'] + [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 9)]
    bomb = "\n".join(levels) + '\nquestions:\n  - {id: *l8, text: "Do statins reduce BP?"}\n'
    with pytest.raises(questionpacks.PackError, match=r"p\.yaml: question 1: id: ") as error:
        questionpacks.load_questions(write_pack(tmp_path / "p.yaml", bomb))
    assert "lol" not in str(error.value) and len(str(error.value)) < 500
    (tmp_path / "latin1.yaml").write_bytes("questions:\n  - {id: a, text: \"Caf\xe9?\"}\n".encode("latin-1"))
    with pytest.raises(questionpacks.PackError, match=r"latin1\.yaml: not UTF-8 text"):
        questionpacks.load_questions(tmp_path / "latin1.yaml")
    with pytest.raises(questionpacks.PackError, match=r"is a folder, not a YAML file"):
        questionpacks.load_questions(tmp_path)


@pytest.mark.parametrize("body, message", [
    ('questions:\n\t- {id: a, text: "Do statins reduce BP?"}\n', r"p\.yaml: not valid YAML: found character .* at line 2, column 1$"),
    ('questions:\n  - {id: a, text: "Do statins reduce BP?"\n', r"p\.yaml: not valid YAML: expected ',' or '}'.* at line 3"),
])
def test_a_pack_that_does_not_parse_is_a_one_line_error_with_its_position(tmp_path, body, message):
    with pytest.raises(questionpacks.PackError, match=message) as error:
        questionpacks.load_questions(write_pack(tmp_path / "p.yaml", body))
    assert "\n" not in str(error.value)


def test_an_id_is_read_as_written(tmp_path):
    """A pack of numbered questions loads with each id as its text: YAML alone would read `0123` as the octal 83,
    `1.10` as 1.1 and `yes` as true."""
    pack = write_pack(tmp_path / "p.yaml", 'questions:\n  - {id: 17, text: "Do statins reduce blood pressure?"}\n'
                                           '  - {id: CD001234, text: "Magnesium sulphate for women with pre-eclampsia"}\n'
                                           '  - {id: 0123, text: "Does metformin lower HbA1c?"}\n'
                                           '  - {id: 1.10, text: "Does aspirin reduce stroke?"}\n'
                                           '  - {id: yes, text: "Do beta blockers reduce mortality?", comparator: null}\n')
    assert [(q.question_id, q.intervention) for q in questionpacks.load_questions(pack)] == [
        ("17", "statins"), ("CD001234", "Magnesium sulphate"), ("0123", "metformin"), ("1.10", "aspirin"),
        ("yes", "beta blockers")]


def test_a_question_that_cannot_be_read_is_kept_with_a_warning_naming_it(tmp_path, caplog):
    """One phrasing the rules miss does not stop a pack: the question stays, with no fields, answers no claim, is
    searched for by its text, and the warning names the file and the entry and says what to state."""
    pack = write_pack(tmp_path / "p.yaml", 'questions:\n  - {id: q1, text: "Do statins reduce blood pressure?"}\n'
                                           '  - {id: vague, text: "Why?"}\n')
    with caplog.at_level("WARNING", logger="builder.questionpacks"):
        q1, vague = questionpacks.load_questions(pack)
    assert q1.intervention == "statins" and (vague.intervention, vague.outcome) == (None, None)
    assert questionpacks.unread_fields(vague) == ["intervention", "outcome"] and not questionpacks.unread_fields(q1)
    assert re.search(r"p\.yaml: question 2 \('vague'\): cannot read the intervention and the outcome .*"
                     r"state intervention:, outcome: in the entry", caplog.text)
    assert questionpacks.search_query(vague) == "Why"
    with pytest.raises(ValueError, match="cannot read the intervention and the outcome"):
        questionpacks.question_from({"id": "x", "text": "Statins"})  # strict by default


def test_the_demo_pack_covers_the_fourteen_classes():
    qs = questionpacks.load_questions(questionpacks.PACK_DIR / "cohen2006_drug_classes.yaml")
    lexicon = load_lexicon()
    known = [terms(d) for names, members in lexicon.classes for d in (*names, *members)]
    for q in qs:  # every intervention names a drug or class of the lexicon, as read from the text
        own = terms(q.intervention)
        assert any(k and k <= own for k in known), (q.question_id, q.intervention)
    assert len(qs) >= 40 and all(q.intervention and q.outcome for q in qs)
    prefixes = {q.question_id.split("_")[0] for q in qs}
    assert prefixes == {"acei", "adhd", "ah", "aap", "bb", "ccb", "est", "nsaid", "op", "ohg", "ppi", "smr", "trp",
                        "ui"}


# --- assignment (lexical signals; the cosine is given) ---------------------------------------------------
@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    return compiled_pack(tmp_path_factory.mktemp("pack") / "p.yaml", """
questions:
  - {id: statin_bp, text: "Do statins reduce blood pressure?"}
  - {id: statin_ldl, text: "Do statins lower LDL cholesterol?"}
  - {id: ppi_heal, text: "Is the rate of healing higher, lower, or the same when comparing lansoprazole to omeprazole?"}
  - {id: bb_lvef, text: "In heart failure, do beta blockers improve left ventricular ejection fraction?"}
""")


def answered(compiled, sentence, abstract="", similarity=0.5, **config):
    found = answers(sentence, abstract, [similarity] * len(compiled), list(compiled.values()),
                              questions.QuestionsConfig(**config))
    return {q.question.question_id for q, _ in found}


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


# --- the stages on sentences written here, with the real encoder -----------------------------------------
SENTENCES = {  # article -> claims
    "A1": ["Pravastatin significantly reduced systolic blood pressure compared with placebo.",
           "Pravastatin lowered LDL cholesterol by 30%."],
    "A2": ["Atorvastatin did not reduce blood pressure in hypertensive patients.",
           "Atorvastatin reduced LDL cholesterol by 40%."],
    "A3": ["Simvastatin therapy had no effect on blood pressure.",
           "Simvastatin improved endothelial function in smokers."],
    "A4": ["Exercise training improved quality of life in heart failure.",
           "Exercise training reduced hospital admissions in heart failure."],
}


def _claims() -> list[Claim]:
    out = []
    for uid, sentences in SENTENCES.items():
        start = 0
        for s in sentences:
            out.append(Claim(claim_id=claim_id_for(uid, start, start + len(s)), article_uid=uid,
                             domain="clinical_trials_epidemiology", sentence=s, claim_type="efficacy",
                             sentence_start=start, sentence_end=start + len(s), confidence=0.9))
            start += len(s) + 1
    return out


@pytest.fixture(scope="module")
def staged(tmp_path_factory):
    root = tmp_path_factory.mktemp("questions")
    io.write_records(root / "claims", _claims(), io.StageStats("claims"))
    pack = write_pack(root / "pack.yaml", """
questions:
  - {id: statin_bp, text: "Do statins reduce blood pressure?"}
  - {id: statin_ldl, text: "Do statins lower LDL cholesterol?"}
  - {id: unused, text: "Does metformin reduce HbA1c?"}
  - {id: vague, text: "What is the best treatment?"}
""")
    cache = root / "embedding_cache"
    stats = questions.run_stage(root / "claims", root / "questions",
                                questions.QuestionsConfig(pack=str(pack), cache_dir=str(cache)))
    return root, stats


def test_questions_command_finds_the_stage_current(staged, capsys):
    from biodivergence_cli.main import main

    root, stats = staged
    assert main(["questions", str(root / "claims"), "--pack", str(root / "pack.yaml"), "--out",
                 str(root / "questions"), "--cache-dir", str(root / "embedding_cache")]) == 0
    assert f"{stats['kept']} of 8 claims answer at least one of 4 questions" in capsys.readouterr().out


def test_questions_stage_gives_the_same_assignments_on_two_ranks(staged, tmp_path):
    from builder.runtime import RuntimeConfig

    root, stats = staged
    config = questions.QuestionsConfig(pack=str(root / "pack.yaml"), cache_dir=str(root / "embedding_cache"))
    two = questions.run_stage(root / "claims", tmp_path / "q2", config, RuntimeConfig(tasks=2, workers=1))
    rows = lambda folder: [a.model_dump() for a in io.read_records(folder, questions.Assignment)]
    assert rows(tmp_path / "q2") == rows(root / "questions")
    assert two["assignments_per_question"] == stats["assignments_per_question"] and two["kept"] == stats["kept"]


def test_questions_stage_writes_assignments_and_stats(staged):
    root, stats = staged
    rows = {(a.article_uid, a.question_id) for a in io.read_records(root / "questions", questions.Assignment)}
    assert {("A1", "statin_bp"), ("A2", "statin_bp"), ("A3", "statin_bp"), ("A1", "statin_ldl"),
            ("A2", "statin_ldl")} <= rows
    assert not any(uid == "A4" for uid, _ in rows)
    assert stats["seen"] == 8 and stats["dropped_no_question"] == 8 - stats["kept"]
    assert stats["assignments_per_question"]["unused"] == 0 and stats["questions_without_claims"] == 2
    # a question whose intervention and outcome cannot be read is kept, answers nothing, and is counted
    assert stats["assignments_per_question"]["vague"] == 0 and stats["questions_unread"] == 1
    assert all(a.why and 0 < a.score <= 1 for a in io.read_records(root / "questions", questions.Assignment))
    again = questions.run_stage(root / "claims", root / "questions", questions.QuestionsConfig(
        pack=str(root / "pack.yaml"), cache_dir=str(root / "embedding_cache")))
    assert again == stats  # current: not redone


@pytest.fixture(scope="module")
def mined(staged):
    root, _ = staged
    return root, mine.run_stage(root / "claims", root / "pairs", mine.MineConfig(
        questions_dir=str(root / "questions"), cache_dir=str(root / "embedding_cache")))


def test_mining_forms_pairs_within_questions_across_articles_and_reuses_the_embeddings(mined, staged):
    root, stats = mined
    pairs = list(io.read_records(root / "pairs", CandidatePair))
    assignments = {}
    for a in io.read_records(root / "questions", questions.Assignment):
        assignments.setdefault(a.claim_id, set()).add(a.question_id)
    within = [p for p in pairs if p.question is not None]
    assert stats["pairs_by_origin"]["within_question"] >= 4 and within
    for p in within:
        assert p.claim_a.article_uid != p.claim_b.article_uid
        assert p.question.question_id in assignments[p.claim_a.claim_id] & assignments[p.claim_b.claim_id]
    for p in pairs:  # an open pair carries a question only when both claims answer it
        shared = assignments.get(p.claim_a.claim_id, set()) & assignments.get(p.claim_b.claim_id, set())
        assert (p.question is not None) == bool(shared)
    bp = {frozenset((p.claim_a.article_uid, p.claim_b.article_uid)) for p in within
          if p.question.question_id == "statin_bp"}
    assert bp == {frozenset(x) for x in (("A1", "A2"), ("A1", "A3"), ("A2", "A3"))}
    assert sum(stats["pairs_by_question"].values()) == len(within)
    # the questions stage embedded the claims that name a question's intervention and outcome; open mining
    # embeds the rest, and none twice
    _, q_stats = staged
    assert 0 < stats["embedding_cache"]["embedded"] < stats["claims"]
    assert q_stats["claims_embedded"] + stats["embedding_cache"]["embedded"] == len(
        {c.sentence for c in _claims()} | {"Do statins reduce blood pressure?", "Do statins lower LDL cholesterol?",
                                          "Does metformin reduce HbA1c?", "What is the best treatment?"})


def test_without_open_fill_every_pair_answers_a_common_question(mined, tmp_path):
    root, stats = mined
    assert stats["pairs_by_origin"]["open"] > 0  # the default fills the cap by open mining
    cache = tmp_path / "embedding_cache"  # a cache holding only what the questions stage embeds
    questions.run_stage(root / "claims", tmp_path / "questions", questions.QuestionsConfig(
        pack=str(root / "pack.yaml"), cache_dir=str(cache)))
    only = mine.run_stage(root / "claims", tmp_path / "pairs", mine.MineConfig(
        questions_dir=str(tmp_path / "questions"), cache_dir=str(cache), open_fill=False))
    assert only["embedding_cache"]["embedded"] == 0  # only claims that answer a question are paired
    pairs = list(io.read_records(tmp_path / "pairs", CandidatePair))
    assert pairs and all(p.question is not None for p in pairs)
    assert set(only["pairs_by_origin"]) == {"within_question"}
    assert only["pairs_by_origin"]["within_question"] == stats["pairs_by_origin"]["within_question"]
    with pytest.raises(ValueError, match="open_fill: false .* needs a question pack"):
        mine.run_stage(root / "claims", tmp_path / "none", mine.MineConfig(open_fill=False))


def test_question_pairs_caps_each_question_and_never_pairs_one_article():
    claims = _claims()
    rng = np.random.default_rng(0)
    emb = rng.normal(size=(len(claims), 8)).astype(np.float32)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    assigned = {c.claim_id: {"q": 0.5} for c in claims}  # every claim answers q
    rows, dropped = mine.question_pairs(claims, emb, assigned, mine.MineConfig(cap_per_question=5))
    assert len(rows) == 5 and all(claims[i].article_uid != claims[j].article_uid for _, _, i, j, _, _ in rows)
    combined = [-r[0] for r in rows]
    assert combined == sorted(combined, reverse=True)
    cross = sum(a.article_uid != b.article_uid for k, a in enumerate(claims) for b in claims[k + 1:])
    assert dropped["over_question_cap"] == cross - 5


def test_question_pairs_hold_each_claim_in_at_most_max_pairs_per_claim():
    from collections import Counter

    claims = _claims()
    rng = np.random.default_rng(0)
    emb = rng.normal(size=(len(claims), 8)).astype(np.float32)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    assigned = {c.claim_id: {"q": 0.5} for c in claims}
    free, _ = mine.question_pairs(claims, emb, assigned, mine.MineConfig(cap_per_question=1000))
    limited, dropped = mine.question_pairs(claims, emb, assigned,
                                           mine.MineConfig(cap_per_question=1000, max_pairs_per_claim=2))
    per_claim = Counter(k for row in limited for k in row[2:4])
    assert max(Counter(k for row in free for k in row[2:4]).values()) > 2 and max(per_claim.values()) == 2
    # taken in rank order: the limited rows keep the order of the free ranking
    assert [r[1] for r in limited] == [r[1] for r in free if r[1] in {x[1] for x in limited}]
    assert dropped["over_question_cap"] == sum(a.article_uid != b.article_uid
                                               for k, a in enumerate(claims) for b in claims[k + 1:]) - len(limited)


def test_question_pairs_give_every_two_articles_a_row_before_any_two_a_second():
    claims = _claims()
    rng = np.random.default_rng(0)
    emb = rng.normal(size=(len(claims), 8)).astype(np.float32)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    assigned = {c.claim_id: {"q": 0.5} for c in claims}  # 4 articles: 6 article pairs, 24 claim pairs

    def article_pairs(rows):
        return [frozenset((claims[i].article_uid, claims[j].article_uid)) for _, _, i, j, _, _ in rows]

    free, _ = mine.question_pairs(claims, emb, assigned, mine.MineConfig(cap_per_question=1000))
    assert len(set(article_pairs(free[:6]))) < 6  # by score alone, the best six repeat an article pair
    six, _ = mine.question_pairs(claims, emb, assigned, mine.MineConfig(cap_per_question=6))
    assert len(set(article_pairs(six))) == 6
    best = {}  # each article pair's row is its best-scored one
    for row, key in zip(free, article_pairs(free), strict=True):
        best.setdefault(key, row[1])
    assert {r[1] for r in six} == set(best.values())
    seven, _ = mine.question_pairs(claims, emb, assigned, mine.MineConfig(cap_per_question=7))
    extra = next(r for r in free if r[1] not in set(best.values()))  # then the best remaining row
    assert {r[1] for r in seven} == set(best.values()) | {extra[1]}
    assert [r[1] for r in seven] == [r[1] for r in free if r[1] in {x[1] for x in seven}]  # in rank order


def test_release_rows_carry_the_question(mined, tmp_path):
    """A pair with a question and one without, through Example.from_pair into a release read by load_dataset."""
    from datasets import load_dataset
    from release_factory import make_example

    from biodivergence_dataset import card, release
    from biodivergence_dataset.records import Example

    root, _ = mined
    pairs = list(io.read_records(root / "pairs", CandidatePair))
    with_q = next(p for p in pairs if p.question is not None)
    labels = {k: v for k, v in make_example("pmid:1", "pmid:2").model_dump().items()
              if k not in Example.model_fields or k in ("conflict_type", "divergence_axes", "dominant_confounder",
                                                       "reconciliation", "annotator_id", "annotator_kind",
                                                       "confidence", "prompt_version")}
    asked = Example.from_pair(with_q, **labels)
    plain = make_example("pmid:3", "pmid:4")
    assert (asked.question_id, asked.question) == (with_q.question.question_id, with_q.question.text)
    for config in ("primary", "pairlevel"):
        release.write_config(tmp_path, config, {"train": [asked], "validation": [plain], "test": [plain]})
    card.write_card(tmp_path)
    ds = load_dataset(str(tmp_path), "pairlevel")
    assert ds["train"][0]["question_id"] == with_q.question.question_id
    assert ds["train"][0]["question"] == with_q.question.text
    assert (ds["test"][0]["question_id"], ds["test"][0]["question"]) == ("", "")


# --- the cohen2006 source and gathering ---------------------------------------------------------------------
def test_cohen2006_reader_reads_every_row_of_the_real_csvs():
    records = [r for r in SourceSpec.parse(f"cohen2006:{COHEN}").items() if isinstance(r, RawRecord)]
    assert len(records) == 15268  # SOURCE.md: rows
    with_text = [r for r in records if r.sections]
    assert len(with_text) == 13730 and len(records) - len(with_text) == 1538  # SOURCE.md: with abstract / empty
    assert all(r.pmid and r.pmid.isdigit() for r in records)
    assert len({r.pmid for r in records}) == 13938  # SOURCE.md: distinct PMIDs
    years = [r.year for r in with_text if r.year]
    assert min(years) >= 1991 and max(years) <= 2003
    assert any("\n" in text for r in with_text for _, text in r.sections) or all(r.title for r in with_text)


def test_a_table_source_reads_only_the_rows_its_where_option_names(tmp_path):
    """``where=COLUMN:VALUE``: a review's included studies (SOURCE.md: 761 of 15,268 rows), each at its own row
    number in its file; a column that is not there is an error naming it."""
    included = [r for r in SourceSpec.parse(f"cohen2006[where=label_included:1]:{COHEN}").items()
                if isinstance(r, RawRecord)]
    assert len(included) == 761
    everything = {(r.path, r.position): r.pmid for r in SourceSpec.parse(f"cohen2006:{COHEN}").items()
                  if isinstance(r, RawRecord)}
    assert all(everything[r.path, r.position] == r.pmid for r in included)
    by_number = SourceSpec.parse(f"cohen2006[where=7:1]:{COHEN}/Triptans.csv").items()  # label_included: column 7
    assert sum(isinstance(r, RawRecord) for r in by_number) == 24  # SOURCE.md: Triptans included
    with pytest.raises(ValueError, match=r"ACEInhibitors\.csv: cohen2006 option where='label_inclded:1'"):
        list(SourceSpec.parse(f"cohen2006[where=label_inclded:1]:{COHEN}").items())
    with pytest.raises(ValueError, match="COLUMN:VALUE"):
        list(SourceSpec.parse(f"cohen2006[where=label_included]:{COHEN}").items())


def test_gather_keeps_each_questions_best_abstracts_and_records_who_retrieved_them(tmp_path):
    texts = {
        "pmid:1": "Omeprazole healed erosive esophagitis in 80% of patients at 8 weeks.",
        "pmid:2": "Lansoprazole and omeprazole gave similar healing rates of erosive esophagitis.",
        "pmid:3": "Sumatriptan relieved migraine pain at 2 hours more often than placebo.",
        "pmid:4": "Rizatriptan gave faster pain relief than sumatriptan in migraine attacks.",
        "pmid:5": "Hip fractures were common in nursing homes.",
    }
    abstracts = [Abstract(article_uid=uid, text=t, domain="clinical_trials_epidemiology") for uid, t in texts.items()]
    io.write_records(tmp_path / "abstracts", abstracts, io.StageStats("ingest"))
    pack = write_pack(tmp_path / "p.yaml", """
questions:
  - {id: ppi, text: "Do proton pump inhibitors differ in healing rates of erosive esophagitis?"}
  - {id: trp, text: "Is rizatriptan more effective than sumatriptan for pain relief at 2 hours?"}
""")
    stats = gather.run_stage(tmp_path / "abstracts", tmp_path / "gathered", gather.GatherConfig(pack=str(pack), top_n=2))
    kept = {a.article_uid for a in io.read_records(tmp_path / "gathered", Abstract)}
    assert kept == {"pmid:1", "pmid:2", "pmid:3", "pmid:4"}
    assert stats["dropped_not_retrieved"] == 1 and stats["abstracts_per_question"] == {"ppi": 2, "trp": 2}
    rows = list(io.read_jsonl(tmp_path / "gathered" / gather.RETRIEVED_FILE))
    assert {(r["question_id"], r["article_uid"]) for r in rows} == {
        ("ppi", "pmid:1"), ("ppi", "pmid:2"), ("trp", "pmid:3"), ("trp", "pmid:4")}
    assert [r["rank"] for r in rows if r["question_id"] == "trp"] == [1, 2]
    # the class in the question is searched by its member drugs
    assert "omeprazole" in gather.query_tokens(questionpacks.load_questions(pack)[0])


def test_gather_on_a_corpus_without_a_word_it_reads_keeps_nothing_and_says_so(tmp_path):
    """Abstracts in a script the tokenizer does not read give empty documents: nothing is retrieved (BM25 over
    documents of no length would divide by zero)."""
    texts = {"pmid:1": "オメプラゾールは食道炎を治癒した。", "pmid:2": "Омепразол 20 мг."}
    io.write_records(tmp_path / "abstracts", [Abstract(article_uid=uid, text=t, domain="clinical_trials_epidemiology")
                                             for uid, t in texts.items()], io.StageStats("ingest"))
    pack = write_pack(tmp_path / "p.yaml", "questions:\n  - {id: ppi, text: \"Does omeprazole heal esophagitis?\"}\n")
    stats = gather.run_stage(tmp_path / "abstracts", tmp_path / "gathered", gather.GatherConfig(pack=str(pack)))
    assert stats["kept"] == 0 and stats["dropped_not_retrieved"] == 2 and stats["abstracts_per_question"] == {"ppi": 0}


def test_build_runs_gather_and_questions_only_with_a_pack(tmp_path):
    from builder import build

    plain = build.BuildConfig(sources=["jsonl:x.jsonl"])
    assert [s.name for s in build.active_steps(plain)] == [s.name for s in build.STEPS if not s.needs]
    claims_step = next(s for s in build.STEPS if s.name == "claims")
    assert build.step_input(claims_step, plain) == "abstracts"
    asked = build.BuildConfig(sources=["jsonl:x.jsonl"], questions={"pack": "p.yaml"}, gather={"top_n": 5})
    assert [s.name for s in build.active_steps(asked)][:5] == ["ingest", "gather", "claims", "questions", "mine"]
    assert build.step_input(claims_step, asked) == "gathered"
    mine_step = next(s for s in build.STEPS if s.name == "mine")
    assert mine_step.config_section(asked, tmp_path)["questions_dir"] == str(tmp_path / "questions")
    q_step = next(s for s in build.STEPS if s.name == "questions")
    assert q_step.config_section(asked, tmp_path)["cache_dir"] == str(tmp_path / "embedding_cache")
    assert mine_step.config_section(asked, tmp_path)["cache_dir"] == str(tmp_path / "embedding_cache")
    # ingest keeps a record no query pack places in the questions' one domain (a question naming none is clinical)
    ingest_step = next(s for s in build.STEPS if s.name == "ingest")
    pack = write_pack(tmp_path / "p.yaml", 'questions:\n  - {id: q1, text: "Do statins reduce blood pressure?"}\n')
    with_pack = build.BuildConfig(sources=["jsonl:x.jsonl"], questions={"pack": str(pack)})
    assert ingest_step.config_section(with_pack, tmp_path)["fallback_domain"] == ontology.QUESTION_DOMAIN
    assert "fallback_domain" not in ingest_step.config_section(plain, tmp_path)
    two = write_pack(tmp_path / "two.yaml", 'questions:\n  - {id: q1, text: "Do statins reduce blood pressure?"}\n'
                                            '  - {id: q2, text: "Does BRCA1 raise breast cancer risk?", domain: genomics}\n')
    mixed = build.BuildConfig(sources=["jsonl:x.jsonl"], questions={"pack": str(two)})
    assert ingest_step.config_section(mixed, tmp_path)["fallback_domain"] is None


# --- collect --questions ------------------------------------------------------------------------------------
def test_collect_builds_one_query_per_question(tmp_path):
    from builder.collect import CollectConfig, planned_queries, question_queries

    pack = write_pack(tmp_path / "p.yaml", """
questions:
  - {id: a, text: "Do statins reduce blood pressure?", domain: clinical_trials_epidemiology}
  - {id: b, text: "Is olanzapine as safe as risperidone?", query: "olanzapine AND risperidone"}
""")
    config = CollectConfig(questions=str(pack), query_domain="oncology")
    assert question_queries(config) == [
        ("a", "clinical_trials_epidemiology", '"statins"[tiab] AND "blood pressure"[tiab]'),
        ("b", "oncology", "olanzapine AND risperidone")]
    assert planned_queries([], config) == [(d, q) for _, d, q in question_queries(config)]


def test_question_demo_config_builds_from_the_cohen_corpus_with_its_pack():
    from builder import build

    repo = REPO
    config = build.load_config(repo / "builder" / "configs" / "demo.yaml")
    sources = build.resolve_sources(config, repo)
    assert [SourceSpec.parse(s).format for s in sources] == ["cohen2006"]
    assert len(SourceSpec.parse(sources[0]).files()) == 14
    assert [s.name for s in build.active_steps(config)][:5] == ["ingest", "gather", "claims", "questions", "mine"]
    for step in build.active_steps(config):
        step.make_config(step.config_section(config))
    assert len(questionpacks.load_questions(repo / config.questions["pack"])) >= 40
    assert config.annotate["annotator"] == "reader" and config.mine["slot_similarity"] is False


# --- the comparison must be the question's -----------------------------------------------------------------
@pytest.fixture(scope="module")
def comparisons(tmp_path_factory):
    return compiled_pack(tmp_path_factory.mktemp("cmp") / "p.yaml", """
questions:
  - {id: vs_placebo, text: "After myocardial infarction, do ACE inhibitors reduce mortality compared with placebo?"}
  - {id: no_comparator, text: "In heart failure, do beta blockers reduce mortality?"}
  - {id: head_to_head, text: "Does tolterodine cause less dry mouth than oxybutynin?"}
  - {id: vs_others, text: "Do calcium channel blockers increase cardiovascular events compared with other antihypertensive drugs?"}
  - {id: met_vs_su, text: "Is metformin more effective than sulfonylureas for glycemic control?"}
""")


@pytest.mark.parametrize("sentence, expected", [
    # against placebo: a placebo-controlled claim answers, a claim against another active drug does not
    ("Ramipril reduced all-cause mortality by 27% compared with placebo.", {"vs_placebo"}),
    ("Captopril reduced mortality after infarction.", {"vs_placebo"}),
    ("Mortality was lower with enalapril than with losartan and atenolol.", set()),
    # two drugs of the asked class compared head to head answer neither a placebo nor an open question
    ("Carvedilol reduced mortality more than metoprolol in heart failure.", set()),
    ("Bisoprolol reduced mortality in heart failure.", {"no_comparator"}),
    # a count of deaths on one drug states no effect: it answers no question, with a comparator or without one
    ("Bisoprolol was well tolerated in heart failure: 16 patients (8.9%) died.", set()),
    ("After myocardial infarction, 30 of 200 patients on ramipril died within a year.", set()),
    # two doses without a placebo arm compare doses; with one, each dose against placebo
    ("Mortality was lower with carvedilol 25 mg than with carvedilol 6.25 mg in heart failure.", set()),
    ("Carvedilol 6.25 mg and 25 mg both reduced mortality compared with placebo in heart failure.",
     {"no_comparator"}),
    # a named comparator must be named
    ("Dry mouth was less frequent with tolterodine than with oxybutynin.", {"head_to_head"}),
    ("Dry mouth was more frequent with tolterodine than with placebo.", set()),
    # "other" drugs: another active drug is named
    ("Cardiovascular events were as frequent with nifedipine as with atenolol.", {"vs_others"}),
    ("Cardiovascular events were fewer with nifedipine than with placebo.", set()),
    # two dose levels in words, without a placebo arm, compare doses
    (("No differences in survival between patients receiving standard and those receiving high doses of carvedilol "
      "in heart failure."), set()),
    # under a question of two named drugs, a dose level set against another compares doses
    (("Dry mouth was significantly less frequent in patients receiving low doses than high doses of tolterodine or "
      "oxybutynin."), set()),
    ("Dry mouth was significantly less frequent with tolterodine than with high-dose oxybutynin.", {"head_to_head"}),
    # the asked drug as background therapy: the claim tests another drug
    (("A trend in benefit of candesartan over placebo in reducing mortality after infarction, in the absence of "
      "background ACE inhibitor therapy."), set()),
    # an add-on to the asked drug does not answer whether the drug works against placebo / nothing
    ("Mortality was lower with bisoprolol plus digoxin than with bisoprolol alone in heart failure.", set()),
    # each drug against placebo says nothing of which of two drugs is better
    ("Both tolterodine and oxybutynin significantly reduced dry mouth episodes compared to placebo.", set()),
    ("Dry mouth fell more in the tolterodine and oxybutynin groups than on placebo.", set()),
    ("Dry mouth was less frequent with tolterodine than with oxybutynin and placebo.", {"head_to_head"}),
    # the question's two drugs must be set against each other, not each against itself or its baseline
    ("Compared with oxybutynin, tolterodine caused less dry mouth.", {"head_to_head"}),
    ("Dry mouth occurred in 12% of tolterodine and 30% of oxybutynin patients (P < 0.01).", {"head_to_head"}),
    ("Dry mouth was similar with tolterodine and oxybutynin.", {"head_to_head"}),
    (("Dry mouth was less frequent with extended-release oxybutynin and tolterodine than with immediate-release "
      "tolterodine."), set()),
    ("Tolterodine and oxybutynin significantly reduced dry mouth from baseline.", set()),
    ("No significant reduction in dry mouth was found with tolterodine and oxybutynin.", set()),
    ("Dry mouth was less frequent in patients given tolterodine or oxybutynin than in those receiving placebo.",
     set()),
    ("Dry mouth was less frequent with tolterodine or oxybutynin than with placebo (odds ratio 0.4).", set()),
    ("Dry mouth fell from 60% to 30% with tolterodine and from 62% to 35% with oxybutynin (P < 0.01).", set()),
    ("Dry mouth fell (P < 0.01) from 60% and 62% to 30% and 35% with tolterodine and oxybutynin, respectively.",
     set()),
    ("Dry mouth was reported by 20% and 35% of patients on tolterodine and oxybutynin, respectively.",
     {"head_to_head"}),
    ("Dry mouth fell significantly with each agent (P < 0.01): by 30% with tolterodine and 25% with oxybutynin.",
     set()),
    (("Tolterodine and oxybutynin caused a significant decrease (p = 0.0001) in dry mouth (-1.3 and -1.8, "
      "respectively)."), set()),
    # an add-on answers no question of the pack
    ("Combining nifedipine with atenolol lowered cardiovascular events more than atenolol alone.", set()),
    ("Concomitant use of tolterodine and oxybutynin caused less dry mouth than oxybutynin.", set()),
    (("After sulphonylurea failure, the addition of bedtime insulin or metformin was similarly effective in improving "
     "glycaemic control."), set()),
    # a fixed-dose combination is an add-on too; a hyphen between two drugs joins them only before a dose
    ("Glipizide/metformin tablets gave better glycaemic control than either glipizide or metformin monotherapy.",
     set()),
    ("HbA1c fell more with metformin-glibenclamide 500 mg/2.5 mg than with glibenclamide or metformin (P = 0.001).",
     set()),
    ("Metformin gave better glycaemic control than glipizide (p < 0.05).", {"met_vs_su"}),
    # another drug named before the reference is set against both arms, not one arm against the other
    ("The glycaemic control of nateglinide is comparable to that of metformin, sulphonylureas or acarbose.", set()),
    ("Compared with glipizide, metformin gave better glycaemic control (p < 0.05).", {"met_vs_su"}),
    # a drug-class word joined to a drug is a combination as well
    ("Cardiovascular events were fewer with nifedipine than with the thiazide/atenolol regimen (P < 0.05).", set()),
    ("Cardiovascular events were fewer with nifedipine than with atenolol (P < 0.05).", {"vs_others"}),
    (("Glycaemic control was better with metformin than glibenclamide (metformin-glibenclamide -0.6%, 95% CI -1.0 to "
     "-0.2)."), {"met_vs_su"}),
    # the same drug on both sides compares formulations; against the untreated it is the drug against none
    ("Mortality after infarction with intravenous enalapril was similar to that with oral enalapril.", set()),
    ("Mortality after infarction was lower with captopril than among patients not given captopril.",
     {"vs_placebo"}),
    # recurrence is an endpoint of its own
    ("Recurrence of dry mouth was less frequent with tolterodine than with oxybutynin.", set()),
    # one cause's deaths, or a composite with death, is an endpoint of its own beside mortality; all-cause is not
    ("After myocardial infarction, ramipril did not significantly reduce deaths from circulatory failure versus placebo.",
     set()),
    ("After myocardial infarction, cardiovascular mortality tended to be lower with captopril than with placebo.", set()),
    ("After myocardial infarction, death or severe heart failure was less frequent with zofenopril than placebo.", set()),
    (("After myocardial infarction, captopril reduced total mortality and cardiovascular deaths compared with "
      "placebo."), {"vs_placebo"}),
    ("After myocardial infarction, death from any cause was less frequent with ramipril than with placebo.",
     {"vs_placebo"}),
    # another active drug named by a class synonym of the lexicon
    ("Mortality after infarction was similar with angiotensin II antagonists and ACE inhibitors.", set()),
    # a claim about another class that names the asked one only as what it lacks: "blockade" names a class too
    (("Prior calcium channel blockade did not raise mortality in heart failure, nor did it bring the survival "
      "benefit seen with beta-blocker therapy."), set()),
    ("Prior beta blockade reduced mortality in heart failure.", {"no_comparator"}),
])
def test_a_claim_answers_only_a_question_with_its_comparison(comparisons, sentence, expected):
    assert answered(comparisons, sentence) == expected


@pytest.mark.parametrize(("text", "specific"), [
    ("Ramipril reduced the risk of death from circulatory failure by 18% (P = 0.237).", True),
    ("Cardiovascular mortality, defined as fatal stroke, sudden death and other cardiovascular death, fell.", True),
    ("Ramipril gave fewer CV deaths (4.2% vs 6.9%).", True),
    ("The relative risk of death or severe CHF was 0.60.", True),
    ("Event-free survival was longer with carvedilol.", True),
    ("There were significantly fewer sudden deaths with bisoprolol (48 [3.6%] vs 83 [6.3%] deaths).", True),
    ("Metoprolol reduced the combined end point of all-cause mortality/all-cause hospitalizations.", True),
    ("Cause-specific mortality did not differ significantly between treatment groups.", True),
    ("All-cause mortality was lower with bisoprolol (156 vs 228 deaths).", False),
    ("Therapy reduced the risk of death, cardiovascular death and sudden cardiac death.", False),
    ("Captopril gave a non-significant reduction in 4-week mortality.", False),
    ("Death from all causes occurred in 117 of 301 patients.", False),
    ("Beta-blockers significantly reduced all-cause mortality.", False),
    ("Blood pressure fell with ramipril.", False),
    # "fatal" before what was fatal is one cause's deaths; "fatal events" are deaths of any cause
    ("Fatal myocardial infarctions, fatal strokes and admissions were lower with carvedilol than placebo.", True),
    ("Fatal and non-fatal strokes were fewer with ramipril.", True),
    ("Fatal events were fewer with metoprolol (12 vs 20).", False),
    ("Non-fatal myocardial infarction was less frequent with ramipril, and mortality fell.", False),
])
def test_one_causes_deaths_and_composites_are_told_from_deaths_of_any_cause(text, specific):
    assert cause_specific_death(text) is specific


def test_a_claim_answers_a_question_about_a_population_its_article_studied(comparisons, tmp_path):
    claim = "Ramipril reduced all-cause mortality by 27% compared with placebo."
    after_mi = "We randomised 2006 patients with acute myocardial infarction (MI) to ramipril or placebo."
    # set in surgery, the claim answers no question asked after infarction, whatever history its abstract names:
    # a setting distinction of the demo's domain pack, not of the general lexicon
    in_surgery = "After bypass grafting, ramipril did not reduce mortality versus placebo."
    with_cohen = compiled_pack(tmp_path / "p.yaml", "questions:\n  - {id: vs_placebo, text: \"After myocardial "
                               "infarction, do ACE inhibitors reduce mortality compared with placebo?\"}\n",
                               (str(COHEN_PACK),))
    assert answered(with_cohen, in_surgery, after_mi) == set()
    assert answered(comparisons, in_surgery, after_mi) == {"vs_placebo"}
    in_hf = "Patients with chronic heart failure were randomised to ramipril or placebo for two years."
    assert answered(comparisons, claim, after_mi) == {"vs_placebo"}  # "After myocardial infarction, ..."
    assert answered(comparisons, claim, in_hf) == set()
    # the population may be named by a synonym of the lexicon, in the claim itself
    assert answered(comparisons, "After an MI, captopril reduced mortality compared with placebo.", in_hf) == {
        "vs_placebo"}


def test_a_claim_that_names_the_population_only_as_absent_answers_no_question_asked_in_it(tmp_path):
    pack = compiled_pack(tmp_path / "p.yaml", """
questions:
  - {id: renal, text: "In patients with diabetes, do ACE inhibitors reduce proteinuria?"}
""")
    abstract = "Type 2 diabetes is a leading cause of nephropathy. We randomised hypertensive patients to quinapril."
    for sentence in ("In hypertensive patients with no evidence of diabetes mellitus, quinapril reduced proteinuria.",
                     "In nondiabetic patients, quinapril reduced proteinuria.",
                     "Quinapril reduced proteinuria in patients without diabetes."):
        assert answered(pack, sentence, abstract) == set(), sentence
    assert answered(pack, "In diabetic patients, quinapril reduced proteinuria.", abstract) == {"renal"}
    assert answered(pack, "Quinapril reduced proteinuria in patients with diabetes.", abstract) == {"renal"}
    assert answered(pack, "In non-insulin-dependent diabetes mellitus, captopril reduced proteinuria.", abstract) == {
        "renal"}  # a population word that starts with "non" is no negation of itself
    # one mention inside the population and one outside: the claim compares them, so it speaks of diabetes
    assert answered(pack, "Quinapril reduced proteinuria in patients with and without diabetes.", abstract) == {
        "renal"}


def test_a_claim_naming_one_of_two_populations_of_a_comparison_answers_only_its_question(tmp_path):
    pack = compiled_pack(tmp_path / "p.yaml", """
questions:
  - {id: hf, text: "In patients with heart failure, do ACE inhibitors reduce mortality?"}
  - {id: mi, text: "After myocardial infarction, do ACE inhibitors reduce mortality compared with placebo?"}
  - {id: renal, text: "In patients with diabetes, do ACE inhibitors reduce proteinuria?"}
""")
    # the trial's abstract names both: infarction (who was studied) and heart failure (an endpoint)
    abstract = ("Patients with acute myocardial infarction were randomised to captopril or placebo; the endpoints "
                "were death and the development of heart failure.")
    # a claim naming neither population answers the question of the one its abstract names as who was studied
    assert answered(pack, "Captopril reduced mortality compared with placebo.", abstract) == {"mi"}
    both = "Patients with heart failure after acute myocardial infarction were randomised to captopril or placebo."
    assert answered(pack, "Captopril reduced mortality compared with placebo.", both) == {"hf", "mi"}
    # ventricular dysfunction named only as an endpoint's morbidity is no population either
    morbidity = ("Patients with acute myocardial infarction were randomised to lisinopril or placebo. The burden of "
                 "mortality plus morbidity for ventricular dysfunction remains high.")
    assert answered(pack, "Lisinopril reduced mortality compared with placebo.", morbidity) == {"mi"}
    assert answered(pack, "Early captopril after acute myocardial infarction reduced mortality compared with "
                          "placebo.", abstract) == {"mi"}
    assert answered(pack, "In post-MI patients, captopril reduced mortality compared with placebo.", abstract) == {"mi"}
    assert answered(pack, "In congestive heart failure, captopril reduced mortality compared with placebo.",
                    abstract) == {"hf"}
    assert answered(pack, "Captopril reduced mortality in patients with heart failure after myocardial infarction "
                          "compared with placebo.", abstract) == {"hf", "mi"}
    # heart failure as an endpoint names no population
    for endpoint in ("the development of severe heart failure", "hospitalization for worsening heart failure",
                     "death or severe congestive heart failure",
                     "the risk (relative risk 0.54; 95% CI 0.29 to 0.89) for severe congestive heart failure"):
        sentence = f"After myocardial infarction, captopril reduced mortality and {endpoint} compared with placebo."
        assert answered(pack, sentence, abstract) == {"mi"}, endpoint
    # nor does a subgroup of those studied
    subgroup = ("Patients with acute myocardial infarction were randomised to captopril or placebo. The benefit "
                "appeared larger in certain higher-risk groups, such as those presenting with heart failure.")
    assert answered(pack, "Captopril reduced mortality compared with placebo.", subgroup) == {"mi"}
    assert answered(pack, "After myocardial infarction, captopril reduced mortality compared with placebo, "
                          "particularly in patients with heart failure.", both) == {"mi"}
    # nor does a clause recalling earlier findings in another population
    recalled = ("Although enalapril has recently been shown to reduce mortality in patients with congestive heart "
                "failure, it had no significant impact on mortality after acute myocardial infarction.")
    assert answered(pack, recalled, both) == {"mi"}
    # the rival question need not be answered itself: a claim far from it (cosine 0) still names its population
    def far_from_mi(sentence, text):
        found = answers(sentence, text, [0.5, 0.0, 0.5], [pack["hf"], pack["mi"], pack["renal"]],
                                  questions.QuestionsConfig())
        return {q.question.question_id for q, _ in found}

    assert far_from_mi("Early captopril after acute myocardial infarction reduced mortality.", abstract) == set()
    assert far_from_mi("Captopril reduced mortality.", both) == {"hf"}
    # another outcome's population is no rival: diabetes does not take mortality in heart failure away
    assert answered(pack, "In diabetic patients with heart failure, captopril reduced mortality.", abstract
                    + " Many had diabetes.") == {"hf"}
    assert population_mentions("Four cardiac deaths; cardiac failure in 27%.", pack["hf"]) != []
    assert [m.group() for m in population_mentions("Four cardiac deaths occurred.", pack["hf"])] == []


@pytest.mark.parametrize("sentence, correlation", [
    ("The survival of patients who took ramipril correlated significantly with age (P < 0.001).", True),
    ("The fall in blood pressure was weakly related to plasma renin (r = 0.32, P < 0.01).", True),
    ("Bone density was related to serum estradiol (r-values from 0.15 to 0.29).", True),
    ("There was no relationship between T-cell ratios and bone density, and no effect of ERT on lymphocytes.", True),
    ("Olanzapine caused greater weight gain than risperidone, and the gain was not correlated with dose.", False),
    ("Ramipril reduced mortality compared with placebo (P = 0.002).", False),
    # a stated coefficient is a correlation even beside an arm
    ("Alveolar bone changes correlated with femur BMD changes (r = 0.28) in the HRT but not in the placebo group.",
     True),
])
def test_a_correlation_between_measures_is_told_from_a_comparison_of_arms(sentence, correlation):
    assert reports_correlation(sentence) is correlation


def test_a_correlation_between_measures_answers_no_question(comparisons):
    assert answered(comparisons, "Captopril reduced mortality after infarction.") == {"vs_placebo"}
    assert answered(comparisons, "Mortality with captopril after infarction correlated with age (r = 0.41).") == set()


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


@pytest.mark.parametrize("sentence, interaction", [
    (("The effect of enalapril on mortality and hospitalization for heart failure was significantly greater for "
     "patients with the lowest ejection fraction."), True),
    ("For carvedilol, mortality rate was comparable in these 2 subgroups (12/109; 11% vs 8/94; 9%; NS).", True),
    ("The benefit was more pronounced among women than among men.", True),
    # arms, not subgroups
    (("Symptom reductions were significantly greater in patients receiving risperidone than in patients "
     "receiving placebo."), False),
    ("The reduction of mortality risk was greater for nonselective beta-blockers than for selective ones.", False),
    ("Enalapril reduced mortality by 16% compared with placebo.", False),
    # patients with one condition against patients with another, all on the drug
    (("68% of 139 patients taking rizatriptan with a menstrually associated migraine had pain relief compared "
      "with 69% of 393 patients with nonmenstrually associated attacks."), True),
    ("Mortality was lower among patients with diabetes than in those without diabetes.", True),
    # people of one kind against people of another
    ("Older women on estrogen gained significantly more bone than younger women.", True),
    ("Risperidone lowered blood pressure more than placebo in hypertensive patients.", False),
    # a share of patients after "more than" counts them; it sets no reference
    ("Lansoprazole was superior to ranitidine, healing more than 80% of patients with erosive esophagitis.", False),
    ("Pain relief was 77% with rizatriptan compared with 37% of patients taking placebo.", False),
])
def test_an_effect_compared_across_subgroups_is_told_from_a_comparison_of_arms(sentence, interaction):
    assert reports_interaction(sentence) is interaction


def test_an_effect_compared_across_subgroups_answers_no_question(comparisons):
    assert answered(comparisons, "The effect of captopril on mortality after infarction was greater for patients "
                                 "with the lowest ejection fraction.") == set()


@pytest.mark.parametrize("sentence, expected", [
    # the drug named only as open-label use: an event of the trial, not its arm
    (("Development of heart failure or initiation of open-label ACE inhibitor after infarction was associated "
     "with a 4-fold increase in the risk of death (P < 0.0001)."), set()),
    ("In the open-label extension after infarction, captopril reduced mortality compared with placebo.",
     {"vs_placebo"}),
])
def test_a_drug_named_only_as_open_label_use_is_no_arm(comparisons, sentence, expected):
    assert answered(comparisons, sentence) == expected


@pytest.mark.parametrize("sentence, by_role", [
    ("There was no significant difference in mortality between the two groups (P = 0.16).", True),
    ("Akathisia did not differ between the two groups.", True),
    ("Gastritis regressed more in the treatment group compared with the control group (P < 0.01).", True),
    # each arm's own change, arms named by treatment, a direction between lettered arms, no comparison
    ("Hot flushes fell significantly in both groups from baseline.", False),
    ("There were no significant differences between the soy and placebo groups in hot flushes.", False),
    ("Mortality was lower in group I than in group II (P = 0.0001).", False),
    ("In the landmark group, haematoma occurred in 8.4% of patients.", False),
    # the words of the finding before "between the groups" are not the arms' names
    ("There were no significant differences in FEF50, PEF and FIV1 between the groups.", True),
    # placebo beside the arms but none of them; a direction between lettered arms whatever else is similar
    (("The blood pressure of the two groups was comparable during placebo and was reduced by 31.6 mmHg in group A "
      "or 29.9 mmHg in group B (p < 0.001 vs. placebo)."), False),
    ("Despite similar reinfarction in the two groups, mortality was lower in group I than in group II (P = 0.03).",
     False),
])
def test_arms_named_by_role_are_told_from_arms_named_by_treatment(sentence, by_role):
    assert names_arms_by_role(sentence) is by_role


def test_a_claim_naming_its_arms_by_role_answers_the_question_its_abstract_names(comparisons):
    abstract = ("Captopril or placebo was given to 400 patients after myocardial infarction. "
                "There was no significant difference in mortality between the two groups (P = 0.4).")
    claim = "There was no significant difference in mortality between the two groups (P = 0.4)."
    assert answered(comparisons, claim, abstract) == {"vs_placebo"}
    assert answered(comparisons, claim) == set()  # without its abstract, the arms are unknown
    # the outcome must be the claim's own; a drug the claim names itself is its arm
    assert answered(comparisons, "Length of stay did not differ between the two groups.", abstract) == set()
    assert answered(comparisons, "Mortality did not differ between the valsartan and placebo groups.",
                    abstract) == set()
    assert answered(comparisons, "Mortality did not differ between the two groups, but captopril-induced cough "
                                 "was common.", abstract) == set()


def test_a_claim_naming_its_arms_by_role_names_the_outcome_in_the_clause_that_compares_them(comparisons):
    abstract = "Captopril or placebo was given to 400 patients after myocardial infarction."
    assert answered(comparisons, "3-month mortality was 10.2%; reinfarction was the most frequent event, with no "
                                 "differences between treatment groups.", abstract) == set()
    assert answered(comparisons, "Reinfarction was frequent; 3-month mortality did not differ between treatment "
                                 "groups.", abstract) == {"vs_placebo"}


def test_active_arms_compared_among_themselves_answer_no_question_against_placebo(comparisons):
    abstract = "Captopril, enalapril, ramipril or placebo was given to 800 patients after myocardial infarction."
    claim = "Mortality did not differ significantly among the 3 active treatment groups."
    assert answered(comparisons, claim, abstract) == set()
    assert answered(comparisons, "Mortality did not differ significantly between the treatment groups.",
                    abstract) == {"vs_placebo"}


def test_renal_function_is_not_proteinuria_but_albumin_excretion_is(tmp_path):
    pack = compiled_pack(tmp_path / "p.yaml", """
questions:
  - {id: renal, text: "Do ACE inhibitors reduce proteinuria?"}
""")
    assert answered(pack, "Enalapril reduced the albumin excretion rate compared with placebo (P < 0.01).") == {"renal"}
    assert answered(pack, "Enalapril caused a 33% increase in the risk of decreased renal function.") == set()
    assert answered(pack, "Ramipril significantly limited progression to ESRD compared with placebo.") == set()


def test_a_drug_named_only_as_stopped_answers_no_question(tmp_path):
    pack = compiled_pack(tmp_path / "p.yaml", """
questions:
  - {id: bone, text: "Does hormone replacement therapy increase bone mineral density in postmenopausal women?"}
""")
    assert answered(pack, "Rates of bone mineral density loss among women who stopped HRT did not differ "
                          "significantly from those of women who did not undergo HRT.") == set()
    assert answered(pack, "Bone mineral density rose more in women taking HRT than in women who did not undergo HRT "
                          "(P < 0.01).") == {"bone"}
    assert answered(pack, "Treatment withdrawal was associated with a significant fall in bone mineral density in "
                          "the HRT group compared with placebo.") == set()
    assert answered(pack, "HRT increased bone mineral density compared with placebo and conferred ongoing benefit "
                          "after drug withdrawal.") == {"bone"}


@pytest.mark.parametrize("qid, sentence, equal", [
    ("head_to_head", "Tolterodine and oxybutynin led to similar and significant reductions in dry mouth (P < 0.01).",
     True),
    ("vs_others", "Nifedipine and atenolol gave comparable reductions in cardiovascular events.", True),
    # one arm ranked above the other; one arm only; a question against placebo
    ("head_to_head", "Dry mouth was similar at baseline but less frequent with tolterodine than with oxybutynin.",
     False),
    ("head_to_head", "Tolterodine gave a similar and significant reduction in dry mouth.", False),
    ("vs_placebo", "Ramipril and placebo gave similar mortality.", False),
    ("head_to_head", "Dry mouth was similar with tolterodine and oxybutynin; however, fewer stopped tolterodine.",
     False),
    ("head_to_head", "Relative to control subjects, dry mouth did not differ for users of tolterodine or oxybutynin.",
     False),
])
def test_a_claim_setting_two_active_arms_equal(comparisons, qid, sentence, equal):
    assert sets_arms_equal(sentence, comparisons[qid]) is equal


def test_pain_alone_names_no_population(tmp_path):
    """A trial of baclofen in dystonia "with spasticity or pain" was not run in low back pain; a trial in chronic
    back pain was."""
    pack = compiled_pack(tmp_path / "p.yaml", """
questions:
  - {id: back, text: "In patients with low back pain, do muscle relaxants reduce pain compared with placebo?"}
""")
    claim = "Pain was reduced more with tizanidine than with placebo (p < 0.01)."
    assert answered(pack, claim, "Tizanidine was given to patients with dystonia with spasticity or pain.") == set()
    assert answered(pack, claim, "Tizanidine was given to patients with chronic back pain.") == {"back"}


def test_a_laboratory_test_named_by_an_outcome_word_is_not_that_outcome(tmp_path):
    pack = compiled_pack(tmp_path / "p.yaml", """
questions:
  - {id: gi, text: "Do COX-2 inhibitors cause fewer GI complications than nonselective NSAIDs?"}
""", (str(COHEN_PACK),))  # the NSAID review pools bleeding with GI complications
    assert answered(pack, "Bleeding times were less prolonged with meloxicam than with naproxen (p < 0.05).") == set()
    assert answered(pack, "Gastrointestinal bleeding was less frequent with meloxicam than with naproxen "
                          "(p < 0.05).") == {"gi"}


def test_an_outcome_named_only_as_a_covariate_is_not_the_claims(comparisons):
    sentence = ("Dispersion of the QT interval fell more with nifedipine than with atenolol (P = 0.001); the same results "
                "were found when changes in cardiovascular events and heart rate were also included in multivariate "
                "analyses.")
    assert "cardiovascular" not in without_non_findings(sentence)
    assert answered(comparisons, sentence) == set()
    # an adjustment clause ends at its comma: the finding after it stays
    assert answered(comparisons, "After adjustment for age, cardiovascular events were more frequent with nifedipine "
                                 "than with atenolol (P = 0.01).") == {"vs_others"}


@pytest.mark.parametrize("sentence, n", [
    ("All three doses of transdermal estradiol controlled hot flushes.", 2),
    ("Both doses reduced blood pressure.", 2),
    ("Ramipril 10 mg reduced mortality.", 1),
    ("Ramipril reduced mortality.", 0),
])
def test_doses_counted_in_words_are_several(sentence, n):
    assert doses(sentence) == n


def test_an_aside_or_dose_in_an_arm_phrase_need_not_be_named(tmp_path):
    pack = compiled_pack(tmp_path / "p.yaml", """
questions:
  - {id: bzf, text: "Is total cholesterol higher, lower, or the same when comparing bezafibrate 400 mg/day to placebo?"}
""")
    assert answered(pack, "Total cholesterol fell more with bezafibrate than with placebo (P < 0.01).") == {"bzf"}
    assert answered(pack, "Total cholesterol fell more with fenofibrate than with placebo (P < 0.01).") == set()


@pytest.mark.parametrize("sentence, names", [
    ("Weight fell faster in the low-carbohydrate group than in the low-fat group (P = 0.005).",
     ("low-carbohydrate", "low-fat")),
    ("The high dose salbutamol group had more days free of ALI than the low dose group.",
     ("high dose salbutamol", "low dose")),
    ("Pain did not differ between the naproxen and celebrex groups.", ("naproxen", "celebrex")),
    # role words and figures are no name
    ("Mortality did not differ between the two groups.", ()),
    ("The evening peak group (n=108) had a higher BMI than the control group.", ("evening peak",)),
])
def test_group_names_are_the_words_before_group_that_are_not_roles(sentence, names):
    assert group_names(sentence) == names


@pytest.fixture(scope="module")
def by_group(tmp_path_factory):
    return compiled_pack(tmp_path_factory.mktemp("pack") / "p.yaml", """
questions:
  - {id: cvc, text: "Is average access time higher, lower, or the same when comparing ultrasound-guided cannulation of the internal jugular vein to landmark technique?"}
  - {id: dose, text: "Are days free of lung injury higher, lower, or the same when comparing salbutamol high dose to salbutamol low dose?"}
  - {id: stent, text: "Is stricture time higher, lower, or the same when comparing polyglycolic acid plus stent to stent alone?"}
  - {id: acei, text: "Do ACE inhibitors reduce albuminuria compared with placebo?"}
  - {id: suma, text: "Does sumatriptan cause more adverse events than placebo?"}
""")


def test_an_arm_is_named_by_a_word_of_its_phrase_before_group(by_group):
    names = group_name_words("Access time was shorter in the ultrasound group than in the landmark group.")
    assert arms_named_by_group(names, by_group["cvc"])[1] == {"intervention", "comparator"}
    # a word of both arms' phrases names neither; "low dose" is the comparator's alone
    assert arms_named_by_group(group_name_words("in the stent group"), by_group["stent"])[1] == set()
    assert arms_named_by_group(group_name_words("in the low dose group"),
                                         by_group["dose"])[1] == {"comparator"}


@pytest.mark.parametrize("sentence, expected", [
    (("Average access time was significantly reduced in the ultrasound group of patients compared with the landmark "
      "group (p < 0.001)."), {"cvc"}),
    (("The high dose salbutamol group had significantly more days free of lung injury than the low dose group "
      "(p = 0.02)."), {"dose"}),
    ("Albuminuria fell more in the captopril-treated group than in the placebo group (P < 0.01).", {"acei"}),
    # one arm's own change, no comparison; a name both arms share; another active drug as the other arm
    ("In the landmark group, average access time was 12 s.", set()),
    ("Average access time decreased from baseline in the ultrasound group (p < 0.01).", set()),
    ("Stricture time did not differ between the stent group and the control group.", set()),
    ("Albuminuria was similar (31% in the captopril group and 37% in the atenolol group).", set()),
    ("More sumatriptan-treated patients than placebo-treated patients reported adverse events (29% versus 16%).",
     {"suma"}),
    # against placebo, the arm must be set against an untreated one, not other trials
    ("Adverse events, reported in 28% of sumatriptan-treated attacks, were similar to those of long-term trials.",
     set()),
])
def test_a_claim_naming_its_arms_before_group_answers_their_question(by_group, sentence, expected):
    assert answered(by_group, sentence) == expected


@pytest.fixture(scope="module")
def apart(tmp_path_factory):
    return compiled_pack(tmp_path_factory.mktemp("pack") / "p.yaml", """
questions:
  - {id: glucagon, text: "Is nausea higher, lower, or the same when comparing intranasal glucagon to intramuscular glucagon?"}
  - {id: diet, text: "Is weight loss higher, lower, or the same when comparing a low-carbohydrate diet to a low-fat diet?"}
  - {id: etanercept, text: "Is C-peptide higher, lower, or the same when comparing etanercept therapy to placebo?"}
  - {id: bb, text: "After myocardial infarction, do beta blockers reduce mortality compared with placebo?"}
""")


def test_each_arm_is_named_by_a_word_only_its_phrase_has(apart):
    def named(sentence, q):
        return arms_named_apart(sentence_stems(sentence), apart[q])[1]
    assert named("Nausea occurred in 35% of intranasal and 38% of intramuscular visits.", "glucagon") == {
        "intervention", "comparator"}
    assert named("Weight fell faster on the low-carbohydrate than on the low-fat diet.", "diet") == {
        "intervention", "comparator"}
    # one arm named is not both; a word both phrases share ("glucagon", "diet", "low") names neither
    assert named("Nausea followed 35% of intranasal doses.", "glucagon") == set()
    assert named("Weight fell on either diet.", "diet") == named("Weight fell on a low diet.", "diet") == set()


@pytest.mark.parametrize("sentence, expected", [
    ("Nausea occurred with 35% of intranasal and 38% of intramuscular dosing visits, respectively (P = 0.6).",
     {"glucagon"}),
    ("Weight loss was faster with the low-carbohydrate diet than with the low-fat diet (P = 0.005).", {"diet"}),
    # the arm without the form the treatment takes ("etanercept therapy")
    ("C-peptide rose by 39% in the etanercept group and fell by 20% in the placebo group (P < 0.05).",
     {"etanercept"}),
    # no comparison of the arms
    ("Weight loss on the low-carbohydrate diet was 5 kg; on the low-fat diet it was 3 kg.", set()),
    # a claim naming a drug is read by its drugs: calcium channel blockers are no beta blockers
    ("Mortality was 42% lower with calcium channel blockers than with placebo (p = 0.01).", set()),
])
def test_a_claim_naming_each_arm_by_a_word_only_its_phrase_has_answers_their_question(apart, sentence, expected):
    assert answered(apart, sentence) == expected


@pytest.mark.parametrize("comparator, kind", [
    ("placebo", INACTIVE), ("the control group", INACTIVE), ("usual care arm", INACTIVE),
    (None, INACTIVE), ("other calcium channel blockers", OTHER), ("omeprazole", NAMED),
    ("omeprazole group", NAMED), ("saline (3 ml)", INACTIVE), ("standard care", INACTIVE),
    ("hypertonic saline", NAMED), ("no exercise", INACTIVE),
    ("without omega-3 fatty acids", INACTIVE), ("nortriptyline", NAMED),
    ("placebo patch", INACTIVE), ("sham acupuncture", INACTIVE), ("vehicle cream", INACTIVE),
    ("matching placebo", INACTIVE), ("shampoo", NAMED),
])
def test_a_placebo_like_comparator_is_no_active_arm_whatever_its_group_word(comparator, kind):
    assert comparison_kind(comparator) == kind


def test_an_arm_is_named_by_the_abbreviation_its_phrase_defines(tmp_path):
    pack = compiled_pack(tmp_path / "p.yaml", """
questions:
  - {id: tea, text: "Is time to first flatus higher, lower, or the same when comparing transcutaneous electroacupuncture (TEA) to control group?"}
""")
    assert answered(pack, "Time to first flatus in the TEA group was significantly shorter than in the control group "
                          "(73 vs 83 h, P = 0.038).") == {"tea"}
    assert answered(pack, "Time to first flatus in the EA group was significantly shorter than in the control group "
                          "(73 vs 83 h, P = 0.038).") == set()


def test_an_outcome_is_named_by_the_abbreviation_its_phrase_defines(tmp_path):
    pack = compiled_pack(tmp_path / "p.yaml", """
questions:
  - {id: fev, text: "Is forced expiratory volume in 1 second (FEV1) higher, lower, or the same when comparing tiotropium to placebo?"}
""")
    assert answered(pack, "Tiotropium improved FEV1 compared with placebo (P < 0.001).") == {"fev"}
    assert answered(pack, "Tiotropium improved FVC compared with placebo (P < 0.001).") == set()


def test_a_question_asking_an_add_on_is_answered_by_claims_comparing_it(tmp_path):
    pack = compiled_pack(tmp_path / "p.yaml", """
questions:
  - {id: add, text: "Is LDL cholesterol higher, lower, or the same when comparing atorvastatin plus ezetimibe to atorvastatin alone?"}
  - {id: plain, text: "Is LDL cholesterol higher, lower, or the same when comparing ezetimibe to placebo?"}
""")
    assert pack["add"].asks_add_on and not pack["plain"].asks_add_on
    # the add-on answers the question that asks it, and no other
    assert answered(pack, "LDL cholesterol fell more with atorvastatin plus ezetimibe than with atorvastatin alone "
                          "(P < 0.001).") == {"add"}
    assert answered(pack, "LDL cholesterol fell more with ezetimibe than with placebo (P < 0.001).") == {"plain"}


def test_a_named_comparator_may_be_named_as_the_control_arm(tmp_path):
    pack = compiled_pack(tmp_path / "p.yaml", """
questions:
  - {id: gas, text: "Is patient satisfaction higher, lower, or the same when comparing inhalation of nitrous oxide to inhalation of pure oxygen?"}
  - {id: drug, text: "Is weight gain higher, lower, or the same when comparing olanzapine to risperidone?"}
""")
    abstract = "Children were randomized to inhale nitrous oxide or pure oxygen before cannulation."
    claim = "Patient satisfaction was significantly higher with nitrous oxide than in the control group (P < 0.05)."
    assert answered(pack, claim, abstract) == {"gas"}
    assert answered(pack, claim, "Children were randomized to nitrous oxide or no gas.") == set()  # its abstract decides
    assert answered(pack, "Satisfaction with nitrous oxide was high; glycaemic control was not measured (P < 0.05).",
                    abstract) == set()
    # a drug's trial calls its placebo arm the control
    assert answered(pack, "Weight gain was greater with olanzapine than in the control group (P < 0.01).",
                    "Patients were randomized to olanzapine, risperidone or placebo.") == set()


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


def test_the_comparison_kinds_of_the_demo_pack():
    kinds = {q.question_id: comparison_kind(q.comparator) for q in questionpacks.load_questions(
        questionpacks.PACK_DIR / "cohen2006_drug_classes.yaml")}
    assert kinds["acei_mi_mortality"] == kinds["acei_hf_mortality"] == INACTIVE
    assert kinds["ui_dry_mouth"] == NAMED and kinds["ccb_cv_events"] == OTHER


@pytest.mark.parametrize("qid, sentence, first", [
    ("head_to_head", "Dry mouth was less common with tolterodine than with oxybutynin.", False),
    ("head_to_head", "Dry mouth was more common with oxybutynin than with tolterodine.", True),
    ("vs_placebo", "Mortality was 12% with placebo and 9% with ramipril.", True),
    ("vs_placebo", "Ramipril reduced mortality compared with placebo.", False),
    ("vs_others", "Cardiovascular events were fewer with atenolol than with nifedipine.", True),
    ("no_comparator", "Bisoprolol reduced mortality in heart failure.", False),
    # the arm after "than", "compared with", "from" is the reference, wherever it stands
    ("head_to_head", "Compared with oxybutynin, tolterodine caused less dry mouth.", False),
    ("vs_placebo", "Mortality fell after switching from placebo to ramipril.", False),
    ("head_to_head", "Oxybutynin caused more dry mouth than tolterodine.", True),
])
def test_the_arm_a_claim_names_first(comparisons, qid, sentence, first):
    """The reader reads a direction relative to the arm named first; a claim naming the comparator first has
    its reading reversed by the annotator."""
    assert comparator_first(sentence, comparisons[qid]) is first


@pytest.mark.parametrize("qid, sentence, arms", [
    # a class is put to the reader as the member drug the claim names, with the question's outcome
    ("vs_placebo", "Ramipril reduced all-cause mortality by 27% compared with placebo.",
     ("ramipril", "placebo", "mortality")),
    ("head_to_head", "Compared with oxybutynin, tolterodine caused less dry mouth.",
     ("tolterodine", "oxybutynin", "dry mouth")),
    # "other" drugs: the other drug the claim names
    ("vs_others", "Cardiovascular events were fewer with atenolol than with nifedipine.",
     ("nifedipine", "atenolol", "cardiovascular events")),
    ("no_comparator", "Bisoprolol reduced mortality in heart failure.", ("bisoprolol", "placebo", "mortality")),
    # no intervention named: nothing to put
    ("vs_placebo", "Mortality was lower with placebo.", None),
])
def test_the_question_in_a_claims_own_arm_names(comparisons, qid, sentence, arms):
    assert claim_arms(sentence, comparisons[qid]) == arms


@pytest.mark.parametrize("qid, sentence, intervention, comparator", [
    # each arm as (name, class, member drug?, the words naming it)
    ("vs_placebo", "Ramipril reduced mortality compared with placebo.",
     ("ramipril", "ACE inhibitors", True, "Ramipril"), None),
    ("vs_placebo", "ACE inhibitors reduced mortality compared with placebo.",
     ("ACE inhibitors", "ACE inhibitors", False, "ACE inhibitors"), None),
    # "other" drugs: the other drug the claim names, with its own class
    ("vs_others", "Cardiovascular events were fewer with nifedipine than with atenolol.",
     ("nifedipine", "calcium channel blockers", True, "nifedipine"), ("atenolol", "beta blockers", True, "atenolol")),
    ("vs_others", "Events were as frequent with amlodipine as with ACE inhibitors.",
     ("amlodipine", "calcium channel blockers", True, "amlodipine"),
     ("ACE inhibitor", "ACE inhibitors", False, "ACE inhibitors")),
    ("vs_others", "Cardiovascular events were fewer with nifedipine than with placebo.",
     ("nifedipine", "calcium channel blockers", True, "nifedipine"), None),
    ("head_to_head", "Dry mouth was less common with tolterodine than with oxybutynin.",
     ("tolterodine", "tolterodine", False, "tolterodine"), ("oxybutynin", "oxybutynin", False, "oxybutynin")),
])
def test_the_drugs_a_claim_names_for_each_arm(comparisons, qid, sentence, intervention, comparator):
    found = arm_drugs(sentence, comparisons[qid])
    assert [(d.name, d.group, d.member, d.span.text) if d else None for d in found] == [intervention, comparator]
    assert all(sentence[d.span.start:d.span.end] == d.span.text for d in found if d)


def test_drugs_differ_by_class_or_by_member(comparisons):
    q = comparisons["vs_others"]
    atenolol, metoprolol, beta_blockers, lisinopril = (
        arm_drugs(f"Events were fewer with nifedipine than with {drug}.", q)[1]
        for drug in ("atenolol", "metoprolol", "beta blockers", "lisinopril"))
    assert atenolol.differs(lisinopril) and atenolol.differs(metoprolol)  # another class; another member
    assert not atenolol.differs(beta_blockers) and not beta_blockers.differs(metoprolol)  # a class and its member
    ramipril, captopril, class_ = (arm_drugs(f"{drug} reduced mortality.", comparisons["vs_placebo"])[0]
                                   for drug in ("Ramipril", "Captopril", "ACE inhibitors"))
    assert ramipril.differs(captopril) and not ramipril.differs(class_)


# --- a claim answering through its abstract (QuestionsConfig.whole_abstract) ---------------------------------
@pytest.fixture(scope="module")
def trials(tmp_path_factory):
    return compiled_pack(tmp_path_factory.mktemp("trials") / "p.yaml", """
questions:
  - {id: heal, text: "Is the rate of healing higher, lower, or the same when comparing lansoprazole to omeprazole?"}
  - {id: malaria, text: "Does chemoprophylaxis reduce severe malaria episodes compared with placebo in children?"}
""")


_LANSO = ("Lansoprazole 30 mg or omeprazole 40 mg was given for 8 weeks to 200 patients with reflux oesophagitis "
          "grade II to IV (LAN30 and OME40 groups).")
_MALARIA = "Children were randomised to chemoprophylaxis or placebo during their first year of life."


@pytest.mark.parametrize("sentence, abstract, expected", [
    # the arms named only by the abstract's abbreviations, set against each other: answers through the abstract
    ("There was no significant difference in healing rates after 4 weeks between the LAN30 and OME40 group.",
     _LANSO, {"heal"}),
    ("Children receiving the antimalarial drug had fewer episodes of severe malaria than those on the dummy tablet.",
     _MALARIA, {"malaria"}),
    ("The mean healing time was 6 days in the OME40 group against 4 days for the LAN30 group (p = 0.019).",
     _LANSO, {"heal"}),
    ("Only the LAN30 group showed a significantly higher healing rate (P = 0.001).", _LANSO, {"heal"}),
    # each arm against its own start, or the arms named together: nothing sets one arm against the other
    ("Healing rates rose from 60% to 90% in both groups.", _LANSO, set()),
    ("Severe malaria episodes fell from 1.2 to 0.4 per child-year.", _MALARIA, set()),
    ("Healing scores in the LAN30 group improved by 40% compared with basal values (P < 0.01).", _LANSO, set()),
    # a test beside a group sets the groups against each other in a comparative finding, not in one group's change
    ("However, only the LAN30 group showed a meaningful improvement in healing (P = 0.001).", _LANSO, {"heal"}),
    ("The OME40 group showed a significant decrease in healing time over the 8 weeks (P < 0.05).", _LANSO, set()),
    ("Healing was faster in Group I (p < 0.01).", _LANSO, {"heal"}),
    # two groups' values side by side set them against each other
    (("Among patients with grade IV, healing was 82.4% in 56 patients in the LAN30 group; 71.8% in 57 patients in "
      "the OME40 group."), _LANSO, {"heal"}),
    # "among" a population is no comparison
    ("Among patients who completed the study, those of the OME40 group showed a progressive decrease in healing time.",
     _LANSO, set()),
    # a range or a threshold sets no groups against each other
    ("Patients aged between 25 and 65 years had a median healing time of 6 weeks.", _LANSO, set()),
    ("Healing was defined as fewer than 2 erosions, and healing times were recorded for 8 weeks.", _LANSO, set()),
    ("Healing was faster in the LAN30 group than in the OME40 group, for lesions less than 5 mm.", _LANSO, {"heal"}),
    # one group's own change beside its test, not the groups compared; "this group of …" is who was studied
    ("In this group, healing rates rose significantly (P < 0.05).", _LANSO, set()),
    ("In this group of patients, healing was higher in the LAN30 than in the OME40 group.", _LANSO, {"heal"}),
    # another outcome of the same trial
    ("Heartburn relief was faster in the LAN30 than in the OME40 group.", _LANSO, set()),
    # under a question against placebo, active arms set equal: their "no difference" is not the question's
    ("The two regimens were equally effective against severe malaria episodes, compared with the dummy tablet.",
     _MALARIA, set()),
    ("Children on either regimen had fewer severe malaria episodes than those on placebo.", _MALARIA, {"malaria"}),
    # the abstract names a drug outside the question's arms: its groups may be those of that drug
    ("Healing rates were higher in group A than in group B.",
     "Patients were given lansoprazole, omeprazole or ranitidine (groups A, B and C).", set()),
    # the abstract names one arm only
    ("Healing rates were higher in group A than in group B.", "Lansoprazole was given to 100 patients.", set()),
])
def test_a_claim_naming_no_drug_answers_the_question_whose_arms_its_abstract_names(trials, sentence, abstract,
                                                                                    expected):
    assert answered(trials, sentence, abstract, whole_abstract=True) == expected
    # off, as for abstracts gathered by search (the demo): the claim must name the arms itself
    if expected:
        assert answered(trials, sentence, abstract, whole_abstract=False) == set()


def test_an_abstract_naming_a_bisphosphonate_beside_estrogen_does_not_answer_as_a_whole(tmp_path):
    """Bisphosphonates and SERMs are drug classes of the lexicon: a trial of estrogen, alendronate or both has arms
    other than the question's, so its claims that name no drug answer no estrogen question through it."""
    pack = compiled_pack(tmp_path / "p.yaml", """
questions:
  - {id: bone, text: "Does hormone replacement therapy increase bone mineral density in postmenopausal women?"}
""")
    both = "Postmenopausal women were randomised to estrogen, alendronate, both, or placebo for two years."
    alone = "Postmenopausal women were randomised to estrogen or placebo for two years."
    assert not abstract_names_arms(both, pack["bone"])
    assert abstract_names_arms(alone, pack["bone"])
    assert names_a_drug("Raloxifene preserved bone mineral density.", pack["bone"])


def test_an_insulin_preparation_is_another_drug_insulin_levels_are_not(tmp_path):
    """Insulin is both a treatment and a measurement: its preparations ("ultralente insulin") name another arm of a
    trial of oral hypoglycemics, so the trial's claims naming no drug answer no metformin question through its
    abstract; "fasting insulin" names no drug."""
    pack = compiled_pack(tmp_path / "p.yaml", """
questions:
  - {id: met_su, text: "Is metformin more effective than sulfonylureas for glycemic control?"}
""")
    ukpds = "Patients were allocated to sulfonylurea, ultralente insulin, or metformin for 6 years."
    assert not abstract_names_arms(ukpds, pack["met_su"])
    assert abstract_names_arms(ukpds.replace("ultralente insulin, ", ""), pack["met_su"])
    assert not names_a_drug("Fasting insulin levels fell by 10%.", pack["met_su"])
    assert names_a_drug("Glargine lowered HbA1c.", pack["met_su"])


_THREE_ARMS = "Patients were randomised to lansoprazole 30 mg, omeprazole 40 mg or placebo for 8 weeks."


@pytest.mark.parametrize("sentence, expected", [
    ("Healing rates were higher in the lansoprazole group than in the omeprazole group.", {"heal"}),
    # the arms named by role, one of them the placebo: set against no drug, not the question's comparator
    ("Healing rates were higher in the active group than in the placebo group (P < 0.01).", set()),
    ("Healing was more frequent in the treatment group than in the control group.", set()),
    ("Both active groups healed more often than the placebo group.", set()),
])
def test_an_untreated_arm_answers_no_question_of_two_active_drugs(trials, sentence, expected):
    assert answered(trials, sentence, _THREE_ARMS, whole_abstract=True) == expected


def test_an_untreated_arm_is_set_against_a_question_of_two_active_drugs_only(trials):
    assert untreated_against_active("Healing was faster than with placebo.", trials["heal"])
    assert not untreated_against_active("Healing was faster than with placebo.", trials["malaria"])


def test_an_untreated_arm_is_the_comparator_when_the_comparator_names_one(tmp_path):
    pack = compiled_pack(tmp_path / "p.yaml", """
questions:
  - {id: bp, text: "Is diastolic BP higher, lower, or the same when comparing lisinopril to placebo with pravastatin?"}
  - {id: h2h, text: "Is diastolic BP higher, lower, or the same when comparing lisinopril to pravastatin?"}
""")
    sentence = "Diastolic BP fell more in the lisinopril group than in the placebo group (p = 0.05)."
    assert not untreated_against_active(sentence, pack["bp"])
    assert untreated_against_active(sentence, pack["h2h"])


def test_an_article_answer_never_sets_an_untreated_arm_against_two_active_drugs(trials):
    """``article_answers`` leaves out a claim of an untreated arm under a question of two active drugs unless it
    names the comparator too (a three-arm trial's "44% of omeprazole-treated patients … and 36% of placebo")."""
    heal = [trials["heal"]]
    placebo_only = _claim("a1", "Healing was more frequent with the active drug than with placebo at 8 weeks.")
    both = _claim("a2", "Healing was seen in 90% of lansoprazole-treated, 80% of omeprazole-treated and 40% of "
                        "placebo patients at 8 weeks.")
    found = list(article_answers([placebo_only, both], {"a1": _THREE_ARMS, "a2": _THREE_ARMS}, set(),
                                           heal, questions.QuestionsConfig(),
                                           lambda s: np.array([[1.0, 0.0]] * len(s)), np.array([[1.0, 0.0]])))
    assert [a.claim_id for a in found] == [both.claim_id]


def test_an_abstract_names_arms_inside_a_bracket_that_also_holds_doses(trials):
    """A bracket holding numbers is left out of a claim's words as statistics, but an abstract's arms are read in it."""
    abstract = "Patients were randomised to two groups (lansoprazole 30 mg or omeprazole 40 mg, respectively)."
    assert abstract_names_arms(abstract, trials["heal"])
    assert "omeprazole" not in claim_words(abstract)
    sentence = "There was no significant difference in healing rates between the two groups."
    assert answered(trials, sentence, abstract, whole_abstract=True) == {"heal"}


_EXERCISE = ("639 pregnant women were randomised to an exercise programme, 213 in the intervention group "
             "(IG) and 426 in the control (CG) group.")


@pytest.mark.parametrize("sentence, abstract, expected", [
    # "no exercise" is the trial's untreated arm, here its control group with an abbreviation between the words
    ("There were no differences between the two groups in mean gestational weight gain.", _EXERCISE, {"weight"}),
    ("Gestational weight gain was lower in the IG than in the CG (p = 0.03).", _EXERCISE, {"weight"}),
    # an abstract naming no untreated arm: the groups may be two exercise programmes
    ("There were no differences between the two groups in mean gestational weight gain.",
     "Pregnant women were randomised to supervised or home-based exercise.", set()),
])
def test_a_comparator_naming_no_treatment_is_the_trials_untreated_arm(tmp_path, sentence, abstract, expected):
    pack = compiled_pack(tmp_path / "p.yaml", """
questions:
  - {id: weight, text: "Is weight gain higher, lower, or the same when comparing exercise to no exercise?"}
""")
    assert pack["weight"].comparison == INACTIVE
    assert answered(pack, sentence, abstract, whole_abstract=True) == expected


def test_the_whole_abstract_reading_is_said_in_the_why_and_switched_by_the_command_line(trials):
    sentence = "There was no significant difference in healing rates after 4 weeks between the LAN30 and OME40 group."
    [(_, (score, why))] = answers(sentence, _LANSO, [0.5, 0.5], list(trials.values()),
                                            questions.QuestionsConfig())
    assert "named in its abstract, which names no other drug" in why and 0 < score <= 1
    parser = argparse.ArgumentParser()
    questions.add_arguments(parser)
    assert parser.parse_args(["C", "--pack", "p", "--out", "o"]).whole_abstract is True
    assert parser.parse_args(["C", "--pack", "p", "--out", "o", "--no-whole-abstract"]).whole_abstract is False


def test_evidence_inference_findings_answer_their_own_trials_question_through_the_abstract():
    """Real trials grouped by question: the expert evidence sentences of Evidence Inference training articles,
    each against every prompt of these articles (put as a pack entry's text). Through the abstract, more of them
    answer their own prompt, and none answers another trial's."""
    from builder.reader import reader_examples

    folder = SHARED_DATA / "evidence_inference"
    findings = [f for f in reader_examples.ei_findings(folder) if reader_examples.in_part("evidence_inference",
                                                                                    f.prompt.pmcid, "training")]
    abstracts, chosen = {}, []
    for f in findings:
        if f.prompt.pmcid not in abstracts and len(abstracts) < 120:
            read = reader_examples.ei_abstract(folder, f.prompt.pmcid)
            abstracts[f.prompt.pmcid] = " ".join(body for _, body in read[1]) if read else ""
        if abstracts.get(f.prompt.pmcid) and " ".join(f.text.split()) in " ".join(abstracts[f.prompt.pmcid].split()):
            chosen.append(f)
    prompts = {f.prompt.prompt_id: f.prompt for f in chosen}
    pack = [Question(question_id=f"ei{p.prompt_id}", text=f"Is {p.outcome} higher, lower, or the same when "
                     f"comparing {p.intervention} to {p.comparator}?") for p in prompts.values()]
    compiled = compile_questions([questionpacks.question_from(q.model_dump()) for q in pack],
                                           load_lexicon())
    article_of = {f"ei{p.prompt_id}": p.pmcid for p in prompts.values()}

    def assigned(whole_abstract: bool) -> set[tuple[str, str]]:
        config = questions.QuestionsConfig(whole_abstract=whole_abstract)
        return {(f.prompt.pmcid, q.question.question_id) for f in chosen for q, _ in answers(
            f.text, abstracts[f.prompt.pmcid], [0.5] * len(compiled), compiled, config)}

    def own(found: set[tuple[str, str]]) -> int:
        assert all(article_of[qid] == pmcid for pmcid, qid in found)  # never another trial's question
        return len(found)

    off, on = assigned(False), assigned(True)
    assert len(chosen) >= 100
    assert own(on) >= own(off) + len(chosen) // 10, (own(off), own(on), len(chosen))
    # the article pass: each trial with no sentence assigned answers its prompts with its closest sentence on
    # the outcome (real embeddings)
    from builder.embeddings import embed_texts, load_encoder

    encoder = load_encoder(DEFAULT_MODEL)
    claims = [_claim(f.prompt.pmcid, f.text, 1000 * i) for i, f in enumerate(chosen)]
    added = {(a.article_uid, a.question_id) for a in article_answers(
        claims, abstracts, {(pmcid, qid) for pmcid, qid in on}, compiled, questions.QuestionsConfig(),
        lambda s: embed_texts(s, encoder), embed_texts([q.question.text for q in compiled], encoder))}
    assert added and not added & on
    assert own(added) >= len(chosen) // 20


def _claim(article: str, sentence: str, start: int = 0) -> Claim:
    return Claim(claim_id=claim_id_for(article, start, start + len(sentence)), article_uid=article,
                 domain="clinical_trials_epidemiology", sentence=sentence, claim_type="efficacy",
                 sentence_start=start, sentence_end=start + len(sentence), confidence=0.9)


def test_an_article_whose_abstract_answers_a_question_answers_it_with_its_closest_claim_on_the_outcome(trials):
    """``article_answers``: a trial's abstract names the question's arms, none of its claims was assigned, and of
    its claims naming the outcome the one closest to the question is taken (here by the given vectors)."""
    heal = [q for q in trials.values() if q.question.question_id == "heal"]
    claims = [_claim("a1", "Healing was seen in 90% and 80% of patients at 4 weeks."),
              _claim("a1", "Healing was seen in 96% and 93% of patients at 8 weeks.", 100),
              _claim("a1", "Heartburn resolved within 3 days in most patients.", 200),  # not the outcome
              _claim("a2", "Healing was seen in 90% and 80% of patients at 8 weeks."),  # another drug in the abstract
              _claim("a3", "Healing was seen in 90% and 80% of patients at 8 weeks.")]  # already answered
    texts = {"a1": _LANSO, "a2": _LANSO.replace("omeprazole 40 mg", "omeprazole 40 mg or ranitidine"),
             "a3": _LANSO}

    def embed(sentences):  # "8 weeks" is closest to the question
        return np.array([[1.0, 0.0] if "8 weeks" in s else [0.6, 0.8] for s in sentences])

    found = list(article_answers(claims, texts, {("a3", "heal")}, heal, questions.QuestionsConfig(),
                                           embed, np.array([[1.0, 0.0]])))
    assert [(a.article_uid, a.claim_id, a.question_id) for a in found] == [("a1", claims[1].claim_id, "heal")]
    assert "answers the question as a whole" in found[0].why


def test_an_article_answers_with_a_claim_that_compares_before_a_closer_one_that_does_not(trials):
    """``article_answers`` takes the closest claim among those naming the intervention or setting groups against each
    other (``compares_something``) when there is one, and the closest of the rest otherwise."""
    heal = [trials["heal"]]
    plain = _claim("a1", "Healing was seen in most patients at 8 weeks.")
    comparing = _claim("a1", "Healing was faster in the LAN30 group than in the OME40 group at 4 weeks.", 100)
    alone = _claim("a2", "Healing was seen in most patients at 8 weeks.")
    # a group against its own start compares no groups
    own_start = _claim("a3", "Healing in the OME40 group rose by 40% compared with basal values at 8 weeks.")
    later = _claim("a3", "Healing was faster in the LAN30 group than in the OME40 group at 4 weeks.", 100)

    def embed(sentences):  # "8 weeks" is closest to the question
        return np.array([[1.0, 0.0] if "8 weeks" in s else [0.6, 0.8] for s in sentences])

    found = list(article_answers([plain, comparing, alone, own_start, later],
                                           {"a1": _LANSO, "a2": _LANSO, "a3": _LANSO}, set(), heal,
                                           questions.QuestionsConfig(), embed, np.array([[1.0, 0.0]])))
    assert {(a.article_uid, a.claim_id) for a in found} == {("a1", comparing.claim_id), ("a2", alone.claim_id),
                                                            ("a3", later.claim_id)}
    assert not sets_groups_against(own_start.sentence)


def test_an_article_answers_with_no_combination_and_no_dose_comparison(comparisons, tmp_path):
    """``article_answers`` takes no claim of the two drugs combined (under a question that asks no add-on) or of
    dose levels set against each other: such a claim compares something other than the question's arms."""
    met_vs_su = [comparisons["met_vs_su"]]
    abstract = "Patients were randomised to metformin or glyburide for 6 months."
    claims = [_claim("m1", "HbA1c improved significantly during combined treatment with glyburide plus metformin."),
              _claim("m2", "HbA1c fell more in patients receiving low doses than high doses of metformin."),
              _claim("m3", "HbA1c fell more with metformin than with glyburide.")]
    found = list(article_answers(claims, {"m1": abstract, "m2": abstract, "m3": abstract}, set(), met_vs_su,
                                           questions.QuestionsConfig(), lambda s: np.ones((len(s), 1)),
                                           np.array([[1.0]])))
    assert {a.article_uid for a in found} == {"m3"}
    add_on = next(iter(compiled_pack(tmp_path / "p.yaml", """
questions:
  - {id: add, text: "Is glyburide plus metformin more effective than metformin alone for glycemic control?"}
""").values()))
    assert fixed_combination(claims[0].sentence, comparisons["met_vs_su"])
    assert not fixed_combination(claims[0].sentence, add_on)


def test_an_article_answers_with_no_drug_added_and_no_groups_of_the_selection(comparisons):
    """``article_answers`` takes no claim adding one of the lexicon's drugs to another under a question of two drugs
    (``drug_add_on``), nor one comparing groups the study's selection made (``selection_groups``)."""
    abstract = "Patients on sulfonylurea were randomised to the addition of metformin or to sulfonylurea alone."
    claims = [_claim("m1", "After the addition of metformin, HbA1c fell, compared with a rise on sulfonylurea alone."),
              _claim("m2", "The excluded and included groups had a 1-year HbA1c of 8.1% and 7.2%, respectively."),
              _claim("m3", "HbA1c fell more with metformin than with sulfonylurea.")]
    found = list(article_answers(claims, {"m1": abstract, "m2": abstract, "m3": abstract}, set(),
                                           [comparisons["met_vs_su"]], questions.QuestionsConfig(),
                                           lambda s: np.ones((len(s), 1)), np.array([[1.0]])))
    assert {a.article_uid for a in found} == {"m3"}
    # words after "combined with" that name no drug add nothing
    assert not drug_add_on("Ulcer complications alone and combined with symptomatic ulcers were fewer "
                                      "with metformin than with sulfonylurea.", comparisons["met_vs_su"])
    assert not drug_add_on(claims[0].sentence, comparisons["vs_placebo"])  # no question of two drugs
    assert selection_groups("Mortality differed between eligible and ineligible patients.")
    assert not selection_groups("Mortality differed between the treated and untreated patients.")



def test_an_article_answer_is_left_to_the_question_of_the_population_its_trial_studied(tmp_path):
    """``article_answers`` applies ``rival_population`` as the claims' own assignment does: a trial after
    myocardial infarction whose abstract names heart failure only as an endpoint answers the question asked after
    infarction, not the one asked in heart failure; a trial of heart failure after infarction answers both."""
    pack = list(compiled_pack(tmp_path / "p.yaml", """
questions:
  - {id: hf, text: "In patients with heart failure, do ACE inhibitors reduce mortality?"}
  - {id: mi, text: "After myocardial infarction, do ACE inhibitors reduce mortality compared with placebo?"}
""").values())
    texts = {"t1": "Patients with acute myocardial infarction were randomised to captopril or placebo. The "
                   "development of severe heart failure was also recorded.",
             "t2": "Patients with heart failure after myocardial infarction were randomised to ramipril or placebo."}
    claims = [_claim("t1", "Mortality at 5 weeks was 7.2% in one group and 7.7% in the other (2p = 0.02)."),
              _claim("t2", "Mortality at 15 months was 17% in one group and 23% in the other (p = 0.002).")]
    found = list(article_answers(claims, texts, set(), pack, questions.QuestionsConfig(),
                                           lambda s: np.ones((len(s), 1)), np.array([[1.0], [1.0]])))
    assert {(a.article_uid, a.question_id) for a in found} == {("t1", "mi"), ("t2", "hf"), ("t2", "mi")}


def test_a_word_that_names_no_endpoint_is_no_part_of_an_outcome(tmp_path):
    """``names_part_of``: "side" of the lexicon's "extrapyramidal side effects" names no endpoint of its own, so
    "fewer side effects" is no part of extrapyramidal symptoms; "extrapyramidal" is."""
    eps = compiled_pack(tmp_path / "p.yaml", """
questions:
  - {id: eps, text: "Do atypical antipsychotics cause fewer extrapyramidal symptoms than haloperidol?"}
""")["eps"]
    assert any("side" in alt.label for alt in eps.outcome)
    assert not names_part_of(claim_words("Clozapine had fewer side effects than haloperidol."),
                                       eps.outcome)
    assert names_part_of(claim_words("Clozapine caused fewer extrapyramidal signs than "
                                                         "haloperidol."), eps.outcome)


@pytest.mark.parametrize("sentence", [
    ("Improvement in extrapyramidal symptoms was associated with mood improvement (indirect effect); most of the "
     "olanzapine effect on mood was a direct effect significantly greater than with haloperidol (P < .001)."),
    ("The path analysis indicated that, relative to haloperidol, quetiapine had direct effects on extrapyramidal "
     "symptoms independent of improvements in psychosis."),
])
def test_a_mediation_analysis_answers_no_question(tmp_path, sentence):
    """``reports_mediation``: a mediation or path analysis says what an effect runs through, not whether the arms
    differ on the outcome; the same comparison stated plainly answers."""
    pack = compiled_pack(tmp_path / "p.yaml", """
questions:
  - {id: eps, text: "Do atypical antipsychotics cause fewer extrapyramidal symptoms than haloperidol?"}
""")
    assert reports_no_comparison(sentence)
    assert answered(pack, sentence) == set()
    assert answered(pack, "Extrapyramidal symptoms were fewer with quetiapine than with haloperidol (P < 0.01).") == {
        "eps"}


def test_an_article_answers_with_no_claim_that_sets_an_arm_against_itself(comparisons, tmp_path):
    """``article_answers`` takes no claim comparing subgroups, forms or members of one arm (``compares_itself``):
    "haloperidol-treated first-episode patients … than haloperidol-treated multiple-episode patients" does not
    say whether atypical antipsychotics cause fewer extrapyramidal symptoms than haloperidol."""
    pack = compiled_pack(tmp_path / "p.yaml", """
questions:
  - {id: eps, text: "Do atypical antipsychotics cause fewer extrapyramidal symptoms than haloperidol?"}
  - {id: ppi, text: "In patients with reflux esophagitis, are proton pump inhibitors more effective than ranitidine for healing?"}
  - {id: add, text: "Is pain relief higher, lower, or the same when comparing dexamethasone and diclofenac to diclofenac alone?"}
""")
    abstract = "Patients with a first episode or with multiple episodes were randomised to olanzapine or haloperidol."
    subgroups = _claim("s1", "Haloperidol-treated first-episode patients had significantly more extrapyramidal "
                             "symptoms than haloperidol-treated multiple-episode patients.")
    arms = _claim("s2", "Olanzapine-treated patients had significantly fewer extrapyramidal symptoms than "
                        "haloperidol-treated patients.")
    found = list(article_answers([subgroups, arms], {"s1": abstract, "s2": abstract}, set(), [pack["eps"]],
                                           questions.QuestionsConfig(), lambda s: np.ones((len(s), 1)),
                                           np.array([[1.0]])))
    assert {a.article_uid for a in found} == {"s2"}
    assert compares_itself(subgroups.sentence, pack["eps"])
    assert not compares_itself(arms.sentence, pack["eps"])
    # the drug a word of its own before "-treated": the arms are compared
    assert compares_arms(arms.sentence, pack["eps"])
    # two members of the asked class set against each other, under a question of the class against another drug
    assert compares_itself("Healing was faster with esomeprazole than with omeprazole.", pack["ppi"])
    assert not compares_itself("Healing was faster with esomeprazole than with ranitidine.", pack["ppi"])
    # arms that share a treatment: the shared drug on both sides is the question's comparison
    assert not compares_itself("Pain relief was better with dexamethasone and diclofenac than with "
                                         "diclofenac alone.", pack["add"])


@pytest.mark.parametrize("sentence, expected", [
    ("Omeprazole healed gastric ulcers faster than ranitidine (P < 0.01).", set()),
    ("Omeprazole healed duodenal ulcers faster than ranitidine (P < 0.01).", {"du"}),
    ("Omeprazole healed peptic ulcers faster than ranitidine (P < 0.01).", {"du"}),
    ("In duodenal or gastric ulcer, omeprazole gave faster healing than ranitidine (P < 0.01).", {"du"}),
    ("Omeprazole healed more ulcers than ranitidine (P < 0.01).", {"du"}),
])
def test_ulcers_of_another_site_are_another_endpoint(tmp_path, sentence, expected):
    """``other_endpoint``: a claim naming ulcers of another site only ("gastric") does not answer a question about
    duodenal ulcers; "peptic" names both sites, and a claim naming no site is left to the rest of the rules."""
    pack = compiled_pack(tmp_path / "p.yaml", """
questions:
  - {id: du, text: "Do proton pump inhibitors heal duodenal ulcers faster than H2 receptor antagonists?"}
""", (str(COHEN_PACK),))
    assert answered(pack, sentence) == expected


@pytest.mark.parametrize("sentence, expected", [
    (("Atenolol attenuated circadian blood pressure swings (p < 0.05), whereas those on captopril exhibited "
      "markedly increased circadian changes."), set()),
    ("Blood pressure variability was lower with atenolol than with captopril (p < 0.05).", set()),
    ("Atenolol lowered 24-h blood pressure more than captopril without attenuating its diurnal variation.", {"bp"}),
    ("Atenolol lowered blood pressure more than captopril (p < 0.05).", {"bp"}),
])
def test_a_rhythm_of_the_outcome_is_another_endpoint(tmp_path, sentence, expected):
    """``other_endpoint``: a claim that names blood pressure only inside its rhythm ("circadian swings",
    "variability") does not answer a question about lowering it; one that also names its level does."""
    pack = compiled_pack(tmp_path / "p.yaml", """
questions:
  - {id: bp, text: "Is atenolol as effective as other antihypertensive drugs for blood pressure reduction?"}
""", (str(COHEN_PACK),))
    assert answered(pack, sentence) == expected


def test_the_lexicon_names_antidepressants_and_meloxicam_as_reviews_group_them(comparisons, tmp_path):
    """Bupropion and desipramine are drugs of their own (a trial of them is not one of stimulants), and meloxicam
    is set against nonselective NSAIDs as the coxibs are."""
    pack = compiled_pack(tmp_path / "p.yaml", """
questions:
  - {id: gi, text: "Do COX-2 inhibitors cause fewer gastrointestinal complications than nonselective NSAIDs?"}
  - {id: adhd, text: "In children with ADHD, does methylphenidate improve ADHD symptoms compared with placebo?"}
""")
    assert names_a_drug("Bupropion SR was more effective than placebo in adults with ADHD.", pack["adhd"])
    assert names_a_drug("Desipramine reduced tics and ADHD symptoms.", pack["adhd"])
    assert answered(pack, "Gastrointestinal complications were fewer with meloxicam than with diclofenac "
                          "(P < 0.05).") == {"gi"}

_PEMF = ("Patients with delayed union of long-bone fractures were randomised to pulsed electromagnetic field "
         "(PEMF) or sham treatment for 6 months.")


def test_an_article_none_of_whose_claims_names_the_outcome_answers_with_a_close_claim_on_part_of_it(tmp_path):
    """``article_answers`` when no claim of a trial names the question's outcome in its words: its closest claim
    answers if its cosine reaches ``article_similarity_alone`` and it names a word of the outcome besides the last
    (``names_part_of``: "rate of union" for "fracture union success rate", not "response rate"); a claim naming
    another drug than the question's arms never does."""
    pemf = list(compiled_pack(tmp_path / "p.yaml", """
questions:
  - {id: union, text: "Is fracture union success rate higher, lower, or the same when comparing pulsed electromagnetic field to sham treatment?"}
""").values())
    on_part = "Patients treated with PEMF achieved a significantly increased rate of union compared with sham."
    head_only = "The response rate was higher with PEMF than with sham treatment."
    other_drug = "Union was faster with ibuprofen withdrawal than with sham treatment."
    claims = [_claim("t1", on_part), _claim("t1", head_only, 100), _claim("t2", other_drug)]
    texts = {"t1": _PEMF, "t2": _PEMF}
    assert names_part_of(claim_words(on_part), pemf[0].outcome)
    assert not names_part_of(claim_words(head_only), pemf[0].outcome)
    stay = next(iter(compiled_pack(tmp_path / "d.yaml", """
questions:
  - {id: stay, text: "Is the duration of hospital stay higher, lower, or the same when comparing PEMF to sham?"}
""").values())).outcome  # the head of "duration of hospital stay" is "duration"
    assert names_part_of(claim_words("Patients left hospital 2 days earlier with PEMF."), stay)
    assert not names_part_of(claim_words("The duration of ventilation was shorter with PEMF."),
                                       stay)

    def taken(cosine: float) -> list[tuple[str, str]]:
        found = article_answers(claims, texts, set(), pemf, questions.QuestionsConfig(),
                                          lambda s: np.array([[cosine, (1 - cosine ** 2) ** 0.5]] * len(s)),
                                          np.array([[1.0, 0.0]]))
        return [(a.claim_id, a.question_id) for a in found]

    default = questions.QuestionsConfig().article_similarity_alone
    assert taken(default + 0.05) == [(claims[0].claim_id, "union")]
    assert taken(default - 0.05) == []


def test_the_questions_stage_counts_an_articles_answer_as_kept(tmp_path):
    """Through ``run_stage``: a claim taken as its article's answer is kept, not counted as answering no
    question, and the stage says how many were so taken."""
    pack = write_pack(tmp_path / "pack.yaml", """
questions:
  - {id: heal, text: "Is the rate of healing higher, lower, or the same when comparing lansoprazole to omeprazole?"}
""")
    io.write_records(tmp_path / "abstracts", [Abstract(article_uid="t1", text=_LANSO, title="LAN30 vs OME40")],
                     io.StageStats("ingest"))
    claims = [_claim("t1", "Healing was seen in 96% and 93% of patients at 8 weeks."),
              _claim("t1", "Heartburn resolved within 3 days in most patients.", 100)]
    io.write_records(tmp_path / "claims", claims, io.StageStats("claims"))
    stats = questions.run_stage(tmp_path / "claims", tmp_path / "questions", questions.QuestionsConfig(
        pack=str(pack), abstracts_dir=str(tmp_path / "abstracts"), cache_dir=str(tmp_path / "cache")))
    assert [(a.claim_id, a.question_id) for a in io.read_records(tmp_path / "questions", questions.Assignment)] == [
        (claims[0].claim_id, "heal")]
    assert stats["article_answers"] == 1 and stats["kept"] == 1 and stats["dropped_no_question"] == 1
    assert stats["seen"] == stats["kept"] + stats["dropped_total"] == 2
