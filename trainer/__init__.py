"""The reference multi-task model, its training and prediction CLIs, and the baseline suite.

``modeling`` (MultiTaskConflictModel / Config), ``features`` (comparison features), ``data``
(release → tensors), ``train`` / ``predict`` (CLIs), ``baselines`` (paper Table 31 suite),
``metric`` (the BioDivergence scorer), ``encoders`` (offline encoder resolution).
"""
