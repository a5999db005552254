"""Parameter grids shared by the studies and figures."""

from __future__ import annotations

import numpy as np

from .memory import check_memory
from .validate import check_int

__all__ = ["log_spaced_integers"]


def log_spaced_integers(start, stop, count) -> np.ndarray:
    """``count`` roughly log-spaced distinct integers from ``start`` to ``stop`` inclusive."""
    start, stop = check_int("start", start, lo=1), check_int("stop", stop, lo=1)
    count = check_int("count", count, lo=1)
    check_memory("count", count, 32 * count)
    if stop < start:
        raise ValueError(f"stop must be >= start = {start}, got {stop}")
    return np.unique(np.round(np.geomspace(start, stop, count)).astype(np.int64))
