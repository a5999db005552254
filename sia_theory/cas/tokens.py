"""Token sampling and token-level helpers of the CAS model (CAS §2).

Tokens are rows of an ``(n, d)`` array. :func:`sample_tokens` draws the exact simplex or CAS's
Gaussian near-simplex tokens ``x_i = √ρ z_0 + √(1−ρ) z_i`` (``z`` iid ``N(0, I_d)``); a random draw
needs a ``numpy.random.Generator`` (there is no unseeded default): use :func:`token_rng`, which
derives the stream of draw ``index`` of a study from the project's one seeding rule
(:mod:`sia_theory._infra.seeding`).
"""

from __future__ import annotations

import numpy as np

from .._infra.memory import check_max_bytes, check_memory
from .._infra.seeding import rng_for
from .._infra.validate import check_finite_array, check_int, check_real
from .config import check_token_kind

__all__ = ["sample_tokens", "token_rng", "check_rng", "check_tokens", "normalise_rows",
           "mean_cosine", "token_memory", "check_max_bytes"]


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
