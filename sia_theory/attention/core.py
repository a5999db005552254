"""Torch-free attention with FlexAttention's conventions, dense or streaming (blockwise).

``attention(q, k, v, score_mod=...)`` computes ``softmax(mask(score_mod(q·k·scale))) v`` exactly
as PyTorch FlexAttention defines it (Dong et al. 2024): the scale (default ``1/sqrt(D)``) is
applied first, then ``score_mod(score, b, h, q_idx, kv_idx)``, then the causal mask (``-inf``),
then the softmax over keys. The scale-invariant transform of SI §3 (``L_ij = a_{i-j} S_ij +
m_{i-j}``, eq. 16) is passed as ``score_mod=ScaleInvariant(tau=10)``.

The streaming path (:mod:`.kernel`) splits the work into independent tasks (batch, head, block
of query rows), each streaming over key blocks with an online softmax, so it never holds more
than one score block per task: memory ``O(T (D + block))``. Key blocks entirely above the
causal diagonal are skipped. Tasks run on :func:`~sia_theory._infra.parallel.available_workers`
threads with single-threaded BLAS (a threaded BLAS on a busy machine made the block products
several times slower), and the result is bit-identical for any number of workers. float32 is
computed in float32 (row statistics in float64), float64 in float64.

``attention_partial`` runs the same computation over one chunk of keys at given absolute
positions and returns ``(out, lse)``; ``merge_partials`` combines chunks exactly through their
log-sum-exps (split-KV decoding). ``attention_dense`` is the obvious whole-matrix version in
float64, kept beside the streaming one as a reference, and ``attention_scores`` returns the
modified, masked logits themselves. ``cached_attention`` / ``cached_attention_partial`` are the
decoder's entry points for keys and values validated when they entered its cache.
"""

from __future__ import annotations

import math

import numpy as np

from .._infra.memory import check_memory
from .._infra.parallel import available_workers, run_tasks
from .._infra.validate import check_int, check_real
from .kernel import Problem, plan_tasks, run_task
from .score_mods import ScoreModifier
from .stats import QueryStats

__all__ = ["attention", "attention_dense", "attention_partial", "merge_partials",
           "attention_scores", "cached_attention", "cached_attention_partial",
           "require_finite", "DEFAULT_BLOCK_SIZE", "SCORE_BLOCK", "SMALL_WORK", "block_shape"]

# Query rows per task when block_size is None, for float64; float32 tasks take twice as many,
# the same bytes. Measured (benchmarks/bench_attention_peer.py and an in-process A/B of block
# shapes, D = 64, one thread, quiet machine): float32 tasks of 256 rows × 1024 keys took 0.88x
# the time of 128 × 1024 for bare attention at T = 4096 and 16,384 (the products gain more from
# the taller panel than the diagonal block wastes: a fraction block/T of the causal work); in
# float64 the two shapes were the same within the noise, and it keeps 128 × 1024.
DEFAULT_BLOCK_SIZE = 128
"""Query rows per task when ``block_size`` is None, for float64 (float32: twice as many; see
:func:`block_shape`)."""
# Scores per key block of a task (all its batches and heads together) when block_size is None,
# for float64 (float32: twice as many): 1 MiB, this machine's L2 cache per core; each row is
# processed while it is in L1.
SCORE_BLOCK = 2**17
"""Scores per key block of a task when ``block_size`` is None, for float64 (1 MiB; float32:
twice as many)."""
# Below this many visible scores a call runs as one task per query block holding every batch
# and head, in the calling thread: thread hand-offs would cost more than they save.
SMALL_WORK = 2**21
"""Below this many visible scores a call runs in the calling thread, one task per query block."""


def require_finite(name, x):
    """Raise ``ValueError`` unless every entry of ``x`` is finite: one summing pass (the sum is
    finite whenever the entries are, unless it overflows, which the exact check then settles)
    instead of a boolean array as large as ``x``."""
    if not np.isfinite(x.sum()) and not np.all(np.isfinite(x)):
        raise ValueError(f"{name} must contain only finite numbers")


