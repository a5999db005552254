"""sia_theory.models.hf_folder, exercised by its own name: a safetensors file written byte by byte
here (8-byte little-endian header length, JSON header, raw data), the LLaMA config mapping and
llama.cpp's q/k row permutation against its inverse."""

import json
import struct

import numpy as np
import pytest

from sia_theory.models.hf_folder import hf_config, read_safetensors, to_gguf_rows
from sia_theory.models.llama import unpermute_rope_rows


def _write_safetensors(path, tensors):
    header, offset, blobs = {}, 0, []
    for name, (dtype, array) in tensors.items():
        raw = array.tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
        blobs.append(raw)
    text = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def test_read_safetensors_by_hand(tmp_path):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.array([1.5, -2.25], dtype=np.float16)
    _write_safetensors(tmp_path / "m.safetensors", {"a": ("F32", a), "b": ("F16", b)})
    out = read_safetensors(tmp_path / "m.safetensors")
    assert out["a"].dtype == np.float32 and np.array_equal(out["a"], a)
    assert np.array_equal(out["b"], [1.5, -2.25])
    (tmp_path / "bad").write_bytes(b"123")
    with pytest.raises(ValueError, match="not a safetensors file"):
        read_safetensors(tmp_path / "bad")


def test_gguf_permutation_is_inverted_and_interleaves_pairs():
    """Head of D = 4: HF rows (0, 1 | 2, 3) are the half-split pairs (0, 2), (1, 3); GGUF stores
    them interleaved: rows 0, 2, 1, 3."""
    w = np.arange(8.0).reshape(4, 2)
    g = to_gguf_rows(w, n_heads=1)
    assert np.array_equal(g[:, 0], [0.0, 4.0, 2.0, 6.0])
    big = np.random.default_rng(0).standard_normal((24, 5))
    assert np.array_equal(unpermute_rope_rows(to_gguf_rows(big, 3), 3), big)


def test_config_mapping():
    cfg = hf_config({"model_type": "llama", "architectures": ["LlamaForCausalLM"],
                     "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
                     "num_key_value_heads": 2, "intermediate_size": 48, "vocab_size": 50,
                     "rope_theta": 500.0, "rms_norm_eps": 1e-5, "max_position_embeddings": 64})
    assert (cfg.d_model, cfg.n_heads, cfg.n_kv_heads, cfg.head_dim) == (32, 4, 2, 8)
    assert (cfg.ffn, cfg.rope_base, cfg.vocab_size, cfg.context_length) == (48, 500.0, 50, 64)
