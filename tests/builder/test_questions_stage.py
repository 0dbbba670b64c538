"""The questions stage and mining within questions, on sentences written here, with the real encoder."""

from __future__ import annotations

import os

import numpy as np
import pytest
from question_packs import write_pack

from biodivergence_dataset import io
from biodivergence_dataset.records import CandidatePair, Claim, claim_id_for
from builder import mine, questions

os.environ.setdefault("HF_HUB_OFFLINE", "1")


SENTENCES = {  # article -> claims
    "A1": ["Pravastatin significantly reduced systolic blood pressure compared with placebo.",
           "Pravastatin lowered LDL cholesterol by 30%."],
    "A2": ["Atorvastatin did not reduce blood pressure in hypertensive patients.",
           "Atorvastatin reduced LDL cholesterol by 40%."],
    "A3": ["Simvastatin therapy had no effect on blood pressure.",
           "Simvastatin improved endothelial function in smokers."],
    "A4": ["Exercise training improved quality of life in heart failure.",
           "Exercise training reduced hospital admissions in heart failure."],
}


def _claims() -> list[Claim]:
    out = []
    for uid, sentences in SENTENCES.items():
        start = 0
        for s in sentences:
            out.append(Claim(claim_id=claim_id_for(uid, start, start + len(s)), article_uid=uid,
                             domain="clinical_trials_epidemiology", sentence=s, claim_type="efficacy",
                             sentence_start=start, sentence_end=start + len(s), confidence=0.9))
            start += len(s) + 1
    return out


@pytest.fixture(scope="module")
def staged(tmp_path_factory):
    root = tmp_path_factory.mktemp("questions")
    io.write_records(root / "claims", _claims(), io.StageStats("claims"))
    pack = write_pack(root / "pack.yaml", """
questions:
  - {id: statin_bp, text: "Do statins reduce blood pressure?"}
  - {id: statin_ldl, text: "Do statins lower LDL cholesterol?"}
  - {id: unused, text: "Does metformin reduce HbA1c?"}
  - {id: vague, text: "What is the best treatment?"}
""")
    cache = root / "embedding_cache"
    stats = questions.run_stage(root / "claims", root / "questions",
                                questions.QuestionsConfig(pack=str(pack), cache_dir=str(cache)))
    return root, stats


def test_questions_command_finds_the_stage_current(staged, capsys):
    from biodivergence_cli.main import main

    root, stats = staged
    assert main(["questions", str(root / "claims"), "--pack", str(root / "pack.yaml"), "--out",
                 str(root / "questions"), "--cache-dir", str(root / "embedding_cache")]) == 0
    assert f"{stats['kept']} of 8 claims answer at least one of 4 questions" in capsys.readouterr().out


def test_questions_stage_gives_the_same_assignments_on_two_ranks(staged, tmp_path):
    from builder.runtime import RuntimeConfig

    root, stats = staged
    config = questions.QuestionsConfig(pack=str(root / "pack.yaml"), cache_dir=str(root / "embedding_cache"))
    two = questions.run_stage(root / "claims", tmp_path / "q2", config, RuntimeConfig(tasks=2, workers=1))
    rows = lambda folder: [a.model_dump() for a in io.read_records(folder, questions.Assignment)]
    assert rows(tmp_path / "q2") == rows(root / "questions")
    assert two["assignments_per_question"] == stats["assignments_per_question"] and two["kept"] == stats["kept"]


def test_questions_stage_writes_assignments_and_stats(staged):
    root, stats = staged
    rows = {(a.article_uid, a.question_id) for a in io.read_records(root / "questions", questions.Assignment)}
    assert {("A1", "statin_bp"), ("A2", "statin_bp"), ("A3", "statin_bp"), ("A1", "statin_ldl"),
            ("A2", "statin_ldl")} <= rows
    assert not any(uid == "A4" for uid, _ in rows)
    assert stats["seen"] == 8 and stats["dropped_no_question"] == 8 - stats["kept"]
    assert stats["assignments_per_question"]["unused"] == 0 and stats["questions_without_claims"] == 2
    # a question whose intervention and outcome cannot be read is kept, answers nothing, and is counted
    assert stats["assignments_per_question"]["vague"] == 0 and stats["questions_unread"] == 1
    assert all(a.why and 0 < a.score <= 1 for a in io.read_records(root / "questions", questions.Assignment))
    again = questions.run_stage(root / "claims", root / "questions", questions.QuestionsConfig(
        pack=str(root / "pack.yaml"), cache_dir=str(root / "embedding_cache")))
    assert again == stats  # current: not redone


