"""Stems and the clinical lexicon: how a question's phrase may be named in a claim.

Text rules every matcher shares (the questions stage, gather's query words, the reader annotator): stems in
American spelling (:func:`stem`, :func:`terms`), the lexicon of drug classes, synonym groups and endpoint
distinctions loaded from YAML (:func:`load_lexicon`; a build may add domain packs), and the alternatives by which a
claim may name a phrase (:func:`alternatives`, :func:`best_match`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from biodivergence_text import cues

from .. import frameterms

#: The shipped lexicons: the general one every build reads, and domain packs a build may name
#: (``questions: {domain_packs: [...]}``; ``cohen2006.yaml`` is the demo's).
LEXICONS = Path(__file__).parent.parent / "lexicons"
LEXICON = LEXICONS / "clinical.yaml"
COHEN_PACK = LEXICONS / "cohen2006.yaml"


@dataclass(frozen=True)
class Alternative:
    """One way a claim can name a slot: content stems, what they stand for, and the stems it must contain
    (a synonym put in place of part of the phrase must be there whole)."""

    stems: frozenset[str]
    label: str
    core: frozenset[str] = frozenset()

    def covered(self, words: frozenset[str]) -> float:
        if not self.stems or not self.core <= words:
            return 0.0
        return len(self.stems & words) / len(self.stems)


#: British spellings read as American ones, so a question asked in one spelling finds claims written in the
#: other: haemoglobin, oedema, coeliac, tumour, centre, sulphonylurea. Applied to stems (both sides of every match).
_BRITISH = ((re.compile(r"(?:ae|oe)(?=[a-z])"), "e"), (re.compile(r"(?<=[a-z]{2})our$"), "or"),
            (re.compile(r"(?<=[a-z]{2})tre$"), "ter"), (re.compile(r"^sulph"), "sulf"))


def american(word_stem: str) -> str:
    """A stem in American spelling (``_BRITISH``): "oesophagiti" -> "esophagiti", "tumour" -> "tumor"."""
    for pattern, replacement in _BRITISH:
        word_stem = pattern.sub(replacement, word_stem)
    return word_stem


def stem(word: str) -> str:
    """``frameterms.stem`` in American spelling."""
    return american(frameterms.stem(word))


def stem_sequence(text: str) -> list[str]:
    """``frameterms.stem_sequence`` in American spelling."""
    return [american(s) for s in frameterms.stem_sequence(text)]


def terms(text: str, abbrevs: dict[str, frozenset[str]] | None = None) -> frozenset[str]:
    """``frameterms.terms`` (content stems, abbreviations expanded) in American spelling."""
    if abbrevs is None:
        return _plain_terms(text)
    return frozenset(american(s) for s in frameterms.terms(text, abbrevs))


@lru_cache(maxsize=1 << 16)
def _plain_terms(text: str) -> frozenset[str]:
    """``terms`` without abbreviations, kept: compiling each question reads the stems of every lexicon name, so a
    pack of thousands of questions would read the same few hundred names thousands of times."""
    return frozenset(american(s) for s in frameterms.terms(text))


#: Words of change ("reduction", "improve", "gain"): how an outcome moves, not which outcome it is.
CHANGE_STEMS = frozenset(stem(w) for w in cues.INCREASE_WORDS + cues.DECREASE_WORDS if " " not in w)


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DrugClassEntry(_Entry):
    """A drug class: its names (and abbreviations) and its member drugs."""

    names: list[str] = Field(min_length=1)
    members: list[str] = []


class DistinctionEntry(_Entry):
    """What makes a claim's endpoint or setting another than its question's, as a pattern (case is ignored):

    - ``endpoint``: a claim the pattern matches answers no question the pattern does not match ("relapse" is not
      "remission"); with ``unless_outcome_outside``, it still does when it names the question's outcome outside the
      match ("lowered blood pressure without attenuating its diurnal variation");
    - ``setting``: the same, for questions that name a population only (a claim set in surgery does not answer a
      question asked after infarction);
    - ``site``: the pattern's groups name sites of one condition; a claim naming sites none of which its question
      names answers it not ("vertebral fractures" for a question about hip fractures); ``covers`` reads a word as
      the sites it spans ("peptic": gastric and duodenal)."""

    name: str
    kind: Literal["endpoint", "setting", "site"]
    pattern: str
    unless_outcome_outside: bool = False
    covers: dict[str, list[str]] = {}

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, pattern: str) -> str:
        try:
            re.compile(pattern)
        except re.error as e:
            raise ValueError(f"not a regular expression ({e})") from None
        return pattern


class LexiconFile(_Entry):
    """A lexicon or domain pack YAML: drug classes, synonym groups (each two phrases or more), distinctions and the
    measures named by an outcome's word that are no finding on that outcome (``measures_named_by_outcomes``)."""

    drug_classes: list[DrugClassEntry] = []
    synonyms: list[list[str]] = []
    distinctions: list[DistinctionEntry] = []
    measures_named_by_outcomes: list[str] = []

    @field_validator("synonyms")
    @classmethod
    def _groups(cls, groups: list[list[str]]) -> list[list[str]]:
        for i, group in enumerate(groups, 1):
            if len(group) < 2:
                raise ValueError(f"entry {i}: a list of at least two phrases")
        return groups


@dataclass(frozen=True)
class Distinction:
    """A :class:`DistinctionEntry` compiled (see there)."""

    name: str
    kind: str
    pattern: re.Pattern
    unless_outcome_outside: bool = False
    covers: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def sites(self, text: str) -> frozenset[str]:
        """The sites the pattern's groups name in ``text`` (lower case), each read as the sites it covers."""
        covers = dict(self.covers)
        named = {g.lower() for m in self.pattern.finditer(text) for g in m.groups() if g}
        return frozenset(site for word in named for site in covers.get(word, (word,)))


