"""``load_pretrained(folder)`` of a Hugging Face LLaMA checkpoint the test writes itself
(random weights, ``config.json`` + safetensors), against transformers' LlamaForCausalLM forward
written out here in numpy (``models/llama/modeling_llama.py``: RMSNorm, ``rotate_half`` RoPE
on half-split pairs with ``inv_freq = base^(−2i/D)``, repeated key-value heads, SwiGLU MLP,
``lm_head``)."""

import json
import struct

import numpy as np
import pytest

from sia_theory.models import hf_folder, load_pretrained

save_file = pytest.importorskip("safetensors.numpy").save_file

CONFIG = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 32,
          "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
          "intermediate_size": 48, "vocab_size": 50, "rope_theta": 500.0,
          "rms_norm_eps": 1e-5, "max_position_embeddings": 64, "tie_word_embeddings": False,
          "rope_scaling": None}


def checkpoint(seed=0):
    rng = np.random.default_rng(seed)
    c = CONFIG
    d, hd = c["hidden_size"], c["hidden_size"] // c["num_attention_heads"]

    def w(*shape):
        return (rng.standard_normal(shape) / np.sqrt(shape[-1])).astype(np.float32)

    t = {"model.embed_tokens.weight": w(c["vocab_size"], d),
         "lm_head.weight": w(c["vocab_size"], d),
         "model.norm.weight": (1 + 0.1 * rng.standard_normal(d)).astype(np.float32)}
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        t[p + "self_attn.q_proj.weight"] = w(c["num_attention_heads"] * hd, d)
        t[p + "self_attn.k_proj.weight"] = w(c["num_key_value_heads"] * hd, d)
        t[p + "self_attn.v_proj.weight"] = w(c["num_key_value_heads"] * hd, d)
        t[p + "self_attn.o_proj.weight"] = w(d, c["num_attention_heads"] * hd)
        t[p + "mlp.gate_proj.weight"] = w(c["intermediate_size"], d)
        t[p + "mlp.up_proj.weight"] = w(c["intermediate_size"], d)
        t[p + "mlp.down_proj.weight"] = w(d, c["intermediate_size"])
        for norm in ("input_layernorm", "post_attention_layernorm"):
            t[p + norm + ".weight"] = (1 + 0.1 * rng.standard_normal(d)).astype(np.float32)
    return t


def write(folder, tensors, config=CONFIG):
    folder.mkdir(exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config))
    save_file(tensors, str(folder / "model.safetensors"))
    return folder


