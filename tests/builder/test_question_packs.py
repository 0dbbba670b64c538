"""Clinical question packs: read from text alone or from fields, their errors, the demo pack."""

from __future__ import annotations

import os
import re

import pytest
from question_packs import write_pack

from builder import questionpacks
from builder.questions.lexicon import load_lexicon, terms

os.environ.setdefault("HF_HUB_OFFLINE", "1")


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
