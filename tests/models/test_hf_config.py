"""from_hf_config against outside goldens and against each source's construction written out here.

Outside goldens (numbers copied as literals, no torch):

* transformers ``tests/utils/test_modeling_rope_utils.py`` at huggingface/transformers commit
  087e800256786f75d7392f947c17dfb5fac2dc3b: the ``EXPECTED_INV_FREQ`` snapshots of
  ``test_default_rope_numerically``, ``test_dynamic_rope_numerically`` (factor 10, seq_len
  16384), ``test_yarn_rope_numerically`` (factor 10, beta 32/1) and
  ``test_llama3_rope_numerically`` (factor 10, original 2048, low 1, high 4), all on
  ``LlamaConfig()`` (hidden 4096, 32 heads, theta 1e4, max_position_embeddings 2048), printed
  to five significant digits; and that file's LongRoPE checks (short factors at
  initialisation, long ones past the original length, attention factor sqrt(1 + ln f/ln L)).

The published configs (tests/fixtures/hf_configs/, sources in its README) are each checked
against ``inv_freq`` written out from transformers' ``modeling_rope_utils.py`` (v5 line).
"""

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sia_theory.attention import DynamicNTKRoPE, RoPE, YaRNRoPE
from sia_theory.attention.rope_variants import LinearRoPE, LongRoPE, ProportionalRoPE
from sia_theory.models.hf_config import from_hf_config
from sia_theory.transforms import NoScale
from sia_theory.zoo import Llama4Temperature, QwenLogN, YaRNTemperature
from sia_theory.zoo.models import DeepSeekMScale, Grok2Temperature, MultiplierProduct

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hf_configs"
LLAMA = {"hidden_size": 4096, "num_attention_heads": 32, "rope_theta": 10000.0,
         "max_position_embeddings": 2048}  # LlamaConfig() of the transformers test
SNAPSHOT_RTOL = 5e-5  # five printed digits: half a unit of the fifth digit over the mantissa

# fmt: off
EXPECTED_DEFAULT = [
    1.0000e+00, 8.6596e-01, 7.4989e-01, 6.4938e-01, 5.6234e-01, 4.8697e-01, 4.2170e-01,
    3.6517e-01, 3.1623e-01, 2.7384e-01, 2.3714e-01, 2.0535e-01, 1.7783e-01, 1.5399e-01,
    1.3335e-01, 1.1548e-01, 1.0000e-01, 8.6596e-02, 7.4989e-02, 6.4938e-02, 5.6234e-02,
    4.8697e-02, 4.2170e-02, 3.6517e-02, 3.1623e-02, 2.7384e-02, 2.3714e-02, 2.0535e-02,
    1.7783e-02, 1.5399e-02, 1.3335e-02, 1.1548e-02, 1.0000e-02, 8.6596e-03, 7.4989e-03,
    6.4938e-03, 5.6234e-03, 4.8697e-03, 4.2170e-03, 3.6517e-03, 3.1623e-03, 2.7384e-03,
    2.3714e-03, 2.0535e-03, 1.7783e-03, 1.5399e-03, 1.3335e-03, 1.1548e-03, 1.0000e-03,
    8.6596e-04, 7.4989e-04, 6.4938e-04, 5.6234e-04, 4.8697e-04, 4.2170e-04, 3.6517e-04,
    3.1623e-04, 2.7384e-04, 2.3714e-04, 2.0535e-04, 1.7783e-04, 1.5399e-04, 1.3335e-04,
    1.1548e-04]
EXPECTED_DYNAMIC = [
    1.0000e+00, 8.0931e-01, 6.5498e-01, 5.3008e-01, 4.2900e-01, 3.4720e-01, 2.8099e-01,
    2.2741e-01, 1.8404e-01, 1.4895e-01, 1.2055e-01, 9.7558e-02, 7.8955e-02, 6.3899e-02,
    5.1714e-02, 4.1853e-02, 3.3872e-02, 2.7413e-02, 2.2185e-02, 1.7955e-02, 1.4531e-02,
    1.1760e-02, 9.5176e-03, 7.7027e-03, 6.2339e-03, 5.0451e-03, 4.0831e-03, 3.3045e-03,
    2.6744e-03, 2.1644e-03, 1.7517e-03, 1.4176e-03, 1.1473e-03, 9.2852e-04, 7.5146e-04,
    6.0817e-04, 4.9220e-04, 3.9834e-04, 3.2238e-04, 2.6091e-04, 2.1115e-04, 1.7089e-04,
    1.3830e-04, 1.1193e-04, 9.0585e-05, 7.3312e-05, 5.9332e-05, 4.8018e-05, 3.8861e-05,
    3.1451e-05, 2.5453e-05, 2.0600e-05, 1.6672e-05, 1.3492e-05, 1.0920e-05, 8.8374e-06,
    7.1522e-06, 5.7883e-06, 4.6845e-06, 3.7912e-06, 3.0683e-06, 2.4832e-06, 2.0097e-06,
    1.6265e-06]
