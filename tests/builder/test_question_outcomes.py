"""The outcome a claim names must be the question's endpoint: cause-specific deaths, laboratory tests, covariates,
other sites and rhythms, abbreviations."""

from __future__ import annotations

import os

import pytest
from question_packs import answered, compiled_pack

from builder.questions.endpoints import cause_specific_death
from builder.questions.filters import claim_words, without_non_findings
from builder.questions.lexicon import COHEN_PACK, load_lexicon
from builder.questions.match import names_part_of

os.environ.setdefault("HF_HUB_OFFLINE", "1")


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


def test_renal_function_is_not_proteinuria_but_albumin_excretion_is(tmp_path):
    pack = compiled_pack(tmp_path / "p.yaml", """
questions:
  - {id: renal, text: "Do ACE inhibitors reduce proteinuria?"}
""")
    assert answered(pack, "Enalapril reduced the albumin excretion rate compared with placebo (P < 0.01).") == {"renal"}
    assert answered(pack, "Enalapril caused a 33% increase in the risk of decreased renal function.") == set()
    assert answered(pack, "Ramipril significantly limited progression to ESRD compared with placebo.") == set()


def test_a_laboratory_test_named_by_an_outcome_word_is_not_that_outcome(tmp_path):
    pack = compiled_pack(tmp_path / "p.yaml", """
questions:
  - {id: gi, text: "Do COX-2 inhibitors cause fewer GI complications than nonselective NSAIDs?"}
""", (str(COHEN_PACK),))  # the NSAID review pools bleeding with GI complications
    assert answered(pack, "Bleeding times were less prolonged with meloxicam than with naproxen (p < 0.05).") == set()
    assert answered(pack, "Gastrointestinal bleeding was less frequent with meloxicam than with naproxen "
                          "(p < 0.05).") == {"gi"}
    # the measures are data in the clinical lexicon, matched whole whatever the spacing, plural or not
    assert "bleeding time" in load_lexicon().measures_named_by_outcomes
    assert "bleeding" not in without_non_findings("Bleeding\n time rose; bleeding  times fell.").lower()
    assert "bleeding" in without_non_findings("Bleeding timed to the dose was rarer.").lower()


def test_an_outcome_named_only_as_a_covariate_is_not_the_claims(comparisons):
    sentence = ("Dispersion of the QT interval fell more with nifedipine than with atenolol (P = 0.001); the same results "
                "were found when changes in cardiovascular events and heart rate were also included in multivariate "
                "analyses.")
    assert "cardiovascular" not in without_non_findings(sentence)
    assert answered(comparisons, sentence) == set()
    # an adjustment clause ends at its comma: the finding after it stays
    assert answered(comparisons, "After adjustment for age, cardiovascular events were more frequent with nifedipine "
                                 "than with atenolol (P = 0.01).") == {"vs_others"}


def test_an_outcome_is_named_by_the_abbreviation_its_phrase_defines(tmp_path):
    pack = compiled_pack(tmp_path / "p.yaml", """
questions:
  - {id: fev, text: "Is forced expiratory volume in 1 second (FEV1) higher, lower, or the same when comparing tiotropium to placebo?"}
""")
    assert answered(pack, "Tiotropium improved FEV1 compared with placebo (P < 0.001).") == {"fev"}
    assert answered(pack, "Tiotropium improved FVC compared with placebo (P < 0.001).") == set()


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
