"""Query packs (``builder/querypacks/<domain>.yaml``) and domain assignment from their terms.

A pack holds PubMed-syntax queries in four groups (paper appendix G.1). The same queries drive
collection (``biodivergence collect``) and the domain of local files that carry no query
provenance: the assignment terms of a domain are every fielded term of its ``broad_recall``
queries plus the MeSH terms (``[MeSH]``) of all its groups; the other groups' free-text terms
are contradiction/outcome/context modifiers shared by every domain and are left out.

Scoring: each distinct term scores 3 if it matches a MeSH heading of the record, else 2 if it
occurs in the title, else 1 if it occurs in the abstract text. The best-scoring domain wins if
it reaches ``min_score``; ties go to more MeSH points, then more distinct terms, then the order
of ``ontology.DOMAIN_NAMES``. Matching is on lower-cased alphanumeric tokens with a light plural
stemmer, Greek letters spelt out (``β`` = ``beta``); a MeSH term matches a heading that contains
its tokens contiguously (``Neoplasms`` matches ``Breast Neoplasms``); a trailing ``*`` truncates.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from biodivergence_dataset.ontology import DOMAIN_NAMES

QUERY_GROUPS = ("broad_recall", "contradiction", "outcome_comparison", "context_sensitive")
ASSIGNMENT_GROUP = "broad_recall"
PACK_DIR = Path(__file__).parent / "querypacks"

MESH_WEIGHT, TITLE_WEIGHT, TEXT_WEIGHT = 3, 2, 1

_FIELDED_TERM = re.compile(r'(?:"([^"]+)"|([^\s()"\[\]]+))\s*\[([A-Za-z /]+)\]')
_MESH_TAGS = frozenset({"mesh", "mh", "mesh terms", "majr", "mesh major topic"})
_TEXT_TAGS = frozenset({"tiab", "ti", "ab", "tw", "title", "abstract", "title/abstract", "text word", "pt"})
_EUROPEPMC_FIELDS = {"mesh": "MESH", "ti": "TITLE", "title": "TITLE", "ab": "ABSTRACT", "abstract": "ABSTRACT",
                     "pt": "PUB_TYPE"}


@dataclass(frozen=True)
class QueryPack:
    domain: str
    groups: dict[str, tuple[str, ...]]

    def queries(self, groups: Iterable[str] = QUERY_GROUPS) -> list[tuple[str, str]]:
        """``(group, query)`` pairs of the chosen groups, in pack order."""
        return [(g, q) for g in groups for q in self.groups.get(g, ())]

    def assignment_terms(self) -> list[tuple[str, bool]]:
        """``(term, is_mesh)`` used for domain assignment (see module docstring)."""
        terms = []
        for group, query in self.queries():
            for term, is_mesh in query_terms(query):
                if group == ASSIGNMENT_GROUP or is_mesh:
                    terms.append((term, is_mesh))
        return list(dict.fromkeys(terms))


def load_pack(path: str | Path) -> QueryPack:
    """Read and check one query pack YAML file."""
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    domain, groups = data.get("domain"), data.get("groups") or {}
    if domain not in DOMAIN_NAMES:
        raise ValueError(f"{path}: domain {domain!r} is not one of {list(DOMAIN_NAMES)}")
    unknown = set(groups) - set(QUERY_GROUPS)
    if unknown:
        raise ValueError(f"{path}: unknown query groups {sorted(unknown)}; expected {list(QUERY_GROUPS)}")
    for group, queries in groups.items():
        if not isinstance(queries, list) or not all(isinstance(q, str) and q.strip() for q in queries):
            raise ValueError(f"{path}: group {group!r} must be a list of query strings")
    return QueryPack(domain, {g: tuple(groups.get(g) or ()) for g in QUERY_GROUPS})


def load_packs(pack_dir: str | Path | None = None) -> dict[str, QueryPack]:
    """All packs of a folder, keyed by domain, in ``DOMAIN_NAMES`` order."""
    folder = Path(pack_dir) if pack_dir else PACK_DIR
    packs = {p.domain: p for p in (load_pack(f) for f in sorted(folder.glob("*.yaml")))}
    if not packs:
        raise FileNotFoundError(f"no query packs (*.yaml) in {folder}")
    return {d: packs[d] for d in DOMAIN_NAMES if d in packs}


def query_terms(query: str) -> list[tuple[str, bool]]:
    """The fielded terms of a PubMed query as ``(term, is_mesh)``; terms right after NOT are skipped."""
    found = []
    for m in _FIELDED_TERM.finditer(query):
        tag = m.group(3).strip().lower()
        if query[:m.start()].rstrip().endswith("NOT") or tag not in _MESH_TAGS | _TEXT_TAGS:
            continue
        found.append(((m.group(1) or m.group(2)).strip(), tag in _MESH_TAGS))
    return found


def to_europepmc(query: str) -> str:
    """Translate a PubMed-syntax query to Europe PMC syntax (``"X"[MeSH]`` → ``MESH:"X"``, ``[tiab]`` → ``TITLE_ABS:``)."""

    def field(m: re.Match) -> str:
        tag = m.group(3).strip().lower()
        name = "MESH" if tag in _MESH_TAGS else _EUROPEPMC_FIELDS.get(tag, "TITLE_ABS")
        term = f'"{m.group(1)}"' if m.group(1) is not None else m.group(2)
        return f"{name}:{term}"

    return _FIELDED_TERM.sub(field, query)


# ---------------------------------------------------------------------------------------------
# matching

_TOKEN = re.compile(r"[a-z0-9]+")
_ALNUM = b"abcdefghijklmnopqrstuvwxyz0123456789"
#: Maps every byte but [a-z0-9] to a space, so ``split()`` yields the alphanumeric tokens.
_TO_TOKENS = bytes(b if b in _ALNUM else 32 for b in range(256))
_GREEK = (("α", " alpha "), ("β", " beta "), ("γ", " gamma "), ("δ", " delta "), ("κ", " kappa "),
          ("μ", " mu "), ("ε", " epsilon "), ("λ", " lambda "), ("σ", " sigma "), ("τ", " tau "))


def stem(token: str) -> str:
    """Light plural stemmer for terms (``therapies`` → ``therapy``, ``viruses`` → ``virus``)."""
    if len(token) <= 3 or not token.endswith("s"):
        return token
    if token.endswith("ies") and len(token) > 4:
        return token[:-3] + "y"
    if token.endswith(("uses", "sses", "xes", "ches", "shes")):
        return token[:-2]
    if token.endswith(("ss", "us", "is")):
        return token
    return token[:-1]


def surface_forms(stemmed: str) -> tuple[str, ...]:
    """The text forms a stemmed term token matches (singular and plurals)."""
    forms = [stemmed, stemmed + "s", stemmed + "es"]
    if stemmed.endswith("y") and len(stemmed) > 2:
        forms.append(stemmed[:-1] + "ies")
    return tuple(forms)


def _form_pattern(stemmed: str) -> str:
    """Regex for the surface forms, starting with a literal so the regex engine can skip ahead."""
    if stemmed.endswith("y") and len(stemmed) > 2:
        return re.escape(stemmed[:-1]) + "(?:y|ys|yes|ies)"
    return re.escape(stemmed) + "(?:s|es)?"


def lowered(text: str) -> str:
    """Lower-case with Greek letters spelt out (``β-lactam`` → `` beta -lactam``)."""
    low = text.lower()
    if not low.isascii():
        for letter, name in _GREEK:
            if letter in low:
                low = low.replace(letter, name)
    return low


@dataclass(frozen=True)
class _Term:
    tokens: tuple[str, ...]  # stemmed; a truncated last token stays as written
    prefix: bool  # the last token is a truncation (``antibiot*``)
    domains: tuple[str, ...]

    def pattern(self) -> re.Pattern:
        """A regex for the term in a token string ``b" tok1 tok2 … "`` (any plural form of each word)."""
        parts = [_form_pattern(t) for t in self.tokens[:-1]]
        parts.append(re.escape(self.tokens[-1]) + "[a-z0-9]*" if self.prefix else _form_pattern(self.tokens[-1]))
        return re.compile((" " + " ".join(parts) + " ").encode())


@dataclass
class DomainAssigner:
    """Assigns a domain to an abstract from query-pack terms (see module docstring).

    Single-word terms are looked up by their surface forms in the set of text tokens. A phrase is
    tried only when every one of its words occurs, and then confirmed with a regex over the token
    string; truncated terms always go to their regex. MeSH headings repeat across records, so each
    heading's matches are cached.
    """

    packs: dict[str, QueryPack]
    min_score: int = 2
    _single: dict[bytes, _Term] = field(init=False, repr=False)
    _phrases: dict[bytes, list[tuple[_Term, re.Pattern, tuple[frozenset[bytes], ...]]]] = field(init=False, repr=False)
    _truncated: list[tuple[_Term, re.Pattern]] = field(init=False, repr=False)
    _order: dict[str, int] = field(init=False, repr=False)
    _headings: dict[str, frozenset[_Term]] = field(init=False, repr=False)
    _single_keys: frozenset[bytes] = field(init=False, repr=False)
    _phrase_keys: frozenset[bytes] = field(init=False, repr=False)

    def __post_init__(self):
        merged: dict[tuple[tuple[str, ...], bool], set[str]] = {}
        for domain, pack in self.packs.items():
            for term, _ in pack.assignment_terms():
                prefix = term.endswith("*")
                toks = _term_tokens(term.rstrip("*"), prefix)
                if toks:
                    merged.setdefault((toks, prefix), set()).add(domain)
        self._single, self._phrases, self._truncated, self._headings = {}, {}, [], {}
        for (toks, prefix), domains in sorted(merged.items()):
            term = _Term(toks, prefix, tuple(sorted(domains, key=DOMAIN_NAMES.index)))
            if prefix and len(toks) == 1:
                self._truncated.append((term, term.pattern()))
            elif len(toks) == 1:
                self._single.update((form.encode(), term) for form in surface_forms(toks[0]))
            else:
                whole = toks[:-1] if prefix else toks
                forms = tuple(frozenset(f.encode() for f in surface_forms(t)) for t in whole)
                for first in forms[0]:
                    self._phrases.setdefault(first, []).append((term, term.pattern(), forms[1:]))
        self._single_keys, self._phrase_keys = frozenset(self._single), frozenset(self._phrases)
        self._order = {d: i for i, d in enumerate(DOMAIN_NAMES)}

    @classmethod
    def from_dir(cls, pack_dir: str | Path | None = None, min_score: int = 2) -> DomainAssigner:
        return cls(load_packs(pack_dir), min_score)

    def matches(self, text: str) -> set[_Term]:
        """The terms occurring in ``text``."""
        words = lowered(text).encode("utf-8").translate(_TO_TOKENS).split()
        present = set(words)
        found = {self._single[t] for t in present.intersection(self._single_keys)}
        tokens = None  # the token string, built only if a phrase or truncated term needs a regex
        for first in present.intersection(self._phrase_keys):
            for term, pattern, rest in self._phrases[first]:
                if term not in found and all(not present.isdisjoint(f) for f in rest):
                    tokens = tokens or b" " + b" ".join(words) + b" "
                    if pattern.search(tokens):
                        found.add(term)
        if self._truncated:
            tokens = tokens or b" " + b" ".join(words) + b" "
            found.update(term for term, pattern in self._truncated if pattern.search(tokens))
        return found

    def mesh_matches(self, headings: Iterable[str]) -> set[_Term]:
        """The terms matching any of the MeSH headings (no phrase spans two headings)."""
        found: set[_Term] = set()
        for heading in headings:
            hit = self._headings.get(heading)
            if hit is None:
                if len(self._headings) > 100_000:
                    self._headings.clear()
                hit = self._headings[heading] = frozenset(self.matches(heading))
            found |= hit
        return found

    def scores(self, title: str, text: str, mesh_terms: Iterable[str]) -> dict[str, tuple[int, int, int]]:
        """Domain -> ``(score, mesh points, distinct terms)`` for the domains with any match."""
        mesh = self.mesh_matches(mesh_terms)
        in_title = self.matches(title) - mesh if title else set()
        in_text = self.matches(text) - mesh - in_title
        totals: dict[str, list[int]] = {}
        for terms, weight in ((mesh, MESH_WEIGHT), (in_title, TITLE_WEIGHT), (in_text, TEXT_WEIGHT)):
            for term in terms:
                for domain in term.domains:
                    t = totals.setdefault(domain, [0, 0, 0])
                    t[0] += weight
                    t[1] += weight if weight == MESH_WEIGHT else 0
                    t[2] += 1
        return {d: (t[0], t[1], t[2]) for d, t in totals.items()}

    def assign(self, title: str, text: str, mesh_terms: Iterable[str] = ()) -> str | None:
        """The best domain, or None when no domain reaches ``min_score``."""
        scores = self.scores(title, text, mesh_terms)
        if not scores:
            return None
        best = max(scores, key=lambda d: (*scores[d], -self._order[d]))
        return best if scores[best][0] >= self.min_score else None


def _term_tokens(term: str, prefix: bool) -> tuple[str, ...]:
    """A term's stemmed tokens; a truncated last token stays as written."""
    raw = _TOKEN.findall(lowered(term))
    if prefix:
        return tuple(stem(t) for t in raw[:-1]) + tuple(raw[-1:])
    return tuple(stem(t) for t in raw)
