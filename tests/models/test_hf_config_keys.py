"""Every key of a supported model type's config is read, refused or named as not about the
attention logits: the keys are listed from transformers' own config classes (pinned in the
``test`` extra; the test skips without it, saying so), so a key a new release adds fails here
until it is classified."""

import pytest

from sia_theory.models.hf_config import (
    CONFIG_KEYS,
    OTHER_KEYS,
    SUPPORTED_CONFIGS,
    from_hf_config,
)

tf = pytest.importorskip("transformers", reason="transformers (pinned in the test extra) lists "
                         "the config keys")


def _keys(model_type):
    generic = set(tf.PreTrainedConfig().to_dict())  # name, dtype, labels, ...: not a model's
    return set(getattr(tf, SUPPORTED_CONFIGS[model_type])().to_dict()) - generic


@pytest.mark.parametrize("model_type", sorted(SUPPORTED_CONFIGS))
def test_every_key_is_classified(model_type):
    unclassified = _keys(model_type) - set(CONFIG_KEYS) - OTHER_KEYS
    assert not unclassified, f"{model_type}: classify {sorted(unclassified)} in CONFIG_KEYS"


def test_the_classes_are_disjoint_and_each_reason_is_given():
    assert not set(CONFIG_KEYS) & OTHER_KEYS
    assert all(isinstance(v, str) and v for v in CONFIG_KEYS.values())


@pytest.mark.parametrize("model_type", sorted(SUPPORTED_CONFIGS))
def test_a_default_config_of_each_supported_type_is_read(model_type):
    config = getattr(tf, SUPPORTED_CONFIGS[model_type])()
    scheme = from_hf_config(config.to_dict())
    assert len(scheme.layer_types) == config.num_hidden_layers


READ_CHANGES = {  # a read key, a config of transformers' class and a changed value
    "query_pre_attn_scalar": ("Gemma2Config", 100),
    "attn_logit_softcapping": ("Gemma2Config", 20.0),
    "sliding_window": ("Gemma2Config", 64),
    "layer_types": ("Gemma2Config", ["full_attention"] * 26),
    "attention_multiplier": ("GraniteConfig", 0.01),
    "no_rope_layers": ("SmolLM3Config", [1] * 36),
    "attention_chunk_size": ("Llama4TextConfig", 1024),
    "floor_scale": ("Llama4TextConfig", 100),
    "attn_scale": ("Llama4TextConfig", 0.5),
    "attn_temperature_tuning": ("Llama4TextConfig", False),
    "use_qk_norm": ("Llama4TextConfig", False),
    "max_window_layers": ("Qwen2Config", 1),
    "head_dim": ("Qwen3Config", 64),
    "qk_nope_head_dim": ("DeepseekV3Config", 64),
}


def _summary(scheme):
    return [(key, layer.window, layer.chunk, layer.rope, layer.qk_norm, layer.logit_softcap,
             tuple(layer.logit_scale([0, 10**5, 10**6])), tuple(layer.inv_freq))
            for key, layer in scheme.layers.items()] + [scheme.layer_types]


@pytest.mark.parametrize("key", sorted(READ_CHANGES))
def test_a_read_key_changes_the_scheme(key):
    """Each read key, changed, changes what the scheme says: it is not dropped."""
    config_cls, value = READ_CHANGES[key]
    config = getattr(tf, config_cls)()
    before = from_hf_config(config.to_dict())
    if key == "layer_types" or key == "no_rope_layers":
        value = value[:config.num_hidden_layers]
    if key == "max_window_layers":
        config.use_sliding_window, config.sliding_window = True, 4096
        config.layer_types = None
        before = from_hf_config({**config.to_dict(), "layer_types": None})
    changed = {**config.to_dict(), key: value}
    if key in ("max_window_layers", "no_rope_layers", "attention_chunk_size", "sliding_window"):
        changed["layer_types"] = None  # transformers derives them from the changed key
    if key == "qk_nope_head_dim":
        changed.pop("qk_head_dim")  # derived from it
    assert _summary(from_hf_config(changed)) != _summary(before)


CLASSES = {"gemma2": "Gemma2Config", "gemma3": "Gemma3TextConfig",
           "gemma3_text": "Gemma3TextConfig", "gpt_oss": "GptOssConfig",
           "mistral": "MistralConfig", "qwen2": "Qwen2Config", "qwen3": "Qwen3Config",
           "smollm3": "SmolLM3Config", "llama4": "Llama4TextConfig",
           "llama4_text": "Llama4TextConfig", "deepseek_v2": "DeepseekV2Config",
           "deepseek_v3": "DeepseekV3Config", "mistral4": "Mistral4Config", "phi3": "Phi3Config",
           "olmo2": "Olmo2Config", "llama": "LlamaConfig", "granite": "GraniteConfig"}


def test_the_defaults_filled_in_are_transformers_own():
    """The defaults the config reader and the folder reader fill in for an absent key are the
    config classes' field defaults (Gemma-3's ``sliding_window_pattern`` is a keyword its
    ``__post_init__`` reads with default 6)."""
    import dataclasses

    from sia_theory.models import hf_config
    from sia_theory.models.hf_folder import ARCHITECTURES

    tables = [hf_config._SCALE_DEFAULTS, hf_config._STRUCTURE_DEFAULTS,
              {kind: dict(arch.defaults) for kind, arch in ARCHITECTURES.items()}]
    checked = 0
    for table in tables:
        for kind, defaults in table.items():
            fields = {f.name: f.default for f in dataclasses.fields(getattr(tf, CLASSES[kind]))}
            for key, value in defaults.items():
                want = 6 if key == "sliding_window_pattern" else fields[key]
                assert value == want, (kind, key, value, want)
                checked += 1
    assert checked >= 40
