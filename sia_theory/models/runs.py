"""Operations on a model that the model studies run: score capture, the losses of a
continuation, where a score mod is exactly the identity and a FLOP count for budgeting (engine
code: they take a model, a cache, a score mod or a config, and hold no study's choices).

* :func:`capture_scores` / :func:`score_capture`: one forward pass; for every layer, the raw
  scores ``q·k/√D`` (float64, ``-inf`` after the query) of chosen query rows against all keys,
  handed to a callback and dropped, so a long prefill never holds all layers' scores.
* :func:`extend_losses`: extend a KV cache by tokens and return their next-token losses.
* :func:`identical_prefix`: for how many leading query positions a score mod is exactly the
  identity (where a model with it computes what it computes without one, so caches can be
  shared); :func:`position_signature`: a fingerprint of a position encoding.
* :func:`prefill_flops`: matmul FLOPs of extending a cache from ``start`` to ``stop`` tokens.

The model studies' plumbing (SmolLM2 and its documents, the schemes of the studies and their
cache-sharing families) is :mod:`sia_theory.studies.model_runs`; its names still import from
here, with a deprecation warning, until 0.5 (:data:`sia_theory._deprecated.MOVED_NAMES`).
"""

from __future__ import annotations

import math

import numpy as np

from .._deprecated import moved_names
from ..transforms import declared_dependence

__all__ = ["score_capture", "capture_scores", "extend_losses", "identical_prefix",
           "position_signature", "prefill_flops"]



def _row_scores(q, keys, rows, q_start, scale):
    """Scores ``(H, Q, T)`` float64 of the query rows ``rows`` (absolute positions; ``q`` holds
    positions ``q_start..``) against ``keys`` ``(Hkv, T, D)``; ``-inf`` after each query."""
    heads, kv_heads = q.shape[0], keys.shape[0]
    group = heads // kv_heads
    picked = q[:, rows - q_start].astype(np.float64)  # (H, Q, D)
    picked = picked.reshape(kv_heads, group, rows.size, -1)
    k64 = keys.astype(np.float64)  # (Hkv, T, D)
    scores = np.einsum("hgqd,htd->hgqt", picked, k64).reshape(heads, rows.size, -1) * scale
    scores[:, np.arange(keys.shape[1])[None, :] > rows[:, None]] = -np.inf
    return scores  # (H, Q, T)


def score_capture(model, cache, query_positions, on_layer):
    """A ``capture(layer, q, k)`` callback for ``model.forward_hidden(ids, cache, capture=...)``
    that calls ``on_layer(layer, scores)`` with the raw scores ``(H, Q, T_total)`` of
    ``query_positions`` (absolute positions among the tokens about to be added to ``cache``)
    against every key (the cached ones and the new ones), after the position encoding and
    before any score mod; ``-inf`` after each query."""
    rows = np.asarray(query_positions, dtype=np.int64)
    start = cache.length
    scale = 1.0 / math.sqrt(model.config.head_dim)

    def capture(layer, q, k):
        if rows.size and (rows.min() < start or rows.max() >= start + q.shape[1]):
            raise ValueError(f"query_positions must lie among the new tokens [{start}, "
                             f"{start + q.shape[1] - 1}]")
        keys = k if start == 0 else np.concatenate([cache.kv.keys(layer)[0], k], axis=1)
        on_layer(layer, _row_scores(q, keys, rows, start, scale))

    return capture


def capture_scores(model, ids, query_positions, on_layer, *, cache=None, score_mod=None,
                   position=None):
    """Run ``ids`` (continuing ``cache`` if given, else a fresh prefill with ``score_mod`` and
    ``position``) with :func:`score_capture`; returns the final hidden states
    ``(T_new, d_model)``."""
    if cache is None:
        cache = model.new_cache(score_mod, position, capacity=len(ids))
    capture = score_capture(model, cache, query_positions, on_layer)
    return model.forward_hidden(ids, cache, capture=capture)


def extend_losses(model, cache, ids, next_id=None, capture=None) -> np.ndarray:
    """Extend ``cache`` by ``ids`` and return the next-token losses (nats, float64) of the new
    positions: ``−log p(ids[j+1])`` and, if ``next_id`` is given, of it after the last one
    (``len(ids)`` losses then, else ``len(ids) − 1``). ``capture`` is passed on to
    ``forward_hidden``; the output head is the model's ``head_losses`` (row blocks)."""
    ids = np.asarray(ids, dtype=np.int64)
    hidden = model.forward_hidden(ids, cache, capture=capture)  # (T, d)
    targets = ids[1:] if next_id is None else np.append(ids[1:], int(next_id))
    return model.head_losses(hidden[:targets.size], targets)


__getattr__ = moved_names(__name__)  # the names of 0.3 that moved (removed in 0.5)


def identical_prefix(score_mod, n_max: int) -> int:
    """How many leading query positions ``0..k−1`` see ``score_mod`` as the identity
    (``a = 1, m = 0`` at every distance they can see), up to ``n_max``: the positions where a
    model with this score mod computes exactly what it computes without one. ``None`` → n_max;
    a distance-dependent transform → 1 (only the first query, distance 0, if ``a_0 = 1,
    m_0 = 0``)."""
    if score_mod is None:
        return n_max
    if "distance" in declared_dependence(score_mod) or "head" in declared_dependence(score_mod):
        a, m = score_mod.coefficients(np.zeros(1), np.ones(1), 0)
        return 1 if (a[0] == 1.0 and m[0] == 0.0) else 0
    n = np.arange(1, n_max + 1, dtype=np.float64)  # keys seen by query q_idx = n - 1
    a, m = score_mod.coefficients(np.zeros_like(n), n)
    differs = np.flatnonzero((a != 1.0) | (m != 0.0))
    return int(differs[0]) if differs.size else n_max


def position_signature(position, head_dim: int) -> bytes:
    """A fingerprint of a position encoding: its output on a fixed probe ``(1, 4, D)`` at
    positions ``0, 1, 1000, 100000`` (equal fingerprints: the encodings rotate alike)."""
    probe = np.linspace(-1.0, 1.0, 4 * head_dim).reshape(1, 4, head_dim)
    return np.asarray(position(probe, np.array([0, 1, 1000, 100_000]))).tobytes()


def prefill_flops(config, start: int, stop: int, head_rows: int = 0) -> float:
    """FLOPs of extending a cache of ``start`` tokens to ``stop``: the projections and MLP
    (``2·T·params``), the causal attention products ``q·k`` and ``A·v`` (``4·H·D`` per visible
    pair) and ``head_rows`` rows of the output head."""
    c = config
    per_token = 2 * c.d_model * ((c.n_heads + 2 * c.n_kv_heads) * c.head_dim  # q, k, v
                                 + c.n_heads * c.head_dim  # output projection
                                 + 3 * c.ffn)  # SwiGLU
    pairs = (stop * (stop + 1) - start * (start + 1)) / 2  # visible (query, key) pairs
    attention = 4 * c.n_heads * c.head_dim * pairs
    return c.n_layers * (per_token * (stop - start) + attention) + \
        2 * c.d_model * c.vocab_size * head_rows


