"""Token sampling and token-level helpers of the CAS model (CAS §2).

Tokens are rows of an ``(n, d)`` array. :func:`sample_tokens` draws the exact simplex or CAS's
Gaussian near-simplex tokens ``x_i = √ρ z_0 + √(1−ρ) z_i`` (``z`` iid ``N(0, I_d)``); a random draw
needs a ``numpy.random.Generator`` (there is no unseeded default): use :func:`token_rng`, which
derives the stream of draw ``index`` of a study from the project's one seeding rule
(:mod:`sia_theory._infra.seeding`).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import integrate, special, stats

from .._infra.memory import check_max_bytes, check_memory
from .._infra.seeding import rng_for
from .._infra.validate import check_finite_array, check_int, check_real
from .config import check_token_kind

__all__ = ["sample_tokens", "token_rng", "check_rng", "check_tokens", "normalise_rows",
           "mean_cosine", "token_memory", "check_max_bytes", "token_distance_constant"]


def token_rng(seed, study: str, *index) -> np.random.Generator:
    """The generator of token draw ``index`` of ``study`` under ``seed`` (one stream per
    ``(seed, study, index)``, the same whatever the thread count).

    Parameters
    ----------
    seed : int
    study : str
    *index : int
        The draw's coordinates.

    Returns
    -------
    numpy.random.Generator
    """
    return rng_for(seed, study, *index)


def check_rng(rng) -> np.random.Generator:
    """``rng`` if it is a ``numpy.random.Generator``.

    Parameters
    ----------
    rng : numpy.random.Generator

    Returns
    -------
    numpy.random.Generator

    Raises
    ------
    ValueError
        Naming ``rng``, for anything else.
    """
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator (e.g. token_rng(seed, study, i)), "
                         f"got {rng!r}")
    return rng


def check_tokens(X, name: str = "X") -> np.ndarray:
    """``X`` as a finite float64 ``(n, d)`` array with ``n, d ≥ 1``.

    Parameters
    ----------
    X : array_like
    name : str
        The name the error message gives it.

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    ValueError
        If ``X`` is not finite, not 2-D or empty.
    """
    X = check_finite_array(name, X, ndim=2, dtype=np.float64)
    if X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"{name} must have at least one row and one column, got shape {X.shape}")
    return X


def normalise_rows(X: np.ndarray, name: str = "X") -> tuple[np.ndarray, np.ndarray]:
    """``(Y, norms)`` with ``y_i = x_i/|x_i|`` (the CAS pre-layer-norm onto the sphere).

    Each row is first divided by its largest absolute entry, so ``|x_i|²`` neither overflows
    (rows ~1e200) nor underflows (rows ~1e-200): the directions ``Y`` are exact to rounding for
    every finite nonzero row. ``norms`` is ``inf`` (or ``0``) only where ``|x_i|`` itself is not a
    float64.

    Parameters
    ----------
    X : numpy.ndarray
        ``(n, d)``, finite.
    name : str
        The name the error message gives it.

    Returns
    -------
    Y : numpy.ndarray
        ``(n, d)`` unit rows.
    norms : numpy.ndarray
        ``(n,)``.

    Raises
    ------
    ValueError
        For a zero row.

    Examples
    --------
    >>> import numpy as np
    >>> Y, norms = normalise_rows(np.array([[3.0, 4.0], [1e200, 0.0]]))
    >>> Y.tolist(), norms.tolist()
    ([[0.6, 0.8], [1.0, 0.0]], [5.0, 1e+200])
    """
    scale = np.max(np.abs(X), axis=1)  # (n,)
    if np.any(scale == 0):
        raise ValueError(f"{name} must not contain a zero row (row {int(np.argmin(scale))})")
    scaled = X / scale[:, None]  # (n, d), entries in [-1, 1]
    unit = np.sqrt(np.einsum("ij,ij->i", scaled, scaled))  # (n,), in [1, √d]
    with np.errstate(over="ignore"):
        norms = scale * unit  # (n,)
    return scaled / unit[:, None], norms


def token_memory(n: int, d: int, tokens: str = "gaussian") -> int:
    """Bytes of working memory of one token draw: ``(n, d)`` float64 arrays (tokens, noise,
    directions), plus the ``(n, n)`` square root of the Gram matrix for exact simplex tokens.

    Parameters
    ----------
    n, d : int
    tokens : str
        ``"gaussian"`` or ``"simplex"``.

    Returns
    -------
    int
    """
    return 8 * (3 * n * d + (n * n if tokens == "simplex" else 0))


def mean_cosine(X) -> float:
    """Mean of ``⟨y_i, y_j⟩`` over ordered pairs ``i ≠ j``, in ``O(nd)`` via ``|Σ y_i|²``.

    Parameters
    ----------
    X : array_like
        ``(n, d)`` tokens, ``n >= 2``, no zero row.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``X`` is not finite, has fewer than 2 rows or a zero row.
    """
    X = check_finite_array("X", X, ndim=2, dtype=np.float64)
    if X.shape[0] < 2:
        raise ValueError(f"X must have at least 2 rows (tokens) for a pairwise cosine, "
                         f"got shape {X.shape}")
    Y, _ = normalise_rows(X)
    n = Y.shape[0]
    total = Y.sum(axis=0)  # (d,)
    # not `total @ total`: BLAS ddot splits the sum across threads and changes the last bit
    return float((np.sum(total * total) - n) / (n * (n - 1)))


def sample_tokens(*, n, d, rho, tokens="gaussian", q=1.0, rng=None,
                  max_bytes=None) -> np.ndarray:
    r"""Tokens of squared norm ``q`` with pairwise cosine ``ρ`` (exactly or in expectation).

    ``"simplex"``: the exact simplex :math:`Y = \sqrt{\mathrm{Gram}}` with
    :math:`\mathrm{Gram} = (1-\rho)I + \rho\,\mathbf{1}\mathbf{1}^\top` (needs ``d ≥ n``;
    deterministic, ``rng`` unused). ``"gaussian"``: CAS's near-simplex ``√ρ z_0 + √(1−ρ) z_i`` with
    ``z`` iid ``N(0, I_d)``, rescaled to norm ``√q``; ``rng`` (a ``numpy.random.Generator``, e.g.
    from :func:`token_rng`) is required. The working memory (:func:`token_memory`) is checked first
    against ``max_bytes`` (default: the memory available).

    Parameters
    ----------
    n : int
        The number of tokens, >= 2.
    d : int
        Their dimension, >= 1 (>= ``n`` for ``"simplex"``).
    rho : float
        The pairwise cosine, in ``(0, 1)``.
    tokens : str, optional
        ``"gaussian"`` (default) or ``"simplex"`` (:data:`~sia_theory.cas.config.TOKEN_KINDS`).
    q : float, optional
        The squared norm, > 0 (default 1).
    rng : numpy.random.Generator, optional
        Required for ``"gaussian"``.
    max_bytes : int, optional
        The memory limit, >= 1 (default: the memory available).

    Returns
    -------
    numpy.ndarray, shape (n, d)

    Raises
    ------
    ValueError
        If an argument is out of range, ``d < n`` for the simplex, ``rng`` is missing for
        Gaussian tokens, or the working memory exceeds the limit.

    Examples
    --------
    >>> import numpy as np
    >>> from sia_theory import sample_tokens
    >>> Y = sample_tokens(n=4, d=4, rho=0.5, tokens="simplex", q=2.0)
    >>> (Y @ Y.T).round(12).tolist()  # Gram = q[(1 − ρ)I + ρ11ᵀ]
    [[2.0, 1.0, 1.0, 1.0], [1.0, 2.0, 1.0, 1.0], [1.0, 1.0, 2.0, 1.0], [1.0, 1.0, 1.0, 2.0]]
    """
    n, d = check_int("n", n, 2), check_int("d", d, 1)
    rho = check_real("rho", rho, 0.0, 1.0, lo_open=True, hi_open=True)
    q = check_real("q", q, 0.0, lo_open=True)
    check_token_kind(tokens)
    if tokens == "simplex" and d < n:
        raise ValueError(f"d must be >= n for exact simplex tokens, got d={d}, n={n}")
    if tokens == "gaussian":
        rng = check_rng(rng)
    check_memory("n", n, token_memory(n, d, tokens), check_max_bytes(max_bytes))
    if tokens == "simplex":
        # eigen-decomposition of (1−ρ)I + ρ11ᵀ: eigenvalue 1−ρ+nρ on 1/√n, 1−ρ elsewhere
        root = np.sqrt(1 - rho) * np.eye(n)  # (n, n)
        root += (np.sqrt(1 - rho + n * rho) - np.sqrt(1 - rho)) / n
        Y = np.zeros((n, d))  # (n, d)
        Y[:, :n] = root
    else:
        z0 = rng.standard_normal(d)  # (d,)
        Z = rng.standard_normal((n, d))  # (n, d)
        Y, _ = normalise_rows(np.sqrt(rho) * z0 + np.sqrt(1 - rho) * Z)
    return np.sqrt(q) * Y


TOKEN_DISTANCE_DIMS = (2, 16)
"""The dimensions ``d`` for which :func:`token_distance_constant` is computed (its quadrature
resolves the token density's peak up to ``d = 16`` at ``ρ ≤ 0.95``)."""


def _radial(d: int, t: float) -> float:
    """``∫_{−t}^∞ (u + t)^{d−1} e^{−u²/2} du`` by the recursion ``J_m = (m − 1)J_{m−2} + tJ_{m−1}``
    (``J₀ = √(2π)Φ(t)``, ``J₁ = e^{−t²/2} + tJ₀``)."""
    j_prev, j = math.sqrt(2 * math.pi) * special.ndtr(t), math.exp(-t * t / 2)
    j += t * j_prev
    for m in range(2, d):
        j_prev, j = j, (m - 1) * j_prev + t * j
    return j


def token_distance_constant(d, rho) -> float:
    r"""The constant ``c`` of the query–key distance law of CAS's Gaussian near-simplex tokens
    (:func:`sample_tokens`), :math:`P(r \le x) \sim c\,x^{d-1}` as ``x → 0``, for ``r`` the
    chordal distance between two distinct normalised tokens of one draw (the query is a token),
    averaged over queries, keys and draws: the local exponent is ``d − 1`` (a positive density
    near every query), and ``c`` takes the place of uniform keys' constant in
    :math:`\beta^*_n = (c\,2^{(d-1)/2} n)^{2/(d-1)}`
    (:func:`sia_theory.sphere.model.critical_beta`).

    Given ``z_0``, a token's direction is that of :math:`N(\mu, (1-\rho) I_d)` with
    :math:`\mu = \sqrt{\rho}\, z_0`; its density on ``S^{d−1}`` at angle ``θ`` from ``μ`` is,
    with :math:`s = |\mu|/\sqrt{1-\rho}`,
    :math:`f_s(θ) = (2π)^{-d/2} e^{-s^2\sin^2θ/2} J_{d-1}(s\cosθ)`,
    :math:`J_m(t) = \int_{-t}^{\infty} (u+t)^m e^{-u^2/2} du`. A query at ``θ`` has
    :math:`c_q = V_{d-1} f_s(θ)` (:math:`V_{d-1}` the volume of the unit ``(d−1)``-ball), so
    :math:`c = V_{d-1} E_s[\int f_s^2 d\sigma]` with :math:`s^2 = \rho/(1-\rho)\,\chi^2_d`:
    two nested quadratures (relative accuracy ~1e-9). Uniform keys (``ρ → 0``) give
    :math:`4^{-k/2}/((k/2) B(k/2, k/2))`, ``k = d − 1`` (``1/π`` on the circle); clustered tokens
    have a larger ``c`` on average, while the queries in the sparse part of the circle have a
    smaller ``c_q``.

    Parameters
    ----------
    d : int
        The token dimension, in ``[2, 16]`` (:data:`TOKEN_DISTANCE_DIMS`).
    rho : float
        The nominal cosine, in ``(0, 0.95]``.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``d`` or ``rho`` is out of range.

    Examples
    --------
    >>> round(token_distance_constant(2, 1e-9) * math.pi, 6)  # uniform on the circle: 1/π
    1.0
    """
    d = check_int("d", d, *TOKEN_DISTANCE_DIMS)
    rho = check_real("rho", rho, 0.0, 0.95, lo_open=True)
    ball = math.pi ** ((d - 1) / 2) / special.gamma((d + 1) / 2)  # V_{d−1}
    sphere = 2 * math.pi ** ((d - 1) / 2) / special.gamma((d - 1) / 2)  # |S^{d−2}|
    norm = (2 * math.pi) ** (-d / 2)

    def squared_density(s: float) -> float:  # ∫ f_s² dσ over S^{d−1}
        def integrand(theta: float) -> float:
            f = norm * math.exp(-(s * math.sin(theta)) ** 2 / 2) * _radial(d, s * math.cos(theta))
            return f * f * math.sin(theta) ** (d - 2)
        peak = min(math.pi, 8.0 / s) if s > 0 else math.pi  # the density's width ~1/s
        head = integrate.quad(integrand, 0.0, peak, epsabs=0.0, epsrel=1e-11, limit=200)[0]
        tail = (integrate.quad(integrand, peak, math.pi, epsabs=1e-12 * head, epsrel=1e-11,
                               limit=200)[0] if peak < math.pi else 0.0)  # negligible far side
        return sphere * (head + tail)

    scale = rho / (1 - rho)
    value = integrate.quad(lambda q: squared_density(math.sqrt(scale * q)) * stats.chi2.pdf(q, d),
                           0.0, np.inf, epsabs=0.0, epsrel=1e-10, limit=200)[0]
    return float(ball * value)
