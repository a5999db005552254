"""A transform for JAX: inputs of ``jax.nn.dot_product_attention`` and a ``jax.numpy`` score_mod.

``jax.nn.dot_product_attention`` takes an additive ``bias`` and a scalar ``scale``, no score
function. A transform whose multiplier ``a`` does not depend on the distance (every zoo member
but ``ScaleInvariant``: the temperatures, LogN, Qwen, YaRN, Llama-4, CAS, and ALiBi's bias)
enters it exactly as a per-position **query scale** ``a(n)`` (``q`` multiplied row by row, so
the score becomes ``a·S``; a constant ``a`` included) and an additive **bias** ``m(t, n)``:
:func:`dot_product_attention_inputs`. The scale-invariant transform multiplies the score by
``a_t``, which depends on the distance: no query scale and bias express it, and
:func:`dot_product_attention_inputs` says so; :func:`jax_score_mod` (a ``jax.numpy`` closure with
FlexAttention's signature) and :func:`jax_attention` (softmax attention with it, in the inputs'
dtype) serve every transform. All read :func:`~sia_theory.export.coefficient_tables`, the
tables the JAX trainer (:mod:`sia_theory.training`) uses.

jax is imported inside the functions (an optional dependency), so the package imports without it.
Note that ``jax.nn.dot_product_attention`` computes its softmax in float32 whatever the inputs.
"""

from __future__ import annotations

import math

import numpy as np

from .._infra.validate import check_int
from ..transforms.tables import (
    MAX_TABLE_BYTES,
    capped,
    check_softcap,
    coefficient_tables,
    heads_for,
    soft_cap,
    table_score_mod,
)

__all__ = ["dot_product_attention_inputs", "jax_score_mod", "jax_attention", "require_jax"]


def require_jax():
    """``(jax, jax.numpy)``, or ``ImportError`` naming the extra that installs them."""
    try:
        import jax  # optional dependency: only the JAX routes need it
        import jax.numpy as jnp
    except ImportError as err:
        raise ImportError("sia_theory.export's JAX routes need JAX: pip install "
                          "'sia-theory[train]'") from err
    return jax, jnp


def dot_product_attention_inputs(transform, n_heads: int, length: int, dtype=np.float32):
    """``(query_scale, bias)`` of ``transform`` for ``jax.nn.dot_product_attention``.

    Parameters
    ----------
    transform : Transform
        One whose multiplier does not depend on the distance (module docstring).
    n_heads : int >= 1
        Heads ``N`` of the layer.
    length : int >= 1
        Sequence length ``T`` (queries and keys at positions ``0 … T−1``).
    dtype : numpy float dtype
        Dtype of the arrays (float64 needs ``jax_enable_x64``).

    Returns
    -------
    query_scale : jax array ``(T, N, 1)``
        Multiply the query ``(B, T, N, D)`` by it: row ``i`` of head ``h`` gets ``a(n = i + 1)``.
    bias : jax array ``(1, N, T, T)``
        ``m(t = |i − j|, n = i + 1)``, the additive bias (``is_causal=True`` masks the keys
        after the query).

    Raises
    ------
    ValueError
        If the transform's multiplier depends on the distance (``ScaleInvariant``): use
        :func:`jax_score_mod` or :func:`jax_attention`.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> from sia_theory.zoo import ZOO
    >>> q = k = v = jnp.ones((1, 8, 2, 4))  # (B, T, N, D)
    >>> scale, bias = dot_product_attention_inputs(ZOO["logn"], n_heads=2, length=8)
    >>> out = jax.nn.dot_product_attention(q * scale, k, v, bias=bias, is_causal=True)
    >>> out.shape
    (1, 8, 2, 4)
    """
    _, jnp = require_jax()
    heads = heads_for(transform, n_heads) or check_int("n_heads", n_heads, lo=1)
    length = check_int("length", length, lo=1)
    tables = coefficient_tables(transform, heads, length, np.float64)
    if "a_full" in tables or np.any(tables["a_dist"] != tables["a_dist"][:, :1]):
        raise ValueError(f"transform {transform!r} multiplies the score by a factor that "
                         "depends on the distance, which no query scale and bias of "
                         "jax.nn.dot_product_attention express: use jax_score_mod or "
                         "jax_attention")
    t = np.abs(np.arange(length)[:, None] - np.arange(length)[None, :])  # (T, T)
    bias = tables["m_row"][:, :, None] + tables["m_dist"][:, t]  # (N, T, T)
    query_scale = (tables["a_row"] * tables["a_dist"][:, :1]).T[:, :, None]  # (T, N, 1)
    return jnp.asarray(query_scale, dtype), jnp.asarray(bias[None], dtype)


