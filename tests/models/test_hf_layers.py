"""from_hf_config's per-layer schemes held against transformers itself (pinned in the ``test``
extra; these tests skip without it, saying so).

For each model type with layers that differ (sliding windows, their own RoPE base, NoPE layers,
chunked attention, a temperature on some layers only), transformers builds the config and every
layer's attention module; the scheme of each layer must give the same layer type, window and
rotation, and its :meth:`~sia_theory.models.hf_config.HFScheme.logit_scale` must equal the
module's ``scaling`` times the rotary embedding's ``attention_scaling`` squared times the query
temperature the module applies (written out here from ``Llama4TextAttention.forward``,
``models/llama4/modeling_llama4.py``: ``log1p(floor((p + 1)/floor_scale))·attn_scale + 1`` on
its NoPE layers).
"""

import importlib
import math

import numpy as np
import pytest

from sia_theory.attention import NoPE
from sia_theory.models.hf_config import from_hf_config

tf = pytest.importorskip("transformers", reason="transformers (pinned in the test extra) is the "
                         "reference for the layer structure")
pytest.importorskip("torch", reason="torch builds transformers' attention modules")

SMALL = {"hidden_size": 64, "intermediate_size": 32, "num_attention_heads": 4,
         "num_key_value_heads": 2, "vocab_size": 32, "max_position_embeddings": 4096}
CASES = {  # name -> (module, config class, attention class, rotary class, config keys)
    "gemma2": ("gemma2", "Gemma2Config", "Gemma2Attention", "Gemma2RotaryEmbedding",
               {"num_hidden_layers": 6, "head_dim": 16, "sliding_window": 16,
                "query_pre_attn_scalar": 24}),
    "gemma3-text": ("gemma3", "Gemma3TextConfig", "Gemma3Attention", "Gemma3RotaryEmbedding",
                    {"num_hidden_layers": 8, "head_dim": 16, "sliding_window": 16,
                     "rope_parameters": {
                         "full_attention": {"rope_type": "linear", "factor": 8.0,
                                            "rope_theta": 1e6},
                         "sliding_attention": {"rope_type": "default", "rope_theta": 1e4}}}),
    "gpt-oss": ("gpt_oss", "GptOssConfig", "GptOssAttention", "GptOssRotaryEmbedding",
                {"num_hidden_layers": 4, "head_dim": 16, "sliding_window": 32,
                 "num_local_experts": 4, "rope_parameters": {
                     "rope_type": "yarn", "factor": 8.0, "rope_theta": 1.5e5,
                     "original_max_position_embeddings": 512, "beta_fast": 32.0,
                     "beta_slow": 1.0}}),
    "qwen2-window": ("qwen2", "Qwen2Config", "Qwen2Attention", "Qwen2RotaryEmbedding",
                     {"num_hidden_layers": 6, "use_sliding_window": True, "sliding_window": 16,
                      "max_window_layers": 3}),
    "mistral": ("mistral", "MistralConfig", "MistralAttention", "MistralRotaryEmbedding",
                {"num_hidden_layers": 3, "sliding_window": 16}),
    "phi3": ("phi3", "Phi3Config", "Phi3Attention", "Phi3RotaryEmbedding",
             {"num_hidden_layers": 3, "sliding_window": 16}),
    "smollm3": ("smollm3", "SmolLM3Config", "SmolLM3Attention", "SmolLM3RotaryEmbedding",
                {"num_hidden_layers": 8, "use_sliding_window": True, "sliding_window": 16}),
    "llama4": ("llama4", "Llama4TextConfig", "Llama4TextAttention", "Llama4TextRotaryEmbedding",
               {"num_hidden_layers": 8, "head_dim": 16, "attention_chunk_size": 32,
                "floor_scale": 64, "attn_scale": 0.25, "num_local_experts": 2,
                "intermediate_size_mlp": 32}),
}
POSITIONS = np.array([0, 62, 63, 64, 127, 128, 1000, 4095])


