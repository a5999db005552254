"""A transform as a PyTorch FlexAttention ``score_mod`` (Dong et al. 2024, FlexAttention).

:func:`flex_score_mod` returns a closure ``score_mod(score, b, h, q_idx, kv_idx)`` built, as
attention-gym's factories are, from tables precomputed once: the transform's per-position
coefficients ``a, m`` (:func:`~sia_theory.export.coefficient_tables`, the float64 values of
``Transform.coefficients`` rounded once to the tables' dtype). The closure is one gather and one
multiply-add on torch tensors, so it runs in eager FlexAttention and under ``torch.compile``.
:func:`causal_block_mask` is the causal ``BlockMask``; :func:`flex_query_stats` turns
FlexAttention's ``return_lse`` into the per-query statistics of
:func:`sia_theory.attention.attention` (``return_stats=True``) with one more pass over the keys.

torch is imported inside the functions (an optional dependency: ``pip install
'sia-theory[torch]'``), so the package imports without it.
"""

from __future__ import annotations

import math

from .._infra.validate import check_int
from ..attention.stats import QueryStats
from ..transforms.tables import (
    MAX_TABLE_BYTES,
    capped,
    check_softcap,
    heads_for,
    table_score_mod,
)

__all__ = ["flex_score_mod", "causal_block_mask", "flex_query_stats", "require_torch"]


def require_torch():
    """``torch``, or ``ImportError`` naming the extra that installs it."""
    try:
        import torch  # optional dependency: only the export routes need it
    except ImportError as err:
        raise ImportError("sia_theory.export's torch routes need PyTorch: pip install "
                          "'sia-theory[torch]'") from err
    return torch


def flex_score_mod(transform, max_len: int, *, n_heads: int | None = None, dtype=None,
                   device=None, q_offset: int = 0, max_bytes=MAX_TABLE_BYTES, softcap=None):
    """``transform`` as a FlexAttention ``score_mod`` for sequences of up to ``max_len`` tokens.

    Parameters
    ----------
    transform : Transform
        A zoo member, ``ScaleInvariant(tau=10)``, or any :class:`~sia_theory.transforms.Transform`.
    max_len : int >= 1
        The longest sequence: query and key positions ``0 … max_len−1`` (with a key cache, its
        length ``Tk``). A position at or above ``max_len`` (a distance, for a transform of the
        distance alone) reads a NaN entry, so the output is NaN, not a wrong number.
    n_heads : int or None
        Heads, required for a transform that depends on the head (default: its ``n_heads``).
    dtype : torch floating dtype or None
        The tables' dtype. ``None`` (default): the scores' dtype, float64 tables for float64
        scores and float32 tables for any other (both are built, each the float64 coefficients
        rounded once); a dtype given here is used for every call.
    device : torch device or None
        Where the tables live (that of ``q``).
    q_offset : int >= 0
        Absolute position of query index ``q_idx = 0``. FlexAttention numbers the queries from
        0; for ``Tq`` new queries against a cache of ``Tk`` keys (decoding) they are the last
        ``Tq`` positions, as in :func:`sia_theory.attention.attention`: use ``q_offset = Tk −
        Tq``. Default 0: queries and keys are the same positions.
    max_bytes : int >= 1 or None
        Bound on the tables' estimated bytes (default ``2**32``, 4 GiB; ``None``: the memory
        available now), checked before anything is allocated.
    softcap : float > 0 or None
        A tanh cap on the modified logits, ``softcap·tanh((a·score + m)/softcap)``, as Gemma-2
        applies its ``attn_logit_softcapping`` after the scale (``HFScheme.logit_softcap``;
        transformers ``gemma2/modeling_gemma2.py``). Default ``None``: no cap.

    Returns
    -------
    callable
        ``score_mod(score, b, h, q_idx, kv_idx) = a·score + m`` with ``t = |q_idx + q_offset −
        kv_idx|`` and ``n = q_idx + q_offset + 1``, as :meth:`Transform.score_mod` defines it
        (capped when ``softcap`` is given).

    Raises
    ------
    ValueError
        Naming the parameter: ``transform`` not a Transform, ``max_len`` not an integer >= 1 or
        tables above ``max_bytes`` (with their estimate), ``q_offset`` not an integer >= 0,
        ``dtype`` not a torch floating dtype, ``n_heads`` missing or wrong.

    Examples
    --------
    >>> import torch
    >>> from torch.nn.attention.flex_attention import flex_attention
    >>> from sia_theory import ScaleInvariant
    >>> q = k = v = torch.randn(1, 2, 128, 16)
    >>> mod = flex_score_mod(ScaleInvariant(tau=10), 128)
    >>> out = flex_attention(q, k, v, score_mod=mod, block_mask=causal_block_mask(128))
    >>> tuple(out.shape)
    (1, 2, 128, 16)

    Decoding: one new query against a cache of 128 keys sits at position 127.

    >>> step = flex_score_mod(ScaleInvariant(tau=10), 128, q_offset=127)
    >>> tuple(flex_attention(q[:, :, -1:], k, v, score_mod=step).shape)
    (1, 2, 1, 16)
    """
    torch = require_torch()
    heads = heads_for(transform, n_heads)
    max_len = check_int("max_len", max_len, lo=1)
    if dtype is None:
        numpy_dtype = None  # float32 and float64 tables, read by the scores' dtype
    elif isinstance(dtype, torch.dtype) and dtype.is_floating_point:
        numpy_dtype = torch.empty((), dtype=dtype).numpy().dtype
    else:
        raise ValueError(f"dtype must be a torch floating dtype or None, got {dtype!r}")
    cap = check_softcap(softcap)
    mod = table_score_mod(transform, heads, max_len, numpy_dtype,
                          lambda table: torch.as_tensor(table, device=device),
                          q_offset=q_offset, max_bytes=max_bytes,
                          is_float64=lambda d: d == torch.float64, length_name="max_len")
    return mod if cap is None else capped(mod, cap, torch.tanh)


