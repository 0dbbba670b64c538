"""Ollama's native chat API: ``POST /api/chat`` with ``format`` = the JSON schema.

``ollama:http://HOST:11434?model=qwen2.5:7b`` (the paper's release annotator). The preflight
checks ``GET /api/tags`` lists the model, so a missing ``ollama pull`` fails before any pair is sent.
"""

from __future__ import annotations

from typing import Any

from biodivergence_dataset.redact import redact

from .annotator_base import BackendError, ChatBackend


def _same_model(wanted: str, served: str) -> bool:
    """Ollama names default to the ``latest`` tag: 'llama3' is 'llama3:latest'."""
    def full(name: str) -> str:
        return name if ":" in name else f"{name}:latest"
    return full(wanted) == full(served)


class OllamaBackend(ChatBackend):
    provider = "ollama"
    health_path = "/api/tags"
    chat_path = "/api/chat"

    def _check_model(self, listing: Any) -> None:
        names = [m.get("name") or m.get("model", "") for m in (listing or {}).get("models", [])]
        if not any(_same_model(self.model, n) for n in names):
            raise RuntimeError(f"ollama server at {redact(self.url)} does not serve {self.model!r} (it has {names}); "
                               f"run `ollama pull {self.model}` first")

    def body(self, messages: list[dict[str, str]], schema: dict[str, Any]) -> dict[str, Any]:
        options: dict[str, Any] = {"temperature": self.temperature, "num_predict": self.max_tokens}
        if self.seed is not None:
            options["seed"] = self.seed
        return {"model": self.model, "messages": messages, "stream": False, "format": schema, "options": options}

    def extract(self, data: Any) -> str:
        try:
            content = data["message"]["content"]
        except (KeyError, TypeError) as exc:
            raise BackendError("bad_response", f"no message.content in {str(data)[:200]!r}") from exc
        if not isinstance(content, str):
            raise BackendError("bad_response", f"message content is not text: {content!r}")
        return content