def _build(name):
    module, config_cls, attention_cls, rotary_cls, keys = CASES[name]
    config = getattr(tf, config_cls)(**{**SMALL, **keys})
    mod = importlib.import_module(f"transformers.models.{module}.modeling_{module}")
    attention = [getattr(mod, attention_cls)(config, layer_idx=i)
                 for i in range(config.num_hidden_layers)]
    return config, attention, getattr(mod, rotary_cls)(config)


def _temperature(module, positions):
    """Llama4TextAttention's query scale (module docstring); 1 for every other module."""
    if not (getattr(module, "attn_temperature_tuning", False) and not module.use_rope):
        return np.ones(positions.shape)
    return np.log1p(np.floor((positions + 1.0) / module.floor_scale)) * module.attn_scale + 1.0


def _rotary(rotary, layer_type):
    """``(inv_freq, attention_scaling)`` of transformers' rotary embedding for ``layer_type``."""
    if hasattr(rotary, f"{layer_type}_inv_freq"):  # Gemma-3: one table per layer type
        return (getattr(rotary, f"{layer_type}_inv_freq").double().numpy(),
                getattr(rotary, f"{layer_type}_attention_scaling"))
    return rotary.inv_freq.double().numpy(), rotary.attention_scaling


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_layer_equals_transformers(name):
    config, attention, rotary = _build(name)
    scheme = from_hf_config(config.to_dict())
    assert len(scheme.layer_types) == config.num_hidden_layers
    for i, module in enumerate(attention):
        layer = scheme.layer(i)
        assert i in layer.layer_indices
        want_type = config.layer_types[i] if getattr(config, "layer_types", None) else None
        if want_type is not None:
            assert layer.layer_type == want_type
        window = getattr(module, "sliding_window", None)
        if name in ("mistral", "phi3"):  # these pass config.sliding_window to every layer
            window = config.sliding_window
        assert layer.window == window, (i, layer.layer_type)
        use_rope = bool(getattr(module, "use_rope", True))
        assert layer.rope == use_rope
        inv_freq, factor = _rotary(rotary, layer.layer_type) if use_rope else (None, 1.0)
        if use_rope:
            np.testing.assert_allclose(layer.inv_freq, inv_freq, rtol=3e-7)
        else:
            assert isinstance(layer.encoding, NoPE)
        want = module.scaling * factor ** 2 * _temperature(module, POSITIONS)
        got = scheme.logit_scale(POSITIONS, layer_type=scheme.layer_types[i])
        np.testing.assert_allclose(got, want, rtol=1e-12)
        for off in (0.8, 0.95, 1.05, 1.2):  # a factor 5-20 % off is told apart
            assert not np.allclose(got, want * off, rtol=1e-3)


def test_llama4_temperature_and_chunks_per_layer():
    config, attention, _ = _build("llama4")
    scheme = from_hf_config(config.to_dict())
    assert config.no_rope_layers == [1, 1, 1, 0, 1, 1, 1, 0]
    assert scheme.layer_types == ("chunked_attention",) * 3 + ("full_attention_nope",) + (
        "chunked_attention",) * 3 + ("full_attention_nope",)
    rope, nope = scheme.layers["chunked_attention"], scheme.layers["full_attention_nope"]
    assert rope.chunk == 32 and rope.qk_norm == "l2" and rope.query_temperature is None
    assert nope.chunk is None and nope.qk_norm is None
    p = np.array([62.0, 63.0, 190.0, 191.0])  # 0-based: floor((p + 1)/64) = 0, 1, 2, 3
    np.testing.assert_allclose(nope.query_scale(p),
                               [1.0, 1 + 0.25 * math.log(2), 1 + 0.25 * math.log(3),
                                1 + 0.25 * math.log(4)], rtol=1e-14)


