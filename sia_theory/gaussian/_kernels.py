"""numba kernels behind :mod:`sia_theory.gaussian.montecarlo` (range sums of ``e^L`` in one pass).

Layout of one row (one sample or one query): the sorted unique range boundaries cut the distances
``0 .. n-1`` into *segments*. One pass over the tokens accumulates, per segment, three numbers

* ``shift``  — the largest logit seen in the segment (running maximum),
* ``s0 = Σ e^{L−shift}``  and  ``s1 = Σ e^{L−shift} (L − shift)``,

all sums of terms of one sign, so there is no cancellation (prefix sums would subtract large
numbers when ranges are far from the start). A range is then the merge of its segments:
``log Z = shift + log s0``, ``H = log s0 − s1/s0`` (SI eq. 8; shift invariant), and
``N = Z (shift + s1/s0)`` (SI eq. 7). Logits of magnitude 1e4 are fine because every ``exp``
argument is ``<= 0``.

Tokens are processed in blocks of ``BLOCK``: the block's logits are made first (normals from the
counter-based generator of :mod:`sia_theory.gaussian.rng`, then ``a_t L̄_t + m_t``), then a
branch-free loop does the exponentials and the two sums; it uses the polynomial ``exp`` of
:mod:`sia_theory._infra.fastexp` so LLVM can vectorise it (numba has no vector ``exp`` without
Intel SVML), about 6x faster than ``math.exp``.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from .._infra.fastexp import EXP_FLOOR, exp_nonpositive
from .rng import fill_normals, stream_state

# Logit differences below this are treated as e^d = e^-708 (see exp_nonpositive).
_FLOOR = EXP_FLOOR
BLOCK = 512  # tokens per block: the buffers stay in L1, the per-block overhead is negligible


# Sums inside one block may be reordered (vectorised partial sums). The order is fixed by the
# compiled code, not by threads, so results stay bit-identical for any thread count.
_REORDER_SUMS = {"reassoc", "nsz", "contract", "arcp"}


@numba.njit(cache=True, fastmath=_REORDER_SUMS)
def _block_sums(logits, count, shift):
    """``(Σ e^{L−shift}, Σ e^{L−shift}(L−shift))`` over ``logits[:count]`` (all ``L <= shift``)."""
    sum0 = 0.0
    sum1 = 0.0
    for j in range(count):
        # Clamped like exp_nonpositive's argument: L − shift is −inf when the logits span more
        # than the float range (±1e308), and e^d·d must stay 0·(finite), never 0·inf = NaN.
        d = max(logits[j] - shift, _FLOOR)
        e = exp_nonpositive(d)
        sum0 += e
        sum1 += e * d
    return sum0, sum1


@numba.njit(cache=True)
def accumulate_block(logits, count, seg, seg_shift, seg_s0, seg_s1):
    """Add ``logits[:count]`` to segment ``seg``'s running ``(shift, s0, s1)``."""
    block_max = logits[0]
    for j in range(1, count):
        block_max = max(block_max, logits[j])
    shift = seg_shift[seg]
    if block_max > shift:
        if seg_s0[seg] > 0.0:  # re-express the old sums relative to the new maximum
            delta = shift - block_max
            if delta < _FLOOR:  # old terms are below e^-708 of the new maximum: negligible
                seg_s1[seg] = 0.0
                seg_s0[seg] = 0.0
            else:
                scale = math.exp(delta)
                seg_s1[seg] = scale * (seg_s1[seg] + delta * seg_s0[seg])
                seg_s0[seg] = scale * seg_s0[seg]
        shift = block_max
        seg_shift[seg] = shift
    sum0, sum1 = _block_sums(logits, count, shift)
    seg_s0[seg] += sum0
    seg_s1[seg] += sum1


