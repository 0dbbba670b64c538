"""The annotate stage's settings (the ``annotate`` section of a build config), checked when made.

What decides the labels (the panel's specs, the prompt, the limits) is the stage's identity; execution settings
(concurrency, timeouts, retries) are not.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from biodivergence_dataset.arguments import OptionError
from biodivergence_dataset.io import DEFAULT_SHARD_SIZE

from .annotators import DEFAULT_ANNOTATOR, AnnotatorSpec, parse_spec
from .annotators.annotator_base import MAX_ANSWER_BYTES
from .prompt import DEFAULT_MAX_ABSTRACT_CHARS, PROMPT_VERSION, prompt_fingerprint
from .questions.lexicon import LEXICON, Lexicon, load_lexicon


class AnnotateConfig(BaseModel):
    """Parameters of the annotate stage (the ``annotate`` section of a build config)."""

    model_config = ConfigDict(extra="forbid")

    annotator: str | list[str] = Field(
        DEFAULT_ANNOTATOR, description="reader[:PATH] | frames | heuristic | judge:PATH | openai:URL?model=NAME | "
                                       "ollama:URL?model=NAME; several: a panel whose consensus is the label")
    llm_budget: int | None = Field(None, description="in a panel, ask the LLM only about pairs the other members "
                                                     "disagree on, at most N")
    concurrency: int = Field(4, description="requests in flight")
    timeout_s: float = Field(120.0, description="seconds per request, all of it: connect, send and the whole "
                                                "answer")
    max_attempts: int = Field(3, description="attempts per pair before the fallback to the local annotators")
    backoff_s: float = Field(1.0, description="first wait before another attempt, doubled each time")
    max_backoff_s: float = Field(60.0, description="longest wait before another attempt, a server's Retry-After "
                                                   "included")
    max_tokens: int = Field(512, description="longest LLM answer asked for, in tokens")
    max_answer_bytes: int = Field(MAX_ANSWER_BYTES, description="the longest server answer read per request "
                                                                "(longer: a failed attempt, then the fallback)")
    temperature: float = Field(0.0, description="LLM sampling temperature")
    max_abstract_chars: int = Field(DEFAULT_MAX_ABSTRACT_CHARS, description="abstract text shown to an LLM, per "
                                                                            "abstract, in characters")
    limit: int | None = Field(None, description="annotate only the first N pairs")
    shard_size: int = Field(DEFAULT_SHARD_SIZE, description="records per output shard")
    overwrite: bool = Field(False, description="discard a partial run made with other settings (only the files "
                                               "this stage wrote; stored LLM answers are kept and reused where "
                                               "provider, model and prompt match)")
    forget_cache: bool = Field(False, description="with --overwrite, also delete the stored LLM answers")
    retry_fallbacks: bool = Field(False, description="ask the LLM again about the pairs that fell back to the "
                                                     "local annotators")
    max_fallback_share: float = Field(0.05, description="fail (and leave the stage unfinished, good answers kept "
                                                        "for the resume) when a larger share of pairs got no usable "
                                                        "LLM answer (errors, timeouts, labels outside the ontology, "
                                                        "empty answers) and fell back")
    progress: bool = Field(True, description="show progress bars")
    #: A build passes its questions section's lexicon and packs: a pack's drug classes name the arms there too.
    lexicon: str = Field(str(LEXICON), description="clinical lexicon YAML the reader reads a pair's question with "
                                                   "(drug classes, synonyms, distinctions)")
    domain_packs: list[str] = Field([], description="domain pack YAMLs merged onto the lexicon (as given to "
                                                    "`questions`)")

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
