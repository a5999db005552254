"""from_hf_config's softmax scale and logit cap held against transformers itself.

transformers (pinned in the ``test`` extra) builds each model's attention module from a tiny
config; its ``scaling`` attribute is the multiplier on the raw ``q·k`` and its softcap the tanh
cap it applies, and ``from_hf_config(config.to_dict())`` must give the same. The published-size
checks write the numbers out from the model cards' configs, independently of both.
"""

import math

import numpy as np
import pytest

from sia_theory.models.hf_config import from_hf_config
from sia_theory.zoo import Temperature
from sia_theory.zoo.models import DeepSeekMScale, MultiplierProduct

RTOL = 1e-12
TINY = {"hidden_size": 64, "intermediate_size": 32, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 32,
        "max_position_embeddings": 256}


def _multiplier(transform):
    """The transform's multiplier on S (constant in these configs: checked over distances)."""
    a, m = transform.coefficients(np.array([0, 7, 99]), 100)
    assert np.all(m == 0) and np.ptp(a) == 0
    return float(a[0])


def _transformers():
    return pytest.importorskip("transformers")


def _granite(family):
    tf = _transformers()
    config_cls, module = {
        "granite": ("GraniteConfig", "granite.modeling_granite.GraniteAttention"),
        "granitemoe": ("GraniteMoeConfig", "granitemoe.modeling_granitemoe.GraniteMoeAttention"),
        "granitemoeshared": ("GraniteMoeSharedConfig",
                             "granitemoeshared.modeling_granitemoeshared."
                             "GraniteMoeSharedAttention"),
    }[family]
    return getattr(tf, config_cls)(**TINY, attention_multiplier=0.0078125), module


def _attention(config, module):
    """transformers' attention module of layer 0, built from ``config``."""
    import importlib

    path, name = module.rsplit(".", 1)
    cls = getattr(importlib.import_module(f"transformers.models.{path}"), name)
    return cls(config, layer_idx=0)


def _deepseek(rope):
    tf = _transformers()
    return tf.DeepseekV3Config(**TINY, q_lora_rank=None, kv_lora_rank=16, qk_nope_head_dim=24,
                               qk_rope_head_dim=8, v_head_dim=16, n_routed_experts=4,
                               num_experts_per_tok=2, n_group=1, topk_group=1,
                               first_k_dense_replace=2, rope_parameters=rope)


def _cases():
    """``(id, build)`` with ``build() -> (config, module path, the cap transformers applies)``."""
    def llama():
        return _transformers().LlamaConfig(**TINY), "llama.modeling_llama.LlamaAttention", None

    def gemma2():
        config = _transformers().Gemma2Config(**TINY, head_dim=16, query_pre_attn_scalar=24,
                                              attn_logit_softcapping=30.0)
        return config, "gemma2.modeling_gemma2.Gemma2Attention", 30.0

    def gemma2_default():  # the config's defaults: query_pre_attn_scalar 256, cap 50
        config = _transformers().Gemma2Config(**TINY, head_dim=16)
        return config, "gemma2.modeling_gemma2.Gemma2Attention", 50.0

    def gemma3():
        config = _transformers().Gemma3TextConfig(**TINY, head_dim=16, query_pre_attn_scalar=21)
        return config, "gemma3.modeling_gemma3.Gemma3Attention", None

    def deepseek_plain():
        return (_deepseek({"rope_type": "default", "rope_theta": 1e4}),
                "deepseek_v3.modeling_deepseek_v3.DeepseekV3Attention", None)

    def deepseek_yarn():
        rope = {"rope_type": "yarn", "rope_theta": 1e4, "factor": 40.0, "mscale": 1.0,
                "mscale_all_dim": 1.0, "beta_fast": 32.0, "beta_slow": 1.0,
                "original_max_position_embeddings": 64}
        return (_deepseek(rope), "deepseek_v3.modeling_deepseek_v3.DeepseekV3Attention", None)

    def deepseek_yarn_half():  # mscale_all_dim 0.707 (DeepSeek-V2-Lite's)
        rope = {"rope_type": "yarn", "rope_theta": 1e4, "factor": 40.0, "mscale": 0.707,
                "mscale_all_dim": 0.707, "original_max_position_embeddings": 64}
        return (_deepseek(rope), "deepseek_v3.modeling_deepseek_v3.DeepseekV3Attention", None)

    def granite(family):
        def build():
            config, module = _granite(family)
            return config, module, None
        return build

    return [("llama", llama), ("gemma2", gemma2), ("gemma2-defaults", gemma2_default),
            ("gemma3-text", gemma3), ("deepseek-v3", deepseek_plain),
            ("deepseek-v3-yarn", deepseek_yarn), ("deepseek-v3-yarn-0.707", deepseek_yarn_half),
            ("granite", granite("granite")), ("granitemoe", granite("granitemoe")),
            ("granitemoeshared", granite("granitemoeshared"))]


