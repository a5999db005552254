"""attention(): dense vs blockwise vs a slow obvious implementation, conventions, bad input."""

import math
import tracemalloc

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.special import logsumexp

from sia_theory import ALiBi, LogN, NoScale, ScaleInvariant
from sia_theory.attention import (
    attention,
    attention_dense,
    attention_partial,
    attention_scores,
    merge_partials,
)


def _qkv(shape_q, n_keys, seed=0, dtype=np.float64, value_dim=None):
    rng = np.random.default_rng(seed)
    b, h, _, d = shape_q
    q = rng.standard_normal(shape_q).astype(dtype)
    k = rng.standard_normal((b, h, n_keys, d)).astype(dtype)
    v = rng.standard_normal((b, h, n_keys, value_dim or d)).astype(dtype)
    return q, k, v


# Direct formulas of each logit transform, written out independently of sia_theory.transforms:
# (logit for raw score s at distance t >= 0 for a query that sees n keys, head h).
def _si_logit(s, t, n, h, tau=10.0):  # SI-2: a_t^2 = 1 + 2 log(t/tau+1), m_t = -2 log(t/tau+1)
    return math.sqrt(1 + 2 * math.log(t / tau + 1)) * s - 2 * math.log(t / tau + 1)


DIRECT = {
    "none": (None, lambda s, t, n, h: s),
    "noscale": (NoScale(), lambda s, t, n, h: s),
    "scale_invariant": (ScaleInvariant(tau=10.0), _si_logit),
    "logn": (LogN(s=0.4), lambda s, t, n, h: 0.4 * math.log(n) * s),
    "alibi_one_slope": (ALiBi(0.25), lambda s, t, n, h: s - 0.25 * t),
    "alibi_per_head": (ALiBi.standard(3), lambda s, t, n, h: s - 2.0 ** (-8 * (h + 1) / 3) * t),
    "callable": (lambda s, b, h, qi, ki: s * (1 + 0.1 * h) - 0.05 * np.abs(qi - ki),
                 lambda s, t, n, h: s * (1 + 0.1 * h) - 0.05 * t),
}


def _slow_attention(q, k, v, logit, causal, scale=None):
    """Loops over every query and key: the obvious definition, float64."""
    b_, h_, n_q, d = q.shape
    n_k = k.shape[2]
    scale = 1 / math.sqrt(d) if scale is None else scale
    offset = n_k - n_q if causal else 0
    out = np.zeros((b_, h_, n_q, v.shape[3]))
    lse = np.zeros((b_, h_, n_q))
    for b in range(b_):
        for h in range(h_):
            for i in range(n_q):
                qi = offset + i
                keys = range(qi + 1) if causal else range(n_k)
                logits = np.array([logit(float(q[b, h, i] @ k[b, h, j]) * scale, abs(qi - j),
                                         qi + 1, h) for j in keys])
                weights = np.exp(logits - logits.max())
                out[b, h, i] = weights @ v[b, h, list(keys)] / weights.sum()
                lse[b, h, i] = np.log(weights.sum()) + logits.max()
    return out, lse


@pytest.mark.parametrize("name", sorted(DIRECT))
@pytest.mark.parametrize("causal", [True, False])
def test_each_score_mod_matches_direct_formula(name, causal):
    score_mod, logit = DIRECT[name]
    q, k, v = _qkv((2, 3, 9, 4), 9, seed=1)
    expected, expected_lse = _slow_attention(q, k, v, logit, causal)
    for block_size in (None, 4):
        out, lse = attention(q, k, v, score_mod=score_mod, causal=causal,
                             block_size=block_size, return_lse=True)
        np.testing.assert_allclose(out, expected, rtol=0, atol=1e-12)
        np.testing.assert_allclose(lse, expected_lse, rtol=0, atol=1e-12)


