"""The one mean ± standard-error estimator used for every Monte Carlo summary in the package."""

from __future__ import annotations

import numpy as np

__all__ = ["mean_se"]


def mean_se(values, axis: int = 0):
    """Mean and standard error ``std(ddof=1)/sqrt(count)`` along ``axis``.

    No values at all is a ``ValueError``. With one value the standard error is ``nan``: one
    draw says nothing about the spread, and an interval of 0 would claim an exact result.
    Scalars come back for 1-D input.
    """
    values = np.asarray(values, dtype=np.float64)
    count = values.shape[axis]
    if count == 0:  # a mean of nothing is not a number: say so instead of returning NaN
        raise ValueError("values must hold at least one value along the axis to average")
    mean = values.mean(axis=axis)
    if count > 1:
        se = values.std(axis=axis, ddof=1) / np.sqrt(count)
    else:
        se = np.full_like(mean, np.nan)
    if np.ndim(mean) == 0:
        return float(mean), float(se)
    return mean, se
