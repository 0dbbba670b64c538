"""Evidence maps from records written here: a question about exercise and falls in older adults (no drug class of
the demo), answered by three studies of which two agree and one disagrees, with the released pairs among them."""

from __future__ import annotations

import pytest

from biodivergence_dataset import ontology
from biodivergence_dataset.io import StageStats
from biodivergence_dataset.records import Claim, Example, MapCondition, Question, claim_id_for, pair_id_for
from builder.evidence_map import NOT_STATED, ReadClaim, evidence_maps, grouping_axis, pooled

QUESTION = Question(question_id="falls_exercise", text="In older adults, does resistance exercise reduce falls "
                    "compared with usual care?", intervention="resistance exercise", comparator="usual care",
                    outcome="falls", population="older adults")
UNANSWERED = Question(question_id="falls_vitamin_d", text="Does vitamin D reduce falls?", intervention="vitamin D",
                      outcome="falls")
POPULATION = "population_cohort"
#: (article, sentence, finding read, stated significance, population phrase)
STUDIES = (
    ("pmid:101", ("Falls were significantly fewer with resistance exercise than with usual care in community-dwelling "
                 "women aged over 70."), "decrease", "significant", "in community-dwelling women aged over 70"),
    ("pmid:102", ("Supervised resistance training lowered the rate of falls by 30% (p = 0.01) in community-dwelling "
                 "men."), "decrease", "significant", "in community-dwelling men"),
    ("pmid:103", ("Resistance exercise did not change the number of falls compared with usual care in nursing home "
                 "residents."), "no_difference", "not_significant", "in nursing home residents"),
)


def claim(article: str, sentence: str) -> Claim:
    return Claim(claim_id=claim_id_for(article, 0, len(sentence)), article_uid=article, domain=ontology.QUESTION_DOMAIN,
                 sentence=sentence, claim_type="efficacy", sentence_start=0, sentence_end=len(sentence),
                 confidence=0.9, pub_year=2010)


def read_claims() -> list[ReadClaim]:
    return [ReadClaim(QUESTION.question_id, claim(a, s), finding, sig, 0.9, (MapCondition(axis=POPULATION, text=p),))
            for a, s, finding, sig, p in STUDIES]


def row(a: Claim, b: Claim, conflict: str, axes: tuple[str, ...] = ()) -> Example:
    """A released row of the pair (a, b) under the question."""
    pid = pair_id_for(a.claim_id, b.claim_id)
    return Example(example_id=pid, pair_id=pid, domain=a.domain, claim_a_id=a.claim_id, claim_b_id=b.claim_id,
                   claim_a_text=a.sentence, claim_b_text=b.sentence, claim_a_type="efficacy", claim_b_type="efficacy",
                   article_uid_a=a.article_uid, article_uid_b=b.article_uid, conflict_type=conflict,
                   divergence_axes=list(axes), dominant_confounder=axes[0] if axes else None,
                   annotator_id="reader-2", annotator_kind="reader", confidence=0.8,
                   question_id=QUESTION.question_id, question=QUESTION.text)


@pytest.fixture()
def released():
    c1, c2, c3 = (r.claim for r in read_claims())
    contextual = row(c1, c3, ontology.CONTEXTUAL, (POPULATION,))
    return [("train", row(c1, c2, ontology.NO_CONFLICT)), ("test", contextual), ("", contextual),
            ("", row(c2, c3, "direct_contradiction"))]


def test_two_agreeing_one_disagreeing_study(released):
    stats = StageStats("evidence_map", unit="questions")
    questions = {q.question_id: q for q in (QUESTION, UNANSWERED)}
    maps = list(evidence_maps(questions, read_claims(), released, stats))

    assert [m.question_id for m in maps] == [QUESTION.question_id]
    m = maps[0]
    assert m.pooled_direction == "decrease"
    assert (m.n_studies, m.n_agree, m.n_disagree, m.n_unread) == (3, 2, 1, 0)
    by_article = {s.article_uid: s for s in m.studies}
    assert {a: s.agrees for a, s in by_article.items()} == {"pmid:101": True, "pmid:102": True, "pmid:103": False}
    assert by_article["pmid:103"].direction == "no_difference"
    assert by_article["pmid:103"].significance == "not_significant"
    # the conflicts: the two released conflict rows (the no_conflict row is none), each once, with its primary split
    assert sorted((c.conflict_type, c.split) for c in m.conflicts) == [("contextual_contradiction", "test"),
                                                                        ("direct_contradiction", "")]
    assert len(by_article["pmid:103"].conflict_pair_ids) == 2
    assert len(by_article["pmid:102"].conflict_pair_ids) == 1
    # grouped by the condition the conflict names, each study by its own words on it
    assert m.grouping_axis == POPULATION
    assert by_article["pmid:103"].group == "in nursing home residents"
    assert stats.seen == 2 and stats.kept == 1 and stats.dropped["no_assigned_claim"] == 1
    assert stats.counts["studies_by_direction"] == {"decrease": 2, "no_difference": 1}


