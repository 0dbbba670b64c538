"""Zero-shot transfer baselines: an NLI cross-encoder, and an instruction-tuned LLM behind a chat server.

NLI transfer (paper Table 4, "NLI transfer"): no NLI model can be installed offline here, so the
user names any sentence-transformers ``CrossEncoder`` folder or cached Hub id (``--nli PATH``).
The model's own ``id2label`` is read; ``contradiction`` → ``direct_contradiction``, every other
NLI label (entailment, neutral) → ``no_conflict``. Nothing is reported unless a model is given.

Zero-shot LLM (Tables 4, 5, 7, 8): every example is sent with the silver annotator's own prompt
(``builder.prompt``) to an OpenAI-compatible or Ollama server through the annotation backends
(``builder.annotators``; spec ``openai:URL?model=NAME`` or ``ollama:URL?model=NAME``), and the
answer goes through the annotator's schema repair (``builder.repair``), so the baseline sees
exactly what the silver annotator saw. ``builder`` is imported lazily here, only when ``--llm``
is used (the one place where ``trainer`` reaches into ``builder``). An answer that never parses
after ``attempts`` tries counts as an empty answer (repaired to ``no_conflict``, nothing else),
never as a heuristic label; the number of such failures is reported.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

import numpy as np

from biodivergence_dataset import ontology

from .baseline_system import Record, Row

log = logging.getLogger(__name__)

NLI_CONTRADICTION = "contradiction"
DIRECT = ontology.check_label("conflict_type", "direct_contradiction")


def nli_label_map(id2label: Mapping[int, str]) -> list[str]:
    """Conflict type for each NLI output index (ValueError when the model has no contradiction label)."""
    names = [str(id2label[i]).lower() for i in range(len(id2label))]
    if NLI_CONTRADICTION not in names:
        raise ValueError(f"the NLI model's labels {names} have no {NLI_CONTRADICTION!r}; cannot map them")
    return [DIRECT if n == NLI_CONTRADICTION else ontology.NO_CONFLICT for n in names]


def nli_transfer(model_name_or_path: str, batch_size: int = 32):
    """Conflict type from a zero-shot NLI cross-encoder on (claim_a, claim_b)."""

    def predict(train: Sequence[Row], rows: Sequence[Row], previous: Mapping[str, list[Record]]) -> list[Record]:
        from sentence_transformers import CrossEncoder

        model = CrossEncoder(model_name_or_path, device="cpu")
        mapping = nli_label_map(model.config.id2label)
        logits = model.predict([(r["claim_a_text"], r["claim_b_text"]) for r in rows], batch_size=batch_size,
                               show_progress_bar=False, convert_to_numpy=True)
        return [{"conflict_type": mapping[i]} for i in np.asarray(logits).reshape(len(rows), -1).argmax(-1)]

    return predict


def candidate_pair(row: Row):
    """The ``CandidatePair`` an annotator would have seen for a release row."""
    from biodivergence_dataset.records import CandidatePair, Claim, MiningScores

    claims = []
    for side in "ab":
        text = row[f"claim_{side}_text"]
        claims.append(Claim(
            claim_id=row[f"claim_{side}_id"], article_uid=row[f"article_uid_{side}"], domain=row["domain"],
            sentence=text, claim_type=row[f"claim_{side}_type"], sentence_start=0, sentence_end=len(text),
            confidence=1.0, pub_year=row.get(f"pub_year_{side}"), journal=row.get(f"journal_{side}") or None,
        ))
    scores = MiningScores(**{k: float(row.get(k) or 0.0) for k in MiningScores.model_fields})
    return CandidatePair(pair_id=row["pair_id"], domain=row["domain"], claim_a=claims[0], claim_b=claims[1],
                         abstract_a=row.get("abstract_a") or "", abstract_b=row.get("abstract_b") or "", scores=scores)


def _labels_record(labels) -> Record:
    return {
        "conflict_type": labels.conflict_type,
        "divergence_axes": list(labels.divergence_axes),
        "dominant_confounder": labels.dominant_confounder or "",
        "reconciliation": labels.reconciliation,
        "evidence_spans": [s.model_dump() for s in labels.evidence_spans],
    }


class ZeroShotLLM:
    """Zero-shot answers of a chat server for release rows (see the module docstring)."""

    def __init__(self, spec: str, attempts: int = 2, timeout_s: float = 300.0, max_tokens: int = 512,
                 max_abstract_chars: int | None = None):
        from builder.annotators import make_backend, parse_spec

        self.backend = make_backend(parse_spec(spec), timeout_s=timeout_s, max_tokens=max_tokens)
        if self.backend is None:
            raise ValueError(f"--llm needs an openai: or ollama: spec, got {spec!r}")
        self.attempts = attempts
        self.max_abstract_chars = max_abstract_chars
        self.failures = 0

    def answer(self, row: Row) -> Record:
        """The repaired answer for one row; a server that stops answering ends the run (RuntimeError)."""
        from builder.annotators import BackendError, ServerUnreachable, parse_json_lenient
        from builder.prompt import DEFAULT_MAX_ABSTRACT_CHARS, build_messages, response_schema
        from builder.repair import Labels, repair

        pair = candidate_pair(row)
        messages = build_messages(pair, self.max_abstract_chars or DEFAULT_MAX_ABSTRACT_CHARS)
        labels: Labels | None = None
        for attempt in range(1, self.attempts + 1):
            try:  # an answer outside the ontology is a failed attempt (builder.repair.InvalidAnswer, a ValueError)
                labels, _ = repair(parse_json_lenient(self.backend.complete(messages, response_schema()).content), pair)
                break
            except BackendError as exc:
                if exc.kind == "unreachable":
                    raise ServerUnreachable(f"{self.backend.url} stopped answering: {exc.detail}") from exc
                log.warning("pair %s attempt %d: %s", row["pair_id"], attempt, exc)
                if not exc.retryable:
                    break
            except ValueError as exc:
                log.warning("pair %s attempt %d: %s", row["pair_id"], attempt, exc)
        if labels is None:  # no usable answer: counted, and predicted as no conflict with no confidence
            self.failures += 1
            labels = Labels(ontology.NO_CONFLICT, confidence=0.0)
        return _labels_record(labels)

    def __call__(self, train: Sequence[Row], rows: Sequence[Row], previous: Mapping[str, list[Record]]) -> list[Record]:
        from tqdm.auto import tqdm

        self.backend.check()
        try:
            return [self.answer(r) for r in tqdm(rows, desc=f"zero-shot {self.backend.model}", leave=False)]
        finally:
            self.backend.close()
