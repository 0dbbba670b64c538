"""The annotate stage's settings (the ``annotate`` section of a build config), checked when made.

What decides the labels (the panel's specs, the prompt, the limits) is the stage's identity; execution settings
(concurrency, timeouts, retries) are not.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from biodivergence_dataset.arguments import OptionError
from biodivergence_dataset.io import DEFAULT_SHARD_SIZE

from .annotators import DEFAULT_ANNOTATOR, AnnotatorSpec, parse_spec
from .annotators.annotator_base import MAX_ANSWER_BYTES
from .prompt import DEFAULT_MAX_ABSTRACT_CHARS, PROMPT_VERSION, prompt_fingerprint
from .questions.lexicon import LEXICON, Lexicon, load_lexicon


class AnnotateConfig(BaseModel):
    """Parameters of the annotate stage (the ``annotate`` section of a build config)."""

    model_config = ConfigDict(extra="forbid")

    #: One spec or a list of specs (a panel): reader[:PATH] | frames | heuristic | judge:PATH | openai:… | ollama:….
    annotator: str | list[str] = DEFAULT_ANNOTATOR
    #: With an LLM in a panel: ask it only about pairs the local members disagree on, at most this many.
    llm_budget: int | None = None
    concurrency: int = 4
    timeout_s: float = 120.0
    max_attempts: int = 3
    backoff_s: float = 1.0
    #: Cap on any wait before another attempt, the server's ``Retry-After`` included.
    max_backoff_s: float = 60.0
    max_tokens: int = 512
    #: The longest server answer read per request (longer: a failed attempt, then the fallback).
    max_answer_bytes: int = MAX_ANSWER_BYTES
    temperature: float = 0.0
    max_abstract_chars: int = DEFAULT_MAX_ABSTRACT_CHARS
    limit: int | None = None
    shard_size: int = DEFAULT_SHARD_SIZE
    overwrite: bool = False
    forget_cache: bool = False
    retry_fallbacks: bool = False
    max_fallback_share: float = 0.05
    progress: bool = True
    #: The clinical lexicon and the domain packs merged onto it, with which the reader annotator reads a pair's
    #: question (a build passes its questions section's: a pack's drug classes name the arms there too).
    lexicon: str = str(LEXICON)
    domain_packs: list[str] = []

    #: The smallest value of each count setting that makes sense (None, where allowed, means no limit).
    _MINIMUM: ClassVar[dict[str, int]] = {"limit": 1, "llm_budget": 0, "concurrency": 1, "max_tokens": 1,
                                          "max_abstract_chars": 1, "shard_size": 1, "max_answer_bytes": 1024,
                                          "max_attempts": 1}
    #: The range of each real-valued setting: (lowest, highest, whether the lowest is allowed); never NaN or inf.
    _RANGE: ClassVar[dict[str, tuple[float, float, bool]]] = {
        "timeout_s": (0.0, math.inf, False), "backoff_s": (0.0, math.inf, True),
        "max_backoff_s": (0.0, math.inf, True), "temperature": (0.0, 2.0, True),
        "max_fallback_share": (0.0, 1.0, True)}

    def __init__(self, **settings: Any) -> None:
        """Validated, then each count and real-valued setting checked to be in its range: an :class:`OptionError`
        naming it, which the CLI shows as the option typed."""
        super().__init__(**settings)
        self._check_ranges()

    def _check_ranges(self) -> None:
        for name, least in self._MINIMUM.items():
            value = getattr(self, name)
            if value is not None and value < least:
                raise OptionError("annotate", name, f"must be at least {least}, got {value}")
        for name, (low, high, closed) in self._RANGE.items():
            value = float(getattr(self, name))
            if not (math.isfinite(value) and low <= value <= high and (closed or value > low)):
                bound = f"{'at least' if closed else 'above'} {low:g}" + (f", at most {high:g}" if high < math.inf
                                                                           else "")
                raise OptionError("annotate", name, f"must be a finite number {bound}, got {value}")

    @property
    def specs(self) -> list[AnnotatorSpec]:
        """The panel's specs in order (at most one LLM: its answers are cached per pair)."""
        specs = [parse_spec(s) for s in ([self.annotator] if isinstance(self.annotator, str) else self.annotator)]
        if not specs:
            raise ValueError("annotate: name at least one --annotator")
        if sum(s.is_llm for s in specs) > 1:
            raise ValueError("annotate: a panel may hold one LLM annotator (openai:… or ollama:…)")
        return specs

    @property
    def llm_spec(self) -> AnnotatorSpec | None:
        return next((s for s in self.specs if s.is_llm), None)

    def identity(self) -> dict[str, Any]:
        """The parameters that decide the labels (execution settings such as concurrency excluded)."""
        return {"annotator": [str(s) for s in self.specs], "llm_budget": self.llm_budget,
                "prompt_version": PROMPT_VERSION,
                "prompt_fingerprint": prompt_fingerprint(), "max_tokens": self.max_tokens,
                "temperature": self.temperature, "max_abstract_chars": self.max_abstract_chars, "limit": self.limit}

    def data_files(self) -> list[Path]:
        """The files its local members read: with a reader, the reader's weights and the lexicon with its domain
        packs (with which it reads a pair's question); a judge's folder."""
        from .reader.model import reader_folder

        readers = [s for s in self.specs if s.backend == "reader"]
        words = [Path(p) for p in (self.lexicon, *self.domain_packs)] if readers else []
        return ([reader_folder(s.url or None) for s in readers] + words
                + [Path(s.url) for s in self.specs if s.backend == "judge"])

    def read_lexicon(self) -> Lexicon:
        """The lexicon with the domain packs merged onto it (errors name the file and entry)."""
        return load_lexicon(self.lexicon, tuple(self.domain_packs))
