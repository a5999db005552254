"""sia_theory.models.loader, exercised by its own name: a Hugging Face folder written here loads
in float32 and float64 with the same logits (to float32 rounding); the registry and the dtype
check."""

import json

import numpy as np
import pytest

from sia_theory.models.loader import MODELS, load_hf_folder

save_file = pytest.importorskip("safetensors.numpy").save_file


def _tiny_folder(folder, seed=0):
    """A random LLaMA checkpoint (config.json + safetensors): d 16, 4 heads, 2 key-value heads,
    2 layers, vocabulary 20."""
    rng = np.random.default_rng(seed)
    d, heads, kv, ffn, vocab, hd = 16, 4, 2, 24, 20, 4
    shapes = {"model.embed_tokens.weight": (vocab, d), "lm_head.weight": (vocab, d),
              "model.norm.weight": (d,)}
    for i in range(2):
        p = f"model.layers.{i}."
        shapes.update({p + "self_attn.q_proj.weight": (heads * hd, d),
                       p + "self_attn.k_proj.weight": (kv * hd, d),
                       p + "self_attn.v_proj.weight": (kv * hd, d),
                       p + "self_attn.o_proj.weight": (d, heads * hd),
                       p + "mlp.gate_proj.weight": (ffn, d), p + "mlp.up_proj.weight": (ffn, d),
                       p + "mlp.down_proj.weight": (d, ffn), p + "input_layernorm.weight": (d,),
                       p + "post_attention_layernorm.weight": (d,)})
    tensors = {k: (rng.standard_normal(s) / np.sqrt(s[-1]) if len(s) == 2
                   else 1 + 0.1 * rng.standard_normal(s)).astype(np.float32)
               for k, s in shapes.items()}
    folder.mkdir(exist_ok=True)
    (folder / "config.json").write_text(json.dumps({
        "model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": d,
        "num_hidden_layers": 2, "num_attention_heads": heads, "num_key_value_heads": kv,
        "intermediate_size": ffn, "vocab_size": vocab, "rope_theta": 100.0,
        "rms_norm_eps": 1e-5, "max_position_embeddings": 64, "tie_word_embeddings": False}))
    save_file(tensors, str(folder / "model.safetensors"))
    return folder


def test_float32_and_float64_agree(tmp_path):
    folder = _tiny_folder(tmp_path / "tiny", seed=2)
    m32, tokenizer = load_hf_folder(folder, np.float32)
    m64, _ = load_hf_folder(folder, np.float64)
    ids = np.array([1, 2, 3, 4, 5])
    assert tokenizer is None
    assert m32.logits(ids) == pytest.approx(m64.logits(ids), abs=1e-5)
    assert m64.load_info["source"] == str(folder)


def test_registry_and_bad_dtype(tmp_path):
    spec = MODELS["smollm2-135m"]
    assert spec.size == 98362432 and len(spec.sha256) == 64
    with pytest.raises(ValueError, match="dtype"):
        load_hf_folder(tmp_path, np.float16)
    with pytest.raises(ValueError, match="dtype"):
        load_hf_folder(tmp_path, None)
