"""Record types that flow between pipeline stages (ARCHITECTURE.md §4).

``Abstract`` → ``Claim`` → ``CandidatePair`` → ``Example``. Every label-valued field is
checked against the ontology; a bad record raises :class:`RecordError` naming the record
and the field.
"""

from __future__ import annotations

import hashlib
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from . import ontology

#: 1.2: an unknown year or missing confounder is stored as -1 (``features.MISSING_INT``), no longer as null.
#: 1.3: ``question_id`` and ``question``: the clinical question both claims answer ("" when none).
SCHEMA_VERSION = "1.3"


class RecordError(ValueError):
    """A record failed validation; the message names where it came from and which field."""

    def __init__(self, kind: str, where: str, problems: list[tuple[str, str]]):
        self.kind, self.where, self.problems = kind, where, problems
        detail = "; ".join(f"field {f!r}: {msg}" for f, msg in problems)
        super().__init__(f"{where}: invalid {kind}: {detail}")


def validation_problems(exc: ValidationError, whole: str = "the value") -> list[tuple[str, str]]:
    """Each error of a pydantic ValidationError as ``(where, what)``: its location dotted (``whole`` for the value
    itself) and its message without pydantic's "Value error, " prefix; never the value, which may be huge or a
    secret."""
    return [(".".join(str(p) for p in err["loc"]) or whole, err["msg"].removeprefix("Value error, "))
            for err in exc.errors()]


def one_line(exc: ValidationError, whole: str = "the value") -> str:
    """A pydantic ValidationError as one line: ``where: what`` of each error, joined by "; "."""
    return "; ".join(f"{where}: {what}" for where, what in validation_problems(exc, whole))


class RecordModel(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=False, frozen=False)

    @classmethod
    def parse(cls, data: dict[str, Any], where: str = "record"):
        """Validate ``data``; on failure raise RecordError naming ``where`` and each bad field."""
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise RecordError(cls.__name__, where, validation_problems(exc, "<record>")) from None


def _label(field_name: str):
    """A pydantic validator checking a field (or list field) against an ontology vocabulary."""

    def check(value):
        if value is None:
            return value
        if isinstance(value, list):
            return [ontology.check_label(field_name, v) for v in value]
        return ontology.check_label(field_name, value)

    return check


class Section(RecordModel):
    """A labelled section of a structured abstract, as character offsets into ``Abstract.text``."""

    label: str
    start: int = Field(ge=0)
    end: int = Field(ge=0)


class Abstract(RecordModel):
    article_uid: str = Field(min_length=1)
    pmid: str | None = None
    doi: str | None = None
    pmcid: str | None = None
    title: str = ""
    text: str = Field(min_length=1)
    year: int | None = None
    journal: str | None = None
    domain: str | None = None
    source: str = ""
    mesh_terms: list[str] = Field(default_factory=list)
    sections: list[Section] = Field(default_factory=list)
    #: ``source:position`` of every input record merged into this one by de-duplication.
    merged_from: list[str] = Field(default_factory=list)

    _check_domain = field_validator("domain")(_label("domain"))

    @model_validator(mode="after")
    def _sections_inside_text(self):
        for s in self.sections:
            if not (s.start <= s.end <= len(self.text)):
                raise ValueError(f"section {s.label!r} [{s.start}, {s.end}) lies outside the text")
        return self


def article_uid_for(doi: str | None, pmid: str | None, text: str) -> str:
    """The de-duplicated identity of an article: DOI, else PMID, else a content hash."""
    if doi:
        return f"doi:{doi.strip().lower()}"
    if pmid:
        return f"pmid:{pmid.strip()}"
    return "sha1:" + hashlib.sha1(" ".join(text.lower().split()).encode("utf-8")).hexdigest()[:16]


class ClaimSlots(RecordModel):
    """Structured content of a claim (paper Table 26); every slot is optional text."""

    intervention: str | None = None
    outcome: str | None = None
    population: str | None = None
    direction: str | None = None
    effect_size: str | None = None
    p_value: str | None = None
    setting: str | None = None
    geography: str | None = None
    period: str | None = None
    organism: str | None = None