@pytest.fixture(scope="module")
def mined(staged):
    root, _ = staged
    return root, mine.run_stage(root / "claims", root / "pairs", mine.MineConfig(
        questions_dir=str(root / "questions"), cache_dir=str(root / "embedding_cache")))


def test_mining_forms_pairs_within_questions_across_articles_and_reuses_the_embeddings(mined, staged):
    root, stats = mined
    pairs = list(io.read_records(root / "pairs", CandidatePair))
    assignments = {}
    for a in io.read_records(root / "questions", questions.Assignment):
        assignments.setdefault(a.claim_id, set()).add(a.question_id)
    within = [p for p in pairs if p.question is not None]
    assert stats["pairs_by_origin"]["within_question"] >= 4 and within
    for p in within:
        assert p.claim_a.article_uid != p.claim_b.article_uid
        assert p.question.question_id in assignments[p.claim_a.claim_id] & assignments[p.claim_b.claim_id]
    for p in pairs:  # an open pair carries a question only when both claims answer it
        shared = assignments.get(p.claim_a.claim_id, set()) & assignments.get(p.claim_b.claim_id, set())
        assert (p.question is not None) == bool(shared)
    bp = {frozenset((p.claim_a.article_uid, p.claim_b.article_uid)) for p in within
          if p.question.question_id == "statin_bp"}
    assert bp == {frozenset(x) for x in (("A1", "A2"), ("A1", "A3"), ("A2", "A3"))}
    assert sum(stats["pairs_by_question"].values()) == len(within)
    # the questions stage embedded the claims that name a question's intervention and outcome; open mining
    # embeds the rest, and none twice
    _, q_stats = staged
    assert 0 < stats["embedding_cache"]["embedded"] < stats["claims"]
    assert q_stats["claims_embedded"] + stats["embedding_cache"]["embedded"] == len(
        {c.sentence for c in _claims()} | {"Do statins reduce blood pressure?", "Do statins lower LDL cholesterol?",
                                          "Does metformin reduce HbA1c?", "What is the best treatment?"})


def test_without_open_fill_every_pair_answers_a_common_question(mined, tmp_path):
    root, stats = mined
    assert stats["pairs_by_origin"]["open"] > 0  # the default fills the cap by open mining
    cache = tmp_path / "embedding_cache"  # a cache holding only what the questions stage embeds
    questions.run_stage(root / "claims", tmp_path / "questions", questions.QuestionsConfig(
        pack=str(root / "pack.yaml"), cache_dir=str(cache)))
    only = mine.run_stage(root / "claims", tmp_path / "pairs", mine.MineConfig(
        questions_dir=str(tmp_path / "questions"), cache_dir=str(cache), open_fill=False))
    assert only["embedding_cache"]["embedded"] == 0  # only claims that answer a question are paired
    pairs = list(io.read_records(tmp_path / "pairs", CandidatePair))
    assert pairs and all(p.question is not None for p in pairs)
    assert set(only["pairs_by_origin"]) == {"within_question"}
    assert only["pairs_by_origin"]["within_question"] == stats["pairs_by_origin"]["within_question"]
    with pytest.raises(ValueError, match="open_fill: false .* needs a question pack"):
        mine.run_stage(root / "claims", tmp_path / "none", mine.MineConfig(open_fill=False))


def test_question_pairs_caps_each_question_and_never_pairs_one_article():
    claims = _claims()
    rng = np.random.default_rng(0)
    emb = rng.normal(size=(len(claims), 8)).astype(np.float32)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    assigned = {c.claim_id: {"q": 0.5} for c in claims}  # every claim answers q
    rows, dropped = mine.question_pairs(claims, emb, assigned, mine.MineConfig(cap_per_question=5))
    assert len(rows) == 5 and all(claims[i].article_uid != claims[j].article_uid for _, _, i, j, _, _ in rows)
    combined = [-r[0] for r in rows]
    assert combined == sorted(combined, reverse=True)
    cross = sum(a.article_uid != b.article_uid for k, a in enumerate(claims) for b in claims[k + 1:])
    assert dropped["over_question_cap"] == cross - 5


