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
from sia_theory.attention import attention, attention_dense  # noqa: E402
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


def decode_qkv(n_queries, n_keys=64, n_heads=4, n_kv_heads=4, seed=5):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((1, n_heads, n_queries, 16))
    k, v = (rng.standard_normal((1, n_kv_heads, n_keys, 16)) for _ in range(2))
    return q, k, v


@pytest.mark.parametrize("n_queries", [1, pytest.param(3, marks=pytest.mark.slow)])
@pytest.mark.parametrize("name", ["scale-invariant", "logn", "alibi-per-head"])
def test_jax_attention_decoding_matches_reference(name, n_queries):
    # queries at the last Tq positions of a 64-key cache, as the numpy reference places them
    transform = ALiBi.standard(4) if name == "alibi-per-head" else ZOO[name]
    q, k, v = decode_qkv(n_queries)
    with jax.enable_x64(True):
        out = np.asarray(jax_attention(q, k, v, transform))
    assert np.max(np.abs(out - attention(q, k, v, score_mod=transform))) <= 1e-12


def test_jax_attention_without_the_causal_mask_matches_reference():
    # causal=False: queries at 0 … Tq−1, more queries than keys allowed; 2 key-value heads
    q, k, v = decode_qkv(80, n_keys=48, n_kv_heads=2)
    with jax.enable_x64(True):
        out = np.asarray(jax_attention(q, k, v, ScaleInvariant(10), causal=False))
    want = attention(q, k, v, score_mod=ScaleInvariant(10), causal=False)
    assert np.max(np.abs(out - want)) <= 1e-12


def test_jax_score_mod_q_offset_is_the_absolute_position():
    q_idx, kv_idx = np.arange(4).reshape(-1, 1), np.arange(40).reshape(1, -1)
    score = np.random.default_rng(2).standard_normal((4, 40))
    with jax.enable_x64(True):
        for name in ("scale-invariant", "logn", "alibi"):
            mod = jax_score_mod(ZOO[name], 40, q_offset=36)
            got = np.asarray(mod(jnp.asarray(score), 0, 0, jnp.asarray(q_idx), jnp.asarray(kv_idx)))
            want = ZOO[name].score_mod(score, 0, 0, q_idx + 36, kv_idx)
            assert np.max(np.abs(got - want)) <= 1e-13 * (1 + np.max(np.abs(want))), name
    with pytest.raises(ValueError, match="q_offset must be an integer >= 0"):
        jax_score_mod(ScaleInvariant(), 8, q_offset=-2)


def test_jax_score_mod_default_dtype_follows_the_scores():
    tables64 = coefficient_tables(ScaleInvariant(10), 1, 16, np.float64)
    tables32 = coefficient_tables(ScaleInvariant(10), 1, 16, np.float32)
    t = jnp.arange(16)
    with jax.enable_x64(True):
        mod = jax_score_mod(ScaleInvariant(10), 16)
        got64 = np.asarray(mod(jnp.full(16, 0.5, jnp.float64), 0, 0, t, jnp.zeros(16, int)))
        got32 = np.asarray(mod(jnp.full(16, 0.5, jnp.float32), 0, 0, t, jnp.zeros(16, int)))
    assert got64.dtype == np.float64 and got32.dtype == np.float32
    assert np.array_equal(got64, 0.5 * tables64["a_dist"][0] + tables64["m_dist"][0])
    assert np.array_equal(got32, np.float32(0.5) * tables32["a_dist"][0] + tables32["m_dist"][0])
    # built without x64 there are no float64 tables: float64 scores later are refused
    mod = jax_score_mod(ScaleInvariant(10), 16)
    with jax.enable_x64(True), pytest.raises(ValueError, match="no float64 tables"):
        mod(jnp.full(16, 0.5, jnp.float64), 0, 0, t, jnp.zeros(16, int))


