"""Low-rank deltas (``builder.reader.compact``): a fine-tuned matrix kept as two factors of its change from the base,
read back over the base; the CLI writes a smaller reader that loads and reads as the whole one does."""

from __future__ import annotations

import hashlib
import json

import pytest
import torch

from builder.reader.compact import DOWN, UP, expand_delta, low_rank_delta


def _weights(rank_of_change: int, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    base = {"encoder.layer.0.dense.weight": torch.randn(64, 48, generator=g),
            "encoder.layer.0.dense.bias": torch.randn(64, generator=g),
            "encoder.layer.0.tiny.weight": torch.randn(4, 3, generator=g)}
    change = torch.randn(64, rank_of_change, generator=g) @ torch.randn(rank_of_change, 48, generator=g) * 0.01
    trained = {"encoder.layer.0.dense.weight": base["encoder.layer.0.dense.weight"] + change,
               "encoder.layer.0.dense.bias": base["encoder.layer.0.dense.bias"] + 0.1,
               "encoder.layer.0.tiny.weight": base["encoder.layer.0.tiny.weight"] * 2,
               "finding.weight": torch.randn(4, 48, generator=g)}
    return base, trained


def test_a_change_of_low_rank_is_stored_as_two_factors_and_read_back_over_the_base():
    base, trained = _weights(rank_of_change=4)
    stored = low_rank_delta(trained, base, rank=4)
    name = "encoder.layer.0.dense.weight"
    assert name not in stored and stored[name + UP].shape == (64, 4) and stored[name + DOWN].shape == (4, 48)
    # biases, a matrix the factors would not shrink and the heads (no base) stay whole
    assert {"encoder.layer.0.dense.bias", "encoder.layer.0.tiny.weight", "finding.weight"} <= set(stored)
    assert all(t.dtype == torch.float16 for t in stored.values())
    back = expand_delta(stored, base)
    assert set(back) == set(trained)
    for key, tensor in trained.items():
        assert torch.allclose(back[key], tensor, atol=2e-3), key


def test_a_lower_rank_than_the_change_keeps_its_largest_directions_only():
    base, trained = _weights(rank_of_change=16)
    name = "encoder.layer.0.dense.weight"
    change = trained[name] - base[name]
    errors = [torch.linalg.matrix_norm(expand_delta(low_rank_delta(trained, base, r), base)[name] - trained[name])
              for r in (2, 8, 16)]
    assert errors[0] > errors[1] > errors[2] and errors[2] < 1e-2 * torch.linalg.matrix_norm(change)


def test_a_factor_without_its_pair_or_base_is_named():
    base, trained = _weights(rank_of_change=4)
    stored = low_rank_delta(trained, base, rank=4)
    del stored["encoder.layer.0.dense.weight" + DOWN]
    with pytest.raises(ValueError, match="encoder.layer.0.dense.weight"):
        expand_delta(stored, base)
    with pytest.raises(ValueError, match="rank must be at least 1"):
        low_rank_delta(trained, base, rank=0)


@pytest.mark.slow  # loads the shipped reader twice
def test_reader_compact_writes_a_smaller_reader_that_reads_sentences_of_other_fields_as_the_whole_one(tmp_path):
    from biodivergence_cli.main import main
    from builder.reader.compact import saved_tensors
    from builder.reader.model import CONFIG_FILE, SHIPPED, WEIGHTS_FILE, build_network, load_reader

    out = tmp_path / "compact"
    assert main(["reader", "compact", "--reader", str(SHIPPED), "--rank", "128", "--out", str(out)]) == 0
    assert not any(p.name.startswith(".") for p in tmp_path.iterdir())  # the staging folder was swapped in
    data = (out / WEIGHTS_FILE).read_bytes()
    assert len(data) < 0.6 * (SHIPPED / WEIGHTS_FILE).stat().st_size
    config = json.loads((out / CONFIG_FILE).read_text())
    assert config["weights_sha256"] == hashlib.sha256(data).hexdigest() and config["training"]["low_rank"] == 128
    pairs = [  # trauma surgery, paediatric infection, geriatric bone health: none of the demo's drug classes
        ("Does tranexamic acid reduce mortality compared with placebo in bleeding trauma patients?",
         "Tranexamic acid reduced all-cause mortality at 28 days (relative risk 0.91, p = 0.0035)."),
        ("Does amoxicillin shorten symptoms compared with placebo in acute otitis media?",
         "Amoxicillin did not shorten the duration of pain or fever compared with placebo."),
        ("Does vitamin D reduce hip fractures compared with placebo in older adults?",
         "Hip fractures were more frequent among women given annual high-dose vitamin D."),
    ]
    whole, compacted = load_reader(SHIPPED).read(pairs), load_reader(out).read(pairs)
    # a network continuing from the compacted reader (reader train --init, train-answerer --init-reader) starts
    # from the matrices the reader reads with, not from the base's
    fresh = build_network(config["base_model"], {})
    started = saved_tensors(out / WEIGHTS_FILE, fresh)
    key = "encoder.encoder.layer.5.output.dense.weight"
    reading = load_reader(out).network.state_dict()[key]
    assert torch.equal(started[key], reading) and not torch.allclose(fresh.state_dict()[key], reading)
    assert [r.finding for r in whole] == [r.finding for r in compacted] == ["decrease", "no_difference", "increase"]
    for a, b in zip(whole, compacted):
        assert max(abs(a.finding_probs[k] - b.finding_probs[k]) for k in a.finding_probs) < 0.1


def test_reader_compact_names_a_folder_that_holds_no_reader(tmp_path, capsys):
    from biodivergence_cli.main import main

    assert main(["reader", "compact", "--reader", str(tmp_path), "--out", str(tmp_path / "o")]) != 0
    assert f"{tmp_path}: neither" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
