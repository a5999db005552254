r"""Rotary position embedding (RoPE, Su et al. 2024, RoFormer eq. 34) and p-RoPE: the rotation
the position encodings of :mod:`~sia_theory.attention.positional` and the context-extension
encodings of :mod:`~sia_theory.attention.rope_scaling` share.

Frequency :math:`\theta_k = \mathrm{base}^{-2k/D}`, ``k = 0..D/2−1``; dimension ``k`` is paired with
``k + D/2`` (the half-split layout of GPT-NeoX and modded-nanogpt). With ``fraction = p < 1`` it is
p-RoPE (Barbero et al. 2024, "Round and round we go"): only the ``round(p·D/2)`` highest frequencies
rotate. All names are also importable from :mod:`~sia_theory.attention.positional`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._infra.validate import check_int, check_real, one_of

__all__ = ["rope", "rope_frequencies", "RoPE", "check_head_dim", "check_x", "check_positions",
           "rotate"]


def check_head_dim(head_dim, multiple=2):
    """``head_dim`` as an int, checked to be a positive multiple of ``multiple``.

    Parameters
    ----------
    head_dim : int
        The head dimension D.
    multiple : int, optional
        What D must be a multiple of (2: pairs of dimensions rotate together).

    Returns
    -------
    int
        ``head_dim``.

    Raises
    ------
    ValueError
        If ``head_dim`` is not an integer >= ``multiple`` or not a multiple of it.
    """
    head_dim = check_int("head_dim", head_dim, lo=multiple)
    if head_dim % multiple:
        raise ValueError(f"head_dim D must be a multiple of {multiple} for this rotary "
                         f"encoding (pairs of dimensions rotate together), got D={head_dim}")
    return head_dim


def rope_frequencies(head_dim, base=10000.0, fraction=1.0) -> np.ndarray:
    r"""Angular frequencies :math:`\theta_k = \mathrm{base}^{-2k/D}` of RoPE (RoFormer eq. 15);
    p-RoPE (``fraction < 1``) sets all but the ``round(fraction·D/2)`` highest to 0.

    Parameters
    ----------
    head_dim : int
        ``D``, even and ``>= 2``.
    base : float
        ``> 1``.
    fraction : float
        Share of the ``D/2`` frequencies that rotate, in ``(0, 1]``.

    Returns
    -------
    numpy.ndarray
        float64 ``(D/2,)``.

    Raises
    ------
    ValueError
        If an argument is outside its range, or ``fraction`` keeps no frequency.

    Examples
    --------
    >>> rope_frequencies(4, base=100.0).tolist()
    [1.0, 0.1]
    """
    head_dim = check_head_dim(head_dim)
    base = check_real("base", base, lo=1, lo_open=True)
    fraction = check_real("fraction", fraction, lo=0, hi=1, lo_open=True)
    n_pairs = head_dim // 2
    n_rotating = int(round(fraction * n_pairs))
    if n_rotating < 1:
        raise ValueError(f"fraction must keep at least one of the {n_pairs} frequencies of "
                         f"head_dim={head_dim}: fraction >= {0.5 / n_pairs:.4g}, got {fraction}")
    theta = base ** (-2.0 * np.arange(n_pairs) / head_dim)  # (D/2,), highest first
    theta[n_rotating:] = 0.0
    return theta


def check_x(x, multiple):
    """``x`` as an array of queries or keys fit for a rotary encoding.

    Parameters
    ----------
    x : array_like, shape (..., T, D)
        float32 or float64, finite.
    multiple : int
        What the head dimension D must be a positive multiple of.

    Returns
    -------
    numpy.ndarray
        ``np.asarray(x)`` (no copy, dtype kept).

    Raises
    ------
    ValueError
        If the dtype is not float32/float64, ``x`` has fewer than 2 axes, D is 0 or not a
        multiple of ``multiple``, or an entry is not finite.
    """
    x = np.asarray(x)
    if x.dtype not in (np.float32, np.float64):
        raise ValueError(f"x must be a float32 or float64 array, got dtype {x.dtype}")
    if x.ndim < 2:
        raise ValueError(f"x must have shape (..., T, D), got shape {x.shape}")
    if x.shape[-1] % multiple or x.shape[-1] == 0:
        raise ValueError(f"x must have a head dimension D (last axis) that is a positive "
                         f"multiple of {multiple} for this rotary encoding, got D={x.shape[-1]}")
    if not np.all(np.isfinite(x)):
        raise ValueError("x must contain only finite numbers")
    return x


def check_positions(positions) -> np.ndarray:
    """``positions`` as a non-empty 1-D integer array: what an encoding whose frequencies depend
    on the sequence length (``int(positions.max()) + 1``) is called with.

    Parameters
    ----------
    positions : array_like, shape (T,)
        The position of each row.

    Returns
    -------
    numpy.ndarray
        ``np.asarray(positions)`` (no copy, dtype kept).

    Raises
    ------
    ValueError
        If ``positions`` is not a non-empty 1-D array of integers.
    """
    positions = np.asarray(positions)
    if positions.ndim != 1 or positions.size == 0 or positions.dtype.kind not in "iu":
        raise ValueError(f"positions must be a non-empty 1-D integer array, got {positions!r}")
    return positions


def rotate(x, positions, theta):
    """Rotate each pair ``(k, k + D/2)`` of ``x`` at position ``t`` by the angle
    ``positions[t]·theta[k]`` (the half-split layout of the module docstring).

    Parameters
    ----------
    x : numpy.ndarray, shape (..., T, D)
        Queries or keys (float32 or float64; see :func:`check_x`).
    positions : array_like, shape (T,)
        The position of each row, finite reals (integers or interpolated positions).
    theta : numpy.ndarray, shape (D/2,)
        Angular frequencies, e.g. from :func:`rope_frequencies` (0 leaves a pair unrotated).

    Returns
    -------
    numpy.ndarray
        The rotated array, same shape and dtype as ``x`` (angles computed in float64).

    Raises
    ------
    ValueError
        If D is not ``2·theta.size``, ``positions`` is not 1-D with T entries, or it holds
        a non-real or non-finite value.
    """
    if x.shape[-1] != 2 * theta.size:
        raise ValueError(f"x must have head dimension D={2 * theta.size}, got shape {x.shape}")
    positions = np.asarray(positions)
    if positions.ndim != 1 or positions.size != x.shape[-2]:
        raise ValueError(f"positions must be a 1-D array with one entry per position "
                         f"(T={x.shape[-2]}), got shape {positions.shape}")
    if positions.dtype.kind not in "iuf" or not np.all(np.isfinite(positions)):
        raise ValueError("positions must contain finite real numbers")
    angle = positions.astype(np.float64)[:, None] * theta[None, :]  # (T, D/2)
    # angles in float64 (positions up to 1e5+ times theta), the rotation in x's dtype
    cos, sin = np.cos(angle).astype(x.dtype), np.sin(angle).astype(x.dtype)
    half = theta.size
    x1, x2 = x[..., :half], x[..., half:]  # (..., T, D/2) each
    out = np.empty(x.shape, x.dtype)  # (..., T, D)
    lo, hi = out[..., :half], out[..., half:]
    np.multiply(x1, cos, out=lo)
    lo -= x2 * sin
    np.multiply(x1, sin, out=hi)
    hi += x2 * cos
    return out


def rope(x, positions, base=10000.0, fraction=1.0):
    r"""Rotary position embedding of ``x`` at integer ``positions``.

    RoPE (Su et al. 2024): pair ``(x_k, x_{k+D/2})`` is rotated by ``position·θ_k`` with
    :math:`\theta_k = \mathrm{base}^{-2k/D}`, so ``rope(q, i)·rope(k, j)`` depends on ``i − j`` only
    and norms are preserved. ``fraction < 1`` is p-RoPE (Barbero et al. 2024): only the
    highest-frequency ``round(fraction·D/2)`` pairs rotate.

    Parameters
    ----------
    x : numpy.ndarray
        Queries or keys ``(..., T, D)``, float32 or float64, finite, ``D`` even.
    positions : array_like
        ``(T,)`` finite positions.
    base, fraction
        As for :func:`rope_frequencies`.

    Returns
    -------
    numpy.ndarray
        ``x`` rotated, same shape and dtype.

    Raises
    ------
    ValueError
        If ``x`` or ``positions`` is malformed or ``base``/``fraction`` out of range.
    """
    x = check_x(x, 2)
    return rotate(x, positions, rope_frequencies(x.shape[-1], base, fraction))


@dataclass(frozen=True, init=False)
class RoPE:
    """RoPE / p-RoPE with a given base and fraction of rotating frequencies (see :func:`rope`).

    Parameters
    ----------
    base : float, optional
        ``> 1`` (default 10000); ``rope_theta`` (transformers' name) is accepted instead.
    fraction : float
        Share of the frequencies that rotate, in ``(0, 1]``.
    rope_theta : float, optional
        Another name for ``base``; give at most one of the two.

    Raises
    ------
    ValueError
        If both ``base`` and ``rope_theta`` are given or a value is out of range.
    """

    base: float = 10000.0
    fraction: float = 1.0

    def __init__(self, base=None, fraction=1.0, *, rope_theta=None):
        name, base = one_of(10000.0, base=base, rope_theta=rope_theta)
        object.__setattr__(self, "base", check_real(name, base, lo=1, lo_open=True))
        object.__setattr__(self, "fraction", check_real("fraction", fraction, lo=0, hi=1,
                                                        lo_open=True))

    def frequencies(self, head_dim) -> np.ndarray:
        """The angular frequencies this encoding rotates pair ``(k, k + D/2)`` by, shape
        ``(D/2,)`` (:func:`rope_frequencies`)."""
        return rope_frequencies(head_dim, self.base, self.fraction)

    def __call__(self, x, positions):
        return rope(x, positions, self.base, self.fraction)
