"""The reference multi-task model (paper §6.1, §6.3, appendix B, Table 32).

``[CLS] claim_a [SEP] claim_b [SEP]`` → a transformer encoder → token states projected to 256
dims → 8-head cross-attention between the two claims' tokens → fused with the [CLS] state,
32-dim claim-type embeddings and the comparison features (``trainer.pair_features``) into ``z`` →
three heads: conflict type (softmax over 6), axes (sigmoid over 13) and the dominant
confounder (softmax over 13 on ``[z; Â]``).

Finding states (``config.finding_states`` = K > 0, the default of ``biodivergence train``): a conflict is two
claims whose findings on one question oppose, and a claim's finding is read from the question and that claim
alone. So the encoder reads each claim apart (:func:`claim_block_mask`: a claim's tokens attend only the question
prefix and their own claim), a head gives each claim a distribution over K finding states (the last one: no
finding reported); the probability that the two claims' findings differ (:func:`findings_differ`) is the
probability of a conflict, and the pair head only says which kind (:func:`with_findings_prior`). Why: the
labels of a release are a function of each claim's reading (a free state per claim fits every training pair's
conflict-or-not), which a pair head must otherwise discover from a few hundred conflicts; the pair heads still
see both claims through the cross-attention on top.

Constraint modes for the confounder head (``config.constraint_mode``):

* ``none`` — conditioned on the predicted axis probabilities ``Â``, no masking;
* ``predicted_axes`` — conditioned on ``Â``; the returned logits are restricted to the axes
  predicted present (``Â ≥ axis_threshold``; unrestricted when none is);
* ``gold_axes`` — conditioned on the gold axis vector (``axis_labels`` must be given) and
  restricted to the gold axes (the oracle analysis of paper Table 13).

The confounder loss is always computed on the unrestricted logits, so a gold confounder
outside the predicted axes cannot make it infinite; absent confounders (-100) are ignored.

This file imports only torch, transformers and huggingface_hub: ``save_pretrained`` copies it into
the model folder and writes an ``auto_map``, so ``AutoModel.from_pretrained(folder,
trust_remote_code=True)`` loads the model in a process that has none of the BioDivergence packages, and
``pipeline("text-classification", model=folder, trust_remote_code=True)`` classifies a claim pair
(``{"text": claim_a, "text_pair": claim_b}``) through :class:`MultiTaskConflictForSequenceClassification`.
Given tokens only, ``forward`` finds the two claims from the ``[SEP]`` tokens (``config.sep_token_id``) and
takes the hand-computed inputs as unknown: comparison features 0 and both claim types ``factual`` (the
BioDivergence toolkit's ``trainer.pipeline`` computes them from the pair and its release columns).
The label and feature vocabularies below are a copy of ``biodivergence_dataset.ontology`` and
``trainer.pair_features`` (a test keeps them equal); a saved model carries its own in ``config.json``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import ClassVar, Literal

import torch
from huggingface_hub.dataclasses import strict
from torch import nn
from transformers import AutoConfig, AutoModel, AutoModelForSequenceClassification, PreTrainedConfig, PreTrainedModel
from transformers import initialization as init
from transformers.configuration_utils import SubConfigSpec
from transformers.utils import ModelOutput

CONSTRAINT_MODES: tuple[str, ...] = ("none", "predicted_axes", "gold_axes")
TASKS: tuple[str, ...] = ("conflict_type", "axes", "confounder")
IGNORE_INDEX = -100
_POOLER_MODEL_TYPES = frozenset({"bert", "roberta", "xlm-roberta", "camembert"})
_NEG_INF = -1e4  # large enough to zero a softmax entry, small enough for fp16
#: claim type of a claim whose type is not given (``biodivergence_dataset.ontology.DEFAULT_CLAIM_TYPE``)
DEFAULT_CLAIM_TYPE = "factual"
#: the conflict type of a pair whose findings do not differ (``biodivergence_dataset.ontology.NO_CONFLICT``)
NO_CONFLICT = "no_conflict"
_EPS = 1e-6

# --- vocabularies: a copy of biodivergence_dataset.ontology and trainer.pair_features (a test keeps them equal) ---
CONFLICT_TYPE_NAMES: tuple[str, ...] = (
    "no_conflict", "direct_contradiction", "contextual_contradiction", "underspecified_apparent_contradiction",
    "evidence_insufficiency", "unresolved_scientific_controversy",
)
AXIS_NAMES: tuple[str, ...] = (
    "population_cohort", "geography", "year_time_period", "assay_measurement_protocol", "study_design",
    "dosage_intervention", "disease_subtype", "organism_strain_lineage", "gene_mutation_molecular_background",
    "clinical_setting", "sample_source", "endpoint_definition", "unknown_latent_factor",
)
CLAIM_TYPE_NAMES: tuple[str, ...] = (
    "factual", "efficacy", "prognostic", "correlational", "prevalence", "causal", "mechanistic", "recommendation",
)
COMPARISON, DISAGREEMENT, METADATA = "comparison", "disagreement", "metadata"
FEATURE_GROUP_NAMES: tuple[str, ...] = (COMPARISON, DISAGREEMENT, METADATA)
#: comparison feature -> its group (the ablations of paper Table 12 switch a whole group off)
FEATURE_GROUPS: dict[str, str] = {
    "similarity": COMPARISON, "entity_overlap": COMPARISON,
    **dict.fromkeys(("disagreement", "combined_score", "negation_a", "negation_b", "negation_mismatch", "hedge_a",
                     "hedge_b", "polarity_a", "polarity_b", "polarity_mismatch", "direction_opposed",
                     "null_vs_effect"), DISAGREEMENT),
    **dict.fromkeys(("type_compatibility", "year_penalty", "same_claim_type", "year_gap", "year_known",
                     "domain_amr", "domain_oncology", "domain_infectious_disease", "domain_genomics",
                     "domain_clinical_trials_epidemiology"), METADATA),
}


@strict(accept_kwargs=True)
@dataclass(repr=False)
class MultiTaskConflictConfig(PreTrainedConfig):
    """Configuration of :class:`MultiTaskConflictModel`; ``encoder_config`` is the encoder's own config.

    ``encoder_name_or_path`` is the Hub name the encoder weights started from (informational: the weights
    are in the saved model); ``feature_groups`` gives the group of each of ``feature_names``;
    ``sep_token_id`` (the tokenizer's) lets ``forward`` find the two claims when ``pair_segments`` is not given.
    ``focal_gamma`` > 0 makes the conflict-type loss focal (:func:`conflict_type_loss`); ``use_question`` records
    that the model was trained with the row's review question before claim a (its inputs must be encoded so).
    ``finding_states`` > 0 reads each claim apart into that many finding states (see the module docstring).
    ``conflict_threshold`` (tuned on validation by ``biodivergence train``; None: the arg-max) is where decoding
    calls a pair a conflict: ``1 − p(no_conflict) ≥ conflict_threshold`` (``trainer.predict.conflict_classes``).
    """

    model_type = "biodivergence-multitask"
    sub_configs_defaults = {"encoder_config": SubConfigSpec(config_class=AutoConfig, model_type="bert")}  # noqa: RUF012
    #: model outputs Trainer leaves out of evaluation predictions (they stay in ``forward``'s output)
    keys_to_ignore_at_inference: ClassVar[list[str]] = ["finding_probs"]

    encoder_config: PreTrainedConfig | dict | None = None
    encoder_name_or_path: str = ""
    projection_dim: int = 256
    type_embed_dim: int = 32
    num_cross_attention_heads: int = 8
    dropout: float = 0.1
    use_cross_attention: bool = True
    disabled_feature_groups: list[str] | None = None
    feature_names: list[str] | None = None
    feature_groups: list[str] | None = None
    tasks: list[str] | None = None
    constraint_mode: Literal["none", "predicted_axes", "gold_axes"] = "predicted_axes"
    axis_threshold: float = 0.5
    conflict_threshold: float | None = None
    max_length: int = 256
    sep_token_id: int | None = None
    loss_weight_conflict_type: float = 1.0
    loss_weight_axes: float = 1.0
    loss_weight_confounder: float = 0.3
    class_weights: list[float] | None = None
    focal_gamma: float = 0.0
    use_question: bool = False
    finding_states: int = 0
    axis_pos_weight: list[float] | None = None
    conflict_type_names: list[str] | None = None
    axis_names: list[str] | None = None
    claim_type_names: list[str] | None = None
    initializer_range: float = 0.02

    def __post_init__(self, **kwargs):
        self.disabled_feature_groups = list(self.disabled_feature_groups or [])
        self.feature_names = list(self.feature_names or FEATURE_GROUPS)
        if self.feature_groups is None:  # configs saved before feature_groups existed
            unknown = [n for n in self.feature_names if n not in FEATURE_GROUPS]
            if unknown:
                raise ValueError(f"feature_groups must be given for the comparison features {unknown}")
            self.feature_groups = [FEATURE_GROUPS[n] for n in self.feature_names]
        self.feature_groups = list(self.feature_groups)
        self.tasks = list(self.tasks or TASKS)
        self.conflict_type_names = list(self.conflict_type_names or CONFLICT_TYPE_NAMES)
        self.axis_names = list(self.axis_names or AXIS_NAMES)
        self.claim_type_names = list(self.claim_type_names or CLAIM_TYPE_NAMES)
        if self.id2label is None:
            self.id2label = dict(enumerate(self.conflict_type_names))
            self.label2id = {n: i for i, n in enumerate(self.conflict_type_names)}
        super().__post_init__(**kwargs)
        self._check()

    def _check(self) -> None:
        if self.constraint_mode not in CONSTRAINT_MODES:
            raise ValueError(f"constraint_mode must be one of {CONSTRAINT_MODES}, got {self.constraint_mode!r}")
        unknown = set(self.tasks) - set(TASKS)
        if unknown or "conflict_type" not in self.tasks:
            raise ValueError(f"tasks must include 'conflict_type' and be among {TASKS}, got {self.tasks}")
        unknown_groups = set(self.disabled_feature_groups) - set(FEATURE_GROUP_NAMES)
        if unknown_groups:
            raise ValueError(f"unknown feature groups {sorted(unknown_groups)}; expected some of {list(FEATURE_GROUP_NAMES)}")
        if len(self.feature_groups) != len(self.feature_names) or set(self.feature_groups) - set(FEATURE_GROUP_NAMES):
            raise ValueError(f"feature_groups must name one of {list(FEATURE_GROUP_NAMES)} for each of the "
                             f"{len(self.feature_names)} feature_names, got {self.feature_groups}")
        if self.finding_states and (self.finding_states < 3 or NO_CONFLICT not in self.conflict_type_names):
            raise ValueError("finding_states must be 0 or at least 3 (two findings and 'not reported'), and the "
                             f"conflict types must include {NO_CONFLICT!r}; got {self.finding_states}")
        if self.projection_dim % self.num_cross_attention_heads:
            raise ValueError("projection_dim must be divisible by num_cross_attention_heads")
        for name, values, n in (
            ("class_weights", self.class_weights, len(self.conflict_type_names)),
            ("axis_pos_weight", self.axis_pos_weight, len(self.axis_names)),
        ):
            if values is not None and len(values) != n:
                raise ValueError(f"{name} has {len(values)} entries, expected {n}")


@dataclass
class MultiTaskOutput(ModelOutput):
    """``loss`` (when labels are given) and the logits of the three heads."""

    loss: torch.Tensor | None = None
    conflict_logits: torch.Tensor | None = None
    axis_logits: torch.Tensor | None = None
    confounder_logits: torch.Tensor | None = None
    #: (B, 2, K) each claim's distribution over the finding states (``config.finding_states`` > 0 only)
    finding_probs: torch.Tensor | None = None
    #: the conflict-type logits under the name transformers' text-classification pipeline reads
    #: (:class:`MultiTaskConflictForSequenceClassification` only)
    logits: torch.Tensor | None = None


def masked_mean(states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean of ``states`` (B, L, D) over the positions where ``mask`` (B, L) is true."""
    weights = mask.to(states.dtype).unsqueeze(-1)
    return (states * weights).sum(1) / weights.sum(1).clamp(min=1.0)


def segments_from_ids(input_ids: torch.Tensor, attention_mask: torch.Tensor, sep_token_id: int) -> torch.Tensor:
    """``pair_segments`` of ``[CLS] claim_a [SEP] claim_b [SEP]`` rows (``<s> a </s></s> b </s>`` too): 1 on
    claim-a tokens, 2 on claim-b tokens, 0 on the first attended token, separators and padding."""
    is_sep = input_ids == sep_token_id
    seps_before = is_sep.long().cumsum(dim=1) - is_sep.long()
    segments = torch.where(seps_before == 0, 1, 2)
    special = is_sep | ~attention_mask.bool()
    special[torch.arange(len(input_ids), device=input_ids.device), attention_mask.long().argmax(dim=1)] = True
    return segments.masked_fill(special, 0)


def claim_block_mask(pair_segments: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """(B, 1, L, L) boolean attention mask that reads the two claims apart in one pass: every position attends the
    prefix (the attended tokens before claim a: ``[CLS]`` and the question, if any) and a claim's tokens attend
    their own claim too, so claim a's states never see claim b's words, in any layer."""
    claim = pair_segments > 0
    prefix = attention_mask.bool() & (claim.long().cumsum(dim=1) == 0)
    same_claim = (pair_segments.unsqueeze(2) == pair_segments.unsqueeze(1)) & claim.unsqueeze(2) & claim.unsqueeze(1)
    return (prefix.unsqueeze(1) | same_claim).unsqueeze(1)


def findings_differ(probs_a: torch.Tensor, probs_b: torch.Tensor) -> torch.Tensor:
    """P(two claims' findings differ), the claims read independently, each a (B, K) distribution whose last state
    is "no finding reported": ``Σ_{x≠y} P_a(x)·P_b(y)`` over the K − 1 reported states (a claim that reports no
    finding differs from nothing)."""
    a, b = probs_a[:, :-1], probs_b[:, :-1]
    return a.sum(-1) * b.sum(-1) - (a * b).sum(-1)


def with_findings_prior(conflict_logits: torch.Tensor, p_differ: torch.Tensor, no_conflict: int) -> torch.Tensor:
    """Log-probabilities of the conflict types when the findings decide whether there is a conflict and the pair
    head only which kind: ``log(1 − P(differ))`` for ``no_conflict`` (index ``no_conflict``) and ``log P(differ)``
    plus the pair head's log-softmax over the conflict classes for each of them. (Adding the prior to free pair
    logits instead lets the pair head call a conflict whatever the claims' findings, and learn pairs by heart.)"""
    p = p_differ.clamp(_EPS, 1 - _EPS).unsqueeze(-1)
    is_none = torch.zeros_like(conflict_logits, dtype=torch.bool)
    is_none[:, no_conflict] = True
    kind = torch.log_softmax(conflict_logits.masked_fill(is_none, _NEG_INF), dim=-1)
    return torch.where(is_none, torch.log1p(-p), torch.log(p) + kind)


def _segment_mask(pair_segments: torch.Tensor, segment: int) -> torch.Tensor:
    """Positions of one claim; a row where the claim has no token falls back to [CLS] (never an empty key set)."""
    mask = pair_segments == segment
    empty = ~mask.any(dim=1)
    if empty.any():
        mask = mask.clone()
        mask[empty, 0] = True
    return mask


class MultiTaskConflictModel(PreTrainedModel):
    """Reference model for Tasks 1–3; see the module docstring."""

    config_class = MultiTaskConflictConfig
    base_model_prefix = "biodivergence"
    main_input_name = "input_ids"
    _supports_sdpa = True
    # ``loss`` is a mean over the batch: Trainer must scale it for gradient accumulation and several processes
    # itself (``**kwargs`` in ``forward`` would otherwise make it pass ``num_items_in_batch`` and skip that)
    accepts_loss_kwargs = False

    def __init__(self, config: MultiTaskConflictConfig):
        super().__init__(config)
        d, p = config.encoder_config.hidden_size, config.projection_dim
        n_axes, n_types = len(config.axis_names), len(config.claim_type_names)
        self.encoder = _bare_encoder(config.encoder_config)
        self.project = nn.Sequential(nn.Linear(d, p), nn.LayerNorm(p), nn.Dropout(config.dropout))
        self.cross_attention = nn.MultiheadAttention(p, config.num_cross_attention_heads, dropout=config.dropout, batch_first=True)
        self.cross_norm = nn.LayerNorm(p)
        self.type_embedding = nn.Embedding(n_types, config.type_embed_dim)
        n_features = len(config.feature_names)
        fused_in = 5 * p + 2 * config.type_embed_dim + n_features
        self.fuse = nn.Sequential(nn.Linear(fused_in, p), nn.GELU(), nn.Dropout(config.dropout))
        self.conflict_head = nn.Linear(p, len(config.conflict_type_names))
        self.axis_head = nn.Linear(p, n_axes)
        self.confounder_head = nn.Linear(p + n_axes, n_axes)
        self.finding_head = nn.Linear(p, config.finding_states) if config.finding_states else None
        self.register_buffer("feature_mask", self._feature_mask(), persistent=False)
        self.post_init()

    def _init_weights(self, module: nn.Module) -> None:
        super()._init_weights(module)
        if module is self:  # non-persistent buffers are re-created empty by from_pretrained
            init.copy_(self.feature_mask, self._feature_mask())

    def _feature_mask(self) -> torch.Tensor:
        """1.0 for each comparison feature whose group is enabled, 0.0 for the disabled groups."""
        disabled = set(self.config.disabled_feature_groups)
        return torch.tensor([0.0 if group in disabled else 1.0 for group in self.config.feature_groups])

    @classmethod
    def from_encoder(cls, encoder_name_or_path: str, hub_name: str | None = None, **config_kwargs) -> MultiTaskConflictModel:
        """A new model whose encoder weights come from ``encoder_name_or_path`` (a Hub id or a local folder;
        heads freshly initialised). ``hub_name`` is the encoder's Hub id recorded in the config (a local
        folder is never recorded: the config must not depend on this machine)."""
        encoder = AutoModel.from_pretrained(encoder_name_or_path)
        name = hub_name or (str(encoder_name_or_path) if _is_hub_id(str(encoder_name_or_path)) else "")
        encoder_config = encoder.config.to_dict()
        encoder_config.pop("_name_or_path", None)
        config_kwargs.setdefault("pad_token_id", getattr(encoder.config, "pad_token_id", None))
        config = MultiTaskConflictConfig(encoder_config=encoder_config, encoder_name_or_path=name, **config_kwargs)
        model = cls(config)
        weights = {k: v for k, v in encoder.state_dict().items() if not k.startswith("pooler.")}
        model.encoder.load_state_dict(weights)
        return model

    def save_pretrained(self, save_directory, *args, **kwargs):
        """Also map ``AutoModelForSequenceClassification`` (transformers' text-classification pipeline) in the
        saved ``auto_map``, whichever of the two classes is saved."""
        module = type(self).__module__.rsplit(".", 1)[-1]
        self.config.auto_map = {**(getattr(self.config, "auto_map", None) or {}),
                                "AutoModel": f"{module}.MultiTaskConflictModel",
                                "AutoModelForSequenceClassification": f"{module}.MultiTaskConflictForSequenceClassification"}
        return super().save_pretrained(save_directory, *args, **kwargs)

    def freeze_lower_layers(self, n_layers: int) -> None:
        """Keep the encoder's embeddings and its first ``n_layers`` layers fixed (0: train everything): a shorter
        backward pass on CPU, and fewer weights to fit from a few hundred conflicts."""
        if n_layers <= 0:
            return
        layers = getattr(getattr(self.encoder, "encoder", None), "layer", None)
        if layers is None or n_layers > len(layers):
            raise ValueError(f"cannot freeze {n_layers} layers of a {self.config.encoder_config.model_type} encoder")
        for module in (self.encoder.embeddings, *layers[:n_layers]):
            module.requires_grad_(False)

    # -- forward -----------------------------------------------------------------------------------------------

    def _pair_states(self, tokens: torch.Tensor, mask_a: torch.Tensor, mask_b: torch.Tensor,
                     own: tuple[torch.Tensor, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        """Pooled states of claim a and claim b (token masks ``mask_a``, ``mask_b``), each informed by the other
        claim when cross-attention is on; else ``own``, each claim's mean token state."""
        if not self.config.use_cross_attention:
            return own
        a_attends_b, _ = self.cross_attention(tokens, tokens, tokens, key_padding_mask=~mask_b, need_weights=False)
        b_attends_a, _ = self.cross_attention(tokens, tokens, tokens, key_padding_mask=~mask_a, need_weights=False)
        a = masked_mean(self.cross_norm(tokens + a_attends_b), mask_a)
        b = masked_mean(self.cross_norm(tokens + b_attends_a), mask_b)
        return a, b

    def _type_embeddings(self, claim_types: torch.Tensor) -> torch.Tensor:
        emb = self.type_embedding(claim_types).flatten(1)
        if METADATA in self.config.disabled_feature_groups:
            emb = torch.zeros_like(emb)
        return emb

    def _confounder_logits(
        self, z: torch.Tensor, axis_logits: torch.Tensor, axis_labels: torch.Tensor | None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(unrestricted logits, logits restricted by the constraint mode)."""
        mode = self.config.constraint_mode
        if mode == "gold_axes":
            if axis_labels is None:
                raise ValueError("constraint_mode 'gold_axes' needs axis_labels at inference time")
            profile = axis_labels.to(z.dtype)
        else:
            profile = torch.sigmoid(axis_logits)
        raw = self.confounder_head(torch.cat([z, profile], dim=-1))
        if mode == "none":
            return raw, raw
        allowed = profile >= (0.5 if mode == "gold_axes" else self.config.axis_threshold)
        allowed = allowed | ~allowed.any(dim=-1, keepdim=True)
        return raw, raw.masked_fill(~allowed, _NEG_INF)

    def _text_only_inputs(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, pair_segments: torch.Tensor | None,
        features: torch.Tensor | None, claim_types: torch.Tensor | None,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``pair_segments``, ``features`` and ``claim_types``: the given ones, else what the tokens alone say."""
        if pair_segments is None:
            if self.config.sep_token_id is None:
                raise ValueError("pair_segments not given and config.sep_token_id unknown: cannot tell the claims apart")
            pair_segments = segments_from_ids(input_ids, attention_mask, self.config.sep_token_id)
        if features is None:
            features = input_ids.new_zeros((len(input_ids), len(self.config.feature_names)), dtype=torch.float)
        if claim_types is None:
            default = self.config.claim_type_names.index(DEFAULT_CLAIM_TYPE)
            claim_types = input_ids.new_full((len(input_ids), 2), default)
        return pair_segments, features, claim_types

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        pair_segments: torch.Tensor | None = None,
        features: torch.Tensor | None = None,
        claim_types: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
        axis_labels: torch.Tensor | None = None,
        confounder_labels: torch.Tensor | None = None,
        **kwargs,
    ) -> MultiTaskOutput:
        """The three heads' logits (and the loss with labels). Only ``input_ids`` is required: see the module
        docstring for what the other inputs default to."""
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        pair_segments, features, claim_types = self._text_only_inputs(
            input_ids, attention_mask, pair_segments, features, claim_types)
        reads_apart = self.finding_head is not None
        encoder_inputs = {"input_ids": input_ids,
                          "attention_mask": claim_block_mask(pair_segments, attention_mask) if reads_apart else attention_mask}
        if token_type_ids is not None:
            encoder_inputs["token_type_ids"] = token_type_ids
        hidden = self.encoder(**encoder_inputs).last_hidden_state
        tokens = self.project(hidden)
        mask_a, mask_b = _segment_mask(pair_segments, 1), _segment_mask(pair_segments, 2)
        own = masked_mean(tokens, mask_a), masked_mean(tokens, mask_b)
        a, b = self._pair_states(tokens, mask_a, mask_b, own)
        fused = torch.cat(
            [tokens[:, 0], a, b, (a - b).abs(), a * b, self._type_embeddings(claim_types), features.to(tokens.dtype) * self.feature_mask],
            dim=-1,
        )
        z = self.fuse(fused)
        conflict_logits = self.conflict_head(z)
        finding_probs = None
        if reads_apart:
            finding_probs = torch.stack([self.finding_head(state).softmax(-1) for state in own], dim=1)
            conflict_logits = with_findings_prior(conflict_logits, findings_differ(finding_probs[:, 0], finding_probs[:, 1]),
                                                  self.config.conflict_type_names.index(NO_CONFLICT))
        axis_logits = self.axis_head(z)
        confounder_raw, confounder_logits = self._confounder_logits(z, axis_logits, axis_labels)
        loss = None
        if labels is not None:
            loss = self.loss(conflict_logits, axis_logits, confounder_raw, labels, axis_labels, confounder_labels)
        return MultiTaskOutput(
            loss=loss, conflict_logits=conflict_logits, axis_logits=axis_logits, confounder_logits=confounder_logits,
            finding_probs=finding_probs,
        )

    # -- loss --------------------------------------------------------------------------------------------------

    def _weights(self, values: list[float] | None, like: torch.Tensor) -> torch.Tensor | None:
        return None if values is None else torch.tensor(values, dtype=like.dtype, device=like.device)

    def loss(
        self,
        conflict_logits: torch.Tensor,
        axis_logits: torch.Tensor,
        confounder_logits: torch.Tensor,
        labels: torch.Tensor,
        axis_labels: torch.Tensor | None,
        confounder_labels: torch.Tensor | None,
    ) -> torch.Tensor:
        """``λ_ct·L_ct + λ_ax·BCE_ax + λ_dc·CE_dc`` over the configured tasks; absent confounders (-100) ignored."""
        cfg = self.config
        total = cfg.loss_weight_conflict_type * conflict_type_loss(
            conflict_logits, labels, self._weights(cfg.class_weights, conflict_logits), cfg.focal_gamma
        )
        if "axes" in cfg.tasks and axis_labels is not None:
            total = total + cfg.loss_weight_axes * nn.functional.binary_cross_entropy_with_logits(
                axis_logits, axis_labels.to(axis_logits.dtype), pos_weight=self._weights(cfg.axis_pos_weight, axis_logits)
            )
        if "confounder" in cfg.tasks and confounder_labels is not None:
            total = total + cfg.loss_weight_confounder * masked_cross_entropy(confounder_logits, confounder_labels)
        return total


def _is_hub_id(name: str) -> bool:
    """``ORG/NAME`` or ``NAME`` that is not a path on this machine."""
    return bool(name) and not os.path.isabs(name) and not name.startswith((".", "~")) and name.count("/") <= 1 \
        and not os.path.exists(name)


def _bare_encoder(encoder_config: PreTrainedConfig) -> PreTrainedModel:
    """The encoder without its pooler where the architecture has one (unused weights break DDP)."""
    if encoder_config.model_type in _POOLER_MODEL_TYPES:
        return AutoModel.from_config(encoder_config, add_pooling_layer=False)
    return AutoModel.from_config(encoder_config)


def conflict_type_loss(logits: torch.Tensor, labels: torch.Tensor, weight: torch.Tensor | None = None,
                       gamma: float = 0.0) -> torch.Tensor:
    """Class-weighted focal loss ``Σ w_y (1 − p_y)^γ (−log p_y) / Σ w_y`` (Lin et al. 2017); ``γ = 0`` is the
    weighted cross-entropy (same normalisation as ``torch``'s). ``γ > 0`` shrinks the loss of pairs already
    classed with confidence, i.e. of the many easy ``no_conflict`` pairs."""
    log_p = nn.functional.log_softmax(logits, dim=-1).gather(1, labels.unsqueeze(1)).squeeze(1)
    w = torch.ones_like(log_p) if weight is None else weight[labels]
    modulating = (1.0 - log_p.exp()).clamp(min=0.0) ** gamma if gamma else 1.0
    return (w * modulating * -log_p).sum() / w.sum()


def masked_cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy over targets that are not -100; exactly 0 (with a gradient path) when all are."""
    keep = targets != IGNORE_INDEX
    if not keep.any():
        return logits.sum() * 0.0
    return nn.functional.cross_entropy(logits[keep], targets[keep])


class MultiTaskConflictForSequenceClassification(MultiTaskConflictModel):
    """The same model and weights as transformers' text-classification pipeline loads them: the output's
    ``logits`` are the conflict-type logits (labels in ``config.id2label``); the other heads stay in the output."""

    def forward(self, *args, **kwargs) -> MultiTaskOutput:
        out = super().forward(*args, **kwargs)
        out["logits"] = out.conflict_logits
        return out


# ``AutoConfig`` / ``AutoModel`` find the classes by model type in this process; ``register_for_auto_class``
# makes ``save_pretrained`` copy this file into the model folder and write the ``auto_map`` of config.json.
AutoConfig.register(MultiTaskConflictConfig.model_type, MultiTaskConflictConfig, exist_ok=True)
AutoModel.register(MultiTaskConflictConfig, MultiTaskConflictModel, exist_ok=True)
AutoModelForSequenceClassification.register(MultiTaskConflictConfig, MultiTaskConflictForSequenceClassification,
                                            exist_ok=True)
MultiTaskConflictConfig.register_for_auto_class("AutoConfig")
MultiTaskConflictModel.register_for_auto_class("AutoModel")
MultiTaskConflictForSequenceClassification.register_for_auto_class("AutoModelForSequenceClassification")
