"""Exact Jacobian norm of the CAS attention layer (CAS Theorem 2.4): ``η = |∂X'/∂X|_F² / (nd)``.

The full Jacobian is ``nd × nd``; its squared Frobenius norm is a sum of a per-pair and a
per-token term that depend only on Gram invariants (derived in
:func:`sia_theory.symbolic.cas.jacobian_terms` and lambdified here). The invariants need the
products ``G = YYᵀ``, ``O = AY``, ``K = OYᵀ``, ``(A∘G)Y`` (each ``O(n²d)``) and
``aᵢᵀ(G∘G)aᵢ`` for every row (``O(n³)`` as ``A(G∘G)``, or ``O(n²d²)`` through the features
``y⊗y`` when ``d(d+1)/2 < n``), computed in row blocks so memory stays ``O(n²)``.

:func:`dense_jacobian` is the reference: the complex-step derivative of the forward pass (exact
to rounding, independent of the derivation) or the explicit blocks.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import sympy as sp

from .._infra.memory import check_memory
from .._infra.parallel import parallel_map, single_threaded_blas, worker_count
from .._infra.validate import check_finite_array, check_int, check_real
from ..symbolic import cas
from .dynamics import softmax_from_gram
from .tokens import check_max_bytes, check_tokens, normalise_rows

__all__ = ["jacobian_eta", "dense_jacobian", "eta_from_jacobian", "eta_memory",
           "dense_jacobian_memory", "MAX_BETA"]

MAX_BETA = 1e6
r"""Largest ``β`` accepted by :func:`jacobian_eta` and :func:`dense_jacobian`. The query-side
terms are differences of ``O(1)`` moments times ``β²`` (absolute rounding error about
``β²·1e-16``: ``1e-4`` at :math:`\beta = 10^6`, meaningless beyond), and the complex step needs
``β·step ≪ 1``; a larger ``β`` is refused with a ``ValueError`` rather than answered wrongly."""


def _check_beta(beta) -> float:
    beta = check_real("beta", beta, 0.0)
    if beta > MAX_BETA:
        raise ValueError(f"beta must be <= {MAX_BETA:g} for the Jacobian (its query-side terms "
                         f"lose about beta**2 * 1e-16 to rounding), got {beta!r}")
    return beta


def eta_memory(n: int, d: int, block_rows: int) -> int:
    """Bytes of working memory of :func:`jacobian_eta`: ``G`` and the square features (``n²``
    or ``n·d(d+1)/2``), and about eight ``(block, n)`` arrays per concurrent row block.

    Parameters
    ----------
    n, d : int
        Tokens and width.
    block_rows : int
        Rows per block.

    Returns
    -------
    int
    """
    k = d * (d + 1) // 2 if d * (d + 1) // 2 < n else n
    b = min(block_rows, n)
    return 8 * (n * n + n * k + min(worker_count(), -(-n // b)) * b * (8 * n + k + 4 * d))


def dense_jacobian_memory(n: int, d: int, method: str = "complex_step") -> int:
    """Bytes of working memory of :func:`dense_jacobian`: the ``(nd)²`` result, plus a batch of
    256 complex forward passes (``complex_step``) or four ``n²d²`` block arrays (``blocks``).

    Parameters
    ----------
    n, d : int
        Tokens and width.
    method : str
        ``"complex_step"`` or ``"blocks"``.

    Returns
    -------
    int
    """
    nd = n * d
    if method == "blocks":
        return 8 * 5 * nd * nd
    batch = min(256, nd)
    return 8 * nd * nd + 16 * batch * (4 * n * n + 4 * nd)


@cache
def _term_functions():
    pair, token = cas.jacobian_terms()
    return (sp.lambdify(cas.PAIR_ARGS, pair, "numpy"),
            sp.lambdify(cas.TOKEN_ARGS, token, "numpy"))


def _square_features(Y: np.ndarray) -> np.ndarray:
    """Rows ``φ_j`` with ``φ_j·φ_l = ⟨y_j, y_l⟩²`` (upper triangle of ``y_j y_jᵀ``, off-diagonal
    entries weighted by √2)."""
    d = Y.shape[1]
    upper_a, upper_b = np.triu_indices(d)
    weight = np.where(upper_a == upper_b, 1.0, np.sqrt(2.0))  # (d(d+1)/2,)
    return Y[:, upper_a] * Y[:, upper_b] * weight  # (n, d(d+1)/2)


def jacobian_eta(X, *, beta, alpha=0.0, block_rows=512, max_bytes=None) -> float:
    r""":math:`\eta = \|\partial X'/\partial X\|_F^2/(nd)` of one CAS layer at tokens ``X`` (CAS
    Theorem 2.4, full ``nd×nd`` Jacobian through the normalisation, query side and key/value side,
    plus the residual ``αI``).

    ``X`` is ``(n, d)`` with nonzero rows; ``β ≥ 0``; ``α ≥ 0``. Work ``O(n²d + n² min(n, d²))``,
    memory ``O(n²)``; the nd×nd matrix is never formed. The query-side terms are differences of
    ``O(1)`` moments times ``β²``, so the absolute rounding error is about ``β²·1e-16``
    (negligible for ``β ≲ 10³``; at :math:`\beta = 10^6` it reaches ``1e-4``; a larger ``β`` is
    refused, see :data:`MAX_BETA`). The working memory (:func:`eta_memory`) is checked first against
    ``max_bytes`` (default: the memory available).

    Parameters
    ----------
    X : array_like, shape (n, d)
        Finite tokens, no zero row.
    beta : float
        Inverse temperature, ``0 <= beta <= 1e6`` (:data:`MAX_BETA`).
    alpha : float
        Residual weight ``α >= 0``.
    block_rows : int
        Query rows per block, ``>= 1`` (memory against speed).
    max_bytes : int, optional
        Working-memory limit (default: the memory available).

    Returns
    -------
    float
        ``η``.

    Raises
    ------
    ValueError
        If an argument is outside the ranges above, ``X`` has a zero row, the working memory
        exceeds ``max_bytes``, or ``η`` overflows float64.

    Examples
    --------
    >>> import numpy as np
    >>> from sia_theory import dense_jacobian, jacobian_eta
    >>> X = np.random.default_rng(0).standard_normal((5, 3))
    >>> J = dense_jacobian(X, beta=2.0, alpha=0.5)  # the nd × nd matrix, by complex step
    >>> round(jacobian_eta(X, beta=2.0, alpha=0.5), 10), round(float((J**2).sum()) / 15, 10)
    (1.2838412563, 1.2838412563)
    """
    X = check_tokens(X)
    beta, alpha = _check_beta(beta), check_real("alpha", alpha, 0.0)
    block_rows = check_int("block_rows", block_rows, 1)
    check_memory("X", X.shape, eta_memory(*X.shape, block_rows),
                 check_max_bytes(max_bytes))
    pair_fn, token_fn = _term_functions()
    Y, r = normalise_rows(X)  # (n, d), (n,)
    n, d = Y.shape
    with single_threaded_blas():
        G = Y @ Y.T  # (n, n)
    use_features = d * (d + 1) // 2 < n
    squares = _square_features(Y) if use_features else G * G  # (n, d(d+1)/2) or (n, n)

    def block_sum(start: int) -> float:
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):  # checked below
            return _block_sum(start)

    def _block_sum(start: int) -> float:
        rows = np.arange(start, min(start + block_rows, n))
        Gb = G[rows]  # (b, n)
        A = softmax_from_gram(Gb, beta)  # (b, n)
        O = A @ Y  # (b, d)
        K = O @ Y.T  # (b, n)
        AG = A * Gb  # (b, n)
        B = AG @ Y  # (b, d)
        m = AG.sum(axis=1)  # (b,)
        oo = np.einsum("ij,ij->i", O, O)
        gg = np.einsum("ij,ij->i", AG, Gb)
        kk = np.einsum("ij,ij,ij->i", A, K, K)
        bb, bo = np.einsum("ij,ij->i", B, B), np.einsum("ij,ij->i", B, O)
        if use_features:
            F = A @ squares  # (b, d(d+1)/2)
            aGGa = np.einsum("ij,ij->i", F, F)
        else:
            aGGa = np.einsum("ij,ij->i", A @ squares, A)  # (b,)
        A_self = A[np.arange(rows.size), rows]  # (b,)
        pair = pair_fn(A, r[None, :], Gb, K, m[:, None], oo[:, None], beta, d)  # (b, n)
        token = token_fn(A_self, r[rows], m, oo, gg, aGGa, kk, bb, bo, beta, alpha, d)  # (b,)
        return float(np.sum(pair)) + float(np.sum(token))

    # row blocks are independent; summing them in order keeps the result thread-count free
    with np.errstate(over="ignore", invalid="ignore"):
        total = sum(parallel_map(block_sum, range(0, n, block_rows)))
        eta = total / (n * d)
    if not np.isfinite(eta):  # η scales as 1/|x|²: rows of norm ~1e-160 overflow it
        raise ValueError(f"eta overflows float64 for X with row norms down to {float(r.min())!r} "
                         "(eta scales as 1/|x_i|^2); rescale X")
    return eta


def _forward_complex(X: np.ndarray, beta: float, alpha: float) -> np.ndarray:
    """The CAS layer on a batch ``(B, n, d)`` written with analytic operations only (no ``conj``,
    no ``abs``), so a complex perturbation carries the exact derivative in its imaginary part."""
    # divide each row by a real constant first (Y is unchanged, so is its derivative): no
    # overflow or underflow of |x|² for rows of 1e±200
    Xs = X / np.max(np.abs(X.real), axis=2, keepdims=True)  # (B, n, d)
    norms = np.sqrt(np.einsum("bij,bij->bi", Xs, Xs))  # (B, n)
    Y = Xs / norms[..., None]  # (B, n, d)
    S = beta * (Y @ np.swapaxes(Y, 1, 2))  # (B, n, n)
    S = S - S.real.max(axis=2, keepdims=True)  # a real shift leaves the derivative unchanged
    E = np.exp(S)
    A = E / E.sum(axis=2, keepdims=True)
    return A @ Y + alpha * X  # (B, n, d)


def _dense_complex_step(X, beta, alpha, batch=256, step=1e-30) -> np.ndarray:
    n, d = X.shape
    J = np.empty((n * d, n * d))
    for start in range(0, n * d, batch):
        cols = np.arange(start, min(start + batch, n * d))
        Xc = np.repeat(X[None].astype(np.complex128), cols.size, axis=0)  # (B, n, d)
        Xc[np.arange(cols.size), cols // d, cols % d] += 1j * step
        J[:, cols] = (_forward_complex(Xc, beta, alpha).imag / step).reshape(cols.size, -1).T
    return J


def _dense_blocks(X, beta, alpha) -> np.ndarray:
    """``∂x_i'/∂x_k = A_ik (I + β(y_k − o_i)y_iᵀ) P_k + δ_ik (C_i P_i + αI)`` assembled."""
    Y, r = normalise_rows(X)
    n, d = Y.shape
    A = softmax_from_gram(Y @ Y.T, beta)  # (n, n)
    O = A @ Y  # (n, d)
    eye = np.eye(d)
    P = (eye[None] - np.einsum("ka,kb->kab", Y, Y)) / r[:, None, None]  # (n, d, d)
    V = Y[None, :, :] - O[:, None, :]  # (n, n, d): y_k − o_i
    # A_ik (P_k + β v_ik (P_k y_i)ᵀ)
    PY = np.einsum("kab,ib->ika", P, Y)  # (n, n, d): P_k y_i
    J = A[:, :, None, None] * (P[None] + beta * V[..., :, None] * PY[..., None, :])  # (n,n,d,d)
    for i in range(n):
        C = beta * (np.einsum("j,ja,jb->ab", A[i], Y, Y) - np.outer(O[i], O[i]))  # (d, d)
        J[i, i] += C @ P[i] + alpha * eye
    return J.transpose(0, 2, 1, 3).reshape(n * d, n * d)  # rows (i, a), columns (k, c)


