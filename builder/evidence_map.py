"""Evidence maps: per declared question, the studies that answer it, what each found and what sets them apart.

A function over records with counts (:func:`evidence_maps`): it takes the declared questions, each assigned claim
read relative to its question (:class:`ReadClaim`: the reader's finding, the significance the claim's words state
and the conditions it states) and the released pairs, and yields one ``EvidenceMap`` per question that has at
least one assigned claim; a question without one is counted as dropped (``no_assigned_claim``).

The rules, stated once:

- a study is an article; its **direction** is the finding most of its claims report (not_reported claims aside),
  no difference on a tie, not_reported when none reports one (:func:`pooled`);
- a question's **pooled direction** is the same rule over its studies' directions;
- a study **agrees** when its direction is the pooled one, **disagrees** when it reports another, and neither when
  it reports none;
- the studies are **grouped** by a condition that differs in the question's released conflicts, the one most
  studies state (:func:`grouping_axis`), each study by the words it states on that axis ("not stated" last).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from biodivergence_dataset import ontology
from biodivergence_dataset.io import StageStats
from biodivergence_dataset.records import (
    Claim,
    EvidenceMap,
    Example,
    MapClaim,
    MapCondition,
    MapConflict,
    MapStudy,
    Question,
)

INCREASE, DECREASE, NO_DIFFERENCE, NOT_REPORTED = ontology.READER_FINDINGS
#: The group of a study that states nothing on the grouping axis.
NOT_STATED = "not stated"


@dataclass(frozen=True)
class ReadClaim:
    """A claim assigned to a question, read relative to it: the finding (``ontology.READER_FINDINGS``), the
    significance its words state (None when none), the reader's probability of the finding and the conditions the
    claim states (question words excluded)."""

    question_id: str
    claim: Claim
    finding: str
    significance: str | None
    confidence: float
    conditions: tuple[MapCondition, ...] = ()


def pooled(directions: Iterable[str]) -> str:
    """The direction most of ``directions`` report (not_reported aside); no difference on a tie; not_reported when
    none reports one."""
    counts = Counter(d for d in directions if d != NOT_REPORTED)
    if not counts:
        return NOT_REPORTED
    top = max(counts.values())
    leaders = [d for d, n in counts.items() if n == top]
    return leaders[0] if len(leaders) == 1 else NO_DIFFERENCE


def map_conflict(row: Example, split: str) -> MapConflict:
    """A released conflict row as the map records it (``split``: its ``primary`` split, "" when none)."""
    return MapConflict(pair_id=row.pair_id, article_uid_a=row.article_uid_a, article_uid_b=row.article_uid_b,
                       claim_a_id=row.claim_a_id, claim_b_id=row.claim_b_id, conflict_type=row.conflict_type,
                       divergence_axes=list(row.divergence_axes), dominant_confounder=row.dominant_confounder,
                       split=split)


def question_conflicts(released: Iterable[tuple[str, Example]]) -> dict[str, list[MapConflict]]:
    """The conflict rows of each question among ``(split, row)`` of the released configs, one per pair (its
    ``primary`` split when a config of that name holds it; ``split`` is "" for a row of another config)."""
    by_pair: dict[str, tuple[str, Example]] = {}
    for split, row in released:
        if not row.question_id or row.conflict_type == ontology.NO_CONFLICT:
            continue
        if row.pair_id not in by_pair or (split and not by_pair[row.pair_id][0]):
            by_pair[row.pair_id] = (split, row)
    out: dict[str, list[MapConflict]] = defaultdict(list)
    for pair_id in sorted(by_pair):
        split, row = by_pair[pair_id]
        out[row.question_id].append(map_conflict(row, split))
    return dict(out)


def grouping_axis(conflicts: list[MapConflict], stated: Iterable[Iterable[MapCondition]]) -> str:
    """The condition the studies are grouped by: of the axes the question's conflicts name, the one most studies
    state a condition on (``stated``: each study's conditions), ties to the one the conflicts name most (dominant
    confounders counted twice), then ontology order; when the studies state none of those, the axis most studies
    state a condition on, if two or more do; "" otherwise."""
    named = Counter(a for c in conflicts for a in c.divergence_axes)
    named.update(c.dominant_confounder for c in conflicts if c.dominant_confounder)
    studies = Counter(a for conditions in stated for a in {c.axis for c in conditions})

    def rank(a: str) -> tuple[int, int, int]:
        return studies[a], named[a], -ontology.AXIS_NAMES.index(a)

    candidates = [a for a in named if studies[a]] or [a for a in studies if studies[a] >= 2]
    return max(candidates, key=rank) if candidates else ""


def study_group(conditions: Iterable[MapCondition], axis: str) -> str:
    """A study's value on ``axis``: the words its claims state there, else :data:`NOT_STATED` ("" without axis)."""
    if not axis:
        return ""
    return "; ".join(dict.fromkeys(c.text.lower() for c in conditions if c.axis == axis)) or NOT_STATED


