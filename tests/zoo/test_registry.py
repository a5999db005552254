"""The zoo against each source's own construction (attention-gym style, float64, dense grids).

Each reference below is written from the source's code or equation, not from sia_theory:
Qwen-1's ``logn_list`` indexed by absolute query position (``modeling_qwen.py`` of Qwen-7B-Chat,
read in the mirror undefdev/Qwen-7B-Chat at commit 04df5dd57b94), transformers' YaRN
``get_mscale`` (``modeling_rope_utils.py``, v5 line; the YaRN authors' jquesnelle/yarn at
995db5b575e7 has the same function) applied to cos/sin of a hand-written RoPE (so to q and k),
Llama-4's ``attn_scales`` over ``cache_position`` applied to the query (transformers
``modeling_llama4.py`` at commit 63210d0e3b74), the YaRN authors' dynamic scaling
``s = seq_len / original_max_position_embeddings``, and CAS's ``softmax(γ log n · cos)`` on unit
vectors. The attention factor with ``mscale`` / ``mscale_all_dim`` / ``attention_factor`` is held
against transformers in tests/attention/test_rope_scaling.py.
Known values catch transcription slips; every ZOO member is then run through coefficients,
score_mod, the closed forms and attention's fast path against its generic callable route.
"""

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sia_theory.attention import attention, attention_scores, qk_norm
from sia_theory.gaussian.closed_forms import expected_negentropy, expected_total_attention
from sia_theory.transforms import ALiBi, LogN, NoScale, ScaleInvariant
from sia_theory.zoo import (
    CriticalScaling,
    DynamicYaRNTemperature,
    Llama4Temperature,
    QwenLogN,
    SSMax,
    Temperature,
    YaRNTemperature,
    yarn_mscale,
)
from sia_theory.zoo.models import DeepSeekMScale, Grok2Temperature, MultiplierProduct, Sandwich
from sia_theory.zoo.registry import ZOO, zoo_table

T = 300  # dense grid of absolute positions 0..T-1


def _rng(seed):
    return np.random.default_rng(seed)


def _softmax_attention(logits, v, q_pos, k_pos):
    """Causal dense softmax in float64: ``logits`` (B, H, Tq, Tk), positions absolute."""
    logits = np.where(k_pos[None, :] <= q_pos[:, None], logits, -np.inf)  # (B, H, Tq, Tk)
    w = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return (w / w.sum(axis=-1, keepdims=True)) @ v  # (B, H, Tq, Dv)


def _qkv(n_q, n_k, d=8, seed=0):
    rng = _rng(seed)
    q = rng.standard_normal((1, 2, n_q, d))
    k, v = (rng.standard_normal((1, 2, n_k, d)) for _ in range(2))
    return q, k, v


def _grid_check(member, table_of_n, n_max=T):
    """coefficients(t, n) and score_mod on (q_idx, kv_idx) grids equal ``table[n]·S``."""
    n = np.arange(1, n_max + 1, dtype=np.float64)
    a, m = member.coefficients(np.zeros_like(n), n)
    np.testing.assert_allclose(a, table_of_n(n), rtol=1e-14, atol=0)
    np.testing.assert_array_equal(m, 0.0)
    q_idx, kv_idx = np.arange(n_max)[:, None], np.arange(n_max)[None, :]  # (T, 1), (1, T)
    score = _rng(1).standard_normal((n_max, n_max))  # (T, T)
    got = member.score_mod(score, 0, 0, q_idx, kv_idx)
    np.testing.assert_allclose(got, table_of_n(q_idx + 1.0) * score, rtol=1e-14, atol=0)


# ---- Qwen-1 use_logn_attn --------------------------------------------------------------------

def qwen_logn_list(seq_length, size=32768):
    """Qwen-1 modeling_qwen.py (Qwen-7B-Chat, commit 04df5dd57b94 of the mirror),
    QWenAttention.__init__, verbatim construction."""
    return [math.log(i, seq_length) if i > seq_length else 1 for i in range(1, size)]