@dataclass(frozen=True)
class Lexicon:
    classes: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]  # (names, members)
    synonyms: tuple[tuple[str, ...], ...]
    distinctions: tuple[Distinction, ...] = ()
    measures_named_by_outcomes: tuple[str, ...] = ()


def read_lexicon_file(path: str | Path) -> LexiconFile:
    """One lexicon or domain pack YAML, checked; an error names the file, the entry and the field (not its value)."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
        raise ValueError(f"{path}: not a readable YAML lexicon ({type(e).__name__})") from None
    try:
        return LexiconFile.model_validate(data or {})
    except ValidationError as e:
        err = e.errors()[0]
        loc = list(err["loc"])
        where = (f"{loc[0]} entry {loc[1] + 1}" if len(loc) > 1 and isinstance(loc[1], int)
                 else str(loc[0]) if loc else "a lexicon is a mapping of drug_classes, synonyms and distinctions")
        field = f", {'.'.join(map(str, loc[2:]))}" if len(loc) > 2 else ""
        raise ValueError(f"{path}: {where}{field}: {err['msg']}") from None


@lru_cache(maxsize=4)
def load_lexicon(path: str | Path = LEXICON, packs: tuple[str, ...] = ()) -> Lexicon:
    """The clinical lexicon with the domain packs a build names merged onto it (their classes, synonym groups and
    distinctions added after the lexicon's); errors name the file and entry."""
    files = [read_lexicon_file(p) for p in (path, *packs)]
    return Lexicon(
        tuple((tuple(c.names), tuple(c.members)) for f in files for c in f.drug_classes),
        tuple(tuple(g) for f in files for g in f.synonyms),
        tuple(Distinction(d.name, d.kind, re.compile(d.pattern, re.IGNORECASE), d.unless_outcome_outside,
                          tuple((k.lower(), tuple(v)) for k, v in d.covers.items()))
              for f in files for d in f.distinctions),
        tuple(m for f in files for m in f.measures_named_by_outcomes))


def _contains(words: frozenset[str], phrase_stems: frozenset[str]) -> bool:
    return bool(phrase_stems) and phrase_stems <= words


#: Two words joined by a hyphen, neither a prefix nor a number ("LDL-cholesterol", not "non-small", "IL-6").
_HYPHENATED_WORDS = re.compile(r"\b(?!(?:non|anti|pre|post|co|re|sub|semi|multi|inter|intra|over|under|self|well|"
                               r"low|high|long|short|first|second|third|once|twice)-)([A-Za-z]{3,})-([A-Za-z]{3,})\b",
                               re.IGNORECASE)


def alternatives(phrase: str, lexicon: Lexicon, ignore: frozenset[str] = frozenset(), head: bool = False
                 ) -> tuple[Alternative, ...]:
    """Every way a claim may name ``phrase``: its own stems; for a drug class it names, each member drug;
    for a synonym-group phrase in it, the phrase with that part replaced by each other phrase of the group
    (which the claim must then contain whole). Stems in ``ignore`` are left out (unless nothing else is left).
    With ``head``, a phrase of three stems or more is named only with its last one, the noun it is about
    ("left ventricular mass" is not "left ventricular ejection fraction")."""
    own = terms(phrase)
    own = own - ignore or own
    sequence = [s for s in stem_sequence(phrase) if s in own]
    last = frozenset(sequence[-1:]) if head and len(own) >= 3 else frozenset()
    out = [Alternative(own, phrase, last)]
    for names, members in lexicon.classes:
        if any(_contains(own, terms(n)) for n in names):
            out += [Alternative(terms(n), n) for n in names]
            out += [Alternative(terms(m), f"{m} ({names[0]})") for m in members]
    for group in lexicon.synonyms:
        for phrase_in in group:
            inner = terms(phrase_in)
            if _contains(own, inner):
                out += [Alternative((own - inner) | terms(other), f"{other} (= {phrase_in})",
                                    terms(other) | (last - inner)) for other in group if other != phrase_in]
    # a phrase that is one hyphenated compound of two words also names them apart ("LDL-cholesterol" as "LDL
    # cholesterol"); both words are then needed (a longer phrase read apart would need only two thirds of its words:
    # "extended release" would name "immediate-release oxybutynin")
    if (apart_phrase := _HYPHENATED_WORDS.sub(r"\1 \2", phrase)) != phrase and len(apart := terms(apart_phrase)) == 2:
        out.append(Alternative(apart, phrase))
    # a hyphenated word also names the one-word spelling ("pre-eclampsia" for "preeclampsia"; words add both)
    out += [Alternative(frozenset(x.replace("-", "") for x in alt.stems), alt.label,
                        frozenset(x.replace("-", "") for x in alt.core)) for alt in out if any("-" in x for x in alt.stems)]
    seen: dict[frozenset[str], Alternative] = {}
    for alt in out:
        if alt.stems:
            seen.setdefault(alt.stems, alt)
    return tuple(seen.values())


def best_match(words: frozenset[str], alts: tuple[Alternative, ...], share: float = 2 / 3
               ) -> tuple[float, Alternative | None]:
    """The best-covered alternative that passes, and its coverage: an alternative of one or two stems needs
    both, a longer one ``share`` of them."""
    best: tuple[float, Alternative | None] = (0.0, None)
    for alt in alts:
        cov = alt.covered(words)
        needed = 1.0 if len(alt.stems) < 3 else share
        if cov >= needed - 1e-9 and cov > best[0]:
            best = (cov, alt)
    return best
