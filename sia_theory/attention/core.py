"""Torch-free attention with FlexAttention's conventions, dense or streaming (blockwise).

``attention(q, k, v, score_mod=...)`` computes ``softmax(mask(score_mod(q·k·scale))) v`` exactly
as PyTorch FlexAttention defines it (Dong et al. 2024): the scale (default ``1/sqrt(D)``) is
applied first, then ``score_mod(score, b, h, q_idx, kv_idx)``, then the causal mask (``-inf``),
then the softmax over keys. The scale-invariant transform of SI §3 (``L_ij = a_{i-j} S_ij +
m_{i-j}``, eq. 16) is passed as ``score_mod=ScaleInvariant(tau=10)``.

The blockwise path streams over key blocks with an online softmax (running max, running sum
and a rescaled accumulator; Milakov & Gimelshein 2018, FlashAttention, Dao et al. 2022), so it
never holds more than one ``(B, H, block, block)`` score block: memory ``O(T (D + block))``.
Key blocks entirely above the causal diagonal are skipped.

``attention_partial`` runs the same computation over one chunk of keys at given absolute
positions and returns ``(out, lse)``; ``merge_partials`` combines chunks exactly through their
log-sum-exps (split-KV decoding). ``attention_dense`` is the obvious whole-matrix version kept
beside the streaming one as a reference, and ``attention_scores`` returns the modified, masked
logits themselves.
"""

from __future__ import annotations

import math

import numpy as np

from .._infra.validate import check_int, check_real
from .score_mods import ScoreModifier

__all__ = ["attention", "attention_dense", "attention_partial", "merge_partials",
           "attention_scores", "DEFAULT_BLOCK_SIZE", "DENSE_MAX_SCORES"]

# Chosen by measurement (experiments/bench_attention.py and the README, float64, D = 64, one
# BLAS thread): at T = 4096 blocks of 128/256/512/1024/2048 took 95/80/84/107/173 ms, and 256
# was also fastest at T = 512..2048 with 4 heads. One score block is then 512 KiB per head.
DEFAULT_BLOCK_SIZE = 256
# The default is dense only up to this many scores per (batch, head), i.e. T = 512: the dense
# path computes the masked half too and was faster only for T <= 256 (3.0 vs 3.7 ms at 256,
# 13.7 vs 8.2 ms at 512, 4 heads).
DENSE_MAX_SCORES = 2**18


def _check_inputs(q, k, v, scale, block_size):
    arrays = {}
    for name, x in (("q", q), ("k", k), ("v", v)):
        if not isinstance(x, np.ndarray):
            raise ValueError(f"{name} must be a numpy array of shape (B, H, T, D), "
                             f"got {type(x).__name__}")
        if x.dtype not in (np.float32, np.float64):
            raise ValueError(f"{name} must have dtype float32 or float64, got {x.dtype}")
        if x.ndim != 4:
            raise ValueError(f"{name} must be a 4-D array (B, H, T, D), got shape {x.shape}")
        if 0 in x.shape:
            raise ValueError(f"{name} must have no empty axis, got shape {x.shape}")
        arrays[name] = x
    if not (q.dtype == k.dtype == v.dtype):
        raise ValueError(f"q, k and v must share one dtype, got q {q.dtype}, k {k.dtype}, "
                         f"v {v.dtype}")
    if k.shape[:2] != q.shape[:2] or v.shape[:2] != q.shape[:2]:
        raise ValueError(f"k and v must have q's batch and head axes {q.shape[:2]}, "
                         f"got k {k.shape}, v {v.shape}")
    if k.shape[3] != q.shape[3]:
        raise ValueError(f"k must have q's head dimension D={q.shape[3]}, got k {k.shape}")
    if v.shape[2] != k.shape[2]:
        raise ValueError(f"v must have as many positions as k ({k.shape[2]}), got v {v.shape}")
    for name, x in arrays.items():
        if not np.all(np.isfinite(x)):
            raise ValueError(f"{name} must contain only finite numbers")
    if scale is not None:
        scale = check_real("scale", scale)
    if block_size is not None:
        block_size = check_int("block_size", block_size, lo=1)
    return scale, block_size


