"""A claim answering through its abstract (QuestionsConfig.whole_abstract), and an article answering a question
with one of its claims."""

from __future__ import annotations

import argparse
import os

import numpy as np
import pytest
from question_packs import answered, compiled_pack, write_pack
from repo_paths import SHARED_DATA

from biodivergence_dataset import io
from biodivergence_dataset.records import Abstract, Claim, Question, claim_id_for
from builder import questionpacks, questions
from builder.embeddings import DEFAULT_MODEL
from builder.questions.arms import compares_arms, compares_itself, fixed_combination
from builder.questions.compiled import INACTIVE, compile_questions, names_a_drug
from builder.questions.filters import claim_words
from builder.questions.groups import (
    abstract_names_arms,
    drug_add_on,
    selection_groups,
    sets_groups_against,
    untreated_against_active,
)
from builder.questions.lexicon import load_lexicon
from builder.questions.match import answers, article_answers, names_part_of

os.environ.setdefault("HF_HUB_OFFLINE", "1")


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
