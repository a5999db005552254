"""A transform as arrays: the per-position coefficient tables every framework route reads.

The logit of SI eq. 16 and of every zoo member is ``L = a(t, n)·S + m(t, n)`` with
``t = q_idx − kv_idx``, ``n = q_idx + 1`` (FlexAttention's ``score_mod`` convention). The tables
come from the transform's own ``coefficients`` in float64, rounded to ``dtype`` once, following
its declared ``depends_on`` exactly as the numpy reference does
(:mod:`sia_theory.attention.score_mods`):

* no ``"context"``: per distance, ``coefficients(t, h=h)`` for ``t = 0 … T−1``
  (``a_dist, m_dist``; one row per head with ``"head"``, else one row repeated);
* ``"context"`` without ``"distance"``: per query row, ``coefficients(0, n_ctx=n, h=h)`` for
  ``n = 1 … T`` (``a_row, m_row``);
* both: the full ``(H, T, T)`` tables ``a_full, m_full`` (``m = −inf`` after the query).

A separable scheme has all four of ``a_dist, m_dist, a_row, m_row`` (the unused pair is exactly
``1`` and ``0``, so ``a = a_row·a_dist`` and ``m = m_row + m_dist`` are exact): every such
scheme has the same array shapes, and one compiled function serves them all. The JAX trainer
(:mod:`sia_theory.training`), the FlexAttention ``score_mod``
(:mod:`sia_theory.export.torch_flex`) and the JAX routes (:mod:`sia_theory.export.jax_nn`) all
read these tables; they live beside the transforms so that neither the trainer nor the exports
depend on each other.
"""

from __future__ import annotations

import numpy as np

from .._infra.memory import check_memory
from .._infra.validate import check_int, check_real
from .base import Transform, declared_dependence, describe

__all__ = ["coefficient_tables", "check_tables", "is_separable", "heads_for", "table_score_mod",
           "check_softcap", "capped", "soft_cap",
           "table_bytes", "MAX_TABLE_BYTES"]


def is_separable(transform) -> bool:
    """Whether the transform's tables are per distance or per query row (not both)."""
    return not {"distance", "context"} <= declared_dependence(transform)


def _checked(transform, n_heads, length, dtype):
    """``(n_heads, length, dtype)`` checked (``ValueError`` naming the parameter)."""
    if not isinstance(transform, Transform):
        raise ValueError(f"transform must be a sia_theory Transform, got {transform!r}")
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        raise ValueError(f"dtype must be a float dtype, got {dtype}")
    return check_int("n_heads", n_heads, lo=1), check_int("length", length, lo=1), dtype


def coefficient_tables(transform, n_heads: int, length: int, dtype=np.float32) -> dict:
    """The coefficient tables of ``transform`` for ``n_heads`` heads and queries ``0 … length−1``
    (module docstring).

    Parameters
    ----------
    transform : Transform
        Any :class:`~sia_theory.transforms.Transform` (a zoo member, ``ScaleInvariant``, ...).
    n_heads : int >= 1
        Heads of the attention layer (the tables have one row per head).
    length : int >= 1
        The longest sequence: distances ``0 … length−1`` and contexts ``1 … length``.
    dtype : numpy float dtype
        The tables' dtype (default float32, what the trainer uses); computed in float64 and
        rounded once.

    Returns
    -------
    dict
        ``{"a_dist", "m_dist", "a_row", "m_row"}`` each ``(H, T)`` for a separable transform,
        else ``{"a_full", "m_full"}`` each ``(H, T, T)``.

    Examples
    --------
    >>> from sia_theory import ScaleInvariant
    >>> tables = coefficient_tables(ScaleInvariant(tau=10), n_heads=1, length=11)
    >>> round(float(tables["a_dist"][0, 10] ** 2), 5)  # a_10² = 1 + 2 log 2
    2.38629
    """
    n_heads, length, dtype = _checked(transform, n_heads, length, dtype)
    deps = declared_dependence(transform)
    heads = list(range(n_heads)) if "head" in deps else [None]
    ones, zeros = np.ones((n_heads, length), dtype), np.zeros((n_heads, length), dtype)
    if "context" not in deps:
        t = np.arange(length, dtype=np.float64)  # (T,)
        a, m = _per_head(transform, heads, n_heads, dtype,
                         lambda h: transform.coefficients(t, h=h),
                         lambda i: f"distance {i[1]}")  # (H, T)
        return {"a_dist": a, "m_dist": m, "a_row": ones, "m_row": zeros}
    if "distance" not in deps:
        n = np.arange(1, length + 1, dtype=np.float64)  # (T,) keys seen by each query
        a, m = _per_head(transform, heads, n_heads, dtype,
                         lambda h: transform.coefficients(np.zeros(length), n_ctx=n, h=h),
                         lambda i: f"context {i[1] + 1}")
        return {"a_dist": ones, "m_dist": zeros, "a_row": a, "m_row": m}
    check_memory("length", length,
                 2 * dtype.itemsize * n_heads * length * length + 3 * 8 * length * length)
    return _full_tables(transform, heads, n_heads, dtype, 0, length)


