"""The questions stage's configuration and its output record (:class:`Assignment`), apart from the stage so
that the rule and learned assigners can read the configuration without importing the stage.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from biodivergence_dataset import io
from biodivergence_dataset.records import RecordModel

from ..embeddings import DEFAULT_MODEL, PRECISIONS
from .lexicon import LEXICON, Lexicon, load_lexicon

STAGE = "questions"


QUESTIONS_FILE = "questions.json"


class QuestionsConfig(BaseModel):
    """Parameters of question assignment (a YAML ``questions:`` section maps onto this)."""

    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    #: The question pack (None: the build skips the stage and mining is as without questions).
    pack: str | None = Field(None, description="question pack YAML (questions: [{id, text, …}])")
    lexicon: str = Field(str(LEXICON), description="clinical lexicon YAML (drug classes, synonyms, distinctions)")
    #: Domain packs merged onto the lexicon (YAML of its schema: drug classes, synonyms, endpoint and setting
    #: distinctions of one field or corpus; ``builder/lexicons/cohen2006.yaml`` is the demo's).
    domain_packs: list[str] = Field([], description="domain pack YAMLs merged onto the lexicon (e.g. "
                                                    "builder/lexicons/cohen2006.yaml, the demo's)")
    #: A claim below this cosine to the question is not assigned to it, whatever its words.
    min_similarity: float = Field(0.20, ge=-1.0, le=1.0, description="least cosine of a claim to a question it "
                                                                     "is assigned to")
    #: A claim this close to a question whose intervention it names needs no outcome word match. Off by default
    #: (above any cosine): on the Cohen demo such claims mostly spoke of another outcome of the same drugs (at
    #: 0.65-0.75 nearly all; above 0.80 about half: dry mouth for weight gain, relief for adverse events), and
    #: the reader, asked about an outcome the claim does not name, guesses.
    similarity_alone: float = Field(1.01, ge=-1.0, le=1.01)
    #: Share of the content stems of an outcome phrase of three or more stems a claim must contain (a shorter
    #: phrase: all of them; interventions: all, or two thirds from three on).
    min_outcome_coverage: float = Field(2 / 3, gt=0.0, le=1.0)
    #: A claim that names no drug may answer a question through its abstract (``abstract_answers``): the abstract
    #: names the question's arms and no other drug of the lexicon, and the claim names the outcome and sets groups
    #: against each other ("healing rates did not differ between the LAN30 and OME40 groups"). Right for trials
    #: grouped by question (a review's included studies, a reviewer's own files); on the Evidence Inference
    #: question benchmark it assigns about half again as many articles, each claim to its own trial's question
    #: (``benchmarks/results/question_recall.md``). With it, an article whose abstract answers a question as a
    #: whole answers it with one claim (``article_answers``). Off for abstracts gathered by search from a corpus
    #: where most merely mention the drugs: on the Cohen demo about 8 of 20 claims it added answered the question.
    whole_abstract: bool = Field(True, description="a claim naming no drug may answer a question its abstract "
                                                   "names the arms of (trials grouped by question; "
                                                   "--no-whole-abstract for abstracts gathered by search)")
    #: Under ``whole_abstract``, an article whose abstract answers a question as a whole but none of whose claims
    #: names the question's outcome in its words answers it with its claim closest to the question when that
    #: cosine reaches this (``article_answers``). Evidence Inference outcomes are often said otherwise in the
    #: trial ("fracture union success rate": "a higher rate of union"). The claim must name a word of the outcome
    #: besides its last (``names_part_of``) and no drug but the question's arms. On the question benchmark's
    #: development sample, 0.6 with no word required took 23 articles, 20 for their own trial's question (0.5: 53,
    #: 31); as shipped it takes the article row from 310 to 320 of 400 (check sample: 193 to 215 of 282).
    article_similarity_alone: float = Field(0.6, ge=-1.0, le=1.01)
    #: How claims are assigned: ``rules`` (the lexicon and the word rules of this module, grown on the Cohen demo)
    #: or ``learned`` (``questions.relevance``: the question answerer's relevance among the ``learned_candidates``
    #: questions closest by cosine, at least ``min_similarity``; only the general filters of ``GENERAL_FILTERS``
    #: apply, and ``whole_abstract`` does not). On the Evidence Inference check articles (181 prompts as a pack)
    #: learned finds more (evidence claim assigned 126 against 119, the article 166 against 136) but 107 of its 273
    #: assignments come from another trial than the prompt's, the rules' none (``benchmarks/results/
    #: question_recall_learned.md``): it stays opt-in until its relevance learns to tell another trial's finding
    #: on a similar outcome from an answer.
    assigner: Literal["rules", "learned"] = Field("rules", description="the lexicon and word rules, or the "
                                                                       "question answerer's relevance (any field)")
    learned_candidates: int = Field(3, ge=1)
    #: The question answerer folder for ``assigner: learned`` (None: the shipped one).
    answerer: str | None = Field(None, description="question answerer folder for --assigner learned (default: "
                                                   "the shipped one)")
    #: Abstracts folder (abbreviation definitions; default: the claims stage's manifest input).
    abstracts_dir: str | None = Field(None, description="abstracts stage folder (default: from the claims "
                                                        "manifest)")
    model: str = Field(DEFAULT_MODEL, description="sentence-transformers model name or folder")
    device: str = Field("cpu", description="torch device of the encoder")
    precision: Literal[PRECISIONS] = PRECISIONS[0]  # type: ignore[valid-type]
    batch_size: int = Field(64, ge=1)
    #: The embedding cache (the build points it at the miner's, so mine reuses these vectors).
    cache_dir: str | None = Field(None, description="embedding cache folder (default: OUT/embedding_cache)")
    shard_size: int = Field(io.DEFAULT_SHARD_SIZE, description="records per output shard")

    def read_lexicon(self) -> Lexicon:
        """The lexicon with the domain packs merged onto it (each file checked; errors name file and entry)."""
        return load_lexicon(self.lexicon, tuple(self.domain_packs))


class Assignment(RecordModel):
    """One claim answering one question: how well (score in [0, 1]) and why (the matched words)."""

    claim_id: str
    question_id: str
    article_uid: str
    score: float
    why: str
