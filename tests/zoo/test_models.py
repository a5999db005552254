"""The shipped models' members (sia_theory.zoo.models, Llama4Temperature's offset) against their
implementations' code, written out here in numpy (no torch):

* llama.cpp ``src/llama-graph.cpp`` (ggml-org/llama.cpp commit 434f71a5b4d1),
  ``llm_graph_input_attn_temp::set_input``: ``log(floor((pos + f_attn_temp_offset)/
  n_attn_temp_floor_scale) + 1)·f_attn_temp_scale + 1``, offset 1 for Llama 4 and 0 for the
  Mistral/DeepSeek-2 architectures (``src/llama-model.cpp``, commit a5410f046c01);
* vLLM ``vllm/model_executor/models/deepseek_v2.py`` (vllm-project/vllm commit 002d6073aa03):
  ``_get_llama_4_scaling`` at the positions, and ``self.scaling = qk_head_dim**-0.5·mscale²``
  with ``mscale = yarn_get_mscale(factor, mscale_all_dim)``;
* sglang ``python/sglang/srt/layers/attention/triton_ops/decode_attention.py``
  (sgl-project/sglang commit 83ea222010e3): ``xai_temperature_reg = where(p > L, log2(p)/
  log2(L), 1)`` with ``p = seq_len − 1`` of the decoded query;
* attention-gym ``attn_gym/mods/sandwich.py`` (meta-pytorch/attention-gym commit 70ab2d6fe07e):
  the relative-distance table and ``head_scale = H/(8(h+1))``.
"""

import math

import numpy as np
import pytest

from sia_theory.attention import attention
from sia_theory.gaussian.closed_forms import expected_total_attention
from sia_theory.gaussian.frullani import row_nodes
from sia_theory.gaussian.quadrature import distance_quadrature
from sia_theory.studies.ext_needle import NeedleSettings
from sia_theory.zoo import Llama4Temperature, QwenLogN, Temperature
from sia_theory.zoo.models import (
    DeepSeekMScale,
    Grok2Temperature,
    MultiplierProduct,
    Sandwich,
    mistral_temperature,
)

POS = np.concatenate([np.arange(0, 40000, 7), [8191, 8192, 16383, 16384, 10**6, 10**7]])


def llama_cpp_attn_scale(pos, floor_scale, scale, offset):
    """llama.cpp set_input, one query position at a time (float64 here)."""
    return np.array([math.log(math.floor((p + offset) / floor_scale) + 1.0) * scale + 1.0
                     for p in pos])


def vllm_llama_4_scaling(original, beta, positions):
    """vLLM deepseek_v2.py _get_llama_4_scaling."""
    return 1 + beta * np.log(1 + np.floor(positions / original))


def sglang_grok_temperature(p, length):
    """sglang decode kernel: offs_qidx = seq_len − 1 = p."""
    scale = 1.0 / math.log2(float(length))
    with np.errstate(divide="ignore"):
        qtemp = np.log2(p.astype(np.float64)) * scale
    return np.where(p > length, qtemp, 1.0)


def vllm_yarn_get_mscale(scale=1.0, mscale=1.0):
    return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0


@pytest.mark.parametrize("floor_scale, scale", [(8192, 0.1), (16384, 0.1), (1000, 0.3)])
def test_llama4_offset_one_is_llama_cpp_llama4(floor_scale, scale):
    got = Llama4Temperature(floor_scale, scale).multiplier(POS + 1.0)
    np.testing.assert_allclose(got, llama_cpp_attn_scale(POS, floor_scale, scale, 1.0),
                               rtol=1e-15)


@pytest.mark.parametrize("floor_scale, scale", [(8192, 0.1), (16384, 0.1), (1000, 0.3)])
def test_offset_zero_is_llama_cpp_mistral_and_vllm(floor_scale, scale):
    member = Llama4Temperature(floor_scale, scale, offset=0.0)
    got = member.multiplier(POS + 1.0)
    np.testing.assert_allclose(got, llama_cpp_attn_scale(POS, floor_scale, scale, 0.0),
                               rtol=1e-15)
    np.testing.assert_allclose(got, vllm_llama_4_scaling(floor_scale, scale, POS), rtol=1e-15)
    assert mistral_temperature(scale, floor_scale) == member


