"""LayerScoreMod (transform, soft cap, sliding window) held against a slow, obvious loop over
queries and keys, through the streaming kernel (blocks smaller than the window, so whole key
blocks are masked), the dense reference and one-query decoding against a longer cache."""

import math

import numpy as np
import pytest

from sia_theory import ScaleInvariant
from sia_theory.attention import attention, attention_dense
from sia_theory.attention.core import cached_attention
from sia_theory.attention.layer_mod import LayerScoreMod, layer_score_mod
from sia_theory.zoo import Temperature


def slow_attention(q, k, v, *, c=1.0, tau=None, softcap=None, window=None):
    """Causal attention written out score by score: L = c·S (or SI's a_t S + 1 − a_t², τ = tau),
    then cap·tanh(L/cap), kept iff 0 <= i − j < window; the queries are the last positions."""
    n_batch, n_heads, n_q, dim = q.shape
    n_k, group = k.shape[2], n_heads // k.shape[1]
    out = np.zeros((n_batch, n_heads, n_q, v.shape[3]))
    for b in range(n_batch):
        for h in range(n_heads):
            for row in range(n_q):
                i = n_k - n_q + row
                logits, kept = [], []
                for j in range(n_k):
                    if j > i or (window is not None and i - j >= window):
                        continue
                    s = float(np.dot(q[b, h, row], k[b, h // group, j])) / math.sqrt(dim)
                    if tau is None:
                        value = c * s
                    else:
                        a2 = 1 + 2 * math.log(1 + (i - j) / tau)
                        value = math.sqrt(a2) * s + 1 - a2
                    if softcap is not None:
                        value = softcap * math.tanh(value / softcap)
                    logits.append(value)
                    kept.append(j)
                w = np.exp(np.array(logits) - max(logits))
                out[b, h, row] = (w / w.sum()) @ v[b, h // group, kept]
    return out


def _qkv(seed=0, heads=4, kv_heads=2, n=40, dim=8, scale=3.0):
    rng = np.random.default_rng(seed)
    return (scale * rng.standard_normal((1, heads, n, dim)),
            scale * rng.standard_normal((1, kv_heads, n, dim)),
            rng.standard_normal((1, kv_heads, n, dim)))


@pytest.mark.parametrize("mod, loop", [
    (LayerScoreMod(window=5), {"window": 5}),
    (LayerScoreMod(softcap=2.5), {"softcap": 2.5}),
    (LayerScoreMod(Temperature(1.7), softcap=3.0, window=7), {"c": 1.7, "softcap": 3.0,
                                                             "window": 7}),
    (LayerScoreMod(ScaleInvariant(tau=4.0), window=11), {"tau": 4.0, "window": 11}),
    (LayerScoreMod(lambda s, b, h, qi, ki: 0.5 * s, window=1), {"c": 0.5, "window": 1}),
])
def test_matches_the_slow_loop_streaming_dense_and_decoding(mod, loop):
    """Streaming with 4-key blocks (a window of 5 masks whole blocks), dense, and each of the
    last 3 queries alone against the full cache: all within 1e-12 of the loop."""
    q, k, v = _qkv()
    want = slow_attention(q, k, v, **loop)
    assert np.max(np.abs(attention(q, k, v, score_mod=mod, block_size=4) - want)) < 1e-12
    assert np.max(np.abs(attention_dense(q, k, v, score_mod=mod) - want)) < 1e-12
    for row in (37, 38, 39):
        one = cached_attention(q[:, :, row:row + 1], k[:, :, :row + 1], v[:, :, :row + 1],
                               score_mod=mod, block_size=4)
        assert np.max(np.abs(one[:, :, 0] - want[:, :, row])) < 1e-12


def test_float32_streaming_matches_the_loop_to_float32_rounding():
    q, k, v = _qkv(seed=3)
    mod = LayerScoreMod(Temperature(1.3), softcap=4.0, window=6)
    got = attention(q.astype(np.float32), k.astype(np.float32), v.astype(np.float32),
                    score_mod=mod)
    want = slow_attention(q.astype(np.float32).astype(np.float64),
                          k.astype(np.float32).astype(np.float64), v.astype(np.float32)
                          .astype(np.float64), c=1.3, softcap=4.0, window=6)
    assert got.dtype == np.float32 and np.max(np.abs(got - want)) < 2e-6


def test_the_window_and_the_cap_change_the_output():
    """Negative controls: the loop without the window, or without the cap, differs by far more
    than the 1e-12 above (so the comparisons can fail)."""
    q, k, v = _qkv()
    got = attention(q, k, v, score_mod=LayerScoreMod(softcap=2.5, window=5))
    assert np.max(np.abs(got - slow_attention(q, k, v, softcap=2.5))) > 1e-2
    assert np.max(np.abs(got - slow_attention(q, k, v, window=5))) > 1e-2
    assert np.max(np.abs(got - slow_attention(q, k, v, softcap=2.5, window=6))) > 1e-2


def test_window_one_keeps_only_the_own_key():
    """window = 1: every query sees only itself, so the output is its own value (no row is
    fully masked: distance 0 is always kept)."""
    q, k, v = _qkv(heads=2, kv_heads=2)
    out = attention(q, k, v, score_mod=LayerScoreMod(window=1), block_size=3)
    assert np.max(np.abs(out - v)) < 1e-12


def test_values_at_chosen_scores():
    """cap·tanh(x/cap) at x = 3, cap = 2: 2·tanh(1.5) = 1.8103; a window of 3 at q_idx = 5
    keeps kv_idx 3, 4, 5 only."""
    score = np.array([[[[3.0, 3.0, 3.0, 3.0, 3.0, 3.0]]]])
    q_idx, kv_idx = np.array(5).reshape(1, 1, 1, 1), np.arange(6).reshape(1, 1, 1, 6)
    got = LayerScoreMod(softcap=2.0, window=3)(score, 0, 0, q_idx, kv_idx)[0, 0, 0]
    assert np.isneginf(got[:3]).all()
    assert got[3:] == pytest.approx([2 * math.tanh(1.5)] * 3, rel=1e-15)
    assert round(2 * math.tanh(1.5), 4) == 1.8103


def test_layer_score_mod_keeps_the_transform_without_cap_or_window():
    t = Temperature(2.0)
    assert layer_score_mod(t) is t and layer_score_mod(None) is None
    assert layer_score_mod(t, window=3) == LayerScoreMod(t, window=3)


@pytest.mark.parametrize("kwargs, match", [
    ({"transform": 3.0}, "transform must be None, a Transform or a callable"),
    ({"softcap": 0.0}, "softcap must be a finite real number > 0"),
    ({"softcap": float("inf")}, "softcap must be"),
    ({"window": 0}, "window must be an integer >= 1"),
    ({"window": 2.5}, "window must be an integer"),
])
def test_bad_arguments_are_refused_by_name(kwargs, match):
    with pytest.raises(ValueError, match=match):
        LayerScoreMod(**kwargs)