@numba.njit(cache=True)
def combine_ranges(seg_shift, seg_s0, seg_s1, first_seg, stop_seg, mass_ref, row,
                   out_z, out_n, out_h, out_mass, out_log_z):
    """Merge segments into ranges and write row ``row`` of the five outputs."""
    n_ranges = first_seg.size
    range_top = np.empty(n_ranges)  # (R,) largest logit of each range
    range_s0 = np.empty(n_ranges)  # (R,) Σ e^{L − top} over the range
    for r in range(n_ranges):
        lo = first_seg[r]
        hi = stop_seg[r]
        top = seg_shift[lo]
        for s in range(lo + 1, hi):
            top = max(top, seg_shift[s])
        s0 = 0.0
        s1 = 0.0
        for s in range(lo, hi):
            delta = seg_shift[s] - top
            if delta < _FLOOR:  # the segment's weights are below e^-708 of the range's largest
                continue
            scale = math.exp(delta)
            s0 += scale * seg_s0[s]
            s1 += scale * (seg_s1[s] + delta * seg_s0[s])
        log_s0 = math.log(s0)
        mean_offset = s1 / s0  # Σ A (L − top) / Σ A
        range_top[r] = top
        range_s0[r] = s0
        out_log_z[row, r] = top + log_s0
        out_h[row, r] = log_s0 - mean_offset
        out_z[row, r] = math.exp(top + log_s0)
        out_n[row, r] = out_z[row, r] * (top + mean_offset)
    for r in range(n_ranges):
        # Ratio of shifted sums, not exp(log Z − log Z_ref): log Z ~ 1e4 would carry ~1e-12
        # absolute rounding error into the mass.
        ref = mass_ref[r]
        out_mass[row, r] = math.exp(range_top[r] - range_top[ref]) * (range_s0[r] / range_s0[ref])


@numba.njit(cache=True)
def _new_outputs(rows, n_ranges):
    return (np.empty((rows, n_ranges)), np.empty((rows, n_ranges)), np.empty((rows, n_ranges)),
            np.empty((rows, n_ranges)), np.empty((rows, n_ranges)))


@numba.njit(cache=True, parallel=True)
def simulate_rows(a, m, bounds, first_seg, stop_seg, mass_ref, samples, seed, first_sample):
    """Per-sample ``(Z, N, H, mass, log_Z)``, each ``(samples, n_ranges)``, for Gaussian logits.

    Row ``i`` is sample ``first_sample + i`` and uses that stream of ``seed`` in distance order,
    so its numbers depend neither on the thread that runs it nor on how samples are chunked.
    """
    n_segments = bounds.size - 1
    out_z, out_n, out_h, out_mass, out_log_z = _new_outputs(samples, first_seg.size)
    for i in numba.prange(samples):
        s0, s1 = stream_state(seed, first_sample + np.uint64(i))
        base = np.empty(BLOCK)  # (BLOCK,) standard normals L̄_t
        logits = np.empty(BLOCK)  # (BLOCK,) a_t L̄_t + m_t
        seg_shift = np.full(n_segments, -np.inf)
        seg_s0 = np.zeros(n_segments)
        seg_s1 = np.zeros(n_segments)
        for seg in range(n_segments):
            pos = bounds[seg]
            while pos < bounds[seg + 1]:
                count = min(BLOCK, bounds[seg + 1] - pos)
                s0, s1 = fill_normals(s0, s1, base, count)
                for j in range(count):
                    logits[j] = a[pos + j] * base[j] + m[pos + j]
                accumulate_block(logits, count, seg, seg_shift, seg_s0, seg_s1)
                pos += count
        combine_ranges(seg_shift, seg_s0, seg_s1, first_seg, stop_seg, mass_ref, i,
                       out_z, out_n, out_h, out_mass, out_log_z)
    return out_z, out_n, out_h, out_mass, out_log_z


@numba.njit(cache=True, parallel=True)
def given_rows(logits, bounds, first_seg, stop_seg, mass_ref):
    """``(Z, N, H, mass, log_Z)`` for each row of a given ``(rows, n)`` logit matrix."""
    rows = logits.shape[0]
    n_segments = bounds.size - 1
    out_z, out_n, out_h, out_mass, out_log_z = _new_outputs(rows, first_seg.size)
    for i in numba.prange(rows):
        seg_shift = np.full(n_segments, -np.inf)
        seg_s0 = np.zeros(n_segments)
        seg_s1 = np.zeros(n_segments)
        for seg in range(n_segments):
            pos = bounds[seg]
            while pos < bounds[seg + 1]:
                count = min(BLOCK, bounds[seg + 1] - pos)
                accumulate_block(logits[i, pos:pos + count], count, seg, seg_shift, seg_s0,
                                 seg_s1)
                pos += count
        combine_ranges(seg_shift, seg_s0, seg_s1, first_seg, stop_seg, mass_ref, i,
                       out_z, out_n, out_h, out_mass, out_log_z)
    return out_z, out_n, out_h, out_mass, out_log_z