def _prepare(q, k, v, score_mod, causal, scale, block_size, starts=None):
    scale, block_size = _check_inputs(q, k, v, scale, block_size)
    n_batch, n_heads, n_queries, head_dim = q.shape
    n_keys = k.shape[2]
    if starts is None:
        if causal and n_queries > n_keys:
            raise ValueError(f"q must not have more positions than k when causal=True "
                             f"(queries are the last Tq positions), got Tq={n_queries} > "
                             f"Tk={n_keys}")
        # Queries are the last Tq positions: query row i sits at absolute position offset + i.
        offset, kv_offset = (n_keys - n_queries if causal else 0), 0
    else:
        offset, kv_offset = starts
    scale = 1.0 / math.sqrt(head_dim) if scale is None else scale
    modifier = ScoreModifier(score_mod, n_batch=n_batch, n_heads=n_heads, n_queries=n_queries,
                             n_keys=n_keys, offset=offset, kv_offset=kv_offset)
    # From here on only the query-key shift matters: key column j is at position j + shift...
    offset = offset - kv_offset  # ...relative to query rows at offset + i (for the mask)
    # Work in float64 whatever the input: float32 callers get float64 accuracy, rounded once.
    q64 = np.multiply(q, scale, dtype=np.float64)  # (B, H, Tq, D); scale folded in once
    return q64, k.astype(np.float64, copy=False), v.astype(np.float64, copy=False), \
        modifier, offset, block_size


def _causal_mask(scores, offset, q0, q1, k0, k1):
    """Set ``scores[..., i, j] = -inf`` where key ``k0 + j`` is after query ``offset + q0 + i``."""
    if k1 - 1 <= offset + q0:  # the whole block is on or below the diagonal
        return
    rows = np.arange(offset + q0, offset + q1)[:, None]  # (nq, 1)
    cols = np.arange(k0, k1)[None, :]  # (1, nk)
    scores[..., cols > rows] = -np.inf


def attention_scores(q, k, *, score_mod=None, causal=True, scale=None):
    """The modified, masked logits ``mask(score_mod(q·k·scale))``, shape ``(B, H, Tq, Tk)``.

    Dense: for inspecting logits (SI App. J, Fig. 1) on a few queries, not for long contexts.
    Conventions as in :func:`attention` (queries are the last ``Tq`` positions when causal).
    Masked entries are ``-inf``. Returns float64.
    """
    q64, k64, _, modifier, offset, _ = _prepare(q, k, k, score_mod, causal, scale, None)
    n_queries, n_keys = q.shape[2], k.shape[2]
    scores = q64 @ k64.swapaxes(-1, -2)  # (B, H, Tq, Tk)
    scores = _owned(modifier.apply(scores, 0, n_queries, 0, n_keys))
    if causal:
        _causal_mask(scores, offset, 0, n_queries, 0, n_keys)
    return scores


def _owned(scores):
    """``scores`` itself if we may overwrite it, else a copy (a callable may return a view)."""
    if scores.flags.writeable and scores.base is None:
        return scores
    return np.array(scores)


def _raise_if_masked(row_sum, allow_masked=False):
    if not allow_masked and np.any(row_sum == 0.0):
        raise ValueError("a query row is fully masked (every score is -inf after score_mod and "
                         "the mask); its softmax is undefined")
    if not np.all(np.isfinite(row_sum)):
        raise ValueError("score_mod produced NaN or +inf scores")


def _finish(acc, row_sum, row_max, allow_masked):
    """``acc / row_sum`` and the log-sum-exp; rows with no visible key give 0 and -inf."""
    _raise_if_masked(row_sum, allow_masked)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(row_sum[..., None] > 0, acc / row_sum[..., None], 0.0)
        lse = np.where(row_sum > 0, np.log(row_sum) + row_max, -np.inf)
    return out, lse


def _dense(q64, k64, v64, modifier, causal, offset, allow_masked=False):
    n_queries, n_keys = q64.shape[2], k64.shape[2]
    scores = q64 @ k64.swapaxes(-1, -2)  # (B, H, Tq, Tk)
    scores = _owned(modifier.apply(scores, 0, n_queries, 0, n_keys))
    if causal:
        _causal_mask(scores, offset, 0, n_queries, 0, n_keys)
    row_max = scores.max(axis=-1, keepdims=True)  # (B, H, Tq, 1)
    row_max[~np.isfinite(row_max)] = 0.0  # fully masked rows are reported below
    scores -= row_max
    np.exp(scores, out=scores)
    row_sum = scores.sum(axis=-1)  # (B, H, Tq)
    return _finish(scores @ v64, row_sum, row_max[..., 0], allow_masked)  # (B, H, Tq, Dv)


