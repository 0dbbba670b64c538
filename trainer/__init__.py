"""The reference multi-task model, its training and prediction CLIs, and the baseline suite.

``modeling`` (MultiTaskConflictModel / Config; self-contained, copied into saved models for
``trust_remote_code``), ``features`` (comparison features), ``data`` (release → tensors), ``train`` /
``predict`` (CLIs), ``pipeline`` (claim pairs → labels, a ``transformers`` pipeline), ``model_card`` and
``hub_model`` (the card of a trained model, its push to the Hub), ``baselines`` (paper Table 31 suite),
``metric`` (the BioDivergence scorer), ``encoders`` (offline encoder resolution).
"""