def hf_forward(t, ids, inv_freq=None, attention_factor=1.0):
    """transformers' LlamaForCausalLM, float64 (``inv_freq`` and the attention factor on cos and
    sin given for a scaled RoPE: ``LlamaRotaryEmbedding.forward``)."""
    c = CONFIG
    t = {k: v.astype(np.float64) for k, v in t.items()}
    heads, kv, eps = c["num_attention_heads"], c["num_key_value_heads"], c["rms_norm_eps"]
    hd = c["hidden_size"] // heads

    def norm(x, g):
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * g

    def rotate_half(x):
        return np.concatenate([-x[..., hd // 2:], x[..., :hd // 2]], axis=-1)

    n = len(ids)
    if inv_freq is None:
        inv_freq = c["rope_theta"] ** (-np.arange(0, hd, 2) / hd)  # (D/2,)
    emb = np.concatenate([np.arange(n)[:, None] * inv_freq] * 2, axis=-1)  # (T, D)
    cos, sin = np.cos(emb) * attention_factor, np.sin(emb) * attention_factor
    x = t["model.embed_tokens.weight"][ids]  # (T, d)
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        h = norm(x, t[p + "input_layernorm.weight"])
        q = (h @ t[p + "self_attn.q_proj.weight"].T).reshape(n, heads, hd).transpose(1, 0, 2)
        k = (h @ t[p + "self_attn.k_proj.weight"].T).reshape(n, kv, hd).transpose(1, 0, 2)
        v = (h @ t[p + "self_attn.v_proj.weight"].T).reshape(n, kv, hd).transpose(1, 0, 2)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        k, v = np.repeat(k, heads // kv, axis=0), np.repeat(v, heads // kv, axis=0)
        s = q @ k.transpose(0, 2, 1) / np.sqrt(hd) + np.triu(np.full((n, n), -np.inf), 1)
        a = np.exp(s - s.max(-1, keepdims=True))
        out = (a / a.sum(-1, keepdims=True)) @ v  # (H, T, D)
        x = x + out.transpose(1, 0, 2).reshape(n, heads * hd) @ t[p + "self_attn.o_proj.weight"].T
        h = norm(x, t[p + "post_attention_layernorm.weight"])
        g = h @ t[p + "mlp.gate_proj.weight"].T
        x = x + (g / (1 + np.exp(-g)) * (h @ t[p + "mlp.up_proj.weight"].T)) @ t[
            p + "mlp.down_proj.weight"].T
    return norm(x, t["model.norm.weight"]) @ t["lm_head.weight"].T


IDS = [3, 17, 4, 49, 0, 22, 8, 8, 31, 5, 12]


def test_hf_folder_logits_match_transformers_forward(tmp_path):
    tensors = checkpoint()
    model, tokenizer = load_pretrained(str(write(tmp_path / "tiny", tensors)), np.float64)
    assert tokenizer is None and model.config.n_kv_heads == 2 and model.config.rope_base == 500
    got = model.logits(IDS)
    assert np.max(np.abs(got - hf_forward(tensors, IDS))) <= 1e-10


def test_wrong_rope_pairing_breaks_the_match(tmp_path, monkeypatch):
    # negative control: without llama.cpp's q/k row permutation the model rotates other pairs
    monkeypatch.setattr(hf_folder, "to_gguf_rows", lambda weight, n_heads: weight)
    tensors = checkpoint()
    model, _ = load_pretrained(str(write(tmp_path / "tiny", tensors)), np.float64)
    assert np.max(np.abs(model.logits(IDS) - hf_forward(tensors, IDS))) > 1e-3


def test_tied_head_uses_the_embedding(tmp_path):
    tensors = checkpoint(1)
    del tensors["lm_head.weight"]
    model, _ = load_pretrained(str(write(tmp_path / "tied", tensors,
                                         {**CONFIG, "tie_word_embeddings": True})), np.float64)
    tensors["lm_head.weight"] = tensors["model.embed_tokens.weight"]
    assert np.max(np.abs(model.logits(IDS) - hf_forward(tensors, IDS))) <= 1e-10


def test_bfloat16_tensors_are_read_from_their_bits(tmp_path):
    # a safetensors file written by hand: header length, JSON header, little-endian bf16 data
    values = np.array([1.0, -2.5, 0.15625, 3.0e38], np.float32)
    bits = (values.view(np.uint32) >> 16).astype("<u2")  # exact for these values
    header = json.dumps({"x": {"dtype": "BF16", "shape": [2, 2],
                               "data_offsets": [0, bits.nbytes]}}).encode()
    path = tmp_path / "x.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header + bits.tobytes())
    got = hf_folder.read_safetensors(path)["x"]
    assert got.dtype == np.float32 and np.array_equal(got, (bits.astype(np.uint32) << 16)
                                                      .view(np.float32).reshape(2, 2))
    assert got[0, 0] == 1.0 and got[0, 1] == -2.5 and got[1, 0] == 0.15625


LONG_IDS = [(7 * i + 3) % 50 for i in range(40)]  # past the original 16 positions


@pytest.mark.parametrize("rope, inv_freq, factor", [
    # transformers _compute_yarn_parameters (v4.46): D = 8, base 500, factor 4, original 16:
    # low = floor(8 ln(16/(32·2π))/(2 ln 500)) -> 0 (clipped), high = ceil(8 ln(16/2π)/(2 ln 500))
    # = 1; ramp over the index (i - 0)/(1 - 0) clipped: mask 1 - ramp = (1, 0, 0, 0);
    # attention factor 0.1 ln 4 + 1 on cos and sin
    ({"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 16},
     np.array([1.0, 500 ** -0.25 / 4, 500 ** -0.5 / 4, 500 ** -0.75 / 4]),
     0.1 * np.log(4.0) + 1),
    # linear: positions divided by the factor, i.e. inv_freq / factor
    ({"rope_type": "linear", "factor": 2.0}, 500.0 ** (-np.arange(0, 8, 2) / 8) / 2, 1.0),
])
def test_scaled_rope_folder_matches_transformers_forward(tmp_path, rope, inv_freq, factor):
    tensors = checkpoint(2)
    folder = write(tmp_path / "scaled", tensors, {**CONFIG, "rope_scaling": rope})
    model, _ = load_pretrained(str(folder), np.float64)
    want = hf_forward(tensors, LONG_IDS, inv_freq, factor)
    assert np.max(np.abs(model.logits(LONG_IDS) - want)) <= 1e-10
    # negative control: the unscaled model (the config's rope_scaling ignored) misses it
    assert np.max(np.abs(model.logits(LONG_IDS) - hf_forward(tensors, LONG_IDS))) > 1e-3


@pytest.mark.parametrize("change, match", [
    ({"model_type": "gpt2"}, "model_type 'gpt2'"),
    ({"head_dim": 16}, "head_dim 16"),
])
def test_unsupported_configs_are_refused(tmp_path, change, match):
    folder = write(tmp_path / "bad", checkpoint(), {**CONFIG, **change})
    with pytest.raises(ValueError, match=match):
        load_pretrained(str(folder))


def test_missing_and_extra_tensors_are_refused(tmp_path):
    tensors = checkpoint()
    del tensors["model.layers.1.mlp.up_proj.weight"]
    with pytest.raises(ValueError, match="lacks the tensor 'model.layers.1.mlp.up_proj"):
        load_pretrained(str(write(tmp_path / "missing", tensors)))
    tensors = {**checkpoint(), "model.layers.0.self_attn.q_proj.bias": np.zeros(32, np.float32)}
    with pytest.raises(ValueError, match="does not use: model.layers.0.self_attn.q_proj.bias"):
        load_pretrained(str(write(tmp_path / "extra", tensors)))
    with pytest.raises(ValueError, match="config.json and"):
        load_pretrained(str(tmp_path))