def test_gemma3_local_base_from_the_v4_keys():
    """A Hub config.json of Gemma-3 (v4 keys: rope_scaling for the global layers,
    rope_local_base_freq for the sliding ones) reads as transformers' config class does."""
    hub = {"model_type": "gemma3_text", "head_dim": 16, "num_hidden_layers": 6,
           "hidden_size": 64, "num_attention_heads": 4, "rope_theta": 1e6,
           "rope_local_base_freq": 1e4, "rope_scaling": {"rope_type": "linear", "factor": 8.0},
           "sliding_window": 16}
    scheme = from_hf_config(hub)
    config = tf.Gemma3TextConfig(**{**SMALL, **hub})
    rotary = importlib.import_module("transformers.models.gemma3.modeling_gemma3"
                                     ).Gemma3RotaryEmbedding(config)
    for kind in ("sliding_attention", "full_attention"):
        np.testing.assert_allclose(scheme.layers[kind].inv_freq, _rotary(rotary, kind)[0],
                                   rtol=3e-7)
    local, full = scheme.layers["sliding_attention"], scheme.layers["full_attention"]
    np.testing.assert_allclose(local.inv_freq, 1e4 ** (-np.arange(0, 16, 2) / 16), rtol=1e-14)
    np.testing.assert_allclose(full.inv_freq, 1e6 ** (-np.arange(0, 16, 2) / 16) / 8,
                               rtol=1e-14)
    assert scheme.layer_types == ("sliding_attention",) * 5 + ("full_attention",)


def test_single_scheme_view_of_a_mixed_model():
    """A mixed model's top-level fields describe its full-attention layers (or its most common
    type); the factor without a layer type is refused, naming the types."""
    scheme = from_hf_config(_build("gemma3-text")[0].to_dict())
    assert scheme.mixed and scheme.layer_type == "full_attention"
    with pytest.raises(ValueError, match="sliding_attention, full_attention.*give layer_type"):
        scheme.logit_scale([0])
    with pytest.raises(ValueError, match="layer_type must be one of"):
        scheme.logit_scale([0], layer_type="global")
    plain = from_hf_config({"hidden_size": 64, "num_attention_heads": 4})
    assert not plain.mixed and plain.logit_scale([5]).tolist() == [0.25]


def test_layer_structure_errors_name_the_key():
    base = {"hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2}
    with pytest.raises(ValueError, match="layer_types has 'linear_attention'"):
        from_hf_config({**base, "layer_types": ["full_attention", "linear_attention"]})
    with pytest.raises(ValueError, match="layer_types has 3 entries but num_hidden_layers is 2"):
        from_hf_config({**base, "layer_types": ["full_attention"] * 3})
    with pytest.raises(ValueError, match="sliding_window is null"):
        from_hf_config({**base, "layer_types": ["sliding_attention", "full_attention"]})
    with pytest.raises(ValueError, match="no_rope_layers must list 0 or 1"):
        from_hf_config({**base, "model_type": "smollm3", "no_rope_layers": [1, 2]})
    with pytest.raises(ValueError, match="use_bidirectional_attention"):
        from_hf_config({**base, "model_type": "gemma3_text",
                        "use_bidirectional_attention": True})
    with pytest.raises(ValueError, match="needs num_hidden_layers"):
        from_hf_config({"hidden_size": 64, "num_attention_heads": 4, "model_type": "qwen2",
                        "use_sliding_window": True})
    with pytest.raises(ValueError, match="qk_head_dim 100 but"):
        from_hf_config({"hidden_size": 64, "num_attention_heads": 4, "model_type": "deepseek_v3",
                        "qk_rope_head_dim": 8, "qk_nope_head_dim": 24, "qk_head_dim": 100})


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_layout_is_inferred_as_transformers_derives_it(name):
    """Without the layer_types and no_rope_layers transformers derived (a Hub config.json
    often lacks them), the reader's rules give the same layers."""
    config, _, _ = _build(name)
    full = from_hf_config(config.to_dict())
    bare = {k: v for k, v in config.to_dict().items()
            if k not in ("layer_types", "no_rope_layers")}
    inferred = from_hf_config(bare)
    assert inferred.layer_types == full.layer_types
    for key, layer in full.layers.items():
        other = inferred.layers[key]
        assert (other.window, other.chunk, other.rope) == (layer.window, layer.chunk, layer.rope)
