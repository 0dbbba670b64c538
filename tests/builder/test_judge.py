"""The learned judge: trained on every expert-labelled source tagged by source (tiny CPU schedule), saved with
save_pretrained, calibrated, loaded as ``judge:PATH`` into a panel; its leave-one-source-out folds are what
goldcheck scores, and a fold never holds a pair of the source it is scored on."""

from __future__ import annotations

import argparse
import csv
import json
import math
import os

import pytest
from llm_server import SCIFACT

from biodivergence_dataset import ontology
from builder import goldsources
from builder.annotators import goldcheck as gc
from builder.annotators import judge, make_local
from builder.annotators.judge import JUDGE_CONFIG, JudgeAnnotator, judge_folder
from builder.annotators.judge_data import TRAINING_ONLY, TRAINING_SOURCES, fold_sources, load_source, training_pairs
from builder.goldsources import make_claim, make_pair

DATA = SCIFACT.parent
TINY_SOURCES = ("scifact", "pubmedqa", "nli4ct")


def _train_cli(out, *extra: str) -> None:
    parser = argparse.ArgumentParser()
    judge.add_arguments(parser)
    assert judge.run(parser.parse_args(["train", "--out", str(out), "--data-dir", str(DATA), "--max-per-source", "12",
                                        "--batch-size", "8", "--max-length", "48", *extra])) == 0


@pytest.fixture(scope="module")
def judge_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("judge")
    _train_cli(root, "--loso", *(f"--source={s}" for s in TINY_SOURCES))
    return root


@pytest.fixture(scope="module")
def by_source():
    return {s: load_source(s, DATA) for s in TRAINING_SOURCES}


def _find(pairs, text_a, text_b_part=""):
    return [p for p in pairs if p.text_a == text_a and text_b_part in p.text_b]


def test_scifact_claims_meet_their_rationales_support_or_contradict(by_source):
    pairs = by_source["scifact"]
    assert len(pairs) > len(goldsources.load_gold("scifact", DATA)) and {p.source for p in pairs} == {"scifact"}
    rows = [json.loads(line) for name in ("claims_train.jsonl", "claims_dev.jsonl")
            for line in (SCIFACT / name).read_text(encoding="utf-8").splitlines()]
    claims = {" ".join(r["claim"].split()) for r in rows}
    for label, conflict in (("CONTRADICT", True), ("SUPPORT", False)):
        row = next(r for r in rows if r["evidence"] and all(e["label"] == label for ev in r["evidence"].values()
                                                            for e in ev))
        rationales = [p for p in _find(pairs, row["claim"]) if p.text_b not in claims]  # not the claim pairs
        assert len(rationales) == sum(len(ev) for ev in row["evidence"].values())
        assert {p.conflict for p in rationales} == {conflict} and all(p.text_b for p in rationales)


