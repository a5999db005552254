"""The zoo in JAX: :func:`sia_theory.export.jax_attention` (a ``jax.numpy`` score_mod, float64
under ``jax.enable_x64``) and ``jax.nn.dot_product_attention`` with
:func:`dot_product_attention_inputs` (query scale and bias), against the package's numpy
reference attention (``attention_dense``, float64).

Tolerances: float64 within 1e-12; float32 within 2e-6. ``jax.nn.dot_product_attention``
computes its softmax in float32 whatever the inputs (jax/_src/nn/functions.py,
``_dot_product_attention_core``), so that route is held to 2e-6 on float32 inputs.
"""

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

from sia_theory import ALiBi, ScaleInvariant  # noqa: E402
from sia_theory.attention import attention_dense  # noqa: E402
from sia_theory.export import (  # noqa: E402
    coefficient_tables,
    dot_product_attention_inputs,
    jax_attention,
    jax_score_mod,
)
from sia_theory.zoo import ZOO  # noqa: E402

T = 192
TOL = {np.float64: 1e-12, np.float32: 2e-6}


def qkv(dtype, n_heads=2, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((1, n_heads, T, 16)).astype(dtype) for _ in range(3))


def reference(q, k, v, transform):
    return attention_dense(*(x.astype(np.float64) for x in (q, k, v)), score_mod=transform)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", sorted(ZOO))
def test_jax_attention_matches_reference_attention(name, dtype):
    q, k, v = qkv(dtype)
    with jax.enable_x64(dtype == np.float64):
        out = np.asarray(jax.jit(lambda q, k, v: jax_attention(q, k, v, ZOO[name]))(q, k, v))
    assert out.dtype == dtype
    assert np.max(np.abs(out - reference(q, k, v, ZOO[name]))) <= TOL[dtype]


def test_jax_attention_per_head_alibi_matches_reference():
    transform = ALiBi.standard(4)
    q, k, v = qkv(np.float64, n_heads=4)
    with jax.enable_x64(True):
        out = np.asarray(jax_attention(q, k, v, transform))
    assert np.max(np.abs(out - reference(q, k, v, transform))) <= 1e-12


@pytest.mark.parametrize("name", sorted(set(ZOO) - {"scale-invariant"}))
def test_dot_product_attention_inputs_match_reference(name):
    q, k, v = qkv(np.float32)
    scale, bias = dot_product_attention_inputs(ZOO[name], n_heads=2, length=T)
    layout = [jnp.asarray(x).transpose(0, 2, 1, 3) for x in (q, k, v)]  # (B, T, N, D)
    out = jax.nn.dot_product_attention(layout[0] * scale, *layout[1:], bias=bias,
                                       is_causal=True)
    out = np.asarray(out).transpose(0, 2, 1, 3)
    assert np.max(np.abs(out - reference(q, k, v, ZOO[name]))) <= TOL[np.float32]


def test_dot_product_attention_inputs_refuse_a_distance_multiplier():
    with pytest.raises(ValueError, match="depends on the distance"):
        dot_product_attention_inputs(ScaleInvariant(10), n_heads=1, length=8)


def test_dot_product_attention_inputs_are_alibi_and_logn_written_out():
    # ALiBi (Press et al. 2022): bias -slope·|i - j|, no scale; LogN: scale s·log(i + 1), no bias
    i, j = np.arange(6)[:, None], np.arange(6)[None, :]
    with jax.enable_x64(True):
        scale, bias = dot_product_attention_inputs(ALiBi(0.25), n_heads=1, length=6,
                                                   dtype=np.float64)
        assert np.array_equal(np.asarray(scale)[:, 0, 0], np.ones(6))
        assert np.array_equal(np.asarray(bias)[0, 0], -0.25 * np.abs(i - j))
        scale, bias = dot_product_attention_inputs(ZOO["logn"], n_heads=1, length=6,
                                                   dtype=np.float64)
        assert np.max(np.abs(np.asarray(scale)[:, 0, 0] - 0.4 * np.log(np.arange(1, 7)))) < 1e-15
        assert not np.any(np.asarray(bias))


def test_jax_score_mod_uses_the_trainer_tables():
    # the trainer's tables (float32, evaluation.scheme_arrays) are the ones the closure reads
    transform = ScaleInvariant(10)
    tables = coefficient_tables(transform, 2, 64)
    mod = jax_score_mod(transform, 64)
    t = np.arange(64)
    got = np.asarray(mod(jnp.ones(64, jnp.float32), 0, 0, jnp.asarray(t), jnp.zeros(64, int)))
    assert np.array_equal(got, tables["a_dist"][0] * np.float32(1) + tables["m_dist"][0])
