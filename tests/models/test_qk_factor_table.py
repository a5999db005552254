"""The whole factor on ``q·k``, per layer type, of every published config the tests hold plus
Gemma-2-27B, Gemma-3-27B, Granite-3 8B and DeepSeek-V2-Lite, held against transformers itself
(pinned in the ``test`` extra; the tests skip without it, saying so).

transformers' side is read from the modules it builds from the same dict: the attention
module's ``scaling`` for a layer of that type, its rotary embedding's ``attention_scaling``
squared (on cos and sin, so on every rotated dimension of ``q·k``) and the query temperature it
applies: ``get_llama_4_attn_scale`` of ``models/ministral3/modeling_ministral3.py`` and
``models/mistral4/modeling_mistral4.py`` (called here), and Llama 4's
``log1p(floor((p + 1)/floor_scale))·attn_scale + 1`` on its NoPE layers (written out from
``Llama4TextAttention.forward``). The table in ``docs/guide/real-models.md`` is this test's
rendering, so the page cannot drift from what is checked.
"""

import importlib
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from sia_theory.models.hf_config import from_hf_config

tf = pytest.importorskip("transformers", reason="transformers (pinned in the test extra) is the "
                         "reference for the factor on q·k")
torch = pytest.importorskip("torch", reason="torch builds transformers' attention modules")

FIXTURES = Path(__file__).parents[1] / "fixtures" / "hf_configs"
DOC = Path(__file__).parents[2] / "docs" / "guide" / "real-models.md"
PUBLISHED = {  # the attention keys of four more model cards' config.json
    # google/gemma-2-27b: head_dim 128, query_pre_attn_scalar 144, cap 50, window 4096
    "gemma-2-27b": {"model_type": "gemma2", "hidden_size": 4608, "num_attention_heads": 32,
                    "num_key_value_heads": 16, "head_dim": 128, "num_hidden_layers": 46,
                    "query_pre_attn_scalar": 144, "attn_logit_softcapping": 50.0,
                    "sliding_window": 4096, "rope_theta": 10000.0,
                    "max_position_embeddings": 8192},
    # google/gemma-3-27b-it text_config: head_dim 128, query_pre_attn_scalar 168
    "gemma-3-27b": {"model_type": "gemma3_text", "hidden_size": 5376,
                    "num_attention_heads": 32, "num_key_value_heads": 16, "head_dim": 128,
                    "num_hidden_layers": 62, "query_pre_attn_scalar": 168,
                    "sliding_window": 1024, "rope_theta": 1000000.0,
                    "rope_local_base_freq": 10000.0,
                    "rope_scaling": {"rope_type": "linear", "factor": 8.0},
                    "max_position_embeddings": 131072},
    # ibm-granite/granite-3.1-8b-instruct: attention_multiplier 1/128
    "granite-3.1-8b": {"model_type": "granite", "hidden_size": 4096,
                       "num_attention_heads": 32, "num_key_value_heads": 8,
                       "num_hidden_layers": 40, "attention_multiplier": 0.0078125,
                       "rope_theta": 10000000.0, "max_position_embeddings": 131072},
    # deepseek-ai/DeepSeek-V2-Lite: MLA 128 + 64, YaRN factor 40, mscale 0.707 on both
    "deepseek-v2-lite": {"model_type": "deepseek_v2", "hidden_size": 2048,
                         "num_attention_heads": 16, "num_key_value_heads": 16,
                         "num_hidden_layers": 27, "qk_nope_head_dim": 128,
                         "qk_rope_head_dim": 64, "v_head_dim": 128, "kv_lora_rank": 512,
                         "q_lora_rank": None, "rope_theta": 10000,
                         "max_position_embeddings": 163840,
                         "rope_scaling": {"type": "yarn", "factor": 40, "mscale": 0.707,
                                          "mscale_all_dim": 0.707, "beta_fast": 32,
                                          "beta_slow": 1,
                                          "original_max_position_embeddings": 4096}},
}
MODULES = {  # model_type -> (transformers module, attention class, rotary class)
    "deepseek_v2": ("deepseek_v2", "DeepseekV2Attention", "DeepseekV2RotaryEmbedding"),
    "deepseek_v3": ("deepseek_v3", "DeepseekV3Attention", "DeepseekV3RotaryEmbedding"),
    "gemma2": ("gemma2", "Gemma2Attention", "Gemma2RotaryEmbedding"),
    "gemma3_text": ("gemma3", "Gemma3Attention", "Gemma3RotaryEmbedding"),
    "gpt_oss": ("gpt_oss", "GptOssAttention", "GptOssRotaryEmbedding"),
    "granite": ("granite", "GraniteAttention", "GraniteRotaryEmbedding"),
    "llama": ("llama", "LlamaAttention", "LlamaRotaryEmbedding"),
    "llama4_text": ("llama4", "Llama4TextAttention", "Llama4TextRotaryEmbedding"),
    "ministral3": ("ministral3", "Ministral3Attention", "Ministral3RotaryEmbedding"),
    "mistral4": ("mistral4", "Mistral4Attention", "Mistral4RotaryEmbedding"),
    "phi3": ("phi3", "Phi3Attention", "Phi3RotaryEmbedding"),
    "qwen2": ("qwen2", "Qwen2Attention", "Qwen2RotaryEmbedding"),
    "qwen3": ("qwen3", "Qwen3Attention", "Qwen3RotaryEmbedding"),
}
POSITIONS = np.array([0.0, 8191.0, 65535.0, 2.0 ** 20 - 1])
BEGIN, END = "<!-- qk-factor-table: begin -->", "<!-- qk-factor-table: end -->"


