"""The baseline suite: each baseline's behaviour on hand-checked rows, and the CLI end to end on real claims."""

import json
import os
from collections import Counter

import numpy as np
import pytest
import torch
from trainer_release import write_scifact_release
from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

from biodivergence_cli.main import main
from biodivergence_dataset import ontology, release, templating
from trainer import metric
from trainer.baselines import frequency, reconciliation, spans, transfer
from trainer.baselines.baseline_system import clauses
from trainer.baselines.lexical import CUE_AXES, per_axis_pipeline, slot_features
from trainer.baselines.suite import RESULTS_JSON, RESULTS_MD, CachedEncoder, standard_systems
from trainer.encoders import packaged_minilm
from trainer.predict import read_jsonl, reference_record

SIZES = {"train": 40, "test": 12}


@pytest.fixture(scope="module", autouse=True)
def offline():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")


def row(a: str, b: str, conflict: str = ontology.CONTEXTUAL, axes=("geography",), confounder="geography", **extra):
    base = {
        "pair_id": f"{a[:8]}|{b[:8]}", "domain": "amr", "claim_a_id": "ca", "claim_b_id": "cb",
        "claim_a_text": a, "claim_b_text": b, "claim_a_type": "efficacy", "claim_b_type": "efficacy",
        "article_uid_a": "pmid:1", "article_uid_b": "pmid:2", "abstract_a": "", "abstract_b": "",
        "pub_year_a": 2010, "pub_year_b": 2015, "similarity": 0.5, "disagreement": 0.5, "entity_overlap": 0.5,
        "type_compatibility": 1.0, "year_penalty": 0.0, "combined_score": 0.5,
        "conflict_type": conflict, "divergence_axes": list(axes), "dominant_confounder": confounder,
    }
    return {**base, **extra}


GREEK = "Colistin remained effective against Acinetobacter in Greek ICUs"
THAI = "Colistin failed against Acinetobacter in Thai surveillance isolates"


def test_majority_and_stratified_random_follow_the_training_labels():
    train = [row(GREEK, THAI)] * 3 + [row(GREEK, THAI, ontology.NO_CONFLICT, (), None)] * 7
    assert frequency.majority(train, [row(GREEK, THAI)] * 2, {}) == [{"conflict_type": ontology.NO_CONFLICT}] * 2
    draws = frequency.stratified_random(seed=3)(train, [row(GREEK, THAI)] * 2000, {})
    assert draws == frequency.stratified_random(seed=3)(train, [row(GREEK, THAI)] * 2000, {})
    share = Counter(d["conflict_type"] for d in draws)[ontology.CONTEXTUAL] / 2000
    assert share == pytest.approx(0.3, abs=0.04)


def test_most_frequent_axes_predicts_the_mean_number_of_top_axes():
    train = [row(GREEK, THAI, axes=("geography", "clinical_setting"), confounder="clinical_setting")] * 3 + [
        row(GREEK, THAI, axes=("geography", "study_design", "population_cohort"), confounder="geography")]
    (pred,) = frequency.most_frequent_axes(train, [row(GREEK, THAI)], {})
    assert pred == {"divergence_axes": ["geography", "clinical_setting"], "dominant_confounder": "clinical_setting"}


def test_slot_features_flag_differing_context_cues():
    a = "Colistin remained effective against Acinetobacter in ICU patients in Greece"
    b = "Colistin failed against Acinetobacter in Thailand"
    features = slot_features(row(a, b))
    block = {axis: features[4 * i:4 * i + 3] for i, axis in enumerate(CUE_AXES)}
    assert block["geography"] == [1.0, 1.0, 1.0]  # both name a country, different ones
    assert block["clinical_setting"] == [1.0, 0.0, 1.0]  # ICU in claim a only
    assert block["organism_strain_lineage"] == [1.0, 1.0, 0.0]  # same organism
    assert len(features) == len(slot_features(row(b, a)))