_CHECK_ROWS = 256  # query rows per block when checking a table of distance and context


def check_tables(transform, n_heads: int, length: int, dtype=np.float32) -> None:
    """Check that a transform's coefficients fit ``dtype`` (e.g. float32, the trainer's
    precision) for queries ``0 … length−1``, without holding a full table: tables of distance
    and context are built a block of query rows at a time.

    Raises
    ------
    ValueError
        Naming the transform, the coefficient and the first distance (or context) and head
        where its ``coefficients()`` returns a value that is not finite, or a finite float64
        value that overflows ``dtype``.
    """
    n_heads, length, dtype = _checked(transform, n_heads, length, dtype)
    if is_separable(transform):
        coefficient_tables(transform, n_heads, length, dtype)
        return
    heads = list(range(n_heads)) if "head" in declared_dependence(transform) else [None]
    for first in range(0, length, _CHECK_ROWS):
        _full_tables(transform, heads, n_heads, dtype, first, min(first + _CHECK_ROWS, length))


def _per_head(transform, heads, n_heads, dtype, fn, where):
    """``fn(h)`` = float64 ``(a, m)`` for each head, rounded to ``dtype`` and broadcast to
    ``n_heads``; ``where(index)`` names the entry at an index of the stacked arrays."""
    rows = [fn(h) for h in heads]
    a, m = (_rounded(transform, name, np.stack([r[j] for r in rows]), heads, where, dtype)
            for j, name in enumerate("am"))  # (H or 1, T...)
    shape = (n_heads,) + a.shape[1:]
    return np.broadcast_to(a, shape).copy(), np.broadcast_to(m, shape).copy()


def _full_tables(transform, heads, n_heads, dtype, first: int, stop: int) -> dict:
    """``a_full, m_full`` of the query rows ``first … stop−1`` (keys ``0 … stop−1``)."""
    q = np.arange(first, stop, dtype=np.float64)[:, None]  # (rows, 1)
    k = np.arange(stop, dtype=np.float64)[None, :]  # (1, T)
    t = np.maximum(q - k, 0.0)  # (rows, T); keys after the query get t = 0 (masked below)
    n = np.broadcast_to(q + 1.0, t.shape)
    a, m = _per_head(transform, heads, n_heads, dtype,
                     lambda h: transform.coefficients(t, n_ctx=n, h=h),
                     lambda i: f"distance {first + i[1] - i[2]}, context {first + i[1] + 1}")
    m[:, k > q] = -np.inf  # keys after the query
    return {"a_full": a, "m_full": m}


def _rounded(transform, name, values, heads, where, dtype) -> np.ndarray:
    """``values`` (float64) rounded to ``dtype``; ``ValueError`` naming the transform and the
    first entry where a coefficient is not finite (a subclass that overrides the public
    ``coefficients`` skips its finiteness check) or a finite one overflows ``dtype``."""
    with np.errstate(over="ignore"):  # an overflow is reported below, naming where
        out = values.astype(dtype)
    if np.isfinite(out).all():
        return out
    finite = np.isfinite(values).all()
    index = tuple(int(i) for i in np.argwhere(~np.isfinite(out if finite else values))[0])
    head = "" if heads[index[0]] is None else f", head {heads[index[0]]}"
    if not finite:
        raise ValueError(f"{describe(transform)}: its coefficients() returns {name} = "
                         f"{values[index]:g}, not a finite number, first at {where(index)}{head}")
    raise ValueError(f"{describe(transform)}: its coefficient {name} = {values[index]:g} "
                     f"overflows {dtype} (largest {np.finfo(dtype).max:.2g}), the precision "
                     f"of the tables, first at {where(index)}{head}")


