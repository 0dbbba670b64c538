"""Learned question assignment (``questions --assigner learned``) on a pack and claims written here, in fields the
demo's lexicon does not cover (oncology, infection, obstetrics, surgery): each claim goes to the question it reports
a result on, a claim that reports none is dropped with its reason, and nothing depends on a lexicon entry."""

from __future__ import annotations

import numpy as np
import pytest

from biodivergence_dataset import io
from biodivergence_dataset.records import Claim, claim_id_for
from builder import questions
from builder.questions.filters import GENERAL_FILTERS
from builder.questions.relevance import best_per_article, candidate_questions, drop_reason

PACK = """
questions:
  - {id: trastuzumab, text: "Does adjuvant trastuzumab improve disease-free survival in HER2-positive breast cancer?"}
  - {id: otitis, text: "Does amoxicillin shorten symptoms of acute otitis media in children compared with placebo?"}
  - {id: aspirin_pe, text: "Does low-dose aspirin prevent pre-eclampsia in high-risk pregnancies?"}
  - {id: txa, text: "Does tranexamic acid reduce blood loss after total knee arthroplasty?"}
"""
CLAIMS = {  # article -> (sentence, the question it answers or None)
    "B1": [("Adjuvant trastuzumab improved disease-free survival compared with observation (HR 0.64).", "trastuzumab"),
           ("Patients were enrolled at 40 centres between 2001 and 2005.", None)],
    "B2": [(("Amoxicillin did not shorten the duration of ear pain compared with placebo in children with otitis "
            "media."), "otitis")],
    "B3": [("Low-dose aspirin reduced the incidence of preterm pre-eclampsia in women at high risk.", "aspirin_pe"),
           ("Baseline characteristics were similar in the two groups.", None)],
    "B4": [("Tranexamic acid significantly reduced total blood loss after knee replacement.", "txa"),
           # the conclusion restating the finding: the article answers the question once, with one of the two
           ("In conclusion, tranexamic acid lowers blood loss in total knee arthroplasty.", "txa")],
}


def _claims() -> list[Claim]:
    out = []
    for uid, rows in CLAIMS.items():
        start = 0
        for sentence, _ in rows:
            out.append(Claim(claim_id=claim_id_for(uid, start, start + len(sentence)), article_uid=uid,
                             domain="clinical_trials_epidemiology", sentence=sentence, claim_type="efficacy",
                             sentence_start=start, sentence_end=start + len(sentence), confidence=0.9))
            start += len(sentence) + 1
    return out


@pytest.fixture(scope="module", params=[1000, 1], ids=["one_shard", "a_shard_per_claim"])
def learned(tmp_path_factory, request):
    """The stage run on the claims above, in one shard or with each claim in its own (an article's claims then
    fall in several shards, and it must still answer a question once)."""
    root = tmp_path_factory.mktemp("learned")
    io.write_records(root / "claims", _claims(), io.StageStats("claims"))
    pack = root / "pack.yaml"
    pack.write_text(PACK, encoding="utf-8")
    stats = questions.run_stage(root / "claims", root / "questions", questions.QuestionsConfig(
        pack=str(pack), cache_dir=str(root / "cache"), assigner="learned", shard_size=request.param))
    return root, stats


def test_each_claim_goes_to_the_question_it_reports_a_result_on(learned):
    root, stats = learned
    got = {(a.article_uid, a.question_id) for a in io.read_records(root / "questions", questions.Assignment)}
    want = {(uid, q) for uid, rows in CLAIMS.items() for _, q in rows if q}
    assert got == want
    assert all(a.why.startswith("answerer relevance") and 0.5 < a.score <= 1
               for a in io.read_records(root / "questions", questions.Assignment))
    assert stats["seen"] == 7 and stats["kept"] == 4 and stats["questions_without_claims"] == 0
    assert stats["dropped_not_best_of_article"] == 1
    assert stats["questions_per_claim"] == {"1": 4} and sum(stats["assignments_per_question"].values()) == 4


def test_a_claim_that_answers_no_question_keeps_the_reason(learned):
    _, stats = learned
    assert stats["dropped_baseline"] == 1  # a general filter, any field
    assert stats.get("dropped_not_relevant", 0) + stats.get("dropped_no_close_question", 0) == 1


@pytest.mark.parametrize(("sentence", "reason"), [
    ("Baseline characteristics were similar in the two groups.", "baseline"),
    ("Serum ferritin correlated with haemoglobin (r = 0.42).", "correlation"),
    ("Tranexamic acid reduced blood loss after knee replacement.", None),
])
def test_the_general_filters_name_their_reason(sentence, reason):
    assert drop_reason(sentence, GENERAL_FILTERS) == reason


def test_only_the_closest_questions_above_the_floor_are_asked():
    sims = np.array([0.1, 0.7, 0.3, 0.5])
    assert candidate_questions(sims, 2, 0.2) == [1, 3]
    assert candidate_questions(sims, 4, 0.4) == [1, 3]
    assert candidate_questions(sims, 3, 0.9) == []


def test_an_article_answers_a_question_once_with_its_most_relevant_claim():
    rows = [("A", "q0", 0.7), ("A", "q0", 0.9), ("A", "q1", 0.6), ("B", "q0", 0.8), ("A", "q1", 0.6)]
    assert best_per_article(rows) == [False, True, True, True, False]  # the first on a tie
