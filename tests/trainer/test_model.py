"""The reference multi-task model on a tiny randomly initialised BERT (no download)."""

import ast
import json
import logging
from pathlib import Path

import numpy as np
import pytest
import torch
from transformers import AutoModel, AutoTokenizer, BertConfig, pipeline

from biodivergence_dataset import ontology
from trainer import encoders, modeling
from trainer.data import PairCollator, axis_pos_weight, class_weights, encode_rows, label_ids
from trainer.modeling import MultiTaskConflictConfig, MultiTaskConflictModel, masked_cross_entropy
from trainer.pair_features import DISAGREEMENT, FEATURE_NAMES, FEATURES, METADATA, feature_mask, feature_vector
from trainer.predict import decode

N_AXES = len(ontology.AXIS_NAMES)
TINY_BERT = BertConfig(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                       intermediate_size=64, max_position_embeddings=64)


def tiny_model(seed: int = 0, **kwargs) -> MultiTaskConflictModel:
    torch.manual_seed(seed)
    config = MultiTaskConflictConfig(encoder_config=TINY_BERT.to_dict(), projection_dim=16, type_embed_dim=4,
                                     num_cross_attention_heads=2, **kwargs)
    return MultiTaskConflictModel(config)


def batch(n: int = 4, length: int = 12, seed: int = 1) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    segments = torch.zeros(n, length, dtype=torch.long)
    segments[:, 1:6], segments[:, 7:length - 1] = 1, 2
    axis_labels = torch.zeros(n, N_AXES)
    axis_labels[0, [1, 6]] = 1.0
    axis_labels[1, 3] = 1.0
    return {
        "input_ids": torch.randint(1, 64, (n, length), generator=g),
        "attention_mask": torch.ones(n, length, dtype=torch.long),
        "pair_segments": segments,
        "features": torch.rand(n, len(FEATURE_NAMES), generator=g),
        "claim_types": torch.randint(0, len(ontology.CLAIM_TYPE_NAMES), (n, 2), generator=g),
        "labels": torch.tensor([2, 2, 0, 1])[:n],
        "axis_labels": axis_labels,
        "confounder_labels": torch.tensor([6, 3, -100, -100])[:n],
    }


