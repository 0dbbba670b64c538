"""One thread policy for the native libraries (OpenMP in scikit-learn and torch, BLAS).

OpenMP and BLAS size their pools from ``os.cpu_count()``, which in a container is the host's cores,
not the share the container may use; pools larger than that spin at their barriers (the baselines'
HistGradientBoosting sat 14 minutes in barrier waits on an oversubscribed 2-core machine and finished
in 137 s with one thread). :func:`cap_threads` sizes the pools to the usable cores (cgroup quota and
affinity included) before those libraries are imported; the ``biodivergence`` command calls it first,
and a value the user exported is kept (on a machine shared with other jobs, export ``OMP_NUM_THREADS=1``).
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

#: The variables the OpenMP runtime and the BLAS libraries read when they load.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def default_threads() -> int:
    """The usable cores (cgroup quota and affinity included): torch's embedding and training use them all."""
    from joblib import cpu_count

    return max(1, cpu_count())


def cap_threads(environ: MutableMapping[str, str] | None = None) -> dict[str, str]:
    """Set every unset thread variable of ``environ`` (default ``os.environ``); returns the values in force."""
    environ = os.environ if environ is None else environ
    threads = str(default_threads())
    return {name: environ.setdefault(name, threads) for name in THREAD_VARIABLES}