CASES = _cases()


@pytest.mark.parametrize("build", [b for _, b in CASES], ids=[i for i, _ in CASES])
def test_score_scale_and_cap_equal_transformers(build):
    config, module, cap = build()
    attention = _attention(config, module)
    scheme = from_hf_config(config.to_dict())
    assert scheme.score_scale == pytest.approx(attention.scaling, rel=RTOL, abs=0)
    applied = getattr(attention, "attn_logit_softcapping", None) if cap is not None else None
    assert scheme.logit_softcap == applied == cap
    if cap is not None:
        assert scheme.logit_softcap == config.attn_logit_softcapping
    # the factor on S = q·k/√qk_head_dim, and the transform's constant multiplier is it (times
    # the rope attention factor², 1 in these configs)
    qk = attention.qk_head_dim if hasattr(attention, "qk_head_dim") else attention.head_dim
    assert scheme.qk_head_dim == qk
    assert scheme.s_factor == pytest.approx(attention.scaling * math.sqrt(qk), rel=RTOL)
    assert _multiplier(scheme.transform) == pytest.approx(scheme.s_factor, rel=RTOL)


def _forward(config, module):
    """transformers' eager attention output on fixed inputs (weights seeded)."""
    import torch

    config._attn_implementation = "eager"
    torch.manual_seed(0)
    attention = _attention(config, module).double()
    hidden = torch.randn(1, 5, config.hidden_size, dtype=torch.float64) * 30.0
    angle = torch.arange(5, dtype=torch.float64)[None, :, None] * torch.linspace(
        1.0, 0.01, config.head_dim, dtype=torch.float64)
    mask = torch.triu(torch.full((5, 5), -math.inf, dtype=torch.float64), 1)[None, None]
    out, _ = attention(hidden, position_embeddings=(angle.cos(), angle.sin()),
                       attention_mask=mask)
    return out.detach().numpy()


def test_gemma3_keeps_the_cap_key_but_does_not_apply_it():
    tf = _transformers()
    pytest.importorskip("torch")
    base = dict(TINY, head_dim=16, query_pre_attn_scalar=16)
    capped = tf.Gemma3TextConfig(**base, attn_logit_softcapping=0.5)
    gemma3 = "gemma3.modeling_gemma3.Gemma3Attention"
    assert np.array_equal(_forward(capped, gemma3), _forward(tf.Gemma3TextConfig(**base), gemma3))
    assert from_hf_config(capped.to_dict()).logit_softcap is None
    # the same cap changes Gemma-2's output: the comparison can tell
    gemma2 = "gemma2.modeling_gemma2.Gemma2Attention"
    two = [_forward(tf.Gemma2Config(**base, attn_logit_softcapping=c), gemma2) for c in (0.5, None)]
    assert not np.allclose(*two)
    assert from_hf_config(tf.Gemma2Config(**base, attn_logit_softcapping=0.5).to_dict()
                          ).logit_softcap == 0.5