def causal_block_mask(length: int, *, device="cpu"):
    """FlexAttention's causal ``BlockMask`` for ``length`` queries and keys (``create_block_mask``
    with ``q_idx >= kv_idx``, every batch and head)."""
    require_torch()
    from torch.nn.attention.flex_attention import create_block_mask  # optional dependency

    length = check_int("length", length, lo=1)

    def causal(b, h, q_idx, kv_idx):
        return q_idx >= kv_idx

    return create_block_mask(causal, None, None, length, length, device=device)


def flex_query_stats(q, k, lse, score_mod=None, *, causal=True, scale=None,
                     block: int = 256) -> QueryStats:
    """Per-query ``QueryStats(lse, entropy, max_weight)`` of a FlexAttention call from its
    ``return_lse`` and one more pass over the keys.

    FlexAttention returns the log-sum-exp ``lse`` of each query's modified, masked logits
    ``L_j``; the weights are then ``p_j = e^{L_j − lse}``, so ``entropy = −Σ_j p_j (L_j − lse)``
    and ``max_weight = e^{max_j L_j − lse}``. This recomputes the logits in blocks of ``block``
    query rows (``q·kᵀ·scale``, ``score_mod`` on the index grids, the causal mask) and reduces
    them, never holding more than ``block × Tk`` logits per head.

    The pass renormalises: with ``p̃_j = e^{L_j − lse}`` and ``Z̃ = Σ_j p̃_j`` (1 when ``lse``
    is exact) it returns ``lse + log Z̃``, ``log Z̃ − Σ_j p̃_j (L_j − lse) / Z̃`` and
    ``e^{max_j L_j − lse} / Z̃``, which do not depend on an error in ``lse`` (FlexAttention's
    compiled kernels keep it in float32, base 2) beyond rounding.

    Parameters
    ----------
    q, k : torch tensors ``(B, H, T, D)`` and ``(B, Hkv, T, D)``, those given to FlexAttention.
    lse : torch tensor ``(B, H, T)``, FlexAttention's ``return_lse`` output.
    score_mod : the ``score_mod`` given to FlexAttention (e.g. :func:`flex_score_mod`'s).
    causal : bool, whether FlexAttention ran with :func:`causal_block_mask`.
    scale : float or None, FlexAttention's ``scale`` (default ``1/√D``).
    block : int >= 1, query rows per pass.

    Returns
    -------
    QueryStats
        torch tensors ``(B, H, T)`` in ``lse``'s dtype; as
        ``attention(..., return_stats=True)`` returns for the same inputs.
    """
    torch = require_torch()
    block = check_int("block", block, lo=1)
    if q.ndim != 4 or k.ndim != 4 or tuple(lse.shape) != tuple(q.shape[:3]):
        raise ValueError(f"q and k must be (B, H, T, D) and lse (B, H, T), got q "
                         f"{tuple(q.shape)}, k {tuple(k.shape)}, lse {tuple(lse.shape)}")
    n_batch, n_heads, n_queries, head_dim = q.shape
    keys = k.repeat_interleave(n_heads // k.shape[1], dim=1)  # (B, H, Tk, D), GQA groups
    scale = 1.0 / math.sqrt(head_dim) if scale is None else float(scale)
    b = torch.arange(n_batch).view(-1, 1, 1, 1)
    h = torch.arange(n_heads).view(1, -1, 1, 1)
    kv_idx = torch.arange(keys.shape[2]).view(1, 1, 1, -1)
    entropy, max_weight, lse_out = (torch.empty_like(lse) for _ in range(3))
    for q0 in range(0, n_queries, block):
        q1 = min(q0 + block, n_queries)
        q_idx = torch.arange(q0, q1).view(1, 1, -1, 1)
        logits = (q[:, :, q0:q1] @ keys.transpose(-1, -2)) * scale  # (B, H, nq, Tk)
        if score_mod is not None:
            logits = score_mod(logits, b, h, q_idx, kv_idx)
        if causal:
            logits = logits.masked_fill(kv_idx > q_idx, -math.inf)
        shifted = logits - lse[:, :, q0:q1, None]  # log p up to lse's error, -inf where masked
        p = shifted.exp()
        total = p.sum(-1)  # 1 when lse is exact; renormalising makes the stats exact anyway
        log_total = total.log()
        tilted = torch.where(p > 0, p * shifted, 0.0).sum(-1)
        entropy[:, :, q0:q1] = log_total - tilted / total
        max_weight[:, :, q0:q1] = shifted.amax(-1).exp() / total
        lse_out[:, :, q0:q1] = lse[:, :, q0:q1] + log_total
    return QueryStats(lse_out, entropy, max_weight)