@pytest.mark.parametrize("train_len", [2, 16, 100])
def test_qwen_logn_matches_logn_list_indexed_by_position(train_len):
    table = np.array(qwen_logn_list(train_len, T + 1), dtype=np.float64)  # index = position
    _grid_check(QwenLogN(train_len), lambda n: table[(np.asarray(n) - 1).astype(int)])


@pytest.mark.parametrize("n_q", [T, 7, 1])  # prefill, and decoding with a cache (seq_start)
def test_qwen_logn_attention_equals_query_scaled_by_logn_tensor(n_q):
    table = np.array(qwen_logn_list(16, T + 1))
    q, k, v = _qkv(n_q, T)
    seq_start, seq_end = T - n_q, T  # modeling_qwen: key.size(1) - query.size(1), key.size(1)
    q_src = q * table[seq_start:seq_end][None, None, :, None]  # query = query * logn_tensor
    logits = q_src @ k.swapaxes(-1, -2) / math.sqrt(q.shape[-1])  # (1, 2, Tq, T)
    want = _softmax_attention(logits, v, np.arange(seq_start, seq_end), np.arange(T))
    for mod in (QwenLogN(16), lambda *a: QwenLogN(16).score_mod(*a)):
        np.testing.assert_allclose(attention(q, k, v, score_mod=mod), want, rtol=0, atol=1e-12)


def test_qwen_logn_known_values():
    for train_len in (16, 2048, 8192):
        qwen = QwenLogN(train_len)
        assert qwen.coefficients(0, train_len**2)[0] == pytest.approx(2.0, abs=1e-14)
        assert qwen.coefficients(0, train_len**3)[0] == pytest.approx(3.0, abs=1e-14)
        np.testing.assert_array_equal(qwen.coefficients(np.zeros(3), [1, train_len // 2,
                                                                      train_len])[0], 1.0)
        assert qwen.coefficients(0, train_len + 1)[0] > 1.0


# ---- YaRN ------------------------------------------------------------------------------------

def yarn_get_mscale(scale=1.0):
    """transformers / DeepSeek / the YaRN authors' ``get_mscale`` with mscale=1."""
    if scale <= 1:
        return 1.0
    return 0.1 * math.log(scale) + 1.0


