"""The leaderboard's rules from counts: the headline rule (a headline must beat its best trivial floor by the margin),
applied to a constructed case and to the demo's measured floors and reference run, and the split limits the card
states (conflicts per question, largest claim share)."""

from __future__ import annotations

import json

import pytest
from release_factory import make_example
from repo_paths import REPO

from biodivergence_dataset import benchmark, ontology, release
from biodivergence_dataset.tasks import headline_margin

RESULTS = REPO / "benchmarks" / "results"
NC, CTX = ontology.NO_CONFLICT, ontology.CONTEXTUAL


def floors_of(best: dict[str, float]) -> dict:
    return {"best": {key: {"system": "majority", "score": value} for key, value in best.items()}}


def test_a_headline_must_beat_its_best_floor_by_the_margin():
    ids = [b.id for b in benchmark.key_metrics()]
    margin = headline_margin()
    first, second, third = ids[:3]
    verdicts = {v.id: v for v in benchmark.headline_verdicts(
        floors_of({first: 0.30, second: 0.30, third: 0.30}),
        {first: 0.30 + margin + 0.01, second: 0.30 + margin - 0.01})}  # third: the reference model does not score it
    assert verdicts[first].headline and verdicts[first].floor == 0.30 and verdicts[first].floor_system == "majority"
    assert not verdicts[second].headline  # within the margin of the floor
    assert not verdicts[third].headline and verdicts[third].reference is None
    assert set(verdicts) == set(ids)


def reference_scores(run: dict) -> dict[str, float]:
    """The reference model's best mean test score per metric key over the decodings of a reference run (its rows
    report ``{mean, std}`` per key; the baselines beside it report plain numbers)."""
    best: dict[str, float] = {}
    for row in run["table"]:
        for key, value in row["scores"].items():
            if isinstance(value, dict) and value.get("mean") is not None:
                best[key] = max(best.get(key, value["mean"]), value["mean"])
    return best


def test_the_headlines_are_the_key_metrics_the_demo_reference_run_clears():
    """The headline rule applied to the floors measured on the demo release (benchmarks/floors.py) and the
    reference run on it (benchmarks/reference_run.py): a key metric is a headline of tasks.yaml exactly when the
    reference model beats its best trivial floor by more than the margin, so a re-run that moves a metric across
    the margin must promote or demote it in tasks.yaml."""
    floors = json.loads((RESULTS / "floors_demo.json").read_text(encoding="utf-8"))
    run = json.loads((RESULTS / "reference_run.json").read_text(encoding="utf-8"))
    assert floors["n"] == run["n_evaluated"], "floors and reference run must be measured on the same test split"
    assert run.get("classes") == floors["classes"], (
        "the reference run must score macro-F1 over the train classes as the floors do and record them: "
        "compute(..., classes=biodivergence_dataset.benchmark.train_classes(release)), 'classes' in its JSON")
    verdicts = benchmark.headline_verdicts(floors, reference_scores(run))
    assert all(v.floor is not None and v.reference is not None for v in verdicts), "a key metric was not measured"
    deserved = [v.id for v in verdicts if v.headline]
    declared = [b.id for b in benchmark.leaderboards()]
    assert declared == deserved, "\n".join(
        f"{v.id}: reference {v.reference:.3f}, best floor {v.floor:.3f} ({v.floor_system}), margin {v.margin}: "
        f"{'a headline' if v.headline else 'not a headline'} under the rule; declared "
        f"{'a headline' if v.id in declared else 'not a headline'} in tasks.yaml" for v in verdicts)
    assert declared, "no key metric clears the demo's floors: the release would have no leaderboard"


def pair(i: int, a: str, b: str, conflict: str, question: str):
    return make_example(a, b, conflict, ("geography",) if conflict != NC else ()).model_copy(
        update={"question_id": question, "example_id": f"e{i}", "pair_id": f"p{i}"})


def test_split_limits_count_conflicts_per_question_and_the_largest_claim_share(tmp_path):
    """test: 4 conflicts (3 of q1, 1 of q2), one no-conflict row and one conflict without a question; the claim of
    article pmid:1 is in 3 of the 5 conflicts."""
    test = [pair(0, "pmid:1", "pmid:2", CTX, "q1"), pair(1, "pmid:1", "pmid:3", CTX, "q1"),
            pair(2, "pmid:1", "pmid:4", CTX, "q1"), pair(3, "pmid:5", "pmid:6", CTX, "q2"),
            pair(4, "pmid:7", "pmid:8", NC, "q2"), pair(5, "pmid:9", "pmid:10", CTX, "")]
    train = [pair(10, "pmid:11", "pmid:12", NC, "q1")]
    release.write_config(tmp_path, ontology.DEFAULT_CONFIG, {"train": train, "validation": [], "test": test})
    limits = {lim.split: lim for lim in benchmark.split_limits(tmp_path)}
    t = limits["test"]
    assert (t.rows, t.conflicts, t.questions) == (6, 5, {"q1": 3, "q2": 1})
    assert t.top_claim == test[0].claim_a_id and t.top_claim_conflicts == 3
    assert t.top_claim_share == pytest.approx(3 / 5)
    assert (limits["train"].conflicts, limits["train"].questions, limits["train"].top_claim) == (0, {}, None)
    assert benchmark.train_classes(tmp_path) == [NC]


def test_the_largest_claim_share_breaks_ties_by_claim_id_in_every_process(tmp_path):
    """One conflict, so both of its claims are in all of them: the card names the smaller claim id, whatever order
    string hashing gives the pair's claims in this process (a card rendered again must read the same)."""
    test = [pair(0, "pmid:1", "pmid:2", CTX, "q1"), pair(1, "pmid:3", "pmid:4", NC, "q1")]
    release.write_config(tmp_path, ontology.DEFAULT_CONFIG, {"train": test[1:], "validation": [], "test": test})
    top = {lim.split: lim for lim in benchmark.split_limits(tmp_path)}["test"]
    assert top.top_claim == min(test[0].claim_a_id, test[0].claim_b_id) and top.top_claim_conflicts == 1