def test_llama4_default_keeps_todays_numbers_bit_for_bit():
    n = np.concatenate([np.arange(1, 50000, 3.7), [8192.0, 8191.999, 1e9 + 0.5]])
    old = np.log(np.floor(n / 8192.0) + 1.0) * 0.1 + 1.0  # the class body before the offset
    np.testing.assert_array_equal(Llama4Temperature().multiplier(n), old)
    assert repr(Llama4Temperature()) == "Llama4Temperature(floor_scale=8192.0, attn_scale=0.1)"


def test_the_offset_is_the_1_0693_at_16383_difference():
    """At position 16383, Llama4Temperature(16384, 0.1) gives 1 + 0.1 ln 2 ≈ 1.0693 (p + 1 =
    16384); Ministral-3's law gives 1.0 (p = 16383 < 16384)."""
    n = np.array([16384.0])
    assert Llama4Temperature(16384, 0.1).multiplier(n)[0] == pytest.approx(1 + 0.1 * math.log(2))
    assert mistral_temperature(0.1, 16384).multiplier(n)[0] == 1.0


def test_grok2_is_sglangs_law_at_the_position():
    got = Grok2Temperature(attn_temperature_len=1024).multiplier(POS + 1.0)
    np.testing.assert_allclose(got, sglang_grok_temperature(POS, 1024), rtol=1e-15)
    # near alternative: Qwen's logn reads n = p + 1 and starts one token earlier
    qwen = QwenLogN(1024).multiplier(POS + 1.0)
    assert not np.allclose(qwen, got, rtol=1e-12)
    assert Grok2Temperature(1024).multiplier([1025.0])[0] == 1.0  # p = 1024: not yet
    assert QwenLogN(1024).multiplier([1025.0])[0] > 1.0


@pytest.mark.parametrize("factor, mscale_all_dim", [(40.0, 1.0), (128.0, 1.0), (4.0, 0.707),
                                                    (1.0, 1.0), (40.0, 0.0)])
def test_deepseek_mscale_is_vllms_softmax_scale(factor, mscale_all_dim):
    qk_head_dim = 192
    base = qk_head_dim ** -0.5
    mscale = vllm_yarn_get_mscale(factor, float(mscale_all_dim))
    scaling = base * mscale * mscale
    got = DeepSeekMScale(factor, mscale_all_dim).multiplier()
    assert got == pytest.approx(scaling / base, rel=1e-14)


def test_product_multiplies_and_unions_dependence():
    product = MultiplierProduct((DeepSeekMScale(128.0, 1.0), mistral_temperature(0.1, 8192)))
    n = POS + 1.0
    want = vllm_yarn_get_mscale(128.0, 1.0) ** 2 * vllm_llama_4_scaling(8192, 0.1, POS)
    np.testing.assert_allclose(product.multiplier(n), want, rtol=1e-14)
    assert product.depends_on == frozenset({"context"})
    with pytest.raises(ValueError, match="members"):
        MultiplierProduct(())