def rope_with_mscale(x, mscale, base=10000.0):
    """Rotate-half RoPE whose cos/sin are multiplied by ``mscale`` (transformers
    ``attention_scaling``): ``x·cos·m + rotate_half(x)·sin·m``, positions 0..T-1."""
    d = x.shape[-1]
    inv_freq = 1.0 / base ** (np.arange(0, d, 2) / d)  # (d/2,)
    freqs = np.arange(x.shape[-2])[:, None] * inv_freq[None, :]  # (T, d/2)
    emb = np.concatenate([freqs, freqs], axis=-1)  # (T, d)
    cos, sin = np.cos(emb) * mscale, np.sin(emb) * mscale
    rotated = np.concatenate([-x[..., d // 2:], x[..., : d // 2]], axis=-1)
    return x * cos + rotated * sin


@pytest.mark.parametrize("scale", [0.5, 1.0, 4.0, 32.0])
def test_yarn_attention_equals_mscale_on_cos_sin(scale):
    q, k, v = _qkv(64, 64, seed=2)
    m = yarn_get_mscale(scale)
    q_src, k_src = rope_with_mscale(q, m), rope_with_mscale(k, m)  # q and k both scaled
    logits = q_src @ k_src.swapaxes(-1, -2) / math.sqrt(q.shape[-1])  # (1, 2, T, T)
    want = _softmax_attention(logits, v, np.arange(64), np.arange(64))
    q_rot, k_rot = rope_with_mscale(q, 1.0), rope_with_mscale(k, 1.0)
    yarn = YaRNTemperature(scale)
    for mod in (yarn, lambda *a: yarn.score_mod(*a)):
        np.testing.assert_allclose(attention(q_rot, k_rot, v, score_mod=mod), want,
                                   rtol=0, atol=1e-12)
    _grid_check(yarn, lambda n: m * m * np.ones_like(n))


def test_yarn_mscale_equals_get_mscale():
    scales = np.concatenate([np.linspace(0.01, 1.0, 50), np.geomspace(1.0001, 1e6, 200)])
    np.testing.assert_allclose(yarn_mscale(scales), [yarn_get_mscale(s) for s in scales],
                               rtol=1e-15, atol=0)


def test_yarn_known_values():
    assert YaRNTemperature(1.0).multiplier() == 1.0
    assert YaRNTemperature(0.25).multiplier() == 1.0  # get_mscale: 1 for scale <= 1
    assert YaRNTemperature(math.exp(10)).attention_factor == pytest.approx(2.0, abs=1e-15)
    assert YaRNTemperature(math.exp(10)).multiplier() == pytest.approx(4.0, abs=1e-14)
    assert YaRNTemperature(4.0).multiplier() == pytest.approx((0.1 * math.log(4) + 1) ** 2)
    assert YaRNTemperature().depends_on == frozenset()  # s is fixed per deployment


def test_dynamic_yarn_rows_use_current_length():
    """Dynamic scaling (authors' LlamaDynamicYaRNScaledRotaryEmbedding: ``scale = seq_len /
    original_max_position_embeddings``, ``mscale = get_mscale(scale)`` on cos and sin):
    s = max(1, l'/L) with l' = q_idx + 1 the current length when decoding token by token."""
    train_len = 20
    table = np.array([yarn_get_mscale(i / train_len) ** 2 for i in range(1, T + 1)])
    _grid_check(DynamicYaRNTemperature(train_len), lambda n: table[(n - 1).astype(int)])
    q, k, v = _qkv(T, T, seed=4)
    logits = table[None, None, :, None] * (q @ k.swapaxes(-1, -2)) / math.sqrt(8)
    want = _softmax_attention(logits, v, np.arange(T), np.arange(T))
    np.testing.assert_allclose(attention(q, k, v, score_mod=DynamicYaRNTemperature(train_len)),
                               want, rtol=0, atol=1e-12)
    assert DynamicYaRNTemperature(100).coefficients(0, 100 * math.exp(10))[0] == \
        pytest.approx(4.0, abs=1e-13)


# ---- Llama-4 attention temperature tuning ----------------------------------------------------

def llama4_attn_scales(cache_position, floor_scale, attn_scale):
    """transformers modeling_llama4 (commit 63210d0e3b74), Llama4TextAttention.forward (NoPE
    layers): ``log(floor((cache_position + 1) / floor_scale) + 1) * attn_scale + 1``."""
    return np.log(np.floor((cache_position.astype(np.float64) + 1.0) / floor_scale) + 1.0) \
        * attn_scale + 1.0


@pytest.mark.parametrize("floor_scale, attn_scale", [(16, 0.1), (7, 0.5), (8192, 0.1)])
def test_llama4_attention_equals_query_scaled_by_attn_scales(floor_scale, attn_scale):
    cache_position = np.arange(T)
    scales = llama4_attn_scales(cache_position, floor_scale, attn_scale)  # (T,)
    member = Llama4Temperature(floor_scale, attn_scale)
    _grid_check(member, lambda n: scales[(np.asarray(n) - 1).astype(int)])
    q, k, v = _qkv(T, T, seed=5)
    q_src = q * scales[None, None, :, None]  # query_states * attn_scales
    logits = q_src @ k.swapaxes(-1, -2) / math.sqrt(8)
    want = _softmax_attention(logits, v, cache_position, cache_position)
    np.testing.assert_allclose(attention(q, k, v, score_mod=member), want, rtol=0, atol=1e-12)


def test_llama4_known_values():
    member = Llama4Temperature()
    pos = np.array([0, 8190, 8191, 16382, 16383])  # pos + 1 = 1, 8191, 8192, 16383, 16384
    a, _ = member.coefficients(np.zeros(5), pos + 1)
    np.testing.assert_allclose(a, [1, 1, 1 + 0.1 * math.log(2), 1 + 0.1 * math.log(2),
                                   1 + 0.1 * math.log(3)], rtol=1e-15)
    big = np.arange(1, 200_000, 997)
    np.testing.assert_allclose(member.coefficients(np.zeros(big.size), big)[0],
                               llama4_attn_scales(big - 1, 8192, 0.1), rtol=1e-15)


# ---- CAS critical scaling --------------------------------------------------------------------

def _unit(x):
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


@pytest.mark.parametrize("gamma, d", [(2.0, 16), (1.25, 64)])
def test_critical_scaling_under_qk_norm_equals_beta_cosine(gamma, d):
    """softmax(γ log n · cos) on unit tokens equals attention with RMSNorm'd q, k (|q| = √d)
    and CriticalScaling(γ, d) on S = q·k/√d."""
    u, w, v = _qkv(T, T, d=d, seed=6)
    u, w = _unit(u), _unit(w)
    cos = u @ w.swapaxes(-1, -2)  # (1, 2, T, T)
    n = np.arange(1, T + 1, dtype=np.float64)  # keys seen by each query
    want = _softmax_attention(gamma * np.log(n)[:, None] * cos, v, np.arange(T), np.arange(T))
    member = CriticalScaling(gamma, head_dim=d)
    np.testing.assert_allclose(attention(math.sqrt(d) * u, math.sqrt(d) * w, v,
                                         score_mod=member), want, rtol=0, atol=1e-12)
    raw_q, raw_k, _ = _qkv(T, T, d=d, seed=6)  # un-normalised; same directions as u, w
    q_n, k_n = qk_norm(raw_q, raw_k, eps=0.0)
    np.testing.assert_allclose(attention(q_n, k_n, v, score_mod=member), want,
                               rtol=0, atol=1e-12)
    # head_dim=None: S already is the cosine (unit vectors, scale=1).
    np.testing.assert_allclose(attention(u, w, v, scale=1.0, score_mod=CriticalScaling(gamma)),
                               want, rtol=0, atol=1e-12)


def test_critical_scaling_known_values():
    member = CriticalScaling(2.0, head_dim=64)
    n = np.array([1.0, math.e, 1e6])
    np.testing.assert_allclose(member.beta(n), [0.0, 2.0, 2 * math.log(1e6)], rtol=1e-15)
    np.testing.assert_allclose(member.coefficients(np.zeros(3), n)[0],
                               [0.0, 0.25, 0.25 * math.log(1e6)], rtol=1e-15)
    assert CriticalScaling(2.0).coefficients(0, math.e)[0] == pytest.approx(2.0, rel=1e-15)


# ---- SSMax, Temperature ----------------------------------------------------------------------

def test_ssmax_is_logn_with_nakanishi_formula():
    """SSMax (Nakanishi 2025 §3): weights ``n^{s z_j} / Σ_j n^{s z_j}`` over the n visible keys."""
    assert SSMax is LogN
    s = 0.43
    _grid_check(SSMax(s), lambda n: s * np.log(n))
    q, k, v = _qkv(T, T, seed=7)
    z = q @ k.swapaxes(-1, -2) / math.sqrt(8)  # (1, 2, T, T)
    n = np.arange(1, T + 1, dtype=np.float64)[:, None]  # (T, 1) keys each query sees
    power = np.where(np.tril(np.ones((T, T), bool)), n ** (s * z), 0.0)  # n^{s z}, masked
    want = (power / power.sum(axis=-1, keepdims=True)) @ v
    np.testing.assert_allclose(attention(q, k, v, score_mod=SSMax(s)), want, rtol=0, atol=1e-12)


def test_temperature_is_a_constant_multiplier():
    member = Temperature(0.7)
    _grid_check(member, lambda n: 0.7 * np.ones_like(n, dtype=np.float64))
    q, k, v = _qkv(40, 40)
    logits = 0.7 * (q @ k.swapaxes(-1, -2)) / math.sqrt(8)
    np.testing.assert_allclose(attention(q, k, v, score_mod=member),
                               _softmax_attention(logits, v, np.arange(40), np.arange(40)),
                               rtol=0, atol=1e-12)


@pytest.mark.parametrize("make, param", [
    (lambda: Temperature(0), "c"), (lambda: Temperature(float("inf")), "c"),
    (lambda: QwenLogN(1), "train_len"), (lambda: QwenLogN(2.5), "train_len"),
    (lambda: YaRNTemperature(-1), "scale"), (lambda: YaRNTemperature("4"), "scale"),
    (lambda: YaRNTemperature(factor=0), "factor"),
    (lambda: YaRNTemperature(2, factor=2), "scale and factor"),
    (lambda: YaRNTemperature(2, mscale=-1), "mscale"),
    (lambda: YaRNTemperature(2, mscale_all_dim=float("nan")), "mscale_all_dim"),
    (lambda: YaRNTemperature(2, attention_factor=0), "attention_factor"),
    (lambda: QwenLogN(seq_length=1), "seq_length"),
    (lambda: QwenLogN(16, seq_length=16), "train_len and seq_length"),
    (lambda: DynamicYaRNTemperature(original_max_position_embeddings=0),
     "original_max_position_embeddings"),
    (lambda: DynamicYaRNTemperature(0), "train_len"),
    (lambda: Llama4Temperature(0), "floor_scale"),
    (lambda: Llama4Temperature(8192, -0.1), "attn_scale"),
    (lambda: CriticalScaling(0), "gamma"), (lambda: CriticalScaling(2, 0), "head_dim"),
    (lambda: CriticalScaling(2, 8.5), "head_dim"),
])
def test_bad_parameters_raise_naming_them(make, param):
    with pytest.raises(ValueError, match=param):
        make()


def test_members_take_the_reference_parameter_names():
    """Qwen's config calls the training length ``seq_length``, YaRN's ``rope_parameters`` call
    the scale ``factor``, the authors' dynamic YaRN ``original_max_position_embeddings``."""
    assert QwenLogN(seq_length=2048) == QwenLogN(2048)
    assert YaRNTemperature(factor=4.0) == YaRNTemperature(4.0)
    assert YaRNTemperature(factor=4.0).factor == 4.0
    assert DynamicYaRNTemperature(original_max_position_embeddings=4096) == \
        DynamicYaRNTemperature(4096)
    assert Llama4Temperature(floor_scale=8192, attn_scale=0.1) == Llama4Temperature()


@pytest.mark.parametrize("member", [QwenLogN(), DynamicYaRNTemperature(), Llama4Temperature(),
                                    CriticalScaling()])
def test_context_members_require_n_ctx(member):
    with pytest.raises(ValueError, match="n_ctx"):
        member.coefficients(np.arange(3))


# ---- the registry ----------------------------------------------------------------------------

# Each ZOO default's law written out here: (score, t, n) -> logit.
ZOO_LAWS = {
    "none": lambda s, t, n: s,
    "temperature": lambda s, t, n: 1.5 * s,
    "logn": lambda s, t, n: 0.4 * np.log(n) * s,
    "qwen-logn": lambda s, t, n: np.maximum(1.0, np.log(n) / np.log(8192)) * s,
    "yarn": lambda s, t, n: (0.1 * np.log(4.0) + 1) ** 2 * s,
    "yarn-dynamic": lambda s, t, n: (0.1 * np.log(np.maximum(1.0, n / 8192)) + 1) ** 2 * s,
    "llama4": lambda s, t, n: (np.log(np.floor(n / 8192) + 1) * 0.1 + 1) * s,
    "critical": lambda s, t, n: 2.0 * np.log(n) / 8.0 * s,
    "alibi": lambda s, t, n: s - t / 16,
    "scale-invariant": lambda s, t, n: (np.sqrt(1 + 2 * np.log(t / 10 + 1)) * s
                                        - 2 * np.log(t / 10 + 1)),
    # Ministral-3 (transformers get_llama_4_attn_scale at the position p = n - 1, beta 0.1)
    "mistral": lambda s, t, n: (1 + 0.1 * np.log(1 + np.floor((n - 1) / 16384))) * s,
    # sglang's Grok-2 law: log2(p)/log2(1024) = log2(p)/10 where p = n - 1 > 1024
    "grok2": lambda s, t, n: np.where(n - 1 > 1024, np.log2(np.maximum(n - 1, 1)) / 10, 1) * s,
    # vLLM DeepseekV2Attention: softmax scale times (0.1·mscale_all_dim·ln factor + 1)²
    "deepseek-mscale": lambda s, t, n: (0.1 * np.log(40) + 1) ** 2 * s,
    # Mistral-Small-4: DeepSeek's mscale² (factor 128) times Mistral's scaling (L = 8192)
    "mistral4": lambda s, t, n: ((0.1 * np.log(128) + 1) ** 2
                                 * (1 + 0.1 * np.log(1 + np.floor((n - 1) / 8192))) * s),
    # LongRoPE sqrt(1 + ln 32/ln 4096) on cos and sin: ln 32/ln 4096 = 5/12, squared on the logit
    "longrope": lambda s, t, n: 17 / 12 * s,
    # attention-gym generate_sandwich_bias, one head (H/(8(h+1)) = 1/8), d_bar = 128, its
    # frequencies as it writes them: 1 / 10000^(arange(0, d_bar, 2) / d_bar)
    "sandwich": lambda s, t, n: s + np.cos(np.asarray(t, dtype=float)[..., None] / 10000.0 ** (
        np.arange(0, 128, 2) / 128)).sum(-1) / 8,
}


# Sandwich sums 64 cosines cos(t·w_i)/8: the argument's rounding (t·eps) grows with t, so at the
# tests' t <= 20 000 the sum carries t·eps·Σw_i/8 ≈ 4e-12 (Σw_i ≈ 7.6) beside other orders.
SUM_ATOL = {"sandwich": 1e-11}


def test_zoo_covers_every_member_and_default():
    assert set(ZOO) == set(ZOO_LAWS)
    kinds = {type(member) for member in ZOO.values()}
    assert {NoScale, LogN, ALiBi, ScaleInvariant, Temperature, QwenLogN, YaRNTemperature,
            DynamicYaRNTemperature, Llama4Temperature, CriticalScaling, Grok2Temperature,
            DeepSeekMScale, MultiplierProduct, Sandwich} == kinds
    assert len(ZOO) == 16  # the ten of the papers and model cards, six of shipped configs
    assert ZOO["mistral"].offset == 0.0 and ZOO["llama4"].offset == 1.0


@pytest.mark.parametrize("name", list(ZOO_LAWS))
def test_zoo_member_coefficients_and_score_mod_follow_its_law(name):
    member, law = ZOO[name], ZOO_LAWS[name]
    t = np.arange(0, 3000, 7, dtype=np.float64)[:, None]  # (nt, 1)
    n = np.array([1, 100, 8191, 8192, 8193, 16384, 70_000, 10**6], dtype=np.float64)[None]
    a, m = member.coefficients(t, t + n)  # n >= t + 1 keys: the key is in the context
    np.testing.assert_allclose(a, law(1.0, t, t + n) - law(0.0, t, t + n), rtol=1e-13, atol=0)
    np.testing.assert_allclose(m, law(0.0, t, t + n) * np.ones_like(m), rtol=1e-13,
                               atol=SUM_ATOL.get(name, 1e-14))
    q_idx = np.array([0, 5, 8190, 8191, 9000, 20_000])[:, None]  # (nq, 1)
    kv_idx = np.arange(0, 9000, 13)[None, :]  # (1, nk)
    score = _rng(8).standard_normal((q_idx.size, kv_idx.size))
    got = member.score_mod(score, 0, 0, q_idx, kv_idx)
    want = law(score, np.abs(q_idx - kv_idx).astype(float), q_idx + 1.0)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=SUM_ATOL.get(name, 1e-13))


@pytest.mark.parametrize("name", list(ZOO_LAWS))
def test_zoo_member_closed_forms_equal_lognormal_sums_of_its_law(name):
    member, law = ZOO[name], ZOO_LAWS[name]
    for t1, t2, n_ctx in ((0, 64, 64), (100, 200, 10_000), (1000, 2000, 50_000)):
        t = np.arange(t1, t2, dtype=np.float64)
        a = law(1.0, t, n_ctx) - law(0.0, t, n_ctx)
        m = law(0.0, t, n_ctx) * np.ones_like(t)
        weight = np.exp(m + a * a / 2)  # E[e^{aS+m}], S ~ N(0, 1)
        assert expected_total_attention(member, t1, t2, n_ctx=n_ctx) == \
            pytest.approx(weight.sum(), rel=1e-12)
        assert expected_negentropy(member, t1, t2, n_ctx=n_ctx) == \
            pytest.approx(np.sum((m + a * a) * weight), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("name", list(ZOO_LAWS))
@pytest.mark.parametrize("causal", [True, False])
def test_zoo_member_fast_path_equals_its_score_mod(name, causal):
    """Attention's route chosen from depends_on (tables, per-row multipliers) must equal the
    generic callable route and the dense law, with queries deep enough (q_idx up to 20 000)
    that the 8192-token thresholds of QwenLogN, Llama-4 and dynamic YaRN are crossed."""
    member, law = ZOO[name], ZOO_LAWS[name]
    for n_q, n_k in ((40, 40), (4, 20_000)):
        q, k, v = _qkv(n_q, n_k, d=4, seed=9)
        q_pos = (n_k - n_q if causal else 0) + np.arange(n_q)
        k_pos = np.arange(n_k)
        raw = q @ k.swapaxes(-1, -2) / 2.0  # (1, 2, Tq, Tk), √d = 2
        want = law(raw, np.abs(q_pos[:, None] - k_pos[None, :]).astype(float),
                   q_pos[:, None] + 1.0)
        if causal:
            want = np.where(k_pos[None, :] <= q_pos[:, None], want, -np.inf)
        generic = lambda *args: member.score_mod(*args)  # noqa: E731
        for mod in (member, generic):
            got = attention_scores(q, k, score_mod=mod, causal=causal)
            np.testing.assert_allclose(got, want, rtol=0, atol=SUM_ATOL.get(name, 1e-12))
        fast = attention(q, k, v, score_mod=member, causal=causal, block_size=16)
        slow = attention(q, k, v, score_mod=generic, causal=causal)
        np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-12)


def test_zoo_table_describes_every_member():
    table = zoo_table()
    assert list(table["name"]) == list(ZOO)
    assert {"name", "class", "parameters", "source", "depends_on", "n_convention",
            "applied_to", "formula"} <= set(table.columns)
    row = table.set_index("name")
    assert row.loc["qwen-logn", "applied_to"] == "q only"
    assert row.loc["yarn", "applied_to"].startswith("q and k")
    assert row.loc["llama4", "depends_on"] == "context"
    assert row.loc["scale-invariant", "depends_on"] == "distance"
    assert row.loc["yarn", "depends_on"] == "-"
    assert row.loc["mistral4", "depends_on"] == "context"
    assert row.loc["sandwich", "depends_on"] == "distance"
    assert row.loc["longrope", "class"] == "Temperature"
    assert all(table["source"].str.len() > 10)


def test_importing_the_zoo_loads_no_pandas_numba_or_sympy():
    code = ("import sys, sia_theory.zoo; "
            "print(sorted(m for m in ('pandas', 'numba', 'sympy') if m in sys.modules))")
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [str(root), os.environ.get("PYTHONPATH")])))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, cwd=root, check=True).stdout.strip()
    assert out == "[]"