def test_healthver_claims_meet_their_evidence_and_neutral_is_left_out(by_source):
    pairs = by_source["healthver"]
    with open(DATA / "healthver" / "healthver_dev.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for label, conflict in (("Refutes", True), ("Supports", False)):
        row = next(r for r in rows if r["label"] == label)
        assert [p.conflict for p in _find(pairs, row["claim"], row["evidence"])] == [conflict]
    neutral = next(r for r in rows if r["label"] == "Neutral")
    assert not _find(pairs, neutral["claim"], neutral["evidence"])


def test_nli4ct_statements_meet_the_trial_lines_they_are_checked_against(by_source):
    pairs = by_source["nli4ct"]
    root = DATA / "nli4ct" / "Complete_dataset"
    items = list(json.loads((root / "dev.json").read_text(encoding="utf-8")).values())
    for label, conflict in (("Contradiction", True), ("Entailment", False)):
        item = next(i for i in items if i["Label"] == label and i.get("Secondary_id"))
        report = json.loads((root / "CT json" / f"{item['Secondary_id']}.json").read_text(encoding="utf-8"))
        line = " ".join(report[item["Section_id"]][item["Secondary_evidence_index"][0]].split())
        found = _find(pairs, item["Statement"], line)
        assert [p.conflict for p in found] == [conflict] and found[0].text_b.startswith("Primary trial: ")
        assert " Secondary trial: " in found[0].text_b


def test_citation_integrity_citing_sentences_meet_the_cited_evidence(by_source):
    pairs = by_source["citation_integrity"]
    folder = DATA / "citation_integrity"
    corpus = {r["doc_id"]: r["abstract"] for r in map(json.loads, (folder / "corpus.jsonl").open(encoding="utf-8"))}
    claims = [json.loads(line) for line in (folder / "claims_dev.jsonl").open(encoding="utf-8")]
    for label, conflict in (("NOT_ACCURATE", True), ("ACCURATE", False)):
        claim = next(c for c in claims if "<|" in c["claim"] and {e["label"] for ev in c["evidence"].values()
                                                                  for e in ev} == {label})
        doc, ev = next(iter(claim["evidence"].items()))
        found = [p for p in pairs if corpus[int(doc)][ev[0]["sentences"][0]] in p.text_b
                 and p.text_a.split()[:4] == claim["claim"].split()[:4]]
        assert [p.conflict for p in found] == [conflict] and "<|" not in found[0].text_a
    nei = next(c for c in claims if not c["evidence"])  # NEI claims cite no evidence: no pair
    assert not [p for p in pairs if p.text_a.split()[:6] == nei["claim"].split()[:6]]


def test_scored_sources_start_with_their_gold_pairs(by_source):
    for source in (s for s in goldsources.GOLD_SOURCES if s not in goldsources.ITEMS_OF):  # sets made of another's items aside
        gold = goldsources.load_gold(source, DATA)
        head = by_source[source][: len(gold)]
        assert [(p.text_a, p.text_b, p.conflict) for p in head] == \
            [(g.pair.claim_a.sentence, g.pair.claim_b.sentence, g.conflict) for g in gold]


def test_loso_folds_never_hold_the_held_out_source(by_source):
    for held in (s for s in goldsources.GOLD_SOURCES if s not in goldsources.ITEMS_OF):
        sources = fold_sources((), held)
        assert held not in sources and set(TRAINING_ONLY) <= set(sources)
        fold = training_pairs(DATA, sources)
        assert {p.source for p in fold} == set(sources)
        gold_texts = {t for g in goldsources.load_gold(held, DATA) for t in (g.pair.claim_a.sentence, g.pair.claim_b.sentence)}
        held_texts = gold_texts | {t for p in by_source[held] for t in (p.text_a, p.text_b)}
        assert not held_texts & {t for p in fold for t in (p.text_a, p.text_b)}


def test_the_cap_is_per_source_and_seeded():
    capped = training_pairs(DATA, ["pubmedqa", "nli4ct"], max_per_source=30, seed=1)
    assert [p.source for p in capped].count("pubmedqa") == 30 and len(capped) == 60
    assert capped == training_pairs(DATA, ["pubmedqa", "nli4ct"], max_per_source=30, seed=1)
    assert capped != training_pairs(DATA, ["pubmedqa", "nli4ct"], max_per_source=30, seed=2)


def test_a_trained_judge_is_a_saved_calibrated_cross_encoder(judge_dir):
    settings = json.loads((judge_dir / JUDGE_CONFIG).read_text())
    assert settings["trained_on"] == list(TINY_SOURCES) and settings["train_pairs"] > 0
    assert settings["pairs_per_source"] == {s: 12 for s in TINY_SOURCES}
    assert settings["train_pairs"] + settings["calibration_pairs"] == 36 and settings["train_seconds"] > 0
    assert settings["calibration_pairs"] > 0 and set(settings["calibration"]) == {"a", "b"}
    assert (judge_dir / "config.json").exists() and (judge_dir / "tokenizer_config.json").exists()
    assert all(os.stat(f).st_mode & 0o044 for f in judge_dir.iterdir() if f.is_file())  # not 0600
    # --loso: one fold per scored source (never for the training-only nli4ct), each with the others
    assert sorted(f.name for f in judge_dir.iterdir() if f.is_dir()) == ["heldout-pubmedqa", "heldout-scifact"]
    fold = json.loads((judge_dir / "heldout-scifact" / JUDGE_CONFIG).read_text())
    assert fold["trained_on"] == ["pubmedqa", "nli4ct"] and set(fold["pairs_per_source"]) == {"pubmedqa", "nli4ct"}


def test_judge_labels_pairs_and_defers_the_type_to_the_frames(judge_dir):
    judge = make_local(f"judge:{judge_dir}")
    assert isinstance(judge, JudgeAnnotator) and judge.trained_on == set(TINY_SOURCES)
    p = make_pair(make_claim("doc:a", "Zinc reduced diarrhoea in children.", ontology.DOMAIN_NAMES[0], "t"),
                  make_claim("doc:b", "Zinc did not reduce diarrhoea in adults.", ontology.DOMAIN_NAMES[0], "t"))
    labels = judge.annotate_many([p, p])
    (prob,) = judge.probabilities([p])
    assert labels[0] == labels[1] and labels[0].notes == f"judge p={prob:.3f}"
    # below one half the judge says no conflict; above, the frames' boundary rules give the type (children vs
    # adults: contextual), and the confidence is the probability of the label given
    expected = (ontology.NO_CONFLICT, round(1 - prob, 4)) if prob < 0.5 else (ontology.CONTEXTUAL, round(prob, 4))
    assert (labels[0].conflict_type, labels[0].confidence) == expected
    # Platt scaling: a margin of zero maps to the sigmoid of the fitted intercept alone
    assert judge.probability(0.0) == pytest.approx(1 / (1 + math.exp(-judge.settings.calibration["b"])))


def test_goldcheck_scores_each_source_with_the_fold_that_never_saw_it(judge_dir):
    assert judge_folder(judge_dir, "scifact") == judge_dir / "heldout-scifact"
    assert judge_folder(judge_dir, "healthver") == judge_dir  # no fold: the main judge
    result = gc.goldcheck([f"judge:{judge_dir}"], DATA, ["scifact"], n_boot=20)
    cell = result["scores"][f"judge:{judge_dir}"]["scifact"]
    assert not cell["in_fold"] and cell["pairs"] == 519
    # a judge is never scored on a source it was trained on: the scifact fold holds pubmedqa
    fold = judge_dir / "heldout-scifact"
    result = gc.goldcheck([f"judge:{fold}"], DATA, ["pubmedqa"], n_boot=20)
    assert result["scores"][f"judge:{fold}"]["pubmedqa"] == {"in_fold": True, "pairs": 890}


def test_missing_judge_folder_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a judge folder"):
        make_local(f"judge:{tmp_path}")
