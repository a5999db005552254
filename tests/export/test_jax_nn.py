"""sia_theory.export.jax_nn, exercised by its own name (jax is optional: skipped without it):
the jax score mod and attention against SI eq. 16 and a numpy softmax written out here."""

import math

import numpy as np
import pytest

from sia_theory import LogN, ScaleInvariant
from sia_theory.export.jax_nn import dot_product_attention_inputs, jax_attention, jax_score_mod

jax = pytest.importorskip("jax")
jnp = jax.numpy


def test_score_mod_is_si_eq_16():
    mod = jax_score_mod(ScaleInvariant(tau=10.0), 64)
    q_idx, kv_idx = jnp.array([30]), jnp.array([10])
    got = float(mod(jnp.array([2.0]), 0, 0, q_idx, kv_idx)[0])
    a2 = 1 + 2 * math.log(1 + 20 / 10)  # t = 20
    assert got == pytest.approx(2 * math.sqrt(a2) + 1 - a2, rel=1e-6)


def test_attention_against_numpy_softmax():
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((1, 2, 12, 4)).astype(np.float32) for _ in range(3))
    s = q @ k.swapaxes(-1, -2) / 2.0
    t = np.arange(12)[:, None] - np.arange(12)[None, :]
    a2 = 1 + 2 * np.log1p(np.maximum(t, 0) / 10)
    logits = np.where(t >= 0, np.sqrt(a2) * s + 1 - a2, -np.inf)
    w = np.exp(logits - logits.max(-1, keepdims=True))
    ref = (w / w.sum(-1, keepdims=True)) @ v
    got = np.asarray(jax_attention(q, k, v, ScaleInvariant(tau=10.0)))
    assert got == pytest.approx(ref, abs=1e-5)


def test_logn_query_scale_and_bias():
    scale, bias = dot_product_attention_inputs(LogN(s=0.4), n_heads=2, length=6)
    assert np.asarray(scale)[:, 0, 0] == pytest.approx(0.4 * np.log(np.arange(1, 7)), rel=1e-6)
    assert np.all(np.asarray(bias) == 0)
    with pytest.raises(ValueError, match="depends on the distance"):
        dot_product_attention_inputs(ScaleInvariant(), 1, 4)
