"""Claim pairs written by hand for the annotators' boundary-rule tests, and an annotator's labels of one."""

from __future__ import annotations

from biodivergence_dataset import ontology
from biodivergence_dataset.records import Example
from builder.goldsources import make_claim, make_pair

DOMAIN = ontology.DOMAIN_NAMES[0]


def pair(a: str, b: str, abstract_a: str = "", abstract_b: str = ""):
    """Claims ``a`` and ``b`` of two different articles, each with an optional abstract."""
    return make_pair(make_claim("doc:a", a, DOMAIN, "test"), make_claim("doc:b", b, DOMAIN, "test"),
                     abstract_a, abstract_b)


def label_with(annotator, a: str, b: str, **kw):
    """``annotator``'s labels of a hand-written pair, checked to make a valid release row."""
    p = pair(a, b, **kw)
    labels = annotator.annotate(p)
    Example.from_pair(p, **labels.example_fields(), annotator_id=annotator.annotator_id,
                      annotator_kind=annotator.kind)
    return labels
