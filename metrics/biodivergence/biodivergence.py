"""BioDivergence: the five-task metric of the BioDivergence benchmark as an ``evaluate`` module.

A thin adapter: all scoring lives in the sibling ``scoring.py``. Each prediction and reference
is a dict of task fields; the module stores it as one JSON string per example (the declared
features are two ``Value("string")`` columns), so any subset of fields, extra keys and
``add_batch`` over several batches all work. Already-serialised JSON strings are accepted too.
"""

import json

import datasets
import evaluate

from .scoring import compute as score

_CITATION = """\
@article{hossain2026biodivergence,
  title   = {BioDivergence: A Benchmark and Evaluation Framework for Hidden Contextual Contradictions
             in Biomedical Abstracts},
  author  = {Hossain, Elias and Jennifer, Sanjeda Sara and Bushra, Sabera Akter and Yousefi, Niloofar},
  journal = {arXiv preprint arXiv:2606.11208},
  year    = {2026}
}
"""

_DESCRIPTION = """\
Scores predictions on the five BioDivergence tasks: (1) conflict type, (2) divergence axes,
(3) dominant confounder, (4) reconciliation explanation and (5) claim-level evidence spans.
A task is scored only when predictions and references both carry its field.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions: one dict per example with any of `conflict_type` (str), `divergence_axes`
        (list of str), `dominant_confounder` (str, "" for none), `reconciliation` (str) and
        `evidence_spans` (list of {text, start, end, role}); or the same dict as a JSON string.
    references: the same shape as `predictions`.
    bootstrap: number of bootstrap resamples for 95% intervals of the headline keys (0 = none).
    seed: seed of the bootstrap resamples.
    semsim_model: sentence-transformers model name or path for SemSim, an object with `encode`,
        or None to skip SemSim (default: sentence-transformers/all-MiniLM-L6-v2).
Returns:
    A flat dict such as `conflict_type/macro_f1`, `axes/micro_f1`, `confounder/accuracy`,
    `reconciliation/rouge_l`, `spans/f1` (see the metric card for every key).
Examples:
    >>> metric = evaluate.load("biodivergence")
    >>> records = [{"conflict_type": "no_conflict"}]
    >>> metric.compute(predictions=records, references=records)["conflict_type/accuracy"]
    1.0
"""


def _to_json(records):
    """Records as JSON strings; strings pass through unchanged and None stays None."""
    return None if records is None else [_record_to_json(r) for r in records]


def _record_to_json(record):
    if record is None or isinstance(record, str):
        return record
    return json.dumps(record, ensure_ascii=False, default=_plain)


def _plain(value):
    """numpy scalars and arrays (e.g. ClassLabel ids from a Trainer) as plain Python values."""
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"cannot serialise {type(value).__name__} in a BioDivergence record")


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Biodivergence(evaluate.Metric):
    """The BioDivergence metric (see ``scoring.compute``)."""

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {"predictions": datasets.Value("string"), "references": datasets.Value("string")}
            ),
            reference_urls=["https://arxiv.org/abs/2606.11208"],
        )

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Add a batch of prediction and reference records (dicts or JSON strings)."""
        super().add_batch(predictions=_to_json(predictions), references=_to_json(references), **kwargs)

    def add(self, *, prediction=None, reference=None, **kwargs):
        """Add one prediction and one reference record (dicts or JSON strings)."""
        super().add(prediction=_record_to_json(prediction), reference=_record_to_json(reference), **kwargs)

    def _compute(self, predictions, references, **kwargs):
        return score([json.loads(p) for p in predictions], [json.loads(r) for r in references], **kwargs)