EXPECTED_YARN = [
    1.0000e+00, 8.6596e-01, 7.4989e-01, 6.4938e-01, 5.6234e-01, 4.8697e-01, 4.2170e-01,
    3.6517e-01, 3.1623e-01, 2.7384e-01, 2.3714e-01, 2.0535e-01, 1.7783e-01, 1.5399e-01,
    1.3335e-01, 1.1548e-01, 1.0000e-01, 8.3479e-02, 6.9590e-02, 5.7925e-02, 4.8136e-02,
    3.9931e-02, 3.3061e-02, 2.7315e-02, 2.2515e-02, 1.8512e-02, 1.5177e-02, 1.2403e-02,
    1.0101e-02, 8.1924e-03, 6.6143e-03, 5.3120e-03, 4.2400e-03, 3.3599e-03, 2.6396e-03,
    2.0520e-03, 1.5746e-03, 1.1882e-03, 8.7713e-04, 6.2810e-04, 4.3007e-04, 2.7384e-04,
    2.3714e-04, 2.0535e-04, 1.7783e-04, 1.5399e-04, 1.3335e-04, 1.1548e-04, 1.0000e-04,
    8.6596e-05, 7.4989e-05, 6.4938e-05, 5.6234e-05, 4.8697e-05, 4.2170e-05, 3.6517e-05,
    3.1623e-05, 2.7384e-05, 2.3714e-05, 2.0535e-05, 1.7783e-05, 1.5399e-05, 1.3335e-05,
    1.1548e-05]
EXPECTED_LLAMA3 = [
    1.0000e+00, 8.6596e-01, 7.4989e-01, 6.4938e-01, 5.6234e-01, 4.8697e-01, 4.2170e-01,
    3.6517e-01, 3.1623e-01, 2.7384e-01, 2.3714e-01, 2.0535e-01, 1.7783e-01, 1.5399e-01,
    1.3335e-01, 1.1548e-01, 1.0000e-01, 8.6596e-02, 7.4989e-02, 6.4938e-02, 5.6234e-02,
    4.8697e-02, 4.2170e-02, 3.6517e-02, 3.1623e-02, 2.7384e-02, 2.3714e-02, 2.0535e-02,
    1.7783e-02, 1.5399e-02, 1.3335e-02, 1.0730e-02, 7.7785e-03, 5.6009e-03, 3.9991e-03,
    2.8248e-03, 1.9675e-03, 1.3449e-03, 8.9549e-04, 5.7363e-04, 3.4539e-04, 2.7384e-04,
    2.3714e-04, 2.0535e-04, 1.7783e-04, 1.5399e-04, 1.3335e-04, 1.1548e-04, 1.0000e-04,
    8.6596e-05, 7.4989e-05, 6.4938e-05, 5.6234e-05, 4.8697e-05, 4.2170e-05, 3.6517e-05,
    3.1623e-05, 2.7384e-05, 2.3714e-05, 2.0535e-05, 1.7783e-05, 1.5399e-05, 1.3335e-05,
    1.1548e-05]
# fmt: on


def _llama(**rope):
    return from_hf_config({**LLAMA, "rope_scaling": rope} if rope else LLAMA)


@pytest.mark.parametrize("rope, expected", [
    ({}, EXPECTED_DEFAULT),
    ({"rope_type": "yarn", "factor": 10.0, "beta_fast": 32, "beta_slow": 1}, EXPECTED_YARN),
    ({"rope_type": "llama3", "factor": 10.0, "original_max_position_embeddings": 2048,
      "low_freq_factor": 1, "high_freq_factor": 4}, EXPECTED_LLAMA3),
], ids=["default", "yarn", "llama3"])
def test_transformers_snapshots_reproduce(rope, expected):
    got = _llama(**rope).inv_freq
    np.testing.assert_allclose(got, expected, rtol=SNAPSHOT_RTOL, atol=0)


