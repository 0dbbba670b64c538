"""The finding reader: a cross-encoder that reads a claim's finding relative to a clinical question.

One BERT encoder (the packaged all-MiniLM-L6-v2 by default) reads "question [SEP] claim"; its mean-pooled
output feeds two heads: ``finding`` (``ontology.READER_FINDINGS``: increase / decrease / no_difference /
not_reported, the direction of the question's outcome under its intervention) and ``stance``
(``ontology.READER_STANCES``: the answer to the question as asked). A saved reader is a folder holding
``reader_config.json`` (base model, labels, max_length, training sources, data fingerprint, report) and
``reader.safetensors``: only the tensors training changed, in float16, over the base model's own (the
embeddings stay frozen), so the shipped reader is a 21 MB delta that needs no download; a reader on a larger base
can keep its changed matrices as low-rank factors instead (``compact``).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, TypeAdapter, ValidationError

from biodivergence_dataset import ontology
from biodivergence_dataset.records import validation_problems

from ..frameterms import WORD_RE, stem, terms
from ..significance import stated_significance, stated_tests

READER_VERSION = "2"
#: The training label of an example its source gives no label for, on one head (cross-entropy skips it).
IGNORE = -100
CONFIG_FILE = "reader_config.json"
WEIGHTS_FILE = "reader.safetensors"
REPORT_FILE = "reader_report.json"
#: The reader shipped in the package (trained by ``biodivergence reader train`` on the non-held-out data).
SHIPPED = Path(__file__).resolve().parent.parent / "models" / "finding_reader"
INCREASE, DECREASE = ontology.READER_FINDINGS[:2]
EFFECTS = frozenset((INCREASE, DECREASE))
#: A finding as read with the question's two arms exchanged.
EXCHANGED = {INCREASE: DECREASE, DECREASE: INCREASE}
NO_DIFFERENCE, NOT_REPORTED = ontology.READER_FINDINGS[2:]
#: The findings that answer a question (all but not_reported).
READ_FINDINGS = (INCREASE, DECREASE, NO_DIFFERENCE)
YES, NO, NEUTRAL = ontology.READER_STANCES
#: Why two claims disagree when their answers to the question as asked are opposite (yes / no).
OPPOSITE_ANSWER = "opposite_answer"
assert OPPOSITE_ANSWER in ontology.DISAGREEMENT_REASONS


def read_config(cls, folder: Path, config_file: str, what: str, train_command: str):
    """A saved network's config (a dataclass ``cls``), checked: a JSON object of ``cls``'s fields with their types
    and no other key. Every error is one line naming the file (never a ``TypeError`` from the constructor)."""
    path = folder / config_file
    if not path.is_file():
        raise FileNotFoundError(f"{folder}: not a {what} folder (no {config_file}); train one with `{train_command}`")
    try:
        return TypeAdapter(cls).validate_python(json.loads(path.read_text(encoding="utf-8")))
    except ValidationError as exc:
        where, problem = validation_problems(exc, "the file")[0]
        raise ValueError(f"{path}: not a {what} config ({where}: {problem})") from None
    except (ValueError, UnicodeDecodeError) as exc:  # JSON that does not parse
        raise ValueError(f"{path}: not a {what} config (not JSON: {exc})") from None


@dataclass
class ReaderConfig:
    """What a saved reader is: its base encoder, heads and what it was trained on."""

    base_model: str
    max_length: int = 128
    findings: list[str] = field(default_factory=lambda: list(ontology.READER_FINDINGS))
    stances: list[str] = field(default_factory=lambda: list(ontology.READER_STANCES))
    frozen: list[str] = field(default_factory=list)
    version: str = READER_VERSION
    #: whether the reader learned texts with their arm words marked (``mark_arms``); readers saved before
    #: the marks existed read plain text
    arm_marks: bool = False
    training: dict[str, Any] = field(default_factory=dict)
    #: the sha256 of the weights file, written at save and checked at load (None: a reader saved before it)
    weights_sha256: str | None = None
    __pydantic_config__ = ConfigDict(extra="forbid")

    @classmethod
    def load(cls, folder: Path) -> ReaderConfig:
        return read_config(cls, folder, CONFIG_FILE, "finding reader", "biodivergence reader train --out DIR")

    @property
    def trained_on(self) -> frozenset[str]:
        """The expert sources the reader learned from (goldcheck scores it there on held-out items only)."""
        return frozenset(self.training.get("sources", ()))


def mark_arms(text: str, intervention: str, comparator: str) -> str:
    """``text`` with the words that name only the intervention marked ``[ word ]`` and those that name only the
    comparator ``{ word }`` (content stems, ``frameterms.terms``), so the reader sees which arm each part of a
    sentence is about: "[ lisinopril ] caused more cough than { losartan }". Evidence Inference evidence is
    marked with its prompt's arms in training and evaluation, a claim with the arms it names
    (``questions.claim_arms``) in the annotator; on a development part of the training articles the marks
    lifted Evidence Inference macro-F1 from 0.759 to 0.774 (six epochs)."""
    only_i, only_c = terms(intervention) - terms(comparator), terms(comparator) - terms(intervention)
    out, pos = [], 0
    for m in WORD_RE.finditer(text):
        s = stem(m.group().lower())
        marks = "[]" if s in only_i else "{}" if s in only_c else None
        if marks:
            out.append(f"{text[pos:m.start()]}{marks[0]} {m.group()} {marks[1]}")
            pos = m.end()
    out.append(text[pos:])
    return "".join(out)


#: One word set off by ``mark_arms``: "[ lisinopril ]", "{ losartan }".
_MARKED = re.compile(r"[\[{] (\S+) [\]}]")


def unmarked(text: str) -> str:
    """``text`` without the marks ``mark_arms`` set: what the claim itself says, which its stated tests are read
    from ("higher in the { placebo } group" would hide the comparison)."""
    return _MARKED.sub(r"\1", text)


def build_network(base: str, heads: dict[str, int]):
    """The encoder (``AutoModel`` of ``base``) with one linear head per entry of ``heads`` (name → classes) over
    its mean-pooled output, as one ``torch.nn.Module`` whose forward returns the heads' logits in that order. The
    finding reader has ``finding`` and ``stance``; the question answerer ``relevance`` and ``answer``."""
    import torch
    from transformers import AutoModel

    from ..embeddings import resolve_model

    class HeadedEncoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = AutoModel.from_pretrained(resolve_model(base), add_pooling_layer=False)
            hidden = self.encoder.config.hidden_size
            self.dropout = torch.nn.Dropout(0.1)
            self.head_names = tuple(heads)
            for name, classes in heads.items():
                setattr(self, name, torch.nn.Linear(hidden, classes))

        def forward(self, input_ids, attention_mask, token_type_ids=None):
            states = self.encoder(input_ids=input_ids, attention_mask=attention_mask,
                                  token_type_ids=token_type_ids).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(states.dtype)
            pooled = self.dropout((states * mask).sum(1) / mask.sum(1).clamp(min=1.0))
            return tuple(getattr(self, name)(pooled) for name in self.head_names)

    return HeadedEncoder()


@dataclass(frozen=True)
class Reading:
    """A claim's finding relative to one question."""

    finding: str
    finding_probs: dict[str, float]
    stance: str
    stance_probs: dict[str, float]
    #: "significant" / "not_significant" when the text states it (``ontology.SIGNIFICANCE_VALUES``), else None
    significance: str | None
    #: probability of the finding read (of the stance when the finding is not_reported)
    confidence: float
    #: what the text's own words say of its results (``significance.stated_tests``): an effect (a significant test),
    #: a null (a non-significant test or a null finding cue); both for a mixed result
    states_effect: bool = True
    states_null: bool = True

    def reversed(self) -> Reading:
        """The reading with the two arms swapped: increase and decrease (and their probabilities) exchanged."""
        return replace(self, finding=EXCHANGED.get(self.finding, self.finding),
                       finding_probs={EXCHANGED.get(k, k): v for k, v in self.finding_probs.items()})

    def arms_equal(self) -> Reading:
        """The reading of a text that sets the question's two arms equal ("a similar and significant reduction with
        celiprolol and atenolol"): the effect the reader reads is each arm's, so relative to the comparison it is no
        difference, with the probability of an effect moved to it and the text stating a null between the arms."""
        effect = sum(self.finding_probs.get(f, 0.0) for f in EFFECTS)
        probs = {k: (0.0 if k in EFFECTS else v + effect if k == NO_DIFFERENCE else v)
                 for k, v in self.finding_probs.items()}
        return replace(self, finding=NO_DIFFERENCE, finding_probs=probs, significance=None,
                       confidence=probs[NO_DIFFERENCE], states_effect=False, states_null=True)

    @property
    def majority(self) -> bool:
        """Whether the finding read is more likely than all the others together (P > 1/2)."""
        return self.finding_probs[self.finding] > 0.5

    @property
    def stated(self) -> bool:
        """Whether the text itself states the finding read, and nothing else: an effect (increase / decrease)
        with a significant test and no null, no difference with a null and no significant test. A reading of
        numbers set side by side with no test ("46% vs 52%"), of a mixed result, or against the text's own
        words is the reader's guess, not the claim's finding."""
        if self.finding in EFFECTS:
            return self.states_effect and not self.states_null
        return self.finding == NO_DIFFERENCE and self.states_null and not self.states_effect

    @property
    def reported(self) -> bool:
        """Whether the text answers the question at all (a finding or a yes / no)."""
        return self.finding != NOT_REPORTED or self.stance != NEUTRAL


