"""sia_theory.attention.core, exercised by its own name: streaming attention with the SI score mod
against a plain numpy softmax whose logits are SI eq. 16 written out here; the split-KV merge."""

import math

import numpy as np
import pytest

from sia_theory import ScaleInvariant
from sia_theory.attention.core import (
    attention,
    attention_dense,
    attention_partial,
    attention_scores,
    merge_partials,
)


def _si_reference(q, k, v, tau=10.0):
    """Causal softmax of a_t S + m_t with a_t² = 1 + 2 log(1 + t/τ), m_t = 1 − a_t² (SI eq. 16
    at α = β = e^{1/2}: a_0 = 1, m_0 = 0), t = q_idx − kv_idx, S = q·k/√D."""
    _, _, n, d = q.shape
    s = q @ k.swapaxes(-1, -2) / math.sqrt(d)
    t = np.arange(n)[:, None] - np.arange(n)[None, :]
    a2 = 1 + 2 * np.log1p(np.maximum(t, 0) / tau)
    logits = np.where(t >= 0, np.sqrt(a2) * s + 1 - a2, -np.inf)
    w = np.exp(logits - logits.max(axis=-1, keepdims=True))
    w /= w.sum(axis=-1, keepdims=True)
    return w @ v, logits


@pytest.fixture
def qkv():
    rng = np.random.default_rng(0)
    return tuple(rng.standard_normal((2, 3, 300, 8)) for _ in range(3))


def test_streaming_and_dense_against_numpy_si(qkv):
    q, k, v = qkv
    ref, logits = _si_reference(q, k, v)
    assert attention(q, k, v, score_mod=ScaleInvariant(10.0), block_size=64) == \
        pytest.approx(ref, abs=1e-12)
    assert attention_dense(q, k, v, score_mod=ScaleInvariant(10.0)) == pytest.approx(ref,
                                                                                       abs=1e-12)
    got = attention_scores(q, k, score_mod=ScaleInvariant(10.0))
    assert np.array_equal(np.isinf(got), np.isinf(logits))
    assert got[np.isfinite(got)] == pytest.approx(logits[np.isfinite(logits)], abs=1e-12)


def test_split_kv_chunks_merge_to_the_whole(qkv):
    q, k, v = qkv
    parts = [attention_partial(q, k[:, :, lo:hi], v[:, :, lo:hi], q_start=0, kv_start=lo,
                               score_mod=ScaleInvariant(10.0)) for lo, hi in ((0, 120),
                                                                                (120, 300))]
    out, lse = merge_partials(parts)
    ref, logits = _si_reference(q, k, v)
    assert out == pytest.approx(ref, abs=1e-12)
    m = logits.max(axis=-1)
    assert lse == pytest.approx(m + np.log(np.exp(logits - m[..., None]).sum(axis=-1)), abs=1e-12)


def test_stats_entropy_of_uniform_rows():
    """q = 0: every visible key weighs 1/(i + 1), so the entropy is log(i + 1)."""
    q = np.zeros((1, 1, 50, 4))
    k = np.random.default_rng(1).standard_normal((1, 1, 50, 4))
    _, stats = attention(q, k, k, return_stats=True)
    assert stats.entropy[0, 0] == pytest.approx(np.log(np.arange(1, 51)), abs=1e-12)
    assert stats.max_weight[0, 0] == pytest.approx(1 / np.arange(1, 51))


def test_bad_input_named(qkv):
    q, k, v = qkv
    with pytest.raises(ValueError, match="block_size"):
        attention(q, k, v, block_size=0)
    with pytest.raises(ValueError, match="causal"):
        attention_dense(q, k, v, causal=1)
    with pytest.raises(ValueError, match="parts"):
        merge_partials([])
    with pytest.raises(ValueError, match="q_start"):
        attention_partial(q, k, v, q_start=-1)