def heads_for(transform, n_heads):
    """The number of table rows: ``n_heads`` (or the transform's own ``n_heads``) for a
    head-dependent transform, else ``None`` (one row serves every head)."""
    if not isinstance(transform, Transform):
        raise ValueError(f"transform must be a sia_theory Transform, got {transform!r}")
    if "head" not in declared_dependence(transform):
        return None if n_heads is None else check_int("n_heads", n_heads, lo=1)
    n_heads = transform.n_heads if n_heads is None else check_int("n_heads", n_heads, lo=1)
    if n_heads is None:
        raise ValueError(f"n_heads is required: {transform!r} depends on the head")
    if transform.n_heads is not None and transform.n_heads != n_heads:
        raise ValueError(f"n_heads must be {transform.n_heads} for {transform!r}, got {n_heads}")
    return n_heads


MAX_TABLE_BYTES = 2**32
"""Default bound on the bytes of :func:`table_score_mod`'s tables (4 GiB)."""


def table_bytes(transform, n_heads: int, length: int, dtypes) -> int:
    """About the bytes :func:`table_score_mod` holds and builds for ``transform``: two tables
    ``a, m`` of ``n_heads`` rows (one without ``"head"``) and ``length + 1`` entries (distance
    or query row) or ``(length + 1)²`` (distance and context) per dtype of ``dtypes``, plus their
    float64 values before rounding (and, for the full tables, three float64 index grids).
    Arithmetic on the sizes only: nothing is allocated."""
    deps = declared_dependence(transform)
    rows = n_heads if "head" in deps else 1
    cells = (length + 1) ** 2 if {"distance", "context"} <= deps else length + 1
    held = sum(2 * rows * cells * np.dtype(d).itemsize for d in dtypes)
    grids = 3 * 8 * length * length if {"distance", "context"} <= deps else 8 * length
    return held + 2 * rows * cells * 8 + grids


def _with_sentinel(table, per_head: bool) -> np.ndarray:
    """``table`` with one NaN appended along each position axis (index ``length``)."""
    width = [(0, 0)] * per_head + [(0, 1)] * (table.ndim - per_head)
    return np.pad(table, width, constant_values=np.nan)


def check_softcap(softcap):
    """``softcap`` as a float > 0, or ``None``; ``ValueError`` naming it otherwise."""
    if softcap is None:
        return None
    return check_real("softcap", softcap, lo=0, lo_open=True)


def soft_cap(x, softcap, tanh=np.tanh):
    """``softcap·tanh(x/softcap)``: the tanh cap Gemma-2 puts on its scaled attention logits
    (transformers ``gemma2/modeling_gemma2.py``, ``eager_attention_forward``), in the
    framework of ``tanh`` (``np.tanh``, ``torch.tanh``, ``jnp.tanh``). The one place the
    package writes the cap."""
    return softcap * tanh(x / softcap)


def capped(score_mod, softcap, tanh):
    """``score_mod`` followed by the tanh cap ``softcap·tanh(x/softcap)`` (``tanh`` the
    framework's: ``torch.tanh``, ``jnp.tanh``, ``np.tanh``), as Gemma-2 caps its scaled
    logits (transformers ``gemma2/modeling_gemma2.py``, ``eager_attention_forward``)."""

    def capped_mod(score, b, h, q_idx, kv_idx):
        return soft_cap(score_mod(score, b, h, q_idx, kv_idx), softcap, tanh)

    return capped_mod