def test_scale_invariant_logits_equal_affine_in_raw_scores():
    """SI §3: L_ij = a_{i-j} S_ij + m_{i-j} with S = q.k/sqrt(d), checked entry by entry."""
    q, k, _ = _qkv((1, 2, 12, 8), 12, seed=2)
    logits = attention_scores(q, k, score_mod=ScaleInvariant(tau=3.0))
    raw = q @ k.swapaxes(-1, -2) / math.sqrt(8)
    for i in range(12):
        for j in range(12):
            if j > i:
                assert np.all(logits[..., i, j] == -np.inf)
            else:
                expected = _si_logit(raw[..., i, j], i - j, i + 1, 0, tau=3.0)
                np.testing.assert_allclose(logits[..., i, j], expected, rtol=1e-13, atol=1e-13)


SCORE_MODS = [None, NoScale(), ScaleInvariant(tau=10.0), LogN(0.4), ALiBi.standard(2),
              ScaleInvariant(tau=1.0).score_mod, lambda s, b, h, qi, ki: 0.5 * s + 0.1 * b]


@settings(max_examples=50, deadline=None)
@given(n_queries=st.integers(1, 40), n_keys=st.integers(1, 60),
       block_size=st.integers(1, 45), mod_index=st.integers(0, len(SCORE_MODS) - 1),
       causal=st.booleans(), float32=st.booleans(), seed=st.integers(0, 2**16))
def test_blockwise_matches_dense(n_queries, n_keys, block_size, mod_index, causal, float32,
                                 seed):
    assume(n_keys >= n_queries or not causal)  # causal queries are the last Tq of Tk positions
    dtype = np.float32 if float32 else np.float64
    q, k, v = _qkv((2, 2, n_queries, 6), n_keys, seed=seed, dtype=dtype, value_dim=5)
    mod = SCORE_MODS[mod_index]
    dense, dense_lse = attention_dense(q, k, v, score_mod=mod, causal=causal, return_lse=True)
    streamed, streamed_lse = attention(q, k, v, score_mod=mod, causal=causal,
                                       block_size=block_size, return_lse=True)
    assert dense.dtype == streamed.dtype == dtype and dense.shape == (2, 2, n_queries, 5)
    # float32 is computed in float32 (logits of size ~10 carry ~1e-6 absolute rounding);
    # the dense reference is float64: the promise is 1e-5 of the output's scale.
    tol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(streamed, dense, rtol=0, atol=tol)
    np.testing.assert_allclose(streamed_lse, dense_lse, rtol=0, atol=tol * 10)


@pytest.mark.parametrize("mod", SCORE_MODS[:5], ids=lambda m: type(m).__name__)
def test_float32_within_1e5_of_float64(mod):
    q, k, v = _qkv((1, 2, 64, 16), 64, seed=3)
    exact = attention(q, k, v, score_mod=mod, block_size=16)
    single = attention(q.astype(np.float32), k.astype(np.float32), v.astype(np.float32),
                       score_mod=mod, block_size=16)
    assert single.dtype == np.float32
    assert np.max(np.abs(single - exact)) < 1e-5


def test_lse_is_logsumexp_of_modified_masked_scores():
    q, k, v = _qkv((2, 2, 7, 4), 11, seed=4)
    scores = attention_scores(q, k, score_mod=ScaleInvariant(5.0))
    _, lse = attention(q, k, v, score_mod=ScaleInvariant(5.0), block_size=3, return_lse=True)
    np.testing.assert_allclose(lse, logsumexp(scores, axis=-1), rtol=0, atol=1e-12)


def test_decoding_queries_are_the_last_positions():
    q, k, v = _qkv((1, 2, 20, 8), 20, seed=5)
    full = attention(q, k, v, score_mod=ScaleInvariant(10.0))
    for n_last in (1, 3):
        tail = attention(q[:, :, -n_last:], k, v, score_mod=ScaleInvariant(10.0), block_size=4)
        np.testing.assert_allclose(tail, full[:, :, -n_last:], rtol=0, atol=1e-12)