def finding_disagreement(ra: Reading, rb: Reading) -> float:
    """The probability that two readings' findings (increase / decrease / no difference) differ, the two
    claims read independently: the sum of P_a(x)·P_b(y) over read findings x ≠ y (mass on not_reported counts
    as no disagreement)."""
    return sum(ra.finding_probs[x] * rb.finding_probs[y] for x in READ_FINDINGS for y in READ_FINDINGS if x != y)


def answers_differ(ra: Reading, rb: Reading) -> bool:
    """Whether two claims more likely answer their question oppositely (yes / no) than alike:
    P(yes)·P(no) + P(no)·P(yes) > P(yes)·P(yes) + P(no)·P(no)."""
    a, b = ra.stance_probs, rb.stance_probs
    return a[YES] * b[NO] + a[NO] * b[YES] > a[YES] * b[YES] + a[NO] * b[NO]


def disagreement(ra: Reading, rb: Reading, stated_only: bool = False, answers: bool = False) -> str | None:
    """Why two readings of the SAME question disagree (a key of ``ontology.DISAGREEMENT_REASONS``), or None.

    Both findings read (increase / decrease / no difference): they decide. Different findings disagree when
    the reader's own probabilities say they more likely differ than not (``finding_disagreement`` > 1/2, the
    decision that is right most often if the probabilities are; no fitted threshold): increase vs decrease →
    ``opposite_direction``, an effect vs no difference → ``null_vs_effect``; the same finding, or a difference
    the reader is unsure of → None. Otherwise (a finding not read; not under ``stated_only``, whose arm
    phrasing is no yes / no question) the answers to the question as asked: ``opposite_answer`` when the two
    claims more likely answer it oppositely (yes / no) than alike, P(yes)·P(no) + P(no)·P(yes) >
    P(yes)·P(yes) + P(no)·P(no). The finding is read relative to the question, so a negation word alone never
    makes a disagreement, and a reading that does not answer the question (``Reading.reported`` false)
    disagrees with nothing.

    ``stated_only`` (the annotator's rule for claims of abstracts asked a declared question) calls only an
    effect against no effect, each the reader's majority reading (``Reading.majority``) and stated by its own
    text (``Reading.stated``: a significant test for an effect, a null for no difference, not a mixed result).
    Why (measured on the held-out Evidence Inference articles, a development set for this choice, n 724):
    of the readings that pass, the reader confuses effect with no effect in 3 of 513, but swaps increase and
    decrease in 61 of the 291 passing readings of real effects, so two opposite effects are mostly misreadings;
    and on the Cohen demo the readings that fail were the conflicts a reader of the rows rejected (rates set side
    by side with no test read as no difference, a significant result misread as a null).

    ``answers`` (the annotator's rule for claims asked a yes / no question as written: review conclusions,
    HealthVer evidence; ``reader_annotator.by_answers``): the answers decide, as
    ``opposite_answer``, and the findings do not. The stance head learned exactly that (PubMedQA questions,
    SciFact and HealthVer claims against texts), while the finding head learned directions between two named
    arms, which such a question need not name. Chosen on development parts, with a reader trained without them
    (PubMedQA pairs carrying their question, n 133: κ 0.41 by findings, 0.53 by answers; HealthVer same-claim
    pairs, n 834: −0.04 and 0.03)."""
    if not (ra.reported and rb.reported):
        return None
    if answers:
        return OPPOSITE_ANSWER if answers_differ(ra, rb) else None
    if ra.finding in READ_FINDINGS and rb.finding in READ_FINDINGS:
        findings = {ra.finding, rb.finding}
        if len(findings) == 1 or finding_disagreement(ra, rb) <= 0.5:
            return None
        if stated_only and (findings == EFFECTS or not all(r.stated and r.majority for r in (ra, rb))):
            return None
        return "opposite_direction" if findings == EFFECTS else "null_vs_effect"
    if stated_only:
        return None
    return OPPOSITE_ANSWER if answers_differ(ra, rb) else None