def test_question_pairs_hold_each_claim_in_at_most_max_pairs_per_claim():
    from collections import Counter

    claims = _claims()
    rng = np.random.default_rng(0)
    emb = rng.normal(size=(len(claims), 8)).astype(np.float32)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    assigned = {c.claim_id: {"q": 0.5} for c in claims}
    free, _ = mine.question_pairs(claims, emb, assigned, mine.MineConfig(cap_per_question=1000))
    limited, dropped = mine.question_pairs(claims, emb, assigned,
                                           mine.MineConfig(cap_per_question=1000, max_pairs_per_claim=2))
    per_claim = Counter(k for row in limited for k in row[2:4])
    assert max(Counter(k for row in free for k in row[2:4]).values()) > 2 and max(per_claim.values()) == 2
    # taken in rank order: the limited rows keep the order of the free ranking
    assert [r[1] for r in limited] == [r[1] for r in free if r[1] in {x[1] for x in limited}]
    assert dropped["over_question_cap"] == sum(a.article_uid != b.article_uid
                                               for k, a in enumerate(claims) for b in claims[k + 1:]) - len(limited)


def test_question_pairs_give_every_two_articles_a_row_before_any_two_a_second():
    claims = _claims()
    rng = np.random.default_rng(0)
    emb = rng.normal(size=(len(claims), 8)).astype(np.float32)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    assigned = {c.claim_id: {"q": 0.5} for c in claims}  # 4 articles: 6 article pairs, 24 claim pairs

    def article_pairs(rows):
        return [frozenset((claims[i].article_uid, claims[j].article_uid)) for _, _, i, j, _, _ in rows]

    free, _ = mine.question_pairs(claims, emb, assigned, mine.MineConfig(cap_per_question=1000))
    assert len(set(article_pairs(free[:6]))) < 6  # by score alone, the best six repeat an article pair
    six, _ = mine.question_pairs(claims, emb, assigned, mine.MineConfig(cap_per_question=6))
    assert len(set(article_pairs(six))) == 6
    best = {}  # each article pair's row is its best-scored one
    for row, key in zip(free, article_pairs(free), strict=True):
        best.setdefault(key, row[1])
    assert {r[1] for r in six} == set(best.values())
    seven, _ = mine.question_pairs(claims, emb, assigned, mine.MineConfig(cap_per_question=7))
    extra = next(r for r in free if r[1] not in set(best.values()))  # then the best remaining row
    assert {r[1] for r in seven} == set(best.values()) | {extra[1]}
    assert [r[1] for r in seven] == [r[1] for r in free if r[1] in {x[1] for x in seven}]  # in rank order


def test_release_rows_carry_the_question(mined, tmp_path):
    """A pair with a question and one without, through Example.from_pair into a release read by load_dataset."""
    from datasets import load_dataset
    from release_factory import make_example

    from biodivergence_dataset import card, release
    from biodivergence_dataset.records import Example

    root, _ = mined
    pairs = list(io.read_records(root / "pairs", CandidatePair))
    with_q = next(p for p in pairs if p.question is not None)
    labels = {k: v for k, v in make_example("pmid:1", "pmid:2").model_dump().items()
              if k not in Example.model_fields or k in ("conflict_type", "divergence_axes", "dominant_confounder",
                                                       "reconciliation", "annotator_id", "annotator_kind",
                                                       "confidence", "prompt_version")}
    asked = Example.from_pair(with_q, **labels)
    plain = make_example("pmid:3", "pmid:4")
    assert (asked.question_id, asked.question) == (with_q.question.question_id, with_q.question.text)
    for config in ("primary", "pairlevel"):
        release.write_config(tmp_path, config, {"train": [asked], "validation": [plain], "test": [plain]})
    card.write_card(tmp_path)
    ds = load_dataset(str(tmp_path), "pairlevel")
    assert ds["train"][0]["question_id"] == with_q.question.question_id
    assert ds["train"][0]["question"] == with_q.question.text
    assert (ds["test"][0]["question_id"], ds["test"][0]["question"]) == ("", "")