def test_per_axis_pipeline_picks_the_confounder_among_predicted_axes():
    icu = "Mortality fell in ICU patients treated with colistin"
    outpatients = "Mortality fell in outpatients treated with colistin"
    plain = "Mortality fell in patients treated with colistin"
    train = ([row(icu, plain, axes=("clinical_setting",), confounder="clinical_setting")] * 6
             + [row(plain, plain, ontology.NO_CONFLICT, (), None)] * 6)
    preds = per_axis_pipeline()(train, [row(outpatients, plain), row(plain, plain)], {})
    assert preds[0] == {"divergence_axes": ["clinical_setting"], "dominant_confounder": "clinical_setting"}
    assert preds[1] == {"divergence_axes": [], "dominant_confounder": ""}


def test_template_names_every_structured_slot_by_its_title():
    text = reconciliation.template_text(ontology.CONTEXTUAL, ["geography", "clinical_setting"], "geography")
    assert text.startswith("Contextual contradiction:") and "clinical setting" in text
    scoring = metric.scoring_module()
    assert scoring.slot_overlap(text, {ontology.CONTEXTUAL, "geography", "clinical_setting"}) == 1.0


def test_constant_template_predicts_the_most_frequent_training_reconciliation():
    train = [row(GREEK, THAI, reconciliation=t) for t in ("Geography differs.", "", "Dose differs.", "Geography differs.")]
    predicted = reconciliation.constant_template(train, [row(THAI, GREEK)] * 3, {})
    assert predicted == [{"reconciliation": "Geography differs."}] * 3
    assert reconciliation.constant_template([row(GREEK, THAI, reconciliation="")], [row(THAI, GREEK)], {}) == [
        {"reconciliation": ""}]


def test_extractive_reconciliation_picks_context_bearing_sentences():
    abstract = "We studied colistin. Isolates came from ICUs in Greece during 2010. Results were mixed."
    (pred,) = reconciliation.extractive([], [row(GREEK, THAI, abstract_a=abstract)], {})
    assert pred["reconciliation"] == f"Isolates came from ICUs in Greece during 2010. {THAI}"


def test_span_heuristic_strips_the_reporting_frame_with_exact_offsets():
    claim = "Our results suggest that colistin remains active in Greek ICUs."
    (pred,) = spans.heuristic([], [row(claim, THAI)], {})
    a, b = pred["evidence_spans"]
    assert a["text"] == "colistin remains active in Greek ICUs" and claim[a["start"]:a["end"]] == a["text"]
    assert a["role"] == "claim_a" and a["article_uid"] == "pmid:1"
    assert b["text"] == THAI and b["role"] == "claim_b"


def test_retrievers_return_the_clause_matching_the_other_claim():
    a = "In Greek ICUs, colistin remained effective against Acinetobacter"
    b = "Colistin failed against Acinetobacter, according to Thai surveillance"
    assert [a[s:e] for s, e in clauses(a)] == ["In Greek ICUs", "colistin remained effective against Acinetobacter"]
    rows = [row(a, b), row("Mortality was 20%, whereas survival improved", "Survival improved with colistin")]
    for predict in (spans.bm25, spans.dense()):
        first, second = predict([], rows, {})
        texts = [s["text"] for s in first["evidence_spans"]]
        assert texts == ["colistin remained effective against Acinetobacter", "Colistin failed against Acinetobacter"]
        assert second["evidence_spans"][0]["text"] == "whereas survival improved"


def test_nli_transfer_maps_the_cross_encoders_own_labels(tmp_path):
    torch.manual_seed(0)
    config = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=64, num_labels=3,
                        id2label={0: "CONTRADICTION", 1: "ENTAILMENT", 2: "NEUTRAL"})
    model = BertForSequenceClassification(config)
    with torch.no_grad():  # make the "model" call everything a contradiction
        model.classifier.bias.copy_(torch.tensor([50.0, 0.0, 0.0]))
    model.save_pretrained(tmp_path)
    AutoTokenizer.from_pretrained(packaged_minilm()).save_pretrained(tmp_path)
    preds = transfer.nli_transfer(str(tmp_path))([], [row(GREEK, THAI), row(THAI, GREEK)], {})
    assert preds == [{"conflict_type": "direct_contradiction"}] * 2
    assert transfer.nli_label_map({0: "entailment", 1: "neutral", 2: "contradiction"})[2] == "direct_contradiction"
    with pytest.raises(ValueError, match="no 'contradiction'"):
        transfer.nli_label_map({0: "LABEL_0", 1: "LABEL_1"})