def _blockwise(q64, k64, v64, modifier, causal, offset, block_size, allow_masked=False):
    n_batch, n_heads, n_queries, _ = q64.shape
    n_keys, value_dim = k64.shape[2], v64.shape[3]
    out = np.empty((n_batch, n_heads, n_queries, value_dim))  # (B, H, Tq, Dv)
    lse = np.empty((n_batch, n_heads, n_queries))  # (B, H, Tq)
    for q0 in range(0, n_queries, block_size):
        q1 = min(q0 + block_size, n_queries)
        q_block = q64[:, :, q0:q1]  # (B, H, nq, D)
        # Keys after the last query of this block are masked for every row: skip them.
        key_end = max(0, min(n_keys, offset + q1)) if causal else n_keys
        run_max = np.full((n_batch, n_heads, q1 - q0), -np.inf)  # (B, H, nq)
        run_sum = np.zeros((n_batch, n_heads, q1 - q0))  # (B, H, nq)
        acc = np.zeros((n_batch, n_heads, q1 - q0, value_dim))  # (B, H, nq, Dv)
        for k0 in range(0, key_end, block_size):
            k1 = min(k0 + block_size, key_end)
            scores = q_block @ k64[:, :, k0:k1].swapaxes(-1, -2)  # (B, H, nq, nk)
            scores = _owned(modifier.apply(scores, q0, q1, k0, k1))
            if causal:
                _causal_mask(scores, offset, q0, q1, k0, k1)
            new_max = np.maximum(run_max, scores.max(axis=-1))  # (B, H, nq)
            # A row with no finite score yet keeps max -inf; shift it by 0 to avoid inf - inf.
            shift = np.where(np.isfinite(new_max), new_max, 0.0)
            scores -= shift[..., None]
            np.exp(scores, out=scores)
            rescale = np.exp(run_max - shift)  # (B, H, nq); exp(-inf) = 0 on the first block
            run_sum *= rescale
            run_sum += scores.sum(axis=-1)
            acc *= rescale[..., None]
            acc += scores @ v64[:, :, k0:k1]
            run_max = new_max
        out[:, :, q0:q1], lse[:, :, q0:q1] = _finish(acc, run_sum, run_max, allow_masked)
    return out, lse


def attention(q, k, v, *, score_mod=None, causal=True, block_size=None, scale=None,
              return_lse=False):
    """Attention with FlexAttention's conventions; the SI transform enters as ``score_mod``.

    Parameters
    ----------
    q : array ``(B, H, Tq, D)``; k : array ``(B, H, Tk, D)``; v : array ``(B, H, Tk, Dv)``
        float32 or float64, one dtype for all three, all finite. The result has ``q``'s dtype
        (computation is float64 internally).
    score_mod : None, a :class:`~sia_theory.transforms.Transform`, or a callable
        ``score_mod(score, b, h, q_idx, kv_idx)`` evaluated on broadcast numpy arrays
        (FlexAttention). ``ScaleInvariant(tau=10)`` gives SI eq. 16's ``a_t S + m_t``.
    causal : bool
        Mask keys after the query. **Position convention:** when ``Tq < Tk`` the queries are the
        *last* ``Tq`` positions, ``q_idx = Tk - Tq + row`` (the decoding convention: a single
        new query sees every cached key). Without the causal mask ``q_idx = row``.
    block_size : int >= 1 or None
        Rows and keys per block of the streaming path. ``None`` picks dense when
        ``Tq·Tk <= DENSE_MAX_SCORES`` and blockwise with ``DEFAULT_BLOCK_SIZE`` otherwise.
    scale : float or None
        Multiplier of ``q·k`` (default ``1/sqrt(D)``), applied before ``score_mod``.
    return_lse : bool
        Also return the natural log-sum-exp over keys of the modified, masked scores, shape
        ``(B, H, Tq)``, as FlexAttention's ``return_lse``.

    Raises ``ValueError`` for bad shapes or dtypes, non-finite input, ``block_size < 1``, and a
    query row whose scores are all ``-inf`` (a fully masked row has no softmax).
    """
    return _attention(q, k, v, score_mod, causal, block_size, scale, return_lse, dense=None)


