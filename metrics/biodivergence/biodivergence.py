"""BioDivergence: the five-task metric of the BioDivergence benchmark as an ``evaluate`` module.

A thin adapter: all scoring lives in the sibling ``scoring.py`` and the modules it imports. The declared features are the
record itself (``metric.features[0]``), with one JSON string per record as the fallback form
(``metric.features[1]``), as evaluate's squad metric declares two forms. Before a typed record is
stored, ``add``/``add_batch`` bring it to the declared shape: a field the record does not carry is
stored as null, ClassLabel ids become names and other keys are dropped. A field null on every
record of a side is a task that side does not carry, and is not scored (the result's ``notes`` say so).
Every batch is checked by the scorer's ``check_records`` before it is stored, so a malformed record
is refused with its index and field (``predictions[3].divergence_axes: ...``), whichever form it came in.
"""

import json
import numbers

import datasets
import evaluate

# evaluate.load copies into its module cache only the sibling modules named in this file's import lines (it does
# not follow their own imports, and reads a comment on an import line as a URL to fetch), so every module of the
# scorer is named here, one per line; the names imported only for that are listed in _COPIED.
from .label_scores import conflict_type_scores
from .labels import AXES, CONFLICT_TYPES, QUESTION_FIELD
from .record_checks import check_records
from .scoring import METRIC_VERSION, ONTOLOGY_VERSION
from .scoring import compute as score
from .text_scores import rouge_l

#: Imported so that evaluate copies their modules (see the imports above); the scorer uses them.
_COPIED = (conflict_type_scores, rouge_l)

_CITATION = """\
@article{hossain2026biodivergence,
  title   = {BioDivergence: A Benchmark and Evaluation Framework for Hidden Contextual Contradictions
             in Biomedical Abstracts},
  author  = {Hossain, Elias and Jennifer, Sanjeda Sara and Bushra, Sabera Akter and Yousefi, Niloofar},
  journal = {arXiv preprint arXiv:2606.11208},
  year    = {2026}
}
"""

_VERSION = f"BioDivergence metric {METRIC_VERSION} (ontology and tasks {ONTOLOGY_VERSION})."

_DESCRIPTION = f"""\
{_VERSION}
Scores predictions on the five BioDivergence tasks: (1) conflict type, (2) divergence axes,
(3) dominant confounder, (4) reconciliation explanation and (5) claim-level evidence spans.
A task is scored only when predictions and references both carry its field.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions: one record per example with any of `conflict_type` (str), `divergence_axes`
        (list of str), `dominant_confounder` (str, "" for none), `reconciliation` (str) and
        `evidence_spans` (list of {text, start, end, role}); or each record as a JSON string.
    references: the same shape as `predictions`.
    bootstrap: number of bootstrap resamples for 95% intervals of the key metrics (0 = none).
    seed: seed of the bootstrap resamples.
    semsim_model: sentence-transformers model name or path for SemSim, an object with `encode`,
        or None to skip SemSim (default: sentence-transformers/all-MiniLM-L6-v2).
    classes: conflict-type names that `conflict_type/macro_f1` averages over (e.g. the classes of
        the release's train split, as its card lists them); default: the classes either side uses.
    A reference may carry `question_id` (the release column): the result's `per_question` then
    holds Tasks 1-3 per question, each with its n.
Returns:
    A flat dict such as `conflict_type/macro_f1`, `axes/micro_f1`, `confounder/accuracy`,
    `reconciliation/rouge_l`, `spans/f1` (see the metric card for every key). An undefined score
    (e.g. the F1 of a class neither side has) is None, never 1, with a warning naming it; per-class
    scores come with `support/<label>`, tasks with `<task>/n`; `notes` lists tasks not scored.
Examples:
    >>> import evaluate
    >>> metric = evaluate.load("metrics/biodivergence")  # the folder; "<org>/biodivergence" on the Hub
    >>> gold = [
    ...     {"conflict_type": "contextual_contradiction", "divergence_axes": ["geography"]},
    ...     {"conflict_type": "no_conflict", "divergence_axes": []},
    ... ]
    >>> guess = [
    ...     {"conflict_type": "contextual_contradiction", "divergence_axes": ["geography", "study_design"]},
    ...     {"conflict_type": "contextual_contradiction", "divergence_axes": []},
    ... ]
    >>> scores = metric.compute(predictions=guess, references=gold)
    >>> scores["conflict_type/accuracy"], scores["conflict_type/ctx_f1"], scores["axes/micro_precision"]
    (0.5, 0.6666666666666666, 0.5)
    >>> perfect = metric.compute(predictions=gold, references=gold)
    >>> perfect["conflict_type/macro_f1"], perfect["axes/macro_f1"], perfect["conflict_type/kappa"]
    (1.0, 1.0, 1.0)
    >>> import json
    >>> as_json = [json.dumps(record) for record in gold]
    >>> metric.compute(predictions=as_json, references=as_json)["axes/exact_match"]
    1.0
"""