def test_transformers_dynamic_snapshot_at_seq_len_16384():
    s = _llama(rope_type="dynamic", factor=10.0)
    np.testing.assert_allclose(s.inv_freq, EXPECTED_DEFAULT, rtol=SNAPSHOT_RTOL)  # at init
    assert isinstance(s.encoding, DynamicNTKRoPE)
    base = s.encoding.base_at(16384, 128)
    got = 1.0 / base ** (np.arange(0, 128, 2) / 128)
    np.testing.assert_allclose(got, EXPECTED_DYNAMIC, rtol=SNAPSHOT_RTOL, atol=0)


def test_snapshot_alternatives_fail():
    """Negative controls: the other yarn reading (ramp in rotations) and linear scaling miss
    the yarn snapshot; llama3 with high_freq_factor 1000 misses its snapshot."""
    yarn_text = YaRNRoPE(factor=10.0, original_max_position_embeddings=2048, ramp="rotations")
    assert not np.allclose(yarn_text.frequencies(128), EXPECTED_YARN, rtol=SNAPSHOT_RTOL)
    assert not np.allclose(np.asarray(EXPECTED_DEFAULT) / 10, EXPECTED_YARN, rtol=SNAPSHOT_RTOL)
    other = _llama(rope_type="llama3", factor=10.0, original_max_position_embeddings=2048,
                   low_freq_factor=1, high_freq_factor=1000).inv_freq
    assert not np.allclose(other, EXPECTED_LLAMA3, rtol=SNAPSHOT_RTOL)


def test_transformers_attention_factors():
    """test_modeling_rope_utils.py: yarn 0.1 ln f + 1 (or attention_factor); llama3 1;
    longrope sqrt(1 + ln f/ln max_position_embeddings) (or attention_factor)."""
    short, long = [2.0] * 64, list(np.arange(1.0, 65.0))
    for factor in (2.0, 10.0, 20.0):
        assert _llama(rope_type="yarn", factor=factor).attention_factor == \
            pytest.approx(0.1 * math.log(factor) + 1.0, rel=1e-15)
        assert _llama(rope_type="yarn", factor=factor, attention_factor=0.5).attention_factor \
            == 0.5
        lr = _llama(rope_type="longrope", factor=factor, short_factor=short, long_factor=long)
        assert lr.attention_factor == pytest.approx(
            math.sqrt(1 + math.log(factor) / math.log(2048)), rel=1e-15)
        assert _llama(rope_type="llama3", factor=factor, original_max_position_embeddings=2048,
                      low_freq_factor=1, high_freq_factor=4).attention_factor == 1.0


def test_longrope_short_then_long_factors():
    default = np.asarray(EXPECTED_DEFAULT)
    short, long = [2.0] * 64, list(np.arange(1.0, 65.0))
    s = _llama(rope_type="longrope", factor=10.0, short_factor=short, long_factor=long)
    np.testing.assert_allclose(s.inv_freq, default / 2.0, rtol=SNAPSHOT_RTOL)
    np.testing.assert_allclose(s.encoding.frequencies(128, seq_len=2049), default / long,
                               rtol=SNAPSHOT_RTOL)
    np.testing.assert_array_equal(s.encoding.frequencies(128, seq_len=2048), s.inv_freq)


# ---- the published configs against their sources' construction --------------------------

def tf_default(dim, base):
    """transformers: 1/(base^(arange(0, dim, 2)/dim))."""
    return 1.0 / base ** (np.arange(0, dim, 2, dtype=np.int64).astype(np.float64) / dim)


def tf_llama3(dim, base, factor, low, high, old):
    """transformers _compute_llama3_parameters, written out."""
    inv = tf_default(dim, base)
    wavelen = 2 * math.pi / inv
    low_wl, high_wl = old / low, old / high
    out = np.where(wavelen > low_wl, inv / factor, inv)
    smooth = (old / wavelen - low) / (high - low)
    smoothed = (1 - smooth) * out / factor + smooth * out
    medium = ~(wavelen < high_wl) & ~(wavelen > low_wl)
    return np.where(medium, smoothed, out)


