"""Counter-based standard normals for the Monte Carlo kernels (numba).

Why not numpy's ``Generator``: the kernels run samples in parallel (``prange``), and a sample's
random numbers must depend only on ``(seed, sample index)``, never on which thread ran it, so the
results are bit-identical for any ``NUMBA_NUM_THREADS``. Each sample therefore gets its own
stream:

* **Seeding** — ``splitmix64`` (Steele, Lea & Flood 2014) hashes ``(seed, stream)`` into the two
  64-bit state words of the generator. ``splitmix64``'s finaliser is a bijection, so different
  streams of one seed start from different states; the starting points are effectively random in
  a period of ``2^128 − 1``, so streams of ~1e5 numbers do not overlap in practice.
* **Uniform bits** — ``xoroshiro128++`` (Blackman & Vigna 2019), a few integer operations per
  64-bit output.
* **Normals** — the 256-layer ziggurat of Marsaglia & Tsang (2000), in the variant numpy uses
  (52-bit magnitude, 8-bit layer index and one sign bit from one 64-bit draw; exponential tail
  beyond ``r = 3.6541528853610088``). About 98.5 % of draws need one table lookup, one compare
  and one multiply.

numba pitfall: ``uint64 (op) int literal`` silently becomes ``float64``, so every constant used
with the state is a module-level ``np.uint64``.

:func:`normals` returns exactly the numbers stream ``stream`` of a simulation with ``seed``
consumes, so tests and the numpy oracle can rebuild the kernel's logits.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from .._infra.memory import check_memory
from .._infra.validate import check_int

__all__ = ["ZIGGURAT_R", "normals", "ziggurat_tables"]

_U64 = np.uint64
_GOLDEN = _U64(0x9E3779B97F4A7C15)
_MIX1 = _U64(0xBF58476D1CE4E5B9)
_MIX2 = _U64(0x94D049BB133111EB)
_STREAM_KEY = _U64(0xD1B54A32D192ED03)  # odd constant separating the seed from the stream
_ONE = _U64(1)
_BYTE = _U64(0xFF)
_MANTISSA = _U64(0x000FFFFFFFFFFFFF)  # 52 bits
_SH8, _SH9, _SH11 = _U64(8), _U64(9), _U64(11)
_SH17, _SH21, _SH28, _SH30 = _U64(17), _U64(21), _U64(28), _U64(30)
_SH27, _SH31, _SH47, _SH49 = _U64(27), _U64(31), _U64(47), _U64(49)
_SH36, _SH15 = _U64(36), _U64(15)
_TWO_M53 = 1.0 / 9007199254740992.0  # 2^-53

ZIGGURAT_R = 3.6541528853610088  # start of the tail for 256 layers (Marsaglia & Tsang 2000)
"""Start of the normal tail for 256 ziggurat layers (Marsaglia & Tsang 2000)."""
_INV_R = 1.0 / ZIGGURAT_R


def ziggurat_tables(layers: int = 256) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Tables ``(k, w, f)`` of the 256-layer ziggurat for :math:`f(x) = \exp(-x^2/2)`.

    Layer 0 is the base strip ``[0, r] × [0, f(r)]`` plus the tail, with virtual width
    ``v / f(r)``; layer ``i ≥ 1`` is the rectangle ``[0, x_i] × [f(x_i), f(x_{i−1})]``, all of
    area ``v``. A 52-bit magnitude ``u`` gives :math:`x = u\, w[i]`; ``u < k[i]`` means ``x`` lies
    under ``f`` for sure (``x < x_{i−1}``); otherwise the wedge is tested with ``f``.

    Parameters
    ----------
    layers : int
        256 (``r`` is tabulated for 256 layers).

    Returns
    -------
    k, w, f : numpy.ndarray

    Raises
    ------
    ValueError
        If ``layers`` is not 256.
    """
    if layers != 256:
        raise ValueError(f"layers must be 256 (r is tabulated for 256 layers), got {layers!r}")
    r = ZIGGURAT_R
    f = lambda x: math.exp(-0.5 * x * x)  # noqa: E731
    area = r * f(r) + math.sqrt(math.pi / 2) * math.erfc(r / math.sqrt(2))  # strip + tail
    x = np.zeros(layers)
    x[layers - 1] = r
    for i in range(layers - 1, 1, -1):
        x[i - 1] = math.sqrt(-2.0 * math.log(area / x[i] + f(x[i])))
    # x[0] = 0 is the top of the density; the recursion closes there up to ~1e-12 by choice of r.
    scale = 2.0**52
    k = np.zeros(layers, dtype=np.uint64)
    w = np.zeros(layers)
    fx = np.zeros(layers)
    base_width = area / f(r)
    k[0] = np.uint64(math.floor(r / base_width * scale))
    w[0] = base_width / scale
    fx[0] = 1.0
    for i in range(1, layers):
        k[i] = np.uint64(math.floor(x[i - 1] / x[i] * scale))
        w[i] = x[i] / scale
        fx[i] = f(x[i])
    return k, w, fx


ZIG_K, ZIG_W, ZIG_F = ziggurat_tables()
for _table in (ZIG_K, ZIG_W, ZIG_F):
    _table.setflags(write=False)


@numba.njit(cache=True, inline="always")
def _mix64(z):
    z = (z ^ (z >> _SH30)) * _MIX1
    z = (z ^ (z >> _SH27)) * _MIX2
    return z ^ (z >> _SH31)


