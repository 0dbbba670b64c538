"""Small hand-built Examples and release folders for tests of the release format."""

from __future__ import annotations

from pathlib import Path

from biodivergence_dataset import card, cardmeta, ontology, release
from biodivergence_dataset.records import EvidenceSpan, Example, claim_id_for, pair_id_for

CLAIM_A = "Colistin remained effective against Acinetobacter isolates in Greek ICUs."
CLAIM_B = "Colistin failed against Acinetobacter isolates in Thai surveillance."


def make_example(art_a: str, art_b: str, conflict: str = ontology.CONTEXTUAL,
                 axes: tuple[str, ...] = ("geography",), domain: str = "amr") -> Example:
    """An Example linking articles ``art_a`` and ``art_b`` (claim ids derive from the articles)."""
    ca, cb = claim_id_for(art_a, 0, len(CLAIM_A)), claim_id_for(art_b, 0, len(CLAIM_B))
    start = CLAIM_A.index("Greek")
    return Example(
        example_id=pair_id_for(ca, cb), pair_id=pair_id_for(ca, cb), domain=domain,
        claim_a_id=ca, claim_b_id=cb, claim_a_text=CLAIM_A, claim_b_text=CLAIM_B,
        claim_a_type="efficacy", claim_b_type="efficacy", article_uid_a=art_a, article_uid_b=art_b,
        abstract_a=CLAIM_A, abstract_b=CLAIM_B, pub_year_a=2012, pub_year_b=None,
        similarity=0.8, disagreement=0.6, entity_overlap=0.5, type_compatibility=1.0, year_penalty=0.0,
        combined_score=0.6, conflict_type=conflict, divergence_axes=list(axes),
        dominant_confounder=axes[0] if axes else None, reconciliation="Geography explains the difference.",
        evidence_spans=[EvidenceSpan(article_uid=art_a, text="Greek", start=start, end=start + 5, role="claim_a")],
        annotator_id="heuristic-v1", annotator_kind="heuristic", confidence=0.7, prompt_version="v1",
    )


def make_splits(offset: int = 0) -> dict[str, list[Example]]:
    """Article-disjoint train/validation/test with a mix of labels."""
    def pairs(lo: int, hi: int) -> list[Example]:
        out = []
        for i in range(lo, hi):
            conflict, axes = (ontology.NO_CONFLICT, ()) if i % 3 == 0 else (ontology.CONTEXTUAL, ("geography", "clinical_setting"))
            out.append(make_example(f"pmid:{offset + 2 * i}", f"pmid:{offset + 2 * i + 1}", conflict, axes))
        return out
    return {"train": pairs(0, 8), "validation": pairs(8, 10), "test": pairs(10, 13)}


def write_small_release(root: Path, min_support: int = 1) -> Path:
    """A release with both configs and a rendered card; with ``min_support`` 1 (its test split has 3 rows) the
    leaderboard (``eval.yaml``) lists every headline metric."""
    splits = make_splits()
    release.write_config(root, "primary", splits)
    release.write_config(root, "pairlevel", splits)
    card.write_card(root, cardmeta.CardMeta(min_support=min_support))
    return root


def seed_hub_cache(cache_dir: Path, repo_id: str, revision: str, release_dir: Path) -> Path:
    """Place ``release_dir`` in an HF cache as dataset ``repo_id`` at ``revision`` (the layout huggingface_hub reads).

    ``datasets--ORG--NAME/snapshots/<commit>/`` holds the files and ``refs/<revision>`` names the commit,
    as ``snapshot_download`` leaves them; returns the snapshot folder.
    """
    import hashlib
    import shutil

    from huggingface_hub.file_download import repo_folder_name

    storage = Path(cache_dir) / repo_folder_name(repo_id=repo_id, repo_type="dataset")
    commit = hashlib.sha1(f"{repo_id}@{revision}".encode()).hexdigest()
    snapshot = storage / "snapshots" / commit
    shutil.copytree(release_dir, snapshot)
    (storage / "refs").mkdir(parents=True, exist_ok=True)
    (storage / "refs" / revision).write_text(commit)
    return snapshot
