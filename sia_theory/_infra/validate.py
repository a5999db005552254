"""Argument checks shared by every public entry point.

Each check raises ``ValueError`` whose message names the parameter and the allowed values, so a
caller (or the command line, which prints it as one line) can tell at once what to change.
Values are checked *before* any conversion: a huge Python integer never reaches ``float()``
(which would raise ``OverflowError``) or numpy (which would make an ``object`` array), and an
array's dtype is checked before a cast to float (which would drop an imaginary part or fail on
a string with a message that does not name the parameter).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = ["MAX_INT", "check_real", "check_int", "check_finite_array", "check_nonempty",
           "check_sequence", "check_columns", "one_of"]

# Integers are bounded by int64 unless a caller allows more (the Monte Carlo seeds use 2**64 - 1):
# every integer here ends up in a numpy array or a float, where larger values overflow.
MAX_INT = 2**63 - 1


def _describe_bounds(lo, hi, lo_open, hi_open) -> str:
    parts = []
    if lo is not None:
        parts.append(f"{'>' if lo_open else '>='} {lo}")
    if hi is not None:
        parts.append(f"{'<' if hi_open else '<='} {hi}")
    return " and ".join(parts)


def _short(value) -> str:
    """``repr(value)`` cut to a readable length (a 400-digit integer is not)."""
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:40]}...{text[-10:]} ({len(text)} chars)"


def _scalar(value):
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return value.item()
    return value


def check_real(name: str, value, lo=None, hi=None, *, lo_open=False, hi_open=False) -> float:
    """Return ``value`` as a finite float inside the given bounds, or raise ``ValueError``.

    Integers too large for a float (``10**400``) are rejected here, not by an ``OverflowError``
    further down.
    """
    bounds = _describe_bounds(lo, hi, lo_open, hi_open)
    allowed = f"a finite real number {bounds}".rstrip()
    value = _scalar(value)
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be {allowed}, got {_short(value)}")
    try:
        out = float(value)
    except (OverflowError, ValueError, TypeError):
        raise ValueError(f"{name} must be {allowed}, got {_short(value)} (too large for a "
                         "float)") from None
    if not math.isfinite(out):
        raise ValueError(f"{name} must be {allowed}, got {_short(value)}")
    if lo is not None and (out < lo or (lo_open and out == lo)):
        raise ValueError(f"{name} must be {allowed}, got {_short(value)}")
    if hi is not None and (out > hi or (hi_open and out == hi)):
        raise ValueError(f"{name} must be {allowed}, got {_short(value)}")
    return out


def check_int(name: str, value, lo=None, hi=None) -> int:
    """Return ``value`` as an int inside ``[lo, hi]`` (``hi`` defaults to :data:`MAX_INT`).

    Integral floats such as ``1e5`` are accepted because they are how people write context
    lengths; ``2.5``, ``True``, complex numbers and strings are not.
    """
    hi = MAX_INT if hi is None else hi
    allowed = f"an integer {_describe_bounds(lo, hi, False, False)}".rstrip()
    value = _scalar(value)
    if isinstance(value, bool | np.bool_):
        raise ValueError(f"{name} must be {allowed}, got {_short(value)}")
    if isinstance(value, numbers.Integral):
        out = int(value)
    elif isinstance(value, numbers.Real) and math.isfinite(value) and float(value).is_integer():
        out = int(value)
    else:
        raise ValueError(f"{name} must be {allowed}, got {_short(value)}")
    if (lo is not None and out < lo) or out > hi:
        raise ValueError(f"{name} must be {allowed}, got {_short(value)}")
    return out


def check_finite_array(name: str, array, *, ndim=None, dtype=None, lo=None, integer=False,
                       min_size=0) -> np.ndarray:
    """Return ``array`` as an ndarray with only finite real entries, or raise ``ValueError``.

    The dtype is checked before any cast (complex, string, object and bool arrays are refused
    with the parameter's name), then ``ndim``, the bound ``entries >= lo``, ``integer`` (every
    entry a whole number) and ``min_size`` (at least that many entries).
    """
    try:
        raw = np.asarray(array)
    except (ValueError, TypeError, OverflowError) as err:  # ragged nesting, odd objects
        raise ValueError(f"{name} must be an array of finite real numbers: {err}") from None
    if raw.dtype.kind not in "fiu":  # checked before any cast, which would drop an imaginary part
        raise ValueError(f"{name} must contain only finite real numbers, got dtype {raw.dtype}")
    out = raw if dtype is None else raw.astype(dtype, copy=False)
    if ndim is not None and out.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-D array, got shape {out.shape}")
    if out.size < min_size:
        raise ValueError(f"{name} must have at least {min_size} entries, got shape {out.shape}")
    if out.dtype.kind == "f" and not np.all(np.isfinite(out)):
        raise ValueError(f"{name} must contain only finite real numbers")
    if lo is not None and out.size and np.min(out) < lo:
        raise ValueError(f"{name} must contain only values >= {lo}, got min {float(np.min(out))!r}")
    if integer and out.dtype.kind == "f" and not np.all(out == np.round(out)):
        raise ValueError(f"{name} must contain only whole numbers")
    return out


def check_nonempty(name: str, values) -> list:
    """``values`` (any iterable) as a list with at least one element, or ``ValueError``."""
    try:
        out = list(np.atleast_1d(values).ravel()) if isinstance(values, np.ndarray) \
            else list(values)
    except TypeError:
        out = [values]
    if not out:
        raise ValueError(f"{name} must contain at least one value, got {values!r}")
    return out


def check_sequence(name: str, values, *, pairs: bool = False) -> list:
    """``values`` as a list (of 2-tuples if ``pairs``), or ``ValueError`` naming ``name``:
    strings, bytes and mappings are not sequences here, and a pair is exactly two items."""
    kind = "a sequence of (lo, hi) pairs" if pairs else "a sequence of values"
    if isinstance(values, str | bytes | dict):
        raise ValueError(f"{name} must be {kind}, got {values!r}")
    try:
        items = list(values)
    except TypeError:
        raise ValueError(f"{name} must be {kind}, got {values!r}") from None
    if pairs:
        for item in items:
            if isinstance(item, str | bytes) or np.ndim(item) != 1 or len(item) != 2:
                raise ValueError(f"{name} must be {kind}, got {item!r} in {values!r}")
        return [tuple(item) for item in items]
    return items


def check_columns(name: str, frame, columns) -> None:
    """``ValueError`` naming ``name`` unless ``frame`` is a DataFrame with every one of
    ``columns``."""
    import pandas as pd  # start-up: pandas (0.25 s), only for DataFrame checks

    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"{name} must be a pandas DataFrame, got {type(frame).__name__}")
    missing = set(columns) - set(frame.columns)
    if missing:
        raise ValueError(f"{name} must have the columns {sorted(columns)}; missing "
                         f"{sorted(missing)}")


def one_of(default, **synonyms) -> tuple[str, object]:
    """``(name, value)`` of the one synonym given (not ``None``), e.g. a parameter under its own
    name and under the reference implementation's (``base`` / ``rope_theta``): ``one_of(1e4,
    base=None, rope_theta=5e5)`` is ``("rope_theta", 5e5)``. None given: the first name and
    ``default``. Two given: ``ValueError`` naming both (checked before any work)."""
    given = [(name, value) for name, value in synonyms.items() if value is not None]
    if len(given) > 1:
        names = " and ".join(name for name, _ in given)
        raise ValueError(f"{names} are two names for one parameter: give only one, got "
                         + ", ".join(f"{name}={_short(value)}" for name, value in given))
    return given[0] if given else (next(iter(synonyms)), default)
