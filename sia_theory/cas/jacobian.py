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

from .._infra.parallel import parallel_map, single_threaded_blas
from .._infra.validate import check_int, check_real
from ..symbolic import cas
from .dynamics import softmax_from_gram
from .tokens import check_tokens, normalise_rows

__all__ = ["jacobian_eta", "dense_jacobian", "eta_from_jacobian"]


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


def jacobian_eta(X, *, beta, alpha=0.0, block_rows=512) -> float:
    """``η = |∂X'/∂X|_F²/(nd)`` of one CAS layer at tokens ``X`` (CAS Theorem 2.4, full ``nd×nd``
    Jacobian through the normalisation, query side and key/value side, plus the residual ``αI``).

    ``X`` is ``(n, d)`` with nonzero rows; ``β ≥ 0``; ``α ≥ 0``. Work ``O(n²d + n² min(n, d²))``,
    memory ``O(n²)``; the nd×nd matrix is never formed. The query-side terms are differences of
    ``O(1)`` moments times ``β²``, so the absolute rounding error is about ``β²·1e-16``
    (negligible for ``β ≲ 10³``; at ``β = 10⁶`` it reaches ``1e-4``).
    """
    X = check_tokens(X)
    beta, alpha = check_real("beta", beta, 0.0), check_real("alpha", alpha, 0.0)
    block_rows = check_int("block_rows", block_rows, 1)
    pair_fn, token_fn = _term_functions()
    Y, r = normalise_rows(X)  # (n, d), (n,)
    n, d = Y.shape
    with single_threaded_blas():
        G = Y @ Y.T  # (n, n)
    use_features = d * (d + 1) // 2 < n
    squares = _square_features(Y) if use_features else G * G  # (n, d(d+1)/2) or (n, n)

    def block_sum(start: int) -> float:
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
    total = sum(parallel_map(block_sum, range(0, n, block_rows)))
    return total / (n * d)


def _forward_complex(X: np.ndarray, beta: float, alpha: float) -> np.ndarray:
    """The CAS layer on a batch ``(B, n, d)`` written with analytic operations only (no ``conj``,
    no ``abs``), so a complex perturbation carries the exact derivative in its imaginary part."""
    norms = np.sqrt(np.einsum("bij,bij->bi", X, X))  # (B, n)
    Y = X / norms[..., None]  # (B, n, d)
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


def dense_jacobian(X, *, beta, alpha=0.0, method="complex_step") -> np.ndarray:
    """The full ``nd × nd`` Jacobian ``∂vec(X')/∂vec(X)`` (row-major ``(token, coordinate)``).

    ``method="complex_step"`` differentiates the forward pass by complex perturbation (exact to
    rounding, independent of any hand derivation); ``"blocks"`` assembles the analytic blocks.
    Memory ``(nd)²``: for validation on small ``n, d`` only.
    """
    X = check_tokens(X)
    beta, alpha = check_real("beta", beta, 0.0), check_real("alpha", alpha, 0.0)
    normalise_rows(X)  # rejects zero rows
    # many small batched products: threaded BLAS only adds wake-up overhead here (measured 50x)
    with single_threaded_blas():
        if method == "complex_step":
            return _dense_complex_step(X, beta, alpha)
        if method == "blocks":
            return _dense_blocks(X, beta, alpha)
    raise ValueError(f"method must be 'complex_step' or 'blocks', got {method!r}")


def eta_from_jacobian(J: np.ndarray, n: int, d: int) -> float:
    """``|J|_F² / (nd)`` of a dense Jacobian."""
    return float(np.sum(J * J) / (n * d))