def _check_inputs(q, k, v, scale, block_size, trusted_kv=False):
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
    if not (q.dtype == k.dtype == v.dtype):
        raise ValueError(f"q, k and v must share one dtype, got q {q.dtype}, k {k.dtype}, "
                         f"v {v.dtype}")
    if (k.shape[0] != q.shape[0] or v.shape[:2] != k.shape[:2]
            or q.shape[1] % k.shape[1]):
        raise ValueError(f"k and v must have q's batch and head axes {q.shape[:2]}, or q's "
                         f"batch and a number of key-value heads dividing q's "
                         f"{q.shape[1]} heads (grouped-query attention); got k {k.shape}, "
                         f"v {v.shape}")
    if k.shape[3] != q.shape[3]:
        raise ValueError(f"k must have q's head dimension D={q.shape[3]}, got k {k.shape}")
    if v.shape[2] != k.shape[2]:
        raise ValueError(f"v must have as many positions as k ({k.shape[2]}), got v {v.shape}")
    for name, x in (("q", q),) if trusted_kv else (("q", q), ("k", k), ("v", v)):
        require_finite(name, x)
    if scale is not None:
        scale = check_real("scale", scale)
    if block_size is not None:
        block_size = check_int("block_size", block_size, lo=1)
    return scale, block_size


def _positions(q, k, causal, starts):
    """``(offset, kv_offset)``: absolute positions of query row 0 and key column 0."""
    n_queries, n_keys = q.shape[2], k.shape[2]
    if starts is not None:
        return starts
    if causal and n_queries > n_keys:
        raise ValueError(f"q must not have more positions than k when causal=True "
                         f"(queries are the last Tq positions), got Tq={n_queries} > "
                         f"Tk={n_keys}")
    # Queries are the last Tq positions: query row i sits at absolute position offset + i.
    return (n_keys - n_queries if causal else 0), 0


def _scale(q, scale):
    return 1.0 / math.sqrt(q.shape[3]) if scale is None else float(scale)


def _scaled_query(q, scale, dtype):
    return np.multiply(q, dtype.type(_scale(q, scale)), dtype=dtype)  # (B, H, Tq, D)


def attention_scores(q, k, *, score_mod=None, causal=True, scale=None, max_bytes=None):
    """The modified, masked logits ``mask(score_mod(q·k·scale))``, shape ``(B, H, Tq, Tk)``.

    Dense: for inspecting logits (SI App. J, Fig. 1) on a few queries, not for long contexts.
    Conventions as in :func:`attention` (queries are the last ``Tq`` positions when causal).

    Parameters
    ----------
    q, k, score_mod, causal, scale
        As for :func:`attention` (``k`` is ``(B, Hkv, Tk, D)``).
    max_bytes : int or None
        Memory the dense matrix and its temporaries may take (default: the available memory).

    Returns
    -------
    numpy.ndarray
        float64 ``(B, H, Tq, Tk)``; masked entries are ``-inf``.

    Raises
    ------
    ValueError
        If an input is malformed (as for :func:`attention`) or the matrix would not fit in
        ``max_bytes``, before any work.
    """
    if not isinstance(causal, bool | np.bool_):
        raise ValueError(f"causal must be True or False, got {causal!r}")
    if isinstance(q, np.ndarray) and isinstance(k, np.ndarray) and q.ndim == k.ndim == 4:
        # scores, the modified logits and one float64 temporary of the same shape
        entries = q.shape[0] * q.shape[1] * q.shape[2] * k.shape[2]
        check_memory("Tq*Tk", f"{q.shape[2]}*{k.shape[2]}", 3 * 8 * entries, max_bytes)
    scale, _ = _check_inputs(q, k, k, scale, None)
    return _dense_logits(q, k, score_mod, bool(causal), scale, None)


