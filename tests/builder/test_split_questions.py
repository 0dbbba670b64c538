"""Split stage: conflicts of many questions in every split, the cap on one claim's share of a split's conflicts,
and the per-question counts the release reports (issue 60, item 2)."""

from __future__ import annotations

import json
import math
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from split_factory import example, question_stars, write_annotations

from biodivergence_dataset import ontology
from biodivergence_dataset.release import iter_examples
from builder import audit, release_stage, split
from builder.placement import cap_claim_share
from builder.split import SplitConfig, split_pool

TRAIN, VALIDATION, TEST = ontology.SPLITS
CAP = SplitConfig().max_claim_share
#: Three questions whose conflicts hang on a few claims each (three of 14 trials each read against all the
#: others, ...), three middling ones and forty small ones (one of four trials read against the other three):
#: every question one component. Under a cap of a tenth, a split's conflicts need ten claims or more: the small
#: questions supply them.
SIZES = {"q00": (14, 3), "q01": (10, 2), "q02": (9, 2), "q03": (8, 1), "q04": (8, 1), "q05": (7, 1),
         **{f"q{i:02d}": (4, 1) for i in range(6, 46)}}


def conflicts(rows) -> list:
    return [r for r in rows if r.conflict_type != ontology.NO_CONFLICT]


def largest_share(rows) -> tuple[int, int]:
    """The most conflicts one claim is in, and the conflicts."""
    found = conflicts(rows)
    held = Counter(c for r in found for c in (r.claim_a_id, r.claim_b_id))
    return max(held.values(), default=0), len(found)


def questions(rows) -> set[str]:
    return {r.question_id for r in conflicts(rows)}


@pytest.fixture(scope="module")
def pool():
    return question_stars(SIZES, fillers=1500)


def test_every_split_holds_conflicts_of_many_questions_under_the_claim_cap(pool):
    result = split_pool(pool, SplitConfig(oversized_components="carve"))
    primary = result.configs["primary"]
    for name, rows in primary.items():
        top, n = largest_share(rows)
        assert top <= max(1, math.floor(CAP * n)), (name, top, n)
    assert len(questions(primary[TEST])) >= 5 and len(questions(primary[VALIDATION])) >= 5
    assert len(questions(primary[TRAIN])) >= 3
    assert len(conflicts(primary[TEST])) >= 10
    # every pair is placed once or dropped for a counted reason, the cap's drops among them
    placed = sum(len(primary[s]) for s in ontology.SPLITS)
    assert placed + sum(result.report["dropped"].values()) == len(pool)
    # the report's counts are the splits' own
    for name, rows in primary.items():
        spread = result.report["questions"][name]
        assert spread["conflicts_per_question"] == dict(Counter(r.question_id for r in conflicts(rows)))
        assert spread["largest_claim_conflicts"] == largest_share(rows)[0]


def test_the_cap_bites_on_a_claim_in_many_conflicts_and_is_counted():
    pool = question_stars({**SIZES, "q00": (30, 2)}, fillers=1500)
    loose = split_pool(pool, SplitConfig(oversized_components="carve", max_claim_share=1.0))
    capped = split_pool(pool, SplitConfig(oversized_components="carve"))
    # without the cap, the two claims of q00 read against 29 and 28 others hold more than a tenth of train's
    top, n = largest_share(loose.configs["primary"][TRAIN])
    assert top > CAP * n and split.CLAIM_CAP not in loose.report["dropped"]
    dropped = capped.report["dropped"][split.CLAIM_CAP]
    assert dropped > 0
    assert sum(len(conflicts(capped.configs["primary"][s])) for s in ontology.SPLITS) + dropped == sum(
        len(conflicts(loose.configs["primary"][s])) for s in ontology.SPLITS)