def table_score_mod(transform, n_heads, length, dtype, asarray, *, q_offset: int = 0,
                    max_bytes=MAX_TABLE_BYTES, is_float64=None, length_name: str = "length"):
    """The closure ``score_mod(score, b, h, q_idx, kv_idx) = a·score + m`` over the
    :func:`coefficient_tables` of ``transform``, each table passed through ``asarray``
    (``torch.as_tensor`` or ``jnp.asarray``) once.

    The closure gathers ``a, m`` at the query's absolute position ``q = q_idx + q_offset``:
    distance ``t = |q − kv_idx|`` (the package's convention for keys after the query, as
    :meth:`~sia_theory.transforms.Transform.score_mod`) and context ``n = q + 1``. Each table
    has one NaN entry appended (index ``length``) and the indices are clipped to ``[−1,
    length]`` (an array framework's compiled gather has no bounds check): a position at or
    above ``length``, or a negative one, reads the NaN (index ``−1`` is the last entry), so a
    table too short for the sequence gives NaN, not a plausible wrong number. A distance table
    is indexed by ``t`` alone, so it serves every pair of positions less than ``length`` apart.
    Index arrays only need the ``abs`` and ``clip(min=..., max=...)`` of torch tensors and JAX
    arrays, so one closure serves both; it runs on broadcast index grids, as FlexAttention's
    ``score_mod`` does. A separable scheme reads only the half of its tables it uses (the other
    is exactly ``1`` and ``0``).

    Parameters
    ----------
    transform : Transform
        Any :class:`~sia_theory.transforms.Transform`.
    n_heads : int >= 1 or None
        Rows of a head-dependent transform's tables (:func:`heads_for`); ignored otherwise.
    length : int >= 1
        Positions ``0 … length−1`` (distances ``0 … length−1``, contexts ``1 … length``).
    dtype : numpy float dtype or None
        The tables' dtype (float64 values rounded once); ``None`` builds float32 and float64
        tables and reads, per call, the float64 ones for float64 scores (``is_float64``) and
        the float32 ones for any other dtype.
    asarray : callable
        numpy table to the framework's array. With ``dtype=None`` it may return ``None`` for
        the float64 tables when the framework cannot hold float64 (JAX without
        ``jax_enable_x64``); float64 scores then raise ``ValueError``.
    q_offset : int >= 0
        Absolute position of query index 0: ``Tk − Tq`` for ``Tq`` new queries against a cache
        of ``Tk`` keys (decoding), ``0`` when queries and keys are the same positions.
    max_bytes : int >= 1 or None
        Bound on :func:`table_bytes` (default :data:`MAX_TABLE_BYTES`, 4 GiB; ``None``: the
        memory available now), checked before anything is allocated.
    is_float64 : callable or None
        ``is_float64(score.dtype)``, whether scores are float64 (default ``== np.float64``,
        right for numpy and JAX dtypes; torch passes its own).
    length_name : str
        The caller's name for ``length`` in error messages (``max_len`` for the exports).

    Raises
    ------
    ValueError
        Naming ``q_offset``, ``max_bytes`` or ``length`` (by ``length_name``; with the
        tables' estimated bytes when they exceed ``max_bytes``) before any table is built.
    """
    dtypes = ((np.dtype(np.float32), np.dtype(np.float64)) if dtype is None
              else (np.dtype(dtype),))
    for each in dtypes:
        _, length, _ = _checked(transform, 1, length, each)  # transform, length and dtype
    deps = declared_dependence(transform)
    per_head = "head" in deps
    rows = check_int("n_heads", n_heads, lo=1) if per_head else 1
    q_offset = check_int("q_offset", q_offset, lo=0)
    check_memory(length_name, length, table_bytes(transform, rows, length, dtypes), max_bytes)
    kind = ("full" if {"distance", "context"} <= deps
            else "row" if "context" in deps else "dist")
    names = {"full": ("a_full", "m_full"), "row": ("a_row", "m_row"),
             "dist": ("a_dist", "m_dist")}[kind]
    pairs = []  # (a, m) per dtype of dtypes; plain locals in the closure (torch.compile)
    for each in dtypes:
        tables = coefficient_tables(transform, rows, length, each)
        arrays = [asarray(_with_sentinel(tables[k] if per_head else tables[k][0], per_head))
                  for k in names]
        pairs.append(None if any(x is None for x in arrays) else tuple(arrays))
    narrow, wide = pairs[0], pairs[-1]  # float32 and float64 (a given dtype: its pair twice)
    single = len(pairs) == 1
    is_float64 = (lambda d: d == np.float64) if is_float64 is None else is_float64
    top = length

    def pick(score):
        """``(a, m)`` for ``score``'s dtype."""
        if single:
            return narrow
        pair = wide if is_float64(score.dtype) else narrow
        if pair is None:
            raise ValueError("the scores are float64 but this score_mod holds no float64 "
                             "tables (with JAX: build it with jax_enable_x64 on, or give "
                             "dtype=np.float64)")
        return pair

    if kind == "full":
        def full_mod(score, b, h, q_idx, kv_idx):
            a, m = pick(score)
            q = (q_idx + q_offset).clip(min=-1, max=top)
            kv = kv_idx.clip(min=-1, max=top)
            return score * a[h, q, kv] + m[h, q, kv] if per_head else score * a[q, kv] + m[q, kv]
        return full_mod
    if kind == "row":
        # one multiplier and bias per query row (LogN, the zoo's temperatures)
        def row_mod(score, b, h, q_idx, kv_idx):
            a, m = pick(score)
            q = (q_idx + q_offset).clip(min=-1, max=top)
            return score * a[h, q] + m[h, q] if per_head else score * a[q] + m[q]
        return row_mod

    # one multiplier and bias per distance (ScaleInvariant, ALiBi, NoScale)
    def distance_mod(score, b, h, q_idx, kv_idx):
        a, m = pick(score)
        t = abs(q_idx + q_offset - kv_idx).clip(max=top)
        return score * a[h, t] + m[h, t] if per_head else score * a[t] + m[t]
    return distance_mod