def dense_jacobian(X, *, beta, alpha=0.0, method="complex_step", max_bytes=None) -> np.ndarray:
    """The full ``nd × nd`` Jacobian ``∂vec(X')/∂vec(X)`` (row-major ``(token, coordinate)``).

    ``method="complex_step"`` differentiates the forward pass by complex perturbation (exact to
    rounding, independent of any hand derivation); ``"blocks"`` assembles the analytic blocks.
    Memory ``(nd)²`` (:func:`dense_jacobian_memory`, checked first against ``max_bytes``,
    default: the memory available): for validation on small ``n, d`` only.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Finite tokens, no zero row.
    beta : float
        Inverse temperature, ``0 <= beta <= 1e6`` (:data:`MAX_BETA`).
    alpha : float
        Residual weight ``α >= 0``.
    method : {"complex_step", "blocks"}
        How the Jacobian is computed (above).
    max_bytes : int, optional
        Working-memory limit (default: the memory available).

    Returns
    -------
    numpy.ndarray
        float64, shape ``(n·d, n·d)``.

    Raises
    ------
    ValueError
        If an argument is outside the ranges above, ``X`` has a zero row, the working memory
        exceeds ``max_bytes``, or the Jacobian overflows float64.

    Examples
    --------
    >>> import numpy as np
    >>> from sia_theory import dense_jacobian
    >>> X = np.random.default_rng(0).standard_normal((4, 2))
    >>> J = dense_jacobian(X, beta=1.0)
    >>> J.shape, bool(np.allclose(J, dense_jacobian(X, beta=1.0, method="blocks")))
    ((8, 8), True)
    >>> round(float(np.abs(J @ X.ravel()).max()), 10)  # degree-0 homogeneous: J·vec(X) = 0
    0.0
    """
    X = check_tokens(X)
    beta, alpha = _check_beta(beta), check_real("alpha", alpha, 0.0)
    if method not in ("complex_step", "blocks"):
        raise ValueError(f"method must be 'complex_step' or 'blocks', got {method!r}")
    check_memory("X", X.shape, dense_jacobian_memory(*X.shape, method),
                 check_max_bytes(max_bytes))
    normalise_rows(X)  # rejects zero rows
    # The layer without residual is homogeneous of degree 0 in X, so its Jacobian is of degree
    # −1: J(X) = J(X/c)|_{α→αc} / c with c = max|X| (the complex step stays small relative to X,
    # and nothing under- or overflows for X of 1e±200).
    c = float(np.max(np.abs(X)))
    with np.errstate(over="ignore"):
        alpha_c = alpha * c
    # many small batched products: threaded BLAS only adds wake-up overhead here (measured 50x)
    with single_threaded_blas(), np.errstate(over="ignore"):
        if method == "complex_step":
            J = _dense_complex_step(X / c, beta, alpha_c) / c
        else:
            J = _dense_blocks(X / c, beta, alpha_c) / c
    if not np.all(np.isfinite(J)):
        raise ValueError(f"the Jacobian overflows float64 (max |X| = {c!r}, alpha = {alpha!r}); "
                         "rescale X")
    return J


def eta_from_jacobian(J: np.ndarray, n: int, d: int) -> float:
    """``|J|_F² / (nd)`` of a dense Jacobian.

    Parameters
    ----------
    J : numpy.ndarray
        ``(n·d, n·d)``, finite.
    n, d : int
        ``>= 1``.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``J`` is not finite or not of shape ``(n·d, n·d)``.
    """
    n, d = check_int("n", n, 1), check_int("d", d, 1)
    J = check_finite_array("J", J, ndim=2, dtype=np.float64)
    if J.shape != (n * d, n * d):
        raise ValueError(f"J must have shape (n*d, n*d) = {(n * d, n * d)}, got {J.shape}")
    scale = float(np.max(np.abs(J))) if J.size else 0.0
    if scale == 0.0:
        return 0.0
    return float(scale**2 * np.sum((J / scale) ** 2) / (n * d))