def tf_yarn(dim, base, factor, original, beta_fast=32, beta_slow=1, truncate=True):
    """transformers _compute_yarn_parameters (v5), written out."""
    def corr(n_rot):
        return dim * math.log(original / (n_rot * 2 * math.pi)) / (2 * math.log(base))
    low, high = corr(beta_fast), corr(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    ramp = np.clip((np.arange(dim // 2) - low) / (high - low), 0, 1)
    extra = 1 - ramp
    pos = base ** (np.arange(0, dim, 2) / dim)
    return (1 / (factor * pos)) * (1 - extra) + (1 / pos) * extra


def _mscale(scale, m=1.0):
    return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0


def _yarn_factor(factor, mscale=None, mscale_all_dim=None):
    if mscale and mscale_all_dim:
        return _mscale(factor, mscale) / _mscale(factor, mscale_all_dim)
    return _mscale(factor)


def _phi_factors():
    rope = json.loads((FIXTURES / "phi-3.5-mini-instruct.json").read_text())["rope_scaling"]
    return np.asarray(rope["short_factor"])


# name: (independent inv_freq, attention factor, softmax-scale factor, query scale at
#        positions 0, 8191, 8192, 16383, 16384, 1e6 (1 where none))
ONES = [1.0] * 6
EXPECTED = {
    "llama-3.1-8b": (tf_llama3(128, 5e5, 8.0, 1.0, 4.0, 8192), 1.0, 1.0, ONES),
    "llama-4-scout": (tf_llama3(128, 5e5, 8.0, 1.0, 4.0, 8192), 1.0, 1.0,
                      [1 + 0.1 * math.log(math.floor((p + 1) / 8192) + 1)
                       for p in (0, 8191, 8192, 16383, 16384, 1e6)]),
    "qwen2.5-7b-instruct": (tf_default(128, 1e6), 1.0, 1.0, ONES),
    "qwen2.5-7b-instruct-yarn": (tf_yarn(128, 1e6, 4.0, 32768), _yarn_factor(4.0), 1.0, ONES),
    "qwen3-8b": (tf_default(128, 1e6), 1.0, 1.0, ONES),
    "ministral-3": (tf_yarn(128, 1e6, 16.0, 16384), _yarn_factor(16.0, 1.0, 1.0), 1.0,
                    [1 + 0.1 * math.log(1 + math.floor(p / 16384))
                     for p in (0, 8191, 8192, 16383, 16384, 1e6)]),
    "mistral-small-4": (tf_yarn(64, 1e4, 128.0, 8192), _yarn_factor(128.0, 1.0, 1.0),
                        _mscale(128.0, 1.0) ** 2,
                        [1 + 0.1 * math.log(1 + math.floor(p / 8192))
                         for p in (0, 8191, 8192, 16383, 16384, 1e6)]),
    "deepseek-v3": (tf_yarn(64, 1e4, 40.0, 4096), _yarn_factor(40.0, 1.0, 1.0),
                    _mscale(40.0, 1.0) ** 2, ONES),
    "phi-3.5-mini-instruct": (tf_default(96, 1e4) / _phi_factors(),
                              math.sqrt(1 + math.log(131072 / 4096) / math.log(4096)), 1.0, ONES),
    "gpt-oss-20b": (tf_yarn(64, 150000.0, 32.0, 4096, truncate=False), _yarn_factor(32.0), 1.0,
                    ONES),
    "gemma-3-4b-it": (tf_default(256, 1e6) / 8.0, 1.0, 1.0, ONES),
    "smollm2-135m": (tf_default(64, 1e5), 1.0, 1.0, ONES),
}


TEMPERED_LAYERS = {"llama-4-scout": "full_attention_nope"}
"""Fixtures whose query temperature acts on some layers only (transformers
``Llama4TextAttention``: ``attn_temperature_tuning and not self.use_rope``)."""


def test_every_fixture_has_an_expectation():
    assert {p.stem for p in FIXTURES.glob("*.json")} == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_published_config_matches_its_source(name):
    inv_freq, factor_qk, softmax, query = EXPECTED[name]
    s = from_hf_config(FIXTURES / f"{name}.json")
    assert s.inv_freq.shape == inv_freq.shape
    np.testing.assert_allclose(s.inv_freq, inv_freq, rtol=1e-12, atol=0)
    assert s.attention_factor == pytest.approx(factor_qk, rel=1e-14)
    assert s.softmax_scale == pytest.approx(softmax, rel=1e-14)
    positions = np.array([0, 8191, 8192, 16383, 16384, 1e6])
    if name in TEMPERED_LAYERS:  # Llama 4: the temperature is on the NoPE layers only
        np.testing.assert_array_equal(s.query_scale(positions), 1.0)
        s = s.layers[TEMPERED_LAYERS[name]]
        assert not s.rope and s.attention_factor == 1.0
    np.testing.assert_allclose(s.query_scale(positions), query, rtol=1e-14)
    # the transform multiplies the logit by factor² · softmax · query scale at n = p + 1
    n = positions + 1
    want = s.attention_factor ** 2 * softmax * np.asarray(query)
    a, m = s.transform.coefficients(np.zeros(6), n)
    np.testing.assert_allclose(a, want, rtol=1e-13)
    np.testing.assert_array_equal(m, 0.0)


def test_fixture_schemes_reuse_the_library_objects():
    kinds = {name: from_hf_config(FIXTURES / f"{name}.json") for name in EXPECTED}
    assert isinstance(kinds["qwen3-8b"].encoding, RoPE)
    assert isinstance(kinds["qwen3-8b"].transform, NoScale)
    assert isinstance(kinds["gemma-3-4b-it"].encoding, LinearRoPE)
    assert isinstance(kinds["phi-3.5-mini-instruct"].encoding, LongRoPE)
    assert isinstance(kinds["gpt-oss-20b"].transform, YaRNTemperature)
    assert isinstance(kinds["llama-4-scout"].transform, NoScale)  # its RoPE (chunked) layers
    assert kinds["llama-4-scout"].layers["full_attention_nope"].transform == Llama4Temperature(
        8192, 0.1)
    assert kinds["ministral-3"].transform == Llama4Temperature(16384, 0.1, offset=0.0)
    assert kinds["deepseek-v3"].transform == DeepSeekMScale(40.0, 1.0)
    assert isinstance(kinds["mistral-small-4"].transform, MultiplierProduct)
    assert kinds["llama-3.1-8b"].extension == "llama3" and kinds["qwen3-8b"].extension is None
    assert kinds["deepseek-v3"].rotary_dim == 64  # qk_rope_head_dim, not hidden/heads = 56


def test_partial_rotary_factor_and_proportional():
    """transformers: partial_rotary_factor p rotates dim = int(D·p) dims with base^(−2k/dim);
    proportional keeps D/2 entries, base^(−2k/D) for k < int(p·D//2), then 0, over factor."""
    cfg = {"head_dim": 128, "rope_theta": 1e4, "partial_rotary_factor": 0.25}
    np.testing.assert_allclose(from_hf_config(cfg).inv_freq, tf_default(32, 1e4), rtol=1e-14)
    prop = from_hf_config({"head_dim": 128, "rope_parameters": {
        "rope_type": "proportional", "rope_theta": 1e6, "partial_rotary_factor": 0.25,
        "factor": 8.0}})
    want = np.concatenate([tf_default(128, 1e6)[:16], np.zeros(48)]) / 8.0
    assert isinstance(prop.encoding, ProportionalRoPE)
    np.testing.assert_allclose(prop.inv_freq, want, rtol=1e-14, atol=0)


def test_llama4_equal_low_and_high_freq_factors_is_a_step():
    """Llama-4-Scout-Instruct style low = high = 1: transformers keeps wavelengths below 8192
    and divides the others by the factor (no medium band)."""
    s = from_hf_config({"head_dim": 128, "rope_theta": 5e5, "max_position_embeddings": 10485760,
                        "rope_scaling": {"rope_type": "llama3", "factor": 16.0,
                                         "low_freq_factor": 1.0, "high_freq_factor": 1.0,
                                         "original_max_position_embeddings": 8192}})
    inv = tf_default(128, 5e5)
    want = np.where(2 * math.pi / inv > 8192, inv / 16.0, inv)
    np.testing.assert_allclose(s.inv_freq, want, rtol=1e-14)


def test_layer_typed_rope_parameters_read_the_full_attention_layers():
    cfg = {"head_dim": 256, "rope_parameters": {
        "sliding_attention": {"rope_type": "default", "rope_theta": 1e4},
        "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1e6}}}
    s = from_hf_config(cfg)
    np.testing.assert_allclose(s.inv_freq, tf_default(256, 1e6) / 8.0, rtol=1e-14)
    assert "full_attention" in s.source


@pytest.mark.parametrize("config, match", [
    ({**LLAMA, "rope_scaling": {"rope_type": "yarn", "factor": 2.0, "mscal": 1.0}}, "mscal"),
    ({**LLAMA, "rope_scaling": {"rope_type": "linear", "factor": 2.0, "beta_fast": 4}},
     "beta_fast"),
    ({**LLAMA, "rope_scaling": {"rope_type": "ntk-by-parts", "factor": 2.0}}, "rope_type"),
    ({**LLAMA, "rope_scaling": {"rope_type": "linear", "factor": 2.0},
      "rope_parameters": {"rope_type": "linear", "factor": 4.0}}, "rope_scaling"),
    ({"rope_theta": 1e4}, "head_dim"),
    ({**LLAMA, "partial_rotary_factor": 1.5}, "partial_rotary_factor"),
    ({**LLAMA, "rope_scaling": {"rope_type": "longrope", "short_factor": [1.0]}}, "long_factor"),
    ({**LLAMA, "attn_temperature_tuning": True, "use_logn_attn": True}, "query temperatures"),
    ("/no/such/config.json", "config"),
    ([1, 2], "config"),
])
def test_bad_configs_are_refused_naming_the_key(config, match):
    with pytest.raises(ValueError, match=match):
        from_hf_config(config)


@pytest.mark.slow  # a few seconds; make test-all and CI run it
def test_hf_report_and_the_cli_flag(tmp_path):
    """hf_report reads the octave phases out to 1e6 keys; Ministral-3's law is a constant 1 up
    to p = 16383, so the octaves below it have σ = 1 (ratio 1/√(2 log t)) and all are liquid."""
    import subprocess
    import sys

    from sia_theory.analysis.hf import hf_report

    report = hf_report(FIXTURES / "ministral-3.json", quick=True)
    octaves = report.octaves
    assert octaves["t"].max() * 2 <= 1e6 < octaves["t"].max() * 4
    below = octaves[octaves["t"] * 2 <= 16384]
    np.testing.assert_allclose(below["ratio"], 1 / np.sqrt(2 * np.log(below["t"])), rtol=1e-12)
    assert set(octaves["phase"]) == {"liquid"} and report.critical == ()
    assert report.entropy_law in ("logarithmic", "sqrt-log", "bounded")
    assert "never in the critical band" in report.line()
    bad = subprocess.run([sys.executable, "-m", "sia_theory", "analyze", "--hf-config",
                          str(tmp_path / "missing.json")], capture_output=True, text=True)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1, bad.stderr
    both = subprocess.run([sys.executable, "-m", "sia_theory", "analyze", "zoo:logn",
                           "--hf-config", str(FIXTURES / "qwen3-8b.json")], capture_output=True,
                          text=True)
    assert both.returncode == 2 and "one of them" in both.stderr


def test_v4_rope_scaling_and_v5_rope_parameters_read_alike():
    v4 = json.loads((FIXTURES / "deepseek-v3.json").read_text())
    v5 = {key: value for key, value in v4.items() if key not in ("rope_scaling", "rope_theta")}
    v5["rope_parameters"] = {**v4["rope_scaling"], "rope_theta": v4["rope_theta"]}
    a, b = from_hf_config(v4), from_hf_config(v5)
    np.testing.assert_array_equal(a.inv_freq, b.inv_freq)
    assert (a.transform, a.attention_factor, a.softmax_scale) == \
        (b.transform, b.attention_factor, b.softmax_scale)


@pytest.mark.parametrize("rope", [
    {"rope_type": "linear", "factor": 2.0},
    {"rope_type": "dynamic", "factor": 2.0},
    {"rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": 1024,
     "attention_factor": 1.1, "beta_fast": 16, "beta_slow": 2, "mscale": 0.5,
     "mscale_all_dim": 0.5, "truncate": False},
    {"rope_type": "longrope", "short_factor": [1.0] * 64, "long_factor": [2.0] * 64,
     "original_max_position_embeddings": 1024, "attention_factor": 1.2, "factor": 2.0},
    {"rope_type": "llama3", "factor": 2.0, "original_max_position_embeddings": 1024,
     "low_freq_factor": 1.0, "high_freq_factor": 4.0},
    {"rope_type": "proportional", "factor": 2.0, "partial_rotary_factor": 0.5},
    {"type": "yarn", "factor": 2.0, "llama_4_scaling_beta": 0.1,
     "max_position_embeddings": 2048},
], ids=lambda r: r.get("rope_type", r.get("type")))
def test_every_key_transformers_accepts_is_read(rope):
    """The keys of transformers' _validate_*_rope_parameters (v5), plus Mistral's ignored ones."""
    s = _llama(**rope)
    assert s.inv_freq.shape == (64,) and np.all(np.isfinite(s.inv_freq))


def test_qwen1_and_grok2_temperatures_are_read():
    qwen = from_hf_config({**LLAMA, "use_logn_attn": True, "seq_length": 8192})
    assert qwen.transform == QwenLogN(8192)
    assert qwen.query_scale([8191, 8192]).tolist() == [1.0, math.log(8193) / math.log(8192)]
    grok = from_hf_config({**LLAMA, "attn_temperature_len": 1024})
    assert grok.transform == Grok2Temperature(1024)
    np.testing.assert_allclose(grok.query_scale([1024, 4096]), [1.0, 12 / 10], rtol=1e-15)
    with pytest.raises(ValueError, match="positions"):
        grok.query_scale([-1])


def test_a_config_scheme_is_the_librarys_one_scheme_type():
    """from_hf_config returns a sia_theory.schemes.Scheme: its encoding and transform serve
    wherever a scheme does (bound to a length, the encoding is the config's own)."""
    from sia_theory.schemes import Scheme

    s = from_hf_config({"hidden_size": 4096, "num_attention_heads": 32, "rope_parameters": {
        "rope_type": "yarn", "rope_theta": 1e6, "factor": 16.0,
        "original_max_position_embeddings": 16384, "llama_4_scaling_beta": 0.1}})
    assert isinstance(s, Scheme)
    bound = s.at(65536, 16384)
    assert bound.position is s.encoding and bound.score_mod is s.transform
    np.testing.assert_array_equal(s.position_encoding(16384, 65536).frequencies(128),
                                  s.encoding.frequencies(128))


@pytest.mark.slow  # about 5 s: make test-all and CI run it
def test_the_cli_flag_honours_n_ctx_and_out_and_refuses_head(tmp_path, capsys):
    """--hf-config writes its report set into --out (the verdict, its assumptions and the
    octave table out to --n-ctx), analyses at --n-ctx, and refuses --head (exit 2, one line,
    nothing written)."""
    import sia_theory.cli as command

    out = tmp_path / "report"
    assert command.main(["analyze", "--hf-config", str(FIXTURES / "llama-3.1-8b.json"),
                         "--quick", "--n-ctx", "5000", "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "assumptions: base logits Gaussian" in printed and "n_ctx = 5000" in printed
    octaves = pd.read_csv(out / "hf_meta-llama_Llama-3.1-8B_octaves.csv")
    assert octaves["t"].max() * 2 <= 5000 < octaves["t"].max() * 4  # 2t = 4096 ≤ 5000 < 8192
    text = (out / "hf_meta-llama_Llama-3.1-8B.md").read_text()
    assert "every layer and head alike" in text and "| k | t | sigma |" in text
    meta = json.loads((out / "hf_meta-llama_Llama-3.1-8B.json").read_text())
    assert meta["parameters"]["n_ctx"] == 5000, meta
    refused = tmp_path / "refused"
    assert command.main(["analyze", "--hf-config", str(FIXTURES / "llama-3.1-8b.json"),
                         "--head", "1", "--out", str(refused)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--head" in err and not refused.exists()


def test_the_cli_reports_a_mixed_model_per_layer_type(tmp_path, capsys):
    """Gemma-3-4B: one line and one analysis per layer type; the sliding layers are analysed
    at their window's 1024 keys, the full ones at --n-ctx."""
    import sia_theory.cli as command

    out = tmp_path / "gemma"
    assert command.main(["analyze", "--hf-config", str(FIXTURES / "gemma-3-4b-it.json"),
                         "--quick", "--n-ctx", "4096", "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("google/gemma-3-4b-it sliding_attention (29 layers)")
    assert "a query sees 1024 keys" in printed[0]
    assert printed[1].startswith("google/gemma-3-4b-it full_attention (5 layers)")
    stem = "hf_google_gemma-3-4b-it"
    octaves = pd.read_csv(out / f"{stem}_octaves.csv")
    by_type = octaves.groupby("layer_type")["t"].max()
    assert by_type["sliding_attention"] * 2 == 1024 and by_type["full_attention"] * 2 == 4096
    for kind, n in (("sliding_attention", 1024), ("full_attention", 4096)):
        meta = json.loads((out / f"{stem}_{kind}.json").read_text())
        assert meta["parameters"]["n_ctx"] == n
