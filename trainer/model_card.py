"""The model card (``README.md``) of a model folder written by ``biodivergence train``.

The words are the Jinja file ``templates/model_card.md``, filled through ``huggingface_hub.ModelCard.from_template``;
this module computes what goes in from what the folder holds: ``config.json`` (encoder, variant, threshold,
vocabularies) and the run summary ``biodivergence_results.json`` (release, schedule, validation and test scores with
their 95% bootstrap intervals, label counts). The YAML header is ``huggingface_hub.ModelCardData`` (with a
``model-index`` of the test scores), so the Hub shows the scores. ``repo_id`` / ``revision`` are stamped by
the push (``trainer.hub_model``) into the loading instructions. No local path of this machine appears.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biodivergence_dataset import ontology
from biodivergence_dataset.io import write_text_atomic

from .constants import PAPER_EPOCHS, RESULTS_FILE

if TYPE_CHECKING:
    from huggingface_hub import ModelCardData

CARD = "README.md"
TEMPLATE = Path(__file__).resolve().parent / "templates" / "model_card.md"
#: (column, metric key, key of its support n) of the results tables.
SCORES = (
    ("Accuracy", "conflict_type/accuracy", "conflict_type/n"),
    ("Macro-F1", "conflict_type/macro_f1", "conflict_type/n"),
    ("Ctx-F1", "conflict_type/ctx_f1", f"conflict_type/support/{ontology.CONTEXTUAL}"),
    ("Axes micro-F1", "axes/micro_f1", "axes/n"),
    ("Axes macro-F1", "axes/macro_f1", "axes/n"),
    ("Confounder acc.", "confounder/accuracy", "confounder/n"),
)
#: Test scores in the Hub's model-index: (task name, metric type, metric name, key, key of its support n).
MODEL_INDEX = (
    ("Conflict type (Task 1)", "f1", "Macro-F1", "conflict_type/macro_f1", "conflict_type/n"),
    ("Conflict type (Task 1)", "f1", "Ctx-F1 (contextual contradiction)", "conflict_type/ctx_f1",
     f"conflict_type/support/{ontology.CONTEXTUAL}"),
    ("Divergence axes (Task 2)", "f1", "Axes micro-F1", "axes/micro_f1", "axes/n"),
    ("Dominant confounder (Task 3)", "accuracy", "Confounder accuracy", "confounder/accuracy", "confounder/n"),
)
#: The example pair of the card's usage snippet (the test runs that snippet verbatim).
EXAMPLE_PAIR = ("Colistin reduced 30-day mortality in ICU patients in Greece.",
                "Colistin did not reduce 30-day mortality in outpatients in Thailand.")
_PLACEHOLDER = re.compile(r"^<[^>]*>/")


def release_reference(release: str | Path) -> dict[str, Any]:
    """What the card says about the training data: Hub id and revision when known, the release version, no path."""
    text = str(release)
    folder = Path(text).expanduser()
    info: dict[str, Any] = {"repo_id": None, "revision": None, "version": None, "name": "BioDivergence"}
    if not folder.exists():
        repo, _, revision = text.partition("@")
        info.update(repo_id=repo or None, revision=revision or None)
        return info
    meta_path = folder / "card_meta.json"
    if meta_path.exists():
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except ValueError:
            meta = {}
        repo_id = meta.get("repo_id") or ""
        info["repo_id"] = None if not repo_id or _PLACEHOLDER.match(repo_id) else repo_id
        info["version"] = meta.get("version")
    return info


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not math.isnan(float(value)) else None


def _cell(scores: dict[str, Any], key: str, n_key: str) -> str:
    """A score with its interval; "n/a (n=…)" where the metric says undefined (None), "—" where not scored."""
    if key not in scores:
        return "—"
    value = _number(scores[key])
    if value is None:
        return f"n/a (n={scores.get(n_key, '?')})"
    low, high = _number(scores.get(f"{key}/ci_low")), _number(scores.get(f"{key}/ci_high"))
    return f"{value:.3f}" + (f" [{low:.3f}, {high:.3f}]" if low is not None and high is not None else "")


def _per_class(scores: dict[str, Any]) -> list[tuple[str, str, Any]]:
    """The test F1 of each conflict type with its support n (reference count); none when the run has no per-class
    scores."""
    if not any(f"conflict_type/f1/{c}" in scores for c in ontology.CONFLICT_TYPE_NAMES):
        return []
    return [(name, _cell(scores, f"conflict_type/f1/{name}", f"conflict_type/support/{name}"),
             scores.get(f"conflict_type/support/{name}", "")) for name in ontology.CONFLICT_TYPE_NAMES]


def _data_line(release: dict[str, Any], config: str) -> str:
    version = f" version {release['version']}" if release.get("version") else ""
    if release.get("repo_id"):
        pin = f"@{release['revision']}" if release.get("revision") else ""
        return f"[`{release['repo_id']}{pin}`](https://huggingface.co/datasets/{release['repo_id']}){version}, config `{config}`"
    return f"a local BioDivergence release{version} (not published on the Hub), config `{config}`"


def card_data(release: dict[str, Any], data_config: str, encoder: str, name: str,
              test: dict[str, Any]) -> ModelCardData:
    """The YAML header: Hub metadata, with a ``model-index`` of the test scores when the release is on the Hub."""
    from huggingface_hub import EvalResult, ModelCardData

    eval_results = []
    if test and release.get("repo_id"):
        for task_name, metric_type, metric_name, key, support_key in MODEL_INDEX:
            support = _number(test.get(support_key))
            if _number(test.get(key)) is not None:
                eval_results.append(EvalResult(
                    task_type="text-classification", task_name=task_name, dataset_type=release["repo_id"],
                    dataset_name="BioDivergence", dataset_config=data_config, dataset_split="test",
                    dataset_revision=release.get("revision"), metric_type=metric_type,
                    metric_name=metric_name + (f" (n={support:.0f})" if support is not None else ""),
                    metric_value=round(float(test[key]), 4),
                    metric_args={"n": int(support)} if support is not None else None))
    return ModelCardData(
        library_name="transformers", pipeline_tag="text-classification", language=["en"], license="other",
        license_name="see-training-data-and-base-model",
        base_model=encoder or None, datasets=[release["repo_id"]] if release.get("repo_id") else None,
        tags=["biodivergence", "biomedical", "scientific-claims", "contradiction-detection", "multi-task",
              "custom_code"],
        model_name=name, eval_results=eval_results or None,
    )


def _sizes(results: dict[str, Any]) -> tuple[dict[str, int], dict[str, int], dict[str, dict[str, int]]]:
    """The pairs of each split the run used, of each split of the release, and the label counts of the first."""
    return results.get("split_sizes", {}), results.get("release_split_sizes", {}), results.get("label_counts", {})


def _split_lines(results: dict[str, Any]) -> list[str]:
    """Each split's pairs, the sample it is of the release's split, and its label counts."""
    n_train, full, counts = _sizes(results)
    lines = []
    for split in ("train", "validation", "test"):
        if split in n_train:
            sampled = (f" (a fixed random sample of the release's {full[split]:,})"
                       if full.get(split, n_train[split]) != n_train[split] else "")
            label_counts = counts.get(split) or {}
            shown = ", ".join(f"{k} {v}" for k, v in sorted(label_counts.items(), key=lambda kv: -kv[1]))
            lines.append(f"{split}: {n_train[split]:,} pairs{sampled}" + (f"; {shown}" if shown else ""))
    return lines


def _training_rows(config: dict[str, Any], results: dict[str, Any], encoder: str) -> list[tuple[str, Any]]:
    """The settings table: the model's, the schedule's and the run's (rows without a value left out)."""
    run, settings = (results.get("runs") or [{}])[0], results.get("settings") or {}
    schedule = run.get("schedule") or {}
    rows = [
        ("encoder", f"`{encoder}`" if encoder else "a local encoder folder"),
        ("variant (paper Table 12)", settings.get("ablation", "full")),
        ("confounder constraint", config.get("constraint_mode")),
        ("loss weights CT / AX / DC", " / ".join(str(w) for w in settings.get("loss_weights", []))),
        ("epochs", f"every conflict + {settings['negatives_per_conflict']:g} non-conflicts per conflict, a fresh "
         "block each epoch" if settings.get("negatives_per_conflict") else "every training pair"),
        ("class weights, axis pos_weight",
         ("balanced on " + ("an epoch's" if settings.get("negatives_per_conflict") else "the train split's")
          + " counts, capped at 20") if settings.get("class_weights", True) else "off"),
        ("focal loss γ (conflict type)", config.get("focal_gamma") or None),
        ("review question before claim a", config.get("use_question")),
        ("claims read apart into finding states", config.get("finding_states") or None),
        ("encoder and finding states first fitted to", "Evidence Inference's expert findings, development part "
         "(increased, decreased, no difference, not reported)" if settings.get("finding_data") else None),
        ("frozen encoder layers (with the embeddings)", settings.get("freeze_layers") or None),
        ("max length", config.get("max_length")),
    ]
    rows += [(k, schedule[k]) for k in ("num_train_epochs", "learning_rate", "weight_decay", "warmup_steps",
                                         "lr_scheduler_type", "optim", "max_grad_norm", "per_device_train_batch_size",
                                         "gradient_accumulation_steps", "world_size", "bf16", "fp16", "seed")
             if k in schedule]
    rows += [
        ("epochs run (early stopping on validation Ctx-F1 at the tuned conflict threshold, patience "
         + str(settings.get("patience", "")) + ")", run.get("epochs_run")),
        ("kept checkpoint", run.get("best_checkpoint")),
        ("axis threshold (tuned on validation)", config.get("axis_threshold")),
        ("conflict threshold on 1 − p(no_conflict) (tuned on validation)", config.get("conflict_threshold")),
        ("training time", f"{run['train_runtime_s']:.0f} s" if run.get("train_runtime_s") is not None else None),
    ]
    return [(k, v) for k, v in rows if v not in (None, "")]