class HeadedReader:
    """What the finding reader and the question answerer share: a network of named heads (``build_network``) read
    back from its float16 delta over the base model, its logits over (question, text) pairs in length-sorted
    batches, and a cache of what it read per (question, text), spaces aside."""

    #: the progress bar's name
    desc = "reading"

    def __init__(self, folder: Path, base_model: str, heads: dict[str, int], weights_file: str, max_length: int,
                 device: str = "cpu", weights_sha256: str | None = None):
        import torch
        from safetensors.torch import load
        from transformers import AutoTokenizer

        from ..embeddings import resolve_model
        from .compact import expand_delta

        try:
            local = Path(resolve_model(base_model)).is_dir()
        except FileNotFoundError:
            local = False
        if not local:  # a Hub id would be fetched from the network
            raise ValueError(f"{folder}: base_model {base_model!r} is neither a model folder nor an installed model "
                             "(nothing is downloaded)")
        weights = folder / weights_file
        try:
            data = weights.read_bytes()
        except OSError as exc:
            raise ValueError(f"{weights}: not readable ({exc.strerror})") from None
        if weights_sha256 is not None and hashlib.sha256(data).hexdigest() != weights_sha256:
            raise ValueError(f"{weights}: not the weights its config names (sha256 differs): changed or damaged")
        try:
            delta = load(data)
        except Exception as exc:  # safetensors raises its own error types for truncated or foreign files
            raise ValueError(f"{weights}: not a readable safetensors file ({exc})") from exc
        self.network = build_network(base_model, heads)
        try:
            tensors = expand_delta(delta, self.network.state_dict())
        except ValueError as exc:
            raise ValueError(f"{weights}: {exc}") from None
        missing, unexpected = self.network.load_state_dict(tensors, strict=False)
        if unexpected or any(k.split(".")[0] in heads for k in missing):
            raise ValueError(f"{weights}: weights do not fit {base_model} "
                             f"(unexpected {unexpected[:3]}, missing heads {[k for k in missing if '.' in k][:3]})")
        self.network.to(device).eval()
        self.tokenizer = AutoTokenizer.from_pretrained(resolve_model(base_model))
        self.max_length, self.device, self._torch = max_length, device, torch
        self._cache: dict[tuple[str, str], Any] = {}

    def save_encoder(self, out: str | Path) -> Path:
        """Write this network's encoder, without its heads, with its tokenizer as a plain ``AutoModel`` folder at
        ``out`` (swapped in whole), so another model can start from what the reader learned (``biodivergence train
        --encoder OUT``)."""
        from biodivergence_dataset.io import staging_folder, swap_folder

        out = Path(out)
        staging = staging_folder(out)
        self.network.encoder.save_pretrained(staging)
        self.tokenizer.save_pretrained(staging)
        return swap_folder(staging, out)

    def logits(self, pairs: Sequence[tuple[str, str]], batch_size: int = 64, progress: bool = False):
        """One numpy array of logits per head (in the network's head order), one row per (question, text)."""
        import numpy as np
        from tqdm.auto import tqdm

        order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
        outs = [np.zeros((len(pairs), getattr(self.network, name).out_features), dtype=np.float32)
                for name in self.network.head_names]
        with self._torch.inference_mode():
            for start in tqdm(range(0, len(order), batch_size), disable=not progress, desc=self.desc, unit="batch"):
                idx = order[start:start + batch_size]
                enc = self.tokenizer([pairs[i][0] for i in idx], [pairs[i][1] for i in idx], truncation=True,
                                     padding=True, max_length=self.max_length, return_tensors="pt").to(self.device)
                for out, head in zip(outs, self.network(**enc), strict=True):
                    out[idx] = head.float().cpu().numpy()
        return tuple(outs)

    def _read(self, pairs: Iterable[tuple[str, str]], batch_size: int, progress: bool, make) -> list:
        """``make(pair, *probabilities of each head)`` per (question, text), in order, each pair read once."""
        import numpy as np

        pairs = [(" ".join(q.split()), " ".join(t.split())) for q, t in pairs]
        todo = list(dict.fromkeys(p for p in pairs if p not in self._cache))
        if todo:
            probs = [_softmax(x, np) for x in self.logits(todo, batch_size, progress)]
            for pair, *heads in zip(todo, *probs, strict=True):
                self._cache[pair] = make(pair, *heads)
        return [self._cache[p] for p in pairs]