class FrameSlot(RecordModel):
    """A context value a claim states: its axis, normalised value and offsets into the claim."""

    axis: str
    value: str
    text: str
    start: int = Field(ge=0)
    end: int = Field(ge=0)

    _check_axis = field_validator("axis")(_label("divergence_axes"))


class ClaimFrame(RecordModel):
    """What a claim is about and what it finds (exposure, outcome, finding, context slots)."""

    exposure: str = ""
    outcome: str = ""
    finding: str | None = None
    significance: str | None = None
    finding_text: str = ""
    context: list[FrameSlot] = Field(default_factory=list)

    _check_finding = field_validator("finding")(_label("finding"))
    _check_significance = field_validator("significance")(_label("significance"))


class Claim(RecordModel):
    claim_id: str = Field(min_length=1)
    article_uid: str = Field(min_length=1)
    domain: str
    source: str = ""
    sentence: str = Field(min_length=1)
    claim_type: str
    sentence_start: int = Field(ge=0)
    sentence_end: int = Field(ge=0)
    section: str | None = None
    negated: bool = False
    hedged: bool = False
    entities: list[str] = Field(default_factory=list)
    slots: ClaimSlots = Field(default_factory=ClaimSlots)
    confidence: float = Field(ge=0.0, le=1.0)
    pub_year: int | None = None
    journal: str | None = None
    #: Schema 1.1: exposure, outcome, finding and context slots (``builder.frames``).
    frame: ClaimFrame | None = None

    _check_domain = field_validator("domain")(_label("domain"))
    _check_type = field_validator("claim_type")(_label("claim_type"))

    @model_validator(mode="after")
    def _offsets(self):
        if self.sentence_end - self.sentence_start != len(self.sentence):
            raise ValueError(
                f"sentence offsets [{self.sentence_start}, {self.sentence_end}) do not match "
                f"the sentence length {len(self.sentence)}"
            )
        return self


def claim_id_for(article_uid: str, start: int, end: int) -> str:
    """Stable claim id from its article and character offsets."""
    return hashlib.sha1(f"{article_uid}|{start}|{end}".encode()).hexdigest()[:16]


def pair_id_for(claim_id_a: str, claim_id_b: str) -> str:
    """Order-independent, run-stable pair id."""
    lo, hi = sorted((claim_id_a, claim_id_b))
    return hashlib.sha1(f"{lo}||{hi}".encode()).hexdigest()[:20]


class Question(RecordModel):
    """A clinical question from a question pack: the thing two claims must both answer to be compared.

    ``text`` alone is enough; the optional fields are what a pack states or what was read from the text."""

    question_id: str = Field(min_length=1)
    text: str = Field(min_length=1)
    intervention: str | None = None
    comparator: str | None = None
    outcome: str | None = None
    population: str | None = None
    domain: str | None = None
    #: The literature search that gathers this question's abstracts (else one is built from its terms).
    query: str | None = None

    _check_domain = field_validator("domain")(_label("domain"))


class MiningScores(RecordModel):
    similarity: float
    disagreement: float
    entity_overlap: float
    type_compatibility: float
    year_penalty: float
    combined_score: float
    #: Schema 1.1: cosine similarity of the two claims' exposure phrases and of their outcome phrases
    #: (claim frames, embedded by the miner) where the same-question gate uses it: both frames state
    #: both slots and a finding, and one slot matches by its words; None elsewhere.
    exposure_similarity: float | None = None
    outcome_similarity: float | None = None


class CandidatePair(RecordModel):
    pair_id: str
    domain: str
    claim_a: Claim
    claim_b: Claim
    abstract_a: str = ""
    abstract_b: str = ""
    scores: MiningScores
    #: The question both claims answer, when a question pack assigned one to each (schema 1.3).
    question: Question | None = None

    _check_domain = field_validator("domain")(_label("domain"))

    @model_validator(mode="after")
    def _consistent(self):
        if self.claim_a.article_uid == self.claim_b.article_uid:
            raise ValueError("both claims come from the same article")
        if self.pair_id != pair_id_for(self.claim_a.claim_id, self.claim_b.claim_id):
            raise ValueError("pair_id does not match the two claim ids")
        return self


