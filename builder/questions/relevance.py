"""Learned question assignment: a claim answers the questions it reports a result on, as the question answerer
reads it (``reader.answerer``: relevance > 0.5), not as a lexicon and rules tuned on one corpus read it.

Used by the questions stage when its config says ``assigner: learned``. Each claim passes the general filters
first (``drop_reason``: a baseline description, a correlation, an interaction or a mediation analysis reports no
comparison of the arms in any field), then is asked the ``candidates`` questions closest to it by embedding
cosine (at least ``min_similarity``); it is assigned to each the answerer reads it as speaking to, and an article
answers a question once, with its claim the answerer reads as speaking to it most (``best_per_article``, over the
whole stage: a results sentence and the conclusion restating it would otherwise make two rows of one finding). Why a claim
answers no question is kept as a drop reason (``no_close_question``, ``not_relevant``, ``not_best_of_article``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

#: A general filter: whether a sentence answers no question in any field (its name is the drop reason).
Filter = Callable[[str], bool]
#: Per claim: the questions it answers as (question index, relevance, cosine), and why it answers none (or None).
Found = list[tuple[list[tuple[int, float, float]], str | None]]


def drop_reason(sentence: str, filters: Sequence[tuple[str, Filter]]) -> str | None:
    """The name of the first filter that drops ``sentence`` (datatrove's filter shape: keep, or a reason)."""
    return next((name for name, rejects in filters if rejects(sentence)), None)


def candidate_questions(similarities: np.ndarray, candidates: int, min_similarity: float) -> list[int]:
    """The indices of the ``candidates`` questions closest to one claim, those at ``min_similarity`` or above."""
    order = np.argsort(-similarities)[:candidates]
    return [int(j) for j in order if similarities[j] >= min_similarity]


def learned_assignments(sentences: list[str], similarities: np.ndarray, question_texts: list[str], answerer,
                        candidates: int, min_similarity: float) -> Found:
    """For each claim sentence (one row of ``similarities`` against the questions): the questions it answers as
    (question index, relevance, cosine), and why it answers none (or None)."""
    asked = [candidate_questions(row, candidates, min_similarity) for row in similarities]
    pairs = [(question_texts[j], s) for s, js in zip(sentences, asked, strict=True) for j in js]
    read = iter(answerer.read(pairs) if pairs else [])
    out = []
    for row, js in zip(similarities, asked, strict=True):
        answers = [(j, next(read).relevance, float(row[j])) for j in js]
        found = [(j, r, c) for j, r, c in answers if r > 0.5]
        out.append((found, None if found else "not_relevant" if js else "no_close_question"))
    return out


def best_per_article(rows: Sequence[tuple[str, str, float]]) -> list[bool]:
    """For assignment rows ``(article, question, relevance)`` in order: whether each is kept, one per (article,
    question), the article's claim of highest relevance to it (the first on a tie). Run once over the whole stage,
    since an article's claims may fall in two shards."""
    best: dict[tuple[str, str], tuple[float, int]] = {}
    for i, (article, question, relevance) in enumerate(rows):
        if (article, question) not in best or relevance > best[(article, question)][0]:
            best[(article, question)] = (relevance, i)
    return [best[(article, question)][1] == i for i, (article, question, _) in enumerate(rows)]
