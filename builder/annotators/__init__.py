"""Annotators for the silver-annotation stage.

``make_backend(parse_spec("openai:http://127.0.0.1:8080/v1?model=NAME"))`` gives an HTTP chat
backend; the ``heuristic`` spec has none (``HeuristicAnnotator`` labels pairs directly).
"""

from __future__ import annotations

from typing import Any

from .base import AnnotatorSpec, BackendError, ChatBackend, ServerUnreachable, parse_json_lenient, parse_spec
from .heuristic import HEURISTIC_ID, HeuristicAnnotator
from .ollama_backend import OllamaBackend
from .openai_backend import OpenAIBackend

_BACKENDS: dict[str, type[ChatBackend]] = {"openai": OpenAIBackend, "ollama": OllamaBackend}


def make_backend(spec: AnnotatorSpec, **settings: Any) -> ChatBackend | None:
    """The chat backend for an LLM spec (``settings``: timeout_s, max_tokens, temperature); None for heuristic."""
    if spec.backend == "heuristic":
        return None
    return _BACKENDS[spec.backend](spec, **settings)


__all__ = [
    "HEURISTIC_ID",
    "AnnotatorSpec",
    "BackendError",
    "ChatBackend",
    "HeuristicAnnotator",
    "OllamaBackend",
    "OpenAIBackend",
    "ServerUnreachable",
    "make_backend",
    "parse_json_lenient",
    "parse_spec",
]
