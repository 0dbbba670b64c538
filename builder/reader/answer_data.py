"""Training examples of the question answerer, read at run time from ``../shared/data``.

Every example is (question, text) with ``relevant`` (does the text report a result on the question) and, for a
relevant text that answers a yes / no question, ``answer`` (yes / no); ``None`` where the source says nothing.
Only the development part of each source is used (``reader_examples.in_part``; the check part is never trained on):

- ``evidence_inference``: each verified finding asked in two phrasings of its prompt (``reader_examples.QUESTION_TEMPLATES``,
  picked by a hash): relevant, answered when the phrasing asks a direction ("does I reduce O compared with C?" →
  yes iff decrease). Not relevant: a background / methods sentence of its own abstract, the evidence of another
  prompt of the same article whose outcome shares no content word with this one (a result on another outcome:
  the hard negative a question stage meets most), and another article's evidence; with ``cross_trial``, also the
  evidence of another article's prompt on an outcome that shares a content word with this one but an intervention
  that shares none (another trial's result on a like outcome: what the learned assigner confuses most).
- ``pubmedqa``: the question against its expert conclusion (relevant; yes / no, "maybe" unanswered) and against
  another question's conclusion (not relevant).
- ``scifact`` / ``healthver``: a claim, standing as the question, against the texts experts judged on it:
  SUPPORT / CONTRADICT rationales and Supports / Refutes evidence are relevant and answer it yes / no, sentences
  of the abstracts an unverifiable claim cites and Neutral evidence are not relevant. A claim plays the question
  wherever no question is declared (an open pair, each claim asked the other), so the answer head learns to
  answer claims too (a first answerer that learned only their relevance answered them worse than the reader).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..frameterms import terms
from .reader_examples import (
    NO,
    QUESTION_TEMPLATES,
    YES,
    Part,
    ei_findings,
    hashed_choice,
    healthver_examples,
    in_part,
    non_result_sentences,
    pubmedqa_records,
    scifact_examples,
    source_path,
    squeeze_spaces,
    stance_for,
)

SOURCES: tuple[str, ...] = ("evidence_inference", "pubmedqa", "scifact", "healthver")


@dataclass(frozen=True)
class AnswerExample:
    question: str
    text: str
    relevant: bool
    #: yes / no to the question as written; None when the text does not answer a yes / no question
    answer: str | None
    source: str
    key: str


def ei_answer_examples(folder: Path, part: Part, phrasings: int = 2, cross_trial: bool = False
                       ) -> Iterator[AnswerExample]:
    """Evidence Inference findings as relevant examples (answered in directional phrasings) and three kinds of
    negatives per prompt, four with ``cross_trial`` (see the module docstring)."""
    findings = [f for f in ei_findings(folder) if in_part("evidence_inference", f.prompt.pmcid, part)]
    for f in findings:
        first = hashed_choice(f"answer:{f.prompt.prompt_id}:{f.text}", len(QUESTION_TEMPLATES))
        for shift in range(phrasings):
            template = (first + 3 * shift) % len(QUESTION_TEMPLATES)
            yield AnswerExample(f.prompt.question(template), f.text, True,
                                stance_for(QUESTION_TEMPLATES[template][1], f.finding), "evidence_inference",
                                f.prompt.pmcid)
    by_article: dict[str, list] = {}
    for f in findings:
        by_article.setdefault(f.prompt.pmcid, []).append(f)
    rng = random.Random("answer-negatives")
    prompts = sorted({f.prompt for f in findings}, key=lambda p: int(p.prompt_id))
    for prompt in prompts:
        question = prompt.question(hashed_choice(f"answer-neg:{prompt.prompt_id}", len(QUESTION_TEMPLATES)))
        own_texts = {f.text for f in by_article[prompt.pmcid] if f.prompt == prompt}
        negatives = []
        if own := non_result_sentences(folder, prompt.pmcid):
            negatives.append(own[hashed_choice(f"own:{prompt.prompt_id}", len(own))])
        outcome = terms(prompt.outcome)
        siblings = [f.text for f in by_article[prompt.pmcid]
                    if f.text not in own_texts and not (terms(f.prompt.outcome) & outcome)]
        if siblings:
            negatives.append(siblings[hashed_choice(f"sibling:{prompt.prompt_id}", len(siblings))])
        other = rng.choice(findings)
        if other.prompt.pmcid != prompt.pmcid:
            negatives.append(other.text)
        if cross_trial and (like := other_trials_on_like_outcomes(prompt, findings)):
            negatives.append(like[hashed_choice(f"cross:{prompt.prompt_id}", len(like))])
        for text in negatives:
            yield AnswerExample(question, text, False, None, "evidence_inference", prompt.pmcid)


def other_trials_on_like_outcomes(prompt, findings: list) -> list[str]:
    """The evidence texts of other articles' prompts whose outcome shares a content word with ``prompt``'s and
    whose intervention shares none with its intervention (sorted, so a hash picks one reproducibly)."""
    outcome, treatment = _terms(prompt.outcome), _terms(prompt.intervention)
    return sorted({f.text for f in findings if f.prompt.pmcid != prompt.pmcid and _terms(f.prompt.outcome) & outcome
                   and not _terms(f.prompt.intervention) & treatment})


#: ``frameterms.terms`` read once per phrase (each prompt's phrases are compared with every other prompt's).
_terms = lru_cache(maxsize=None)(terms)


def pubmedqa_answer_examples(folder: Path, part: Part) -> Iterator[AnswerExample]:
    """Each question against its own conclusion (yes / no; "maybe" relevant but unanswered) and against the
    conclusion of another question of the same part (not relevant)."""
    records = sorted((pmid, rec) for pmid, rec in pubmedqa_records(folder).items() if in_part("pubmedqa", pmid, part))
    for i, (pmid, rec) in enumerate(records):
        question = squeeze_spaces(rec["QUESTION"])
        decision = rec["final_decision"]
        yield AnswerExample(question, squeeze_spaces(rec["LONG_ANSWER"]), True, decision if decision in (YES, NO) else None,
                            "pubmedqa", pmid)
        other = records[(i + 1 + hashed_choice(f"other:{pmid}", len(records) - 1)) % len(records)][1]
        yield AnswerExample(question, squeeze_spaces(other["LONG_ANSWER"]), False, None, "pubmedqa", pmid)


def claim_relevance_examples(source: str, folder: Path, part: Part) -> Iterator[AnswerExample]:
    """SciFact / HealthVer claims against the texts judged on them: relevant and answered unless judged neutral."""
    reader_examples = scifact_examples(folder, part) if source == "scifact" else healthver_examples(folder, part)
    for e in reader_examples:
        answered = e.stance in (YES, NO)
        yield AnswerExample(e.question, e.text, answered, e.stance if answered else None, source, e.key)


def answer_examples(data_dir: str | Path, sources: tuple[str, ...] = SOURCES, part: Part = "training",
                    max_per_source: dict[str, int] | None = None, seed: int = 0, cross_trial: bool = False
                    ) -> list[AnswerExample]:
    """The examples of ``sources`` in ``part`` (the development part, ``training``, by default), at most
    ``max_per_source[source]`` of each (a seeded sample); ``cross_trial``: see ``ei_answer_examples``."""
    out: list[AnswerExample] = []
    for source in sources:
        folder = source_path(source, data_dir)
        if source == "evidence_inference":
            examples = list(ei_answer_examples(folder, part, cross_trial=cross_trial))
        elif source == "pubmedqa":
            examples = list(pubmedqa_answer_examples(folder, part))
        else:
            examples = list(claim_relevance_examples(source, folder, part))
        cap = (max_per_source or {}).get(source)
        if cap is not None and len(examples) > cap:
            examples = random.Random(f"{seed}:{source}").sample(examples, cap)
        out.extend(examples)
    return out
