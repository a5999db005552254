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
from ..transforms import declared_dependence, describe

__all__ = ["coefficient_tables", "rotation_tables", "is_separable", "check_float32"]

_CHECK_ROWS = 256  # query rows per block when checking a table of distance and context


def is_separable(transform) -> bool:
    """Whether the transform's tables are per distance or per query row (not both)."""
    return not {"distance", "context"} <= declared_dependence(transform)


def coefficient_tables(transform, n_heads: int, length: int) -> dict:
    """float32 tables of ``transform`` for ``n_heads`` heads and queries ``0 … length−1``
    (module docstring): ``{"a_dist", "m_dist", "a_row", "m_row"}`` each ``(H, T)``, or
    ``{"a_full", "m_full"}`` each ``(H, T, T)``. ``ValueError`` naming the transform and the
    first head and distance (or context) where a coefficient overflows float32."""
    deps = declared_dependence(transform)
    heads = list(range(n_heads)) if "head" in deps else [None]
    ones, zeros = np.ones((n_heads, length), np.float32), np.zeros((n_heads, length), np.float32)
    if "context" not in deps:
        t = np.arange(length, dtype=np.float64)  # (T,)
        a, m = _per_head(transform, heads, n_heads, lambda h: transform.coefficients(t, h=h),
                         lambda i: f"distance {i[1]}")  # (H, T)
        return {"a_dist": a, "m_dist": m, "a_row": ones, "m_row": zeros}
    if "distance" not in deps:
        n = np.arange(1, length + 1, dtype=np.float64)  # (T,) keys seen by each query
        a, m = _per_head(transform, heads, n_heads,
                         lambda h: transform.coefficients(np.zeros(length), n_ctx=n, h=h),
                         lambda i: f"context {i[1] + 1}")
        return {"a_dist": ones, "m_dist": zeros, "a_row": a, "m_row": m}
    check_memory("length", length, 2 * 4 * n_heads * length * length + 3 * 8 * length * length)
    return _full_tables(transform, heads, n_heads, 0, length)


def _per_head(transform, heads, n_heads, fn, where):
    """``fn(h)`` = float64 ``(a, m)`` for each head, rounded to float32 and broadcast to
    ``n_heads``; ``where(index)`` names the entry at an index of the stacked arrays."""
    rows = [fn(h) for h in heads]
    a, m = (_float32(transform, name, np.stack([r[j] for r in rows]), heads, where)
            for j, name in enumerate("am"))  # (H or 1, T...)
    shape = (n_heads,) + a.shape[1:]
    return np.broadcast_to(a, shape).copy(), np.broadcast_to(m, shape).copy()


def _full_tables(transform, heads, n_heads, first: int, stop: int) -> dict:
    """``a_full, m_full`` of the query rows ``first … stop−1`` (keys ``0 … stop−1``)."""
    q = np.arange(first, stop, dtype=np.float64)[:, None]  # (rows, 1)
    k = np.arange(stop, dtype=np.float64)[None, :]  # (1, T)
    t = np.maximum(q - k, 0.0)  # (rows, T); keys after the query get t = 0 (masked below)
    n = np.broadcast_to(q + 1.0, t.shape)
    a, m = _per_head(transform, heads, n_heads,
                     lambda h: transform.coefficients(t, n_ctx=n, h=h),
                     lambda i: f"distance {first + i[1] - i[2]}, context {first + i[1] + 1}")
    m[:, k > q] = -np.inf  # keys after the query
    return {"a_full": a, "m_full": m}


def _float32(transform, name, values, heads, where) -> np.ndarray:
    """``values`` (float64) rounded to float32; ``ValueError`` naming the transform and the
    first entry where a finite coefficient overflows float32 (the trainer's precision)."""
    with np.errstate(over="ignore"):  # an overflow is reported below, naming where
        out = values.astype(np.float32)
    bad = np.isfinite(values) & ~np.isfinite(out)
    if not bad.any():
        return out
    index = tuple(int(i) for i in np.argwhere(bad)[0])
    head = "" if heads[index[0]] is None else f", head {heads[index[0]]}"
    raise ValueError(f"{describe(transform)}: its coefficient {name} = {values[index]:g} "
                     f"overflows float32 (largest 3.4e38), the precision the trainer computes "
                     f"in, first at {where(index)}{head}")


def check_float32(transform, n_heads: int, length: int) -> None:
    """Check that a transform's coefficients fit float32, the trainer's precision.

    Tables of distance and context are checked a block of query rows at a time (bounded
    memory), so the longest validation length can be checked before training.

    Parameters
    ----------
    transform : Transform
        The transform (already checked in float64 by its ``coefficients``).
    n_heads : int
        Heads of the model (a transform that depends on the head is checked for each).
    length : int
        Queries ``0 … length−1`` (the longest context the run will see).

    Raises
    ------
    ValueError
        Naming the transform, the coefficient and the first distance (or context) and head
        where a finite float64 value overflows float32 (largest 3.4e38).
    """
    if is_separable(transform):
        coefficient_tables(transform, n_heads, length)
        return
    heads = list(range(n_heads)) if "head" in declared_dependence(transform) else [None]
    for first in range(0, length, _CHECK_ROWS):
        _full_tables(transform, heads, n_heads, first, min(first + _CHECK_ROWS, length))


def rotation_tables(position, head_dim: int, length: int) -> tuple[np.ndarray, np.ndarray]:
    """``(cos, sin)`` float32 ``(T, D/2)`` of ``position`` (an encoding with ``frequencies``)
    at positions ``0 … length−1``."""
    theta = np.asarray(position.frequencies(head_dim), dtype=np.float64)  # (D/2,)
    angle = np.arange(length, dtype=np.float64)[:, None] * theta[None, :]  # (T, D/2)
    return np.cos(angle).astype(np.float32), np.sin(angle).astype(np.float32)
