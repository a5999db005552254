"""How a score modification is applied to one block of raw scores.

The attention reference accepts, as ``score_mod``:

* a :class:`~sia_theory.transforms.Transform` (or its bound ``score_mod``). The route follows
  the transform's declared ``depends_on``, never its class:

  - no ``"context"`` (NoScale, ScaleInvariant, ALiBi): the coefficient tables ``a_t, m_t`` are
    computed once per call for every distance ``t = q_idx - kv_idx`` that occurs (one table per
    head, ``coefficients(|t|, h=h)``, when ``"head"`` is declared) and each block reads them
    through a strided (Toeplitz) view, so no per-score gather or transcendental function is
    evaluated;
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
from numpy.lib.stride_tricks import sliding_window_view

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


class ScoreModifier:
    """Applies ``score_mod`` to blocks of the score matrix of one attention call.

    ``offset`` is the absolute position of the first query (``q_idx = offset + row``), so that
    with ``Tq < Tk`` the queries are the last ``Tq`` positions (the decoding convention);
    ``kv_offset`` is the absolute position of the first key (``kv_idx = kv_offset + column``,
    non-zero only when attention runs over one chunk of the keys).
    """

    def __init__(self, score_mod, *, n_batch, n_heads, n_queries, n_keys, offset, kv_offset=0):
        self.callable = score_mod
        self.n_batch, self.n_heads = n_batch, n_heads
        self.offset, self.kv_offset = offset, kv_offset
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
        self.heads = [None]  # heads to tabulate: one table for all, or one per head
        if "head" in depends_on:
            if transform.n_heads is not None and transform.n_heads != n_heads:
                raise ValueError(f"score_mod: {transform!r} supports {transform.n_heads} heads "
                                 f"but q has {n_heads} heads")
            self.heads = list(range(n_heads))
        self.transform = transform
        if "context" not in depends_on:
            self._build_distance_tables(transform, n_queries, n_keys)
        elif "distance" not in depends_on:
            self.kind = "row"
        else:
            self.kind = "callable"
            self.callable = transform.score_mod

    def _build_distance_tables(self, transform, n_queries, n_keys):
        # Every distance that any (query, key) pair of this call can have, negative ones
        # included (they only occur without a causal mask; Transform uses |t| for them).
        shift = self.offset - self.kv_offset  # t = shift + row - column
        self.t_min = shift - (n_keys - 1)
        t = np.arange(self.t_min, shift + n_queries, dtype=np.float64)  # (n_t,)
        tables = [transform.coefficients(np.abs(t), h=h) for h in self.heads]
        self.a_table = np.stack([a for a, _ in tables])  # (H or 1, n_t)
        self.m_table = np.stack([m for _, m in tables])  # (H or 1, n_t)
        self.scale_is_one = bool(np.all(self.a_table == 1.0))
        self.bias_is_zero = bool(np.all(self.m_table == 0.0))
        self.kind = "identity" if self.scale_is_one and self.bias_is_zero else "distance"

    def _toeplitz(self, table, q0, q1, k0, k1):
        """View ``table[:, t - t_min]``, ``t = offset + q0 + i - (kv_offset + k0 + j)``:
        shape (·, nq, nk)."""
        n_q, n_k = q1 - q0, k1 - k0
        base = self.offset - self.kv_offset + q0 - k0 - self.t_min  # index of (i, j) = (0, 0)
        window = table[:, base - (n_k - 1): base + n_q]  # (·, nq + nk - 1)
        # sliding_window_view gives w[i, jj] = window[i + jj]; reversing jj gives base + i - j.
        return sliding_window_view(window, n_k, axis=-1)[:, :, ::-1]  # (·, nq, nk)

    def apply(self, scores, q0, q1, k0, k1):
        """Modified scores for query rows ``q0:q1`` and keys ``k0:k1``; may reuse ``scores``.

        ``scores`` is ``(B, H, nq, nk)`` float64 and already multiplied by the scale.
        """
        if self.kind in ("none", "identity"):
            return scores
        if self.kind == "distance":
            if not self.scale_is_one:
                scores *= self._toeplitz(self.a_table, q0, q1, k0, k1)
            if not self.bias_is_zero:
                scores += self._toeplitz(self.m_table, q0, q1, k0, k1)
            return scores
        q_idx = np.arange(self.offset + q0, self.offset + q1)  # (nq,)
        if self.kind == "row":
            rows = [self.transform.coefficients(np.zeros(q_idx.size), n_ctx=q_idx + 1.0, h=h)
                    for h in self.heads]
            scores *= np.stack([a for a, _ in rows])[:, :, None]  # (H or 1, nq, 1)
            scores += np.stack([m for _, m in rows])[:, :, None]  # (H or 1, nq, 1)
            return scores
        b = np.arange(self.n_batch).reshape(-1, 1, 1, 1)  # (B, 1, 1, 1)
        h = np.arange(self.n_heads).reshape(1, -1, 1, 1)  # (1, H, 1, 1)
        kv_idx = np.arange(self.kv_offset + k0, self.kv_offset + k1).reshape(1, 1, 1, -1)
        out = np.asarray(self.callable(scores, b, h, q_idx.reshape(1, 1, -1, 1), kv_idx),
                         dtype=np.float64)
        if out.shape != scores.shape:
            try:
                out = np.broadcast_to(out, scores.shape)
            except ValueError:
                raise ValueError(f"score_mod returned shape {out.shape}, which does not "
                                 f"broadcast to the score block shape {scores.shape}") from None
        return out
