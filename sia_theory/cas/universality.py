r"""Universality classes of the critical scaling ``β₅₀ ∝ (log n)^k`` (claim EXT-4, THEORY.md §6).

**One order parameter for every class.** A query's attention weights ``p_j = softmax(β s)_j``
over ``n`` keys; the order parameter is the participation ``Y = Σ_j p_j²`` (Derrida's overlap
of the random energy model), averaged over queries, and ``β₅₀`` is the ``β`` at which it crosses
½ (:func:`beta50`). ``Y`` is ``1/n`` for uniform attention and 1 for one-hot attention; it needs no
self key, so it applies to iid scores and to tokens alike.

* **iid scores (REM).** For ``n`` iid ``N(0, 1)`` scores the weights above the maximum form a
  Poisson–Dirichlet point process with parameter ``m = a_n/β`` once ``β > a_n``, and
  ``E[Y] = 1 − m`` (Derrida 1981; Mézard, Parisi, Virasoro), so ``β₅₀ = 2a_n`` with ``a_n`` the
  location of the maximum,
  :math:`a_n = \sqrt{2 \log n} - (\log\log n + \log 4\pi)/(2\sqrt{2 \log n})`:
  ``β₅₀ → 2√(2 log n)``, ``k = ½``, approached from below as ``1 − (log log n + log 4π)/(4 log n)``.
  :func:`rem_participation` is the exact finite-``n`` ``E[Y]`` (one-dimensional quadrature, no
  sampling): ``E[Y] = n ∫ λ E[e^{2βs} e^{−λe^{βs}}] Φ(λ)^{n−1} dλ`` with ``Φ(λ) = E[e^{−λ e^{βs}}]``
  (from ``1/Z² = ∫₀^∞ λ e^{−λZ} dλ``).
* **simplex tokens** (self cosine 1, all others ``ρ``): ``A_ii = w = 1/(1 + (n−1)e^{−β(1−ρ)})``,
  :math:`Y = w^2 + (1-w)^2/(n-1)`, so
  :math:`\beta_{50} = (\log(n-1) + \operatorname{logit} w_{50})/(1-\rho)` with ``w₅₀`` the root of
  :math:`w^2 + (1-w)^2/(n-1) = \tfrac12` (→ ``1/√2``): ``k = 1`` (:func:`simplex_beta50`).
* **planted REM** (the spread of the cosines as a knob): self score 1, the others
  ``ρ + σξ_j`` iid. While ``σ·a_n < 1 − ρ`` the self key wins and ``β₅₀ ≈ (log n +
  ℓ)/(1 − ρ) + O(σ²)`` (simplex class); once ``σ·a_n > 1 − ρ`` the largest noisy key beats the
  self key and ``β₅₀ → 2a_n/σ`` (REM class): the class is set by ``σ√(2 log n)`` against ``1 − ρ``.
* **Gaussian near-simplex tokens** (CAS's ``√ρ z_0 + √(1−ρ) z_i`` in ``d`` dimensions): cosine
  spread ``≈ √((1−ρ)/d)``; measured.

Cost of one draw: ``O(m n d)`` for the Gram rows of ``m`` queries, then ``O(m n)`` per
evaluation of ``Y``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq

from .._infra.seeding import check_seed
from .._infra.validate import check_finite_array, check_int, check_real
from ..gaussian.phase import rem_max_location
from .tokens import normalise_rows, sample_tokens, token_rng

__all__ = ["participation", "beta50", "participation_beta50", "rem_participation", "rem_beta50",
           "rem_max_location", "simplex_participation", "simplex_beta50", "universality_draw",
           "CLASS_KINDS", "UNIVERSALITY_STUDY"]

UNIVERSALITY_STUDY = "cas.universality"
"""The study key of the universality draws (their random streams are keyed by it)."""
CLASS_KINDS = ("iid", "planted", "gaussian")
"""Score models of one draw: iid ``N(0, 1)`` scores, the planted REM (self 1, others
``ρ + σξ``), Gaussian near-simplex token cosines."""
BETA_RANGE = (1e-3, 1e12)  # bracket of β₅₀ (low d isolates a token only at β ∝ n^{2/(d−1)})


def participation(scores: np.ndarray, beta: float) -> float:
    r"""Mean over rows of ``Σ_j p_j²`` with
    :math:`p = \operatorname{softmax}(\beta\cdot\mathrm{row})`.

    Parameters
    ----------
    scores : array_like
        ``(m, n)``, finite.
    beta : float
        Finite, ``>= 0``.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``scores`` is not a finite 2-d array or ``beta`` is negative or not finite.

    Examples
    --------
    >>> import numpy as np
    >>> participation(np.zeros((2, 4)), 1.0)  # uniform weights: 4 · (1/4)²
    0.25
    """
    scores = check_finite_array("scores", scores, ndim=2, dtype=np.float64, min_size=1)
    return _participation(scores, check_real("beta", beta, 0.0))


def _participation(scores: np.ndarray, beta: float) -> float:
    """:func:`participation` without the checks (the root finding of :func:`beta50`)."""
    S = scores - scores.max(axis=1, keepdims=True)  # (m, n), <= 0
    with np.errstate(over="ignore"):
        S *= beta
    np.exp(S, out=S)
    Z = S.sum(axis=1)  # (m,)
    return float(np.mean(np.einsum("ij,ij->i", S, S) / (Z * Z)))


def beta50(scores, level: float = 0.5) -> float:
    """The ``β`` at which the mean participation of the rows of ``scores`` crosses ``level``
    (root in ``log β`` inside :data:`BETA_RANGE`; ``nan`` if it does not cross there).

    Parameters
    ----------
    scores : array_like, shape (m, n)
        Finite scores, one row per query.
    level : float
        Participation level, ``0 < level < 1``.

    Returns
    -------
    float
        ``β₅₀`` (``xtol = 1e-5`` in ``log β``), or ``nan``.

    Raises
    ------
    ValueError
        If ``scores`` is not a finite 2-d array or ``level`` is outside ``(0, 1)``.

    Examples
    --------
    >>> from sia_theory import participation_beta50
    >>> round(participation_beta50([[1.0, 0.0, 0.0]]), 4)  # w = 2/3 at e^β = 4: β = log 4
    1.3863
    """
    scores = check_finite_array("scores", scores, ndim=2, dtype=np.float64)
    level = check_real("level", level, 0.0, 1.0, lo_open=True, hi_open=True)
    lo, hi = (math.log(b) for b in BETA_RANGE)
    grid = np.linspace(lo, hi, 16)  # one decade per step
    prev = _participation(scores, math.exp(grid[0])) - level
    if prev > 0:
        return float("nan")
    for x0, x1 in zip(grid[:-1], grid[1:], strict=True):
        value = _participation(scores, math.exp(x1)) - level
        if value >= 0:
            return float(math.exp(brentq(lambda x: _participation(scores, math.exp(x)) - level,
                                         x0, x1, xtol=1e-5)))
        prev = value
    return float("nan")


participation_beta50 = beta50
"""Top-level name of :func:`beta50` (``sia_theory.participation_beta50``)."""


def rem_participation(beta, n, step: float = 0.02) -> float:
    r"""Exact ``E[Σ_j p_j²]`` for ``n`` iid ``N(0, 1)`` scores at inverse temperature ``β`` (module
    docstring). Trapezoid rule on a grid of spacing ``step`` in the score ``s`` and in
    :math:`u = -\log(\lambda)/\beta`; the integrands are smooth and decay fast at both ends, so the
    rule converges spectrally (``step = 0.02`` agrees with ``0.005`` to ``1e-9`` up to
    :math:`\beta = 23`, ``n = 1e30``). ``u`` runs to ``(log n + β²/2)/β + 8 + 18/β``: the
    integrand peaks near :math:`-\log\lambda = \log \mathbb E[Z]` and decays like
    :math:`\lambda^2 = e^{-2\beta u}` beyond it, so the range cut there leaves out less than
    :math:`e^{-36}` of the peak at any :math:`\beta` (a cut at ``+ 8`` alone lost 1.8 % at
    :math:`\beta = 0.2`, ``n = 100``, and 7.5 % at :math:`\beta = 0.1`). Its cost grows like
    :math:`1/\beta` (about 0.2 s at :math:`\beta = 0.1`).

    Parameters
    ----------
    beta : float
        Inverse temperature, ``> 0``.
    n : float
        Number of scores, ``>= 2`` (a float, up to ``1e300``).
    step : float
        Grid spacing, ``0 < step <= 0.05``.

    Returns
    -------
    float
        ``E[Σ_j p_j²]``, in ``[1/n, 1]``.

    Raises
    ------
    ValueError
        If an argument is outside the ranges above.

    Examples
    --------
    >>> import numpy as np
    >>> from sia_theory import rem_participation
    >>> s = np.random.default_rng(0).standard_normal((4000, 100))  # Monte Carlo at β = 2
    >>> p = np.exp(2.0 * (s - s.max(1, keepdims=True)))
    >>> y = ((p / p.sum(1, keepdims=True)) ** 2).sum(1)
    >>> exact, mean, se = rem_participation(2.0, 100), y.mean(), y.std() / 4000**0.5
    >>> round(exact, 4), round(float(mean), 4), round(float(se), 4)  # within one standard error
    (0.1263, 0.1254, 0.0016)
    """
    beta = check_real("beta", beta, 0.0, lo_open=True)
    n = check_real("n", n, 2.0)
    step = check_real("step", step, 0.0, 0.05, lo_open=True)
    top = math.sqrt(2 * math.log(n)) + 6
    s = np.arange(-9.0, top, step)  # (S,) scores
    w = np.exp(-0.5 * s * s) / math.sqrt(2 * math.pi) * step  # (S,) Gaussian weights
    # the integrand decays like λ² = e^{−2βu} above u* = log E[Z]/β (λ below 1/E[Z]): run
    # 18/β past it (a neglected tail below e^{−36} of the peak) and past the scores' own range
    u_top = max(top, (math.log(n) + beta * beta / 2) / beta) + 8 + 18.0 / beta
    u = np.arange(-6.0, u_top, step)  # (U,) u = −log(λ)/β
    total = 0.0
    rows = max(1, (1 << 22) // s.size)  # u rows per block: about 32 MB per (rows, S) array
    for start in range(0, u.size, rows):
        block = u[start:start + rows]
        bx = np.clip(beta * (s[None, :] - block[:, None]), -700.0, 6.5)  # (rows, S)
        e = np.exp(bx)
        tail = (-np.expm1(-e)) @ w  # (rows,) 1 − Φ
        g = np.exp(2 * bx - e) @ w  # (rows,) E[e^{2β(s−u)} e^{−e^{β(s−u)}}]
        log_phi = np.log1p(-np.minimum(tail, 1 - 1e-16))
        total += float(np.sum(g * np.exp((n - 1) * log_phi)))
    return float(n * beta * total * step)


def rem_beta50(n, level: float = 0.5) -> float:
    """Exact finite-``n`` ``β₅₀`` of iid ``N(0, 1)`` scores (root of :func:`rem_participation`).

    Parameters
    ----------
    n : float
        The number of scores, >= 3.
    level : float, optional
        The participation ``E[Σ_j p_j²]`` to reach (default ½).

    Returns
    -------
    float
        The root, to ``1e-5`` in ``β``.

    Raises
    ------
    ValueError
        If ``n`` is not a finite real number >= 3 (or the root is not bracketed in
        ``[0.6, 6]·rem_max_location(n)``).

    Examples
    --------
    >>> import numpy as np
    >>> from sia_theory import rem_beta50
    >>> beta = rem_beta50(1000)
    >>> s = np.random.default_rng(0).standard_normal((4000, 1000))  # Monte Carlo at that β
    >>> p = np.exp(beta * (s - s.max(1, keepdims=True)))
    >>> y = ((p / p.sum(1, keepdims=True)) ** 2).sum(1)
    >>> round(beta, 2), bool(abs(y.mean() - 0.5) < 4 * y.std() / np.sqrt(y.size))
    (6.26, True)
    """
    n = check_real("n", n, 3.0)
    guess = 2 * float(rem_max_location(n))
    return float(brentq(lambda b: rem_participation(b, n) - level, 0.3 * guess, 3 * guess,
                        xtol=1e-5))


def simplex_participation(beta, n, rho) -> np.ndarray:
    r""":math:`Y = w^2 + (1-w)^2/(n-1)` with :math:`w = 1/(1 + (n-1)e^{-\beta(1-\rho)})` (exact
    simplex).

    Parameters
    ----------
    beta : float or array_like
        ``>= 0``.
    n : float or array_like
        ``>= 2``.
    rho : float
        In ``[-1, 1)``.

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    ValueError
        If an argument is out of range.
    """
    beta = check_finite_array("beta", beta, dtype=np.float64, lo=0)
    n = check_finite_array("n", n, dtype=np.float64, lo=2)
    rho = check_real("rho", rho, -1.0, 1.0, hi_open=True)
    w = 1.0 / (1.0 + (n - 1) * np.exp(-beta * (1 - rho)))
    return w * w + (1 - w) ** 2 / (n - 1)


def simplex_beta50(n, rho) -> np.ndarray:
    r""":math:`\beta_{50} = (\log(n-1) + \operatorname{logit} w_{50})/(1-\rho)` with
    :math:`w_{50} = (1 + \sqrt{1 + n(n-3)/2})/n`, the larger root of
    :math:`n w^2 - 2w + 1 - (n-1)/2 = 0` (i.e. :math:`w^2 + (1-w)^2/(n-1) = \tfrac12`); elementwise,
    ``n >= 3``.

    Parameters
    ----------
    n : array_like
        The number of tokens, >= 3.
    rho : float
        The off-diagonal cosine, in ``[−1, 1)``.

    Returns
    -------
    numpy.ndarray
        Shaped like ``n``.

    Raises
    ------
    ValueError
        If ``n`` is not finite and >= 3, or ``rho`` not in ``[−1, 1)``.

    Examples
    --------
    >>> import math
    >>> from sia_theory import simplex_beta50
    >>> b = simplex_beta50([3, 1000], 0.5)  # n = 3: w₅₀ = 2/3, β₅₀ = 2 log 2/(1 − ρ)
    >>> math.isclose(b[0], 4 * math.log(2), rel_tol=1e-12), round(float(b[1]), 4)
    (True, 15.5757)
    """
    n = check_finite_array("n", n, dtype=np.float64, lo=3)
    rho = check_real("rho", rho, -1.0, 1.0, hi_open=True)
    with np.errstate(over="ignore"):
        w = (1 + np.sqrt(1 - n * (1 - (n - 1) / 2))) / n
    # n(n − 3)/2 is not a float64 beyond n ≈ 1.9e154: there w = 1/n + √(1/n² + (1 − 3/n)/2)
    huge = n > 1e150
    w = np.where(huge, 1 / n + np.sqrt((1 / n) ** 2 + (1 - 3 / np.where(huge, n, 4.0)) / 2), w)
    return (np.log(n - 1) + np.log(w / (1 - w))) / (1 - rho)


def _scores(kind: str, n: int, d: int, rho: float, spread: float, queries: int,
            rng: np.random.Generator) -> np.ndarray:
    """``(queries, n)`` score rows of one draw of ``kind`` (:data:`CLASS_KINDS`)."""
    if kind == "iid":
        return rng.standard_normal((queries, n))
    if kind == "planted":
        S = rho + spread * rng.standard_normal((queries, n))
        S[np.arange(queries), np.arange(queries)] = 1.0  # query i is key i
        return S
    X = sample_tokens(n=n, d=d, rho=rho, rng=rng, max_bytes=2**62)
    Y, _ = normalise_rows(X)  # (n, d)
    return Y[:queries] @ Y.T  # (queries, n): cosines, self = 1


def universality_draw(cell: dict, seed: int) -> dict:
    """One draw of the universality sweep; the draw's generator is ``token_rng(seed,
    UNIVERSALITY_STUDY, k, n, d, 10⁶·spread, draw)`` (``k`` the index of ``kind`` in
    :data:`CLASS_KINDS`).

    Parameters
    ----------
    cell : dict
        ``kind`` (one of :data:`CLASS_KINDS`), ``n`` (``>= 3``), ``d`` (``>= 1``), ``rho``
        (``[0, 1)``), ``spread`` (``>= 0``), ``queries`` (``>= 2``) and ``draw``.
    seed : int

    Returns
    -------
    dict
        The cell with ``beta_50``, the realised mean and spread (sd over keys, pooled over
        queries) of the off-diagonal scores, and ``log_n``.

    Raises
    ------
    ValueError
        Naming the field that is out of range.
    """
    kind = cell["kind"]
    if kind not in CLASS_KINDS:
        raise ValueError(f"kind must be one of {CLASS_KINDS}, got {kind!r}")
    n, d = check_int("n", cell["n"], 3), check_int("d", cell["d"], 1)
    queries = min(check_int("queries", cell["queries"], 2), n)
    rho = check_real("rho", cell["rho"], 0.0, 1.0, hi_open=True)
    spread = check_real("spread", cell["spread"], 0.0)
    rng = token_rng(check_seed(seed), UNIVERSALITY_STUDY, CLASS_KINDS.index(kind), n, d,
                    round(spread * 1e6),
                    cell["draw"])
    S = _scores(kind, n, d, rho, spread, queries, rng)  # (queries, n)
    off = S.copy()
    if kind != "iid":
        off[np.arange(queries), np.arange(queries)] = np.nan
    return {**cell, "log_n": math.log(n), "beta_50": beta50(S),
            "score_mean": float(np.nanmean(off)),
            "score_sd": float(np.sqrt(np.nanmean(np.nanvar(off, axis=1))))}
