"""Vectorisable ``exp`` for numba loops (numba has no vector ``exp`` without Intel SVML).

``math.exp`` inside a numba loop is a scalar libm call, so LLVM cannot vectorise the loop. The
functions here are a Cody–Waite range reduction ``d = k·ln2 + r`` (``|r| <= ln2/2``), a
polynomial for ``e^r`` and ``2^k`` built from its bit pattern: straight-line arithmetic that
LLVM turns into SIMD code. Both take arguments ``<= 0`` (a logit minus a running maximum).

Each sets its own fast-math flags (contraction to FMA only): numba lets a callee inherit the
caller's flags unless it sets its own, and reassociation would undo the Cody–Waite reduction
(errors ~2e-14 instead of ~2e-16). No numba-level inlining either, for the same reason; LLVM
still inlines and vectorises the call.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

__all__ = ["EXP_FLOOR", "exp_nonpositive", "exp_nonpositive32", "maxnum"]

# Logit differences below this are treated as e^d = e^-708 (terms under 1e-307 of the largest,
# which is 1): exp and d·e^d stay finite even when L − max is −inf (logits spanning ±1e308).
EXP_FLOOR = -708.0


@intrinsic
def _bits_as_float64(typingctx, bits):
    """Reinterpret an int64 bit pattern as a float64 (LLVM bitcast; free, vectorisable)."""

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(types.int64), codegen


@intrinsic
def _bits_as_float32(typingctx, bits):
    """Reinterpret an int32 bit pattern as a float32."""

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())

    return types.float32(types.int32), codegen


@intrinsic
def maxnum(typingctx, a, b):
    """IEEE ``maxNum`` (LLVM ``llvm.maxnum``): the larger of two floats of one type, the other
    one when either is NaN. Unlike ``max``, LLVM vectorises it as a reduction."""
    if a != b or not isinstance(a, types.Float):
        return None

    def codegen(context, builder, signature, args):
        lty = args[0].type
        fn = builder.module.declare_intrinsic("llvm.maxnum", [lty],
                                              ir.FunctionType(lty, [lty, lty]))
        return builder.call(fn, args)

    return a(a, b), codegen


@numba.njit(cache=True, fastmath={"contract"})
def exp_nonpositive(d):
    """``exp(d)`` for ``d <= 0`` in float64, within 4e-16 relative of libm.

    fdlibm's split of ``ln2``, a degree-13 Taylor polynomial (truncation ``< 5e-18`` relative).
    Arguments below ``-708`` return ``e^{-708}`` (~3e-308) instead of underflowing: every sum
    they enter already holds a term equal to 1, so this changes nothing. NaN stays NaN.
    """
    d = max(d, EXP_FLOOR)
    k = math.floor(d * 1.4426950408889634 + 0.5)
    r = (d - k * 6.93147180369123816490e-01) - k * 1.90821492927058770002e-10
    p = 1.0 / 6227020800.0
    p = p * r + 1.0 / 479001600.0
    p = p * r + 1.0 / 39916800.0
    p = p * r + 1.0 / 3628800.0
    p = p * r + 1.0 / 362880.0
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    return p * _bits_as_float64((np.int64(k) + 1023) << 52)


# float32 constants: a Python float literal would promote every operation to float64.
_F32 = np.float32
_LOG2E32, _HALF32, _ONE32 = _F32(1.4426950408889634), _F32(0.5), _F32(1.0)
_LN2_HI32, _LN2_LO32 = _F32(0.693359375), _F32(-2.12194440e-4)  # Cephes' split of ln 2
_EXPF = tuple(_F32(c) for c in (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3,
                                4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1))
_CLAMP32, _UNDERFLOW32, _MIN_EXP32 = _F32(-103.0), _F32(-87.33), _F32(-126.0)


@numba.njit(cache=True, fastmath={"contract"})
def exp_nonpositive32(d):
    """``exp(d)`` for float32 ``d <= 0`` in float32 arithmetic, within 1.3 ulp (7.5e-8
    relative, measured against float64 over ``[-87, 0]``).

    Cephes ``expf``: ``e^r = 1 + r + r² P(r)`` with a degree-5 minimax ``P``. Below ``-87.33``
    (``e^d`` under the smallest normal float32, 1.2e-38 of the row's largest weight) it returns
    exactly 0, so a ``-inf`` argument gives 0. NaN stays NaN.
    """
    d = max(d, _CLAMP32)  # keeps 2^k representable; NaN passes through
    k = np.floor(d * _LOG2E32 + _HALF32)
    r = (d - k * _LN2_HI32) - k * _LN2_LO32
    p = _EXPF[0]
    p = p * r + _EXPF[1]
    p = p * r + _EXPF[2]
    p = p * r + _EXPF[3]
    p = p * r + _EXPF[4]
    p = p * r + _EXPF[5]
    p = p * (r * r) + r + _ONE32
    scale = _bits_as_float32((np.int32(max(k, _MIN_EXP32)) + np.int32(127)) << np.int32(23))
    return _F32(0.0) if d < _UNDERFLOW32 else p * scale
