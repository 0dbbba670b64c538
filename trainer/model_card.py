"""The model card (``README.md``) of a model folder written by ``biodivergence train``.

Rendered from what the folder holds: ``config.json`` (encoder, variant, threshold, vocabularies) and the
run summary ``biodivergence_results.json`` (release, schedule, validation and test scores with their 95%
bootstrap intervals, label counts). The YAML header is ``huggingface_hub.ModelCardData`` (with a
``model-index`` of the test scores), so the Hub shows the scores. ``repo_id`` / ``revision`` are stamped by
the push (``trainer.hub_model``) into the loading instructions. No local path of this machine appears.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from biodivergence_dataset import ontology
from biodivergence_dataset.io import write_text_atomic

from .constants import PAPER_EPOCHS, RESULTS_FILE

CARD = "README.md"
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


def _per_class(scores: dict[str, Any]) -> list[str]:
    """The test F1 of each conflict type with its support n (reference count); n/a where undefined."""
    if not any(f"conflict_type/f1/{c}" in scores for c in ontology.CONFLICT_TYPE_NAMES):
        return []
    lines = ["", ("Test F1 per conflict type, with its support n (test pairs of that class). n/a: neither the "
                  "references nor the predictions hold the class, so its F1 is undefined (0 / 0), not perfect."),
             "", "| Conflict type | F1 | n |", "|---|---|---|"]
    for name in ontology.CONFLICT_TYPE_NAMES:
        n_key = f"conflict_type/support/{name}"
        lines.append(f"| {name} | {_cell(scores, f'conflict_type/f1/{name}', n_key)} | {scores.get(n_key, '')} |")
    return lines


def _data_line(release: dict[str, Any], config: str) -> str:
    version = f" version {release['version']}" if release.get("version") else ""
    if release.get("repo_id"):
        pin = f"@{release['revision']}" if release.get("revision") else ""
        return f"[`{release['repo_id']}{pin}`](https://huggingface.co/datasets/{release['repo_id']}){version}, config `{config}`"
    return f"a local BioDivergence release{version} (not published on the Hub), config `{config}`"


def render(folder: str | Path, repo_id: str | None = None, revision: str | None = None) -> str:
    """The card text of a model folder."""
    from huggingface_hub import EvalResult, ModelCard, ModelCardData

    folder = Path(folder)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    results = json.loads((folder / RESULTS_FILE).read_text(encoding="utf-8")) if (folder / RESULTS_FILE).exists() else {}
    run = (results.get("runs") or [{}])[0]
    settings = results.get("settings") or {}
    schedule = run.get("schedule") or {}
    release = results.get("release_reference") or {}
    data_config = results.get("config", ontology.DEFAULT_CONFIG)
    encoder = config.get("encoder_name_or_path") or ""
    name = repo_id.split("/")[-1] if repo_id else "biodivergence-reference"
    test = run.get("test") or {}

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
    data = ModelCardData(
        library_name="transformers", pipeline_tag="text-classification", language=["en"], license="other",
        license_name="see-training-data-and-base-model",
        base_model=encoder or None, datasets=[release["repo_id"]] if release.get("repo_id") else None,
        tags=["biodivergence", "biomedical", "scientific-claims", "contradiction-detection", "multi-task",
              "custom_code"],
        model_name=name, eval_results=eval_results or None,
    )

    load_id = repo_id or "PATH/TO/THIS/FOLDER"
    pin = f', revision="{revision}"' if revision else ""
    n_train, full = results.get("split_sizes", {}), results.get("release_split_sizes", {})
    counts = results.get("label_counts", {})
    lines = [
        f"# {name}",
        "",
        "The reference multi-task model of the BioDivergence benchmark (hidden contextual contradictions between "
        "claims of biomedical abstracts). For a pair of claims it predicts the **conflict type** (6 classes, Task 1), "
        "the **divergence axes** that explain the tension (13 labels, Task 2) and the **dominant confounder** "
        "(Task 3). Architecture: `[CLS] claim_a [SEP] claim_b [SEP]` → encoder"
        + (f" (`{encoder}`)" if encoder else "")
        + " → cross-attention between the two claims' tokens → fused with claim-type embeddings and "
        f"{len(config.get('feature_names') or [])} comparison features → three heads.",
        "",
        "## Training data",
        "",
        f"- Release: {_data_line(release, data_config)}; labels of BioDivergence ontology {ontology.ONTOLOGY_VERSION}.",
    ]
    for split in ("train", "validation", "test"):
        if split in n_train:
            sampled = f" (a fixed random sample of the release's {full[split]:,})" if full.get(split, n_train[split]) != n_train[split] else ""
            label_counts = counts.get(split) or {}
            shown = ", ".join(f"{k} {v}" for k, v in sorted(label_counts.items(), key=lambda kv: -kv[1]))
            lines.append(f"- {split}: {n_train[split]:,} pairs{sampled}" + (f"; {shown}" if shown else ""))
    lines += [
        "",
        "## Training",
        "",
        "| Setting | Value |",
        "|---|---|",
    ]
    rows = [
        ("encoder", f"`{encoder}`" if encoder else "a local encoder folder"),
        ("variant (paper Table 12)", settings.get("ablation", "full")),
        ("confounder constraint", config.get("constraint_mode")),
        ("loss weights CT / AX / DC", " / ".join(str(w) for w in settings.get("loss_weights", []))),
        ("class weights, axis pos_weight", "train-split balanced, capped at 20" if settings.get("class_weights", True) else "off"),
        ("max length", config.get("max_length")),
    ]
    rows += [(k, schedule[k]) for k in ("num_train_epochs", "learning_rate", "weight_decay", "warmup_steps",
                                         "lr_scheduler_type", "optim", "max_grad_norm", "per_device_train_batch_size",
                                         "gradient_accumulation_steps", "world_size", "bf16", "fp16", "seed")
             if k in schedule]
    rows += [
        ("epochs run (early stopping, patience " + str(settings.get("patience", "")) + ")", run.get("epochs_run")),
        ("kept checkpoint", run.get("best_checkpoint")),
        ("axis threshold (tuned on validation)", config.get("axis_threshold")),
        ("training time", f"{run['train_runtime_s']:.0f} s" if run.get("train_runtime_s") is not None else None),
    ]
    lines += [f"| {k} | {v} |" for k, v in rows if v not in (None, "")]
    lines += ["", "## Results", ""]
    if run:
        lines += [
            ("Scores of the BioDivergence metric. Validation: the kept checkpoint's evaluation during training "
            "(axes at threshold 0.5). Test: the kept model at the tuned axis threshold, with 95% bootstrap intervals "
            f"over {settings.get('bootstrap', 0)} resamples of the test pairs where shown."),
            "",
            "| Split | n | " + " | ".join(h for h, _, _ in SCORES) + " |",
            "|---|---|" + "---|" * len(SCORES),
        ]
        for split in ("validation", "test"):
            if run.get(split):
                lines.append(f"| {split} | {run[split].get('conflict_type/n', '')} | "
                             + " | ".join(_cell(run[split], k, n) for _, k, n in SCORES) + " |")
        lines += _per_class(run.get("test") or {})
        if run.get("validation_axes_micro_f1_at_threshold") is not None:
            lines += ["", (f"Validation axes micro-F1 at the tuned threshold {config.get('axis_threshold')}: "
                          f"{run['validation_axes_micro_f1_at_threshold']:.3f}.")]
    else:
        lines.append("No scores were recorded with this model.")
    lines += [
        "",
        "## How to use",
        "",
        ("The model code is in this repository (`modeling.py`, torch and transformers only), so it runs without "
        "the BioDivergence packages. The conflict type of a claim pair:"),
        "",
        "```python",
        "from transformers import pipeline",
        "",
        f'classify = pipeline("text-classification", model="{load_id}"{pin}, trust_remote_code=True)',
        f'result = classify({{"text": "{EXAMPLE_PAIR[0]}", "text_pair": "{EXAMPLE_PAIR[1]}"}})',
        "print(result)  # {'label': <one of config.id2label>, 'score': <its probability>}",
        "```",
        "",
        "All three heads (conflict type, divergence axes, dominant confounder):",
        "",
        "```python",
        "from transformers import AutoModel, AutoTokenizer",
        "",
        f'model = AutoModel.from_pretrained("{load_id}"{pin}, trust_remote_code=True)',
        f'tokenizer = AutoTokenizer.from_pretrained("{load_id}"{pin})',
        'out = model(**tokenizer("claim A", "claim B", return_tensors="pt"))',
        "# out.conflict_logits, out.axis_logits (config.axis_names), out.confounder_logits",
        "```",
        "",
        ("From text alone the model reads the comparison features as unknown (0) and both claim types as "
        "`factual`. It was trained with them: `forward` also takes `pair_segments` (1 on claim-a tokens, 2 on "
        "claim-b tokens), `features` (the comparison features named in `config.feature_names`) and `claim_types` "
        "(two ids of `config.claim_type_names`), which the BioDivergence toolkit computes from claim pairs or "
        "release rows (its predictions, and the scores above, use them):"),
        "",
        "```python",
        "from trainer.pipeline import conflict_pipeline",
        "",
        f'classify = conflict_pipeline("{load_id}")',
        'classify({"claim_a_text": "...", "claim_b_text": "...", "claim_a_type": "efficacy", "domain": "amr"})',
        "# {'conflict_type': ..., 'divergence_axes': [...], 'dominant_confounder': ...}",
        "```",
        "",
        (f"or `biodivergence predict --model {load_id} --release RELEASE --split test --out preds.jsonl` for a "
        "whole split in the metric's input format."),
        "",
        "## Limitations",
        "",
        ("- The labels are silver: machine-made by the BioDivergence annotators and checked against expert-labelled "
        "sets (see the dataset card). Scores measure agreement with those labels, not clinical truth; do not use "
        "the predictions for medical decisions."),
        ("- English claims from biomedical abstracts of five domains; claims outside them, or pairs without the "
        "release's metadata (claim types, domain, years, mining scores), get features the model saw rarely."),
        ("- Rare classes and axes have few training examples; their F1 is unstable, and a class that neither a "
        "split nor the predictions hold has an undefined F1 (n/a, n = 0), never a perfect one (see the label counts "
        "above)."),
    ]
    for split in ("train", "validation", "test"):
        classes = [c for c, n in (counts.get(split) or {}).items() if n]
        if len(classes) == 1:
            lines.append(f"- The {n_train.get(split, 0):,} {split} pairs are all `{classes[0]}`: "
                         + ("the model never saw another class." if split == "train" else
                            "its scores say nothing about telling the classes apart."))
    short = []
    if full.get("train") and n_train.get("train") and n_train["train"] < full["train"]:
        short.append(f"{n_train['train']:,} of the {full['train']:,} training pairs")
    epochs = schedule.get("num_train_epochs")
    if epochs is not None and epochs < PAPER_EPOCHS:
        short.append(f"{epochs:g} epoch(s) instead of the paper's {PAPER_EPOCHS}")
    if short:
        lines.append(f"- A short schedule ({'; '.join(short)}): a budget run, not the paper's reference model.")
    if "minilm" in encoder.lower():
        lines.append("- The encoder is all-MiniLM-L6-v2, a small general-domain encoder (the paper uses "
                     "BiomedBERT); expect lower scores than the paper's reference model.")
    lines += [
        ("- Licence: the weights derive from the base model (its own licence) and from the release's source "
        "abstracts, whose licences differ (see the dataset card); check both before reuse."),
        "",
    ]
    header = data.to_yaml()
    return str(ModelCard(f"---\n{header}\n---\n\n" + "\n".join(lines)))


def write_model_card(folder: str | Path, repo_id: str | None = None, revision: str | None = None) -> Path:
    """Write ``README.md`` into a model folder; returns its path."""
    folder = Path(folder)
    return write_text_atomic(folder / CARD, render(folder, repo_id, revision))
