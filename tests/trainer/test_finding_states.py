"""The finding-state stage: the reference model's encoder and state head fitted to expert findings first."""

import json
import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest
import torch
from repo_paths import REPO, SHARED_DATA
from safetensors.torch import load_file
from transformers import AutoTokenizer, BertConfig, BertModel

from biodivergence_dataset import ontology
from builder.goldparts import is_heldout
from builder.reader.reader_examples import ReaderExample
from trainer import encoders
from trainer import finding_states as fs
from trainer.data import PairCollator
from trainer.modeling import MultiTaskConflictModel
from trainer.training_args import TrainSettings

INCREASE, DECREASE, NO_DIFFERENCE, NOT_REPORTED = ontology.READER_FINDINGS

#: Sentences written for these tests, in fields outside the demo's drug classes (trauma, otitis media, sepsis).
SEPSIS = "Does hydrocortisone change shock reversal compared with placebo in septic shock?"
WRITTEN = [ReaderExample(question, text, finding, None, "written", str(i)) for i, (question, text, finding) in enumerate([
    ("Does tranexamic acid reduce death compared with placebo in bleeding trauma patients?",
     "Death within 28 days was lower with tranexamic acid than with placebo (14.5% vs 16.0%).", DECREASE),
    ("Does amoxicillin shorten symptoms compared with placebo in children with acute otitis media?",
     "Time to resolution of symptoms did not differ between amoxicillin and placebo.", NO_DIFFERENCE),
    (SEPSIS, "Shock reversal was faster and more frequent with hydrocortisone than with placebo.", INCREASE),
    (SEPSIS, "Patients were enrolled in 52 intensive care units between 2013 and 2017.", NOT_REPORTED),
])]


@pytest.fixture(scope="module")
def tokenizer():
    return AutoTokenizer.from_pretrained(encoders.packaged_minilm())


