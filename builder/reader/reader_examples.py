"""Training and evaluation examples of the finding reader, read at run time from ``../shared/data``.

Every example is (question, text) with a ``finding`` label (``ontology.READER_FINDINGS``) and/or a
``stance`` label (``ontology.READER_STANCES``); ``None`` where its source says nothing about that head.

- ``evidence_inference``: each verified expert finding (``Valid Label`` True) of a prompt (intervention,
  comparator, outcome), the evidence text against a question built from the prompt in one of several
  phrasings (``QUESTION_TEMPLATES``); directional phrasings also give the stance ("does I reduce O?" →
  yes iff decrease). Negatives (``not_reported`` / ``neutral``): the question against evidence of another
  article, and against a background / objective / methods sentence of its own abstract. With ``arm_marks``
  every text is marked with the arms of the prompt it is asked about (``model.mark_arms``).
- ``pubmedqa``: the question against the expert conclusion → stance yes / no. "maybe" is left out: the
  conclusion does address the question (so it is not ``neutral``) but gives no answer, and neither
  yes nor no would be true.
- ``scifact``: the claim (as the question) against each rationale → SUPPORT yes, CONTRADICT no; claims
  with no evidence (NEI) against sentences of the abstracts they cite → neutral.
- ``healthver``: the claim against its evidence → Supports yes / Refutes no / Neutral neutral.

``goldparts.is_heldout`` is the one out-of-fold partition (the check part) (20% of the articles / questions / claims of each source,
by a hash of their key): training leaves those out, evaluation and goldcheck score only those. Inside the
training part, ``is_development`` marks a development part (20% of the training keys, by another hash) for
choosing settings: a reader trained on the ``fit`` part is scored there, never on the held-out part (``goldparts.PARTS``).
"""

from __future__ import annotations

import csv
import hashlib
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from biodivergence_dataset import ontology

from ..annotators.judge_data import scifact_rationale_pairs
from ..checks import scifact_claims, scifact_corpus
from ..goldparts import Part, in_part
from ..goldsources import GoldPair, claim_key, gold_in_part, healthver_rows, pubmedqa_records
from ..sentences import split
from .model import EXCHANGED, mark_arms

#: Source → its folder under the data directory.
SOURCE_FOLDERS: dict[str, str] = {
    "evidence_inference": "evidence_inference",
    "pubmedqa": "pubmedqa_pqal",
    "scifact": "scifact",
    "healthver": "healthver",
}
SOURCES: tuple[str, ...] = tuple(SOURCE_FOLDERS)
#: What a reader trained on a part is scored on, and what the TF-IDF floor beside it trains on.
SCORED_ON: dict[str, str] = {"training": "heldout", "fit": "development"}
FLOOR_TRAINS_ON: dict[str, str] = {"heldout": "training", "development": "fit"}
INCREASE, DECREASE, NO_DIFFERENCE, NOT_REPORTED = ontology.READER_FINDINGS
YES, NO, NEUTRAL = ontology.READER_STANCES

EI_LABELS: dict[str, str] = {
    "significantly increased": INCREASE, "significantly increase": INCREASE,
    "significantly decreased": DECREASE, "no significant difference": NO_DIFFERENCE,
}
#: Question phrasings of an Evidence Inference prompt and what a "yes" to each means: a direction
#: (yes iff that finding), "change" (yes iff any effect, no iff no difference) or None (not a yes/no question).
QUESTION_TEMPLATES: tuple[tuple[str, str | None], ...] = (
    ("Is {o} higher, lower, or the same with {i} compared to {c}?", None),
    ("Does {i}, compared to {c}, change {o}?", "change"),
    ("Does {i} increase {o} compared with {c}?", INCREASE),
    ("In patients randomised to {i} or {c}, does {i} reduce {o} compared with {c}?", DECREASE),
    ("What is the effect of {i} versus {c} on {o}?", None),
    ("Does {i} lower {o} relative to {c}?", DECREASE),
    ("Is {o} affected by {i} compared to {c}?", "change"),
    ("Compared with {c}, does {i} raise {o}?", INCREASE),
)
#: The phrasing the annotator asks a claim its question in when it knows the question's arms (neutral: a
#: directional phrasing pulls the finding head towards its direction; on the development findings of a fit
#: reader, 62 and 65 swaps of increase and decrease under "reduce" / "lower", 43 to 48 under the others).
ARM_PHRASING = 0
#: Abstract sections whose sentences report no result (negatives of their own prompts).
NON_RESULT_SECTIONS = ("BACKGROUND", "OBJECTIVE", "OBJECTIVES", "METHODS", "INTRODUCTION", "AIM", "AIMS", "PURPOSE")
_SECTION = re.compile(r"^ABSTRACT\.([A-Z &/]+):\s*$", re.MULTILINE)
_TITLE = re.compile(r"^TITLE:\s*$", re.MULTILINE)


