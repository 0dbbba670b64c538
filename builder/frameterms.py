"""Words of a claim phrase as the frames compare them: stems, content terms, names and abbreviations.

A slot is matched by its content stems (``terms``), generic words and bracketed statistics left out, with an
abbreviation defined in the abstract ("angiotensin-converting enzyme (ACE)") expanded to its long form.
"""

from __future__ import annotations

import re
from functools import lru_cache

WORD_RE = re.compile(r"[A-Za-z][A-Za-z0-9'\-]*|\d+(?:\.\d+)?")
_ABBREV_DEF = re.compile(r"((?:[A-Za-z][\w'-]*\s+){1,8})\(([A-Z][A-Za-z0-9-]{1,9})\)"
                         r"(?!\s+(?:trials?|study|studies|investigators|group|program(?:me)?|registry)\b)")

#: Words that never decide what a claim is about.
GENERIC_WORDS = frozenset(
    "a an the of in on at to for from by with and or as is are was were be been being this that these those it its "  # noqa: SIM905 (a word list reads best as words)
    "their there than then which who what when where while into between among during after before about against "
    "within without through via per both either each also such can may might could would should will do does did "
    "has have had not no we our us study studies result results data patient patients subject subjects group groups "
    "level levels rate rates use used using effect effects significant significantly statistically higher lower "
    "increased decreased associated association risk factor factors case cases analysis analyses finding findings "
    "evidence role important present observed found shown showed show shows demonstrated reported compared "
    "comparison treatment treated participant participants individual individuals people population more less "
    "other others one two three total overall mean median ratio value values change changes arm arms control controls "
    "cohort cohorts sample samples compared versus respectively first second both all most many only intervention "
    "interventions".split())


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """A light stemmer for comparing head nouns: plural and common verb/noun suffixes."""
    w = word.lower()
    for suffix in ("ations", "ation", "ments", "ment", "ities", "ity", "ness", "ings", "ing", "ies", "ied",
                   "es", "ed", "s"):
        if len(w) > len(suffix) + 3 and w.endswith(suffix):
            w = w[: -len(suffix)] + ("y" if suffix in ("ies", "ied", "ities") else "")
            break
    return w


def abbreviations(text: str) -> dict[str, frozenset[str]]:
    """``{ABBR: stems of its long form}`` for every "long form (ABBR)" definition in ``text``.

    The long form is the run of words before the parenthesis whose initials spell the abbreviation
    (a simplified Schwartz–Hearst match: as many trailing words as the abbreviation has letters). A trial's
    name ("Survival And Ventricular Enlargement (SAVE) trial") is no abbreviation of what a claim is about:
    a claim naming SAVE does not speak of survival."""
    out: dict[str, frozenset[str]] = {}
    for m in _ABBREV_DEF.finditer(text):
        abbr = m.group(2)
        words = m.group(1).split()
        letters = [c for c in abbr if c.isalpha()]
        long_form = words[-len(letters):] if len(words) >= len(letters) else words
        if long_form and long_form[0][0].lower() == letters[0].lower():
            out[abbr.lower()] = frozenset(stem(w) for w in long_form if w.lower() not in GENERIC_WORDS)
    return out


#: A bracketed statistic ("(OR 0.51, 95% CI 0.34-0.77)", "[AOR], 8.6"): numbers, not what the claim is about.
_BRACKETED = r"(?:[^()\[\]]|[(\[][^()\[\]]*[)\]])*"  # one level of nesting: "(adjusted odds ratio [AOR], 8.6)"
STATISTICS = re.compile(r"[(\[]" + _BRACKETED + r"\d" + _BRACKETED + r"(?:[)\]]|$)")  # or cut off at the phrase end


def stem_sequence(text: str) -> list[str]:
    """Every word of ``text`` stemmed, in order (where ``terms`` keeps a set of the content ones)."""
    return [stem(w.lower()) for w in WORD_RE.findall(text)]


def terms(text: str, abbrevs: dict[str, frozenset[str]] | None = None) -> frozenset[str]:
    """Content stems of a phrase, with abbreviations defined nearby expanded to their long forms."""
    out: set[str] = set()
    for w in WORD_RE.findall(STATISTICS.sub(" ", text)):
        low = w.lower()
        if low in GENERIC_WORDS or len(low) < 3 and not w.isupper() or not low[0].isalpha():
            continue
        out.add(stem(low))
        if abbrevs and low in abbrevs:
            out |= abbrevs[low]
    return frozenset(out)


def names(text: str) -> frozenset[str]:
    """The name-like words of a phrase (a letter and a digit, or two capitals: "IL-6", "G6PD", "ICU"),
    bracketed statistics left out."""
    return frozenset(w.lower() for w in WORD_RE.findall(STATISTICS.sub(" ", text))
                     if any(c.isdigit() for c in w) and any(c.isalpha() for c in w) or sum(c.isupper() for c in w) >= 2)