def test_candidate_pair_from_a_release_row_matches_what_the_annotator_saw():
    from biodivergence_dataset.records import pair_id_for

    r = row(GREEK, THAI, abstract_a="Abstract A.", pair_id=pair_id_for("ca", "cb"))
    pair = transfer.candidate_pair(r)
    assert pair.claim_a.sentence == GREEK and pair.claim_b.pub_year == 2015 and pair.abstract_a == "Abstract A."
    assert pair.scores.combined_score == 0.5


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory):
    rel = write_scifact_release(tmp_path_factory.mktemp("release"), SIZES)
    out = tmp_path_factory.mktemp("baselines")
    extra = out / "reference.jsonl"
    rows = [r for _, r in release.iter_rows(rel, "primary", "test")]
    extra.write_text("".join(json.dumps({"pair_id": r["pair_id"], "conflict_type": ontology.CONTEXTUAL}) + "\n"
                             for r in reversed(rows)))
    assert main(["baselines", "--release", str(rel), "--out", str(out), "--add", f"Reference model={extra}"]) == 0
    return rel, out, rows


def test_suite_writes_scored_predictions_for_every_baseline(suite_run):
    _, out, rows = suite_run
    results = json.loads((out / RESULTS_JSON).read_text())
    slugs = [s["slug"] for s in results["systems"]]
    assert slugs == [s.slug for s in standard_systems()] + ["reference-model"]
    assert results["n"] == SIZES["test"] and results["train_size"] == SIZES["train"]
    references = [reference_record(r) for r in rows]
    for entry in results["systems"][:-1]:
        predictions = read_jsonl(out / entry["predictions"])
        assert [p["pair_id"] for p in predictions] == [r["pair_id"] for r in rows]
        expected = metric.score([{k: v for k, v in p.items() if k != "pair_id"} for p in predictions], references)
        for key, value in entry["scores"].items():  # None where the metric says undefined
            assert value == expected[key] if value is None else value == pytest.approx(expected[key]), (entry["slug"], key)
    by_slug = {s["slug"]: s for s in results["systems"]}
    assert by_slug["majority"]["tasks"] == ["conflict_type"] and "axes/micro_f1" not in by_slug["majority"]["scores"]
    assert by_slug["template-gold"]["scores"]["reconciliation/slot_overlap"] == pytest.approx(1.0)
    assert by_slug["span-heuristic"]["scores"]["spans/recall"] == pytest.approx(1.0)  # spans are claim substrings
    contextual = sum(r["conflict_type"] == ontology.CONTEXTUAL for r in rows) / len(rows)
    assert by_slug["reference-model"]["scores"]["conflict_type/accuracy"] == pytest.approx(contextual)
    # the constant-template floor of the generative scores, and how templated the references are
    floor = by_slug["constant-template"]
    assert floor["family"] == "floor" and floor["tasks"] == ["reconciliation"]
    texts = {p["reconciliation"] for p in read_jsonl(out / floor["predictions"])}
    assert len(texts) == 1 and texts.pop().strip()
    assert all(k in floor["scores"] for k in ("reconciliation/rouge_l", "reconciliation/bleu", "reconciliation/semsim"))
    assert results["reference_reconciliations"] == templating.reconciliation_templating(r["reconciliation"] for r in rows)


