"""Argument checks shared by every public entry point.

Each check raises ``ValueError`` whose message names the parameter and the allowed values, so a
caller (or the command line, which prints it as one line) can tell at once what to change.
"""

from __future__ import annotations

import math
import numbers

import numpy as np


def _describe_bounds(lo, hi, lo_open, hi_open) -> str:
    parts = []
    if lo is not None:
        parts.append(f"{'>' if lo_open else '>='} {lo}")
    if hi is not None:
        parts.append(f"{'<' if hi_open else '<='} {hi}")
    return " and ".join(parts)


def check_real(name: str, value, lo=None, hi=None, *, lo_open=False, hi_open=False) -> float:
    """Return ``value`` as a finite float inside the given bounds, or raise ``ValueError``."""
    bounds = _describe_bounds(lo, hi, lo_open, hi_open)
    allowed = f"a finite real number {bounds}".rstrip()
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    if lo is not None and (value < lo or (lo_open and value == lo)):
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    if hi is not None and (value > hi or (hi_open and value == hi)):
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    return value


def check_int(name: str, value, lo=None, hi=None) -> int:
    """Return ``value`` as an int inside ``[lo, hi]``.

    Integral floats such as ``1e5`` are accepted because they are how people write context
    lengths; ``2.5``, ``True`` and strings are not.
    """
    allowed = f"an integer {_describe_bounds(lo, hi, False, False)}".rstrip()
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    if isinstance(value, bool | np.bool_):
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    if isinstance(value, numbers.Integral):
        out = int(value)
    elif isinstance(value, numbers.Real) and math.isfinite(value) and float(value).is_integer():
        out = int(value)
    else:
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    if (lo is not None and out < lo) or (hi is not None and out > hi):
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    return out


def check_finite_array(name: str, array, *, ndim=None, dtype=None) -> np.ndarray:
    """Return ``array`` as an ndarray with only finite entries (and the given rank)."""
    raw = np.asarray(array)
    if raw.dtype.kind not in "fiu":  # checked before any cast, which would drop an imaginary part
        raise ValueError(f"{name} must contain only finite real numbers, got dtype {raw.dtype}")
    out = raw if dtype is None else raw.astype(dtype, copy=False)
    if ndim is not None and out.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-D array, got shape {out.shape}")
    if not np.all(np.isfinite(out)):
        raise ValueError(f"{name} must contain only finite real numbers")
    return out