def test_jax_score_mod_out_of_range_positions_read_nan():
    # LogN: 0.4·log(n)·score with n = q_idx + 1 inside the 8-entry table, NaN past it and for
    # a negative index; SI: NaN from distance 8 on
    score, zero = jnp.full(5, 0.5), jnp.zeros(5, int)
    q_idx = jnp.array([-3, 0, 7, 8, 20])
    got = np.asarray(jax_score_mod(ZOO["logn"], 8)(score, 0, 0, q_idx, zero))
    assert np.all(np.isnan(got[[0, 3, 4]]))
    assert np.max(np.abs(got[[1, 2]] - 0.4 * np.log([1.0, 8.0]) * 0.5)) <= 1e-6
    got = np.asarray(jax_score_mod(ScaleInvariant(10), 8)(score, 0, 0, q_idx, zero))
    a2 = 1 + 2 * np.log1p(np.array([3.0, 0.0, 7.0]) / 10)
    assert np.all(np.isnan(got[[3, 4]]))
    assert np.max(np.abs(got[:3] - (np.sqrt(a2) * 0.5 + 1 - a2))) <= 1e-6


def test_jax_score_mod_refuses_huge_tables():
    with pytest.raises(ValueError, match=r"max_len=1000000000000 needs about .* TiB"):
        jax_score_mod(ScaleInvariant(10), 10**12)
    with pytest.raises(ValueError, match="max_len=1000 needs about"):
        jax_score_mod(ScaleInvariant(10), 1000, max_bytes=1000)


BAD_INPUTS = {
    "q 3-D": ((1, 8, 4), (1, 1, 8, 4), (1, 1, 8, 4), "q must be a 4-D array"),
    "k 5-D": ((1, 1, 8, 4), (1, 1, 1, 8, 4), (1, 1, 8, 4), "k must be a 4-D array"),
    "empty": ((1, 1, 0, 4), (1, 1, 8, 4), (1, 1, 8, 4), "q must have no empty axis"),
    "batch": ((2, 1, 8, 4), (1, 1, 8, 4), (1, 1, 8, 4), "one batch size B"),
    "v positions": ((1, 1, 8, 4), (1, 1, 8, 4), (1, 1, 9, 4), "v must have k's heads Hkv and"),
    "v heads": ((1, 2, 8, 4), (1, 2, 8, 4), (1, 1, 8, 4), "v must have k's heads Hkv and"),
    "groups": ((1, 3, 8, 4), (1, 2, 8, 4), (1, 2, 8, 4), "H=3 must be a multiple of k's"),
    "head dim": ((1, 1, 8, 4), (1, 1, 8, 5), (1, 1, 8, 4), "k must have q's head dimension"),
    "Tq > Tk": ((1, 1, 9, 4), (1, 1, 8, 4), (1, 1, 8, 4), "Tq=9 > Tk=8"),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_jax_attention_refuses_malformed_inputs(case):
    *shapes, message = BAD_INPUTS[case]
    q, k, v = (np.ones(shape, np.float32) for shape in shapes)
    with pytest.raises(ValueError, match=message):
        jax_attention(q, k, v, ScaleInvariant(10))


def test_jax_attention_refuses_integer_inputs():
    q = np.ones((1, 1, 8, 4), np.float32)
    with pytest.raises(ValueError, match="k must have a floating dtype, got int32"):
        jax_attention(q, q.astype(np.int32), q)


def test_jax_score_mod_reads_no_nan_inside_max_len():
    # every (q_idx, kv_idx) below max_len, the masked ones (kv_idx > q_idx) included, is the
    # transform's own score_mod: the NaN entry past the tables is never read
    q_idx, kv_idx = np.arange(T).reshape(-1, 1), np.arange(T).reshape(1, -1)
    score = np.random.default_rng(4).standard_normal((T, T))
    with jax.enable_x64(True):
        for name, transform in ZOO.items():
            got = np.asarray(jax_score_mod(transform, T)(jnp.asarray(score), 0, 0,
                                                         jnp.asarray(q_idx), jnp.asarray(kv_idx)))
            want = transform.score_mod(score, 0, 0, q_idx, kv_idx)
            assert np.max(np.abs(got - want)) <= 1e-13 * (1 + np.max(np.abs(want))), name
