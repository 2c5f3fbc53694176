"""Holding BLAS to a few threads: the one helper the server, the engine's process, the CLI and
the benchmarks use. Kept free of NumPy imports: the environment variables only work if they are
set before NumPy loads.

On a small CPU, BLAS worker threads spinning between tiny matmuls fight the engine's loop thread
and the event loop, and a matmul split across threads waits for a time slice when the other
cores are busy: the server runs NumPy on one BLAS thread (`Settings.blas_threads`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterator
from typing import Any

log = logging.getLogger(__name__)


def _threadpool_limits(n: int) -> Any | None:
    """threadpoolctl's limiter, holding BLAS to `n` threads until it is restored; None without threadpoolctl."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        log.warning("NumPy is already loaded and threadpoolctl is missing: BLAS threads stay as they are")
        return None
    return threadpool_limits(n, user_api="blas")


def limit_blas_threads(n: int | None) -> str:
    """Hold BLAS (NumPy's OpenBLAS) to `n` threads for the rest of the process (None or 0: leave
    it); returns how: "environment" (NumPy not loaded yet; a variable the user set wins),
    "threadpoolctl", or "unchanged"."""
    if not n or n <= 0:
        return "unchanged"
    if "numpy" not in sys.modules:
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(var, str(n))
        return "environment"
    return "unchanged" if _threadpool_limits(n) is None else "threadpoolctl"


@contextlib.contextmanager
def blas_threads_limited(n: int | None) -> Iterator[str]:
    """`limit_blas_threads` for the length of a block (NumPy loaded: through threadpoolctl), the
    previous limits restored after it; for a library call that must leave its caller's process
    as it found it (`corrige bench model` run from a test or a notebook)."""
    limiter = _threadpool_limits(n) if n and n > 0 else None
    try:
        yield "unchanged" if limiter is None else "threadpoolctl"
    finally:
        if limiter is not None:
            limiter.restore_original_limits()