def test_batch_and_head_permutation_invariance():
    q, k, v = _qkv((3, 2, 10, 4), 10, seed=6)
    mod = ScaleInvariant(10.0)
    together = attention(q, k, v, score_mod=mod, block_size=4)
    for b in range(3):
        alone = attention(q[b:b + 1], k[b:b + 1], v[b:b + 1], score_mod=mod)
        np.testing.assert_allclose(alone[0], together[b], rtol=0, atol=1e-13)
    order = [2, 0, 1]
    permuted = attention(q[order], k[order], v[order], score_mod=mod)
    np.testing.assert_allclose(permuted, together[order], rtol=0, atol=1e-13)


def test_without_positions_key_permutation_leaves_output_unchanged():
    q, k, v = _qkv((1, 2, 6, 4), 15, seed=7)
    perm = np.random.default_rng(0).permutation(15)
    a = attention(q, k, v, causal=False)
    b = attention(q, k[:, :, perm], v[:, :, perm], causal=False, block_size=4)
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-13)


def test_fully_masked_row_raises():
    q, k, v = _qkv((1, 1, 5, 4), 5)

    def mask_query_two(s, b, h, qi, ki):
        return np.where(qi == 2, -np.inf, s)

    for block_size in (None, 2):
        with pytest.raises(ValueError, match="fully masked"):
            attention(q, k, v, score_mod=mask_query_two, block_size=block_size)


def test_sliding_window_score_mod_streams_through_empty_blocks():
    """Rows whose first key blocks are all -inf must not produce NaN (online softmax)."""
    q, k, v = _qkv((1, 1, 30, 4), 30, seed=8)

    def window(s, b, h, qi, ki):
        return np.where(qi - ki < 4, s, -np.inf)

    np.testing.assert_allclose(attention(q, k, v, score_mod=window, block_size=3),
                               attention(q, k, v, score_mod=window), rtol=0, atol=1e-12)


def test_blockwise_peak_memory_is_a_small_fraction_of_dense():
    q, k, v = _qkv((1, 1, 2048, 16), 2048, seed=9)
    peaks = []
    for block_size in (2048, 128):  # one block = the dense footprint
        tracemalloc.start()
        attention(q, k, v, score_mod=ScaleInvariant(10.0), block_size=block_size)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    assert peaks[1] < peaks[0] / 8


@pytest.mark.parametrize("change, match", [
    (lambda q, k, v: (q, k[:, :, :, :3], v), "head dimension"),
    (lambda q, k, v: (q, k[:, :1], v), "batch and head"),
    (lambda q, k, v: (q, k, v[:, :, :4]), "v must have as many positions"),
    (lambda q, k, v: (q.astype(np.float32), k, v), "share one dtype"),
    (lambda q, k, v: (q.astype(np.float16), k.astype(np.float16), v.astype(np.float16)),
     "dtype float32 or float64"),
    (lambda q, k, v: (q[0], k, v), "q must be a 4-D"),
    (lambda q, k, v: (q.tolist(), k, v), "q must be a numpy array"),
    (lambda q, k, v: (q, np.where(k > 1, np.nan, k), v), "k must contain only finite"),
    (lambda q, k, v: (q, k, np.where(v > 1, np.inf, v)), "v must contain only finite"),
    (lambda q, k, v: (q, k[:, :, :3], v[:, :, :3]), "Tq=6 > Tk=3"),
])
def test_bad_arrays_raise_naming_the_argument(change, match):
    q, k, v = change(*_qkv((1, 2, 6, 4), 6))
    with pytest.raises(ValueError, match=match):
        attention(q, k, v)