def heldout_gold(gold: GoldPair) -> bool:
    """Whether a goldcheck pair is made only of held-out items (its ``keys``: claim ids, a claim's text, a
    PMID) of the source they come from: the only gold pairs a reader may be scored on."""
    return gold_in_part(gold, "heldout")


@dataclass(frozen=True)
class ReaderExample:
    """One (question, text) with its labels; ``key`` is what ``is_heldout`` partitions on."""

    question: str
    text: str
    finding: str | None
    stance: str | None
    source: str
    key: str


def squeeze_spaces(text: str) -> str:
    """``text`` with every run of whitespace one space, none at the ends."""
    return " ".join(text.split())


def stance_for(direction: str | None, finding: str) -> str | None:
    """The answer to a phrasing asking about ``direction`` of an article reporting ``finding``."""
    if direction is None:
        return None
    if direction == "change":
        return NO if finding == NO_DIFFERENCE else YES
    return YES if finding == direction else NO


# --------------------------------------------------------------------------- Evidence Inference


@dataclass(frozen=True)
class EIPrompt:
    prompt_id: str
    pmcid: str
    intervention: str
    comparator: str
    outcome: str

    def question(self, template: int) -> str:
        return QUESTION_TEMPLATES[template][0].format(i=self.intervention, c=self.comparator, o=self.outcome)

    def marked(self, text: str) -> str:
        """``text`` with this prompt's arm words marked (``model.mark_arms``)."""
        return mark_arms(text, self.intervention, self.comparator)

    def exchanged(self) -> EIPrompt:
        """The prompt with its intervention and comparator exchanged (its finding's direction flips)."""
        return replace(self, intervention=self.comparator, comparator=self.intervention)


@dataclass(frozen=True)
class EIFinding:
    prompt: EIPrompt
    text: str
    finding: str


def ei_prompts(folder: Path) -> dict[str, EIPrompt]:
    with open(folder / "prompts_merged.csv", newline="", encoding="utf-8") as fh:
        return {row["PromptID"]: EIPrompt(row["PromptID"], row["PMCID"], squeeze_spaces(row["Intervention"]),
                                          squeeze_spaces(row["Comparator"]), squeeze_spaces(row["Outcome"]))
                for row in csv.DictReader(fh)}


def ei_findings(folder: str | Path) -> list[EIFinding]:
    """Verified findings (``Valid Label`` True), one per (prompt, evidence text); ValueError naming the row
    for a label outside ``EI_LABELS``."""
    folder = Path(folder)
    prompts = ei_prompts(folder)
    seen: set[tuple[str, str]] = set()
    out = []
    with open(folder / "v2_annotations.csv", newline="", encoding="utf-8") as fh:
        for n, row in enumerate(csv.DictReader(fh), start=2):
            if row["Valid Label"] != "True" or row["PromptID"] not in prompts:
                continue
            if row["Label"] not in EI_LABELS:
                raise ValueError(f"{folder / 'v2_annotations.csv'} line {n}: unknown label {row['Label']!r}")
            text = squeeze_spaces(row["Annotations"])
            if text and (row["PromptID"], text) not in seen:
                seen.add((row["PromptID"], text))
                out.append(EIFinding(prompts[row["PromptID"]], text, EI_LABELS[row["Label"]]))
    return out


def ei_abstract(folder: Path, pmcid: str) -> tuple[str, list[tuple[str, str]]] | None:
    """An Evidence Inference article's title and its abstract's ``(section label, text)`` parts, as its
    ``abstracts/PMC<id>.abst`` file gives them (None without one)."""
    path = folder / "abstracts" / f"PMC{pmcid}.abst"
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8")
    heads = list(_SECTION.finditer(text))
    title = ""
    if m := _TITLE.search(text):
        title = " ".join(text[m.end():next((h.start() for h in heads if h.start() > m.end()), len(text))].split())
    parts = [(head.group(1).strip(), text[head.end():nxt.start() if nxt else len(text)])
             for head, nxt in zip(heads, heads[1:] + [None])]
    return title, parts


def non_result_sentences(folder: Path, pmcid: str) -> list[str]:
    """Sentences of the background / objective / methods sections of an article's abstract ([] without one)."""
    abstract = ei_abstract(folder, pmcid)
    if abstract is None:
        return []
    return [s for label, body in abstract[1] if label in NON_RESULT_SECTIONS
            for s in split(squeeze_spaces(body)) if len(s) > 30]


