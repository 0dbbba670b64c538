"""One thread policy for the native libraries (OpenMP in scikit-learn and torch, BLAS).

OpenMP pools sized to every core spin at their barriers when the machine is busy: the baselines'
HistGradientBoosting sat 14 minutes in barrier waits on a shared 2-core machine and finished in
137 s with one thread. :func:`cap_threads` sets the pool sizes before those libraries are imported
(the ``biodivergence`` command calls it first); a value the user exported is kept.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

#: The variables the OpenMP runtime and the BLAS libraries read when they load.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def default_threads() -> int:
    """The usable cores (cgroup quota and affinity included) less one left for the rest of the machine."""
    from joblib import cpu_count

    return max(1, cpu_count() - 1)


def cap_threads(environ: MutableMapping[str, str] | None = None) -> dict[str, str]:
    """Set every unset thread variable of ``environ`` (default ``os.environ``); returns the values in force."""
    environ = os.environ if environ is None else environ
    threads = str(default_threads())
    return {name: environ.setdefault(name, threads) for name in THREAD_VARIABLES}
