"""How a score modification is applied to one block of raw scores.

The attention reference accepts, as ``score_mod``:

* a :class:`~sia_theory.transforms.Transform` (or its bound ``score_mod``). The route follows
  the transform's declared ``depends_on``, never its class:

  - no ``"context"`` (NoScale, ScaleInvariant, ALiBi): the coefficient tables ``a_t, m_t`` are
    computed once per call for every distance ``t = q_idx - kv_idx`` that occurs (one table per
    head, ``coefficients(|t|, h=h)``, when ``"head"`` is declared), stored in reverse order in
    the working dtype, and each block reads them through a strided (Toeplitz) view whose last
    axis is contiguous, so no per-score gather or transcendental function is evaluated; under
    the causal mask the bias table holds ``-inf`` for ``t < 0``, which applies the mask for free;
  - ``"context"`` without ``"distance"`` (LogN): one multiplier and bias per query row
    ``n = q_idx + 1`` (and per head when ``"head"`` is declared);
  - ``"distance"`` and ``"context"`` together, or a subclass that overrides ``score_mod``: the
    transform's own ``score_mod`` on every score.

  A head-dependent transform whose ``n_heads`` is not ``None`` must match the number of heads.
* any callable with PyTorch FlexAttention's signature ``score_mod(score, b, h, q_idx, kv_idx)``,
  evaluated elementwise on broadcast numpy arrays: ``score`` is ``(B, H, nq, nk)``, ``b`` is
  ``(B, 1, 1, 1)``, ``h`` is ``(1, H, 1, 1)``, ``q_idx`` is ``(1, 1, nq, 1)`` and ``kv_idx`` is
  ``(1, 1, 1, nk)`` (Dong et al. 2024, FlexAttention).
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..transforms import Transform, declared_dependence

__all__ = ["ScoreModifier"]


def _as_transform(score_mod):
    """The transform behind ``score_mod`` (a Transform or its bound ``score_mod``) when its
    coefficients can stand in for it, else ``None``.

    A subclass that overrides ``score_mod`` itself is honoured through that method (the
    coefficient fast paths would bypass it).
    """
    owner = score_mod if isinstance(score_mod, Transform) else getattr(score_mod, "__self__", None)
    if not isinstance(owner, Transform):
        return None
    if owner is not score_mod and getattr(score_mod, "__func__", None) is not Transform.score_mod:
        return None  # some other bound method of a transform: an ordinary callable
    if type(owner).score_mod is not Transform.score_mod:
        return None
    return owner


def _toeplitz(window, n_q, n_k):
    """Read-only view ``w[..., n_q - 1 - i + j]`` of ``window`` (``(..., n_q + n_k - 1)``), shape
    ``(..., n_q, n_k)``: rows step back, columns step forward (a contiguous last axis)."""
    step = window.strides[-1]
    return as_strided(window[..., n_q - 1:], shape=window.shape[:-1] + (n_q, n_k),
                      strides=window.strides[:-1] + (-step, step), writeable=False)


class ScoreModifier:
    """Applies ``score_mod`` and the causal mask to blocks of the score matrix of one attention
    call, in the working dtype ``dtype`` (or hands the streaming kernel its tables).

    ``offset`` is the absolute position of the first query (``q_idx = offset + row``), so that
    with ``Tq < Tk`` the queries are the last ``Tq`` positions (the decoding convention);
    ``kv_offset`` is the absolute position of the first key (``kv_idx = kv_offset + column``,
    non-zero only when attention runs over one chunk of the keys). Under ``causal`` a key after
    its query gets ``-inf``.
    """

    def __init__(self, score_mod, *, n_batch, n_heads, n_queries, n_keys, offset, kv_offset=0,
                 causal=False, dtype=np.float64):
        self.callable = score_mod
        self.n_batch, self.n_heads = n_batch, n_heads
        self.n_queries, self.n_keys = n_queries, n_keys
        self.offset, self.kv_offset = offset, kv_offset
        self.key_shift = offset - kv_offset  # column j is after row i iff j > i + key_shift
        self.causal, self.dtype = causal, np.dtype(dtype)
        self.after = None  # the causal mask table, built on first use
        self._ones = None  # the kernel's multiplier table when the transform has none
        self.a_rev = self.m_rev = None  # per-distance tables ("distance" kind only)
        self.kind = "none"
        if score_mod is None:
            return
        transform = _as_transform(score_mod)
        if transform is None:
            if isinstance(score_mod, Transform):  # overrides score_mod: use it as written
                score_mod = self.callable = score_mod.score_mod
            if not callable(score_mod):
                raise ValueError("score_mod must be None, a Transform or a callable "
                                 f"score_mod(score, b, h, q_idx, kv_idx), got {score_mod!r}")
            self.kind = "callable"
            return
        depends_on = declared_dependence(transform)
        heads = [None]  # heads to tabulate: one table for all, or one per head
        if "head" in depends_on:
            if transform.n_heads is not None and transform.n_heads != n_heads:
                raise ValueError(f"score_mod: {transform!r} supports {transform.n_heads} heads "
                                 f"but q has {n_heads} heads")
            heads = list(range(n_heads))
        self.transform = transform
        if "context" not in depends_on:
            self._build_distance_tables(transform, heads)
        elif "distance" not in depends_on:
            self.kind = "row"
            q_idx = np.arange(offset, offset + n_queries, dtype=np.float64)  # (Tq,)
            rows = [transform.coefficients(np.zeros(n_queries), n_ctx=q_idx + 1.0, h=h)
                    for h in heads]
            self.row_a = np.stack([a for a, _ in rows]).astype(self.dtype)  # (H or 1, Tq)
            self.row_m = np.stack([m for _, m in rows]).astype(self.dtype)  # (H or 1, Tq)
        else:
            self.kind = "callable"
            self.callable = transform.score_mod

    def _build_distance_tables(self, transform, heads):
        # Every distance t = key_shift + row - column that this call can see, largest first
        # (index u holds t = t_max - u), negative ones included: they are masked when causal
        # and use |t| otherwise (as Transform does).
        t_max = self.key_shift + self.n_queries - 1
        t = t_max - np.arange(self.n_queries + self.n_keys - 1, dtype=np.float64)  # (n_t,)
        tables = [transform.coefficients(np.abs(t), h=h) for h in heads]
        a_table = np.stack([a for a, _ in tables])  # (H or 1, n_t)
        m_table = np.stack([m for _, m in tables])  # (H or 1, n_t)
        scale_is_one = bool(np.all(a_table == 1.0))
        bias_is_zero = bool(np.all(m_table == 0.0))
        if scale_is_one and bias_is_zero:
            return  # NoScale: the mask alone, as with no score_mod
        self.kind = "distance"
        if self.causal:
            a_table[:, t < 0] = 1.0
            m_table[:, t < 0] = -np.inf
        self.a_rev = None if scale_is_one else a_table.astype(self.dtype)
        self.m_rev = m_table.astype(self.dtype)
        self.a_rev64, self.m_rev64 = a_table, m_table  # float64, for the float32 refinement

    def kernel_tables(self):
        """``(a, m, a64, m64)``: the reversed per-distance tables for the streaming kernel in
        the working dtype and in float64 (``a`` is ones for a bias-only transform such as
        ALiBi); 1×1 placeholders when the score mod is not a distance table."""
        if self.kind != "distance":
            one = np.ones((1, 1), self.dtype)
            return one, one, one.astype(np.float64), one.astype(np.float64)
        if self._ones is None and self.a_rev is None:
            self._ones = np.ones_like(self.m_rev), np.ones_like(self.m_rev64)
        a, a64 = (self.a_rev, self.a_rev64) if self.a_rev is not None else self._ones
        return a, self.m_rev, a64, self.m_rev64

    def _mask(self, scores, q0, q1, k0, k1):
        """``-inf`` where key ``k0 + j`` is after query ``q0 + i`` (causal calls only), through
        a Toeplitz view of one boolean table ``t < 0`` (no index arrays per block)."""
        if not self.causal or k1 - 1 <= self.key_shift + q0:  # on or below the diagonal
            return
        if self.after is None:
            t_max = self.key_shift + self.n_queries - 1
            self.after = t_max - np.arange(self.n_queries + self.n_keys - 1) < 0  # (n_t,)
        lo, hi = self.n_queries - q1 + k0, self.n_queries - 1 - q0 + k1
        np.copyto(scores, -np.inf, where=_toeplitz(self.after[lo:hi], q1 - q0, k1 - k0))

    def logits(self, scores, q0, q1, k0, k1, batches=slice(None), heads=slice(None)):
        """``mask(score_mod(scores))`` for query rows ``q0:q1`` and keys ``k0:k1`` of the given
        batch and head slices; may overwrite and return ``scores``.

        ``scores`` is ``(nb, nh, nq, nk)`` in the working dtype and already multiplied by the
        scale.
        """
        n_q, n_k = q1 - q0, k1 - k0
        if self.kind == "distance":
            lo, hi = self.n_queries - q1 + k0, self.n_queries - 1 - q0 + k1  # table window
            tables = heads if self.m_rev.shape[0] > 1 else slice(None)
            if self.a_rev is not None:
                scores *= _toeplitz(self.a_rev[tables, lo:hi], n_q, n_k)  # (·, nq, nk)
            scores += _toeplitz(self.m_rev[tables, lo:hi], n_q, n_k)  # masked: -inf entries
            return scores
        scores = self.prepare(scores, q0, q1, k0, k1, batches, heads)
        self._mask(scores, q0, q1, k0, k1)
        return scores

    def prepare(self, scores, q0, q1, k0, k1, batches=slice(None), heads=slice(None)):
        """``score_mod(scores)`` without the mask for the kinds the streaming kernel does not
        apply itself (``"row"`` and ``"callable"``; the others are returned unchanged)."""
        if self.kind == "row":
            tables = heads if self.row_m.shape[0] > 1 else slice(None)
            scores *= self.row_a[tables, q0:q1, None]  # (·, nq, 1)
            scores += self.row_m[tables, q0:q1, None]
        elif self.kind == "callable":
            scores = self._call(scores, q0, q1, k0, k1, batches, heads)
        return scores

    def _call(self, scores, q0, q1, k0, k1, batches, heads):
        b = np.arange(self.n_batch)[batches].reshape(-1, 1, 1, 1)  # (nb, 1, 1, 1)
        h = np.arange(self.n_heads)[heads].reshape(1, -1, 1, 1)  # (1, nh, 1, 1)
        q_idx = np.arange(self.offset + q0, self.offset + q1).reshape(1, 1, -1, 1)
        kv_idx = np.arange(self.kv_offset + k0, self.kv_offset + k1).reshape(1, 1, 1, -1)
        out = np.asarray(self.callable(scores, b, h, q_idx, kv_idx))
        if out.dtype.kind not in "fiub":  # a cast would drop an imaginary part silently
            raise ValueError(f"score_mod must return real scores, got dtype {out.dtype} from "
                             f"{self.callable!r}")
        out = out.astype(self.dtype, copy=False)
        if out.shape != scores.shape:
            try:
                out = np.broadcast_to(out, scores.shape)
            except ValueError:
                raise ValueError(f"score_mod returned shape {out.shape}, which does not "
                                 f"broadcast to the score block shape {scores.shape}") from None
        if out is scores or (out.flags.writeable and out.base is None):
            return out
        return np.array(out)  # a callable may return a view (or a broadcast) of its input