@numba.njit(cache=True)
def stream_state(seed, stream):
    """xoroshiro128++ state ``(s0, s1)`` of stream ``stream`` (uint64 inputs)."""
    z = _mix64(seed ^ _GOLDEN) ^ (stream * _STREAM_KEY)
    z = z + _GOLDEN
    s0 = _mix64(z)
    z = z + _GOLDEN
    s1 = _mix64(z)
    if s0 == _U64(0) and s1 == _U64(0):  # the one forbidden state
        s0 = _ONE
    return s0, s1


@numba.njit(cache=True, inline="always")
def _rotl(x, k, k_complement):
    return (x << k) | (x >> k_complement)


@numba.njit(cache=True, inline="always")
def next_u64(s0, s1):
    """One xoroshiro128++ step: ``(output, s0, s1)``."""
    out = _rotl(s0 + s1, _SH17, _SH47) + s0
    s1 = s1 ^ s0
    s0 = _rotl(s0, _SH49, _SH15) ^ s1 ^ (s1 << _SH21)
    s1 = _rotl(s1, _SH28, _SH36)
    return out, s0, s1


@numba.njit(cache=True, inline="always")
def _next_open_unit(s0, s1):
    """Uniform double in ``(0, 1]`` (never 0, so its log is finite)."""
    bits, s0, s1 = next_u64(s0, s1)
    return (np.float64(bits >> _SH11) + 1.0) * _TWO_M53, s0, s1


@numba.njit(cache=True, inline="always")
def _ziggurat_candidate(bits):
    """Split one 64-bit draw into ``(layer, negative, inside, x)``: 8 bits of layer, one sign
    bit, a 52-bit magnitude scaled to ``x``; ``inside`` means ``x`` is under the density for
    sure (the fast path)."""
    layer = np.intp(bits & _BYTE)
    negative = ((bits >> _SH8) & _ONE) == _ONE
    magnitude = (bits >> _SH9) & _MANTISSA
    x = np.float64(np.int64(magnitude)) * ZIG_W[layer]
    return layer, negative, magnitude < ZIG_K[layer], x


@numba.njit(cache=True)
def _normal_slow_path(layer, x, negative, s0, s1):
    """Wedge or tail of the ziggurat (about 1.5 % of draws); loops until a value is accepted.

    The tables are module globals (numba freezes them as constants): passing arrays into a
    per-draw call would cost two atomic reference-count updates per normal.
    """
    while True:
        if layer == 0:  # tail beyond r: Marsaglia's exponential method
            while True:
                u1, s0, s1 = _next_open_unit(s0, s1)
                u2, s0, s1 = _next_open_unit(s0, s1)
                xx = -_INV_R * math.log(u1)
                yy = -math.log(u2)
                if yy + yy > xx * xx:
                    value = ZIGGURAT_R + xx
                    return (-value if negative else value), s0, s1
        u, s0, s1 = _next_open_unit(s0, s1)
        if (ZIG_F[layer - 1] - ZIG_F[layer]) * u + ZIG_F[layer] < math.exp(-0.5 * x * x):
            return (-x if negative else x), s0, s1
        # Rejected: draw afresh (same decomposition as the fast path).
        bits, s0, s1 = next_u64(s0, s1)
        layer, negative, inside, x = _ziggurat_candidate(bits)
        if inside:
            return (-x if negative else x), s0, s1


@numba.njit(cache=True)
def fill_normals(s0, s1, out, count):
    """Write ``count`` standard normals into ``out[:count]``; returns the new state ``(s0, s1)``.

    The fast path is inlined into the loop (``inline="always"``) so LLVM keeps the state in
    registers; only the rare wedge/tail draws call out.
    """
    for i in range(count):
        bits, s0, s1 = next_u64(s0, s1)
        layer, negative, inside, x = _ziggurat_candidate(bits)
        if inside:
            out[i] = -x if negative else x
        else:
            out[i], s0, s1 = _normal_slow_path(layer, x, negative, s0, s1)
    return s0, s1


@numba.njit(cache=True)
def _stream_normals(seed, stream, out):
    s0, s1 = stream_state(seed, stream)
    fill_normals(s0, s1, out, out.size)


def normals(seed, stream, n) -> np.ndarray:
    """The ``n`` standard normals that sample ``stream`` of a simulation with ``seed`` draws.

    :func:`sia_theory.gaussian.montecarlo.simulate_gaussian_logits` gives sample ``i`` the base
    logits ``L̄_t = normals(seed, i, n_ctx)[t]`` (SI §3.2 Gaussian model), in order of distance
    ``t``.

    Parameters
    ----------
    seed, stream : int
        In ``[0, 2^64 − 1]``.
    n : int
        ``>= 0``.

    Returns
    -------
    numpy.ndarray
        float64 ``(n,)``.

    Raises
    ------
    ValueError
        If an argument is out of range or the draws would not fit in memory.

    Examples
    --------
    >>> bool(np.array_equal(normals(0, 3, 5), normals(0, 3, 8)[:5]))  # a prefix of the stream
    True
    """
    seed = check_int("seed", seed, lo=0, hi=2**64 - 1)
    stream = check_int("stream", stream, lo=0, hi=2**64 - 1)
    n = check_int("n", n, lo=0)
    check_memory("n", n, 8 * n)
    out = np.empty(n)
    _stream_normals(np.uint64(seed), np.uint64(stream), out)
    return out
