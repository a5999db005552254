r"""Where the collapse → preservation transition of one CAS layer happens on near-simplex tokens
(CAS near-simplex theorem, claims CAS-4 and CAS-5).

For one token draw the output cosine after one layer, ``c(β)``, falls from 1 (``β = 0``: every
token becomes the mean) to the realised cosine ``ρ̄`` (``β → ∞``: every token keeps itself).
``β_ℓ`` is the ``β`` at which ``c(β) = ρ̄ + ℓ(1 − ρ̄)``, found by root bracketing (``ℓ = ½``: the
midpoint ``β₅₀``), and ``β_½`` the ``β`` at which the mean self weight ``A_ii`` is ½.

**Near-simplex window.** Let ``ρ₁ ≤ ⟨y_i, y_j⟩ ≤ ρ₂`` for the measured queries ``i`` and all keys
``j ≠ i``. The self weight is ``A_ii = 1/(1 + Σ_{j≠i} e^{−β(1−⟨y_i,y_j⟩)})``, and each of the
``n − 1`` terms lies between ``e^{−β(1−ρ₁)}`` and ``e^{−β(1−ρ₂)}``, so

    1/(1 + (n−1)e^{−β(1−ρ₂)}) ≤ A_ii ≤ 1/(1 + (n−1)e^{−β(1−ρ₁)}),

and the mean self weight reaches any level ``w`` inside the window
``[(log(n−1) + logit w)/(1−ρ₁), (log(n−1) + logit w)/(1−ρ₂)]`` (rigorous; ``w = ½`` gives
``[log(n−1)/(1−ρ₁), log(n−1)/(1−ρ₂)]``, the exact simplex has ``ρ₁ = ρ₂`` and a single point).
The norms ``q₁ ≤ |x_i|² ≤ q₂`` do not enter without residual (:math:`\alpha = 0`: the layer sees
only directions). On the exact simplex ``c = ρ/(ρ + (1−ρ)w²)``, so the cosine midpoint is the self
weight ``w₅₀ = √(ρ/(1+ρ))``; the cosine window uses that level at the realised ``ρ̄`` (an
approximation: off the simplex the cosine is not a function of the self weight alone). The window is
informative only when ``ρ₁ > 0`` (near-simplex); its width is ``(1−ρ₁)/(1−ρ₂)``.

Cost: the queries are the first ``m`` rows (tokens are exchangeable, so these are a uniform
sample), and each evaluation of ``c(β)`` is ``O(m n d)``; memory ``O(m n)``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.optimize import brentq

from .._infra.memory import check_memory
from .._infra.parallel import parallel_map, single_threaded_blas, worker_count
from .._infra.seeding import check_seed
from .._infra.validate import check_finite_array, check_int, check_real
from .dynamics import softmax_from_gram
from .tokens import check_max_bytes, normalise_rows, sample_tokens, token_memory, token_rng

__all__ = ["transition_draw", "transition_draws", "near_simplex_window", "TRANSITION_STUDY"]

TRANSITION_STUDY = "cas.transition"
"""The study key of the transition draws (their random streams are keyed by it)."""


def near_simplex_window(n, rho1, rho2, level=0.5):
    """``(β_low, β_high)``: the ``β`` range in which the mean self weight of tokens with pairwise
    cosines in ``[ρ₁, ρ₂]`` reaches ``level`` (see the module docstring).

    Parameters
    ----------
    n : float or array_like
        ``>= 2``.
    rho1, rho2 : float or array_like
        Cosines in ``[-1, 1]``.
    level : float or array_like
        A self weight in ``(0, 1)``.

    Returns
    -------
    beta_low, beta_high : float or numpy.ndarray

    Raises
    ------
    ValueError
        If an argument is out of range.
    """
    n = check_finite_array("n", n, dtype=np.float64, min_size=1)
    if np.min(n) < 2:
        raise ValueError(f"n must be >= 2, got min {float(np.min(n))!r}")
    rho1 = check_finite_array("rho1", rho1, dtype=np.float64, min_size=1)
    rho2 = check_finite_array("rho2", rho2, dtype=np.float64, min_size=1)
    for name, value in (("rho1", rho1), ("rho2", rho2)):
        if np.min(value) < -1 - 1e-9 or np.max(value) > 1 + 1e-9:  # rounding of a cosine
            raise ValueError(f"{name} must lie in [-1, 1] (a cosine), got {value!r}")
    level = check_finite_array("level", level, dtype=np.float64, min_size=1)
    if np.min(level) <= 0 or np.max(level) >= 1:
        raise ValueError(f"level must lie in (0, 1) (a self weight), got {level!r}")
    shift = np.log(n - 1.0) + np.log(level / (1.0 - level))
    with np.errstate(divide="ignore"):  # ρ₂ = 1 (a repeated direction): no upper bound
        return shift / (1.0 - np.asarray(rho1)), shift / (1.0 - np.asarray(rho2))


def _cosine_of_rows(O: np.ndarray) -> float:
    """Mean off-diagonal cosine of the rows of ``O`` (``O(md)``)."""
    U, _ = normalise_rows(O, "outputs")
    m = U.shape[0]
    total = U.sum(axis=0)  # (d,)
    return float((np.sum(total * total) - m) / (m * (m - 1)))


def _root(fn, guess: float, rtol: float) -> float:
    """Root of a decreasing ``fn`` bracketed geometrically around ``guess`` (``nan`` if none in
    ``[guess/1e4, guess·1e3]``)."""
    lo, hi = guess / 2, guess * 2
    f_lo, f_hi = fn(lo), fn(hi)
    while f_lo < 0 and lo > guess / 1e4:
        hi, f_hi = lo, f_lo
        lo /= 4
        f_lo = fn(lo)
    while f_hi > 0 and hi < guess * 1e3:
        lo, f_lo = hi, f_hi
        hi *= 4
        f_hi = fn(hi)
    if not (f_lo >= 0 >= f_hi):
        return float("nan")
    return float(np.exp(brentq(lambda t: fn(np.exp(t)), np.log(lo), np.log(hi),
                               xtol=rtol)))


def draw_memory(n: int, d: int, queries: int) -> int:
    """Bytes of working memory of one :func:`transition_draw`: the tokens and four
    ``(queries, n)`` arrays (Gram rows, a copy, scores, weights)."""
    return token_memory(n, d) + 8 * 4 * queries * n


def transition_draw(*, n, d, rho, seed, draw, queries=1024, levels=(0.5,), rtol=1e-3,
                    study=TRANSITION_STUDY, max_bytes=None) -> dict:
    """One Gaussian near-simplex draw (``token_rng(seed, study, n, d, draw)``) and its transition
    (module docstring).

    Parameters
    ----------
    n : int
        Tokens, ``>= 3``.
    d : int
        Width, ``>= 1``.
    rho : float
        Nominal cosine, in ``(0, 1)``.
    seed, draw : int
        The draw's stream.
    queries : int
        Query rows used, ``>= 2`` (at most ``n``).
    levels : sequence of float
        Levels in ``(0, 1)`` of the output cosine's crossings.
    rtol : float
        Relative tolerance of the root finding, in ``(0, 1)``.
    study : str
        The stream's name.
    max_bytes : int, optional
        Working-memory limit (default: the memory available).

    Returns
    -------
    dict
        The realised cosine, ``ρ₁, ρ₂``, the crossings ``β_ℓ`` (``beta_50`` …), the
        self-weight-½ point ``β_½`` and the near-simplex windows.

    Raises
    ------
    ValueError
        Naming the argument that is out of range, or if the draw would not fit in memory.
    """
    n, d, draw = check_int("n", n, 3), check_int("d", d, 1), check_int("draw", draw, 0)
    rho = check_real("rho", rho, 0.0, 1.0, lo_open=True, hi_open=True)
    queries = min(check_int("queries", queries, 2), n)
    levels = check_finite_array("levels", levels, ndim=1, dtype=np.float64, min_size=1)
    if np.min(levels) <= 0 or np.max(levels) >= 1:
        raise ValueError(f"levels must lie in (0, 1), got {levels.tolist()!r}")
    rtol = check_real("rtol", rtol, 0.0, 1.0, lo_open=True, hi_open=True)
    check_memory("n", n, draw_memory(n, d, queries), check_max_bytes(max_bytes))
    X = sample_tokens(n=n, d=d, rho=rho, rng=token_rng(check_seed(seed), study, n, d, draw),
                      max_bytes=2**62)  # checked above, with the draw's own arrays
    Y, _ = normalise_rows(X)  # (n, d)
    m = queries
    with single_threaded_blas():
        G = Y[:m] @ Y.T  # (m, n)
    before = _cosine_of_rows(Y[:m])
    off = G.copy()
    off[np.arange(m), np.arange(m)] = np.nan
    rho1, rho2 = float(np.nanmin(off)), float(np.nanmax(off))
    del off

    def cos_after(beta: float) -> float:
        with single_threaded_blas():
            O = softmax_from_gram(G, beta) @ Y  # (m, d)
        return _cosine_of_rows(O)

    def self_weight(beta: float) -> float:
        S = beta * (G - 1.0)  # (m, n); the self score is the row maximum (0)
        np.exp(S, out=S)
        return float(np.mean(1.0 / S.sum(axis=1)))

    guess = np.log(n - 1.0) / (1.0 - before) if before < 1 else np.log(n)
    row = {"n": n, "d": d, "rho": rho, "draw": draw, "queries": m, "rho_mean": before,
           "rho_min": rho1, "rho_max": rho2}
    for level in levels:
        target = before + level * (1.0 - before)
        row[f"beta_{round(100 * level)}"] = _root(lambda b, t=target: cos_after(b) - t, guess,
                                                  rtol)
    row["beta_half_self_weight"] = _root(lambda b: 0.5 - self_weight(b), guess, rtol)
    row["window_self_low"], row["window_self_high"] = near_simplex_window(n, rho1, rho2)
    w50 = np.sqrt(before / (1.0 + before)) if before > 0 else None
    row["window_cos_low"], row["window_cos_high"] = (
        near_simplex_window(n, rho1, rho2, w50) if before > 0 else (float("nan"),) * 2)
    return row


def transition_draws(*, ns, d, rho, seed, draws, queries=1024, levels=(0.5,), rtol=1e-3,
                     study=TRANSITION_STUDY, max_bytes=None) -> pd.DataFrame:
    """:func:`transition_draw` for every ``n`` in ``ns`` and ``draws`` draws each (independent
    tasks on the worker threads). The working memory of the concurrent draws is checked first.

    Parameters
    ----------
    ns : sequence of int
        Token counts in ``[3, 2**62]``.
    draws : int
        Draws per ``n``, ``1 … 10**7``.
    d, rho, seed, queries, levels, rtol, study, max_bytes
        As for :func:`transition_draw`.

    Returns
    -------
    pandas.DataFrame
        One row per draw, with ``log_n = log n``.

    Raises
    ------
    ValueError
        Naming the argument that is out of range, or if the draws would not fit in memory.
    """
    ns = check_finite_array("ns", ns, ndim=1, lo=3, integer=True, min_size=1)
    if np.max(ns) > 2**62:
        raise ValueError(f"ns must contain integers <= 2**62, got max {np.max(ns)!r}")
    draws = check_int("draws", draws, 1, hi=10**7)
    d, queries = check_int("d", d, 1), check_int("queries", queries, 2)
    largest = int(np.max(ns))
    check_memory("ns", largest, min(worker_count(), ns.size * draws)
                 * draw_memory(largest, d, min(queries, largest)), check_max_bytes(max_bytes))
    tasks = [(int(n), k) for n in ns for k in range(draws)]
    rows = parallel_map(lambda t: transition_draw(n=t[0], d=d, rho=rho, seed=seed, draw=t[1],
                                                  queries=queries, levels=levels, rtol=rtol,
                                                  study=study, max_bytes=2**62), tasks)
    frame = pd.DataFrame(rows)
    frame["log_n"] = np.log(frame["n"])
    return frame
