"""Lexical cue detection shared by claim extraction, pair mining, the heuristic annotator and the
reference model's comparison features: negation, hedging, direction of effect, and the
per-axis context cues declared in the ontology.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache

from biodivergence_dataset import ontology

NEGATION_WORDS = (
    "no", "not", "neither", "nor", "never", "none", "without", "absence", "absent", "lack", "lacked",
    "lacks", "failed", "fails", "fail", "unable", "cannot", "insignificant", "non-significant",
    "nonsignificant",
)
NO_DIFFERENCE_PHRASES = (
    "no significant", "not significantly", "did not differ", "no difference", "no differences",
    "not associated", "no association", "no effect", "no significant difference", "similar between",
    "comparable between", "did not improve", "did not reduce", "did not increase", "was not associated",
    "were not associated", "no benefit", "not effective", "ineffective", "not superior", "non-inferior",
    "no change", "unchanged", "did not affect", "had no", "no statistically significant",
    "not statistically significant", "not statistically different", "not different", "did not significantly",
    "no group difference", "no group differences", "no between-group difference", "no between-group differences",
    "non-significant", "nonsignificant", "did not change",
)
HEDGE_WORDS = (
    "may", "might", "could", "possibly", "possible", "suggest", "suggests", "suggested", "suggesting",
    "appear", "appears", "appeared", "likely", "unlikely", "potential", "potentially", "perhaps",
    "putative", "presumably", "hypothesize", "hypothesized", "speculate", "trend", "tended",
)
INCREASE_WORDS = (
    "increase", "increased", "increases", "increasing", "higher", "greater", "elevated", "improved",
    "improves", "improve", "enhanced", "enhances", "more", "raised", "rise", "rose", "gain", "up-regulated",
    "upregulated", "promoted", "promotes", "superior", "better", "longer", "benefit", "beneficial",
    "effective", "efficacious", "positively", "protective", "risk factor",
)
DECREASE_WORDS = (
    "decrease", "decreased", "decreases", "decreasing", "lower", "reduced", "reduces", "reduce",
    "reduction", "less", "fewer", "declined", "decline", "diminished", "down-regulated", "downregulated",
    "inhibited", "inhibits", "suppressed", "worse", "worsened", "shorter", "inferior", "impaired",
    "negatively", "harmful", "loss",
)
SPECULATIVE_PHRASES = (
    "further studies", "further research", "further investigation", "future studies", "future research",
    "more studies", "additional studies", "larger studies", "remains to be", "remain to be",
    "are needed", "is needed", "is warranted", "are warranted", "should be investigated",
)

_WORD = re.compile(r"[A-Za-z][A-Za-z\-']*")


def phrase_regex(phrases: tuple[str, ...]) -> re.Pattern:
    alts = sorted((re.escape(p) for p in phrases), key=len, reverse=True)
    return re.compile(r"(?<![\w-])(?:" + "|".join(alts) + r")(?![\w-])", re.IGNORECASE)


_NEG_RE = phrase_regex(NEGATION_WORDS + ("n't",))
_NODIFF_RE = phrase_regex(NO_DIFFERENCE_PHRASES)
_HEDGE_RE = phrase_regex(HEDGE_WORDS)
_INC_RE = phrase_regex(INCREASE_WORDS)
_DEC_RE = phrase_regex(DECREASE_WORDS)
_SPEC_RE = phrase_regex(SPECULATIVE_PHRASES)


def has_negation(text: str) -> bool:
    return bool(_NEG_RE.search(text))


def has_hedge(text: str) -> bool:
    return bool(_HEDGE_RE.search(text))


def is_speculative(text: str) -> bool:
    """A follow-up remark such as 'further studies are needed' (paper Table 25, filtered)."""
    return bool(_SPEC_RE.search(text))


def direction(text: str) -> str | None:
    """Direction of the reported effect: 'null' (no difference), 'increase', 'decrease', or None."""
    return direction_from(bool(_NODIFF_RE.search(text)), len(_INC_RE.findall(text)), len(_DEC_RE.findall(text)),
                          has_negation(text))


def direction_from(no_difference: bool, n_increase: int, n_decrease: int, negated: bool) -> str | None:
    """:func:`direction` from its ingredients (cue presence and counts)."""
    if no_difference:
        return "null"
    if n_increase == n_decrease:
        return None
    if negated:
        return "null"
    return "increase" if n_increase > n_decrease else "decrease"


def polarity(text: str) -> int:
    """+1 for a positive finding, -1 for a negative/null finding, 0 when unclear."""
    return polarity_from(direction(text), has_negation(text))


def polarity_from(direction_value: str | None, negated: bool) -> int:
    """:func:`polarity` from a direction and the negation flag."""
    if direction_value == "null" or (direction_value is None and negated):
        return -1
    if direction_value in ("increase", "decrease"):
        return 1
    return 0


@dataclass(frozen=True)
class CueHit:
    """One context cue found in a text: which axis, the matched value, and its character offsets."""

    axis: str
    value: str
    start: int
    end: int


@cache
def _axis_regex(axis_name: str) -> re.Pattern | None:
    patterns = ontology.axis(axis_name).cue_patterns
    if not patterns:
        return None
    return re.compile(r"(?<![\w-])(?:" + "|".join(f"(?:{p})" for p in patterns) + r")(?![\w-])", re.IGNORECASE)


def axis_cues(text: str, axes: tuple[str, ...] = ontology.AXIS_NAMES) -> list[CueHit]:
    """All axis cue matches in ``text``, ordered by position."""
    hits = []
    for name in axes:
        rx = _axis_regex(name)
        if rx is None:
            continue
        hits.extend(CueHit(name, m.group(0).lower(), m.start(), m.end()) for m in rx.finditer(text))
    return sorted(hits, key=lambda h: (h.start, h.axis))


def axis_values(text: str) -> dict[str, set[str]]:
    """``{axis: {normalised cue values}}`` for the axes that have a cue in ``text``."""
    out: dict[str, set[str]] = {}
    for hit in axis_cues(text):
        out.setdefault(hit.axis, set()).add(hit.value)
    return out


_VALUE_ALIASES = {
    "us": "united states", "usa": "united states", "u.s": "united states", "america": "united states",
    "uk": "united kingdom", "paediatric": "pediatric", "child": "children", "randomised": "randomized",
    "faeces": "feces", "disc diffusion": "disk diffusion", "etest": "e-test",
}


def canonical_value(value: str) -> str:
    """Normalise a cue value so spelling and number variants compare equal ('Adults' = 'adult')."""
    v = " ".join(value.lower().replace("–", "-").strip(" .").split())
    if v in _VALUE_ALIASES:
        return _VALUE_ALIASES[v]
    words = [w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in v.split()]
    return _VALUE_ALIASES.get(" ".join(words), " ".join(words))


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


# --- Lexical contradiction cues (added for pair mining; see builder/pair_scores.py) -----------------------
CONTRAST_PHRASES = (
    "however", "in contrast", "by contrast", "contrary to", "contrasts with", "conflicting", "inconsistent with",
    "controversial", "contradictory", "discordant", "discrepant", "paradoxically", "unlike", "whereas",
    "but not", "rather than", "instead of", "opposite", "refute", "refutes", "refuted", "challenge",
    "challenges", "disputed",
)

#: Quantity and degree words: a claim pair differing in one of them often asserts different amounts
#: ("all" vs "some", "major" vs "minor", "always" vs "rarely").
QUANTIFIER_WORDS = (
    "all", "none", "some", "most", "few", "many", "several", "only", "always", "never", "rarely", "often",
    "usually", "sometimes", "majority", "minority", "every", "any", "little", "much", "sole", "solely",
    "primarily", "mainly", "mostly", "major", "minor", "primary", "secondary", "main", "partially", "partly",
    "fully", "completely", "entirely", "exclusively", "universal", "universally", "necessary", "sufficient",
)
#: Prefixes that negate a word's meaning (un-, in-, non-, dis-, …): "effective" vs "ineffective".
NEGATING_PREFIXES = ("un", "in", "im", "il", "ir", "non", "non-", "dis", "anti", "anti-")

#: A number, fraction or percentage that is not part of an identifier (``IL-6``, ``COVID-19``, ``CD4``).
_NUMBER_RE = re.compile(r"(?<![\w.\-/])\d+(?:[.,]\d+)?(?:\s*/\s*\d+(?:[.,]\d+)?)?(?:\s?%)?(?![\w\-])")
_YEAR_RE = re.compile(r"^(?:19[5-9]\d|20[0-3]\d)$")


@lru_cache(maxsize=200_000)
def negation_stems(word: str) -> frozenset[str]:
    """The words of four letters or more that ``word`` negates by one of :data:`NEGATING_PREFIXES`
    ("ineffective" → {"effective"}); empty for most words. Cached: checking a pair's words for prefix
    antonyms is then one lookup per word, not ten new forms of every word for every pair (the mine
    stage's hot path)."""
    return frozenset(word[len(p):] for p in NEGATING_PREFIXES if word.startswith(p) and len(word) - len(p) >= 4)


def prefix_negates(words_a: frozenset[str], words_b: frozenset[str]) -> bool:
    """True when a word of one set is a word of the other with a negating prefix ("effective" / "ineffective")."""
    return any(not negation_stems(w).isdisjoint(words_a) for w in words_b) or \
        any(not negation_stems(w).isdisjoint(words_b) for w in words_a)


def opposite_words(words_a: frozenset[str], words_b: frozenset[str]) -> bool:
    """True when a word of ``words_a`` and a word of ``words_b`` are opposed terms (same group of
    :data:`OPPOSED_TERMS`, opposite signs: "enhances" / "suppresses") or one negates the other by a prefix
    ("effective" / "ineffective"). Meant for the words that differ between two claims."""
    signs_b = {hit for hit in map(term_polarity, words_b) if hit}
    if any(hit and (hit[0], -hit[1]) in signs_b for hit in map(term_polarity, words_a)):
        return True
    return prefix_negates(words_a, words_b)


def numbers(text: str) -> frozenset[str]:
    """Normalised numeric values in ``text`` (years excluded: they are context, not results)."""
    out = set()
    for m in _NUMBER_RE.finditer(text):
        token = re.sub(r"\s+", "", m.group(0)).replace(",", ".")
        if _YEAR_RE.match(token):
            continue
        out.add(token)
    return frozenset(out)


#: Opposed effect terms: group → (positive forms, negative forms), as full-word regexes. Two
#: statements that differ by words of one group with opposite signs assert opposite findings
#: ("enhances" / "suppresses"). Negation words are kept out: they are counted separately.
OPPOSED_TERMS: dict[str, tuple[str, str]] = {
    "effect": (
        (r"increas\w*|higher|high|greater|more|elevat\w*|rais(?:e|es|ed|ing)|ris(?:e|es|ing)|rose|gain\w*|"
        r"up-?regulat\w*|enhanc\w*|augment\w*|boost\w*|amplif\w*|accumulat\w*|exceed\w*|"
        r"activat\w*|stimulat\w*|promot\w*|induc\w*|facilitat\w*|potentiat\w*|trigger\w*|accelerat\w*|"
        r"enabl\w*|agonist\w*|caus(?:e|es|ed|ing)|driv(?:e|es|en|ing)|drove|encourag\w*|stabili[sz]\w*"),
        (r"decreas\w*|lower|low|reduc\w*|less|fewer|diminish\w*|declin\w*|down-?regulat\w*|attenuat\w*|"
        r"lessen\w*|deplet\w*|loss|los(?:e|es|t|ing)|drop(?:s|ped|ping)?|fall|falls|fell|minimi[sz]\w*|"
        r"inhibit\w*|suppress\w*|repress\w*|block\w*|prevent\w*|abolish\w*|imped\w*|delay\w*|slow\w*|"
        r"hinder\w*|abrogat\w*|impair\w*|disrupt\w*|antagoni\w*|arrest\w*|discourag\w*|destabili[sz]\w*"),
    ),
    "valence": (
        (r"improv\w*|benefi\w*|better|best|favou?rabl\w*|effective\w*|efficac\w*|success\w*|safe|safer|"
        r"safely|helpful|protect\w*|superior|advantage\w*|useful|outperform\w*"),
        (r"worse\w*|worst|harm\w*|detriment\w*|deleterious|ineffective\w*|unfavou?rabl\w*|unsuccessful|"
        r"unsafe|dangerous|useless|inferior|disadvantage\w*|damag\w*|underperform\w*"),
    ),
    "necessity": (
        r"necessar\w*|requir\w*|essential|indispensabl\w*|critical|crucial|important|needed",
        r"dispensabl\w*|unnecessar\w*|redundant|irrelevant|unimportant|non-?essential",
    ),
    "sign": (r"positive|positively", r"negative|negatively|inverse|inversely"),
    "frequency": (
        r"common|commonly|frequent\w*|often|majority|most|usual\w*|widespread|prevalent",
        r"rare|rarely|infrequent\w*|seldom|uncommon|minority|few|unusual\w*",
    ),
    "magnitude": (
        r"strong\w*|large|larger|largest|substantial\w*|marked|markedly|profound\w*",
        r"weak\w*|small|smaller|smallest|slight\w*|modest\w*|marginal\w*|negligibl\w*|minimal\w*",
    ),
    "length": (
        r"long|longer|longest|prolong\w*|extend\w*|lengthen\w*",
        r"short|shorter|shortest|shorten\w*|brief\w*",
    ),
    "timing": (r"early|earlier|earliest", r"late|later|latest"),
    "sensitivity": (
        r"sensitiv\w*|susceptib\w*|responsive",
        r"resistan\w*|refractor\w*|unresponsive|insensitiv\w*",
    ),
    "sameness": (
        r"same|similar\w*|identical|equal|equally|comparabl\w*|equivalent",
        r"different|differ|differs|differed|distinct|unequal|dissimilar",
    ),
}

_OPPOSED_RE = {
    group: tuple(re.compile(rf"(?:{p})", re.IGNORECASE) for p in pats) for group, pats in OPPOSED_TERMS.items()
}
_NEGATION_SET = frozenset(NEGATION_WORDS)


def is_negation_word(word: str) -> bool:
    w = word.lower()
    return w in _NEGATION_SET or w.endswith("n't")


@lru_cache(maxsize=200_000)
def term_polarity(word: str) -> tuple[str, int] | None:
    """``(group, +1 | -1)`` when ``word`` is one of the OPPOSED_TERMS, else None (negation words: None).
    Cached per word: words repeat across claims and pairs."""
    if is_negation_word(word):
        return None
    for group, (pos, neg) in _OPPOSED_RE.items():
        if pos.fullmatch(word):
            return group, 1
        if neg.fullmatch(word):
            return group, -1
    return None


# --- One-pass scanning of many cue patterns (added for claim extraction throughput) -----------------
try:  # Python ≥ 3.11
    from re import _constants as _sre_c
    from re import _parser as _sre_parse
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as _sre_c  # type: ignore[no-redef]
    import sre_parse as _sre_parse  # type: ignore[no-redef]

_PREFIX_LENGTHS = (6, 5, 4, 3, 2, 1)  # the longest that keeps a pattern's prefix set small is used
_MAX_PREFIXES = 20_000
_MAX_CLASS = 64
_MAX_WINDOWS = 200_000
_HEAD = 3  # characters looked at first at each word start


def canonical(text: str) -> str:
    """Case-folded, every decimal digit as "0" and every whitespace character as " " (the form in which
    prefixes are indexed, so that ``\\d`` and ``\\s`` stay exact for all of Unicode)."""
    return "".join("0" if c.isdecimal() else " " if c.isspace() else c for c in text.casefold())


class _Unindexable(Exception):
    """A pattern whose matches cannot be told apart by a literal prefix (it stays a plain scan)."""


_CATEGORY_CANON = {_sre_c.CATEGORY_DIGIT: "0", _sre_c.CATEGORY_SPACE: " "}


def _class_chars(items) -> set[str] | None:
    chars: set[str] = set()
    for op, av in items:
        if op is _sre_c.LITERAL:
            chars.add(canonical(chr(av)))
        elif op is _sre_c.RANGE and av[1] - av[0] < _MAX_CLASS:
            chars.update(canonical(chr(c)) for c in range(av[0], av[1] + 1))
        elif op is _sre_c.CATEGORY and av in _CATEGORY_CANON:
            chars.add(_CATEGORY_CANON[av])
        else:
            return None
    return chars


def _element_prefixes(op, av, k: int) -> set[tuple[str, bool]]:
    """``{(prefix, open)}`` of one parsed element; ``open``: the element is fully consumed, so what follows extends it."""
    if op is _sre_c.LITERAL:
        return {(canonical(chr(av)), True)}
    if op is _sre_c.IN:
        chars = _class_chars(av)
        return {(c, True) for c in chars} if chars else {("", False)}
    if op is _sre_c.BRANCH:
        return set().union(*(_sequence_prefixes(alt, k) for alt in av[1]))
    if op is _sre_c.SUBPATTERN:
        return _sequence_prefixes(av[-1], k)
    if op in (_sre_c.MAX_REPEAT, _sre_c.MIN_REPEAT, getattr(_sre_c, "POSSESSIVE_REPEAT", None)):
        # x{lo,hi} = x repeated lo times (at most the prefix length), then an optional further x
        lo, hi, sub = av
        sub_items = list(sub)
        required = [(_sre_c.SUBPATTERN, (None, 0, 0, sub_items))] * min(lo, k)
        prefixes = _sequence_prefixes(required, k)
        if hi == lo:
            return prefixes
        once_more = _sequence_prefixes(sub_items, k)
        optional = (once_more if hi - lo == 1 else {(p, False) for p, _ in once_more}) | {("", True)}
        return _join(prefixes, optional, k)
    if op in (_sre_c.AT, _sre_c.ASSERT, _sre_c.ASSERT_NOT):
        return {("", True)}
    return {("", False)}


def _join(current: set[tuple[str, bool]], element: set[tuple[str, bool]], k: int) -> set[tuple[str, bool]]:
    """Prefixes of ``current`` followed by ``element`` (open prefixes are extended, closed ones kept)."""
    nxt = set()
    for p, o in current:
        if not o or len(p) >= k:
            nxt.add((p[:k], False))
            continue
        for q, qo in element:
            joined = p + q
            nxt.add((joined[:k], qo and len(joined) < k))
    if len(nxt) > _MAX_PREFIXES:
        raise _Unindexable
    return nxt


def _sequence_prefixes(items, k: int) -> set[tuple[str, bool]]:
    current = {("", True)}
    for op, av in items:
        if not any(o and len(p) < k for p, o in current):
            break
        current = _join(current, _element_prefixes(op, av, k), k)
    return current


def literal_prefixes(pattern: str) -> frozenset[str]:
    """:func:`canonical` strings (1–4 characters, as long as keeps the set small) one of which starts the
    canonical form of every match of ``pattern`` (matched with IGNORECASE); raises _Unindexable when some
    match may start with anything."""
    parsed = _sre_parse.parse(pattern, re.IGNORECASE)
    for k in _PREFIX_LENGTHS:
        try:
            prefixes = frozenset(p for p, _ in _sequence_prefixes(parsed, k))
            break
        except _Unindexable:
            continue
    else:
        raise _Unindexable
    if "" in prefixes:
        raise _Unindexable
    return prefixes


def bounded_regex(pattern: str) -> re.Pattern:
    """``pattern`` as a case-insensitive regex whose matches are whole words (not inside ``[\\w-]`` runs)."""
    return re.compile(r"(?<![\w-])(?:" + pattern + r")(?![\w-])", re.IGNORECASE)


class PatternScanner:
    """Find the matches of many named patterns in one pass over a text.

    ``scan(text).get(name, [])`` equals ``list(bounded_regex(patterns[name]).finditer(text))`` (names
    without a match are left out of the result): every match of
    such a pattern starts a word and with one of its literal prefixes, so the regex is only tried where a
    word starts with one of them (one dict look-up per word instead of one alternation attempt per
    character and pattern). Patterns without a literal prefix are scanned in full. Look-ups go through
    two memos: the first ``_HEAD`` characters at a word start tell whether any prefix can begin there
    (most words: no), and only then the full window is looked up.
    """

    def __init__(self, patterns: dict[str, str]):
        self.regexes = {name: bounded_regex(p) for name, p in patterns.items()}
        self._by_prefix: dict[str, list[str]] = {}
        self._full_scan: list[str] = []
        for name, pattern in patterns.items():
            try:
                prefixes = literal_prefixes(pattern)
            except _Unindexable:
                self._full_scan.append(name)
                continue
            for prefix in prefixes:
                self._by_prefix.setdefault(prefix, []).append(name)
        self._lengths = sorted({len(p) for p in self._by_prefix})
        firsts = {p[0] for p in self._by_prefix}
        charset = "".join(re.escape(c) for c in sorted(firsts - {"0", " "}))
        charset += r"\d" * ("0" in firsts) + r"\s" * (" " in firsts)
        self._starts = re.compile(r"(?<![\w-])[" + charset + "]", re.IGNORECASE) if charset else None
        self._window_names: dict[str, tuple[str, ...]] = {}
        # canonical heads that some prefix starts with, or that start with a (short) prefix
        self._hot_heads = {p[:_HEAD] for p in self._by_prefix}
        self._head_memo: dict[str, bool] = {}

    def _is_hot(self, head: str) -> bool:
        """Whether a word starting with ``head`` may start a match (memoised per head)."""
        hot = self._head_memo.get(head)
        if hot is None:
            if len(self._head_memo) > _MAX_WINDOWS:
                self._head_memo.clear()
            key = canonical(head)
            hot = len(key) < _HEAD or key in self._hot_heads or any(
                key[:k] in self._by_prefix for k in range(1, _HEAD))
            self._head_memo[head] = hot
        return hot

    def _names_for(self, window: str) -> tuple[str, ...]:
        """Pattern names with a prefix that starts ``window`` (memoised per window)."""
        names = self._window_names.get(window)
        if names is None:
            if len(self._window_names) > _MAX_WINDOWS:
                self._window_names.clear()
            key = canonical(window)
            names = tuple(dict.fromkeys(n for k in self._lengths for n in self._by_prefix.get(key[:k], ())))
            self._window_names[window] = names
        return names

    def scan(self, text: str) -> dict[str, list[re.Match]]:
        candidates: dict[str, list[int]] = {}
        memo, width = self._window_names, max(self._lengths, default=1)
        heads, is_hot = self._head_memo, self._is_hot
        for m in self._starts.finditer(text) if self._starts else ():
            p = m.start()
            head = text[p:p + _HEAD]
            if not (heads.get(head) or (head not in heads and is_hot(head))):
                continue
            window = text[p:p + width]
            names = memo.get(window)
            if names is None:
                names = self._names_for(window)
            for name in names:
                candidates.setdefault(name, []).append(p)
        out: dict[str, list[re.Match]] = {}
        for name, positions in candidates.items():
            rx, found, last_end = self.regexes[name], [], 0
            for p in positions:
                if p < last_end:
                    continue
                hit = rx.match(text, p)
                if hit:
                    found.append(hit)
                    last_end = hit.end()
            if found:
                out[name] = found
        for name in self._full_scan:
            found = list(self.regexes[name].finditer(text))
            if found:
                out[name] = found
        return out


def phrase_pattern(phrases: tuple[str, ...]) -> str:
    """The alternation (longest first) of literal ``phrases``, for :func:`bounded_regex`/PatternScanner."""
    return "|".join(sorted((re.escape(p) for p in phrases), key=len, reverse=True))


def axis_pattern(axis_name: str) -> str | None:
    """The alternation of an ontology axis's cue patterns (None when it has none)."""
    patterns = ontology.axis(axis_name).cue_patterns
    return "|".join(f"(?:{p})" for p in patterns) if patterns else None


#: Named patterns of this module's lexicons (the negation pattern also catches "n't").
LEXICON_PATTERNS: dict[str, str] = {
    "negation": phrase_pattern(NEGATION_WORDS + ("n't",)),
    "no_difference": phrase_pattern(NO_DIFFERENCE_PHRASES),
    "hedge": phrase_pattern(HEDGE_WORDS),
    "increase": phrase_pattern(INCREASE_WORDS),
    "decrease": phrase_pattern(DECREASE_WORDS),
    "speculative": phrase_pattern(SPECULATIVE_PHRASES),
    "contrast": phrase_pattern(CONTRAST_PHRASES),
}
AXIS_PATTERN_PREFIX = "axis:"


def cue_patterns() -> dict[str, str]:
    """The lexicon patterns plus one ``axis:<name>`` pattern per axis that has cues."""
    out = dict(LEXICON_PATTERNS)
    for name in ontology.AXIS_NAMES:
        pattern = axis_pattern(name)
        if pattern:
            out[AXIS_PATTERN_PREFIX + name] = pattern
    return out


@dataclass(frozen=True)
class CueScan:
    """All of this module's cue findings for one text, from a single scan."""

    negated: bool
    hedged: bool
    speculative: bool
    contrast: bool
    direction: str | None
    polarity: int
    axis_hits: tuple[CueHit, ...]

    @classmethod
    def from_matches(cls, matches: dict[str, list[re.Match]]) -> CueScan:
        """Build from :class:`PatternScanner` output over (at least) :func:`cue_patterns`."""
        get = matches.get
        negated = "negation" in matches
        d = direction_from("no_difference" in matches, len(get("increase", ())), len(get("decrease", ())), negated)
        hits = sorted(
            (CueHit(name[len(AXIS_PATTERN_PREFIX):], m.group(0).lower(), m.start(), m.end())
             for name, ms in matches.items() if name.startswith(AXIS_PATTERN_PREFIX) for m in ms),
            key=lambda h: (h.start, h.axis),
        )
        return cls(negated, "hedge" in matches, "speculative" in matches, "contrast" in matches, d,
                   polarity_from(d, negated), tuple(hits))


@lru_cache(maxsize=1)
def _default_scanner() -> PatternScanner:
    return PatternScanner(cue_patterns())


def scan(text: str) -> CueScan:
    """Negation, hedge, speculation, contrast, direction, polarity and axis cues of ``text`` in one pass
    (same results as the single-purpose functions above)."""
    return CueScan.from_matches(_default_scanner().scan(text))
