"""Per-query statistics of the streaming reference (``attention(..., return_stats=True)``):
the log-sum-exp, the entropy ``−Σ p log p`` and the largest weight of each query row, against
a dense softmax written out here from the modified, masked logits (``attention_scores``).

float64 within 1e-12 (absolute; entropies are up to log T ≈ 8 nats). float32 within 1e-5: the
kernel computes the scores and weights in float32 (its own float32 log-sum-exp is off by up to
5e-6 at T = 2048), and the statistics inherit that error.
"""

import numpy as np
import pytest

from sia_theory import ALiBi
from sia_theory.attention import attention, attention_scores
from sia_theory.attention.stats import QueryStats
from sia_theory.zoo import ZOO

TOL = {np.float64: 1e-12, np.float32: 1e-5}


def qkv(dtype, length, n_heads=2, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((1, n_heads, length, 16)).astype(dtype) for _ in range(3))


def dense_stats(q, k, transform):
    logits = attention_scores(q.astype(np.float64), k.astype(np.float64), score_mod=transform)
    top = logits.max(axis=-1, keepdims=True)  # (B, H, T, 1)
    weights = np.exp(logits - top)
    total = weights.sum(axis=-1)  # (B, H, T)
    p = weights / total[..., None]
    log_p = np.where(p > 0, np.log(np.where(p > 0, p, 1.0)), 0.0)
    return np.log(total) + top[..., 0], -(p * log_p).sum(axis=-1), p.max(axis=-1)


# 300 tokens: one task per query block (all heads together); 2048: one task per head and block
# (the split path); block_size 64: many key blocks, so the running maximum moves.
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("length, block_size", [(300, None), (300, 64), (2048, None)])
@pytest.mark.parametrize("name", ["none", "logn", "alibi", "scale-invariant"])
def test_streaming_stats_match_dense_softmax(name, length, block_size, dtype):
    q, k, v = qkv(dtype, length)
    out, stats = attention(q, k, v, score_mod=ZOO[name], block_size=block_size,
                           return_stats=True)
    assert isinstance(stats, QueryStats) and stats.entropy.dtype == dtype
    for got, want in zip(stats, dense_stats(q, k, ZOO[name])):
        assert np.max(np.abs(got - want)) <= TOL[dtype]
    # the output is the same array the default call returns
    assert np.array_equal(out, attention(q, k, v, score_mod=ZOO[name], block_size=block_size))


def test_stats_of_known_rows():
    # the first query sees one key: entropy 0, largest weight 1; equal scores over n keys
    # (q = 0): entropy log n, largest weight 1/n
    q = np.zeros((1, 1, 50, 16))
    _, k, v = qkv(np.float64, 50, n_heads=1)
    _, stats = attention(q, k, v, return_stats=True)
    n = np.arange(1, 51)
    assert np.max(np.abs(stats.entropy[0, 0] - np.log(n))) <= 1e-13
    assert np.max(np.abs(stats.max_weight[0, 0] - 1.0 / n)) <= 1e-15


def test_stats_with_lse_per_head_and_chunk_independence():
    transform = ALiBi.standard(4)
    q, k, v = qkv(np.float64, 400, n_heads=4, seed=3)
    out, lse, stats = attention(q, k, v, score_mod=transform, return_lse=True,
                                return_stats=True)
    assert np.array_equal(lse, stats.lse)
    for got, want in zip(stats, dense_stats(q, k, transform)):
        assert np.max(np.abs(got - want)) <= 1e-12
    _, other = attention(q, k, v, score_mod=transform, block_size=37, return_stats=True)
    for a, b in zip(stats, other):
        assert np.max(np.abs(a - b)) <= 1e-12


def test_return_stats_must_be_a_bool():
    q, k, v = qkv(np.float64, 8)
    with pytest.raises(ValueError, match="return_stats must be True or False"):
        attention(q, k, v, return_stats="yes")
