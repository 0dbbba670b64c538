"""Claim-level evidence-span baselines (paper Table 8): span heuristic, BM25 and dense retrieval.

All three return substrings of the claims (the v1.0 silver rule copies spans verbatim from the
claims). The heuristic returns each claim minus a leading reporting frame ("Our results suggest
that …") and its final full stop. The retrievers split each claim into clauses and return, per
claim, the clause that best matches the *other* claim — by BM25 (``rank_bm25``, IDF over every
clause of the evaluated split) or by cosine similarity of MiniLM sentence embeddings.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np

from biodivergence_dataset import ontology

from .baseline_system import Record, Row, clauses, span, words

_REPORTING_FRAME = re.compile(
    r"^(?:(?:in conclusion|in summary|overall|taken together|together|collectively|thus|therefore|however),?\s+)?"
    r"(?:(?:these|our|the|this|present)\s+(?:\w+\s+){0,2}?(?:results?|findings?|data|study|analysis|work|trial)"
    r"|we|it)\s+(?:\w+\s+){0,2}?"
    r"(?:shows?|showed|shown|suggests?|suggested|demonstrates?|demonstrated|indicates?|indicated|reveals?|revealed|"
    r"confirms?|confirmed|found|find|report|reported|observed|conclude|concluded|support|supports)\s+(?:that\s+)?",
    re.IGNORECASE,
)
ROLES = ontology.SPAN_ROLES


def _core(text: str) -> tuple[int, int]:
    """The claim without a leading reporting frame and trailing punctuation."""
    m = _REPORTING_FRAME.match(text)
    start = m.end() if m and m.end() < len(text) else 0
    end = len(text)
    while end > start and (text[end - 1].isspace() or text[end - 1] in "."):
        end -= 1
    return start, end


def heuristic(train: Sequence[Row], rows: Sequence[Row], previous: Mapping[str, list[Record]]) -> list[Record]:
    out = []
    for r in rows:
        spans = [span(r, role, *_core(r[f"claim_{role[-1]}_text"])) for role in ROLES]
        out.append({"evidence_spans": spans})
    return out


def _clause_table(rows: Sequence[Row]) -> list[tuple[int, str, int, int]]:
    """(row index, role, start, end) of every clause of every claim."""
    table = []
    for i, r in enumerate(rows):
        for role in ROLES:
            table += [(i, role, a, b) for a, b in clauses(r[f"claim_{role[-1]}_text"])]
    return table


def _other_claim(row: Row, role: str) -> str:
    return row["claim_b_text"] if role == ROLES[0] else row["claim_a_text"]


def _pick(rows: Sequence[Row], table, scores: np.ndarray) -> list[Record]:
    """The best-scoring clause of each claim (first clause on ties)."""
    best: dict[tuple[int, str], tuple[float, int, int]] = {}
    for (i, role, a, b), s in zip(table, scores):
        if (i, role) not in best or s > best[(i, role)][0]:
            best[(i, role)] = (float(s), a, b)
    return [{"evidence_spans": [span(r, role, *best[(i, role)][1:]) for role in ROLES if (i, role) in best]}
            for i, r in enumerate(rows)]


def _clause_text(rows: Sequence[Row], entry) -> str:
    i, role, a, b = entry
    return rows[i][f"claim_{role[-1]}_text"][a:b]


def bm25(train: Sequence[Row], rows: Sequence[Row], previous: Mapping[str, list[Record]]) -> list[Record]:
    from rank_bm25 import BM25Okapi

    table = _clause_table(rows)
    index = BM25Okapi([words(_clause_text(rows, e)) or ["_"] for e in table])
    scores = np.empty(len(table))
    for k, (i, role, _, _) in enumerate(table):
        query = words(_other_claim(rows[i], role))
        scores[k] = index.get_batch_scores(query, [k])[0] if query else 0.0
    return _pick(rows, table, scores)


def dense(model_name_or_path: str | None = None, batch_size: int = 64):
    """Dense retrieval with a sentence-transformers model (default: the packaged all-MiniLM-L6-v2)."""

    def predict(train: Sequence[Row], rows: Sequence[Row], previous: Mapping[str, list[Record]]) -> list[Record]:
        from sentence_transformers import SentenceTransformer

        from ..encoders import packaged_minilm

        model = SentenceTransformer(str(model_name_or_path or packaged_minilm()), device="cpu")

        def encode(texts: list[str]) -> np.ndarray:
            return model.encode(texts, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True,
                                show_progress_bar=False)

        table = _clause_table(rows)
        claims = encode([r[f"claim_{side}_text"] for r in rows for side in "ab"]).reshape(len(rows), 2, -1)
        other = {ROLES[0]: 1, ROLES[1]: 0}
        queries = np.stack([claims[i, other[role]] for i, role, _, _ in table])
        return _pick(rows, table, (encode([_clause_text(rows, e) for e in table]) * queries).sum(axis=1))

    return predict
