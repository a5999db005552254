"""Grouped-query attention in the reference (Ainslie et al. 2023): ``k, v`` with ``Hkv``
heads dividing ``H``, query head ``h`` reading key-value head ``h // (H/Hkv)``, against the
dense computation on keys and values repeated explicitly (``np.repeat``), on every route of the
kernel (one task for all heads, one task per group, key chunks, one decoding query)."""

import numpy as np
import pytest

from sia_theory import ScaleInvariant
from sia_theory.attention import attention, attention_dense, attention_partial, merge_partials
from sia_theory.attention.core import cached_attention


def _qkv(n_heads, n_kv, n_q, n_k, dtype=np.float64, seed=0, batch=2):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((batch, n_heads, n_q, 16)).astype(dtype)
    k = rng.standard_normal((batch, n_kv, n_k, 16)).astype(dtype)
    v = rng.standard_normal((batch, n_kv, n_k, 8)).astype(dtype)
    return q, k, v


def _dense(q, k, v, score_mod=None):
    group = q.shape[1] // k.shape[1]
    return attention_dense(q, np.repeat(k, group, axis=1), np.repeat(v, group, axis=1),
                           score_mod=score_mod)


def _head_bias(score, b, h, q_idx, kv_idx):  # a head-dependent mod: wrong heads show up
    return score - 0.3 * (h + 1) * np.abs(q_idx - kv_idx) ** 0.5


@pytest.mark.parametrize("n_heads, n_kv", [(6, 2), (6, 3), (9, 3), (4, 1), (4, 4)])
@pytest.mark.parametrize("n_ctx", [50, 700])  # 700: one task per (batch, group)
@pytest.mark.parametrize("score_mod", [None, ScaleInvariant(10.0), _head_bias])
def test_grouped_query_attention_equals_repeated_heads(n_heads, n_kv, n_ctx, score_mod):
    q, k, v = _qkv(n_heads, n_kv, n_ctx, n_ctx)
    got = attention(q, k, v, score_mod=score_mod)
    np.testing.assert_allclose(got, _dense(q, k, v, score_mod), atol=1e-12)


def test_grouped_query_attention_in_float32_and_small_blocks():
    q, k, v = _qkv(9, 3, 300, 300, dtype=np.float32, seed=1)
    got = attention(q, k, v, block_size=32)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, _dense(q, k, v), atol=2e-6)


def test_grouped_query_decoding_and_key_chunks():
    q, k, v = _qkv(6, 2, 1, 90, seed=2)
    np.testing.assert_allclose(cached_attention(q, k, v), _dense(q, k, v), atol=1e-12)
    parts = [attention_partial(q, k[:, :, a:b], v[:, :, a:b], q_start=89, kv_start=a)
             for a, b in ((0, 40), (40, 90))]
    np.testing.assert_allclose(merge_partials(parts)[0], _dense(q, k, v), atol=1e-12)


def test_key_value_heads_must_divide_the_query_heads():
    q, k, v = _qkv(6, 4, 5, 5)
    with pytest.raises(ValueError, match="dividing q's 6 heads"):
        attention(q, k, v)
    with pytest.raises(ValueError, match="batch and head"):
        attention(q, k[:, :2], v[:, :3])