def _dense_logits(q, k, score_mod, causal, scale, starts):
    offset, kv_offset = _positions(q, k, causal, starts)
    n_batch, n_heads, n_queries, _ = q.shape
    modifier = ScoreModifier(score_mod, n_batch=n_batch, n_heads=n_heads, n_queries=n_queries,
                             n_keys=k.shape[2], offset=offset, kv_offset=kv_offset,
                             causal=causal, dtype=np.float64)
    q64 = _scaled_query(q, scale, np.dtype(np.float64))
    k64 = np.repeat(k.astype(np.float64, copy=False), n_heads // k.shape[1], axis=1)  # GQA
    scores = q64 @ k64.swapaxes(-1, -2)  # (B, H, Tq, Tk)
    return modifier.logits(scores, 0, n_queries, 0, k.shape[2])


def attention(q, k, v, *, score_mod=None, causal=True, block_size=None, scale=None,
              return_lse=False, workers=None, return_stats=False):
    """Attention with FlexAttention's conventions; the SI transform enters as ``score_mod``.

    Parameters
    ----------
    q : array ``(B, H, Tq, D)``; k : array ``(B, Hkv, Tk, D)``; v : array ``(B, Hkv, Tk, Dv)``
        float32 or float64, one dtype for all three, all finite. The result has ``q``'s dtype and
        is computed in it (float32 products and exponentials, row sums in float64). ``Hkv = H``
        is multi-head attention; ``Hkv`` dividing ``H`` is grouped-query attention (Ainslie et
        al. 2023, GQA): query head ``h`` reads key-value head ``h // (H / Hkv)`` (the grouping
        of LLaMA and llama.cpp), without materialising repeated keys.
    score_mod : None, a :class:`~sia_theory.transforms.Transform`, or a callable
        ``score_mod(score, b, h, q_idx, kv_idx)`` on broadcast numpy arrays (FlexAttention),
        possibly from several worker threads at once. ``ScaleInvariant(tau=10)`` is SI eq. 16.
    causal : bool
        Mask keys after the query. **Position convention:** when ``Tq < Tk`` the queries are the
        *last* ``Tq`` positions, ``q_idx = Tk - Tq + row`` (decoding: a single new query sees
        every cached key). Without the causal mask ``q_idx = row``.
    block_size : int >= 1 or None
        Query rows and keys per streaming block; ``None`` picks :func:`block_shape`.
    scale : float or None
        Multiplier of ``q·k`` (default ``1/sqrt(D)``), applied before ``score_mod``.
    return_lse : bool
        Also return the natural log-sum-exp over keys of the modified, masked scores, shape
        ``(B, H, Tq)``, as FlexAttention's ``return_lse``.
    workers : int >= 1 or None
        Worker threads (default :func:`~sia_theory._infra.parallel.available_workers`). The
        result does not depend on it.
    return_stats : bool
        Also return a :class:`~sia_theory.attention.stats.QueryStats` ``(lse, entropy,
        max_weight)`` of ``(B, H, Tq)`` arrays in ``q``'s dtype, kept in the same streaming
        pass: the result is then ``(out, stats)``, or ``(out, lse, stats)`` with ``return_lse``.

    Returns
    -------
    out : array ``(B, H, Tq, Dv)``; with ``return_lse`` and ``return_stats`` as described above.

    Raises
    ------
    ValueError
        For bad shapes or dtypes, non-finite input, ``block_size < 1``, and a query row whose
        scores are all ``-inf`` (a fully masked row has no softmax).

    Examples
    --------
    >>> import numpy as np
    >>> from sia_theory import ScaleInvariant
    >>> from sia_theory.attention import attention, attention_dense
    >>> rng = np.random.default_rng(0)
    >>> q, k, v = (rng.standard_normal((1, 2, 64, 16)) for _ in range(3))
    >>> out = attention(q, k, v, score_mod=ScaleInvariant(tau=10))
    >>> dense = attention_dense(q, k, v, score_mod=ScaleInvariant(tau=10))  # the obvious path
    >>> bool(np.max(np.abs(out - dense)) < 1e-12)
    True
    >>> bool(np.allclose(out[:, :, 0], v[:, :, 0]))  # causal: the first query sees only its key
    True
    """
    return _attention(q, k, v, score_mod, causal, block_size, scale, return_lse, workers,
                      stats=return_stats)


def cached_attention(q, k, v, *, score_mod=None, causal=True, block_size=None, workers=None):
    """:func:`attention` for keys and values validated when they entered a decoding cache:
    only ``q`` is checked for finiteness, so a decoding step costs ``O(new tokens × context)``
    with no extra pass over the cache."""
    return _attention(q, k, v, score_mod, causal, block_size, None, False, workers,
                      trusted_kv=True)


def attention_dense(q, k, v, *, score_mod=None, causal=True, scale=None, return_lse=False):
    """The obvious dense path of :func:`attention`: the whole ``(B, H, Tq, Tk)`` score matrix
    at once, in float64 whatever the input (rounded to ``q``'s dtype at the end), one thread
    of numpy: the built-in reference the streaming path is compared with.

    Parameters
    ----------
    q, k, v, score_mod, causal, scale, return_lse
        As for :func:`attention`.

    Returns
    -------
    numpy.ndarray or tuple
        ``out`` ``(B, H, Tq, Dv)`` in ``q``'s dtype; ``(out, lse)`` with ``return_lse``.

    Raises
    ------
    ValueError
        If an input is malformed (as for :func:`attention`), a query row is fully masked, or
        ``score_mod`` gives NaN or ``+inf``.
    """
    if not isinstance(causal, bool | np.bool_):
        raise ValueError(f"causal must be True or False, got {causal!r}")
    scale, _ = _check_inputs(q, k, v, scale, None)
    scores = _dense_logits(q, k, score_mod, bool(causal), scale, None)  # (B, H, Tq, Tk)
    row_max = scores.max(axis=-1, keepdims=True)  # (B, H, Tq, 1)
    if np.any(row_max == -np.inf):
        raise ValueError("a query row is fully masked (every score is -inf after score_mod and "
                         "the mask); its softmax is undefined")
    weights = np.exp(scores - row_max)
    row_sum = weights.sum(axis=-1)  # (B, H, Tq)
    v64 = np.repeat(v.astype(np.float64), q.shape[1] // v.shape[1], axis=1)  # (B, H, Tk, Dv)
    out = weights @ v64 / row_sum[..., None]  # (B, H, Tq, Dv)
    lse = np.log(row_sum) + row_max[..., 0]
    if not (np.all(np.isfinite(out)) and np.all(np.isfinite(lse))):
        raise ValueError("score_mod produced NaN or +inf scores (or q·k·scale or the weighted "
                         "sum overflowed)")
    out, lse = out.astype(q.dtype, copy=False), lse.astype(q.dtype, copy=False)
    return (out, lse) if return_lse else out


def attention_partial(q, k, v, *, q_start, kv_start=0, score_mod=None, causal=True,
                      block_size=None, scale=None, workers=None):
    """Attention of queries at absolute positions ``q_start ..`` over one chunk of keys at
    positions ``kv_start ..``, ``out`` normalised within the chunk.

    Chunks over disjoint keys combine exactly with :func:`merge_partials` (the split-KV
    reduction of Flash-Decoding, Dao et al. 2023). The score_mod sees absolute ``q_idx`` and
    ``kv_idx``, so position-dependent transforms (including LogN's ``n = q_idx + 1``) are exact
    per chunk.

    Parameters
    ----------
    q, k, v, score_mod, causal, block_size, scale, workers
        As for :func:`attention`.
    q_start, kv_start : int
        Absolute positions (``>= 0``) of the first query and the first key of the chunk.

    Returns
    -------
    out : numpy.ndarray
        float64 ``(B, H, Tq, Dv)``; ``0`` in rows that see no key of the chunk.
    lse : numpy.ndarray
        float64 ``(B, H, Tq)``; ``-inf`` in rows that see no key of the chunk.

    Raises
    ------
    ValueError
        If an input is malformed (as for :func:`attention`) or a start is negative.
    """
    q_start = check_int("q_start", q_start, lo=0)
    kv_start = check_int("kv_start", kv_start, lo=0)
    return _attention(q, k, v, score_mod, causal, block_size, scale, True, workers,
                      starts=(q_start, kv_start))


def cached_attention_partial(q, k, v, *, q_start, kv_start=0, score_mod=None,
                             block_size=None, workers=None):
    """:func:`attention_partial` (causal) for keys and values computed from a validated cache
    (only ``q`` is checked for finiteness)."""
    return _attention(q, k, v, score_mod, True, block_size, None, True, workers,
                      starts=(q_start, kv_start), trusted_kv=True)


def merge_partials(parts):
    r"""Combine ``(out, lse)`` pairs of :func:`attention_partial` over disjoint key chunks into
    the attention over their union: :math:`\mathrm{lse} = \log \sum_c e^{\mathrm{lse}_c}`,
    :math:`\mathrm{out} = \sum_c e^{\mathrm{lse}_c - \mathrm{lse}}\, \mathrm{out}_c`.

    Parameters
    ----------
    parts : iterable of (numpy.ndarray, numpy.ndarray)
        ``(out, lse)`` pairs of float arrays shaped ``(B, H, Tq, D)`` and ``(B, H, Tq)``, one
        shape for all.

    Returns
    -------
    out, lse : numpy.ndarray
        The attention output and log-sum-exp over every chunk's keys.

    Raises
    ------
    ValueError
        If ``parts`` is empty or malformed, holds NaN (or ``+inf`` in ``lse``), or some query
        sees no key in any chunk.
    """
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
    for i, (out, lse) in enumerate(parts):
        if out.dtype.kind != "f" or lse.dtype.kind != "f":
            raise ValueError(f"parts[{i}] must hold float arrays, got {out.dtype} and {lse.dtype}")
        if not np.all(np.isfinite(out)):
            raise ValueError(f"parts[{i}] output must contain only finite numbers")
        if np.any(np.isnan(lse) | (lse == np.inf)):
            raise ValueError(f"parts[{i}] lse must be finite, or -inf for a query that sees no "
                             "key in that chunk; got NaN or +inf")
    lses = np.stack([lse for _, lse in parts])  # (C, B, H, Tq)
    top = lses.max(axis=0)  # (B, H, Tq)
    if not np.all(np.isfinite(top)):
        raise ValueError("a query row is fully masked in every part; its softmax is undefined")
    weights = np.exp(lses - top)  # (C, B, H, Tq); exp(-inf) = 0 for empty chunks
    total = weights.sum(axis=0)
    out = sum(w[..., None] * o for w, (o, _) in zip(weights, parts, strict=True))
    out /= total[..., None]
    return out, top + np.log(total)


def block_shape(dtype) -> tuple[int, int]:
    """``(query rows, keys)`` of one head's block when ``block_size`` is None: 128 × 1024 in
    float64 and 256 × 1024 in float32 (1 MiB of scores either way).

    A task of several query heads (grouped-query attention) takes fewer keys per block, down to
    ``DEFAULT_BLOCK_SIZE``, so that its block stays near 1 MiB."""
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dtype}")
    per = 8 // dtype.itemsize  # 2 for float32: the same bytes
    return DEFAULT_BLOCK_SIZE * per, SCORE_BLOCK // DEFAULT_BLOCK_SIZE


def _block_sizes(q, k, block_size, split_heads):
    """Query rows per task and keys per block: ``block_size`` for both when given."""
    if block_size is not None:
        return block_size, block_size
    n_batch, n_heads, n_queries, _ = q.shape
    rows_max, _ = block_shape(q.dtype)
    q_block = min(rows_max, n_queries)
    # a split task holds one group of query heads sharing a key-value head (GQA; 1 for MHA)
    rows = q_block * (n_heads // k.shape[1]) if split_heads else n_batch * n_heads * q_block
    scores = SCORE_BLOCK * (rows_max // DEFAULT_BLOCK_SIZE)
    return q_block, max(DEFAULT_BLOCK_SIZE, scores // rows)


def _attention(q, k, v, score_mod, causal, block_size, scale, return_lse, workers, starts=None,
               trusted_kv=False, stats=False):
    if not isinstance(stats, bool | np.bool_):
        raise ValueError(f"return_stats must be True or False, got {stats!r}")
    stats = bool(stats)
    if not isinstance(causal, bool | np.bool_):
        raise ValueError(f"causal must be True or False, got {causal!r}")
    scale, block_size = _check_inputs(q, k, v, scale, block_size, trusted_kv)
    workers = available_workers() if workers is None else check_int("workers", workers, lo=1)
    offset, kv_offset = _positions(q, k, bool(causal), starts)
    n_batch, n_heads, n_queries, _ = q.shape
    n_keys = k.shape[2]
    visible = n_queries * n_keys - (n_queries * (n_queries - 1) // 2 if causal else 0)
    split_heads = n_batch * n_heads * visible > SMALL_WORK
    q_block, k_block = _block_sizes(q, k, block_size, split_heads)
    problem = Problem(_scaled_query(q, scale, q.dtype), q, _scale(q, scale), k, v, score_mod,
                      bool(causal), offset, kv_offset, q_block, k_block,
                      allow_masked=starts is not None, stats=stats)
    out_dtype = np.float64 if starts is not None else q.dtype
    out = np.empty((n_batch, n_heads, n_queries, v.shape[3]), out_dtype)  # (B, H, Tq, Dv)
    lse = np.empty((n_batch, n_heads, n_queries), out_dtype)  # (B, H, Tq)
    row_stats = (np.empty_like(lse), np.empty_like(lse)) if stats else None  # (B, H, Tq) each
    tasks = plan_tasks(problem, split_heads)
    run_tasks(lambda task: run_task(problem, task, out, lse, row_stats), tasks,
              workers if split_heads else 1)
    if stats:
        found = QueryStats(lse, *row_stats)
        return (out, lse, found) if return_lse else (out, found)
    return (out, lse) if return_lse else out
