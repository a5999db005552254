"""A scheme as arrays: the transform's ``(a, m)`` tables and the encoding's rotation tables.

The logit of SI eq. 16 and of every zoo member is ``L = a(t, n)·S + m(t, n)`` with
``t = q_idx − kv_idx``, ``n = q_idx + 1`` (FlexAttention's ``score_mod`` convention). The tables
come from the transform's own ``coefficients`` in float64, rounded to float32 once, following
its declared ``depends_on`` exactly as the numpy reference does
(:mod:`sia_theory.attention.score_mods`):

* no ``"context"``: per distance, ``coefficients(t, h=h)`` for ``t = 0 … T−1``
  (``a_dist, m_dist``; one row per head with ``"head"``, else one row repeated);
* ``"context"`` without ``"distance"``: per query row, ``coefficients(0, n_ctx=n, h=h)`` for
  ``n = 1 … T`` (``a_row, m_row``);
* both: the full ``(H, T, T)`` tables ``a_full, m_full`` (``m = −inf`` after the query).

A separable scheme has all four of ``a_dist, m_dist, a_row, m_row`` (the unused pair is exactly
``1`` and ``0``, so ``a = a_row·a_dist`` and ``m = m_row + m_dist`` are exact): every such
scheme has the same array shapes, and one compiled JAX function serves them all.

Rotation: ``θ = encoding.frequencies(D)`` (the same function the numpy encoding rotates
with), angles ``position·θ`` in float64, ``cos`` and ``sin`` rounded to float32, shape
``(T, D/2)``; pair ``(k, k + D/2)`` rotates (half-split, as :func:`~sia_theory.attention.rope`).
"""

from __future__ import annotations

import numpy as np

from .._infra.memory import check_memory
from ..transforms import declared_dependence

__all__ = ["coefficient_tables", "rotation_tables", "is_separable"]


def is_separable(transform) -> bool:
    """Whether the transform's tables are per distance or per query row (not both)."""
    return not {"distance", "context"} <= declared_dependence(transform)


def coefficient_tables(transform, n_heads: int, length: int) -> dict:
    """float32 tables of ``transform`` for ``n_heads`` heads and queries ``0 … length−1``
    (module docstring): ``{"a_dist", "m_dist", "a_row", "m_row"}`` each ``(H, T)``, or
    ``{"a_full", "m_full"}`` each ``(H, T, T)``."""
    deps = declared_dependence(transform)
    heads = list(range(n_heads)) if "head" in deps else [None]
    ones, zeros = np.ones((n_heads, length), np.float32), np.zeros((n_heads, length), np.float32)

    def per_head(fn):
        rows = [fn(h) for h in heads]
        a = np.stack([r[0] for r in rows]).astype(np.float32)  # (H or 1, T...)
        m = np.stack([r[1] for r in rows]).astype(np.float32)
        shape = (n_heads,) + a.shape[1:]
        return np.broadcast_to(a, shape).copy(), np.broadcast_to(m, shape).copy()

    if "context" not in deps:
        t = np.arange(length, dtype=np.float64)  # (T,)
        a, m = per_head(lambda h: transform.coefficients(t, h=h))  # (H, T)
        return {"a_dist": a, "m_dist": m, "a_row": ones, "m_row": zeros}
    if "distance" not in deps:
        n = np.arange(1, length + 1, dtype=np.float64)  # (T,) keys seen by each query
        a, m = per_head(lambda h: transform.coefficients(np.zeros(length), n_ctx=n, h=h))
        return {"a_dist": ones, "m_dist": zeros, "a_row": a, "m_row": m}
    check_memory("length", length, 2 * 4 * n_heads * length * length + 3 * 8 * length * length)
    q = np.arange(length, dtype=np.float64)[:, None]  # (T, 1)
    k = np.arange(length, dtype=np.float64)[None, :]  # (1, T)
    t = np.maximum(q - k, 0.0)  # (T, T)
    n = np.broadcast_to(q + 1.0, t.shape)
    a, m = per_head(lambda h: transform.coefficients(t, n_ctx=n, h=h))  # (H, T, T)
    m[:, k > q] = -np.inf  # keys after the query
    return {"a_full": a, "m_full": m}


def rotation_tables(position, head_dim: int, length: int) -> tuple[np.ndarray, np.ndarray]:
    """``(cos, sin)`` float32 ``(T, D/2)`` of ``position`` (an encoding with ``frequencies``)
    at positions ``0 … length−1``."""
    theta = np.asarray(position.frequencies(head_dim), dtype=np.float64)  # (D/2,)
    angle = np.arange(length, dtype=np.float64)[:, None] * theta[None, :]  # (T, D/2)
    return np.cos(angle).astype(np.float32), np.sin(angle).astype(np.float32)
