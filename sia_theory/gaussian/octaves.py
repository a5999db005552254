"""The octave grid ``t = 2^k`` and the convergence decision on octave sums (SI Defs. 3.1–3.2).

The octave sums themselves are :func:`sia_theory.gaussian.closed_forms.octave_closed_forms`;
this module only decides, from a sequence ``x_k``, whether it converges (numpy only).
"""

from __future__ import annotations

import math

import numpy as np

from .._infra.validate import check_int

__all__ = ["octave_starts", "convergence", "CONVERGENCE_RTOL", "CONVERGENCE_ATOL"]

CONVERGENCE_RTOL = 1e-3
"""Octave sums converge when each of the last octave steps changes by at most this, relative (SI
Defs. 3.1–3.2)."""
CONVERGENCE_ATOL = 1e-9
"""The absolute floor of the convergence test."""


def octave_starts(t_max: int = 2**20, t_min: int = 1) -> np.ndarray:
    r""":math:`t = 2^k` from ``t_min`` (rounded up to a power of 2) to ``t_max``.

    Parameters
    ----------
    t_max, t_min : int
        ``1 <= t_min <= t_max``.

    Returns
    -------
    numpy.ndarray
        int64.

    Raises
    ------
    ValueError
        If ``t_min < 1`` or ``t_max < t_min``.

    Examples
    --------
    >>> octave_starts(100, 3).tolist()
    [4, 8, 16, 32, 64]
    """
    k0 = math.ceil(math.log2(check_int("t_min", t_min, lo=1)))
    k1 = math.floor(math.log2(check_int("t_max", t_max, lo=t_min)))
    return 2 ** np.arange(k0, k1 + 1, dtype=np.int64)


def convergence(values, last: int = 3, rtol: float = CONVERGENCE_RTOL,
                atol: float = CONVERGENCE_ATOL) -> tuple[str, float | None]:
    r"""Decide from a sequence ``x_k`` (octave sums, ``k`` increasing) whether it converges.

    ``"converges"`` (limit ``x_K``) if each of the ``last`` steps satisfies
    ``|x_k − x_{k−1}| <= rtol·|x_k| + atol``; else ``"diverges"`` if the steps do not shrink
    (``|x_K − x_{K−1}| >= 0.9·|x_{K−3} − x_{K−4}|``: no geometric approach), or if the values
    are not finite; else ``"undecided"`` (shrinking but not yet within tolerance at
    :math:`t = 2^{20}`).

    Parameters
    ----------
    values : array_like
        At least ``last + 4`` values.
    last : int
    rtol, atol : float

    Returns
    -------
    status : str
    limit : float or None

    Raises
    ------
    ValueError
        If ``values`` holds fewer than ``last + 4`` values.
    """
    x = np.asarray(values, dtype=np.float64)
    if x.size < last + 4:
        raise ValueError(f"values must hold at least {last + 4} octaves, got {x.size}")
    if not np.all(np.isfinite(x)):
        return "diverges", None
    steps = np.abs(np.diff(x))
    if np.all(steps[-last:] <= rtol * np.abs(x[-last:]) + atol):
        return "converges", float(x[-1])
    if steps[-1] >= 0.9 * steps[-4]:
        return "diverges", None
    return "undecided", None