def jax_score_mod(transform, max_len: int, *, n_heads: int | None = None, dtype=None,
                  q_offset: int = 0, max_bytes=MAX_TABLE_BYTES, softcap=None):
    """``transform`` as a ``jax.numpy`` closure ``score_mod(score, b, h, q_idx, kv_idx) = a·score
    + m`` on broadcast index arrays, usable inside ``jax.jit``.

    FlexAttention's signature and conventions (:func:`~sia_theory.export.flex_score_mod`):
    ``t = |q_idx + q_offset − kv_idx|``, ``n = q_idx + q_offset + 1``, from tables for positions
    below ``max_len``; a position at or above ``max_len`` (a distance, for a transform of the
    distance alone) or a negative one reads a NaN entry.

    Parameters
    ----------
    transform : Transform
        Any :class:`~sia_theory.transforms.Transform`.
    max_len : int >= 1
        The longest sequence (with a key cache, its length ``Tk``).
    n_heads : int or None
        Heads, required for a transform that depends on the head (default: its ``n_heads``).
    dtype : numpy float dtype or None
        The tables' dtype. ``None`` (default): the scores' dtype, float64 tables for float64
        scores (built only when ``jax_enable_x64`` is on where the closure is made; float64
        scores otherwise raise ``ValueError``) and float32 tables for any other.
    q_offset : int >= 0
        Absolute position of query index 0: ``Tk − Tq`` for ``Tq`` new queries against a cache
        of ``Tk`` keys (decoding); default 0.
    max_bytes : int >= 1 or None
        Bound on the tables' estimated bytes (default ``2**32``, 4 GiB; ``None``: the memory
        available now), checked before anything is allocated.
    softcap : float > 0 or None
        A tanh cap on the modified logits, ``softcap·tanh((a·score + m)/softcap)`` (Gemma-2's
        ``attn_logit_softcapping``; :func:`~sia_theory.export.flex_score_mod`). Default none.

    Raises
    ------
    ValueError
        Naming the parameter: ``max_len`` not an integer >= 1 or tables above ``max_bytes``
        (with their estimate), ``q_offset`` not an integer >= 0, ``dtype`` not a float dtype,
        ``n_heads`` missing or wrong, ``softcap`` not > 0.
    """
    jax, jnp = require_jax()
    heads = heads_for(transform, n_heads)
    max_len = check_int("max_len", max_len, lo=1)
    x64 = jax.dtypes.canonicalize_dtype(np.float64) == np.float64

    def asarray(table):
        if dtype is None and table.dtype == np.float64 and not x64:
            return None  # no float64 arrays without jax_enable_x64: float64 scores refused
        return jnp.asarray(table, table.dtype)

    cap = check_softcap(softcap)
    mod = table_score_mod(transform, heads, max_len, None if dtype is None else np.dtype(dtype),
                          asarray, q_offset=q_offset, max_bytes=max_bytes,
                          length_name="max_len")
    return mod if cap is None else capped(mod, cap, jnp.tanh)