def _score_rows(run: dict[str, Any]) -> list[list[Any]]:
    """The results table: split, n and each score of ``SCORES`` with its interval."""
    return [[split, run[split].get("conflict_type/n", ""), *(_cell(run[split], k, n) for _, k, n in SCORES)]
            for split in ("validation", "test") if run.get(split)]


def _run_limitations(results: dict[str, Any], encoder: str) -> list[str]:
    """The limitations this run has beyond every model's: one-class splits, a short schedule, a small encoder."""
    n_train, full, counts = _sizes(results)
    lines = []
    for split in ("train", "validation", "test"):
        classes = [c for c, n in (counts.get(split) or {}).items() if n]
        if len(classes) == 1:
            lines.append(f"The {n_train.get(split, 0):,} {split} pairs are all `{classes[0]}`: "
                         + ("the model never saw another class." if split == "train" else
                            "its scores say nothing about telling the classes apart."))
    short = []
    if full.get("train") and n_train.get("train") and n_train["train"] < full["train"]:
        short.append(f"{n_train['train']:,} of the {full['train']:,} training pairs")
    epochs = ((results.get("runs") or [{}])[0].get("schedule") or {}).get("num_train_epochs")
    if epochs is not None and epochs < PAPER_EPOCHS:
        short.append(f"{epochs:g} epoch(s) instead of the paper's {PAPER_EPOCHS}")
    if short:
        lines.append(f"A short schedule ({'; '.join(short)}): a budget run, not the paper's reference model.")
    if "minilm" in encoder.lower():
        lines.append("The encoder is all-MiniLM-L6-v2, a small general-domain encoder (the paper uses "
                     "BiomedBERT); expect lower scores than the paper's reference model.")
    return lines