#: One prediction or reference record, as the dataset's rows carry it (labels as names).
RECORD = {
    "conflict_type": datasets.Value("string"),
    "divergence_axes": datasets.List(datasets.Value("string")),
    "dominant_confounder": datasets.Value("string"),
    "reconciliation": datasets.Value("string"),
    "evidence_spans": datasets.List(
        {
            "text": datasets.Value("string"),
            "start": datasets.Value("int32"),
            "end": datasets.Value("int32"),
            "role": datasets.Value("string"),
        }
    ),
    # not a task: groups references by clinical question for the per-question scores
    QUESTION_FIELD: datasets.Value("string"),
}
_SPAN_KEYS = tuple(RECORD["evidence_spans"].feature)


def _label(value, names):
    """A label as its name: ClassLabel ids (ints, numpy ints) in range become names; others pass."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) and 0 <= value < len(names):
        return names[int(value)]
    return value


def _plain(value):
    """numpy scalars and arrays as plain Python values."""
    return value.tolist() if hasattr(value, "tolist") else value


def _confounder(value):
    """A confounder as a name, "" for none (-1 is how a release stores none)."""
    return "" if isinstance(value, numbers.Integral) and value == -1 else _label(value, AXES)


def _checked(records, side):
    """``records`` after the scorer's checks, each error naming the record: one form for all (records or
    JSON strings, not a mix), JSON strings that parse to records, then the records' fields and labels."""
    if records is None:
        return None
    records = list(records)
    forms = [isinstance(r, str) for r in records]
    if any(forms) and not all(forms):
        i = forms.index(not forms[0])
        kinds = {True: "a JSON string", False: "a record (dict)"}
        raise ValueError(f"{side}[{i}]: {kinds[forms[i]]}, but {side}[0] is {kinds[forms[0]]}; give every "
                         "record in one form, all dicts or all JSON strings")
    parsed = [_parsed(r, side, i) for i, r in enumerate(records)]
    check_records([_plain_record(r) for r in parsed], side)
    return records


def _parsed(record, side, i):
    if not isinstance(record, str):
        return record
    try:
        return json.loads(record)
    except ValueError as exc:
        raise ValueError(f"{side}[{i}]: not a JSON record ({exc})") from None


def _plain_record(record):
    """A record with numpy values as plain ones (the scorer's checks read lists and ints)."""
    return {k: _plain(v) for k, v in record.items()} if isinstance(record, dict) else record


def _typed(record):
    """A record in the declared shape; JSON strings and None pass unchanged."""
    if record is None or isinstance(record, str):
        return record
    axes = _plain(record.get("divergence_axes"))
    spans = _plain(record.get("evidence_spans"))
    return {
        "conflict_type": _label(record.get("conflict_type"), CONFLICT_TYPES),
        "divergence_axes": None if axes is None else [_label(a, AXES) for a in axes],
        "dominant_confounder": _confounder(record.get("dominant_confounder")),
        "reconciliation": record.get("reconciliation"),
        "evidence_spans": None if spans is None else [_span(s) for s in spans],
        QUESTION_FIELD: record.get(QUESTION_FIELD),
    }


def _span(span):
    """A span with exactly the declared keys (missing ones null); a non-dict passes, to be refused."""
    return {k: _plain(span.get(k)) for k in _SPAN_KEYS} if isinstance(span, dict) else span


def _records(rows):
    """Stored rows as scorer records: JSON strings parsed; typed rows without the fields no row carries."""
    if rows and isinstance(rows[0], str):
        return [json.loads(row) for row in rows]
    carried = [k for k in RECORD if any(row[k] is not None for row in rows)]
    return [{k: row[k] for k in carried} for row in rows]


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Biodivergence(evaluate.Metric):
    """The BioDivergence metric (see ``scoring.compute``)."""

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=[
                datasets.Features({"predictions": RECORD, "references": RECORD}),
                datasets.Features({"predictions": datasets.Value("string"), "references": datasets.Value("string")}),
            ],
            reference_urls=["https://arxiv.org/abs/2606.11208"],
        )

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Add a batch of prediction and reference records (typed or JSON strings); a malformed one is
        refused with its index in the batch and its field."""
        checked = _checked(predictions, "predictions"), _checked(references, "references")
        typed = [None if rs is None else [_typed(r) for r in rs] for rs in checked]
        super().add_batch(predictions=typed[0], references=typed[1], **kwargs)

    def add(self, *, prediction=None, reference=None, **kwargs):
        """Add one prediction and one reference record (typed or JSON strings)."""
        for record, side in ((prediction, "prediction"), (reference, "reference")):
            if record is not None:
                _checked([record], side)
        super().add(prediction=_typed(prediction), reference=_typed(reference), **kwargs)

    def _enforce_nested_string_type(self, schema, obj):
        """evaluate's check that string features get strings, letting null (a field not carried) pass."""
        if obj is not None:
            super()._enforce_nested_string_type(schema, obj)

    def _compute(self, predictions, references, **kwargs):
        return score(_records(predictions), _records(references), **kwargs)