class EvidenceSpan(RecordModel):
    """A span of claim text; ``start``/``end`` are zero-based, end-exclusive offsets into that claim."""

    article_uid: str
    text: str
    start: int = Field(ge=0)
    end: int = Field(ge=0)
    role: str

    _check_role = field_validator("role")(_label("role"))

    @model_validator(mode="after")
    def _length(self):
        if self.end - self.start != len(self.text):
            raise ValueError(f"span [{self.start}, {self.end}) does not match its text length {len(self.text)}")
        return self


class AnnotatorLabel(RecordModel):
    """One panel member's label for a pair (kept in the release row's provenance)."""

    annotator_id: str
    conflict_type: str
    confidence: float = Field(ge=0.0, le=1.0)

    _check_conflict = field_validator("conflict_type")(_label("conflict_type"))


class Example(RecordModel):
    """One release row: a claim pair with its silver labels (column names are a public contract)."""

    example_id: str
    pair_id: str
    domain: str
    claim_a_id: str
    claim_b_id: str
    claim_a_text: str
    claim_b_text: str
    claim_a_type: str
    claim_b_type: str
    article_uid_a: str
    article_uid_b: str
    abstract_a: str = ""
    abstract_b: str = ""
    pub_year_a: int | None = None
    pub_year_b: int | None = None
    journal_a: str = ""
    journal_b: str = ""
    similarity: float = 0.0
    disagreement: float = 0.0
    entity_overlap: float = 0.0
    type_compatibility: float = 0.0
    year_penalty: float = 0.0
    combined_score: float = 0.0
    exposure_similarity: float | None = None
    outcome_similarity: float | None = None
    conflict_type: str
    divergence_axes: list[str] = Field(default_factory=list)
    dominant_confounder: str | None = None
    reconciliation: str = ""
    evidence_spans: list[EvidenceSpan] = Field(default_factory=list)
    annotator_id: str
    annotator_kind: str
    confidence: float = Field(ge=0.0, le=1.0)
    prompt_version: str = ""
    #: Added in schema 1.1 (never renamed): the claim frames, the same-question gate's verdict,
    #: every panel member's label and the consensus quality of the release label.
    frame_a: ClaimFrame | None = None
    frame_b: ClaimFrame | None = None
    comparability: str = ""
    annotator_labels: list[AnnotatorLabel] = Field(default_factory=list)
    label_quality: float | None = Field(default=None, ge=0.0, le=1.0)
    #: Added in schema 1.3: the clinical question both claims answer ("" when the pair carries none).
    question_id: str = ""
    question: str = ""

    _check_domain = field_validator("domain")(_label("domain"))
    _check_types = field_validator("claim_a_type", "claim_b_type")(_label("claim_type"))
    _check_conflict = field_validator("conflict_type")(_label("conflict_type"))
    _check_axes = field_validator("divergence_axes")(_label("divergence_axes"))
    _check_confounder = field_validator("dominant_confounder")(_label("dominant_confounder"))
    _check_kind = field_validator("annotator_kind")(_label("annotator_kind"))

    @model_validator(mode="after")
    def _consistent(self):
        if len(set(self.divergence_axes)) != len(self.divergence_axes):
            raise ValueError(f"divergence_axes has duplicates: {self.divergence_axes}")
        if self.dominant_confounder is not None and self.dominant_confounder not in self.divergence_axes:
            raise ValueError(f"dominant_confounder {self.dominant_confounder!r} is not among divergence_axes")
        return self

    @classmethod
    def from_pair(cls, pair: CandidatePair, **labels: Any) -> Example:
        """Combine a mined pair with annotation fields (conflict_type, axes, annotator, …)."""
        a, b, s = pair.claim_a, pair.claim_b, pair.scores
        return cls(
            example_id=labels.pop("example_id", pair.pair_id),
            pair_id=pair.pair_id,
            domain=pair.domain,
            claim_a_id=a.claim_id,
            claim_b_id=b.claim_id,
            claim_a_text=a.sentence,
            claim_b_text=b.sentence,
            claim_a_type=a.claim_type,
            claim_b_type=b.claim_type,
            article_uid_a=a.article_uid,
            article_uid_b=b.article_uid,
            abstract_a=pair.abstract_a,
            abstract_b=pair.abstract_b,
            pub_year_a=a.pub_year,
            pub_year_b=b.pub_year,
            journal_a=a.journal or "",
            journal_b=b.journal or "",
            question_id=pair.question.question_id if pair.question else "",
            question=pair.question.text if pair.question else "",
            **s.model_dump(),
            **labels,
        )


