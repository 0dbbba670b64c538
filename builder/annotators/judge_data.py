"""Training pairs for the learned judge: every expert-labelled source in ``../shared/data``, tagged by source.

Each source gives (text_a, text_b, conflict) pairs, read at run time (records never enter the repository):

- ``scifact``: the gold claim pairs of ``goldcheck``, plus each claim against its rationale sentences in
  the corpus abstract (SUPPORT → no conflict, CONTRADICT → conflict);
- ``healthver``: the gold evidence pairs, plus each claim against its evidence (Supports → no conflict,
  Refutes → conflict; Neutral rows are left out: they do not address the claim, and "unrelated" is not
  what the judge is asked);
- ``pubmedqa``: the gold question-vs-conclusion pairs;
- ``nli4ct`` (training only, never scored): the statement against the clinical-trial report lines it is
  checked against (Contradiction → conflict, Entailment → no conflict);
- ``citation_integrity`` (training only): the citing sentence against the cited evidence sentences
  (NOT_ACCURATE → conflict, ACCURATE → no conflict; NEI is left out).

Licences (SOURCE.md of each folder): NLI4CT and HealthVer state none, so they serve local training and
evaluation only, which is all this does. ``training_pairs`` selects the sources of one judge (all of
them, or all but the held-out one of a leave-one-source-out fold) and caps the pairs per source.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..checks import scifact_claims, scifact_corpus
from ..goldsources import GOLD_SOURCES, ITEMS_OF, healthver_rows, load_gold, source_folder

#: Sources that are only trained on (goldcheck never scores them).
TRAINING_ONLY = ("nli4ct", "citation_integrity")
NLI4CT_FILES = ("train.json", "dev.json", "Gold_test.json")  # test.json is unlabelled
CITATION_INTEGRITY_FILES = ("claims_train.jsonl", "claims_dev.jsonl", "claims_test.jsonl")
_CITATION_MARK = re.compile(r"\s*\[[^\]]*<\|\w+\|>[^\]]*\]|\s*<\|\w+\|>")


@dataclass(frozen=True)
class TrainingPair:
    """One labelled pair; pairs sharing ``group`` (a claim) stay on one side of the calibration split."""

    text_a: str
    text_b: str
    conflict: bool
    source: str
    group: str


def gold_training_pairs(source: str, data_dir: Path) -> list[TrainingPair]:
    """The pairs goldcheck scores ``source`` on, as training pairs grouped by their first claim."""
    return [TrainingPair(g.pair.claim_a.sentence, g.pair.claim_b.sentence, g.conflict, source,
                         g.pair.claim_a.article_uid) for g in load_gold(source, data_dir)]


def scifact_rationale_pairs(folder: Path) -> Iterator[TrainingPair]:
    """Each labelled SciFact claim against each of its rationales (sentences of the evidence abstract)."""
    docs = scifact_corpus(folder)
    for claim in scifact_claims(folder):
        for doc_id, rationales in claim["evidence"].items():
            doc = docs[int(doc_id)]
            for rationale in rationales:
                text = " ".join(doc.abstract.text[slice(*doc.sentence_spans[i])] for i in rationale["sentences"])
                yield TrainingPair(claim["claim"], text, rationale["label"] == "CONTRADICT", "scifact",
                                   f"scifact-claim:{claim['id']}")


def healthver_claim_pairs(folder: Path) -> Iterator[TrainingPair]:
    """Each HealthVer claim against each Supports / Refutes evidence (Neutral left out)."""
    for name, row in healthver_rows(folder):
        if row["label"] in ("Supports", "Refutes"):
            yield TrainingPair(row["claim"], row["evidence"], row["label"] == "Refutes", "healthver",
                               f"healthver:{name}:{row['id']}")


def nli4ct_pairs(folder: Path) -> Iterator[TrainingPair]:
    """Each labelled NLI4CT statement against the report lines it cites (both trials for comparisons)."""
    root = folder / "Complete_dataset"
    reports: dict[str, dict[str, list[str]]] = {}

    def evidence(trial: str, section: str, lines: list[int]) -> str:
        if trial not in reports:
            reports[trial] = json.loads((root / "CT json" / f"{trial}.json").read_text(encoding="utf-8"))
        return " ".join(" ".join(reports[trial][section][i].split()) for i in lines)

    for name in NLI4CT_FILES:
        for item in json.loads((root / name).read_text(encoding="utf-8")).values():
            text = "Primary trial: " + evidence(item["Primary_id"], item["Section_id"], item["Primary_evidence_index"])
            if item.get("Secondary_id"):
                text += " Secondary trial: " + evidence(item["Secondary_id"], item["Section_id"],
                                                        item["Secondary_evidence_index"])
            yield TrainingPair(item["Statement"], text, item["Label"] == "Contradiction", "nli4ct",
                               f"nli4ct:{item['Primary_id']}")


def citation_integrity_pairs(folder: Path) -> Iterator[TrainingPair]:
    """Each citing sentence (citation marks removed) against its evidence sentences in each cited text."""
    corpus = {row["doc_id"]: row["abstract"] for row in map(json.loads, (folder / "corpus.jsonl").open(encoding="utf-8"))}
    for name in CITATION_INTEGRITY_FILES:
        for claim in map(json.loads, (folder / name).open(encoding="utf-8")):
            citing = _CITATION_MARK.sub("", claim["claim"]).strip()
            for doc_id, rationales in claim["evidence"].items():
                for rationale in rationales:
                    if rationale["label"] in ("ACCURATE", "NOT_ACCURATE"):
                        text = " ".join(corpus[int(doc_id)][i] for i in rationale["sentences"])
                        yield TrainingPair(citing, text, rationale["label"] == "NOT_ACCURATE", "citation_integrity",
                                           f"citation_integrity:{name}:{claim['id']}")


#: Source → (folder under the data directory, readers); the scored sources' folders are goldcheck's.
_EXTRA_READERS: dict[str, tuple[Callable[[Path], Iterator[TrainingPair]], ...]] = {
    "scifact": (scifact_rationale_pairs,),
    "healthver": (healthver_claim_pairs,),
    "pubmedqa": (),
}
TRAINING_SOURCES: dict[str, tuple[str, tuple[Callable[[Path], Iterator[TrainingPair]], ...]]] = {
    # a gold set made of another source's items (ITEMS_OF) is no source of its own
    **{s: (folder, _EXTRA_READERS[s]) for s, (folder, _) in GOLD_SOURCES.items() if s not in ITEMS_OF},
    "nli4ct": ("nli4ct", (nli4ct_pairs,)),
    "citation_integrity": ("citation_integrity", (citation_integrity_pairs,)),
}


def load_source(source: str, data_dir: str | Path) -> list[TrainingPair]:
    """Every training pair of one source (its gold pairs first when goldcheck scores it)."""
    path, readers = source_folder(source, data_dir, TRAINING_SOURCES, "training")
    gold = gold_training_pairs(source, data_dir) if source in GOLD_SOURCES else []
    return gold + [p for read in readers for p in read(path)]


def fold_sources(sources: list[str] | tuple[str, ...], leave_out: str | None = None) -> list[str]:
    """The sources one judge trains on: ``sources`` (default: all) without the held-out one."""
    return [s for s in (sources or tuple(TRAINING_SOURCES)) if s != leave_out]


def training_pairs(data_dir: str | Path, sources: list[str], max_per_source: int | None = None,
                   seed: int = 0) -> list[TrainingPair]:
    """The pairs of ``sources``, at most ``max_per_source`` of each (a seeded random sample)."""
    out: list[TrainingPair] = []
    for source in sources:
        pairs = load_source(source, data_dir)
        if max_per_source is not None and len(pairs) > max_per_source:
            pairs = random.Random(f"{seed}:{source}").sample(pairs, max_per_source)
        out.extend(pairs)
    return out