def _configs():
    out = {}
    for path in sorted(FIXTURES.glob("*.json")):
        out[path.stem] = json.loads(path.read_text())
    return {**out, **PUBLISHED}


def _text(config):
    return config.get("text_config", config)


def _transformers(config):
    """transformers' config, its per-layer attention modules (built lazily) and rotary."""
    keys = {k: v for k, v in _text(config).items() if k != "_name_or_path"}
    kind = keys["model_type"]
    if "attn_temperature_tuning" in keys:  # Llama-4-Scout publishes 4; transformers 5 wants a bool
        keys["attn_temperature_tuning"] = bool(keys["attn_temperature_tuning"])
    cfg = tf.AutoConfig.for_model(kind, **{k: v for k, v in keys.items() if k != "model_type"})
    cfg._attn_implementation = "eager"
    module, attention, rotary = MODULES[kind]
    mod = importlib.import_module(f"transformers.models.{module}.modeling_{module}")
    return cfg, mod, getattr(mod, attention), getattr(mod, rotary)(cfg)


def _theirs(cfg, mod, attention_cls, rotary, layer_type, rope):
    """scaling × attention_scaling² × temperature at POSITIONS for the first layer of the
    type (transformers' layer_types entry; RoPE or not: no_rope_layers)."""
    types = getattr(cfg, "layer_types", None) or ["full_attention"] * cfg.num_hidden_layers
    flags = getattr(cfg, "no_rope_layers", None) or [1] * cfg.num_hidden_layers
    index = next(i for i, (t, f) in enumerate(zip(types, flags, strict=True))
                 if t == layer_type and bool(f) == rope)
    module = attention_cls(cfg, layer_idx=index)
    factor = 1.0
    if rope:
        factor = getattr(rotary, f"{layer_type}_attention_scaling", None)
        factor = rotary.attention_scaling if factor is None else factor
    temperature = np.ones_like(POSITIONS)
    if getattr(module, "attn_temperature_tuning", False) and not module.use_rope:
        temperature = (np.log1p(np.floor((POSITIONS + 1.0) / module.floor_scale))
                       * module.attn_scale + 1.0)
    beta = (cfg.rope_parameters or {}).get("llama_4_scaling_beta")
    if beta and hasattr(mod, "get_llama_4_attn_scale"):
        scale = mod.get_llama_4_attn_scale(
            torch.tensor(POSITIONS, dtype=torch.float64)[None], beta,
            cfg.rope_parameters.get("original_max_position_embeddings"))
        temperature = scale.reshape(-1).numpy()
    return module.scaling * factor ** 2 * temperature, module.scaling, factor


