"""Labelling one candidate pair: the local panel members' votes, an LLM's answer (attempts, repair, fallback to
the local members) and the release row the panel's consensus makes.

Every server attempt is appended durably to ``raw_responses.jsonl`` and every fallback to ``failures.jsonl`` with its
retry history, as soon as it happens.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from biodivergence_dataset import ontology
from biodivergence_dataset.io import append_jsonl_rows
from biodivergence_dataset.records import CandidatePair, ClaimFrame, Example
from biodivergence_dataset.redact import redact

from .annotate_config import AnnotateConfig
from .annotators import DEFAULT_ANNOTATOR, BackendError, ChatBackend, ServerUnreachable, make_local, parse_json_lenient
from .annotators.frame_annotator import compared_frames
from .annotators.panel import DEFAULT_WEIGHTS, Vote, consensus
from .http import RetryPolicy
from .prompt import PROMPT_VERSION, build_messages, response_schema
from .repair import InvalidAnswer, repair

RAW_FILE = "raw_responses.jsonl"
FAILURES_FILE = "failures.jsonl"
LLM_KIND = ontology.check_label("annotator_kind", "llm")
#: How a pair got its labels.
SOURCE_LLM, SOURCE_FALLBACK, SOURCE_LOCAL = "llm", "local_fallback", "local"


@dataclass
class Outcome:
    """The result for one pair, as appended to annotations.jsonl."""

    pair_id: str
    source: str
    example: Example
    repairs: Counter = field(default_factory=Counter)
    attempts: int = 0
    reused_raw: bool = False

    def row(self) -> dict[str, Any]:
        return {"pair_id": self.pair_id, "source": self.source, "repairs": dict(self.repairs),
                "attempts": self.attempts, "reused_raw": self.reused_raw,
                "example": self.example.model_dump(mode="json")}


class JsonlLog:
    """A thread-safe durable JSONL appender (a line torn by a kill is mended before the next append)."""

    def __init__(self, path: Path):
        self.path, self._lock = path, threading.Lock()

    def append(self, row: dict[str, Any]) -> None:
        self.extend([row])

    def extend(self, rows: list[dict[str, Any]]) -> None:
        """Append several rows with one flush + fsync."""
        if not rows:
            return
        with self._lock:
            append_jsonl_rows(self.path, rows)


def _example(pair: CandidatePair, votes: list[Vote], prompt_version: str = "") -> Example:
    """The release row of a pair: the panel's consensus label, every member's label and both claim frames."""
    agreed = consensus(votes)
    frame_a, frame_b, _ = compared_frames(pair)
    return Example.from_pair(
        pair, **agreed.labels.example_fields(), annotator_id=agreed.annotator_id, annotator_kind=agreed.kind,
        prompt_version=prompt_version if agreed.kind == LLM_KIND else "",
        frame_a=ClaimFrame(**frame_a.as_record()), frame_b=ClaimFrame(**frame_b.as_record()),
        annotator_labels=agreed.members if len(votes) > 1 else [],
        label_quality=agreed.quality if len(votes) > 1 else None)


class PairAnnotator:
    """Labels pairs with the local panel members and, when the panel has one, an LLM backend (attempts,
    repair, fallback to the local members)."""

    def __init__(self, backend: ChatBackend | None, config: AnnotateConfig, out_dir: Path):
        self.backend, self.config = backend, config
        lexicon = config.read_lexicon()
        self.members = ([make_local(s, lexicon=lexicon) for s in config.specs if not s.is_llm]
                        or [make_local(DEFAULT_ANNOTATOR, lexicon=lexicon)])
        self.schema = response_schema()
        self.raw = JsonlLog(out_dir / RAW_FILE)
        self.failures = JsonlLog(out_dir / FAILURES_FILE)
        self.intervals: list[tuple[float, float]] = []
        #: Local votes already taken on the pairs a panel sends to the LLM (``_panel_first``), reused by
        #: ``from_answer`` instead of labelling those pairs twice.
        self.disputed_votes: dict[str, list[Vote]] = {}

    def local_votes(self, pairs: list[CandidatePair]) -> list[list[Vote]]:
        """Every local member's vote on every pair (judges label a batch at once)."""
        per_member = [m.annotate_many(pairs) for m in self.members]
        return [[Vote(m.annotator_id, m.kind, labels[i], DEFAULT_WEIGHTS[m.kind])
                 for m, labels in zip(self.members, per_member, strict=True)] for i in range(len(pairs))]

    def local_outcomes(self, pairs: list[CandidatePair], source: str = SOURCE_LOCAL,
                       votes: list[list[Vote]] | None = None) -> list[Outcome]:
        """The local consensus of each pair (from ``votes`` when they were already taken)."""
        votes = votes if votes is not None else self.local_votes(pairs)
        return [Outcome(p.pair_id, source, _example(p, v)) for p, v in zip(pairs, votes, strict=True)]

    def fallback_outcome(self, pair: CandidatePair, attempts: int) -> Outcome:
        """The local members' outcome for a pair the LLM failed on."""
        outcome = self.local_outcomes([pair], SOURCE_FALLBACK)[0]
        outcome.attempts = attempts
        return outcome

    def from_answer(self, pair: CandidatePair, answer: dict[str, Any], attempts: int, reused: bool = False) -> Outcome:
        """The outcome of a parsed answer (:class:`InvalidAnswer` when it gives no label of the ontology)."""
        labels, repairs = repair(answer, pair)
        votes = [Vote(self.backend.annotator_id, LLM_KIND, labels, DEFAULT_WEIGHTS[LLM_KIND])]
        if len(self.config.specs) > 1:
            votes += self.disputed_votes.pop(pair.pair_id, None) or self.local_votes([pair])[0]
        example = _example(pair, votes, PROMPT_VERSION)
        return Outcome(pair.pair_id, SOURCE_LLM, example, repairs, attempts, reused)

    def _attempt_row(self, pair: CandidatePair, attempt: int, **fields: Any) -> dict[str, Any]:
        return {"pair_id": pair.pair_id, "attempt": attempt, "provider": self.backend.provider,
                "model": self.backend.model, "prompt_version": PROMPT_VERSION, "time": time.time(), **fields}

    def llm_outcome(self, pair: CandidatePair) -> Outcome:
        """Ask the server up to ``max_attempts`` times (an unusable answer is a failed attempt); fall back to the
        local members after the last failure. Waits follow the retry policy (``Retry-After`` honoured, capped);
        :class:`Cancelled` once the run is interrupted."""
        messages = build_messages(pair, self.config.max_abstract_chars)
        policy = RetryPolicy(self.config.backoff_s, self.config.max_backoff_s)
        history: list[dict[str, Any]] = []
        for attempt in range(1, self.config.max_attempts + 1):
            if attempt > 1:
                self.backend.sleep(policy.delay(attempt - 1, history[-1].get("retry_after")))
            try:
                completion = self.backend.complete(messages, self.schema)
            except BackendError as exc:
                row = self._attempt_row(pair, attempt, status=exc.kind, http_status=exc.status, error=exc.detail,
                                        retry_after=exc.retry_after)
                self.raw.append(row)
                history.append(row)
                if not exc.retryable:
                    break
                continue
            self.intervals.append((completion.started, completion.started + completion.elapsed_s))
            try:
                outcome = self.from_answer(pair, parse_json_lenient(completion.content), attempt)
            except InvalidAnswer as exc:
                status, error = "invalid_answer", str(exc)
            except ValueError as exc:
                status, error = "not_json", str(exc)
            else:
                self.raw.append(self._attempt_row(pair, attempt, status="ok", content=completion.content,
                                                  elapsed_s=completion.elapsed_s))
                return outcome
            row = self._attempt_row(pair, attempt, status=status, content=completion.content,
                                    elapsed_s=completion.elapsed_s, error=error)
            self.raw.append(row)
            history.append(row)
        if history and history[-1]["status"] == "unreachable":
            raise ServerUnreachable(f"{self.backend.provider} server at {redact(self.backend.url)} stopped "
                                    f"answering ({history[-1]['error']}); re-run the same command to resume")
        self.failures.append({"pair_id": pair.pair_id, "provider": self.backend.provider,
                              "model": self.backend.model, "fallback": "+".join(m.annotator_id for m in self.members),
                              "attempts": history})
        return self.fallback_outcome(pair, attempts=len(history))
