"""The expert-labelled gold sources, read at run time as claim pairs (records never enter the repository).

- SciFact: claims that share an evidence abstract; opposite labels (SUPPORT vs CONTRADICT) →
  conflict, the same label → no conflict (train + dev: 334 + 185 = 519 pairs).
- HealthVer: for every claim with both Supports and Refutes evidence, pairs of its non-neutral
  evidence passages; opposite labels → conflict, the same label → no conflict.
- PubMedQA (PQA-L): the question, read as a statement ("Do statins reduce X?" → "statins reduce
  X"), against the expert conclusion; the expert decision "no" → conflict, "yes" → no conflict
  ("maybe" is left out). The conclusion answers exactly the question, so every pair is same-question.
- PubMedQA with its question (``pubmedqa_question``): the same pairs carrying the PubMedQA question and no
  abstract, as a corpus of review conclusions grouped by question gives them.

Pairs are wrapped into real ``CandidatePair`` records (claim ids via ``claim_id_for``, pair ids via
``pair_id_for``; mining scores are placeholders). The gold check (``annotators.goldcheck``), the learned judge's
training data (``annotators.judge_data``) and the finding reader's data (``reader.data``) all read them here, so
none of them imports another for its data.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import itertools
import json
import re
import sys
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from biodivergence_dataset import ontology
from biodivergence_dataset.records import CandidatePair, Claim, MiningScores, Question, claim_id_for, pair_id_for

from .findingcues import finding_cue_starts
from .goldparts import PART_NAMES, in_part
from .sources.scifact import parse_array_repr

SCIFACT_CLAIM_FILES = ("claims_train.jsonl", "claims_dev.jsonl")
HEALTHVER_FILES = ("healthver_dev.csv", "healthver_test.csv")
_PLACEHOLDER_SCORES = MiningScores(similarity=0.0, disagreement=0.0, entity_overlap=0.0, type_compatibility=1.0,
                                   year_penalty=0.0, combined_score=0.0)


@dataclass(frozen=True)
class GoldPair:
    pair: CandidatePair
    conflict: bool
    source: str
    #: The items the pair was made from (claim ids, a claim's text, a PMID): a learned annotator trained on some
    #: items of the source is scored only on pairs whose items it never saw (``heldout_gold``).
    keys: tuple[str, ...] = ()


def make_claim(article_uid: str, text: str, domain: str, source: str) -> Claim:
    """A Claim record for a whole gold sentence (offsets 0..len)."""
    text = " ".join(text.split())
    return Claim(claim_id=claim_id_for(article_uid, 0, len(text)), article_uid=article_uid, domain=domain,
                 source=source, sentence=text, claim_type=ontology.DEFAULT_CLAIM_TYPE, sentence_start=0,
                 sentence_end=len(text), confidence=1.0)


def make_pair(a: Claim, b: Claim, abstract_a: str = "", abstract_b: str = "",
              question: Question | None = None) -> CandidatePair:
    return CandidatePair(pair_id=pair_id_for(a.claim_id, b.claim_id), domain=a.domain, claim_a=a, claim_b=b,
                         abstract_a=abstract_a, abstract_b=abstract_b, scores=_PLACEHOLDER_SCORES, question=question)


def _scifact_abstracts(data_dir: Path, doc_ids: set[str]) -> dict[str, str]:
    csv.field_size_limit(sys.maxsize)
    with open(data_dir / "corpus_train.csv", newline="", encoding="utf-8") as fh:
        return {row["doc_id"]: " ".join(parse_array_repr(row["abstract"]) or [])
                for row in csv.DictReader(fh) if row["doc_id"] in doc_ids}


def scifact_pairs(data_dir: str | Path, with_abstracts: bool = True) -> list[GoldPair]:
    """The 519 SciFact claim pairs sharing an evidence abstract (train + dev)."""
    data_dir = Path(data_dir)
    by_doc: dict[str, list[tuple[int, str, str]]] = defaultdict(list)
    for name in SCIFACT_CLAIM_FILES:
        for line in (data_dir / name).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            for doc, evidence in row["evidence"].items():
                labels = {e["label"] for e in evidence}
                if len(labels) == 1:
                    by_doc[doc].append((row["id"], row["claim"], labels.pop()))
    abstracts = _scifact_abstracts(data_dir, set(by_doc)) if with_abstracts else {}
    domain = ontology.domain("clinical_trials_epidemiology").name
    out = []
    for doc in sorted(by_doc, key=int):
        for (ia, ta, la), (ib, tb, lb) in itertools.combinations(by_doc[doc], 2):
            a = make_claim(f"scifact-claim:{ia}", ta, domain, "scifact")
            b = make_claim(f"scifact-claim:{ib}", tb, domain, "scifact")
            abstract = abstracts.get(doc, "")
            out.append(GoldPair(make_pair(a, b, abstract, abstract), la != lb, "scifact",
                                (a.article_uid, b.article_uid)))
    return out


def healthver_rows(data_dir: str | Path) -> Iterator[tuple[str, dict[str, str]]]:
    """(file name, row) of every HealthVer claim–evidence row (columns id, evidence, claim, label, …)."""
    for name in HEALTHVER_FILES:
        with open(Path(data_dir) / name, newline="", encoding="utf-8") as fh:
            yield from ((name, row) for row in csv.DictReader(fh))


def claim_key(claim: str) -> str:
    """A HealthVer claim as the key of its evidence rows and same-claim pairs (whitespace folded, lower case)."""
    return " ".join(claim.split()).lower()


def healthver_question(name: str, claim: str) -> Question:
    """A HealthVer claim as the question its evidence texts are judged against."""
    claim = " ".join(claim.split())
    return Question(question_id=f"healthver:{name}:{hashlib.sha1(claim.encode()).hexdigest()[:12]}", text=claim)


def healthver_pairs(data_dir: str | Path, with_question: bool = False) -> list[GoldPair]:
    """Evidence–evidence pairs of HealthVer claims that have both Supports and Refutes evidence; with
    ``with_question`` each pair carries its claim as its question (the same-claim pair set)."""
    domain = ontology.domain("infectious_disease").name
    by_claim: dict[tuple[str, str], list[dict[str, str]]] = defaultdict(list)
    for name, row in healthver_rows(data_dir):
        by_claim[name, row["claim"]].append(row)
    out = []
    for (name, claim), rows in by_claim.items():
        evidence = [r for r in rows if r["label"] in ("Supports", "Refutes")]
        if {r["label"] for r in evidence} != {"Supports", "Refutes"}:
            continue
        question = healthver_question(name, claim) if with_question else None
        for ra, rb in itertools.combinations(evidence, 2):
            a = make_claim(f"healthver:{name}:{ra['id']}", ra["evidence"], domain, "healthver")
            b = make_claim(f"healthver:{name}:{rb['id']}", rb["evidence"], domain, "healthver")
            out.append(GoldPair(make_pair(a, b, question=question), ra["label"] != rb["label"],
                                "healthver_question" if with_question else "healthver", (claim_key(claim),)))
    return out


# --------------------------------------------------------------------------- PubMedQA-derived pairs

_QUESTION_AUX = re.compile(r"^\s*(do|does|did|is|are|was|were|can|could|should|has|have|had|will|would|may|might)"
                           r"\s+", re.IGNORECASE)
#: Auxiliaries that carry no meaning of their own once the question is a statement ("Does X reduce Y?").
_DO_SUPPORT = frozenset({"do", "does", "did"})
#: Words that open a predicate before its finding word: the auxiliary goes before them ("is a risk factor").
_PREDICATE_OPENERS = frozenset(["a", "an", "the", "more", "less", "most", "least", "also"])
#: A finding word after one of these sits inside the subject ("a prediction of different subtypes").
_PREPOSITIONS = frozenset(["of", "in", "on", "for", "with", "to", "between", "among", "from", "by", "at"])
_MODALS = frozenset(["can", "could", "should", "will", "would", "may", "might"])
#: Noun endings: a finding word with one names a thing in the subject ("stimulation", "treatment").
_NOUN_ENDINGS = ("ion", "ions", "ment", "ments", "ance", "ence", "ity")
_WORD = re.compile(r"\S+")


def _auxiliary_position(aux: str, text: str) -> int | None:
    """Where the fronted auxiliary ``aux`` of a yes/no question goes back in its statement: before
    ``there``; a modal before "be"; else before the predicate of the first verb-like finding word not
    inside the subject (stepping back over "a", "more" …); else before the first later unhyphenated
    past participle; None if unknown."""
    words = [(m.start(), m.group(0).lower().strip(",;()")) for m in _WORD.finditer(text)]
    if words and words[0][1] == "there":
        return words[1][0] if len(words) > 1 else None
    if aux in _MODALS:
        return next((start for start, w in words[1:] if w == "be"), None) or _cue_position(words, text)
    return _cue_position(words, text) or next(
        (start for start, w in words[1:] if len(w) > 4 and w.endswith("ed") and "-" not in w), None)


def _cue_position(words: list[tuple[int, str]], text: str) -> int | None:
    index = {start: i for i, (start, _) in enumerate(words)}
    for cue in finding_cue_starts(text):
        i = index.get(cue)
        if not i or words[i - 1][1] in _PREPOSITIONS or words[i][1].endswith(_NOUN_ENDINGS):
            continue
        while i > 0 and words[i - 1][1] in _PREDICATE_OPENERS:
            i -= 1
        if i:  # else the finding word is the subject's own noun ("a prediction of …")
            return words[i][0]
    return None


def _as_statement(question: str) -> str:
    """One yes/no question as the statement it asks about; unchanged when it opens with no auxiliary."""
    m = _QUESTION_AUX.match(question)
    if not m:
        return question.strip().rstrip(" ?")
    aux, rest = m.group(1).lower(), question[m.end():].strip().rstrip(" ?")
    where = None if aux in _DO_SUPPORT else _auxiliary_position(aux, rest)
    return rest if where is None else f"{rest[:where]}{aux} {rest[where:]}"


def question_as_claim(question: str) -> str:
    """A yes/no question read as the statement it asks about, the auxiliary put back after the subject
    ("Do statins reduce X?" → "Statins reduce X.", "Is X associated with Y?" → "X is associated with Y.")."""
    head, colon, tail = question.partition(": ")
    if colon and _QUESTION_AUX.match(tail):  # "Title: does X improve Y?" keeps the title as context
        return f"{head}: {_as_statement(tail)}."
    text = _as_statement(question)
    return (text[:1].upper() + text[1:] + ".") if text else question


def pubmedqa_records(data_dir: str | Path) -> dict[str, dict[str, Any]]:
    """PMID → PQA-L record (QUESTION, CONTEXTS, LONG_ANSWER, final_decision, …)."""
    return json.loads((Path(data_dir) / "ori_pqal.json").read_text(encoding="utf-8"))


def pubmedqa_pairs(data_dir: str | Path, with_question: bool = False) -> list[GoldPair]:
    """PQA-L question-as-claim vs expert conclusion: decision "no" → conflict, "yes" → no conflict. With
    ``with_question`` each pair carries the PubMedQA question and no abstract, as a corpus of review conclusions
    grouped by question gives them: the conflict is the conclusion answering its question "no"."""
    data = pubmedqa_records(data_dir)
    domain = ontology.domain("clinical_trials_epidemiology").name
    out = []
    for pmid, rec in sorted(data.items()):
        if rec["final_decision"] not in ("yes", "no"):
            continue
        context = "" if with_question else " ".join(rec["CONTEXTS"])
        question = (Question(question_id=f"pubmedqa:{pmid}", text=" ".join(rec["QUESTION"].split()))
                    if with_question else None)
        a = make_claim(f"pubmedqa-question:{pmid}", question_as_claim(rec["QUESTION"]), domain, "pubmedqa")
        b = make_claim(f"pmid:{pmid}", rec["LONG_ANSWER"], domain, "pubmedqa")
        out.append(GoldPair(make_pair(a, b, context, context, question=question), rec["final_decision"] == "no",
                            "pubmedqa_question" if with_question else "pubmedqa", (pmid,)))
    return out


# --------------------------------------------------------------------------- the gold sources

#: Gold source name → (folder under the data directory, reader).
GOLD_SOURCES: dict[str, tuple[str, Callable[[Path], list[GoldPair]]]] = {
    "scifact": ("scifact", scifact_pairs),
    "healthver": ("healthver", healthver_pairs),
    # the same pairs, each carrying its claim as the question both evidence texts answer
    "healthver_question": ("healthver", functools.partial(healthver_pairs, with_question=True)),
    "pubmedqa": ("pubmedqa_pqal", pubmedqa_pairs),
    # the same pairs carrying the PubMedQA question, conclusions without their abstracts
    "pubmedqa_question": ("pubmedqa_pqal", functools.partial(pubmedqa_pairs, with_question=True)),
}
#: A gold set made from another source's items (what "trained on" means for it).
ITEMS_OF: dict[str, str] = {"healthver_question": "healthver", "pubmedqa_question": "pubmedqa"}


def source_folder(source: str, data_dir: str | Path, table: dict[str, tuple[str, Any]], kind: str) -> tuple[Path, Any]:
    """The folder of ``source`` under ``data_dir`` and its reader(s) in ``table`` (ValueError naming the known
    sources, FileNotFoundError naming the folder)."""
    if source not in table:
        raise ValueError(f"unknown {kind} source {source!r}; expected one of {sorted(table)}")
    folder, readers = table[source]
    path = Path(data_dir) / folder
    if not path.is_dir():
        raise FileNotFoundError(f"{kind} source {source!r}: folder {path} does not exist")
    return path, readers


def load_gold(source: str, data_dir: str | Path) -> list[GoldPair]:
    """The pairs of one gold source (ValueError naming the known sources, FileNotFoundError naming the folder)."""
    path, reader = source_folder(source, data_dir, GOLD_SOURCES, "gold")
    return reader(path)


def available_sources(data_dir: str | Path) -> list[str]:
    return [s for s, (folder, _) in GOLD_SOURCES.items() if (Path(data_dir) / folder).is_dir()]


def gold_part(gold: GoldPair) -> str | None:
    """The part (``goldparts.PART_NAMES``: development or check) every item of a gold pair is in, else None."""
    return next((name for part, name in PART_NAMES.items() if gold_in_part(gold, part)), None)


def gold_in_part(gold: GoldPair, part: str) -> bool:
    """Whether a goldcheck pair is made only of items of ``part`` (``goldparts.PARTS``) of the source they come
    from (its ``keys``: claim ids, a claim's text, a PMID)."""
    source = ITEMS_OF.get(gold.source, gold.source)
    return bool(gold.keys) and all(in_part(source, key, part) for key in gold.keys)

