"""sia_theory.models.gguf_llama, exercised by its own name: the tensor shapes of a LLaMA GGUF
file, and a file whose shapes or settings differ refused with the reason."""

import pytest

from sia_theory.models.gguf_llama import check_llama_gguf, llama_tensor_shapes
from sia_theory.models.llama import LlamaConfig

CONFIG = LlamaConfig(n_layers=2, d_model=16, n_heads=4, n_kv_heads=2, ffn=24, rope_base=1e4,
                     rms_eps=1e-5, context_length=64, vocab_size=10)
META = {"general.architecture": "llama", "llama.block_count": 2, "llama.embedding_length": 16,
        "llama.attention.head_count": 4, "llama.attention.head_count_kv": 2,
        "llama.feed_forward_length": 24, "llama.rope.freq_base": 1e4,
        "llama.attention.layer_norm_rms_epsilon": 1e-5, "llama.context_length": 64,
        "tokenizer.ggml.tokens": [str(i) for i in range(10)]}


def test_shapes_by_hand():
    """head_dim 4: q (16, 16), k and v (2·4, 16), MLP (24, 16) and (16, 24); 2 + 9 per layer."""
    shapes = llama_tensor_shapes(CONFIG)
    assert len(shapes) == 2 + 9 * 2
    assert shapes["blk.1.attn_k.weight"] == (8, 16)
    assert shapes["blk.0.ffn_down.weight"] == (16, 24)
    assert shapes["token_embd.weight"] == (10, 16)


def test_check_accepts_matching_file_and_refuses_a_wrong_shape():
    shapes = llama_tensor_shapes(CONFIG)
    assert check_llama_gguf("m.gguf", META, shapes) == CONFIG
    bad = dict(shapes, **{"blk.0.attn_q.weight": (8, 16)})
    with pytest.raises(ValueError, match="attn_q"):
        check_llama_gguf("m.gguf", META, bad)