def test_a_study_reads_its_claims_by_the_same_rule(released):
    """A study with two claims, one read as no difference and one not reported, reports no difference."""
    extra = ReadClaim(QUESTION.question_id, claim("pmid:103", "Falls were recorded by monthly calendars."),
                      "not_reported", None, 0.7)
    m = next(evidence_maps({QUESTION.question_id: QUESTION}, [*read_claims(), extra], released,
                           StageStats("evidence_map")))
    study = next(s for s in m.studies if s.article_uid == "pmid:103")
    assert study.direction == "no_difference" and len(study.claims) == 2


def test_pooled_direction_rule():
    assert pooled(["increase", "increase", "no_difference"]) == "increase"
    assert pooled(["increase", "decrease"]) == "no_difference"  # a tie
    assert pooled(["decrease", "not_reported", "not_reported"]) == "decrease"
    assert pooled(["not_reported"]) == "not_reported"
    assert pooled([]) == "not_reported"


def test_grouping_falls_back_to_what_studies_state():
    """No conflict names a condition: the axis two or more studies state is the grouping; one study alone is none."""
    two = [[MapCondition(axis="clinical_setting", text="nursing homes")], [MapCondition(axis="clinical_setting",
                                                                                          text="community")], []]
    assert grouping_axis([], two) == "clinical_setting"
    assert grouping_axis([], two[:1]) == ""


def test_unread_study_and_not_stated_group(released):
    reads = read_claims()[:2] + [ReadClaim(QUESTION.question_id, claim("pmid:104", "Falls were counted for a year "
                                                                          "(p < 0.05 for adherence)."),
                                           "not_reported", "significant", 0.6)]
    m = next(evidence_maps({QUESTION.question_id: QUESTION}, reads, released, StageStats("evidence_map")))
    unread = next(s for s in m.studies if s.article_uid == "pmid:104")
    assert unread.agrees is None and unread.group == NOT_STATED and unread.significance is None
    assert (m.n_agree, m.n_disagree, m.n_unread) == (2, 0, 1)
    assert m.studies[-1] is unread  # a study that states nothing on the grouping axis comes last


def finished_folder(folder, records, stage: str, inputs: list[str]):
    """A finished stage folder holding ``records`` (shards, manifest naming ``inputs``, success marker)."""
    from biodivergence_dataset import io

    io.write_shards(folder, records)
    io.write_manifest(folder, stage, inputs, {})
    io.mark_done(folder)
    return folder


@pytest.mark.slow
def test_stage_reads_assigned_claims_with_the_reader_and_writes_the_maps(tmp_path):
    """The stage on a release with a questions folder written here: every declared question with an assigned claim
    gets a map (the claims read by the shipped reader), the other is counted, and once the card declares them the
    maps load back."""
    import json

    from datasets import load_dataset
    from release_factory import write_small_release

    from biodivergence_dataset import card
    from biodivergence_dataset.evidence_maps import read_maps
    from builder.evidence_map_stage import EvidenceMapConfig, run_stage
    from builder.questions import QUESTIONS_FILE, Assignment

    release = write_small_release(tmp_path / "release")
    claims = [r.claim for r in read_claims()]
    claims_dir = finished_folder(tmp_path / "claims", claims, "claims", [])
    questions_dir = tmp_path / "questions"
    finished_folder(questions_dir, [Assignment(claim_id=c.claim_id, question_id=QUESTION.question_id,
                                               article_uid=c.article_uid, score=0.9, why="test") for c in claims],
                    "questions", [str(claims_dir)])
    (questions_dir / QUESTIONS_FILE).write_text(json.dumps([q.model_dump(mode="json") for q in (QUESTION, UNANSWERED)]))

    stats = run_stage(release, EvidenceMapConfig(questions_dir=str(questions_dir), plots=False))
    assert (stats["seen"], stats["kept"], stats["dropped_no_assigned_claim"], stats["claims_read"]) == (2, 1, 1, 3)
    (m,) = read_maps(release)
    assert m.n_studies == 3 and m.n_agree + m.n_disagree + m.n_unread == 3
    assert all(s.claims[0].finding in ontology.READER_FINDINGS for s in m.studies)
    card.write_card(release)  # in a build, the release stage after this one
    assert load_dataset(str(release), ontology.EVIDENCE_MAP_CONFIG)[ontology.EVIDENCE_MAP_SPLIT].num_rows == 1


def test_build_runs_the_maps_only_with_a_question_pack(tmp_path):
    """With a pack the stage reads the questions folder, the questions' lexicon and the annotate section's reader;
    without one it does not run."""
    from builder.build import BuildConfig, active_steps, wire

    with_pack = BuildConfig(questions={"pack": "pack.yaml", "domain_packs": ["extra.yaml"]},
                            annotate={"annotator": ["reader:my/reader", "heuristic"]})
    section = wire("evidence_map", {}, with_pack, tmp_path)
    assert section == {"questions_dir": str(tmp_path / "questions"), "domain_packs": ["extra.yaml"],
                       "reader": "my/reader"}
    assert "evidence_map" in [s.name for s in active_steps(with_pack)]
    assert "evidence_map" not in [s.name for s in active_steps(BuildConfig())]
