"""A claim answers a question asked in a population only when its article studied that population."""

from __future__ import annotations

import os

from question_packs import answered, compiled_pack

from builder import questions
from builder.questions.lexicon import COHEN_PACK
from builder.questions.match import answers
from builder.questions.population import population_mentions

os.environ.setdefault("HF_HUB_OFFLINE", "1")


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
