"""What makes the rare conflict classes count (rebalanced epochs, their class weights, focal loss), the review
question in the model input, and no axes on a pair classed ``no_conflict`` (decoding and the pipeline)."""

import math
from collections import Counter

import pytest
import torch
from transformers import AutoTokenizer, BertConfig

from biodivergence_dataset import ontology
from trainer import encoders
from trainer.data import class_weights, encode_rows, weights_from_counts
from trainer.imbalance import ConflictEpochSampler, epoch_label_counts
from trainer.modeling import MultiTaskConflictConfig, MultiTaskConflictModel, conflict_type_loss
from trainer.pipeline import ConflictPipeline, pair_row
from trainer.predict import decode

NO, CTX = ontology.NO_CONFLICT, ontology.CONTEXTUAL
DIRECT = ontology.CONFLICT_TYPE_NAMES[1]
QUESTION = "In adults with sepsis, does colistin reduce mortality?"
ROW = pair_row({"pair_id": "p1", "claim_a_text": "Colistin did not reduce mortality in Greek ICU patients.",
                "claim_b_text": "Colistin reduced mortality in Thai outpatients.", "question": QUESTION})


def test_each_epoch_holds_every_conflict_and_a_fresh_block_of_non_conflicts():
    labels = [1] * 5 + [0] * 40
    sampler = ConflictEpochSampler(labels, negative=0, negatives_per_conflict=2.0, seed=3)
    assert len(sampler) == 15
    seen = Counter()
    for epoch in range(4):  # 4 epochs of 10 non-conflicts cover the 40 once
        sampler.set_epoch(epoch)
        indices = list(sampler)
        assert len(indices) == len(sampler) == len(set(indices))
        assert {i for i in indices if labels[i]} == set(range(5))
        seen.update(i for i in indices if not labels[i])
    assert set(seen) == set(range(5, 45)) and set(seen.values()) == {1}
    sampler.set_epoch(1)
    assert list(sampler) == sampler.epoch_indices(1) != sampler.epoch_indices(5)  # 5 wraps to block 1, reshuffled
    assert set(sampler.epoch_indices(5)) == set(sampler.epoch_indices(1))


def test_class_weights_follow_what_a_rebalanced_epoch_holds():
    labels = [NO] * 90 + [CTX] * 8 + [DIRECT] * 2
    counts = epoch_label_counts(labels, NO, 3.0)
    assert counts == Counter({NO: 30, CTX: 8, DIRECT: 2})
    weights = weights_from_counts(counts)
    index = ontology.CONFLICT_TYPE_NAMES.index
    assert weights[index(NO)] == pytest.approx(40 / (3 * 30)) and weights[index(CTX)] == pytest.approx(40 / (3 * 8))
    assert weights[index(DIRECT)] == pytest.approx(40 / (3 * 2))
    split = class_weights([{"conflict_type": c} for c in labels])
    assert split[index(NO)] == pytest.approx(100 / (3 * 90)) and split != weights


def test_focal_loss_is_weighted_cross_entropy_scaled_by_one_minus_p_to_gamma():
    logits = torch.tensor([[3.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.5, 0.0, 1.0, 0.0, 0.0, 0.0]])
    labels = torch.tensor([0, 2])
    weight = torch.tensor([0.5, 1.0, 4.0, 1.0, 1.0, 1.0])
    assert conflict_type_loss(logits, labels, weight).item() == pytest.approx(
        torch.nn.functional.cross_entropy(logits, labels, weight=weight).item())
    p = logits.softmax(-1)[[0, 1], labels]
    w = weight[labels]
    by_hand = (w * (1 - p) ** 2 * -p.log()).sum() / w.sum()
    assert conflict_type_loss(logits, labels, weight, gamma=2.0).item() == pytest.approx(by_hand.item())
    # the easy pair (p ≈ 0.87) loses more of its share of the loss than the hard one
    easy, hard = (w * -p.log()), (w * (1 - p) ** 2 * -p.log())
    assert hard[0] / easy[0] < hard[1] / easy[1]