def attention_gym_sandwich(n_heads, max_seq_len, d_bar=128):
    """attn_gym/mods/sandwich.py generate_sandwich_bias, in numpy: (table, head_scale, offset)."""
    freqs = 1.0 / 10000 ** (2 * np.arange(d_bar // 2) / d_bar)
    padded = -(-(2 * max_seq_len - 1) // 8) * 8
    distances = np.arange(padded) - (max_seq_len - 1)
    table = np.cos(np.abs(distances)[:, None] * freqs).sum(axis=-1)
    head_scale = n_heads / (8.0 * np.arange(1, n_heads + 1))
    return table, head_scale, max_seq_len - 1


@pytest.mark.parametrize("n_heads", [1, 4])
def test_sandwich_is_attention_gyms_score_mod(n_heads):
    T = 200
    table, head_scale, offset = attention_gym_sandwich(n_heads, T)
    member = Sandwich(n_heads=n_heads)
    q_idx, kv_idx = np.arange(T)[:, None], np.arange(T)[None, :]
    score = np.random.default_rng(0).standard_normal((T, T))
    for h in range(n_heads):
        want = score + table[q_idx - kv_idx + offset] * head_scale[h]
        got = member.score_mod(score, 0, None if n_heads == 1 else h, q_idx, kv_idx)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_sandwich_fast_path_equals_its_score_mod():
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal((1, 1, 64, 8)) for _ in range(3))
    member = Sandwich(1, 32)
    fast = attention(q, k, v, score_mod=member)  # the Transform: one table per distance
    slow = attention(q, k, v, score_mod=member.score_mod)  # a callable: every score
    np.testing.assert_allclose(fast, slow, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("make, match", [
    (lambda: Grok2Temperature(1), "length"),
    (lambda: Grok2Temperature(8, attn_temperature_len=8), "not both"),
    (lambda: DeepSeekMScale(0.0, 1.0), "factor"),
    (lambda: DeepSeekMScale(4.0, -1.0), "mscale_all_dim"),
    (lambda: Sandwich(0), "n_heads"),
    (lambda: Sandwich(1, 7), "d_bar"),
    (lambda: Sandwich(4).coefficients(np.array([1.0]), h=4), "h must"),
    (lambda: Llama4Temperature(8192, 0.1, offset=2.0), "offset"),
    (lambda: MultiplierProduct((Temperature(2.0), Sandwich())), "members"),
])
def test_bad_parameters_raise_naming_them(make, match):
    with pytest.raises(ValueError, match=match):
        make()


@pytest.mark.parametrize("member", [
    Grok2Temperature(8), mistral_temperature(0.2, 8), DeepSeekMScale(40.0, 1.0),
    MultiplierProduct((DeepSeekMScale(16.0, 1.0), Grok2Temperature(4))), Sandwich(4, 16)],
    ids=["grok2", "mistral", "deepseek", "product", "sandwich-4-heads"])
def test_declared_dependence_routes_equal_the_callable_route(member):
    """attention picks its route from depends_on (per-row multipliers, per-head distance
    tables); it must equal the generic route through score_mod, on every score."""
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal((1, 4, 80, 8)) for _ in range(3))
    fast = attention(q, k, v, score_mod=member)
    slow = attention(q, k, v, score_mod=lambda s, b, h, qi, ki: member.score_mod(s, b, h, qi, ki))
    np.testing.assert_allclose(fast, slow, rtol=1e-12, atol=1e-12)


def test_the_exact_route_refuses_the_oscillating_sandwich_bias():
    """cos(t·w_i) oscillates with period 2π: the quadrature in log t misses E[Z] over 1000 keys
    by percents (why it is refused); the Needle study's default schemes leave it out."""
    member = Sandwich(1, 128)
    t = np.arange(1000.0)
    a, m = member.coefficients(t)
    plain = np.exp(m + a * a / 2).sum()  # E[e^{S + m_t}] summed key by key
    nodes, weights = distance_quadrature(0, 1000)
    a, m = member.coefficients(nodes)
    assert abs((weights * np.exp(m + a * a / 2)).sum() / plain - 1) > 0.01
    assert expected_total_attention(member, 0, 1000) == pytest.approx(plain, rel=1e-13)
    with pytest.raises(ValueError, match="smooth_in_distance"):
        row_nodes(member, 0, 1000)
    with pytest.raises(ValueError, match="exact route"):
        NeedleSettings(schemes=("none", "sandwich"))
    assert "sandwich" not in NeedleSettings().schemes and "mistral4" in NeedleSettings().schemes


def test_longrope_attention_factor():
    """LongRoPE's default attention factor √(1 + ln f / ln L) (transformers'
    ``_compute_longrope_parameters``, written out here)."""
    from sia_theory.zoo.models import longrope_attention_factor

    assert longrope_attention_factor(32, 4096) == pytest.approx(
        math.sqrt(1 + math.log(32) / math.log(4096)))
    assert longrope_attention_factor(1.0, 4096) == 1.0
    with pytest.raises(ValueError, match="factor"):
        longrope_attention_factor(0.0, 4096)
