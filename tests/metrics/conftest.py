"""Fixtures shared by the metric's test modules."""

from __future__ import annotations

import pytest
from metric_records import METRIC_DIR


@pytest.fixture(scope="module")
def metric():
    from trainer.metric import load_metric

    return load_metric(METRIC_DIR)