def _check_attention_inputs(jnp, q, k, v, causal):
    """``ValueError`` naming the input unless ``q, k, v`` are floating ``(B, H, Tq, D)``,
    ``(B, Hkv, Tk, D)``, ``(B, Hkv, Tk, Dv)`` with ``Hkv`` dividing ``H`` and, when causal,
    ``Tq <= Tk``."""
    for name, x in (("q", q), ("k", k), ("v", v)):
        if x.ndim != 4:
            raise ValueError(f"{name} must be a 4-D array (B, H, T, D), got shape {x.shape}")
        if 0 in x.shape:
            raise ValueError(f"{name} must have no empty axis, got shape {x.shape}")
        if not jnp.issubdtype(x.dtype, jnp.floating):
            raise ValueError(f"{name} must have a floating dtype, got {x.dtype}")
    if k.shape[0] != q.shape[0] or v.shape[0] != q.shape[0]:
        raise ValueError(f"q, k and v must have one batch size B, got q {q.shape}, k {k.shape}, "
                         f"v {v.shape}")
    if v.shape[1:3] != k.shape[1:3]:
        raise ValueError(f"v must have k's heads Hkv and positions Tk {k.shape[1:3]}, got v "
                         f"{v.shape}")
    if q.shape[1] % k.shape[1]:
        raise ValueError(f"q's heads H={q.shape[1]} must be a multiple of k's heads "
                         f"Hkv={k.shape[1]} (grouped-query attention)")
    if k.shape[3] != q.shape[3]:
        raise ValueError(f"k must have q's head dimension D={q.shape[3]}, got k {k.shape}")
    if causal and q.shape[2] > k.shape[2]:
        raise ValueError(f"q must not have more positions than k when causal=True (queries "
                         f"are the last Tq positions), got Tq={q.shape[2]} > Tk={k.shape[2]}")


def jax_attention(q, k, v, transform=None, *, causal=True, scale=None, softcap=None):
    """Softmax attention with ``transform``'s score_mod in ``jax.numpy``, in the inputs' dtype
    (float64 with ``jax_enable_x64``), with the conventions of
    :func:`sia_theory.attention.attention`: ``q`` ``(B, H, Tq, D)``, ``k, v`` ``(B, Hkv, Tk, ·)``
    (``Hkv`` dividing ``H``), scale ``1/√D`` by default, queries at the last ``Tq`` positions
    when causal (``Tq <= Tk``; :func:`jax_score_mod`'s ``q_offset = Tk − Tq``), at ``0 … Tq−1``
    otherwise. ``softcap`` (> 0) caps the modified logits, ``softcap·tanh(L/softcap)``
    (Gemma-2's ``attn_logit_softcapping``). The whole ``(B, H, Tq, Tk)`` score array is held:
    for checks and short sequences.

    Raises
    ------
    ValueError
        Before any work, naming the input: ``q, k, v`` not 4-D, an empty axis, not a floating
        dtype, batch sizes that differ, ``v`` without ``k``'s heads and positions, ``H`` not a
        multiple of ``Hkv``, ``k``'s ``D`` not ``q``'s, or ``Tq > Tk`` when causal.
    """
    jax, jnp = require_jax()
    cap = check_softcap(softcap)
    q, k, v = jnp.asarray(q), jnp.asarray(k), jnp.asarray(v)
    _check_attention_inputs(jnp, q, k, v, causal)
    n_heads, n_queries, n_keys = q.shape[1], q.shape[2], k.shape[2]
    group = n_heads // k.shape[1]
    k, v = jnp.repeat(k, group, axis=1), jnp.repeat(v, group, axis=1)  # (B, H, Tk, ·)
    scale = 1.0 / math.sqrt(q.shape[3]) if scale is None else float(scale)
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k) * jnp.asarray(scale, q.dtype)  # (B, H, Tq, Tk)
    offset = n_keys - n_queries if causal else 0  # absolute position of query row 0
    q_idx = jnp.arange(n_queries).reshape(1, 1, -1, 1)
    kv_idx = jnp.arange(n_keys).reshape(1, 1, 1, -1)
    if transform is not None:
        mod = jax_score_mod(transform, max(n_keys, offset + n_queries), n_heads=n_heads,
                            dtype=q.dtype, q_offset=offset)
        scores = mod(scores, jnp.zeros((1, 1, 1, 1), jnp.int32),
                     jnp.arange(n_heads).reshape(1, -1, 1, 1), q_idx, kv_idx)
    if cap is not None:
        scores = soft_cap(scores, cap, jnp.tanh)
    if causal:
        scores = jnp.where(kv_idx > q_idx + offset, -jnp.inf, scores)
    return jax.nn.softmax(scores, axis=-1) @ v  # (B, H, Tq, Dv)
