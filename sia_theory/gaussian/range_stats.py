"""Range statistics of given logits (SI eq. 6–8): ``Z, N, H``, ``mass`` and ``log Z`` per range.

Notation of SI eq. 6–8: for a row of logits ``L_t`` (``t`` = distance back from the query,
``t = 0 .. n-1``) and a range ``[t1, t2)``

* ``Z = Σ_{t1<=t<t2} e^{L_t}`` (total unnormalised attention),
* ``N = Σ e^{L_t} L_t`` (unnormalised negentropy),
* ``H = −N/Z + log Z`` (entropy of the attention restricted to the range),
* ``mass = Z / Z_{[0,n)}`` (share of the whole row's attention that falls in the range).

Entry points: :func:`range_statistics` (given logits, one numba pass per range),
:func:`summarize` (mean ± standard error over rows) and :func:`range_statistics_reference` (the
slow, obvious numpy oracle). :class:`RangeStatistics` holds the per-row results; the Gaussian
Monte Carlo (:mod:`sia_theory.gaussian.montecarlo`) produces it too, through the range plan
helpers here (:func:`check_range_pairs`, :func:`segment_plan`, :func:`with_total`,
:func:`as_statistics`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._infra.memory import check_memory
from .._infra.stats import mean_se
from .._infra.validate import check_finite_array
from . import _kernels as kernels
from .closed_forms import check_range

__all__ = [
    "RangeStatistics",
    "range_statistics",
    "summarize",
    "range_statistics_reference",
    "check_range_pairs",
    "segment_plan",
    "with_total",
    "as_statistics",
]

SUMMARY_COLUMNS = ["t1", "t2", "Z_mean", "Z_se", "N_mean", "N_se", "H_mean", "H_se",
                   "mass_mean", "mass_se", "log_Z_mean", "log_Z_se", "samples"]
_QUANTITIES = ("Z", "N", "H", "mass", "log_Z")


@dataclass(frozen=True)
class RangeStatistics:
    """Per-row range statistics, each array shaped ``(rows, n_ranges)``.

    ``Z`` and ``N`` are the unshifted sums, so they overflow to ``inf`` once a logit exceeds
    ~709; ``log_Z`` never overflows, and ``H`` and ``mass`` are computed from sums shifted by the
    largest logit, so they stay accurate for logits of magnitude 1e4 and far beyond.

    Parameters
    ----------
    Z, N, H, mass, log_Z : numpy.ndarray
        2-D float64 arrays of one shape ``(rows, n_ranges)``.

    Raises
    ------
    ValueError
        If a field is not a 2-D float64 array or the shapes differ.

    Examples
    --------
    >>> import numpy as np
    >>> from sia_theory import RangeStatistics
    >>> one = np.ones((1, 1))
    >>> RangeStatistics(Z=one, N=0 * one, H=0 * one, mass=one, log_Z=0 * one).rows
    1
    """

    Z: np.ndarray
    N: np.ndarray
    H: np.ndarray
    mass: np.ndarray
    log_Z: np.ndarray

    def __post_init__(self):
        shape = None
        for name in ("Z", "N", "H", "mass", "log_Z"):
            value = getattr(self, name)
            if not isinstance(value, np.ndarray) or value.dtype != np.float64 or value.ndim != 2:
                raise ValueError(f"RangeStatistics.{name} must be a 2-D float64 array (rows, "
                                 f"ranges), got {type(value).__name__} "
                                 f"{getattr(value, 'shape', '')}")
            if shape is not None and value.shape != shape:
                raise ValueError(f"RangeStatistics.{name} must have the shape of Z {shape}, got "
                                 f"{value.shape}")
            shape = value.shape

    @property
    def rows(self) -> int:
        """The number of samples (rows)."""
        return self.Z.shape[0]


def check_range_pairs(ranges, n_ctx: int, *, allow_empty=False) -> np.ndarray:
    """``ranges`` as an ``(R, 2)`` int64 array of valid ``[t1, t2)`` with ``t2 <= n_ctx``.

    Parameters
    ----------
    ranges : sequence of (t1, t2)
        Distance ranges, ``0 <= t1 < t2 <= n_ctx``.
    n_ctx : int
        The row length (keys the query sees).
    allow_empty : bool
        Whether an empty ``ranges`` is accepted (an ``(0, 2)`` array).

    Returns
    -------
    numpy.ndarray
        ``(R, 2)`` int64.

    Raises
    ------
    ValueError
        Naming ``ranges`` (and the offending pair) if a pair is malformed or out of range, or
        ``ranges`` is empty and ``allow_empty`` is false.

    Examples
    --------
    >>> from sia_theory.gaussian.range_stats import check_range_pairs
    >>> check_range_pairs([(0, 2), (1, 4)], 4).tolist()
    [[0, 2], [1, 4]]
    """
    try:
        pairs = list(ranges)
    except TypeError:
        raise ValueError(f"ranges must be a sequence of (t1, t2) pairs, got {ranges!r}") from None
    if not pairs and not allow_empty:
        raise ValueError("ranges must contain at least one (t1, t2) pair")
    out = np.empty((len(pairs), 2), dtype=np.int64)
    for i, pair in enumerate(pairs):
        try:
            t1, t2 = pair
        except (TypeError, ValueError):
            raise ValueError(f"ranges[{i}] must be a (t1, t2) pair, got {pair!r}") from None
        try:
            out[i] = check_range(t1, t2, n_ctx)[:2]
        except ValueError as err:
            raise ValueError(f"ranges[{i}] = {tuple(pair)!r} must satisfy 0 <= t1 < t2 <= "
                             f"{n_ctx} (n_ctx): {err}") from None
    return out


def segment_plan(ranges: np.ndarray, n: int):
    """Sorted unique boundaries (segments ``[b_s, b_{s+1})``) and each range's segment span, the
    plan the numba kernels take.

    Parameters
    ----------
    ranges : numpy.ndarray
        Validated ``(R, 2)`` pairs.
    n : int
        The row's length.

    Returns
    -------
    bounds, first_seg, stop_seg : numpy.ndarray
        int64.
    """
    bounds = np.unique(np.concatenate([[0, n], ranges.ravel()])).astype(np.int64)
    first_seg = np.searchsorted(bounds, ranges[:, 0]).astype(np.int64)
    stop_seg = np.searchsorted(bounds, ranges[:, 1]).astype(np.int64)
    return bounds, first_seg, stop_seg


def with_total(ranges: np.ndarray, n: int):
    """The whole row ``[0, n)`` appended to ``ranges``, and every range's mass pointed at it.

    Parameters
    ----------
    ranges : numpy.ndarray
        ``(R, 2)`` pairs.
    n : int

    Returns
    -------
    ranges : numpy.ndarray
        ``(R + 1, 2)``.
    mass_ref : numpy.ndarray
        int64 ``(R + 1,)``, each entry the index of the appended row.
    """
    full = np.vstack([ranges, [[0, n]]]).astype(np.int64)
    mass_ref = np.full(len(full), len(ranges), dtype=np.int64)
    return full, mass_ref


def as_statistics(arrays, keep: int | None = None) -> RangeStatistics:
    """A :class:`RangeStatistics` of the five kernel outputs, each made contiguous.

    Parameters
    ----------
    arrays : sequence of numpy.ndarray
        ``(Z, N, H, mass, log_Z)``.
    keep : int, optional
        Only the first ``keep`` columns (ranges).

    Returns
    -------
    RangeStatistics
    """
    if keep is not None:
        arrays = [x[:, :keep] for x in arrays]
    return RangeStatistics(*(np.ascontiguousarray(x) for x in arrays))


def range_statistics(logits, ranges) -> RangeStatistics:
    """``Z, N, H`` (SI eq. 6–8), ``mass`` and ``log Z`` of each range, for each row of ``logits``.

    ``logits`` is ``(rows, n)``: column ``t`` is the logit of the key at distance ``t``. ``mass``
    is relative to the whole row ``[0, n)``. Sums are shifted by running maxima, so ``H``,
    ``mass`` and ``log_Z`` are accurate for logits of magnitude 1e4 and beyond (``Z`` and ``N``
    overflow to ``inf`` above ~709, see :class:`RangeStatistics`).

    Parameters
    ----------
    logits : array_like, shape (rows, n)
        Finite logits, ``n >= 1``.
    ranges : sequence of (t1, t2)
        Distance ranges, ``0 <= t1 < t2 <= n``.

    Returns
    -------
    RangeStatistics
        Arrays ``(rows, len(ranges))``.

    Raises
    ------
    ValueError
        If ``logits`` is not a finite 2-d array with a column, a range is invalid, or the
        output would not fit in memory.

    Examples
    --------
    >>> import numpy as np
    >>> from sia_theory import range_statistics
    >>> stats = range_statistics(np.zeros((1, 4)), [(0, 2), (0, 4)])  # uniform attention
    >>> stats.Z, stats.H.round(6), stats.mass  # H = log(t2 − t1)
    (array([[2., 4.]]), array([[0.693147, 1.386294]]), array([[0.5, 1. ]]))
    """
    logits = check_finite_array("logits", logits, ndim=2, dtype=np.float64)
    if logits.shape[1] < 1:
        raise ValueError("logits must have at least one column (n >= 1)")
    ranges = check_range_pairs(ranges, logits.shape[1])
    check_memory("ranges", f"<{len(ranges)} ranges>", 80 * logits.shape[0] * (len(ranges) + 1))
    full, mass_ref = with_total(ranges, logits.shape[1])
    bounds, first_seg, stop_seg = segment_plan(full, logits.shape[1])
    out = kernels.given_rows(np.ascontiguousarray(logits), bounds, first_seg, stop_seg, mass_ref)
    return as_statistics(out, keep=len(ranges))


def summarize(stats: RangeStatistics, ranges) -> pd.DataFrame:
    """One row per range: mean and standard error over rows of ``Z, N, H, mass, log_Z``.

    Parameters
    ----------
    stats : RangeStatistics
        At least one row.
    ranges : array_like, shape (n_ranges, 2)
        The ``(t1, t2)`` integer pairs of the columns of ``stats``, ``0 <= t1 < t2``.

    Returns
    -------
    pandas.DataFrame
        Columns ``t1, t2, Z_mean, Z_se, N_mean, N_se, H_mean, H_se, mass_mean, mass_se,
        log_Z_mean, log_Z_se, samples``.

    Raises
    ------
    ValueError
        If ``stats`` is not a RangeStatistics with a row, or ``ranges`` is not such pairs, one
        per column.

    Examples
    --------
    >>> import numpy as np
    >>> from sia_theory import range_statistics, summarize
    >>> logits = np.log([[1.0, 1.0], [3.0, 1.0]])  # Z of [0, 1): 1 and 3
    >>> summarize(range_statistics(logits, [(0, 1)]), [(0, 1)])[["Z_mean", "Z_se", "samples"]]
       Z_mean  Z_se  samples
    0     2.0   1.0        2
    """
    if not isinstance(stats, RangeStatistics):
        raise ValueError(f"stats must be a RangeStatistics, got {type(stats).__name__}")
    if stats.rows < 1:
        raise ValueError("stats must hold at least one row (sample) to summarise, got 0")
    ranges = check_finite_array("ranges", ranges, ndim=2, lo=0, integer=True)
    if ranges.shape[1] != 2 or np.any(ranges[:, 0] >= ranges[:, 1]) or np.any(
            ranges > np.iinfo(np.int64).max):
        raise ValueError(f"ranges must be (t1, t2) integer pairs with 0 <= t1 < t2, got "
                         f"{ranges.tolist()}")
    ranges = ranges.astype(np.int64)
    if len(ranges) != stats.Z.shape[1]:
        raise ValueError(f"ranges must have one pair per column of stats ({stats.Z.shape[1]}), "
                         f"got {len(ranges)}")
    table = {"t1": ranges[:, 0], "t2": ranges[:, 1]}
    for name in _QUANTITIES:
        table[f"{name}_mean"], table[f"{name}_se"] = mean_se(getattr(stats, name))
    table["samples"] = np.full(len(ranges), stats.rows, dtype=np.int64)
    return pd.DataFrame(table, columns=SUMMARY_COLUMNS)


def range_statistics_reference(logits, ranges) -> RangeStatistics:
    """Dense textbook version of :func:`range_statistics`: SI eq. 6–8 with no shift at all, so
    only valid for moderate logits (``|L| < ~700``); the oracle the kernel is tested against.

    Parameters
    ----------
    logits, ranges
        As for :func:`range_statistics`.

    Returns
    -------
    RangeStatistics

    Raises
    ------
    ValueError
        If ``logits`` is not a finite 2-D array or a range is out of bounds.
    """
    logits = check_finite_array("logits", logits, ndim=2, dtype=np.float64)  # (rows, n)
    ranges = check_range_pairs(ranges, logits.shape[1])
    weight = np.exp(logits)  # (rows, n)  Ã_t = e^{L_t}
    z = np.stack([weight[:, t1:t2].sum(axis=1) for t1, t2 in ranges], axis=1)  # (rows, R)
    n = np.stack([(weight[:, t1:t2] * logits[:, t1:t2]).sum(axis=1) for t1, t2 in ranges],
                 axis=1)  # (rows, R)
    total = weight.sum(axis=1, keepdims=True)  # (rows, 1)
    return RangeStatistics(Z=z, N=n, H=-n / z + np.log(z), mass=z / total, log_Z=np.log(z))