def _rows():
    rows = []
    for name, config in _configs().items():
        scheme = from_hf_config(config)
        cfg, mod, attention_cls, rotary = _transformers(config)
        for key, layer in scheme.layers.items():
            ours = scheme.logit_scale(POSITIONS, layer_type=key)
            theirs, scaling, factor = _theirs(cfg, mod, attention_cls, rotary,
                                              layer.layer_type, layer.rope)
            rows.append({"name": name, "layer": key,
                         "layers": "" if layer.layer_indices is None
                         else str(len(layer.layer_indices)),
                         "scaling": scaling, "factor2": factor ** 2, "ours": ours,
                         "theirs": theirs, "root": _text(config).get("model_type"),
                         "naive": layer.qk_head_dim ** -0.5 if layer.qk_head_dim else math.nan,
                         "cap": layer.logit_softcap})
    return rows


@pytest.fixture(scope="module")
def rows():
    return _rows()


def test_every_layer_type_equals_transformers(rows):
    assert len(rows) >= 19
    for row in rows:
        np.testing.assert_allclose(row["ours"], row["theirs"], rtol=1e-12,
                                   err_msg=f"{row['name']} {row['layer']}")


def test_the_factors_that_are_not_one_over_root_d(rows):
    """The four configs whose softmax scale is not 1/√head_dim: the factor differs from the
    naive one by the published ratios (Granite ×1/11.31, Gemma-3-27B ×0.873, Gemma-2-27B
    ×0.943, DeepSeek-V2-Lite √(64/192)·mscale² with mscale = 0.1·0.707·ln 40 + 1)."""
    by = {(r["name"], r["layer"]): r for r in rows}
    granite = by[("granite-3.1-8b", "full_attention")]
    assert granite["ours"][0] * math.sqrt(128) == pytest.approx(1 / 11.3137, rel=1e-4)
    gemma3 = by[("gemma-3-27b", "full_attention")]
    assert gemma3["ours"][0] * math.sqrt(128) == pytest.approx(math.sqrt(128 / 168), rel=1e-12)
    gemma2 = by[("gemma-2-27b", "sliding_attention")]
    assert gemma2["ours"][0] * math.sqrt(128) == pytest.approx(math.sqrt(128 / 144), rel=1e-12)
    assert gemma2["cap"] == 50.0
    lite = by[("deepseek-v2-lite", "full_attention")]
    mscale = 0.1 * 0.707 * math.log(40) + 1
    assert lite["ours"][0] == pytest.approx(mscale ** 2 / math.sqrt(192), rel=1e-12)
    assert lite["ours"][0] != pytest.approx(1 / math.sqrt(64), rel=0.05)


def render(rows) -> str:
    """The Markdown table the guide shows (one row per model and layer type)."""
    lines = ["| model | layer type (layers) | transformers `scaling` | attention factor² "
             "| `logit_scale` at p = 0 | at p = 2²⁰ − 1 | vs 1/√d | cap |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        layers = f" ({r['layers']})" if r["layers"] else ""
        ratio = r["ours"][0] / r["naive"]
        cap = "" if r["cap"] is None else f"{r['cap']:g}"
        lines.append(f"| {r['name']} | {r['layer']}{layers} | {r['scaling']:.6g} | "
                     f"{r['factor2']:.6g} | {r['ours'][0]:.6g} | {r['ours'][-1]:.6g} | "
                     f"×{ratio:.4g} | {cap} |")
    return "\n".join(lines)


def test_the_guide_shows_this_table(rows):
    text = DOC.read_text(encoding="utf-8")
    found = re.search(re.escape(BEGIN) + r"\n(.*?)\n" + re.escape(END), text, re.S)
    assert found, f"docs/guide/real-models.md lacks the {BEGIN} … {END} block"
    assert found.group(1) == render(rows), "regenerate: print(render(_rows()))"
