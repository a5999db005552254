"""The streaming kernel behind :func:`~sia_theory.attention.attention`: tasks and their threads.

One *task* is a slice of batches, heads and query rows; it streams over key blocks with the
per-row online softmax (Milakov & Gimelshein 2018; FlashAttention, Dao et al. 2022) and writes
its own slice of the output, so tasks are independent and run on worker threads with
single-threaded BLAS. Every task computes the same numbers whichever thread runs it and however
many threads there are: the result is bit-identical for any worker count.

Per key block: the product ``q·kᵀ`` (BLAS), then one fused numba pass over the block
(:mod:`._softmax`: the score mod's affine table, the causal limit, the row maximum, the
exponentials and the row sums, row by row while the row is in L1), then ``P·V`` (BLAS) added
to the output accumulator rescaled by the change of the row maxima. Work happens in the input
dtype (float32 stays float32: single-precision BLAS and exponentials) with the per-row
statistics and the output accumulator in float64; in float32 the few weights that carry each
row are recomputed in float64 (see :mod:`._softmax`). A float32 task whose scores overflow is
recomputed in float64.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np

from .score_mods import ScoreModifier
from .stats import stats_from_sums

__all__ = ["Problem", "run_task", "plan_tasks", "REFINE"]

# float32 only: recompute the weights near each row's maximum in float64 when a per-distance
# multiplier amplifies the rounding of q·k (see _softmax). A switch for tests (the negative
# control of the error test), not a user option.
REFINE = True
"""float32 only: recompute the weights near each row's maximum in float64 when a per-distance
multiplier amplifies the rounding of q·k (a switch for the tests' negative control)."""


@dataclass
class Problem:
    """One attention call, ready for its tasks: ``q`` already multiplied by the scale (for the
    products), ``query`` as given and ``scale`` (for the float64 refinement of float32)."""

    q: np.ndarray  # (B, H, Tq, D), working dtype
    query: np.ndarray  # (B, H, Tq, D), q before the scale
    scale: float
    k: np.ndarray  # (B, H, Tk, D)
    v: np.ndarray  # (B, H, Tk, Dv)
    score_mod: object
    causal: bool
    offset: int  # absolute position of query row 0
    kv_offset: int  # absolute position of key column 0
    q_block: int
    k_block: int
    allow_masked: bool
    stats: bool = False  # also the entropy and the largest weight of each row (return_stats)
    modifier: ScoreModifier = field(init=False)
    _promoted: Problem | None = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def __post_init__(self):
        n_batch, n_heads, n_queries, _ = self.q.shape
        self.modifier = ScoreModifier(self.score_mod, n_batch=n_batch, n_heads=n_heads,
                                      n_queries=n_queries, n_keys=self.k.shape[2],
                                      offset=self.offset, kv_offset=self.kv_offset,
                                      causal=self.causal, dtype=self.q.dtype)

    @property
    def group(self) -> int:
        """Query heads per key-value head (1 without grouped-query attention)."""
        return self.q.shape[1] // self.k.shape[1]

    def key_end(self, q1) -> int:
        """Keys ``[0, key_end)`` are visible to some row before ``q1`` (causal: none after)."""
        n_keys = self.k.shape[2]
        return max(0, min(n_keys, self.modifier.key_shift + q1)) if self.causal else n_keys

    def promoted(self) -> Problem:
        """The same problem in float64 (built once, for float32 tasks that overflow)."""
        with self._lock:
            if self._promoted is None:
                self._promoted = Problem(
                    self.q.astype(np.float64), self.query.astype(np.float64), self.scale,
                    self.k.astype(np.float64), self.v.astype(np.float64), self.score_mod,
                    self.causal, self.offset, self.kv_offset, self.q_block, self.k_block,
                    self.allow_masked, self.stats)
            return self._promoted


def plan_tasks(problem: Problem, split_heads: bool) -> list[tuple]:
    """Tasks ``(b0, b1, h0, h1, q0, q1)``: (batch, head)-major so that consecutive tasks read
    the same keys and values (they stay in cache), longest query block first within each.

    ``split_heads`` gives one task per (batch, head, query block); otherwise each task holds
    every batch and head (small problems: fewer, larger numpy calls). The plan depends only on
    the problem, never on the number of workers.
    """
    n_batch, n_heads, n_queries, _ = problem.q.shape
    blocks = [(q0, min(q0 + problem.q_block, n_queries))
              for q0 in range(0, n_queries, problem.q_block)]
    blocks.sort(key=lambda rows: -problem.key_end(rows[1]) * (rows[1] - rows[0]))
    if not split_heads:
        return [(0, n_batch, 0, n_heads, q0, q1) for q0, q1 in blocks]
    group = problem.group  # query heads sharing one key-value head: one task per group
    return [(b, b + 1, h, h + group, q0, q1) for b in range(n_batch)
            for h in range(0, n_heads, group) for q0, q1 in blocks]


class _Tilt:
    """A task's running tilted sums ``Σ w·(L − max)`` (``return_stats`` only; :mod:`.stats`),
    with the running maximum and sum saved before each key block, all ``(S, nq)`` float64."""

    def __init__(self, n_slabs, n_rows):
        self.tilted, self.old_max, self.old_sum = (np.zeros((n_slabs, n_rows)) for _ in range(3))

    def before(self, row_max, total):
        np.copyto(self.old_max, row_max)
        np.copyto(self.old_sum, total)

    def after(self, weights, row_max, rescale):
        # start-up: numba (0.5 s), only once a block is streamed; the package loads lazily
        from ._softmax import tilt_block  # numba

        tilt_block(weights, self.old_max, self.old_sum, row_max, rescale, self.tilted)

    def write(self, stats, rows, total, row_max):
        """``entropy`` and ``max_weight`` of the finished task into ``stats[0][rows]`` and
        ``stats[1][rows]``."""
        _, entropy, max_weight = stats_from_sums(total, self.tilted, row_max)  # (S, nq)
        shape = stats[0][rows].shape  # (nb, nh, nq)
        stats[0][rows] = entropy.reshape(shape)
        stats[1][rows] = max_weight.reshape(shape)


def _overflow_message(problem):
    if problem.modifier.kind == "none":
        return ("q·k·scale overflowed to ±inf, or v is too large for the weighted sum: "
                "rescale q, k or v")
    return "score_mod produced NaN or +inf scores (or q·k·scale or the weighted sum overflowed)"


def run_task(problem: Problem, task, out, lse, stats=None):
    """Compute one task and write ``out[b0:b1, h0:h1, q0:q1]`` and ``lse[...]`` (and, when
    ``problem.stats``, ``entropy[...]`` and ``max_weight[...]`` of ``stats``, a pair of
    ``(B, H, Tq)`` arrays)."""
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is detected and recomputed
        done = _stream(problem, task, out, lse, stats)
        if not done and problem.q.dtype == np.float32:
            done = _stream(problem.promoted(), task, out, lse, stats)
    if not done:
        raise ValueError(_overflow_message(problem))


def _stream(problem, task, out, lse, stats=None):
    """Compute one task into its slice of ``out`` and ``lse``; ``False`` if a score or the
    output overflowed (what it wrote is then overwritten by the float64 retry or discarded)."""
    # start-up: numba (0.5 s), only once a block is streamed; the package loads lazily
    from ._softmax import MASKED_ROW, NOT_FINITE, accumulate, finish, softmax_block  # numba

    b0, b1, h0, h1, q0, q1 = task
    batches, heads = slice(b0, b1), slice(h0, h1)
    group = problem.group  # a task holds whole groups of query heads (GQA)
    kv_heads = slice(h0 // group, h1 // group)
    q_block = problem.q[batches, heads, q0:q1]  # (nb, nh, nq, D)
    n_batch, n_heads, n_rows, _ = q_block.shape
    n_kv, n_slabs = n_heads // group, n_batch * n_heads
    # the g query heads of a key-value head stacked into one matrix: one product per block
    q_grouped = (q_block if group == 1 else np.ascontiguousarray(q_block)).reshape(
        n_batch, n_kv, group * n_rows, -1)  # (nb, nkv, g·nq, D)
    queries = problem.query[batches, heads, q0:q1]  # (nb, nh, nq, D), for the refinement
    value_dim = problem.v.shape[3]
    key_end = problem.key_end(q1)
    modifier = problem.modifier
    affine = modifier.kind == "distance"
    refine = REFINE and problem.q.dtype == np.float32 and modifier.a_rev is not None
    a_tab, m_tab, a64, m64 = modifier.kernel_tables()
    per_head_tab = a_tab.shape[0] > 1
    acc = np.zeros((n_slabs, n_rows, value_dim))  # (S, nq, Dv) float64, S = nb·nh
    total = np.zeros((n_slabs, n_rows))  # (S, nq) float64: running row sums
    row_max = np.full((n_slabs, n_rows), -np.inf)  # (S, nq) float64: running row maxima
    rescale = np.empty((n_slabs, n_rows))  # (S, nq): e^(old max - new max) of each block
    tilt = _Tilt(n_slabs, n_rows) if problem.stats else None
    block = problem.k_block
    buffer = np.empty(n_slabs * n_rows * min(block, max(key_end, 1)), q_block.dtype)
    # the diagonal block first: the running maxima settle early (fewer weights to refine)
    for k0 in reversed(range(0, key_end, block)):
        k1 = min(k0 + block, key_end)
        flat = buffer[:n_slabs * n_rows * (k1 - k0)]
        keys = problem.k[batches, kv_heads, k0:k1]  # (nb, nkv, nk, D)
        np.matmul(q_grouped, keys.swapaxes(-1, -2),
                  out=flat.reshape(n_batch, n_kv, group * n_rows, k1 - k0))
        scores = flat.reshape(n_batch, n_heads, n_rows, k1 - k0)  # (nb, nh, nq, nk)
        scores = np.ascontiguousarray(modifier.prepare(scores, q0, q1, k0, k1, batches, heads))
        if tilt is not None:
            tilt.before(row_max, total)
        if not softmax_block(scores.reshape(n_slabs, n_rows, k1 - k0), a_tab, m_tab, affine,
                             h0, per_head_tab, modifier.n_queries - 1 - q0 + k0,
                             modifier.key_shift + q0 - k0 + 1, problem.causal, row_max, total,
                             rescale, queries, keys, group, a64, m64, problem.scale, refine):
            return False  # a +inf score
        if tilt is not None:
            tilt.after(scores.reshape(n_slabs, n_rows, k1 - k0), row_max, rescale)
        values = problem.v[batches, kv_heads, k0:k1]  # (nb, nkv, nk, Dv)
        weighted = scores.reshape(n_batch, n_kv, group * n_rows, k1 - k0) @ values
        accumulate(acc, rescale, weighted.reshape(n_slabs, n_rows, value_dim))
    rows = (slice(b0, b1), slice(h0, h1), slice(q0, q1))
    status = finish(acc, total, row_max, problem.allow_masked, out[rows], lse[rows])
    if status == MASKED_ROW:
        raise ValueError("a query row is fully masked (every score is -inf after score_mod and "
                         "the mask); its softmax is undefined")
    if tilt is not None and status != NOT_FINITE:
        tilt.write(stats, rows, total, row_max)
    return status != NOT_FINITE