def test_suite_markdown_has_the_paper_tables(suite_run):
    text = (suite_run[1] / RESULTS_MD).read_text()
    for title in ("Table 4", "Table 5", "Table 7", "Table 8"):
        assert title in text
    assert "| Majority class | 12 |" in text and "| Reference model | 12 |" in text
    scores = next(s for s in json.loads((suite_run[1] / RESULTS_JSON).read_text())["systems"]
                  if s["slug"] == "constant-template")["scores"]
    assert "| Constant template (most frequent training reconciliation; floor) | 12 |" in text
    assert (f"Floor: the constant template (one training text for every row, reading nothing of the pair) scores "
            f"ROUGE-L {scores['reconciliation/rouge_l']:.4f}, BLEU {scores['reconciliation/bleu']:.4f}, "
            f"SemSim {scores['reconciliation/semsim']:.4f}") in text
    # the SciFact fixture's references come from one template per label: 2 distinct texts over 12 rows
    assert "The evaluated references hold 2 distinct reconciliations over 12 rows: they are templated" in text


def test_an_interrupted_suite_keeps_finished_systems_and_a_rerun_skips_them(suite_run, tmp_path, monkeypatch, capsys):
    from trainer.baselines import suite
    from trainer.baselines.baseline_system import System

    rel = suite_run[0]
    calls = Counter()

    def counted(system, interrupt=False):
        def predict(train, evaluated, previous):
            calls[system.slug] += 1
            if interrupt:
                raise KeyboardInterrupt
            return system.predict(train, evaluated, previous)
        return System(system.slug, system.name, system.family, system.tasks, predict, system.needs)

    by_slug = {s.slug: s for s in standard_systems()}
    chosen = ["majority", "lexical-gbt", "per-axis-pipeline", "template-predicted"]
    out = tmp_path / "out"
    argv = ["baselines", "--release", str(rel), "--out", str(out)]
    monkeypatch.setattr(suite, "standard_systems", lambda seed, dense: [
        counted(by_slug[slug], interrupt=slug == "template-predicted") for slug in chosen])
    assert main(argv) == 130
    assert "finished systems are kept" in capsys.readouterr().err
    kept = json.loads((out / RESULTS_JSON).read_text())
    assert kept["complete"] is False and [s["slug"] for s in kept["systems"]] == chosen[:3]
    assert not (out / RESULTS_MD).exists()

    monkeypatch.setattr(suite, "standard_systems", lambda seed, dense: [counted(by_slug[slug]) for slug in chosen])
    assert main(argv) == 0
    assert calls == {"majority": 1, "lexical-gbt": 1, "per-axis-pipeline": 1, "template-predicted": 2}
    results = json.loads((out / RESULTS_JSON).read_text())
    assert results["complete"] is True and [s["slug"] for s in results["systems"]] == chosen
    assert results["systems"][:3] == kept["systems"]
    fresh = tmp_path / "fresh"
    assert main(["baselines", "--release", str(rel), "--out", str(fresh)]) == 0  # the template reads reloaded predictions
    again = {s["slug"]: s["scores"] for s in json.loads((fresh / RESULTS_JSON).read_text())["systems"]}
    assert again == {s["slug"]: s["scores"] for s in results["systems"]}
    assert "baselines: template-predicted" in capsys.readouterr().err  # the progress bar names the system
    assert main([*argv, "--seed", "7"]) == 0  # other inputs: nothing is reused
    assert calls["majority"] == 3  # first run, the fresh folder, the other seed


def test_semsim_embeddings_are_computed_once_per_text():
    class Counting:
        def __init__(self):
            self.seen = []

        def encode(self, texts, **kwargs):
            self.seen += list(texts)
            return np.array([[len(t), kwargs["scale"]] for t in texts], dtype=float)

    model = Counting()
    cached = CachedEncoder(model)
    first = cached.encode(["a", "bb", "a"], scale=2)
    second = cached.encode(["bb", "ccc"], scale=2)
    assert model.seen == ["a", "bb", "ccc"]
    assert first.tolist() == [[1, 2], [2, 2], [1, 2]] and second.tolist() == [[2, 2], [3, 2]]