RELEASE_COLUMNS: tuple[str, ...] = tuple(Example.model_fields)


# ---------------------------------------------------------------------------------------------
# evidence maps: per declared question, the studies that answer it (the release's ``evidence_map`` config)


class MapCondition(RecordModel):
    """A condition a study's claim states (who, how much, in what form, how long, where): its axis and words."""

    axis: str
    text: str

    _check_axis = field_validator("axis")(_label("divergence_axes"))


class MapClaim(RecordModel):
    """One claim of a study, read relative to the question: the finding (``ontology.READER_FINDINGS``), the
    significance its words state (None when they state none) and the reader's probability of that finding."""

    claim_id: str
    text: str
    finding: str
    significance: str | None = None
    confidence: float = Field(ge=0.0, le=1.0)

    _check_finding = field_validator("finding")(_label("reader_finding"))
    _check_significance = field_validator("significance")(_label("significance"))


class MapStudy(RecordModel):
    """One study (article) that answers a question: its claims, its direction (pooled over its claims), whether it
    agrees with the question's pooled direction (None when it reports no finding), the conditions its claims
    state, its value of the condition the map groups by, and the released conflicts it takes part in."""

    article_uid: str
    pub_year: int | None = None
    direction: str
    significance: str | None = None
    agrees: bool | None = None
    group: str = ""
    claims: list[MapClaim]
    conditions: list[MapCondition] = Field(default_factory=list)
    conflict_pair_ids: list[str] = Field(default_factory=list)

    _check_direction = field_validator("direction")(_label("reader_finding"))
    _check_significance = field_validator("significance")(_label("significance"))


class MapConflict(RecordModel):
    """A released pair of the question labelled a conflict: which two studies (and claims) it sets against each
    other, its type and axes, and the ``primary`` split that holds it ("" when only ``pairlevel`` does)."""

    pair_id: str
    article_uid_a: str
    article_uid_b: str
    claim_a_id: str
    claim_b_id: str
    conflict_type: str
    divergence_axes: list[str] = Field(default_factory=list)
    dominant_confounder: str | None = None
    split: str = ""

    _check_conflict = field_validator("conflict_type")(_label("conflict_type"))
    _check_axes = field_validator("divergence_axes")(_label("divergence_axes"))
    _check_confounder = field_validator("dominant_confounder")(_label("dominant_confounder"))


class EvidenceMap(RecordModel):
    """The evidence map of one declared question: its studies, the pooled direction (the direction most studies
    report; no difference on a tie; not reported when none reports one), how many studies agree and disagree with
    it, the axis the studies are grouped by (a condition that differs in the question's conflicts and that the
    studies state; "" when none) and the conflicts among the studies."""

    question_id: str = Field(min_length=1)
    question: str = Field(min_length=1)
    intervention: str = ""
    comparator: str = ""
    outcome: str = ""
    population: str = ""
    pooled_direction: str
    n_studies: int = Field(ge=0)
    n_agree: int = Field(ge=0)
    n_disagree: int = Field(ge=0)
    n_unread: int = Field(ge=0)
    grouping_axis: str = ""
    studies: list[MapStudy]
    conflicts: list[MapConflict] = Field(default_factory=list)

    _check_direction = field_validator("pooled_direction")(_label("reader_finding"))

    @model_validator(mode="after")
    def _counts(self):
        if self.n_studies != len(self.studies):
            raise ValueError(f"n_studies {self.n_studies} but {len(self.studies)} studies")
        if self.n_agree + self.n_disagree + self.n_unread != self.n_studies:
            raise ValueError("n_agree + n_disagree + n_unread must equal n_studies")
        if self.grouping_axis:
            ontology.check_label("divergence_axes", self.grouping_axis)
        return self