def test_the_model_loss_uses_the_configured_class_weights_and_gamma():
    torch.manual_seed(0)
    encoder = BertConfig(vocab_size=64, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=64, max_position_embeddings=64)
    model = MultiTaskConflictModel(MultiTaskConflictConfig(
        encoder_config=encoder.to_dict(), projection_dim=16, type_embed_dim=4, num_cross_attention_heads=2,
        tasks=["conflict_type"], class_weights=[1.0, 1.0, 5.0, 1.0, 1.0, 1.0], focal_gamma=1.5, sep_token_id=3)).eval()
    ids = torch.randint(1, 64, (3, 10), generator=torch.Generator().manual_seed(1))
    labels = torch.tensor([0, 2, 2])
    out = model(input_ids=ids, labels=labels)
    expected = conflict_type_loss(out.conflict_logits, labels, torch.tensor(model.config.class_weights), 1.5)
    assert out.loss.item() == pytest.approx(expected.item())
    plain = torch.nn.functional.cross_entropy(out.conflict_logits, labels)
    assert not math.isclose(out.loss.item(), plain.item(), rel_tol=1e-4)


def test_the_question_reaches_the_model_input_and_the_claims_keep_their_segments():
    tokenizer = AutoTokenizer.from_pretrained(encoders.packaged_minilm())
    (with_q,) = encode_rows([ROW], tokenizer, 128, with_question=True)
    (without,) = encode_rows([ROW], tokenizer, 128, with_question=False)
    assert QUESTION.lower() in tokenizer.decode(with_q["input_ids"]) and QUESTION.lower() not in tokenizer.decode(without["input_ids"])
    tokens = tokenizer.convert_ids_to_tokens(with_q["input_ids"])
    for segment, text in ((1, ROW["claim_a_text"]), (2, ROW["claim_b_text"])):
        claim = [t for t, s in zip(tokens, with_q["pair_segments"]) if s == segment]
        assert tokenizer.convert_tokens_to_string(claim) == text.lower()
    (no_question,) = encode_rows([dict(ROW, question="")], tokenizer, 128, with_question=True)
    assert no_question["input_ids"] == without["input_ids"] and no_question["pair_segments"] == without["pair_segments"]


def _no_conflict_logits(n: int = 2):
    conflict = torch.full((n, len(ontology.CONFLICT_TYPE_NAMES)), -5.0)
    conflict[:, 0] = 5.0
    axes = torch.full((n, len(ontology.AXIS_NAMES)), 5.0)  # every axis far above any threshold
    return conflict, axes, torch.zeros(n, len(ontology.AXIS_NAMES))


def test_a_pair_classed_no_conflict_decodes_without_axes_or_confounder():
    conflict, axes, confounder = (t.numpy() for t in _no_conflict_logits())
    records = decode(conflict, axes, confounder, "predicted_axes", 0.5)
    assert records == [{"conflict_type": NO, "divergence_axes": [], "dominant_confounder": ""}] * 2
    conflict[1, 2] = 10.0  # the second pair classed contextual: its axes come back
    records = decode(conflict, axes, confounder, "predicted_axes", 0.5)
    assert records[1]["conflict_type"] == CTX and records[1]["divergence_axes"] == list(ontology.AXIS_NAMES)


@torch.no_grad()
def test_the_pipeline_gives_no_axes_on_no_conflict_and_reads_the_question():
    tokenizer = AutoTokenizer.from_pretrained(encoders.packaged_minilm())
    encoder = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=64, max_position_embeddings=128)
    model = MultiTaskConflictModel(MultiTaskConflictConfig(
        encoder_config=encoder.to_dict(), projection_dim=16, type_embed_dim=4, num_cross_attention_heads=2,
        sep_token_id=tokenizer.sep_token_id, use_question=True, max_length=128)).eval()
    model.conflict_head.bias.copy_(_no_conflict_logits(1)[0][0] * 100)
    model.axis_head.bias.fill_(100.0)
    classify = ConflictPipeline(model=model, tokenizer=tokenizer, device=-1)
    result = classify(ROW, return_scores=True)
    assert result["conflict_type"] == NO and result["divergence_axes"] == [] and result["dominant_confounder"] == ""
    assert min(result["axis_probabilities"].values()) > 0.99  # the axis head said yes; decoding drops it
    seen = []
    model.register_forward_pre_hook(lambda _, args, kwargs: seen.append(kwargs["input_ids"]), with_kwargs=True)
    classify(ROW)
    assert QUESTION.lower() in tokenizer.decode(seen[-1][0])
