"""The arms a claim names: by role, by the words before "group", by a word only one arm's phrase has, by an
abbreviation, doses and add-ons, which arm comes first, and the drugs of each arm."""

from __future__ import annotations

import os

import pytest
from question_packs import answered, compiled_pack

from builder.questions.arms import arm_drugs, claim_arms, comparator_first
from builder.questions.compiled import INACTIVE, NAMED, OTHER, comparison_kind, names_a_drug
from builder.questions.filters import doses
from builder.questions.groups import (
    arms_named_apart,
    arms_named_by_group,
    group_name_words,
    group_names,
    names_arms_by_role,
    sentence_stems,
)

os.environ.setdefault("HF_HUB_OFFLINE", "1")


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
