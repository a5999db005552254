"""One CAS attention layer (CAS §2, eq. 1) and the sparsity of its attention matrix.

``y_i = x_i/|x_i|``, scores ``β⟨y_i, y_j⟩`` for all ``j`` (including ``i``), ``A = softmax`` by
rows, ``x_i' = Σ_j A_ij y_j + α x_i``: two ``n×n×d`` matrix products, run with single-threaded
BLAS so the last bits do not depend on the thread count. The simulations over samples, ``γ``
grids and depth are :mod:`sia_theory.cas.dynamics`, which re-exports these names.
"""

from __future__ import annotations

import numpy as np

from .._infra.memory import check_memory
from .._infra.parallel import single_threaded_blas
from .._infra.validate import check_finite_array, check_real
from .tokens import check_max_bytes, check_tokens, normalise_rows

__all__ = ["softmax_from_gram", "attention_step", "attention_statistics"]


def softmax_from_gram(gram: np.ndarray, beta: float) -> np.ndarray:
    """Row softmax of ``β·gram`` (a new array), stabilised by subtracting the row maximum.

    The maximum is subtracted *before* multiplying by ``β`` (``β(g − max g)`` rather than
    ``βg − max βg``), so no score overflows for any finite ``β``: a huge ``β`` gives the one-hot
    (or uniform-over-ties) limit, never ``inf − inf = NaN``.

    Parameters
    ----------
    gram : numpy.ndarray
        ``(n, n)`` Gram matrix of the tokens (finite).
    beta : float
        ``>= 0``.

    Returns
    -------
    numpy.ndarray
        ``(n, n)``, rows summing to 1.

    Raises
    ------
    ValueError
        If ``gram`` is not a finite 2-d array or ``beta`` is negative or not finite.
    """
    gram = check_finite_array("gram", gram, ndim=2, dtype=np.float64, min_size=1)
    beta = check_real("beta", beta, 0.0)
    S = gram - gram.max(axis=1, keepdims=True)  # (b, n), entries in [-2, 0] for cosines
    with np.errstate(over="ignore"):
        S *= beta  # -inf where β·gap exceeds the float range: weight 0
    np.exp(S, out=S)
    S /= S.sum(axis=1, keepdims=True)
    return S


def step_memory(n: int, d: int) -> int:
    """Bytes of working memory of one layer on ``n`` tokens of dimension ``d``: the ``(n, n)``
    Gram/score/attention arrays and a few ``(n, d)`` arrays, in float64."""
    return 8 * (3 * n * n + 4 * n * d)


def attention_step(X, *, beta, alpha=0.0, return_attention=False, max_bytes=None):
    r"""One CAS attention layer (CAS eq. 1):
    :math:`x_i' = \sum_j \operatorname{softmax}_j(\beta\langle y_i,y_j\rangle)\, y_j + \alpha x_i`.

    Without residual the map depends on the directions of the rows only (``X`` and ``cX`` give
    the same output for any ``c > 0``, down to rows of 1e-300 or up to 1e300).

    Parameters
    ----------
    X : array_like, shape (n, d)
        Finite tokens, no zero row.
    beta, alpha : float
        Inverse temperature ``β >= 0`` and residual weight ``α >= 0``.
    return_attention, max_bytes
        Also return the attention ``A`` (``(n, n)``); the limit the working memory
        (:func:`step_memory`) is checked against first (default: the memory available).

    Returns
    -------
    numpy.ndarray or tuple of numpy.ndarray
        ``X'``, float64 ``(n, d)``; ``(X', A)`` with ``return_attention``.

    Raises
    ------
    ValueError
        If ``X`` is not a finite 2-d array or has a zero row, ``beta`` or ``alpha`` is negative,
        the working memory exceeds ``max_bytes``, or ``alpha·X`` overflows float64.

    Examples
    --------
    >>> import numpy as np
    >>> from sia_theory import attention_step
    >>> attention_step(np.eye(3), beta=np.log(2))  # self weight e^β/(e^β + 2) = 1/2
    array([[0.5 , 0.25, 0.25],
           [0.25, 0.5 , 0.25],
           [0.25, 0.25, 0.5 ]])
    """
    X = check_tokens(X)
    beta = check_real("beta", beta, 0.0)
    alpha = check_real("alpha", alpha, 0.0)
    check_memory("X", X.shape, step_memory(*X.shape),
                 check_max_bytes(max_bytes))
    Y, _ = normalise_rows(X)  # (n, d)
    with single_threaded_blas():
        A = softmax_from_gram(Y @ Y.T, beta)  # (n, n)
        out = A @ Y  # (n, d)
    if alpha:
        with np.errstate(over="ignore"):
            out += alpha * X
        if not np.all(np.isfinite(out)):
            raise ValueError(f"alpha * X overflows float64 (alpha={alpha!r}, max |X| = "
                             f"{float(np.max(np.abs(X)))!r}); rescale X or alpha")
    return (out, A) if return_attention else out


def attention_statistics(A: np.ndarray) -> dict:
    """Sparsity of a row-stochastic ``A``.

    Parameters
    ----------
    A : numpy.ndarray
        Square ``(n, n)``, finite.

    Returns
    -------
    dict
        ``self_weight`` (mean ``A_ii``), ``effective_tokens`` (mean ``1/Σ_j A_ij²``) and
        ``entropy`` (mean ``−Σ_j A_ij log A_ij``, nats).

    Raises
    ------
    ValueError
        If ``A`` is not a finite square matrix.
    """
    A = check_finite_array("A", A, ndim=2, dtype=np.float64)
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"A must be a square (n, n) attention matrix, got shape {A.shape}")
    with np.errstate(divide="ignore", invalid="ignore"):
        plogp = np.where(A > 0, A * np.log(A), 0.0)  # (n, n)
    return {"self_weight": float(np.mean(np.diag(A))),
            "effective_tokens": float(np.mean(1.0 / np.einsum("ij,ij->i", A, A))),
            "entropy": float(np.mean(-plogp.sum(axis=1)))}
