"""Annotators for the silver-annotation stage.

``make_backend(parse_spec("openai:http://127.0.0.1:8080/v1?model=NAME"))`` gives an HTTP chat
backend; local specs (``reader[:PATH]``, ``frames``, ``heuristic``, ``judge:PATH``) have none: ``make_local`` gives an
object whose ``annotate(pair)`` returns labels directly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .annotator_base import (
    AnnotatorSpec,
    BackendError,
    ChatBackend,
    ServerUnreachable,
    parse_json_lenient,
    parse_spec,
)
from .frame_annotator import FRAMES_ID, FramesAnnotator
from .heuristic import HEURISTIC_ID, HeuristicAnnotator
from .ollama_backend import OllamaBackend
from .openai_backend import OpenAIBackend

if TYPE_CHECKING:
    from ..questions.lexicon import Lexicon

_BACKENDS: dict[str, type[ChatBackend]] = {"openai": OpenAIBackend, "ollama": OllamaBackend}
#: The annotator of a stage or panel that names none: the learned finding reader shipped with the package.
DEFAULT_ANNOTATOR = "reader"


def make_backend(spec: AnnotatorSpec, **settings: Any) -> ChatBackend | None:
    """The chat backend for an LLM spec (``settings``: timeout_s, max_tokens, temperature, max_answer_bytes); None for local specs."""
    if not spec.is_llm:
        return None
    return _BACKENDS[spec.backend](spec, **settings)


def make_local(spec: AnnotatorSpec | str, heldout: str | None = None, lexicon: Lexicon | None = None):
    """The in-process annotator of a local spec; for ``judge:PATH`` the fold trained without ``heldout``
    (``PATH/heldout-<source>``) when it exists; ``lexicon``: what the reader reads a pair's question with (the
    build's lexicon and domain packs; default the shipped lexicon)."""
    spec = parse_spec(spec) if isinstance(spec, str) else spec
    if spec.backend == "reader":
        from .reader_annotator import ReaderAnnotator

        return ReaderAnnotator(spec.url or None, lexicon=lexicon)
    if spec.backend == "frames":
        return FramesAnnotator()
    if spec.backend == "heuristic":
        return HeuristicAnnotator()
    if spec.backend == "judge":
        from .judge import JudgeAnnotator, judge_folder

        return JudgeAnnotator(judge_folder(spec.url, heldout))
    raise ValueError(f"annotator {spec} needs a server; it is not a local annotator")


__all__ = [
    "DEFAULT_ANNOTATOR",
    "FRAMES_ID",
    "HEURISTIC_ID",
    "AnnotatorSpec",
    "BackendError",
    "ChatBackend",
    "FramesAnnotator",
    "HeuristicAnnotator",
    "OllamaBackend",
    "OpenAIBackend",
    "ServerUnreachable",
    "make_backend",
    "make_local",
    "parse_json_lenient",
    "parse_spec",
]
