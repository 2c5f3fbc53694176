"""Holding BLAS to a few threads. Kept free of NumPy imports: the environment variables only
work if they are set before NumPy loads."""

from __future__ import annotations

import os
import sys


def limit_blas_threads(n: int) -> str:
    """Hold BLAS to `n` threads (0: leave it); returns how. On a small CPU, BLAS worker threads
    spinning between tiny matmuls fight the engine's loop thread and the event loop."""
    if n <= 0:
        return "unchanged"
    if "numpy" not in sys.modules:
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(var, str(n))
        return "environment"
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return "unchanged"
    threadpool_limits(n, user_api="blas")
    return "threadpoolctl"
