"""The encoding's rotation tables; the transform's ``(a, m)`` tables are the public
:func:`sia_theory.export.coefficient_tables` (the route every framework shares).

Rotation: ``θ = encoding.frequencies(D)`` (the same function the numpy encoding rotates
with), angles ``position·θ`` in float64, ``cos`` and ``sin`` rounded to float32, shape
``(T, D/2)``; pair ``(k, k + D/2)`` rotates (half-split, as :func:`~sia_theory.attention.rope`).
"""

from __future__ import annotations

import numpy as np

from ..transforms.tables import check_tables

__all__ = ["rotation_tables", "check_float32"]


def check_float32(transform, n_heads: int, length: int) -> None:
    """Check that a transform's coefficients fit float32, the trainer's precision, up to the
    longest length a run will see: :func:`sia_theory.transforms.tables.check_tables` in float32
    (``ValueError`` naming the transform, the coefficient and the first distance or context and
    head where ``coefficients()`` returns NaN or inf, or a finite value overflows)."""
    check_tables(transform, n_heads, length, np.float32)


def rotation_tables(position, head_dim: int, length: int) -> tuple[np.ndarray, np.ndarray]:
    """``(cos, sin)`` float32 ``(T, D/2)`` of ``position`` (an encoding with ``frequencies``)
    at positions ``0 … length−1``."""
    theta = np.asarray(position.frequencies(head_dim), dtype=np.float64)  # (D/2,)
    angle = np.arange(length, dtype=np.float64)[:, None] * theta[None, :]  # (T, D/2)
    return np.cos(angle).astype(np.float32), np.sin(angle).astype(np.float32)
