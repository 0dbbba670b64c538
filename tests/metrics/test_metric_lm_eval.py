"""The ``biodivergence`` lm-evaluation-harness task group (metrics/lm_eval), run offline with lm-eval's
``hf`` model on a tiny randomly initialised causal LM built from a config, on a small local release."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest
from lm_eval_tasks import TASKS_DIR, scored, utils
from release_factory import write_small_release

from biodivergence_dataset import ontology
from trainer.metric import scoring_module


def tiny_causal_lm(path: Path) -> Path:
    """A one-layer Llama with random weights and a byte-level BPE tokenizer, saved to ``path``."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(["geography, disease subtype, none"], trainers.BpeTrainer(
        vocab_size=300, special_tokens=["<eos>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<eos>", pad_token="<eos>")
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=4096)
    LlamaForCausalLM(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    import lm_eval
    from lm_eval.tasks import TaskManager

    root = tmp_path_factory.mktemp("lm_eval")
    release = write_small_release(root / "release")
    model = tiny_causal_lm(root / "model")
    tasks = TaskManager(include_path=str(TASKS_DIR), metadata={"dataset_path": str(release)})
    return lm_eval.simple_evaluate(model="hf", model_args=f"pretrained={model},dtype=float32", device="cpu",
                                   tasks=["biodivergence", "biodivergence_pairlevel"], task_manager=tasks,
                                   batch_size=4, log_samples=True)


def same(reported, expected) -> bool:
    """The harness reports the metric's value: None where the metric says undefined, else the number."""
    return reported is None if expected is None else reported == pytest.approx(expected)


#: The conflict-type task's choices, in answer-index order.
CLASS_NAMES = utils.conflict_type_choices({})


def test_both_configs_report_the_metric_numbers(run):
    for suffix in ("", "_pairlevel"):
        results = {t: run["results"][f"biodivergence_{t}{suffix}"] for t in ("conflict_type", "axes", "confounder")}
        assert results["conflict_type"]["sample_len"] == 3  # the test split of both configs
        assert results["confounder"]["sample_len"] == 2  # the test rows whose reference names a confounder
        ct = scored(run, f"biodivergence_conflict_type{suffix}", "conflict_type",
                    lambda s: max(range(6), key=lambda i: s["filtered_resps"][i][0]))
        assert results["conflict_type"]["acc,none"] == pytest.approx(ct["conflict_type/accuracy"])
        per_char = scored(run, f"biodivergence_conflict_type{suffix}", "conflict_type",
                          lambda s: max(range(6), key=lambda i: s["filtered_resps"][i][0] / len(CLASS_NAMES[i])))
        assert results["conflict_type"]["acc_norm,none"] == pytest.approx(per_char["conflict_type/accuracy"])
        assert results["conflict_type"]["macro_f1,none"] == pytest.approx(ct["conflict_type/macro_f1"])
        assert same(results["conflict_type"]["ctx_f1,none"], ct["conflict_type/ctx_f1"])
        assert results["conflict_type"]["ctx_n,none"] == ct["conflict_type/support/contextual_contradiction"]
        axes = scored(run, f"biodivergence_axes{suffix}", "divergence_axes",
                      lambda s: utils.parse_axes(s["filtered_resps"][0]))
        for key in ("micro_f1", "macro_f1", "exact_match"):
            assert same(results["axes"][f"{key},none"], axes[f"axes/{key}"])
        confounder = scored(run, f"biodivergence_confounder{suffix}", "dominant_confounder",
                            lambda s: utils.parse_confounder(s["filtered_resps"][0]))
        assert results["confounder"]["accuracy,none"] == pytest.approx(confounder["confounder/accuracy"])


def test_prompts_define_the_ontology(run):
    sample = run["samples"]["biodivergence_conflict_type"][0]
    prompt = sample["arguments"][0][0]  # (context, continuation) per choice
    assert sample["doc"]["claim_a_text"] in prompt
    assert all(f"- {c.name}: {c.definition}" in prompt for c in ontology.CONFLICT_TYPES)
    assert [continuation.strip() for _, continuation in sample["arguments"]] == list(scoring_module().CONFLICT_TYPES)
    axes_prompt = run["samples"]["biodivergence_axes"][0]["arguments"][0][0]
    assert all(f"- {a.name}: {a.description}" in axes_prompt for a in ontology.AXES)

def test_a_class_on_neither_side_is_null_not_one():
    """--limit 20 on rows without a conflict, answered right: Ctx-F1 is undefined (None, n = 0), never 1."""
    items = [(0, 0)] * 20
    assert utils.conflict_type_ctx_f1(items) is None and utils.conflict_type_ctx_n(items) == 0
    assert utils.conflict_type_macro_f1(items) == 1.0  # over the one class both sides hold
    assert utils.axes_micro_f1([([], [])] * 3) is None  # no axis on either side


def test_answer_parsing_examples():
    assert doctest.testmod(utils).failed == 0


def test_acc_norm_takes_the_likeliest_class_per_character_of_its_name():
    """A raw log-likelihood leans to the shortest name: the class with the highest log-likelihood per character
    (lm-eval's acc_norm) can be another, and acc_norm scores that one."""
    names = utils.conflict_type_choices({})
    short, long_ = min(range(len(names)), key=lambda i: len(names[i])), max(range(len(names)), key=lambda i: len(names[i]))
    lls = [-100.0] * len(names)
    lls[short], lls[long_] = -2.0 * len(names[short]), -1.5 * len(names[long_])  # per character: the long one wins
    assert lls[short] > lls[long_]  # and raw, the short one
    results = [(ll, False) for ll in lls]
    on_long = utils.conflict_type_results({"conflict_type": long_}, results)
    assert on_long["acc"] == 0.0 and on_long["acc_norm"] == 1.0
    on_short = utils.conflict_type_results({"conflict_type": short}, results)
    assert on_short["acc"] == 1.0 and on_short["acc_norm"] == 0.0
