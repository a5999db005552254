"""Parameter grids shared by the studies and figures."""

from __future__ import annotations

import numpy as np

from .memory import check_memory
from .validate import check_int

__all__ = ["log_spaced_integers"]


def log_spaced_integers(start, stop, count) -> np.ndarray:
    """``count`` roughly log-spaced distinct integers from ``start`` to ``stop`` inclusive.

    Parameters
    ----------
    start, stop : int
        ``1 <= start <= stop``.
    count : int
        ``>= 1`` (fewer come back where rounding makes two equal).

    Returns
    -------
    numpy.ndarray
        int64, increasing.

    Raises
    ------
    ValueError
        If an argument is out of range.

    Examples
    --------
    >>> log_spaced_integers(1, 1000, 4).tolist()
    [1, 10, 100, 1000]
    """
    start, stop = check_int("start", start, lo=1), check_int("stop", stop, lo=1)
    count = check_int("count", count, lo=1)
    check_memory("count", count, 32 * count)
    if stop < start:
        raise ValueError(f"stop must be >= start = {start}, got {stop}")
    return np.unique(np.round(np.geomspace(start, stop, count)).astype(np.int64))
