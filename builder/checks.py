"""Real-data checks of claim extraction and pair mining against expert annotations.

Readers turn the labelled sets in ``../shared/data`` into pipeline records (so the real
stages run on them) and the checks compare stage output with the annotations:

- PubMedQA (PQA-L): the share of extracted claims inside the conclusion (``LONG_ANSWER``);
- SciFact corpus: recall of the expert evidence sentences among extracted claims;
- SciFact claims: ROC-AUC with which the pair scores separate claim pairs that share an
  evidence abstract with opposite labels (SUPPORT vs CONTRADICT) from pairs with the same label.
"""

from __future__ import annotations

import csv
import itertools
import json
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from biodivergence_dataset.io import StageStats
from biodivergence_dataset.records import Abstract, Claim, MiningScores, claim_id_for

from .claim_analysis import analyse_sentence
from .embeddings import embed_texts
from .pair_scores import ClaimFeatures, ScoringConfig, claim_features, score_pair
from .sources.scifact import parse_array_repr

SCIFACT_LABELLED = ("claims_train.jsonl", "claims_dev.jsonl")


# --- PubMedQA ------------------------------------------------------------------------------------------
def pubmedqa_abstracts(path: str | Path, domain: str | None = None) -> list[Abstract]:
    """PQA-L records as the build reads them (the pubmedqa reader and ingest): each context under its label,
    ``LONG_ANSWER`` as CONCLUSIONS; ``domain`` pins the domain (None: the query packs assign it)."""
    from .ingest import IngestConfig, ingest, resolve_sources

    config = IngestConfig(domain=domain, progress=False, near_duplicates="off")
    return list(ingest(resolve_sources([f"pubmedqa:{path}"], domain), config, StageStats("checks")))


# --- SciFact corpus ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SciFactDoc:
    abstract: Abstract
    #: character span in ``abstract.text`` of each corpus sentence (the evidence indices point here)
    sentence_spans: tuple[tuple[int, int], ...]