def inputs_only(b: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {k: v for k, v in b.items() if k not in ("labels", "axis_labels", "confounder_labels")}


def test_forward_backward_reaches_every_module():
    model = tiny_model()
    out = model(**batch())
    assert out.conflict_logits.shape == (4, len(ontology.CONFLICT_TYPE_NAMES))
    assert out.axis_logits.shape == out.confounder_logits.shape == (4, N_AXES)
    assert torch.isfinite(out.loss)
    out.loss.backward()
    for name in ("encoder.embeddings.word_embeddings.weight", "project.0.weight", "cross_attention.in_proj_weight",
                 "type_embedding.weight", "fuse.0.weight", "conflict_head.weight", "axis_head.weight",
                 "confounder_head.weight"):
        grad = dict(model.named_parameters())[name].grad
        assert grad is not None and grad.abs().sum() > 0, name


def test_loss_is_the_weighted_sum_of_the_three_task_losses():
    model = tiny_model(loss_weight_conflict_type=1.0, loss_weight_axes=1.0, loss_weight_confounder=0.3,
                       class_weights=[1.0, 2.0, 0.5, 1.0, 1.0, 1.0], axis_pos_weight=[3.0] * N_AXES,
                       constraint_mode="none").eval()
    b = batch()
    out = model(**b)
    f = torch.nn.functional
    expected = (
        f.cross_entropy(out.conflict_logits, b["labels"], weight=torch.tensor([1.0, 2.0, 0.5, 1.0, 1.0, 1.0]))
        + f.binary_cross_entropy_with_logits(out.axis_logits, b["axis_labels"], pos_weight=torch.full((N_AXES,), 3.0))
        + 0.3 * f.cross_entropy(out.confounder_logits[:2], b["confounder_labels"][:2])
    )
    torch.testing.assert_close(out.loss, expected)


def test_confounder_loss_ignores_absent_labels():
    logits = torch.randn(4, N_AXES, requires_grad=True)
    targets = torch.tensor([5, -100, 2, -100])
    torch.testing.assert_close(masked_cross_entropy(logits, targets),
                               torch.nn.functional.cross_entropy(logits[[0, 2]], targets[[0, 2]]))
    none = masked_cross_entropy(logits, torch.full((4,), -100))
    none.backward()
    assert none.item() == 0.0 and logits.grad.abs().sum() == 0


def test_all_absent_confounders_leave_confounder_head_untrained():
    model = tiny_model()
    b = batch()
    b["confounder_labels"] = torch.full((4,), -100)
    out = model(**b)
    out.loss.backward()
    assert torch.isfinite(out.loss)
    assert model.confounder_head.weight.grad.abs().sum() == 0
    reference = tiny_model(loss_weight_confounder=0.0)
    torch.testing.assert_close(out.loss, reference(**b).loss)


def _force_axes(model: MultiTaskConflictModel, present: list[int]) -> None:
    """Make the axis head predict exactly ``present`` for every input."""
    with torch.no_grad():
        model.axis_head.weight.zero_()
        model.axis_head.bias.fill_(-10.0)
        model.axis_head.bias[present] = 10.0


@torch.no_grad()
def test_constraint_none_leaves_confounder_logits_unrestricted():
    model = tiny_model(constraint_mode="none").eval()
    _force_axes(model, [1])
    out = model(**inputs_only(batch()))
    assert (out.confounder_logits > -1e3).all()


@torch.no_grad()
def test_constraint_predicted_axes_restricts_to_predicted_axes():
    model = tiny_model(constraint_mode="predicted_axes").eval()
    _force_axes(model, [1, 9])
    out = model(**inputs_only(batch()))
    assert set(out.confounder_logits.argmax(-1).tolist()) <= {1, 9}
    allowed = torch.zeros(N_AXES, dtype=torch.bool)
    allowed[[1, 9]] = True
    assert (out.confounder_logits[:, ~allowed] <= -1e3).all() and (out.confounder_logits[:, allowed] > -1e3).all()
    _force_axes(model, [])  # nothing predicted: no restriction, and no confounder in the output records
    out = model(**inputs_only(batch()))
    assert (out.confounder_logits > -1e3).all()
    records = decode(out.conflict_logits.numpy(), out.axis_logits.numpy(), out.confounder_logits.numpy(), "predicted_axes")
    assert all(r["divergence_axes"] == [] and r["dominant_confounder"] == "" for r in records)


@torch.no_grad()
def test_constraint_gold_axes_conditions_on_and_restricts_to_gold_axes():
    model = tiny_model(constraint_mode="gold_axes").eval()
    b = batch()
    with pytest.raises(ValueError, match="gold_axes"):
        model(**inputs_only(b))
    out = model(**inputs_only(b), axis_labels=b["axis_labels"])
    assert set(out.confounder_logits[0].argmax().reshape(-1).tolist()) <= {1, 6}
    assert out.confounder_logits[1].argmax().item() == 3
    records = decode(out.conflict_logits.numpy(), out.axis_logits.numpy(), out.confounder_logits.numpy(),
                     "gold_axes", gold_axes=b["axis_labels"].numpy())
    assert records[1]["dominant_confounder"] == ontology.AXIS_NAMES[3]
    assert records[2]["dominant_confounder"] == ""  # no gold axis
    other = b["axis_labels"].clone()
    other[0] = 0.0
    other[0, 11] = 1.0
    changed = model(**inputs_only(b), axis_labels=other)
    assert changed.confounder_logits[0].argmax().item() == 11
    torch.testing.assert_close(changed.conflict_logits, out.conflict_logits)  # only the confounder head sees gold axes


@torch.no_grad()
def test_save_and_load_give_identical_predictions(tmp_path):
    model = tiny_model(constraint_mode="predicted_axes", disabled_feature_groups=[DISAGREEMENT], finding_states=4).eval()
    b = inputs_only(batch())
    model.save_pretrained(tmp_path)
    saved = json.loads((tmp_path / "config.json").read_text())
    assert saved["auto_map"] == {
        "AutoConfig": "modeling.MultiTaskConflictConfig", "AutoModel": "modeling.MultiTaskConflictModel",
        "AutoModelForSequenceClassification": "modeling.MultiTaskConflictForSequenceClassification"}
    assert (tmp_path / "modeling.py").read_text() == Path(modeling.__file__).read_text()
    # here the registered class serves trust_remote_code too; test_train loads the copy in a process without our packages
    remote = AutoModel.from_pretrained(tmp_path, trust_remote_code=True)
    for loaded in (MultiTaskConflictModel.from_pretrained(tmp_path), AutoModel.from_pretrained(tmp_path), remote):
        assert type(loaded).__name__ == "MultiTaskConflictModel"
        loaded.eval()
        assert loaded.config.disabled_feature_groups == [DISAGREEMENT]
        before, after = model(**b), loaded(**b)
        for key in ("conflict_logits", "axis_logits", "confounder_logits", "finding_probs"):
            assert torch.equal(before[key], after[key]), key


@torch.no_grad()
def test_disabled_feature_groups_are_ignored():
    b = inputs_only(batch())
    model = tiny_model(disabled_feature_groups=[METADATA]).eval()
    groups = np.array([g for g, _ in FEATURES.values()])
    scrambled = dict(b, features=b["features"].clone(), claim_types=(b["claim_types"] + 1) % len(ontology.CLAIM_TYPE_NAMES))
    scrambled["features"][:, torch.from_numpy(groups == METADATA)] = 7.0
    torch.testing.assert_close(model(**b).conflict_logits, model(**scrambled).conflict_logits)
    scrambled["features"][:, torch.from_numpy(groups == DISAGREEMENT)] = 7.0
    assert not torch.allclose(model(**b).conflict_logits, model(**scrambled).conflict_logits)


def test_without_cross_attention_the_attention_block_is_unused():
    model = tiny_model(use_cross_attention=False)
    model(**batch()).loss.backward()
    assert model.cross_attention.in_proj_weight.grad is None


def test_single_task_trains_only_the_conflict_head():
    model = tiny_model(tasks=["conflict_type"])
    b = batch()
    out = model(**b)
    out.loss.backward()
    torch.testing.assert_close(out.loss, torch.nn.functional.cross_entropy(out.conflict_logits, b["labels"]))
    assert model.axis_head.weight.grad is None or model.axis_head.weight.grad.abs().sum() == 0


def test_the_modeling_file_is_self_contained_and_its_vocabularies_match_ours():
    """``save_pretrained`` copies trainer/modeling.py next to the weights: it may import only what transformers needs."""
    tree = ast.parse(Path(modeling.__file__).read_text())
    imported = {a.name.partition(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module.partition(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level]  # no relative import
    assert imported <= {"__future__", "dataclasses", "os", "typing", "torch", "transformers", "huggingface_hub"}
    assert modeling.CONFLICT_TYPE_NAMES == ontology.CONFLICT_TYPE_NAMES
    assert modeling.AXIS_NAMES == ontology.AXIS_NAMES
    assert modeling.CLAIM_TYPE_NAMES == ontology.CLAIM_TYPE_NAMES
    assert modeling.DEFAULT_CLAIM_TYPE == ontology.DEFAULT_CLAIM_TYPE
    assert modeling.NO_CONFLICT == ontology.NO_CONFLICT
    assert modeling.FEATURE_GROUPS == {name: group for name, (group, _) in FEATURES.items()}
    assert set(modeling.FEATURE_GROUP_NAMES) == {g for g, _ in FEATURES.values()}


def test_a_config_saved_before_feature_groups_loads_and_a_foreign_feature_set_is_refused():
    from trainer.data import check_features

    config = MultiTaskConflictConfig(encoder_config=TINY_BERT.to_dict())
    old = config.to_dict()
    old.pop("feature_groups")
    restored = MultiTaskConflictConfig.from_dict(old)
    assert restored.feature_groups == [FEATURES[n][0] for n in FEATURE_NAMES]
    check_features(restored)
    other = MultiTaskConflictConfig(encoder_config=TINY_BERT.to_dict(), feature_names=["x", "y"],
                                    feature_groups=["comparison", "metadata"])
    assert MultiTaskConflictModel(other).feature_mask.tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match="comparison features"):
        check_features(other)
    with pytest.raises(ValueError, match="feature_groups must be given"):
        MultiTaskConflictConfig(encoder_config=TINY_BERT.to_dict(), feature_names=["x"])


def test_the_encoder_is_recorded_by_its_hub_name(tmp_path):
    minilm = encoders.packaged_minilm()
    assert encoders.hub_name(str(minilm)) == "sentence-transformers/all-MiniLM-L6-v2"
    assert encoders.hub_name("dmis-lab/biobert-v1.1") == "dmis-lab/biobert-v1.1"
    snapshot = tmp_path / "hub" / "models--microsoft--BiomedNLP-BiomedBERT-base-uncased-abstract" / "snapshots" / "abc"
    snapshot.mkdir(parents=True)
    assert encoders.hub_name(str(snapshot)) == "microsoft/BiomedNLP-BiomedBERT-base-uncased-abstract"
    local = tmp_path / "my-encoder"
    local.mkdir()
    assert encoders.hub_name(str(local)) == ""
    (local / "config.json").write_text(json.dumps({"_name_or_path": "org/encoder"}))
    assert encoders.hub_name(str(local)) == "org/encoder"
    model = MultiTaskConflictModel.from_encoder(str(minilm), hub_name=encoders.hub_name(str(minilm)))
    assert model.config.encoder_name_or_path == "sentence-transformers/all-MiniLM-L6-v2"
    assert model.config.to_dict()["encoder_config"].get("_name_or_path", "") == ""  # not the local folder
    assert MultiTaskConflictModel.from_encoder(str(minilm)).config.encoder_name_or_path == ""  # a path is never kept


def test_the_assembled_mpnet_is_resolved_by_name_and_recorded_by_its_hub_id(tmp_path, monkeypatch):
    """``--encoder all-mpnet-base-v2`` finds the folder joined from the installed part packages (stood in for by a
    folder in the models cache) and a model started there names the Hub id, never the cache path."""
    from builder import embeddings

    folder = tmp_path / embeddings.MPNET
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    monkeypatch.setenv("BIODIVERGENCE_CACHE", str(tmp_path))
    monkeypatch.setattr(embeddings, "packaged_mpnet", lambda: folder)
    assert encoders.resolve_encoder("all-mpnet-base-v2") == str(folder)
    assert encoders.resolve_encoder("sentence-transformers/all-MPNet-base-v2") == str(folder)
    assert encoders.hub_name(str(folder)) == "sentence-transformers/all-mpnet-base-v2"
    monkeypatch.setattr(embeddings, "packaged_mpnet", lambda: None)  # parts not installed: a Hub id, looked up
    with pytest.raises(FileNotFoundError, match="not in the local Hugging Face cache"):
        encoders.resolve_encoder("all-mpnet-base-v2")


def test_config_rejects_bad_settings():
    with pytest.raises(ValueError, match="constraint_mode"):
        MultiTaskConflictConfig(encoder_config=TINY_BERT.to_dict(), constraint_mode="oracle")
    with pytest.raises(ValueError, match="feature groups"):
        MultiTaskConflictConfig(encoder_config=TINY_BERT.to_dict(), disabled_feature_groups=["lexical"])
    with pytest.raises(ValueError, match="class_weights"):
        MultiTaskConflictConfig(encoder_config=TINY_BERT.to_dict(), class_weights=[1.0, 2.0])


# -- inputs: features, tokenisation, collation ------------------------------------------------------------------

ROW = {
    "pair_id": "p1", "domain": "amr",
    "claim_a_text": "Colistin did not reduce mortality in Greek ICU patients.",
    "claim_b_text": "Colistin reduced mortality in Thai outpatients.",
    "claim_a_type": "efficacy", "claim_b_type": "prognostic", "pub_year_a": 2010, "pub_year_b": 2020,
    "similarity": 0.7, "disagreement": 0.9, "entity_overlap": 0.5, "type_compatibility": 1.0,
    "year_penalty": 0.2, "combined_score": 0.8,
    "conflict_type": ontology.CONTEXTUAL, "divergence_axes": ["geography", "clinical_setting"],
    "dominant_confounder": "geography",
}


def test_feature_vector_reads_cues_and_metadata():
    values = dict(zip(FEATURE_NAMES, feature_vector(ROW)))
    assert values["similarity"] == pytest.approx(0.7) and values["disagreement"] == pytest.approx(0.9)
    assert values["negation_a"] == 1.0 and values["negation_b"] == 0.0 and values["negation_mismatch"] == 1.0
    assert values["polarity_mismatch"] == 1.0
    assert values["same_claim_type"] == 0.0 and values["year_gap"] == pytest.approx(1.0) and values["domain_amr"] == 1.0
    assert feature_mask([METADATA, DISAGREEMENT]) == [1.0 if FEATURES[n][0] == "comparison" else 0.0 for n in FEATURE_NAMES]


def test_labels_and_imbalance_weights():
    labels = label_ids(ROW)
    assert labels["labels"] == ontology.CONFLICT_TYPE_NAMES.index(ontology.CONTEXTUAL)
    assert [ontology.AXIS_NAMES[i] for i, v in enumerate(labels["axis_labels"]) if v] == ["geography", "clinical_setting"]
    assert label_ids(dict(ROW, dominant_confounder=None))["confounder_labels"] == -100
    rows = [ROW] * 3 + [dict(ROW, conflict_type=ontology.NO_CONFLICT, divergence_axes=[])]
    weights = class_weights(rows)
    assert weights[0] == pytest.approx(2.0) and weights[2] == pytest.approx(4 / 6) and weights[1] == 1.0
    pos = axis_pos_weight(rows)
    assert pos[ontology.AXIS_NAMES.index("geography")] == pytest.approx(1 / 3) and pos[0] == 1.0


def test_encoding_marks_each_claims_tokens_and_collates():
    tokenizer = AutoTokenizer.from_pretrained(encoders.packaged_minilm())
    items = encode_rows([ROW, dict(ROW, claim_b_text="Yes.", pair_id="p2")], tokenizer, max_length=64)
    first = items[0]
    tokens = tokenizer.convert_ids_to_tokens(first["input_ids"])
    claim_a = [t for t, s in zip(tokens, first["pair_segments"]) if s == 1]
    claim_b = [t for t, s in zip(tokens, first["pair_segments"]) if s == 2]
    assert tokenizer.convert_tokens_to_string(claim_a) == ROW["claim_a_text"].lower()
    assert tokenizer.convert_tokens_to_string(claim_b) == ROW["claim_b_text"].lower()
    assert first["pair_segments"][0] == 0 and first["pair_segments"][-1] == 0
    collated = PairCollator(tokenizer)(items)
    assert collated["input_ids"].shape == collated["pair_segments"].shape
    assert collated["pair_segments"][1, len(items[1]["input_ids"]):].eq(0).all()
    assert collated["features"].shape == (2, len(FEATURE_NAMES)) and collated["confounder_labels"].tolist() == [1, 1]


def test_encoder_resolution_is_offline_and_explicit(tmp_path, caplog):
    minilm = str(encoders.packaged_minilm())
    with caplog.at_level(logging.WARNING, logger="trainer.encoders"):
        assert encoders.resolve_encoder(None) == minilm
    assert "not available offline" in caplog.text
    assert encoders.resolve_encoder("sentence-transformers/all-MiniLM-L6-v2") == minilm
    assert encoders.resolve_encoder(str(tmp_path)) == str(tmp_path)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        encoders.resolve_encoder(str(tmp_path / "missing-model"))
    with pytest.raises(FileNotFoundError, match="cannot be downloaded"):
        encoders.resolve_encoder("dmis-lab/biobert-v1.1")


def test_trainer_scales_the_loss_itself(tmp_path):
    """The loss is a batch mean: Trainer must not pass ``num_items_in_batch`` and skip its own scaling (under
    several processes it would multiply the loss by their number)."""
    from transformers import Trainer, TrainingArguments

    trainer = Trainer(model=tiny_model(), args=TrainingArguments(output_dir=str(tmp_path), use_cpu=True))
    assert MultiTaskConflictModel.accepts_loss_kwargs is False and trainer.model_accepts_loss_kwargs is False


PAIRS = [("Colistin reduced mortality in Greek ICU patients.", "Colistin did not reduce mortality in Thai outpatients."),
         ("Vitamin D had no effect.", "Vitamin D supplementation lowered fracture risk in elderly women in Finland.")]


def text_model(tokenizer, seed: int = 0) -> MultiTaskConflictModel:
    """A tiny random model over the packaged MiniLM vocabulary, as training configures it (sep_token_id)."""
    torch.manual_seed(seed)
    encoder = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=64, max_position_embeddings=128)
    return MultiTaskConflictModel(MultiTaskConflictConfig(
        encoder_config=encoder.to_dict(), projection_dim=16, type_embed_dim=4, num_cross_attention_heads=2,
        sep_token_id=tokenizer.sep_token_id)).eval()


def test_segments_from_token_ids_are_those_of_the_encoding():
    tokenizer = AutoTokenizer.from_pretrained(encoders.packaged_minilm())
    rows = [dict(ROW, claim_a_text=a, claim_b_text=b) for a, b in PAIRS]
    for max_length in (64, 12):  # 12 truncates
        batch = PairCollator(tokenizer)(encode_rows(rows, tokenizer, max_length))
        got = modeling.segments_from_ids(batch["input_ids"], batch["attention_mask"], tokenizer.sep_token_id)
        assert torch.equal(got, batch["pair_segments"]), max_length


@torch.no_grad()
def test_tokens_alone_run_the_model_with_unknown_features_and_claim_types():
    tokenizer = AutoTokenizer.from_pretrained(encoders.packaged_minilm())
    model = text_model(tokenizer)
    rows = [dict(ROW, claim_a_text=a, claim_b_text=b) for a, b in PAIRS]
    batch = PairCollator(tokenizer)(encode_rows(rows, tokenizer, 64))
    tokens = {k: batch[k] for k in ("input_ids", "attention_mask", "token_type_ids")}
    factual = ontology.CLAIM_TYPE_NAMES.index(ontology.DEFAULT_CLAIM_TYPE)
    explicit = model(**tokens, pair_segments=batch["pair_segments"], features=torch.zeros_like(batch["features"]),
                     claim_types=torch.full_like(batch["claim_types"], factual))
    alone = model(**tokens)
    for key in ("conflict_logits", "axis_logits", "confounder_logits"):
        assert torch.equal(alone[key], explicit[key]), key
    assert not torch.equal(alone.conflict_logits, model(**inputs_only(batch)).conflict_logits)  # features do count
    model.config.sep_token_id = None
    with pytest.raises(ValueError, match="sep_token_id"):
        model(**tokens)


def test_text_classification_pipeline_returns_the_conflict_type(tmp_path):
    """In this process the registered classes serve; test_train runs the card's snippet where our packages are not."""
    tokenizer = AutoTokenizer.from_pretrained(encoders.packaged_minilm())
    model = text_model(tokenizer)
    model.save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    classify = pipeline("text-classification", model=str(tmp_path), trust_remote_code=True)
    (a, b), _ = PAIRS
    got = classify({"text": a, "text_pair": b}, top_k=None)
    with torch.no_grad():
        probs = model(**tokenizer(a, b, return_tensors="pt")).conflict_logits.softmax(-1)[0]
    assert {r["label"]: pytest.approx(r["score"], abs=1e-6) for r in got} == \
        {name: p.item() for name, p in zip(ontology.CONFLICT_TYPE_NAMES, probs)}
    batch = classify([{"text": a, "text_pair": b} for a, b in PAIRS])
    assert [r["label"] for r in batch] == [classify({"text": a, "text_pair": b})["label"] for a, b in PAIRS]


def test_a_model_folder_without_the_pipeline_mapping_is_not_published(tmp_path):
    from trainer.hub_model import model_problems

    tiny_model().save_pretrained(tmp_path)
    assert not [p for p in model_problems(tmp_path) if "auto_map" in p]
    config = json.loads((tmp_path / "config.json").read_text())
    del config["auto_map"]["AutoModelForSequenceClassification"]
    (tmp_path / "config.json").write_text(json.dumps(config))
    assert [p for p in model_problems(tmp_path) if "auto_map has no AutoModelForSequenceClassification" in p
            and "pipeline('text-classification'" in p]


@torch.no_grad()
def test_finding_states_read_each_claim_apart():
    """With finding states, a claim's state does not change when the other claim's words do; in the plain
    cross-encoder it does (so the block mask, not the pooling, keeps the claims apart)."""
    b = inputs_only(batch())
    other_b = dict(b, input_ids=b["input_ids"].clone())
    other_b["input_ids"][:, 7:11] = (other_b["input_ids"][:, 7:11] + 5) % 64
    apart = tiny_model(finding_states=3).eval()
    before, after = apart(**b), apart(**other_b)
    assert before.finding_probs.shape == (4, 2, 3)
    torch.testing.assert_close(before.finding_probs[:, 0], after.finding_probs[:, 0])
    assert not torch.allclose(before.finding_probs[:, 1], after.finding_probs[:, 1])
    together = tiny_model().eval()
    assert together(**b).finding_probs is None
    segments = b["pair_segments"]
    assert not torch.allclose(modeling.masked_mean(together.encoder(b["input_ids"]).last_hidden_state, segments == 1),
                              modeling.masked_mean(together.encoder(other_b["input_ids"]).last_hidden_state, segments == 1))


def test_claim_block_mask_keeps_the_question_prefix_and_each_claim_to_itself():
    segments = torch.tensor([[0, 0, 0, 1, 1, 0, 2, 2, 0, 0]])  # [CLS] question [SEP] a a [SEP] b b [SEP] pad
    attention = torch.tensor([[1, 1, 1, 1, 1, 1, 1, 1, 1, 0]])
    allowed = modeling.claim_block_mask(segments, attention)[0, 0]
    prefix = [True, True, True] + [False] * 7
    assert allowed[0].tolist() == prefix  # the question reads only itself
    assert allowed[3].tolist() == [True, True, True, True, True] + [False] * 5
    assert allowed[6].tolist() == [True, True, True, False, False, False, True, True, False, False]
    assert allowed[9].tolist() == prefix  # padding, never a key


def test_findings_differ_is_the_chance_two_reported_findings_differ():
    one_hot = torch.eye(3)  # increase, no difference, not reported
    differ = modeling.findings_differ(one_hot[[0, 0, 0, 2]], one_hot[[1, 0, 2, 2]])
    assert differ.tolist() == [1.0, 0.0, 0.0, 0.0]
    mixed = modeling.findings_differ(torch.tensor([[0.5, 0.3, 0.2]]), torch.tensor([[0.2, 0.6, 0.2]]))
    torch.testing.assert_close(mixed, torch.tensor([0.5 * 0.6 + 0.3 * 0.2]))


def test_the_findings_decide_conflict_or_not_and_the_pair_head_which_kind():
    logits = torch.tensor([[0.3, -1.0, 2.0, 0.0, 0.5, -0.2]])
    none = ontology.CONFLICT_TYPE_NAMES.index(ontology.NO_CONFLICT)
    kinds = torch.tensor([-1.0, 2.0, 0.0, 0.5, -0.2]).softmax(-1)  # the pair head over the conflict classes only
    for p in (0.05, 0.5, 0.9):
        probs = modeling.with_findings_prior(logits, torch.tensor([p]), none).softmax(-1)[0]
        torch.testing.assert_close(probs[none], torch.tensor(1 - p))
        torch.testing.assert_close(probs[1:], p * kinds)


def test_finding_states_learn_from_the_conflict_loss_and_are_checked():
    model = tiny_model(finding_states=3)
    model(**batch()).loss.backward()
    assert model.finding_head.weight.grad.abs().sum() > 0
    with pytest.raises(ValueError, match="finding_states"):
        tiny_model(finding_states=2)