def attention_dense(q, k, v, *, score_mod=None, causal=True, scale=None, return_lse=False):
    """The obvious dense path of :func:`attention` (whole ``(B, H, Tq, Tk)`` score matrix at
    once), whatever the size: the built-in reference the streaming path is compared with."""
    return _attention(q, k, v, score_mod, causal, None, scale, return_lse, dense=True)


def attention_partial(q, k, v, *, q_start, kv_start=0, score_mod=None, causal=True,
                      block_size=None, scale=None):
    """Attention of queries at absolute positions ``q_start ..`` over one chunk of keys at
    positions ``kv_start ..``; returns ``(out, lse)`` in float64, ``out`` normalised within
    the chunk. Rows that see no key of the chunk get ``out = 0``, ``lse = -inf``.

    Chunks over disjoint keys combine exactly with :func:`merge_partials` (the split-KV
    reduction of Flash-Decoding, Dao et al. 2023): this is what ``return_lse`` is for. The
    score_mod sees absolute ``q_idx`` and ``kv_idx``, so position-dependent transforms
    (including LogN's ``n = q_idx + 1``) are exact per chunk.
    """
    q_start = check_int("q_start", q_start, lo=0)
    kv_start = check_int("kv_start", kv_start, lo=0)
    return _attention(q, k, v, score_mod, causal, block_size, scale, True, dense=None,
                      starts=(q_start, kv_start), as_float64=True)


def merge_partials(parts):
    """Combine ``(out, lse)`` pairs of :func:`attention_partial` over disjoint key chunks into
    the attention over their union: ``lse = log Σ_c e^{lse_c}``, ``out = Σ_c e^{lse_c − lse}
    out_c``. Raises ``ValueError`` if some query sees no key in any chunk."""
    parts = list(parts)
    if not parts:
        raise ValueError("parts must contain at least one (out, lse) pair")
    for i, part in enumerate(parts):
        if (not isinstance(part, tuple | list) or len(part) != 2
                or not all(isinstance(x, np.ndarray) for x in part)
                or part[0].ndim != 4 or part[1].shape != part[0].shape[:3]
                or part[0].shape != parts[0][0].shape):
            raise ValueError(f"parts[{i}] must be an (out, lse) pair of arrays shaped "
                             "(B, H, Tq, D) and (B, H, Tq), like every other part")
    lses = np.stack([lse for _, lse in parts])  # (C, B, H, Tq)
    top = lses.max(axis=0)  # (B, H, Tq)
    if not np.all(np.isfinite(top)):
        raise ValueError("a query row is fully masked in every part; its softmax is undefined")
    weights = np.exp(lses - top)  # (C, B, H, Tq); exp(-inf) = 0 for empty chunks
    total = weights.sum(axis=0)
    out = sum(w[..., None] * o for w, (o, _) in zip(weights, parts, strict=True))
    out /= total[..., None]
    return out, top + np.log(total)


def _attention(q, k, v, score_mod, causal, block_size, scale, return_lse, dense, starts=None,
               as_float64=False):
    if not isinstance(causal, bool | np.bool_):
        raise ValueError(f"causal must be True or False, got {causal!r}")
    q64, k64, v64, modifier, offset, block_size = _prepare(q, k, v, score_mod, causal, scale,
                                                          block_size, starts)
    allow_masked = starts is not None
    if dense is None:
        dense = block_size is None and q.shape[2] * k.shape[2] <= DENSE_MAX_SCORES
    if dense:
        out, lse = _dense(q64, k64, v64, modifier, causal, offset, allow_masked)
    else:
        out, lse = _blockwise(q64, k64, v64, modifier, causal, offset,
                              block_size or DEFAULT_BLOCK_SIZE, allow_masked)
    if as_float64:
        return out, lse
    out = out.astype(q.dtype, copy=False)
    return (out, lse.astype(q.dtype, copy=False)) if return_lse else out