def scifact_corpus(scifact_dir: str | Path, domain: str | None = None) -> dict[int, SciFactDoc]:
    """``doc_id -> SciFactDoc`` for ``corpus_train.csv``; sentences joined by one space."""
    csv.field_size_limit(1 << 30)
    docs = {}
    with open(Path(scifact_dir) / "corpus_train.csv", newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            text, spans = "", []
            for sent in parse_array_repr(row["abstract"]) or []:
                sent = " ".join(sent.split())
                if not sent:
                    spans.append((len(text), len(text)))
                    continue
                if text:
                    text += " "
                spans.append((len(text), len(text) + len(sent)))
                text += sent
            if not text:
                continue
            doc_id = int(row["doc_id"])
            abstract = Abstract(article_uid=f"s2orc:{doc_id}", title=row["title"], text=text, domain=domain,
                                source="scifact")
            docs[doc_id] = SciFactDoc(abstract, tuple(spans))
    return docs


def scifact_claims(scifact_dir: str | Path) -> list[dict]:
    """The labelled SciFact claims (train + dev JSONL)."""
    return [json.loads(line) for name in SCIFACT_LABELLED
            for line in (Path(scifact_dir) / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def scifact_evidence_sentences(scifact_dir: str | Path) -> set[tuple[int, int]]:
    """``(doc_id, sentence index)`` of every expert evidence sentence (SUPPORT or CONTRADICT)."""
    return {(int(doc), i) for c in scifact_claims(scifact_dir) for doc, evs in c["evidence"].items()
            for ev in evs for i in ev["sentences"]}


def evidence_recall(docs: dict[int, SciFactDoc], evidence: set[tuple[int, int]], claims: Iterable[Claim],
                    min_overlap: float = 0.5) -> dict:
    """Share of evidence sentences covered (≥ ``min_overlap`` of their characters) by one extracted claim."""
    by_article: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for c in claims:
        by_article[c.article_uid].append((c.sentence_start, c.sentence_end))
    hit = total = 0
    for doc_id, idx in sorted(evidence):
        doc = docs.get(doc_id)
        if doc is None or idx >= len(doc.sentence_spans) or doc.sentence_spans[idx][0] == doc.sentence_spans[idx][1]:
            continue
        s, e = doc.sentence_spans[idx]
        total += 1
        best = max((min(e, ce) - max(s, cs) for cs, ce in by_article.get(doc.abstract.article_uid, ())), default=0)
        hit += best >= min_overlap * (e - s)
    return {"evidence_sentences": total, "recalled": hit, "recall": round(hit / total, 4) if total else 0.0}


# --- SciFact claim pairs -------------------------------------------------------------------------------
@dataclass(frozen=True)
class LabelledPair:
    doc_id: int
    claim_a: Claim
    claim_b: Claim
    opposite: bool  # one SUPPORT and one CONTRADICT on the shared evidence abstract


def scifact_claim_pairs(scifact_dir: str | Path, domain: str) -> list[LabelledPair]:
    """Claim pairs sharing an evidence abstract (recipe of ``scifact/SOURCE.md``): one pair per shared
    abstract, labelled opposite when the two claims' labels on it differ."""
    by_doc: dict[int, list[tuple[int, str]]] = defaultdict(list)
    texts = {}
    for c in scifact_claims(scifact_dir):
        texts[c["id"]] = c["claim"]
        for doc, evs in c["evidence"].items():
            labels = {ev["label"] for ev in evs}
            if len(labels) != 1:
                raise ValueError(f"SciFact claim {c['id']} has mixed labels on doc {doc}: {sorted(labels)}")
            by_doc[int(doc)].append((c["id"], labels.pop()))
    claims = {cid: claim_from_text(f"scifact-claim:{cid}", text, domain) for cid, text in texts.items()}
    return [LabelledPair(doc, claims[a], claims[b], la != lb)
            for doc, members in sorted(by_doc.items())
            for (a, la), (b, lb) in itertools.combinations(sorted(members), 2)]


def claim_from_text(article_uid: str, text: str, domain: str) -> Claim:
    """A free-standing claim sentence analysed exactly as the extractor analyses a kept sentence."""
    a = analyse_sentence(text)
    return Claim(claim_id=claim_id_for(article_uid, 0, len(text)), article_uid=article_uid, domain=domain,
                 sentence=text, claim_type=a.claim_type, sentence_start=0, sentence_end=len(text),
                 negated=a.negated, hedged=a.hedged, entities=a.entities, slots=a.slots, confidence=1.0)


def score_labelled_pairs(pairs: list[LabelledPair], encoder, config: ScoringConfig | None = None
                         ) -> list[MiningScores]:
    """The miner's scores of each pair: cosine similarity of the embeddings plus :func:`pair_scores.score_pair`."""
    texts = sorted({c.sentence for p in pairs for c in (p.claim_a, p.claim_b)})
    vectors = dict(zip(texts, embed_texts(texts, encoder), strict=True))
    features: dict[str, ClaimFeatures] = {}

    def feats(claim: Claim) -> ClaimFeatures:
        if claim.claim_id not in features:
            features[claim.claim_id] = claim_features(claim)
        return features[claim.claim_id]

    return [score_pair(feats(p.claim_a), feats(p.claim_b),
                       float(vectors[p.claim_a.sentence] @ vectors[p.claim_b.sentence]), config) for p in pairs]


def disagreement_auc(pairs: list[LabelledPair], scores: list[MiningScores]) -> dict:
    """ROC-AUC of each mining score for telling opposite-label pairs from same-label pairs."""
    labels = [p.opposite for p in pairs]
    return {
        "pairs": len(pairs), "opposite_label_pairs": sum(labels), "same_label_pairs": len(labels) - sum(labels),
        **{f"auc_{name}": round(roc_auc([getattr(s, name) for s in scores], labels), 4)
           for name in ("disagreement", "combined_score", "similarity", "entity_overlap", "type_compatibility")},
    }


def roc_auc(scores: Iterable[float], positives: Iterable[bool]) -> float:
    """Probability that a random positive outscores a random negative (ties count half)."""
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(list(positives), list(scores)))


def iter_docs(docs: dict[int, SciFactDoc]) -> Iterator[Abstract]:
    return (d.abstract for _, d in sorted(docs.items()))
