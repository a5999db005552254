"""Entropy-in-range scaling studies (SI Fig. 2 and Fig. 6, claims SI-7 and SI-8).

``E[H_t^{tΔ}]`` is estimated by Monte Carlo for a grid of ``t`` and ``Δ`` in one simulation
(every range is read off the same pass over the tokens), then fitted against ``log t`` and
``sqrt(log t)``: logarithmic growth means no scale-invariant sparsity, sub-logarithmic growth
(``o(log t)``) is the weak form (SI Def. 3.3), bounded growth the strong form (Def. 3.4).
The studies with their settings (what Fig. 2 / Fig. 6 and the claims run) are in
:mod:`sia_theory.studies.si_entropy_scaling`; this module holds the building blocks.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._infra.docstrings import shared_parameters
from .._infra.grids import log_spaced_integers
from .._infra.memory import check_memory
from .._infra.stats import mean_se
from .._infra.validate import check_finite_array, check_int
from ..transforms import Transform, declared_dependence
from ._parameters import MONTE_CARLO
from .closed_forms import plug_in_entropy
from .montecarlo import simulate_gaussian_range_statistics, simulation_memory

__all__ = ["entropy_in_range_scaling", "entropy_in_range_samples", "entropy_table",
           "fit_growth_laws", "GROWTH_LAWS", "log_spaced_integers"]

# Each law maps t to the regressor x(t) of a straight-line fit H ≈ slope·x(t) + intercept.
GROWTH_LAWS = {"log t": np.log, "sqrt(log t)": lambda t: np.sqrt(np.log(t))}
"""Law name → regressor ``x(t)`` of the straight-line fit ``H ≈ slope·x(t) + intercept``."""


def _as_list(name: str, values) -> list:
    """A scalar or a sequence as a flat list (strings and mappings are not sequences here)."""
    if isinstance(values, str | bytes | dict):
        raise ValueError(f"{name} must be an integer or a sequence of integers, got {values!r}")
    try:
        return np.atleast_1d(np.asarray(values, dtype=object)).ravel().tolist()
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an integer or a sequence of integers, got {values!r}"
                         ) from None


def _check_grid(transform: Transform, t_values, deltas):
    if "context" in declared_dependence(transform):
        raise ValueError(f"transform must have coefficients that do not depend on the context "
                         f"length ('context' not in depends_on), got {transform!r}")
    t_values = np.asarray([check_int("t_values", t, lo=1)
                           for t in _as_list("t_values", t_values)], dtype=np.int64)
    if t_values.size == 0:
        raise ValueError("t_values must contain at least one distance t >= 1")
    deltas = [check_int("deltas", d, lo=2) for d in _as_list("deltas", deltas)]
    if not deltas:
        raise ValueError("deltas must contain at least one range ratio delta >= 2")
    return t_values, deltas, [(int(t), int(t) * d) for d in deltas for t in t_values]


def entropy_table(transform: Transform, t_values, deltas, h) -> pd.DataFrame:
    """The ``table`` of :func:`entropy_in_range_samples` from per-sample entropies.

    Parameters
    ----------
    transform, t_values, deltas
        As for :func:`entropy_in_range_samples`.
    h : numpy.ndarray
        ``(samples, len(deltas), len(t_values))`` (e.g. blocks of samples concatenated in order).

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    ValueError
        If the grid is out of range or ``h`` has another shape.
    """
    t_values, deltas, ranges = _check_grid(transform, t_values, deltas)
    h = np.ascontiguousarray(h, dtype=np.float64)
    if h.ndim != 3 or h.shape[1:] != (len(deltas), len(t_values)):
        raise ValueError(f"h must be (samples, {len(deltas)}, {len(t_values)}), got {h.shape}")
    pairs = np.asarray(ranges, dtype=np.int64)  # (R, 2)
    mean, se = mean_se(h.reshape(h.shape[0], -1))  # (R,), (R,)
    return pd.DataFrame({
        "delta": [d for d in deltas for _ in t_values], "t": pairs[:, 0], "t1": pairs[:, 0],
        "t2": pairs[:, 1], "H_mean": mean, "H_se": se,
        "samples": np.full(len(ranges), h.shape[0], dtype=np.int64),
        "H_plug_in": [plug_in_entropy(transform, t1, t2) for t1, t2 in ranges]})


@shared_parameters(MONTE_CARLO)
def entropy_in_range_samples(transform: Transform, t_values, deltas=(2, 5, 10), *,
                             samples: int, seed: int, first_sample: int = 0):
    """Per-sample entropies in range and their summary, for every ``t`` and ``Δ``.

    One Gaussian-logit simulation with ``n_ctx = max(t)·max(Δ)`` covers all ranges; entropy in
    a range depends only on the logits inside it, so for transforms that do not depend on the
    context length the ``n_ctx`` does not matter.

    Parameters
    ----------
    transform : Transform
        Not depending on the context (``"context"`` not in ``depends_on``: for LogN the answer
        would depend on the arbitrary ``n_ctx`` of the grid).
    t_values : int or sequence of int
        Range starts ``t >= 1``.
    deltas : int or sequence of int
        Range ratios ``Δ >= 2``.
    {samples, seed}
    first_sample : int
        Index of the first sample (blocks of one run concatenate in order).

    Returns
    -------
    table : pandas.DataFrame
        Columns ``delta, t, t1, t2, H_mean, H_se, samples, H_plug_in`` (the last the
        closed-form law-of-large-numbers value
        :func:`~sia_theory.gaussian.closed_forms.plug_in_entropy`).
    h : numpy.ndarray
        The per-sample entropy, ``(samples, len(deltas), len(t_values))``.

    Raises
    ------
    ValueError
        If the transform depends on the context, a grid value or ``samples`` is out of range, or
        the simulation would not fit in memory.
    """
    t_values, deltas, ranges = _check_grid(transform, t_values, deltas)
    n_ctx = int(t_values.max()) * max(deltas)
    samples = check_int("samples", samples, lo=2)
    n_ranges = len(ranges)
    check_memory("t_values/deltas", f"(max {int(t_values.max())}, max {max(deltas)})",
                 simulation_memory(n_ctx, 2, n_ranges))
    check_memory("samples", samples, simulation_memory(n_ctx, samples, n_ranges))
    stats = simulate_gaussian_range_statistics(transform, n_ctx, ranges, samples, seed,
                                               first_sample=first_sample)
    h = stats.H.reshape(stats.rows, len(deltas), len(t_values))  # (samples, deltas, t)
    return entropy_table(transform, t_values, deltas, h), h


@shared_parameters(MONTE_CARLO)
def entropy_in_range_scaling(transform: Transform, t_values, deltas=(2, 5, 10), *,
                             samples: int, seed: int = 0) -> pd.DataFrame:
    """``E[H_t^{tΔ}]`` (mean, standard error) for every ``t`` in ``t_values`` and ``Δ``: the
    ``table`` of :func:`entropy_in_range_samples`.

    Parameters
    ----------
    transform : Transform
        The scheme; its coefficients must not depend on the context length.
    t_values : int or sequence of int
        Range starts ``t >= 1`` (distances from the query).
    deltas : int or sequence of int
        Range ratios ``Δ >= 2``: the range is ``[t, tΔ)``.
    {samples, seed}

    Returns
    -------
    pandas.DataFrame
        One row per ``(Δ, t)``: ``delta, t, t1, t2, H_mean, H_se, samples, H_plug_in``.

    Raises
    ------
    ValueError
        If the transform depends on the context length, a ``t < 1``, a ``Δ < 2``, either grid
        is empty, ``samples < 2``, ``seed`` is out of range, or the simulation would not fit in
        memory.

    Examples
    --------
    >>> from sia_theory import NoScale, entropy_in_range_scaling
    >>> table = entropy_in_range_scaling(NoScale(), [10, 100], [2], samples=200, seed=0)
    >>> table[["t1", "t2", "H_mean", "H_plug_in"]].round(3)  # plug-in: log(t2 − t1) − 1/2
        t1   t2  H_mean  H_plug_in
    0   10   20   1.892      1.803
    1  100  200   4.108      4.105
    """
    return entropy_in_range_samples(transform, t_values, deltas, samples=samples, seed=seed)[0]


def fit_growth_laws(table: pd.DataFrame) -> pd.DataFrame:
    """Least-squares line of ``H_mean`` against each of :data:`GROWTH_LAWS`, per ``Δ``.

    Parameters
    ----------
    table : pandas.DataFrame
        Columns ``delta`` (integers ``>= 2``), ``t`` (finite, ``>= 1``: both laws need
        ``log t >= 0``) and ``H_mean`` (finite), with at least 3 distinct ``t`` per ``delta``
        (e.g. :func:`entropy_in_range_scaling`'s).

    Returns
    -------
    pandas.DataFrame
        Columns ``delta, law, slope, intercept, r2``, one row per ``delta`` and law; ``r2`` is 1
        for a constant ``H_mean`` (the fitted line, of slope 0, is exact).

    Raises
    ------
    ValueError
        If ``table`` is not a DataFrame, lacks a column, is empty, holds a value outside the
        ranges above, or has fewer than 3 distinct ``t`` for some ``delta``.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sia_theory import fit_growth_laws
    >>> t = np.array([10.0, 100.0, 1000.0])
    >>> fits = fit_growth_laws(pd.DataFrame({"delta": 2, "t": t, "H_mean": 0.5 * np.log(t) + 1}))
    >>> fits.round(6)  # an exact log-law: slope 0.5, intercept 1, r2 = 1
       delta          law     slope  intercept        r2
    0      2        log t  0.500000   1.000000  1.000000
    1      2  sqrt(log t)  2.060937  -1.019649  0.994256
    """
    if not isinstance(table, pd.DataFrame):
        raise ValueError(f"table must be a pandas DataFrame, got {type(table).__name__}")
    missing = {"delta", "t", "H_mean"} - set(table.columns)
    if missing:
        raise ValueError(f"table must have the columns delta, t, H_mean; missing {sorted(missing)}")
    if len(table) == 0:
        raise ValueError("table must have at least one row")
    check_finite_array("table['delta']", table["delta"].to_numpy(), lo=2, integer=True)
    check_finite_array("table['t']", table["t"].to_numpy(), lo=1)
    check_finite_array("table['H_mean']", table["H_mean"].to_numpy())
    rows = []
    for delta, group in table.groupby("delta", sort=True):
        if group["t"].nunique() < 3:
            raise ValueError(f"table must have at least 3 distinct t per delta for a fit, "
                             f"got {group['t'].nunique()} for delta={delta}")
        t = group["t"].to_numpy(dtype=float)
        y = group["H_mean"].to_numpy(dtype=float)
        for law, regressor in GROWTH_LAWS.items():
            x = regressor(t)
            slope, intercept = np.polyfit(x, y, 1)
            residual = y - (slope * x + intercept)
            spread = np.sum((y - y.mean()) ** 2)
            r2 = 1.0 - residual @ residual / spread if spread > 0 else 1.0
            rows.append({"delta": int(delta), "law": law, "slope": slope,
                         "intercept": intercept, "r2": r2})
    return pd.DataFrame(rows)
