"""Silver-annotation prompt v2 and the JSON schema of the expected response, both generated
from the ontology (paper §5.2, appendix I.4).

``build_messages(pair)`` gives the chat messages for one candidate pair (v2: with the clinical question
both claims answer, when the pair carries one); ``response_schema()``
is sent to servers that support constrained output (OpenAI ``response_format``, Ollama
``format``). ``PROMPT_VERSION`` is recorded with every annotation.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from typing import Any

from biodivergence_dataset import ontology
from biodivergence_dataset.records import CandidatePair

PROMPT_VERSION = "v2"
#: Abstracts longer than this are cut (at a word boundary) so prompts fit small context windows.
DEFAULT_MAX_ABSTRACT_CHARS = 2500
MISSING_ABSTRACT = "(not available)"

RESPONSE_FIELDS: tuple[str, ...] = (
    "comparable", "conflict_type", "divergence_axes", "dominant_confounder", "reconciliation",
    "evidence_spans_a", "evidence_spans_b", "confidence", "notes",
)


def _class_lines() -> list[str]:
    return [
        f"- {c.name}: {c.definition} Signal: {c.diagnostic_signal} Rule: {c.boundary_rule}"
        for c in ontology.CONFLICT_TYPES
    ]


def _axis_lines() -> list[str]:
    return [f"- {a.name}: {a.description} Cues: {a.trigger_cues}" for a in ontology.AXES]


@lru_cache(maxsize=1)
def system_prompt() -> str:
    """The system prompt: task, the six classes, the 13 axes, the rules and the output format."""
    return "\n".join([
        ("You are an expert biomedical annotator. You compare two claims taken from two different "
         "abstracts and decide why they diverge."),
        ("When a clinical question is given, read each claim's finding as an answer to that question (effect, "
         "no effect, increase or decrease of its outcome) and call a conflict only when the two answers disagree; "
         "a negation word alone is no disagreement. The conditions that differ between the studies (population, "
         "dose, setting, period, assay, ...) give the axes."),
        "",
        "Conflict types (choose exactly one):",
        *_class_lines(),
        "",
        f"Preference rule: {ontology.PREFERENCE_RULE}",
        "",
        "Divergence axes (choose zero or more):",
        *_axis_lines(),
        "",
        (f"Axis rule: {ontology.AXIS_SELECTION_RULE} Use an empty list for {ontology.NO_CONFLICT}. "
         f"Use {ontology.LATENT_AXIS} only when a contextual driver is likely but not stated."),
        "The dominant_confounder is the one axis from divergence_axes that best explains the divergence, or null.",
        ("Evidence spans: copy short phrases verbatim from claim A (evidence_spans_a) and claim B "
         "(evidence_spans_b) that carry the decisive cues. Never paraphrase a span."),
        "The reconciliation is one or two sentences explaining how both claims can hold, or why they cannot.",
        "confidence is a number between 0 and 1. comparable is false when the claims answer unrelated questions.",
        "",
        "Answer with one JSON object and nothing else, with exactly these keys: " + ", ".join(RESPONSE_FIELDS) + ".",
    ])


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    return cut + " …"


def user_prompt(pair: CandidatePair, max_abstract_chars: int = DEFAULT_MAX_ABSTRACT_CHARS) -> str:
    """The user prompt for one pair: the clinical question when the pair has one, both claims, both abstracts."""
    lines = [f"Domain: {ontology.domain(pair.domain).title}", ""]
    if pair.question is not None:
        lines += [f"Clinical question both claims answer: {pair.question.text}", ""]
    for tag, claim, abstract in (("A", pair.claim_a, pair.abstract_a), ("B", pair.claim_b, pair.abstract_b)):
        year = f", published {claim.pub_year}" if claim.pub_year else ""
        lines += [
            f"Claim {tag} ({claim.claim_type} claim{year}): {claim.sentence}",
            f"Abstract {tag}: {_clip(abstract, max_abstract_chars) if abstract.strip() else MISSING_ABSTRACT}",
            "",
        ]
    lines.append("Return the JSON object.")
    return "\n".join(lines)


def build_messages(pair: CandidatePair, max_abstract_chars: int = DEFAULT_MAX_ABSTRACT_CHARS) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": system_prompt()},
        {"role": "user", "content": user_prompt(pair, max_abstract_chars)},
    ]


@lru_cache(maxsize=1)
def _schema_json() -> str:
    axes = list(ontology.AXIS_NAMES)
    spans = {"type": "array", "items": {"type": "string", "maxLength": 160}, "maxItems": 4}
    schema = {
        "type": "object",
        "properties": {
            "comparable": {"type": "boolean"},
            "conflict_type": {"type": "string", "enum": list(ontology.CONFLICT_TYPE_NAMES)},
            "divergence_axes": {"type": "array", "items": {"type": "string", "enum": axes}, "maxItems": 4},
            "dominant_confounder": {"anyOf": [{"type": "string", "enum": axes}, {"type": "null"}]},
            "reconciliation": {"type": "string", "maxLength": 400},
            "evidence_spans_a": spans,
            "evidence_spans_b": spans,
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
            "notes": {"type": "string", "maxLength": 200},
        },
        "required": list(RESPONSE_FIELDS),
        "additionalProperties": False,
    }
    assert tuple(schema["properties"]) == RESPONSE_FIELDS
    return json.dumps(schema, sort_keys=True)


def response_schema() -> dict[str, Any]:
    """JSON schema of the annotator's answer (a fresh copy each call)."""
    return json.loads(_schema_json())


def prompt_fingerprint() -> str:
    """Short hash of the system prompt and schema, recorded in the provenance."""
    return hashlib.sha1((system_prompt() + _schema_json()).encode()).hexdigest()[:12]