# Published sizes, written out from the configs (independent of transformers and of the code).
PUBLISHED = [
    # Granite-3.x 8B (ibm-granite/granite-3.1-8b-instruct): 4096 hidden, 32 heads, head 128,
    # attention_multiplier 0.0078125 = 1/128: factor on S 0.0078125·√128
    ("granite-3-8b", {"model_type": "granite", "hidden_size": 4096, "num_attention_heads": 32,
                      "attention_multiplier": 0.0078125, "rope_theta": 1e7},
     0.0078125, 0.08838834764831845, None),
    # Gemma-3-27B (google/gemma-3-27b-it text_config): head_dim 128, query_pre_attn_scalar 168
    ("gemma-3-27b", {"model_type": "gemma3_text", "head_dim": 128, "query_pre_attn_scalar": 168,
                     "hidden_size": 5376, "num_attention_heads": 32},
     1 / math.sqrt(168), math.sqrt(128 / 168), None),
    # Gemma-2-27B (google/gemma-2-27b): head_dim 128, query_pre_attn_scalar 144, cap 50
    ("gemma-2-27b", {"model_type": "gemma2", "head_dim": 128, "query_pre_attn_scalar": 144,
                     "attn_logit_softcapping": 50.0, "hidden_size": 4608,
                     "num_attention_heads": 32},
     1 / 12, 128 ** 0.5 / 12, 50.0),
    # DeepSeek-V3 without its yarn block: qk_nope 128 + qk_rope 64 = 192 under the root,
    # √64/√192 relative to its head_dim (the rotating part) 64
    ("deepseek-v3-unscaled", {"model_type": "deepseek_v3", "hidden_size": 7168,
                              "num_attention_heads": 128, "qk_nope_head_dim": 128,
                              "qk_rope_head_dim": 64, "rope_theta": 1e4},
     1 / math.sqrt(192), 1.0, None),
]


@pytest.mark.parametrize("config, score, logit, cap", [p[1:] for p in PUBLISHED],
                         ids=[p[0] for p in PUBLISHED])
def test_published_sizes(config, score, logit, cap):
    scheme = from_hf_config(config)
    assert scheme.score_scale == pytest.approx(score, rel=RTOL)
    assert scheme.s_factor == pytest.approx(logit, rel=RTOL)
    assert scheme.logit_softcap == cap
    assert _multiplier(scheme.transform) == pytest.approx(logit, rel=RTOL)
    # a near alternative, 5 % to 20 % off, fails the comparison
    for off in (0.95, 1.05, 0.8, 1.2):
        assert scheme.score_scale != pytest.approx(score * off, rel=RTOL)


def test_published_factors_against_one_over_root_head_dim():
    granite = from_hf_config(PUBLISHED[0][1])
    assert granite.score_scale * math.sqrt(granite.head_dim) == pytest.approx(0.0884, abs=5e-5)
    assert (1 / math.sqrt(128)) / granite.score_scale == pytest.approx(11.3137, abs=5e-5)
    gemma3 = from_hf_config(PUBLISHED[1][1])
    assert gemma3.s_factor == pytest.approx(0.8729, abs=5e-5)
    assert 1 / gemma3.s_factor == pytest.approx(1.1456, abs=5e-5)  # Gemma-3-27B ×1.146
    gemma2 = from_hf_config(PUBLISHED[2][1])
    assert 1 / gemma2.s_factor == pytest.approx(1.0607, abs=5e-5)  # Gemma-2-27B ×1.061
    deepseek = from_hf_config(PUBLISHED[3][1])
    assert (deepseek.head_dim, deepseek.qk_head_dim) == (64, 192)
    assert deepseek.score_scale * math.sqrt(64) == pytest.approx(math.sqrt(64 / 192), rel=RTOL)
    assert deepseek.score_scale != pytest.approx(1 / 8, rel=0.05)  # 1/√head_dim: √3 too large


def test_deepseek_v3_fixture_with_mscale():
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "fixtures" / "hf_configs" / "deepseek-v3.json"
    scheme = from_hf_config(path)
    mscale = 0.1 * 1.0 * math.log(40) + 1.0
    assert scheme.score_scale == pytest.approx(mscale ** 2 / math.sqrt(192), rel=RTOL)
    assert scheme.s_factor == pytest.approx(mscale ** 2, rel=RTOL) == scheme.softmax_scale
    assert scheme.transform == DeepSeekMScale(40.0, 1.0)  # no extra member: √192 is the d of S


