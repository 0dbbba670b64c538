"""Analysis 6, error analysis: the predictor's scores, confusion matrices per task (conflict type, each axis,
dominant confounder), the scores per clinical question (which questions the predictor gets wrong) and the most
confident conflict-type errors with their claims."""

from __future__ import annotations

from dataclasses import dataclass, field

from biodivergence_dataset import ontology

from .analysis_release import QUESTION, Predictor, Release, question_scores, task_scores

TOP_ERRORS = 20
NO_CONFOUNDER = "(none)"


@dataclass
class ConfusionMatrix:
    task: str
    #: class names of the rows (gold) and columns (predicted)
    labels: list[str]
    matrix: list[list[int]]


@dataclass
class AxisCounts:
    axis: str
    tp: int
    fp: int
    fn: int
    tn: int


@dataclass
class ErrorExample:
    pair_id: str
    domain: str
    gold: str
    predicted: str
    confidence: float | None
    claim_a: str
    claim_b: str


@dataclass
class QuestionErrors:
    """One clinical question: its rows, conflicts and conflict-type errors, and the metric's Tasks 1-3 scores on
    its rows (``PER_QUESTION_KEYS`` of the metric, each task with its n)."""

    question_id: str
    n: int
    conflicts: int
    errors: int
    scores: dict[str, float | None] = field(default_factory=dict)


@dataclass
class ErrorAnalysisResult:
    predictor: str
    n: int
    scores: dict[str, float] = field(default_factory=dict)
    confusions: list[ConfusionMatrix] = field(default_factory=list)
    axes: list[AxisCounts] = field(default_factory=list)
    errors: int = 0
    #: whether the predictor gave a confidence (otherwise the errors are listed in release order)
    ranked_by_confidence: bool = False
    top_errors: list[ErrorExample] = field(default_factory=list)
    #: per clinical question, most conflict-type errors first (empty when no row carries a question)
    questions: list[QuestionErrors] = field(default_factory=list)


def confusion(task: str, gold: list[str], predicted: list[str], labels: list[str]) -> ConfusionMatrix:
    from sklearn.metrics import confusion_matrix

    return ConfusionMatrix(task, labels, confusion_matrix(gold, predicted, labels=labels).tolist())


def axis_counts(gold: list[list[str]], predicted: list[list[str]]) -> list[AxisCounts]:
    from sklearn.metrics import multilabel_confusion_matrix
    from sklearn.preprocessing import MultiLabelBinarizer

    binarise = MultiLabelBinarizer(classes=list(ontology.AXIS_NAMES))
    matrices = multilabel_confusion_matrix(binarise.fit_transform(gold), binarise.transform(predicted))
    return [AxisCounts(axis, int(m[1, 1]), int(m[0, 1]), int(m[1, 0]), int(m[0, 0]))
            for axis, m in zip(ontology.AXIS_NAMES, matrices)]


def by_question(rows: list, predicted: list) -> list[QuestionErrors]:
    """Rows, conflicts, conflict-type errors and the metric's scores per question, most errors first."""
    scores = question_scores(predicted, rows)
    out = []
    for question, metrics in scores.items():
        mine = [(r, p) for r, p in zip(rows, predicted) if (r.get(QUESTION) or "") == question]
        out.append(QuestionErrors(question, len(mine), sum(r["conflict_type"] != ontology.NO_CONFLICT for r, _ in mine),
                                  sum(r["conflict_type"] != p["conflict_type"] for r, p in mine), metrics))
    return sorted(out, key=lambda q: (-q.errors, q.question_id))


def analyze(release: Release, predictor: Predictor, top: int = TOP_ERRORS) -> ErrorAnalysisResult:
    rows = release.rows
    predicted = predictor.predict(rows)
    result = ErrorAnalysisResult(predictor.name, len(rows))
    if not rows:
        return result
    result.scores = task_scores(predicted, rows)
    result.questions = by_question(rows, predicted)
    result.confusions.append(confusion("conflict_type", [r["conflict_type"] for r in rows],
                                       [p["conflict_type"] for p in predicted], list(ontology.CONFLICT_TYPE_NAMES)))
    if "divergence_axes" in predicted[0]:
        result.axes = axis_counts([r["divergence_axes"] for r in rows], [p["divergence_axes"] for p in predicted])
    if "dominant_confounder" in predicted[0]:
        result.confusions.append(confusion(
            "dominant_confounder", [r.get("dominant_confounder") or NO_CONFOUNDER for r in rows],
            [p.get("dominant_confounder") or NO_CONFOUNDER for p in predicted], [*ontology.AXIS_NAMES, NO_CONFOUNDER]))
    wrong = [(r, p) for r, p in zip(rows, predicted) if r["conflict_type"] != p["conflict_type"]]
    result.errors = len(wrong)
    result.ranked_by_confidence = all(p.get("confidence") is not None for _, p in wrong)
    if result.ranked_by_confidence:
        wrong.sort(key=lambda rp: -rp[1]["confidence"])
    result.top_errors = [ErrorExample(r["pair_id"], r["domain"], r["conflict_type"], p["conflict_type"], p.get("confidence"),
                                      r["claim_a_text"], r["claim_b_text"]) for r, p in wrong[:top]]
    return result
