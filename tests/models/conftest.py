"""Shared fixtures of the model tests: a tiny random LLaMA checkpoint written as a Hugging Face
folder (config.json + safetensors), read back by the loader's own code in each test."""

import json

import numpy as np
import pytest


def write_tiny_folder(folder, seed=0):
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
    from safetensors.numpy import save_file  # optional dependency: safetensors (model extra)

    save_file(tensors, str(folder / "model.safetensors"))
    return folder


@pytest.fixture(scope="session")
def tiny_folder():
    """``write(folder, seed=0) -> folder``: a random tiny LLaMA checkpoint (needs safetensors)."""
    pytest.importorskip("safetensors.numpy")
    return write_tiny_folder