def test_cap_keeps_the_most_conflicts_the_cap_allows():
    """Ten claims in five conflicts each and one in twenty: cutting the big one to seven (a tenth of 70) leaves 57
    conflicts, whose tenth is five; cut to five, 55 conflicts remain and five is within their tenth."""
    rows = [example(f"amr:s{s}", f"amr:s{s}-{i}") for s in range(10) for i in range(5)]
    rows += [example("amr:big", f"amr:big-{i}") for i in range(20)]
    rows += [example(f"amr:n{i}", f"amr:n{i}x", conflict=ontology.NO_CONFLICT) for i in range(30)]
    kept, dropped = cap_claim_share(rows, 0.10, seed=1)
    assert dropped == 15 and len(kept) == len(rows) - 15
    assert largest_share(kept) == (5, 55)
    assert [r.pair_id for r in kept] == [r.pair_id for r in rows if r in kept]  # order kept
    assert cap_claim_share(rows, 1.0, seed=1) == (rows, 0)
    # fewer conflicts than a tenth could spread over: a claim in one conflict is never dropped
    few = [example(f"amr:p{i}", f"amr:p{i}x") for i in range(4)]
    assert cap_claim_share(few, 0.10, seed=1) == (few, 0)


def test_release_reports_conflicts_per_question_and_stays_article_disjoint(tmp_path, pool):
    annotations = write_annotations(tmp_path / "annotations", pool)
    release = tmp_path / "release"
    stats = split.run_stage(annotations, release, SplitConfig(oversized_components="carve"))
    release_stage.run_stage(None, release)
    manifest = json.loads((release / "split_manifest.json").read_text())
    for figure in ("conflicts", "questions", "largest_claim_share"):  # the stage's stats carry them too
        assert stats[f"primary_{figure}"] == {s: spread[figure] for s, spread in manifest["questions"].items()}
    assert manifest["thresholds"]["max_claim_share"] == CAP
    rows = {s: list(iter_examples(release, "primary", s)) for s in manifest["questions"]}
    for name, spread in manifest["questions"].items():
        assert spread["conflicts_per_question"] == dict(Counter(r.question_id for r in conflicts(rows[name])))
        assert spread["questions"] == len(questions(rows[name]))
        top, n = largest_share(rows[name])
        assert spread["largest_claim_share"] == round(top / n, 4) and top <= max(1, math.floor(CAP * n))
    assert not audit.leakage(audit.read_config(release, "primary")).leaks
    card = (release / "README.md").read_text()
    section = card.split("### Conflicts per question", 1)[1].split("\n## ", 1)[0]
    test_column = list(manifest["questions"]).index(TEST) + 1
    for q, n in manifest["questions"][TEST]["conflicts_per_question"].items():
        (line,) = [row for row in section.splitlines() if row.startswith(f"| `{q}` |")]
        assert line.split(" | ")[test_column].strip() == str(n)
    assert f"| **questions with conflicts** | {manifest['questions'][TRAIN]['questions']} |" in section


@st.composite
def question_graphs(draw):
    """Random pools of pairs answering a few questions, some pairs answering none, conflicts anywhere."""
    examples = []
    n_articles = draw(st.integers(2, 40))
    for a, b, claim, q, kind in draw(st.lists(st.tuples(
            st.integers(0, n_articles - 1), st.integers(0, n_articles - 1), st.integers(0, 2), st.integers(0, 4),
            st.sampled_from(ontology.ANNOTATOR_KINDS)), min_size=1, max_size=120)):
        if a != b:
            examples.append(example(f"amr:{a}", f"amr:{b}", claim_a=claim, claim_b=claim, kind=kind,
                                    conflict=draw(st.sampled_from(ontology.CONFLICT_TYPE_NAMES)))
                            .model_copy(update={"question_id": f"q{q}" if q else ""}))
    return examples


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(question_graphs(), st.integers(0, 2**16), st.sampled_from(["train", "carve", "auto"]),
       st.sampled_from([0.05, 0.10, 0.25, 1.0]))
def test_any_pool_splits_article_disjoint_under_the_cap_with_every_pair_accounted(examples, seed, oversized, cap):
    result = split_pool(examples, SplitConfig(seed=seed, oversized_components=oversized, max_claim_share=cap))
    primary = result.configs["primary"]
    assert not audit.leakage({s: [r.model_dump() for r in rows] for s, rows in primary.items()}).leaks
    for rows in primary.values():
        top, n = largest_share(rows)
        assert top <= max(1, math.floor(cap * n + 1e-9))
    placed = [r.pair_id for s in ontology.SPLITS for r in primary[s]]
    assert len(placed) == len(set(placed))
    dropped = sum(n for reason, n in result.report["dropped"].items() if reason != "duplicate_pair_id")
    assert len(placed) + dropped == len({r.pair_id for r in examples})
