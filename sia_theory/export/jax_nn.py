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
from ..transforms.tables import coefficient_tables, heads_for, table_score_mod

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


def jax_score_mod(transform, max_len: int, *, n_heads: int | None = None, dtype=np.float32):
    """``transform`` as a ``jax.numpy`` closure ``score_mod(score, b, h, q_idx, kv_idx) = a·score
    + m`` on broadcast index arrays (FlexAttention's signature and conventions: ``t = |q_idx −
    kv_idx|``, ``n = q_idx + 1``), from tables for positions below ``max_len`` in ``dtype``;
    ``n_heads`` is required for a transform that depends on the head. Usable inside ``jax.jit``.
    """
    _, jnp = require_jax()
    heads = heads_for(transform, n_heads)
    max_len = check_int("max_len", max_len, lo=1)
    return table_score_mod(transform, heads, max_len, np.dtype(dtype),
                           lambda table: jnp.asarray(table, dtype))


def jax_attention(q, k, v, transform=None, *, causal=True, scale=None):
    """Softmax attention with ``transform``'s score_mod in ``jax.numpy``, in the inputs' dtype
    (float64 with ``jax_enable_x64``), with the conventions of
    :func:`sia_theory.attention.attention`: ``q`` ``(B, H, Tq, D)``, ``k, v`` ``(B, Hkv, Tk, ·)``
    (``Hkv`` dividing ``H``), scale ``1/√D`` by default, queries at the last ``Tq`` positions
    when causal. The whole ``(B, H, Tq, Tk)`` score array is held: for checks and short
    sequences."""
    jax, jnp = require_jax()
    q, k, v = jnp.asarray(q), jnp.asarray(k), jnp.asarray(v)
    n_heads, n_queries, n_keys = q.shape[1], q.shape[2], k.shape[2]
    group = n_heads // k.shape[1]
    k, v = jnp.repeat(k, group, axis=1), jnp.repeat(v, group, axis=1)  # (B, H, Tk, ·)
    scale = 1.0 / math.sqrt(q.shape[3]) if scale is None else float(scale)
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k) * jnp.asarray(scale, q.dtype)  # (B, H, Tq, Tk)
    offset = n_keys - n_queries if causal else 0
    q_idx = jnp.arange(offset, offset + n_queries).reshape(1, 1, -1, 1)
    kv_idx = jnp.arange(n_keys).reshape(1, 1, 1, -1)
    if transform is not None:
        mod = jax_score_mod(transform, max(n_keys, offset + n_queries), n_heads=n_heads,
                            dtype=q.dtype)
        scores = mod(scores, jnp.zeros((1, 1, 1, 1), jnp.int32),
                     jnp.arange(n_heads).reshape(1, -1, 1, 1), q_idx, kv_idx)
    if causal:
        scores = jnp.where(kv_idx > q_idx, -jnp.inf, scores)
    return jax.nn.softmax(scores, axis=-1) @ v  # (B, H, Tq, Dv)
