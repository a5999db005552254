"""Tiny Hugging Face checkpoints written with numpy and safetensors (no torch): ``config.json``,
``model.safetensors`` and a byte-level ``tokenizer.json`` (the 256 bytes, no merges), for the
model report's tests. Weights are random, ``N(0, 1/fan_in)``, norms near 1; ``q_scale`` multiplies
chosen heads' query rows (a large factor: a peaked head), ``zero`` zeroes every layer's
``q_proj`` or ``k_proj`` (uniform attention: every logit of every head is 0)."""

from __future__ import annotations

import json

import numpy as np

LLAMA = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 64,
         "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 2,
         "intermediate_size": 96, "vocab_size": 256, "rope_theta": 10000.0,
         "rms_norm_eps": 1e-5, "max_position_embeddings": 1024, "tie_word_embeddings": True}
"""A tiny LLaMA: 3 layers, 4 query and 2 key-value heads of dimension 16, byte vocabulary."""

QWEN2_WINDOWED = {**LLAMA, "model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"],
                  "num_hidden_layers": 4, "use_sliding_window": True, "sliding_window": 2048,
                  "max_window_layers": 2,
                  "rope_scaling": {"type": "yarn", "factor": 4.0,
                                   "original_max_position_embeddings": 256}}
"""A tiny Qwen2: layers 2 and 3 slide (window 2048), YaRN ×4 from 256 positions (attention
factor 0.1·ln 4 + 1 on cos and sin)."""


def byte_tokenizer(path) -> None:
    """A byte-level BPE ``tokenizer.json`` with the 256 byte symbols and no merges."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    tokenizer = Tokenizer(models.BPE(vocab={ch: i for i, ch in enumerate(alphabet)}, merges=[]))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.save(str(path))


def write_checkpoint(folder, config=LLAMA, *, seed=0, q_scale=None, zero=None,
                     tokenizer=True):
    """Write a checkpoint of ``config`` into ``folder``; ``q_scale``: ``{(layer, head):
    factor}`` on those heads' ``q_proj`` rows; ``zero``: ``"q"`` or ``"k"``. Returns
    ``folder``."""
    from safetensors.numpy import save_file

    rng = np.random.default_rng(seed)
    c = config
    d, heads, kv = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"]
    hd = d // heads

    def w(*shape):
        return (rng.standard_normal(shape) / np.sqrt(shape[-1])).astype(np.float32)

    def gain():
        return (1 + 0.1 * rng.standard_normal(d)).astype(np.float32)

    t = {"model.embed_tokens.weight": w(c["vocab_size"], d), "model.norm.weight": gain()}
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        q = w(heads * hd, d)
        for (layer, head), factor in (q_scale or {}).items():
            if layer == i:
                q[head * hd:(head + 1) * hd] *= factor
        k = w(kv * hd, d)
        if zero == "q":
            q[:] = 0
        elif zero == "k":
            k[:] = 0
        t[p + "self_attn.q_proj.weight"] = q
        t[p + "self_attn.k_proj.weight"] = k
        t[p + "self_attn.v_proj.weight"] = w(kv * hd, d)
        t[p + "self_attn.o_proj.weight"] = w(d, heads * hd)
        if c["model_type"] == "qwen2":
            for name, size in (("q", heads * hd), ("k", kv * hd), ("v", kv * hd)):
                t[p + f"self_attn.{name}_proj.bias"] = (
                    np.zeros(size, np.float32) if zero == name
                    else (0.1 * rng.standard_normal(size)).astype(np.float32))
        t[p + "mlp.gate_proj.weight"] = w(c["intermediate_size"], d)
        t[p + "mlp.up_proj.weight"] = w(c["intermediate_size"], d)
        t[p + "mlp.down_proj.weight"] = w(d, c["intermediate_size"])
        t[p + "input_layernorm.weight"] = gain()
        t[p + "post_attention_layernorm.weight"] = gain()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(c))
    save_file(t, str(folder / "model.safetensors"))
    if tokenizer:
        byte_tokenizer(folder / "tokenizer.json")
    return folder