class FindingReader(HeadedReader):
    """A loaded reader; ``read`` caches its readings per (question, text)."""

    def __init__(self, folder: str | Path, device: str = "cpu"):
        self.folder = Path(folder)
        self.config = ReaderConfig.load(self.folder)
        super().__init__(self.folder, self.config.base_model, {"finding": len(self.config.findings),
                                                               "stance": len(self.config.stances)},
                         WEIGHTS_FILE, self.config.max_length, device, self.config.weights_sha256)

    @property
    def trained_on(self) -> frozenset[str]:
        return self.config.trained_on

    def marked(self, text: str, intervention: str, comparator: str) -> str:
        """``text`` as this reader reads it when the arms it is asked about are known: with ``mark_arms``
        marks if it learned them, else unchanged."""
        return mark_arms(text, intervention, comparator) if self.config.arm_marks else text

    def read(self, pairs: Iterable[tuple[str, str]], batch_size: int = 64, progress: bool = False) -> list[Reading]:
        """One Reading per (question, text), in order."""
        return self._read(pairs, batch_size, progress, lambda pair, f, s: self._reading(pair[1], f, s))

    def _reading(self, text: str, f, s) -> Reading:
        f_probs = {name: round(float(p), 4) for name, p in zip(self.config.findings, f, strict=True)}
        s_probs = {name: round(float(p), 4) for name, p in zip(self.config.stances, s, strict=True)}
        finding, stance = max(f_probs, key=f_probs.get), max(s_probs, key=s_probs.get)
        confidence = f_probs[finding] if finding != NOT_REPORTED else s_probs[stance]
        plain = unmarked(text)
        significance = stated_significance(plain) if finding != NOT_REPORTED or stance != NEUTRAL else None
        return Reading(finding, f_probs, stance, s_probs, significance, confidence, *stated_tests(plain))


def _softmax(x, np):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def reader_folder(path: str | Path | None = None) -> Path:
    """The folder of a reader: the shipped one (None), a local folder, or a Hub model id (read from the cache)."""
    if path is None:
        return SHIPPED
    if Path(path).is_dir():
        return Path(path)
    from huggingface_hub import snapshot_download

    return Path(snapshot_download(str(path)))


def load_reader(path: str | Path | None = None, device: str = "cpu") -> FindingReader:
    """The finding reader at ``path`` (None: the one shipped in the package)."""
    return FindingReader(reader_folder(path), device)