def hashed_choice(key: str, n: int) -> int:
    """An index in ``range(n)`` drawn by a hash of ``key``: the same key picks the same one in every run."""
    return int.from_bytes(hashlib.sha1(key.encode()).digest()[:4], "big") % n


def phrasing(finding: EIFinding, seed: int = 0) -> int:
    """The question phrasing (index into ``QUESTION_TEMPLATES``) a finding is asked in: a hash of its text."""
    return hashed_choice(f"{finding.prompt.prompt_id}:{finding.text}:{seed}", len(QUESTION_TEMPLATES))


def ei_examples(folder: Path, part: Part, seed: int = 0, negative_every: int = 2,
                arm_marks: bool = False, phrasings: int = 1, exchange_arms: bool = False) -> Iterator[ReaderExample]:
    """Each finding in ``phrasings`` phrasings (the first picked by a hash of the text, then the next ones of
    ``QUESTION_TEMPLATES``), plus a negative for every ``negative_every``-th prompt: another article's evidence
    or a non-result sentence of its own abstract; ``arm_marks``: each text marked with the arms of the prompt it
    is asked about; ``exchange_arms`` (with ``arm_marks``): each finding whose text marks an arm is asked once more
    with the two arms exchanged, its direction flipped, so that the marks, not the sentence's subject alone,
    decide the direction (``exchanged_example``)."""
    if not 1 <= phrasings <= len(QUESTION_TEMPLATES):
        raise ValueError(f"phrasings must be 1..{len(QUESTION_TEMPLATES)}, not {phrasings}")
    findings = [f for f in ei_findings(folder) if in_part("evidence_inference", f.prompt.pmcid, part)]
    rng = random.Random(seed)
    for f in findings:
        text, first = f.prompt.marked(f.text) if arm_marks else f.text, phrasing(f, seed)
        for shift in range(phrasings):
            template = (first + shift) % len(QUESTION_TEMPLATES)
            yield ReaderExample(f.prompt.question(template), text, f.finding,
                                stance_for(QUESTION_TEMPLATES[template][1], f.finding), "evidence_inference",
                                f.prompt.pmcid)
        if exchange_arms and arm_marks and (other := exchanged_example(f, seed)):
            yield other
    prompts = sorted({f.prompt for f in findings}, key=lambda p: int(p.prompt_id))
    for prompt in prompts[::negative_every]:
        question = prompt.question(hashed_choice(f"neg:{prompt.prompt_id}:{seed}", len(QUESTION_TEMPLATES)))
        own = non_result_sentences(folder, prompt.pmcid) if hashed_choice(f"kind:{prompt.prompt_id}", 2) else []
        if own:
            text = own[hashed_choice(f"own:{prompt.prompt_id}", len(own))]
        else:
            other = rng.choice(findings)
            if other.prompt.pmcid == prompt.pmcid:
                continue
            text = other.text
        yield ReaderExample(question, prompt.marked(text) if arm_marks else text, NOT_REPORTED, NEUTRAL,
                            "evidence_inference", prompt.pmcid)


def exchanged_example(finding: EIFinding, seed: int = 0) -> ReaderExample | None:
    """``finding`` asked with its arms exchanged, in a phrasing picked by a hash: the text marked for the exchanged
    arms and the direction flipped (no difference stays). None when the text marks neither arm: the same words
    asked both ways would carry opposite labels, which teaches the reader to ignore the direction (a reader
    trained with every finding exchanged read most effects as increases)."""
    prompt = finding.prompt.exchanged()
    text = prompt.marked(finding.text)
    if text == finding.text:
        return None
    template = hashed_choice(f"exchanged:{finding.prompt.prompt_id}:{finding.text}:{seed}", len(QUESTION_TEMPLATES))
    label = EXCHANGED.get(finding.finding, finding.finding)
    return ReaderExample(prompt.question(template), text, label, stance_for(QUESTION_TEMPLATES[template][1], label),
                         "evidence_inference", finding.prompt.pmcid)


# --------------------------------------------------------------------------- PubMedQA, SciFact, HealthVer


def pubmedqa_examples(folder: Path, part: Part) -> Iterator[ReaderExample]:
    """Question vs expert conclusion → yes / no ("maybe" left out, see the module docstring)."""
    for pmid, rec in sorted(pubmedqa_records(folder).items()):
        if rec["final_decision"] in (YES, NO) and in_part("pubmedqa", pmid, part):
            yield ReaderExample(squeeze_spaces(rec["QUESTION"]), squeeze_spaces(rec["LONG_ANSWER"]), None, rec["final_decision"],
                                "pubmedqa", pmid)


