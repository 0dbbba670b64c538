"""The BioDivergence metric folder as a package (``biodivergence`` with ``metrics/`` on the path): ``scoring`` is
its entry, ``biodivergence`` the ``evaluate`` module. The scorer's modules import each other relatively, so they
load as one package: ``from biodivergence import scoring``, ``evaluate.load`` on the folder, or
``trainer.metric.scoring_module``."""
