"""numba kernels of the streaming attention: one fused pass per block of scores.

:func:`softmax_block` takes a block of raw scores ``q·k·scale`` (or scores a numpy ``score_mod``
has already modified) and, row by row while the row is in L1, applies the per-distance affine
table ``a_t s + m_t``, the causal limit, the row maximum, the exponentials and the row sum: the
per-row online softmax (Milakov & Gimelshein 2018) in one pass instead of four numpy passes
with their temporaries. :func:`accumulate` rescales the output accumulator and adds the block's
``P·V``. Both release the GIL (tasks run on threads) and are compiled once per dtype.

In float32 the scores come from a float32 product, and its rounding (about 2e-7 of ``|q||k|``)
is multiplied by ``a_t`` (3.6 at distance 4096 for ScaleInvariant(10)): that, not the
exponentials or the sums, dominated the float32 error (5e-6 of a row's norm at T = 4096, against
1.4e-6 for bare attention). *Refinement:* the entries that carry the row, those within
``REFINE_NATS`` of the row's running maximum (0.56 % of the scores of ScaleInvariant(10) at
T = 4096 with random q, k), get their logit recomputed from ``q`` and ``k`` in float64 and their
weight from a float64 ``exp``; the row sum is corrected by the difference. The rest keep the
float32 value, whose error is damped by their weight (``< e^-REFINE_NATS`` of the largest).
Measured worst-row errors of SI against float64 (B = 1, H = 8, D = 64): 0.93e-6 at T = 4096 and
1.16e-6 at 16,384 with ``REFINE_NATS = 2`` and 128-row tasks (0.97e-6 and 1.2e-6 with the
256-row float32 tasks used now); 1.09e-6 and 2.09e-6 with 1.5, which refines 0.34 % of the
scores. The refinement looks only into 64-key chunks whose maximum is within
``REFINE_NATS`` (16 % of the chunks at T = 4096), gathers their entries above the threshold
without branches, then recomputes those. Measured in one process on the kernel's own blocks
(T = 4096, best of 9 alternating runs), it adds 27 % to the fused pass (12.2 ms against 9.6 ms
without it; 14.4 ms with a branching scan), about 5 % of a float32 SI call.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import types
from numba.extending import overload

from .._infra.fastexp import EXP_FLOOR, exp_nonpositive, exp_nonpositive32, maxnum

__all__ = ["softmax_block", "accumulate", "tilt_block", "finish", "REFINE_NATS", "FINISHED",
           "MASKED_ROW", "NOT_FINITE"]

# Entries whose float32 weight is above e^-REFINE_NATS of the row's running maximum are
# recomputed in float64 (measured: see the module docstring and
# tests/attention/test_attention_kernel.py).
REFINE_NATS = 2.0

# Vectorised sums and maxima (partial sums in SIMD lanes; the order is fixed by the compiled
# code, so results are the same on every thread). No nnan/ninf: masks are -inf and a NaN or
# +inf score must reach the checks.
_FLAGS = {"reassoc", "nsz", "contract", "arcp"}


def _exp_shifted(d):
    """``exp(d)`` for ``d <= 0`` in the dtype of ``d``; 0 for ``d = -inf``; NaN stays NaN."""
    raise NotImplementedError  # compiled only (see the overload below)


@overload(_exp_shifted)
def _exp_shifted_impl(d):
    if d == types.float32:
        return lambda d: exp_nonpositive32(d)
    if d == types.float64:
        return lambda d: 0.0 if d < EXP_FLOOR else exp_nonpositive(d)
    return None


_CHUNK = 64


@numba.njit(cache=True, nogil=True, fastmath=_FLAGS)
def _refine_row(row, limit, chunk_max, chunk_floor, threshold, q_row, q64, picked, key_rows,
                scale, affine, a64, m64, row_max):
    """Recompute the weights of ``row[:limit]`` above ``threshold`` from ``q·k`` in float64,
    looking only into chunks whose largest logit is above ``chunk_floor``; returns the change
    of the row sum. ``q64`` and ``picked`` (``_CHUNK`` integers) are scratch space."""
    converted = False
    correction = 0.0
    for c in range(chunk_max.shape[0]):
        if not chunk_max[c] > chunk_floor:
            continue
        if not converted:
            for d in range(q_row.shape[0]):
                q64[d] = q_row[d]
            converted = True
        # the chunk's entries above the threshold, gathered without branches
        lo = c * _CHUNK
        n_picked = 0
        for j in range(lo, min(lo + _CHUNK, limit)):
            picked[n_picked] = j
            n_picked += row[j] > threshold
        for p in range(n_picked):
            j = picked[p]
            k_row = key_rows[j]
            dot = 0.0
            for d in range(q64.shape[0]):
                dot += q64[d] * np.float64(k_row[d])
            logit = dot * scale
            if affine:
                logit = logit * a64[j] + m64[j]
            exact = exp_nonpositive(logit - row_max)  # the argument may exceed 0 by ~1e-6
            correction += exact - np.float64(row[j])
            row[j] = exact
    return correction


@numba.njit(cache=True, nogil=True, fastmath=_FLAGS, inline="always")
def _chunked_max(row, limit, chunk_max):
    """The maximum of ``row[:limit]`` by chunks of ``_CHUNK`` (fixed-length vector loops), each
    chunk's maximum written to ``chunk_max`` (a chunk whose maximum is far below the row's holds
    no weight to refine). ``maxnum`` skips NaN scores; they make the row sum NaN instead."""
    top = row[0]
    n_chunks = (limit + _CHUNK - 1) // _CHUNK
    for c in range(limit // _CHUNK):
        chunk = row[c * _CHUNK:(c + 1) * _CHUNK]
        chunk_top = chunk[0]
        for t in range(_CHUNK):
            chunk_top = maxnum(chunk_top, chunk[t])
        chunk_max[c] = chunk_top
        top = maxnum(top, chunk_top)
    if limit % _CHUNK:
        chunk_top = row[limit - 1]
        for j in range(limit - limit % _CHUNK, limit):
            chunk_top = maxnum(chunk_top, row[j])
        chunk_max[n_chunks - 1] = chunk_top
        top = maxnum(top, chunk_top)
    return top


@numba.njit(cache=True, nogil=True, fastmath=_FLAGS)
def softmax_block(scores, a_tab, m_tab, affine, tab_head0, per_head_tab, base, first_limit,
                  causal, row_max, row_sum, rescale, queries, keys, group, a64, m64, scale,
                  refine):
    """Turn a block of scores into unnormalised softmax weights, in place.

    scores : ``(S, R, N)`` slabs (batch, head) × query rows × keys, working dtype, C order;
        raw ``q·k·scale`` when ``affine`` or when the call has no score mod, else the modified
        scores. Row ``i`` of every slab may see keys ``j < first_limit + i`` when ``causal``.
    a_tab, m_tab : ``(Ht, L)`` reversed per-distance tables in the working dtype: row ``i``,
        key ``j`` reads index ``base - i + j`` of table row ``tab_head0 + head`` (``per_head_tab``)
        or of row 0.
    row_max, row_sum, rescale : ``(S, R)`` float64: the running maximum and sum (updated) and
        the factor ``e^{old max - new max}`` the output accumulator must be multiplied by.
    queries : ``(B', H', R, D)`` unscaled ``q`` rows, keys ``(B', Hkv', N, D)`` (refinement);
        slab ``s`` is batch ``s // H'``, head ``s % H'``, key-value head ``head // group``.
    a64, m64, scale : the float64 tables and the scale for the refinement.
    refine : recompute weights above ``e^-REFINE_NATS`` of the row maximum in float64.

    Returns ``False`` if a score is ``+inf`` (the caller retries in float64 or raises); NaN
    scores make the row sum NaN, which the caller checks.
    """
    n_slabs, n_rows, n_keys = scores.shape
    n_heads = queries.shape[1]
    zero = scores.dtype.type(0.0)
    threshold = scores.dtype.type(math.exp(-REFINE_NATS))
    q64 = np.empty(queries.shape[3])  # one query row in float64 (refinement)
    picked = np.empty(_CHUNK, np.int64)  # the entries of one chunk to refine
    chunk_max = np.empty((n_keys + _CHUNK - 1) // _CHUNK, scores.dtype)  # of one row
    for s in range(n_slabs):
        head = s % n_heads
        batch = s // n_heads
        tab = tab_head0 + head if per_head_tab else 0
        for i in range(n_rows):
            row = scores[s, i]
            limit = min(n_keys, first_limit + i) if causal else n_keys
            if limit <= 0:  # no visible key in this block
                row[:] = zero
                rescale[s, i] = 1.0
                continue
            off = base - i
            if affine:
                a_row = a_tab[tab, off:off + limit]
                m_row = m_tab[tab, off:off + limit]
                for j in range(limit):
                    row[j] = row[j] * a_row[j] + m_row[j]
            top = _chunked_max(row, limit, chunk_max)
            n_chunks = (limit + _CHUNK - 1) // _CHUNK
            old_max = row_max[s, i]
            new_max = max(old_max, np.float64(top))
            if new_max == np.inf:
                return False
            if new_max == -np.inf:  # every score so far is -inf (masked by the score mod)
                row[:] = zero
                rescale[s, i] = 1.0
                continue
            shift = scores.dtype.type(new_max)
            total = zero
            for j in range(limit):
                w = _exp_shifted(row[j] - shift)
                row[j] = w
                total += w
            row[limit:] = zero
            correction = 0.0
            if refine and top > new_max - REFINE_NATS:  # some weight of this block is large
                correction = _refine_row(row, limit, chunk_max[:n_chunks], new_max - REFINE_NATS,
                                         threshold, queries[batch, head, i], q64, picked,
                                         keys[batch, head // group], scale, affine,
                                         a64[tab, off:off + limit], m64[tab, off:off + limit],
                                         new_max)
            ratio = math.exp(old_max - new_max)  # 0 on the row's first block
            row_sum[s, i] = row_sum[s, i] * ratio + (np.float64(total) + correction)
            row_max[s, i] = new_max
            rescale[s, i] = ratio
    return True


@numba.njit(cache=True, nogil=True, fastmath=_FLAGS)
def accumulate(acc, rescale, weighted):
    """``acc = acc · rescale + weighted`` row by row: ``acc`` ``(S, R, Dv)`` float64, ``rescale``
    ``(S, R)``, ``weighted`` ``(S, R, Dv)`` in the working dtype (the block's ``P·V``)."""
    n_slabs, n_rows, n_values = acc.shape
    for s in range(n_slabs):
        for i in range(n_rows):
            ratio = rescale[s, i]
            for d in range(n_values):
                acc[s, i, d] = acc[s, i, d] * ratio + weighted[s, i, d]


@numba.njit(cache=True, nogil=True, fastmath=_FLAGS)
def tilt_block(weights, old_max, old_sum, row_max, rescale, tilted):
    """Update the running tilted sums ``Y = Σ_j e^{L_j − M}(L_j − M)`` of each row after
    :func:`softmax_block` turned a block into the weights ``w = e^{L − M'}`` (``M'`` the new
    running maximum ``row_max``): ``Y' = r·(Y + (M − M')·Z) + Σ_j w_j log w_j`` with ``r`` the
    block's ``rescale``, ``M`` and ``Z`` the maximum and sum before the block (``old_max``,
    ``old_sum``), entries without weight (masked) skipped (:mod:`.stats`). ``weights`` ``(S, R,
    N)`` in the working dtype, the rest ``(S, R)`` float64; ``tilted`` is updated in place.
    ``log w`` recovers ``L − M'`` to the rounding of ``w``; only ``return_stats`` calls this."""
    n_slabs, n_rows, n_keys = weights.shape
    for s in range(n_slabs):
        for i in range(n_rows):
            row = weights[s, i]
            block = 0.0
            for j in range(n_keys):
                w = np.float64(row[j])
                if w > 0.0:
                    block += w * math.log(w)
            carried = 0.0
            if old_sum[s, i] > 0.0:
                carried = rescale[s, i] * (tilted[s, i]
                                           + (old_max[s, i] - row_max[s, i]) * old_sum[s, i])
            tilted[s, i] = carried + block


FINISHED, MASKED_ROW, NOT_FINITE = 0, 1, 2
"""Return codes of :func:`finish`."""


@numba.njit(cache=True, nogil=True)
def finish(acc, total, row_max, allow_masked, out, lse):
    """Normalise a task's accumulator into its slice of the output, in place.

    ``acc`` ``(S, R, Dv)``, ``total`` and ``row_max`` ``(S, R)`` float64 (slab ``s`` is batch
    ``s // H``, head ``s % H``); ``out`` ``(B, H, R, Dv)`` and ``lse`` ``(B, H, R)`` are views of
    the call's output in its dtype. Writes ``acc / total`` and ``log(total) + row_max``; a row
    with no visible key (``total = 0``, allowed only for key chunks) gets 0 and ``-inf``.

    Returns ``MASKED_ROW`` (before writing anything) if a row has no visible key and
    ``allow_masked`` is false, ``NOT_FINITE`` if a sum or an output is not finite (the caller
    retries in float64 or raises; what was written is overwritten or discarded), else
    ``FINISHED``. One pass instead of the dozen small numpy calls it replaces.
    """
    n_slabs, n_rows, n_values = acc.shape
    n_heads = out.shape[1]
    if not allow_masked:
        for s in range(n_slabs):
            for i in range(n_rows):
                if total[s, i] == 0.0:
                    return MASKED_ROW
    for s in range(n_slabs):
        b, h = s // n_heads, s % n_heads
        for i in range(n_rows):
            t = total[s, i]
            if not math.isfinite(t):
                return NOT_FINITE
            if t > 0.0:
                for d in range(n_values):
                    x = acc[s, i, d]
                    if not math.isfinite(x):
                        return NOT_FINITE
                    out[b, h, i, d] = x / t  # as numpy's acc / total, bit for bit
                lse[b, h, i] = math.log(t) + row_max[s, i]
            else:
                for d in range(n_values):
                    out[b, h, i, d] = 0.0
                lse[b, h, i] = -math.inf
    return FINISHED