def test_transform_folds_the_config_factor():
    scheme = from_hf_config(PUBLISHED[0][1])
    assert scheme.transform == Temperature(0.0078125 * math.sqrt(128))
    assert "attention_multiplier" in scheme.source
    yarn = dict(PUBLISHED[1][1], rope_parameters={
        "rope_type": "yarn", "rope_theta": 1e6, "factor": 4.0,
        "original_max_position_embeddings": 32768})
    both = from_hf_config(yarn)
    assert isinstance(both.transform, MultiplierProduct)
    assert _multiplier(both.transform) == pytest.approx(
        both.attention_factor ** 2 * math.sqrt(128 / 168), rel=RTOL)
    capped = from_hf_config(PUBLISHED[2][1])
    assert "attn_logit_softcapping 50" in capped.source and "not in the transform" in capped.source


def test_defaults_and_unread_keys():
    # a multimodal Gemma-3 config: the text part's defaults (query_pre_attn_scalar 256)
    gemma = from_hf_config({"model_type": "gemma3", "text_config": {
        "head_dim": 128, "hidden_size": 5376, "num_attention_heads": 32}})
    assert gemma.score_scale == pytest.approx(1 / 16, rel=RTOL)
    assert gemma.logit_softcap is None
    gemma2 = from_hf_config({"model_type": "gemma2", "head_dim": 256, "hidden_size": 2304,
                             "num_attention_heads": 8})
    assert (gemma2.score_scale, gemma2.logit_softcap) == (1 / 16, 50.0)
    no_cap = from_hf_config({"model_type": "gemma2", "head_dim": 256, "hidden_size": 2304,
                             "num_attention_heads": 8, "attn_logit_softcapping": None})
    assert no_cap.logit_softcap is None
    # keys that do not touch the attention logits are not read and not an error
    plain = from_hf_config({"model_type": "granite", "hidden_size": 256,
                            "num_attention_heads": 4, "embedding_multiplier": 12.0,
                            "residual_multiplier": 0.22, "logits_scaling": 8.0,
                            "final_logit_softcapping": 30.0, "some_future_key": [1, 2]})
    assert plain.score_scale == 1 / 8 and plain.s_factor == 1.0
    assert plain.transform.__class__.__name__ == "NoScale"


@pytest.mark.parametrize("key, value", [("attention_multiplier", 0.0),
                                        ("attention_multiplier", -0.01),
                                        ("attention_multiplier", float("nan")),
                                        ("query_pre_attn_scalar", 0),
                                        ("attn_logit_softcapping", -50.0)])
def test_bad_values_name_the_key(key, value):
    with pytest.raises(ValueError, match=key):
        from_hf_config({"hidden_size": 256, "num_attention_heads": 4, key: value})


def test_latent_attention_needs_the_nope_dimension():
    with pytest.raises(ValueError, match="qk_nope_head_dim"):
        from_hf_config({"hidden_size": 256, "num_attention_heads": 4, "qk_rope_head_dim": 32})
    with pytest.raises(ValueError, match="attention_multiplier"):
        from_hf_config({"hidden_size": 256, "num_attention_heads": 4,
                        "attention_multiplier": 0.1, "query_pre_attn_scalar": 64})
    mistral4 = from_hf_config({"model_type": "mistral4", "hidden_size": 256,
                               "num_attention_heads": 4, "qk_rope_head_dim": 32})
    assert mistral4.qk_head_dim == 96  # the config's default qk_nope_head_dim 64


@pytest.mark.parametrize("model_type", ["gemma3n", "gemma3n_text", "gemma4", "gemma4_text"])
def test_models_with_unit_scaling_are_refused_naming_the_model_type(model_type):
    """Gemma-3n and Gemma-4 attend with scaling 1.0 on normalised q and k (transformers'
    gemma3n / gemma4 modeling files): read as 1/√head_dim they would be 16× off at head_dim 256,
    so they are refused, by name, before anything is computed."""
    from sia_theory.models.hf_config import from_hf_config

    config = {"model_type": model_type, "hidden_size": 2048, "num_attention_heads": 8,
              "head_dim": 256, "rope_theta": 1e6, "max_position_embeddings": 32768}
    with pytest.raises(ValueError, match=rf"model_type '{model_type}'.*scaling 1\.0"):
        from_hf_config(config)