def study_conditions(read: list[ReadClaim]) -> list[MapCondition]:
    """The conditions a study's claims state, once each (case aside)."""
    return list({(c.axis, c.text.lower()): c for r in read for c in r.conditions}.values())


def map_study(article_uid: str, read: list[ReadClaim], conflicts: list[MapConflict], axis: str) -> MapStudy:
    """One study of a question from its claims read against it (agreement filled in by :func:`question_map`)."""
    direction = pooled(r.finding for r in read)
    stated = [r.significance for r in read if r.finding == direction != NOT_REPORTED and r.significance]
    conditions = study_conditions(read)
    return MapStudy(
        article_uid=article_uid, pub_year=read[0].claim.pub_year, direction=direction,
        significance=stated[0] if stated else None, group=study_group(conditions, axis),
        claims=[MapClaim(claim_id=r.claim.claim_id, text=r.claim.sentence, finding=r.finding,
                         significance=r.significance, confidence=round(r.confidence, 4)) for r in read],
        conditions=conditions,
        conflict_pair_ids=[c.pair_id for c in conflicts if article_uid in (c.article_uid_a, c.article_uid_b)])


def question_map(question: Question, read: list[ReadClaim], conflicts: list[MapConflict]) -> EvidenceMap:
    """The evidence map of one question from its assigned claims (read against it) and its released conflicts."""
    by_article: dict[str, list[ReadClaim]] = defaultdict(list)
    for r in sorted(read, key=lambda r: (r.claim.article_uid, r.claim.sentence_start)):
        by_article[r.claim.article_uid].append(r)
    axis = grouping_axis(conflicts, (study_conditions(rs) for rs in by_article.values()))
    studies = [map_study(a, rs, conflicts, axis) for a, rs in by_article.items()]
    direction = pooled(s.direction for s in studies)
    for s in studies:
        s.agrees = None if s.direction == NOT_REPORTED else s.direction == direction
    studies.sort(key=lambda s: (s.group == NOT_STATED, s.group, s.direction, s.article_uid))
    n_unread = sum(s.agrees is None for s in studies)
    n_agree = sum(s.agrees is True for s in studies)
    return EvidenceMap(
        question_id=question.question_id, question=question.text, intervention=question.intervention or "",
        comparator=question.comparator or "", outcome=question.outcome or "", population=question.population or "",
        pooled_direction=direction, n_studies=len(studies), n_agree=n_agree,
        n_disagree=len(studies) - n_agree - n_unread, n_unread=n_unread, grouping_axis=axis, studies=studies,
        conflicts=conflicts)


def evidence_maps(questions: Mapping[str, Question], read: Iterable[ReadClaim],
                  released: Iterable[tuple[str, Example]], stats: StageStats) -> Iterator[EvidenceMap]:
    """One map per declared question (in declaration order) with at least one assigned claim; counts questions
    seen, kept and dropped (``no_assigned_claim``), the studies per direction and the conflicts placed. A read
    claim or a conflict of a question that is not declared is counted (``undeclared_question``) and left out."""
    by_question: dict[str, list[ReadClaim]] = defaultdict(list)
    for r in read:
        by_question[r.question_id].append(r)
    conflicts = question_conflicts(released)
    for qid in sorted((set(by_question) | set(conflicts)) - set(questions)):
        stats.count("undeclared_question", qid, len(by_question.get(qid, ())) + len(conflicts.get(qid, ())))
    for qid, question in questions.items():
        stats.seen += 1
        if not by_question.get(qid):
            stats.drop("no_assigned_claim")
            continue
        m = question_map(question, by_question[qid], conflicts.get(qid, []))
        stats.kept += 1
        for s in m.studies:
            stats.count("studies_by_direction", s.direction)
        stats.count("pooled_direction", m.pooled_direction)
        stats.figures["studies"] = stats.figures.get("studies", 0) + m.n_studies
        stats.figures["studies_disagreeing"] = stats.figures.get("studies_disagreeing", 0) + m.n_disagree
        stats.figures["conflicts_placed"] = stats.figures.get("conflicts_placed", 0) + len(m.conflicts)
        yield m