def render(folder: str | Path, repo_id: str | None = None, revision: str | None = None) -> str:
    """The card text of a model folder: ``templates/model_card.md`` filled through ``ModelCard.from_template``."""
    from huggingface_hub import ModelCard

    folder = Path(folder)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    results = json.loads((folder / RESULTS_FILE).read_text(encoding="utf-8")) if (folder / RESULTS_FILE).exists() else {}
    run = (results.get("runs") or [{}])[0]
    release = results.get("release_reference") or {}
    data_config = results.get("config", ontology.DEFAULT_CONFIG)
    encoder = config.get("encoder_name_or_path") or ""
    name = repo_id.split("/")[-1] if repo_id else "biodivergence-reference"
    tuned = run.get("validation_axes_micro_f1_at_threshold")
    card = ModelCard.from_template(
        card_data(release, data_config, encoder, name, run.get("test") or {}), template_path=str(TEMPLATE),
        name=name, encoder=encoder, n_features=len(config.get("feature_names") or []),
        release_line=_data_line(release, data_config), ontology_version=ontology.ONTOLOGY_VERSION,
        split_lines=_split_lines(results), training_rows=_training_rows(config, results, encoder),
        scored=bool(run), bootstrap=(results.get("settings") or {}).get("bootstrap", 0),
        score_names=[h for h, _, _ in SCORES], score_rows=_score_rows(run),
        per_class=_per_class(run.get("test") or {}),
        tuned_axes_line=(None if tuned is None else f"Validation axes micro-F1 at the tuned threshold "
                                                    f"{config.get('axis_threshold')}: {tuned:.3f}."),
        load_id=repo_id or "PATH/TO/THIS/FOLDER", pin=f', revision="{revision}"' if revision else "",
        example_pair=EXAMPLE_PAIR, run_limitations=_run_limitations(results, encoder))
    return str(card)


def write_model_card(folder: str | Path, repo_id: str | None = None, revision: str | None = None) -> Path:
    """Write ``README.md`` into a model folder; returns its path."""
    folder = Path(folder)
    return write_text_atomic(folder / CARD, render(folder, repo_id, revision))
