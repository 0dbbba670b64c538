"""Examples built by hand for the split stage and the release checks: pairs between named articles, so a test
controls which examples share an article (and so a component), and an annotate stage's output folder of them."""

from __future__ import annotations

import json
import random

from biodivergence_dataset import ontology
from biodivergence_dataset.io import StageStats, write_records
from biodivergence_dataset.records import Example, claim_id_for, pair_id_for

HEURISTIC = ontology.ANNOTATOR_KINDS[1]
CLAIM = "Carbapenem resistance was {} in the cohort of {} (finding {})."


def example(art_a: str, art_b: str, *, claim_a: int = 0, claim_b: int = 0, conflict: str = ontology.CONTEXTUAL,
            kind: str = HEURISTIC, confidence: float = 0.6, domain: str = "amr") -> Example:
    """An Example between claim ``claim_a`` of ``art_a`` and claim ``claim_b`` of ``art_b``."""
    text_a, text_b = (CLAIM.format(("higher", "lower")[i % 2], art, i)
                      for art, i in ((art_a, claim_a), (art_b, claim_b)))
    ca = claim_id_for(art_a, 100 * claim_a, 100 * claim_a + len(text_a))
    cb = claim_id_for(art_b, 100 * claim_b, 100 * claim_b + len(text_b))
    axes = ["geography"] if conflict == ontology.CONTEXTUAL else []
    return Example(
        example_id=f"{pair_id_for(ca, cb)}-{kind}", pair_id=pair_id_for(ca, cb), domain=domain,
        claim_a_id=ca, claim_b_id=cb, claim_a_text=text_a, claim_b_text=text_b, claim_a_type="prevalence",
        claim_b_type="prevalence", article_uid_a=art_a, article_uid_b=art_b, abstract_a=text_a, abstract_b=text_b,
        conflict_type=conflict, divergence_axes=axes, dominant_confounder=axes[0] if axes else None,
        annotator_id=f"{kind}-test", annotator_kind=kind, confidence=confidence,
    )


def disjoint_pairs(n: int, domain: str = "amr", conflicts=(ontology.NO_CONFLICT, ontology.CONTEXTUAL), **kw):
    """``n`` examples on ``2n`` distinct articles: every example is its own component."""
    return [example(f"{domain}:{2 * i}", f"{domain}:{2 * i + 1}", conflict=conflicts[i % len(conflicts)],
                    domain=domain, **kw) for i in range(n)]


def ring_graph(n_articles: int, n_examples: int, seed: int = 3) -> list[Example]:
    """One component with weak community structure: each pair links articles close on a ring."""
    rnd = random.Random(seed)
    out = []
    for _ in range(n_examples):
        a = rnd.randrange(n_articles)
        b = (a + rnd.randrange(1, 40)) % n_articles
        out.append(example(f"amr:{a}", f"amr:{b}", claim_a=rnd.randrange(3), claim_b=rnd.randrange(3)))
    return out


def write_annotations(folder, examples, manifest=None):
    """An annotate stage's finished output folder holding ``examples`` (a heuristic run unless ``manifest`` says)."""
    write_records(folder, examples, StageStats("annotate", seen=len(examples), kept=len(examples)))
    (folder / "annotation_manifest.json").write_text(json.dumps(manifest or {"provider": "heuristic"}))
    return folder


def question_stars(sizes: dict[str, tuple[int, int]], fillers: int = 0) -> list[Example]:
    """Pairs that answer declared questions, their conflicts clustered as mined pools of trials make them: for
    question ``q`` with ``sizes[q] == (articles, deviants)``, every two of its articles are paired, and the pairs
    with one of its first ``deviants`` articles (a claim read against all the others) are conflicts. Each question
    is its own component; ``fillers`` conflict-free pairs on fresh articles are added."""
    out = []
    for q, (n, deviants) in sizes.items():
        out += [example(f"amr:{q}-{i}", f"amr:{q}-{j}", conflict=ontology.CONTEXTUAL if i < deviants
                        else ontology.NO_CONFLICT).model_copy(update={"question_id": q, "question": f"Does {q}?"})
                for i in range(n) for j in range(i + 1, n)]
    return out + [example(f"amr:f{i}a", f"amr:f{i}b", conflict=ontology.NO_CONFLICT) for i in range(fillers)]
