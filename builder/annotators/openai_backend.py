"""Any OpenAI-compatible chat endpoint (vLLM, TGI, llama.cpp's servers), constrained by the JSON schema.

``openai:http://HOST:PORT/v1?model=NAME``. The schema goes in ``response_format``: by default the
OpenAI form ``{"type": "json_schema", ...}``; add ``&response_format=json_object`` for servers
that take ``{"type": "json_object", "schema": ...}`` instead (llama-cpp-python's server), or
``&response_format=none`` to send no constraint and rely on the prompt and lenient parsing
(servers without constrained decoding, or where it is too slow: llama-cpp-python applies a
grammar to the whole vocabulary at every token).
An ``OPENAI_API_KEY`` in the environment is sent as a bearer token and never recorded.
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import urlsplit

from .annotator_base import AnnotatorSpec, BackendError, ChatBackend

RESPONSE_FORMATS = ("json_schema", "json_object", "none")


class OpenAIBackend(ChatBackend):
    provider = "openai"
    health_path = "/models"
    chat_path = "/chat/completions"

    def __init__(self, spec: AnnotatorSpec, **kwargs: Any):
        super().__init__(spec, **kwargs)
        if not urlsplit(self.url).path:
            self.url += "/v1"
        self.response_format = spec.options.get("response_format", RESPONSE_FORMATS[0])
        if self.response_format not in RESPONSE_FORMATS:
            raise ValueError(f"response_format must be one of {RESPONSE_FORMATS}, not {self.response_format!r}")
        if os.environ.get("OPENAI_API_KEY"):
            self._client.headers["Authorization"] = f"Bearer {os.environ['OPENAI_API_KEY']}"

    def settings(self) -> dict[str, Any]:
        return {**super().settings(), "response_format": self.response_format}

    def _format(self, schema: dict[str, Any]) -> dict[str, Any] | None:
        if self.response_format == "none":
            return None
        if self.response_format == "json_object":
            return {"type": "json_object", "schema": schema}
        return {"type": "json_schema", "json_schema": {"name": "biodivergence_annotation", "schema": schema,
                                                       "strict": True}}

    def body(self, messages: list[dict[str, str]], schema: dict[str, Any]) -> dict[str, Any]:
        body = {"model": self.model, "messages": messages, "temperature": self.temperature,
                "max_tokens": self.max_tokens}
        if self._format(schema) is not None:
            body["response_format"] = self._format(schema)
        if self.seed is not None:
            body["seed"] = self.seed
        return body

    def extract(self, data: Any) -> str:
        try:
            content = data["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as exc:
            raise BackendError("bad_response", f"no choices[0].message.content in {str(data)[:200]!r}") from exc
        if not isinstance(content, str):
            raise BackendError("bad_response", f"message content is not text: {content!r}")
        return content