@pytest.mark.parametrize("kwargs, match", [
    ({"block_size": 0}, "block_size"), ({"block_size": 2.5}, "block_size"),
    ({"scale": float("nan")}, "scale"), ({"score_mod": 3}, "score_mod"),
    ({"score_mod": ALiBi((0.5, 0.25, 0.125))}, r"^score_mod: ALiBi.*supports 3 heads"),
    ({"causal": "yes"}, "causal"),
    ({"score_mod": lambda s, b, h, qi, ki: np.ones(3)}, "does not broadcast"),
])
def test_bad_options_raise_naming_the_argument(kwargs, match):
    q, k, v = _qkv((1, 2, 6, 4), 6)
    with pytest.raises(ValueError, match=match):
        attention(q, k, v, **kwargs)


@pytest.mark.parametrize("mod", SCORE_MODS, ids=lambda m: type(m).__name__)
@pytest.mark.parametrize("causal", [True, False])
def test_partials_over_key_chunks_merge_to_full_attention(mod, causal):
    """Split-KV: chunks see absolute positions; empty chunks (keys after every query of the
    chunk's rows) give lse = -inf and drop out of the merge."""
    q, k, v = _qkv((2, 2, 6, 4), 31, seed=10)
    full, full_lse = attention(q, k, v, score_mod=mod, causal=causal, return_lse=True)
    q_start = 25 if causal else 0
    bounds = [(0, 9), (9, 26), (26, 28), (28, 31)]  # rows 25, 26 see nothing of (28, 31)
    parts = [attention_partial(q, k[:, :, a:b], v[:, :, a:b], q_start=q_start, kv_start=a,
                               score_mod=mod, causal=causal, block_size=bs)
             for (a, b), bs in zip(bounds, (None, 4, 1, None), strict=True)]
    if causal:
        assert np.all(parts[3][1][..., :3] == -np.inf) and np.all(parts[3][0][..., :3, :] == 0)
    out, lse = merge_partials(parts)
    np.testing.assert_allclose(out, full, rtol=0, atol=1e-12)
    np.testing.assert_allclose(lse, full_lse, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="fully masked in every part"):
        merge_partials([parts[3]] if causal else [(parts[0][0], parts[0][1] - np.inf)])
    with pytest.raises(ValueError, match="q_start"):
        attention_partial(q, k, v, q_start=-1)


def test_callable_score_mod_sees_flexattention_broadcast_indices():
    seen = []

    def record(score, b, h, q_idx, kv_idx):
        seen.append((score.shape, b.ravel().tolist(), h.ravel().tolist(), q_idx.ravel().tolist(),
                     kv_idx.ravel().tolist(), b.shape, h.shape, q_idx.shape, kv_idx.shape))
        return score

    q, k, v = _qkv((2, 3, 2, 4), 5)
    attention(q, k, v, score_mod=record, block_size=3)
    seen.sort(key=lambda call: call[4][0])  # by first key: the kernel may visit blocks in any order
    # Query block 0 holds both queries, at absolute positions 3, 4 (the last two of five keys).
    shapes, b, h, q_idx, kv_idx, b_shape, h_shape, q_shape, kv_shape = seen[0]
    assert shapes == (2, 3, 2, 3) and b == [0, 1] and h == [0, 1, 2]
    assert q_idx == [3, 4] and kv_idx == [0, 1, 2]
    assert (b_shape, h_shape, q_shape, kv_shape) == ((2, 1, 1, 1), (1, 3, 1, 1), (1, 1, 2, 1),
                                                     (1, 1, 1, 3))
    assert seen[1][4] == [3, 4]


def test_merge_partials_rejects_malformed_parts():
    from sia_theory.attention import merge_partials

    with pytest.raises(ValueError, match=r"^parts\[0\] must be an \(out, lse\) pair"):
        merge_partials([(1, 2)])
    good = (np.zeros((1, 1, 2, 4)), np.zeros((1, 1, 2)))
    with pytest.raises(ValueError, match=r"^parts\[1\] must be"):
        merge_partials([good, (np.zeros((1, 1, 3, 4)), np.zeros((1, 1, 3)))])