def scifact_examples(folder: Path, part: Part, neutral_per_claim: int = 2) -> Iterator[ReaderExample]:
    """Claim vs rationale → yes (SUPPORT) / no (CONTRADICT); NEI claims vs sentences of their cited abstracts."""
    for p in scifact_rationale_pairs(folder):
        if in_part("scifact", p.group, part):
            yield ReaderExample(squeeze_spaces(p.text_a), squeeze_spaces(p.text_b), None, NO if p.conflict else YES, "scifact",
                                p.group)
    docs = scifact_corpus(folder)
    for claim in scifact_claims(folder):
        key = f"scifact-claim:{claim['id']}"
        if claim["evidence"] or not in_part("scifact", key, part):
            continue
        sentences = [doc.abstract.text[slice(*span)] for d in claim.get("cited_doc_ids", ())
                     if (doc := docs.get(int(d))) for span in doc.sentence_spans if span[1] > span[0]]
        for i in range(min(neutral_per_claim, len(sentences))):
            text = sentences[hashed_choice(f"{key}:{i}", len(sentences))]
            yield ReaderExample(squeeze_spaces(claim["claim"]), text, None, NEUTRAL, "scifact", key)


HEALTHVER_STANCES = {"Supports": YES, "Refutes": NO, "Neutral": NEUTRAL}


def healthver_examples(folder: Path, part: Part) -> Iterator[ReaderExample]:
    """Claim vs evidence → Supports yes / Refutes no / Neutral neutral."""
    for name, row in healthver_rows(folder):
        if row["label"] not in HEALTHVER_STANCES:
            raise ValueError(f"{folder / name} row id {row['id']}: unknown label {row['label']!r}")
        if in_part("healthver", claim_key(row["claim"]), part):
            yield ReaderExample(squeeze_spaces(row["claim"]), squeeze_spaces(row["evidence"]), None, HEALTHVER_STANCES[row["label"]],
                                "healthver", claim_key(row["claim"]))


def source_path(source: str, data_dir: str | Path) -> Path:
    """The folder of ``source`` (ValueError naming the known sources, FileNotFoundError naming the folder)."""
    if source not in SOURCE_FOLDERS:
        raise ValueError(f"unknown reader source {source!r}; expected one of {list(SOURCES)}")
    path = Path(data_dir) / SOURCE_FOLDERS[source]
    if not path.is_dir():
        raise FileNotFoundError(f"reader source {source!r}: folder {path} does not exist")
    return path


def load_examples(source: str, data_dir: str | Path, part: Part = "training",
                  arm_marks: bool = False, phrasings: int = 1, exchange_arms: bool = False) -> list[ReaderExample]:
    """The examples of one source in ``part`` (``goldparts.PARTS``); ``arm_marks``: Evidence Inference texts marked with
    their prompt's arms (the other sources name no arms); ``phrasings``: questions asked of each Evidence
    Inference finding; ``exchange_arms``: each marked finding asked with its arms exchanged too."""
    path = source_path(source, data_dir)
    if source == "evidence_inference":
        return list(ei_examples(path, part, arm_marks=arm_marks, phrasings=phrasings, exchange_arms=exchange_arms))
    return list({"pubmedqa": pubmedqa_examples, "scifact": scifact_examples,
                 "healthver": healthver_examples}[source](path, part))


def training_examples(data_dir: str | Path, sources: tuple[str, ...] = SOURCES,
                      max_per_source: dict[str, int] | None = None, seed: int = 0,
                      arm_marks: bool = False, part: Part = "training", phrasings: int = 1,
                      exchange_arms: bool = False) -> list[ReaderExample]:
    """The examples of ``sources`` in ``part`` (``training``: all but the held-out part; ``fit``: the
    development part left out too), at most ``max_per_source[source]`` of each (a seeded sample)."""
    if part not in SCORED_ON:
        raise ValueError(f"a reader trains on one of {list(SCORED_ON)}, not {part!r}")
    out: list[ReaderExample] = []
    for source in sources:
        examples = load_examples(source, data_dir, part, arm_marks=arm_marks, phrasings=phrasings,
                                 exchange_arms=exchange_arms)
        cap = (max_per_source or {}).get(source)
        if cap is not None and len(examples) > cap:
            examples = random.Random(f"{seed}:{source}").sample(examples, cap)
        out.extend(examples)
    return out


def data_fingerprint(examples: list[ReaderExample]) -> str:
    """sha256 over the examples (in order): what a saved reader was trained on."""
    h = hashlib.sha256()
    for e in examples:
        h.update("\x1f".join((e.source, e.key, e.question, e.text, e.finding or "", e.stance or "")).encode())
        h.update(b"\x1e")
    return h.hexdigest()
