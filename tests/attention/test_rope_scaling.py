"""NTK, dynamic NTK, YaRN and Llama-3.1 RoPE scaling against the code models actually run.

Each reference below is typed out here, line by line, from the source it names (in float64; the
sources compute in float32), never computed by sia_theory:

* the YaRN authors' ``scaled_rope/LlamaYaRNScaledRotaryEmbedding.py`` (``find_correction_dim``,
  ``find_correction_range``, ``linear_ramp_mask``, ``yarn``) and
  ``scaled_rope/LlamaNTKScaledRotaryEmbedding.py``, github.com/jquesnelle/yarn at commit
  995db5b575e75230b3384d658f8b944c9662f775 (2024-04-17);
* transformers ``src/transformers/modeling_rope_utils.py``: ``_compute_yarn_parameters``,
  ``_compute_llama3_parameters`` and ``_compute_dynamic_ntk_parameters`` of the v5
  ``rope_parameters`` line (with ``truncate`` and the v5 ``factor`` default); the ramp and the
  dynamic NTK formula read the same at commit ef46806472a64b0013ed413781e3afed82bfa047 (v4.4x);
* YaRN (Peng et al. 2023) §3.2 as written in the paper (ramp in the number of rotations).
"""

import math

import numpy as np
import pytest

from sia_theory.attention import (
    DecoderConfig,
    DynamicNTKRoPE,
    NTKRoPE,
    RoPE,
    YaRNRoPE,
    dynamic_ntk_base,
    ntk_base,
    yarn_frequencies,
)
from sia_theory.schemes import from_rope_parameters
from sia_theory.zoo import YaRNTemperature

# --- the references, typed out ---------------------------------------------------------------


