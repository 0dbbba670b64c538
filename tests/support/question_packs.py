"""Question packs for the question tests: a pack written to a file, compiled with the shipped lexicon, and the
questions a sentence answers."""

from __future__ import annotations

from pathlib import Path

from builder import questionpacks, questions
from builder.questions.compiled import CompiledQuestion, compile_questions
from builder.questions.lexicon import LEXICON, load_lexicon
from builder.questions.match import answers


def write_pack(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def compiled_pack(path: Path, text: str, packs: tuple[str, ...] = ()) -> dict[str, CompiledQuestion]:
    """The questions of a pack written to ``path``, compiled with the shipped lexicon (and domain ``packs``), by id."""
    return {q.question.question_id: q for q in
            compile_questions(questionpacks.load_questions(write_pack(path, text)), load_lexicon(LEXICON, packs))}


def answered(compiled, sentence, abstract="", similarity=0.5, **config):
    found = answers(sentence, abstract, [similarity] * len(compiled), list(compiled.values()),
                              questions.QuestionsConfig(**config))
    return {q.question.question_id for q, _ in found}
