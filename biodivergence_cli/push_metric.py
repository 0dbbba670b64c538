"""``biodivergence push-metric``: publish the metric folder as a Hub Space with a version tag.

The command line finds the folder (``trainer.metric.metric_dir``: ``--metric-dir``, else ``$BIODIVERGENCE_METRIC``,
else the installed metric, else the checkout's) and hands it to the contract's publisher, which imports nothing
above itself.
"""

from __future__ import annotations

from biodivergence_dataset import hub


def add_arguments(parser) -> None:
    hub.add_metric_arguments(parser)


def run(args) -> int:
    from trainer.metric import metric_dir

    return hub.run_metric(args, metric_dir(args.metric_dir))
