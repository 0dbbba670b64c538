"""The comparison must be the question's: a claim answers only a question it compares as asked (no correlation,
subgroup, mediation or open-label use; active arms against placebo), and the comparison kinds."""

from __future__ import annotations

import os

import pytest
from question_packs import answered, compiled_pack

from builder import questionpacks
from builder.questions.arms import arm_drugs, sets_arms_equal
from builder.questions.compiled import INACTIVE, NAMED, OTHER, comparison_kind
from builder.questions.filters import reports_correlation, reports_interaction, reports_no_comparison

os.environ.setdefault("HF_HUB_OFFLINE", "1")


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


def test_active_arms_compared_among_themselves_answer_no_question_against_placebo(comparisons):
    abstract = "Captopril, enalapril, ramipril or placebo was given to 800 patients after myocardial infarction."
    claim = "Mortality did not differ significantly among the 3 active treatment groups."
    assert answered(comparisons, claim, abstract) == set()
    assert answered(comparisons, "Mortality did not differ significantly between the treatment groups.",
                    abstract) == {"vs_placebo"}


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


def test_the_comparison_kinds_of_the_demo_pack():
    kinds = {q.question_id: comparison_kind(q.comparator) for q in questionpacks.load_questions(
        questionpacks.PACK_DIR / "cohen2006_drug_classes.yaml")}
    assert kinds["acei_mi_mortality"] == kinds["acei_hf_mortality"] == INACTIVE
    assert kinds["ui_dry_mouth"] == NAMED and kinds["ccb_cv_events"] == OTHER


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