def authors_yarn_inv_freq(dim, base, scale, original_max_position_embeddings, beta_fast=32,
                          beta_slow=1):
    """jquesnelle/yarn LlamaYaRNScaledRotaryEmbedding.yarn (extrapolation_factor = 1)."""
    def find_correction_dim(num_rotations):
        return (dim * math.log(original_max_position_embeddings / (num_rotations * 2 * math.pi))
                ) / (2 * math.log(base))

    low = max(math.floor(find_correction_dim(beta_fast)), 0)
    high = min(math.ceil(find_correction_dim(beta_slow)), dim - 1)
    if low == high:
        high += 0.001
    out = []
    for i in range(dim // 2):
        pos_freq = base ** (2 * i / dim)
        ramp = min(max((i - low) / (high - low), 0.0), 1.0)
        mask = 1 - ramp  # inv_freq_mask
        out.append(1.0 / (scale * pos_freq) * (1 - mask) + 1.0 / pos_freq * mask)
    return np.array(out)


def transformers_yarn(rope_parameters, head_dim, max_position_embeddings):
    """transformers v5 _compute_yarn_parameters -> (inv_freq, attention_factor)."""
    p = rope_parameters
    base, dim = p["rope_theta"], head_dim
    factor, attention_factor = p.get("factor"), p.get("attention_factor")
    mscale, mscale_all_dim = p.get("mscale"), p.get("mscale_all_dim")
    original = p.get("original_max_position_embeddings", max_position_embeddings)
    if factor is None:
        factor = max_position_embeddings / original

    def get_mscale(scale, mscale=1):
        return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0

    if attention_factor is None:
        if mscale and mscale_all_dim:
            attention_factor = float(get_mscale(factor, mscale) / get_mscale(factor,
                                                                              mscale_all_dim))
        else:
            attention_factor = get_mscale(factor)
    beta_fast, beta_slow = p.get("beta_fast") or 32, p.get("beta_slow") or 1

    def find_correction_dim(n):
        return (dim * math.log(original / (n * 2 * math.pi))) / (2 * math.log(base))

    low, high = find_correction_dim(beta_fast), find_correction_dim(beta_slow)
    if p.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    pos_freqs = base ** (np.arange(0, dim, 2) / dim)
    extrapolation_factor = 1 - np.clip((np.arange(dim // 2) - low) / (high - low), 0, 1)
    inv_freq = (1.0 / (factor * pos_freqs) * (1 - extrapolation_factor)
                + 1.0 / pos_freqs * extrapolation_factor)
    return inv_freq, attention_factor


def transformers_llama3_inv_freq(dim, base, factor, low_freq_factor, high_freq_factor,
                                 old_context_len):
    """transformers _compute_llama3_parameters."""
    inv_freq = 1.0 / (base ** (np.arange(0, dim, 2) / dim))
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    wavelen = 2 * math.pi / inv_freq
    inv_freq_llama = np.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    smooth = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    smoothed = (1 - smooth) * inv_freq_llama / factor + smooth * inv_freq_llama
    is_medium = ~(wavelen < high_freq_wavelen) & ~(wavelen > low_freq_wavelen)
    return np.where(is_medium, smoothed, inv_freq_llama)


def paper_yarn(head_dim, base, train, scale, alpha, beta):
    """YaRN §3.2 frequency by frequency: λ_d = 2π b^{2d/|D|}, r = L/λ_d, γ(r) piecewise,
    h(θ_d) = (1 − γ)θ_d/s + γθ_d."""
    out = []
    for d in range(head_dim // 2):
        wavelength = 2 * math.pi * base ** (2 * d / head_dim)
        theta, r = 2 * math.pi / wavelength, train / wavelength
        gamma = 0.0 if r < alpha else 1.0 if r > beta else (r - alpha) / (beta - alpha)
        out.append((1 - gamma) * theta / scale + gamma * theta)
    return np.array(out)


def authors_ntk_inv_freq(dim, base, alpha):
    """jquesnelle/yarn LlamaNTKScaledRotaryEmbedding.__init__."""
    base = base * alpha ** (dim / (dim - 2))
    return 1.0 / (base ** (np.arange(0, dim, 2) / dim))


def transformers_dynamic_ntk_inv_freq(dim, base, max_position_embeddings, factor, seq_len):
    """transformers _compute_dynamic_ntk_parameters."""
    seq_len = max(seq_len, max_position_embeddings)
    base = base * ((factor * seq_len / max_position_embeddings) - (factor - 1)) ** (dim / (dim - 2))
    return 1.0 / (base ** (np.arange(0, dim, 2) / dim))


def rotate(x, positions, inv_freq):
    """RoPE as complex multiplication with HF's rotate_half pairing (k, k + D/2)."""
    half = inv_freq.size
    z = (x[..., :half] + 1j * x[..., half:]) * np.exp(1j * positions[:, None] * inv_freq)
    return np.concatenate([z.real, z.imag], -1)


# (head_dim, rope_theta, original length, factor): SmolLM2-135M at 16k, Qwen2.5 32k -> 128k,
# a LLaMA-2 4k x 8, and a non-integer factor.
YARN_CASES = [(64, 1e5, 8192, 2.0), (128, 1e6, 32768, 4.0), (128, 1e4, 4096, 8.0),
              (64, 5e5, 8192, 1.5)]


# --- YaRN frequencies ------------------------------------------------------------------------

@pytest.mark.parametrize("head_dim, base, train, factor", YARN_CASES)
def test_yarn_frequencies_match_the_authors_code(head_dim, base, train, factor):
    got = YaRNRoPE(factor=factor, original_max_position_embeddings=train,
                   rope_theta=base).frequencies(head_dim)
    np.testing.assert_allclose(got, authors_yarn_inv_freq(head_dim, base, factor, train),
                               rtol=1e-13, atol=0)
    theta = base ** (-2 * np.arange(head_dim // 2) / head_dim)
    blended = (got < theta * (1 - 1e-12)) & (got > theta / factor * (1 + 1e-12))
    assert got[0] == pytest.approx(theta[0]) and got[-1] == pytest.approx(theta[-1] / factor)
    assert blended.any()  # the three regimes are all present for these sizes


@pytest.mark.parametrize("beta_fast, beta_slow", [(32, 1), (16, 2), (64, 0.5)])
@pytest.mark.parametrize("truncate", [True, False])
def test_yarn_frequencies_match_transformers_including_truncate(beta_fast, beta_slow, truncate):
    params = {"rope_type": "yarn", "rope_theta": 1e6, "factor": 4.0, "beta_fast": beta_fast,
              "beta_slow": beta_slow, "original_max_position_embeddings": 32768,
              "truncate": truncate}
    want, _ = transformers_yarn(params, 128, 131072)
    position, _ = from_rope_parameters(params)
    np.testing.assert_allclose(position.frequencies(128), want, rtol=1e-13, atol=0)
    direct = YaRNRoPE(factor=4.0, original_max_position_embeddings=32768, rope_theta=1e6,
                      beta_fast=beta_fast, beta_slow=beta_slow, truncate=truncate)
    assert direct == position


def test_the_two_ramps_differ_in_9_of_32_frequencies_at_smollm2_settings():
    """Factor 2, original 8192, base 1e5, D = 64: the paper's ramp in r and the reference's
    ramp in the dimension index disagree in 9 frequencies, by up to 22.8 % of the reference."""
    reference = authors_yarn_inv_freq(64, 1e5, 2.0, 8192)
    text = paper_yarn(64, 1e5, 8192, 2.0, 1.0, 32.0)
    rel = np.abs(text - reference) / reference
    assert int(np.sum(rel > 1e-12)) == 9
    assert rel.max() == pytest.approx(0.2278, abs=5e-5)
    np.testing.assert_allclose(YaRNRoPE(8192, 16384, 1e5).frequencies(64), reference,
                               rtol=1e-13)
    np.testing.assert_allclose(YaRNRoPE(8192, 16384, 1e5, ramp="rotations").frequencies(64),
                               text, rtol=1e-13)


@pytest.mark.parametrize("head_dim, base, train, target", [(64, 1e5, 8192, 16384),
                                                           (64, 1e4, 4096, 32768),
                                                           (128, 5e5, 8192, 12288)])
def test_yarn_text_ramp_matches_the_papers_per_frequency_construction(head_dim, base, train,
                                                                      target):
    got = yarn_frequencies(head_dim, base, train, target, 1.0, 32.0, ramp="rotations")
    want = paper_yarn(head_dim, base, train, target / train, 1.0, 32.0)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)


def test_yarn_text_ramp_is_llama_31_scaling():
    """Llama 3.1's config: rope_theta 5e5, factor 8, low/high_freq_factor 1/4, 8192, D = 128."""
    params = {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0,
              "low_freq_factor": 1.0, "high_freq_factor": 4.0,
              "original_max_position_embeddings": 8192}
    position, score_mod = from_rope_parameters(params)
    want = transformers_llama3_inv_freq(128, 5e5, 8.0, 1.0, 4.0, 8192)
    np.testing.assert_allclose(position.frequencies(128), want, rtol=1e-13, atol=0)
    assert position.ramp == "rotations" and score_mod is None  # attention_factor 1.0


def test_yarn_rope_rotates_pairs_k_and_k_plus_half_by_the_reference_angles():
    x = np.random.default_rng(3).standard_normal((2, 7, 64))
    positions = np.array([0, 1, 5, 100, 8191, 12000, 16383])
    want = rotate(x, positions, authors_yarn_inv_freq(64, 1e5, 2.0, 8192))
    np.testing.assert_allclose(YaRNRoPE(8192, 16384, base=1e5)(x, positions), want,
                               rtol=0, atol=1e-10)


# --- YaRN attention factor -------------------------------------------------------------------

@pytest.mark.parametrize("extra, expected", [
    ({}, 0.1 * math.log(4) + 1),
    ({"mscale": 1.0, "mscale_all_dim": 1.0}, 1.0),  # DeepSeek-V3's setting
    ({"mscale": 0.707, "mscale_all_dim": 0.707}, 1.0),
    ({"mscale": 1.0, "mscale_all_dim": 0.707},
     (0.1 * math.log(4) + 1) / (0.0707 * math.log(4) + 1)),
    ({"mscale": 0.5, "mscale_all_dim": 0}, 0.1 * math.log(4) + 1),  # falsy: get_mscale(factor)
    ({"mscale": 0.5}, 0.1 * math.log(4) + 1),
    ({"attention_factor": 1.25, "mscale": 2.0, "mscale_all_dim": 1.0}, 1.25),  # explicit wins
])
def test_yarn_attention_factor_follows_transformers(extra, expected):
    params = {"rope_type": "yarn", "rope_theta": 1e6, "factor": 4.0,
              "original_max_position_embeddings": 32768, **extra}
    _, want = transformers_yarn(params, 128, 131072)
    assert want == pytest.approx(expected, rel=1e-15)  # the transcription's known values
    _, score_mod = from_rope_parameters(params)
    assert score_mod.attention_factor == pytest.approx(want, rel=1e-15)
    assert score_mod.multiplier() == pytest.approx(want ** 2, rel=1e-15)  # on q and on k
    named = YaRNTemperature(factor=4.0, **{k: v for k, v in extra.items()})
    assert named == score_mod


def test_yarn_attention_factor_is_one_without_extension():
    assert YaRNTemperature(1.0).attention_factor == 1.0
    assert YaRNTemperature(0.5, mscale=1.0, mscale_all_dim=0.5).attention_factor == 1.0


def test_from_rope_parameters_defaults_the_factor_as_transformers_v5():
    """No factor: max_position_embeddings / original_max_position_embeddings; no original:
    max_position_embeddings (then the factor is 1, plain RoPE)."""
    params = {"rope_type": "yarn", "rope_theta": 1e5, "original_max_position_embeddings": 8192}
    position, score_mod = from_rope_parameters(params, max_position_embeddings=32768)
    want_freq, want_factor = transformers_yarn(params, 64, 32768)
    np.testing.assert_allclose(position.frequencies(64), want_freq, rtol=1e-13)
    assert position.factor == 4.0 and score_mod.attention_factor == pytest.approx(want_factor)
    v4 = {"type": "yarn", "factor": 2.0, "original_max_position_embeddings": 8192}
    position, _ = from_rope_parameters(v4, rope_theta=1e5)
    assert position == YaRNRoPE(8192, 16384, 1e5)


def test_from_rope_parameters_default_and_dynamic():
    assert from_rope_parameters({"rope_type": "default", "rope_theta": 5e5}) == \
        (RoPE(5e5), None)
    position, score_mod = from_rope_parameters({"rope_type": "dynamic", "factor": 2.0},
                                               rope_theta=1e4, max_position_embeddings=4096)
    assert position == DynamicNTKRoPE(4096, 2.0, 1e4) and score_mod is None


@pytest.mark.parametrize("params, kwargs, match", [
    ({"rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": 8,
      "mscal": 1.0}, {}, "mscal"),
    ({"rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": 8,
      "partial_rotary_factor": 0.5}, {}, "partial_rotary_factor"),
    ({"rope_type": "longrope"}, {}, "rope_type"),
    ({"rope_type": "yarn", "factor": 2.0}, {}, "original_max_position_embeddings"),
    ({"rope_type": "dynamic", "factor": 2.0}, {}, "max_position_embeddings"),
    ({"rope_type": "yarn", "original_max_position_embeddings": 8}, {}, "factor"),
    ({"rope_type": "default", "rope_theta": 1e4}, {"rope_theta": 5e5}, "rope_theta"),
    ([("rope_type", "yarn")], {}, "dict"),
])
def test_from_rope_parameters_refuses_what_it_cannot_reproduce(params, kwargs, match):
    with pytest.raises(ValueError, match=match):
        from_rope_parameters(params, **kwargs)


# --- NTK and dynamic NTK ---------------------------------------------------------------------

@pytest.mark.parametrize("head_dim, base, train, target", [(64, 1e5, 8192, 16384),
                                                           (128, 1e4, 4096, 65536)])
def test_ntk_rope_matches_the_authors_ntk_class(head_dim, base, train, target):
    want = authors_ntk_inv_freq(head_dim, base, target / train)
    base_freq = ntk_base(base, head_dim, train, target) ** (
        -2 * np.arange(head_dim // 2) / head_dim)
    np.testing.assert_allclose(base_freq, want, rtol=1e-13)
    x = np.random.default_rng(5).standard_normal((3, head_dim))
    positions = np.array([0, 77, target - 1])
    np.testing.assert_allclose(NTKRoPE(train, target, rope_theta=base)(x, positions),
                               rotate(x, positions, base_freq), rtol=0, atol=1e-10)


@pytest.mark.parametrize("factor", [1.0, 2.0, 4.0])
@pytest.mark.parametrize("seq_len", [100, 4096, 4097, 10_000, 40_000])
def test_dynamic_ntk_matches_transformers(factor, seq_len):
    want = transformers_dynamic_ntk_inv_freq(64, 1e4, 4096, factor, seq_len)
    base = dynamic_ntk_base(1e4, 64, 4096, seq_len, factor)
    np.testing.assert_allclose(base ** (-2 * np.arange(32) / 64), want, rtol=1e-13)
    x = np.random.default_rng(6).standard_normal((2, 3, 64))
    positions = np.array([0, seq_len // 2, seq_len - 1])  # max(position_ids) + 1 = seq_len
    encoding = DynamicNTKRoPE(max_position_embeddings=4096, factor=factor, rope_theta=1e4)
    np.testing.assert_allclose(encoding(x, positions), rotate(x, positions, want),
                               rtol=0, atol=1e-9)


def test_dynamic_ntk_with_factor_one_is_the_ntk_aware_base():
    for seq_len in (100, 4096, 20_000):
        assert dynamic_ntk_base(1e4, 64, 4096, seq_len) == \
            pytest.approx(ntk_base(1e4, 64, 4096, seq_len), rel=1e-15)


def test_dynamic_ntk_configures_a_decoder_and_takes_the_earlier_names():
    assert DynamicNTKRoPE(train_length=64, factor=2, base=500.0) == \
        DynamicNTKRoPE(64, 2.0, rope_theta=500.0)
    DecoderConfig(vocab_size=11, d_model=16, n_heads=2, n_layers=1,
                  position=DynamicNTKRoPE(64))


def test_rope_and_ntk_take_rope_theta():
    assert RoPE(rope_theta=5e5) == RoPE(5e5)
    assert NTKRoPE(16, 64, rope_theta=500.0) == NTKRoPE(16, 64, 500.0)
    with pytest.raises(ValueError, match="base and rope_theta"):
        RoPE(1e4, rope_theta=1e4)
    with pytest.raises(ValueError, match="rope_theta"):
        RoPE(rope_theta=0.5)