@pytest.fixture()
def tiny_encoder(tmp_path, tokenizer):
    """A small random BERT on MiniLM's vocabulary, saved as an encoder folder (no download)."""
    torch.manual_seed(0)
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=160)
    folder = tmp_path / "tiny_encoder"
    BertModel(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


def test_a_stage_example_asks_the_question_of_one_sentence_as_both_claims(tokenizer):
    items = fs.encode_findings(WRITTEN, tokenizer, max_length=128)
    assert [it["state_labels"] for it in items] == [[fs.FINDING_STATES.index(e.finding)] * 2 for e in WRITTEN]
    for item, example in zip(items, WRITTEN):
        ids, segments = item["input_ids"], item["pair_segments"]
        claim_a = tokenizer.decode([t for t, s in zip(ids, segments) if s == 1])
        claim_b = tokenizer.decode([t for t, s in zip(ids, segments) if s == 2])
        assert claim_a == claim_b == tokenizer.decode(tokenizer(example.text, add_special_tokens=False)["input_ids"])
        question = tokenizer.decode([t for t, s in zip(ids, segments) if s == 0], skip_special_tokens=True)
        assert question == tokenizer.decode(tokenizer(example.question, add_special_tokens=False)["input_ids"])
    batch = PairCollator(tokenizer)(items)
    assert batch["state_labels"].shape == (len(WRITTEN), 2)
    assert fs.FINDING_STATES[-1] == NOT_REPORTED  # the state findings_differ leaves out


def test_the_state_loss_is_the_negative_log_likelihood_of_each_claims_state():
    probs = torch.tensor([[[0.7, 0.1, 0.1, 0.1], [0.1, 0.2, 0.6, 0.1]]])
    loss = fs.state_loss(probs, torch.tensor([[0, 2]]))
    assert loss.item() == pytest.approx(-(torch.log(torch.tensor(0.7)) + torch.log(torch.tensor(0.6))).item() / 2)
    assert fs.state_loss(probs, torch.tensor([[1, 3]])) > loss


def test_the_stage_reads_only_the_development_part_of_evidence_inference():
    examples = fs.finding_examples(SHARED_DATA)
    assert len(examples) > 1000
    assert {e.source for e in examples} == {fs.SOURCE}
    assert not any(is_heldout(fs.SOURCE, e.key) for e in examples)
    assert {e.finding for e in examples} == set(fs.FINDING_STATES)


def test_finding_data_reads_four_named_states_and_needs_a_state_head():
    assert TrainSettings(finding_data="data").finding_states == len(fs.FINDING_STATES) == 4
    with pytest.raises(ValueError, match="finding-states"):
        TrainSettings(finding_data="data", finding_states=0)


def test_the_stage_learns_the_states_is_kept_and_seeds_take_its_encoder_and_state_head(tmp_path, tiny_encoder,
                                                                                       tokenizer, monkeypatch):
    examples = WRITTEN * 8
    monkeypatch.setattr(fs, "finding_examples", lambda data_dir: examples)
    settings = fs.FindingStageSettings(epochs=6, learning_rate=3e-3, batch_size=8, max_length=64)
    folder = fs.pretrained_finding_states(tiny_encoder, "unused", settings, cache=tmp_path / "cache")
    record = json.loads((folder / fs.RECORD).read_text())
    assert record["states"] == list(fs.FINDING_STATES) and record["examples"] == len(examples)
    assert not list(folder.parent.glob(".*partial"))  # the staging folder was swapped in

    fitted = MultiTaskConflictModel.from_encoder(tiny_encoder, sep_token_id=tokenizer.sep_token_id, finding_states=4)
    pair_heads = {k: v.clone() for k, v in fitted.state_dict().items() if k.startswith("conflict_head.")}
    fs.load_finding_weights(fitted, folder)
    fresh = MultiTaskConflictModel.from_encoder(tiny_encoder, sep_token_id=tokenizer.sep_token_id, finding_states=4)
    batch = PairCollator(tokenizer)(fs.encode_findings(WRITTEN, tokenizer, 64))
    labels = batch.pop("state_labels")
    with torch.no_grad():
        assert fs.state_loss(fitted(**batch).finding_probs, labels) < 0.5 * fs.state_loss(fresh(**batch).finding_probs,
                                                                                          labels)
    stored = load_file(str(folder / fs.WEIGHTS))
    state = fitted.state_dict()
    assert torch.equal(state["finding_head.weight"], stored["finding_head.weight"])
    assert pair_heads and all(torch.equal(state[k], v) for k, v in pair_heads.items())  # the pair heads start fresh

    def retrain(*args, **kwargs):
        raise AssertionError("the stage was trained again")

    monkeypatch.setattr(fs, "fit_finding_states", retrain)
    assert fs.pretrained_finding_states(tiny_encoder, "unused", settings, cache=tmp_path / "cache") == folder


def test_the_stage_does_not_depend_on_what_drew_random_numbers_before_it(tmp_path, tiny_encoder, monkeypatch):
    """Two stages of the same settings, one after other work consumed the global random state (a baseline suite
    runs first in the reference run), hold the same weights, the state head's initialisation included."""
    monkeypatch.setattr(fs, "finding_examples", lambda data_dir: WRITTEN * 2)
    settings = fs.FindingStageSettings(epochs=1, batch_size=8, max_length=64)
    first = fs.pretrained_finding_states(tiny_encoder, "unused", settings, cache=tmp_path / "a")
    torch.rand(1000)
    second = fs.pretrained_finding_states(tiny_encoder, "unused", settings, cache=tmp_path / "b")
    a, b = load_file(str(first / fs.WEIGHTS)), load_file(str(second / fs.WEIGHTS))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


class OneProcessOfTwo:
    """What the stage reads of its TrainingArguments, as one process of a two-process run sees them: whether it writes
    the stage folder (``should_save``) and ``main_process_first``, which logs what the process has done when it enters
    and leaves. The other process is played by ``others_done``, run where a process waits at the barrier (on entering,
    for a process that does not write: the writer has finished by then)."""

    def __init__(self, out, writes: bool, events: list, others_done=lambda: None):
        self.output_dir, self.should_save, self.save_on_each_node = str(out), writes, False
        self.events, self.others_done = events, others_done

    @contextmanager
    def main_process_first(self, local=True, desc="work"):
        self.events.append(("enter", local))
        if not self.should_save:
            self.others_done()
        yield
        self.events.append("leave")


def _two_process_stage(monkeypatch, events: list, writes: bool, others_done=lambda: None):
    """The stage's arguments and training as one process of two sees them: the training logs that this process took
    part (and saves, where this process writes) instead of training."""
    monkeypatch.setattr(fs, "finding_examples", lambda data_dir: WRITTEN)
    monkeypatch.setattr(fs, "stage_arguments",
                        lambda out, settings, processes: OneProcessOfTwo(out, writes, events, others_done))

    def fit(model, tokenizer, examples, args, settings):
        events.append(("fit", Path(args.output_dir).is_dir()))
        if args.should_save:
            model.save_pretrained(args.output_dir)

    monkeypatch.setattr(fs, "fit_finding_states", fit)


def test_the_writing_process_fills_and_swaps_the_stage_folder_inside_main_process_first(tmp_path, tiny_encoder,
                                                                                         monkeypatch):
    events = []
    _two_process_stage(monkeypatch, events, writes=True)
    folder = fs.pretrained_finding_states(tiny_encoder, "unused", cache=tmp_path / "cache")
    # trained with the others (into the staging folder it made), then wrote the folder while they waited
    assert events == [("fit", True), ("enter", False), "leave"]
    assert json.loads((folder / fs.RECORD).read_text())["examples"] == len(WRITTEN)
    assert (folder / fs.WEIGHTS).is_file() and not list(folder.parent.glob(".*"))


def test_another_process_trains_with_the_writer_and_returns_the_folder_it_wrote(tmp_path, tiny_encoder, tokenizer,
                                                                               monkeypatch):
    events, cache = [], tmp_path / "cache"

    def writer_done():
        """The writing process's share: its stage folder is in place when this process gets past the barrier."""
        writer_events = []
        with monkeypatch.context() as writer:
            _two_process_stage(writer, writer_events, writes=True)
            fs.pretrained_finding_states(tiny_encoder, "unused", cache=cache)
        events.append("writer done")

    _two_process_stage(monkeypatch, events, writes=False, others_done=writer_done)
    folder = fs.pretrained_finding_states(tiny_encoder, "unused", cache=cache)
    # it trained without making a staging folder, waited, and returns the writer's folder untouched
    assert events == [("fit", False), ("enter", False), "writer done", "leave"]
    assert (folder / fs.WEIGHTS).is_file() and not list(folder.parent.glob(".*"))
    model = MultiTaskConflictModel.from_encoder(tiny_encoder, sep_token_id=tokenizer.sep_token_id, finding_states=4)
    fs.load_finding_weights(model, folder)  # what this process's seeds do next


@pytest.mark.slow  # two real processes (torchrun-style)
def test_two_processes_train_the_stage_together_and_one_writes_its_folder(tmp_path, tiny_encoder):
    """torchrun with two CPU processes: both train (Trainer distributes the stage), the main one alone makes and
    swaps the folder, and both get the finished folder back."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
         str(REPO / "tests" / "support" / "two_process_stage.py"), tiny_encoder, str(tmp_path / "cache"), str(tmp_path)],
        env=env, cwd=REPO, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    returned = {json.loads((tmp_path / f"rank-{rank}.json").read_text())["folder"] for rank in (0, 1)}
    (folder,) = {Path(f) for f in returned}
    assert json.loads((folder / fs.RECORD).read_text())["examples"] == 16
    assert (folder / fs.WEIGHTS).is_file() and not list(folder.parent.glob(".*"))


def test_a_stage_folder_that_does_not_fit_the_model_is_named(tmp_path, tiny_encoder, tokenizer):
    model = MultiTaskConflictModel.from_encoder(tiny_encoder, sep_token_id=tokenizer.sep_token_id, finding_states=4)
    with pytest.raises(FileNotFoundError, match=str(tmp_path)):
        fs.load_finding_weights(model, tmp_path)
    three = MultiTaskConflictModel.from_encoder(tiny_encoder, sep_token_id=tokenizer.sep_token_id, finding_states=3)
    three.save_pretrained(tmp_path / "three")
    with pytest.raises(ValueError, match="finding_head"):
        fs.load_finding_weights(model, tmp_path / "three")
