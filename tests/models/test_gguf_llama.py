"""sia_theory.models.gguf_llama, exercised by its own name: the tensor shapes of a llama, qwen2
or qwen3 GGUF file, and a file whose architecture, shapes or settings differ refused with the
reason (the other architectures: ``test_gguf_architectures.py``,
``test_gguf_more_architectures.py``)."""

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


def _meta(arch, **keys):
    """META under another architecture's keys (``<arch>.*``), with ``keys`` added."""
    meta = {(k.replace("llama.", f"{arch}.", 1)): v for k, v in META.items()}
    return dict(meta, **{"general.architecture": arch}, **{f"{arch}.{k}": v
                                                            for k, v in keys.items()})


def test_qwen2_and_qwen3_shapes_add_their_biases_and_norm_gains():
    """Qwen2: 9 + 3 biases per layer; Qwen3 with key_length 8 (≠ 16 / 4): q is (4·8, 16) and
    the norm gains (8,)."""
    config = check_llama_gguf("q2.gguf", _meta("qwen2"), llama_tensor_shapes(CONFIG, "qwen2"))
    assert config == CONFIG and len(llama_tensor_shapes(CONFIG, "qwen2")) == 2 + 12 * 2
    assert llama_tensor_shapes(CONFIG, "qwen2")["blk.0.attn_k.bias"] == (8,)
    meta = _meta("qwen3", **{"attention.key_length": 8, "attention.value_length": 8})
    config3 = LlamaConfig(**{**CONFIG.__dict__, "head_dim": 8})
    shapes = llama_tensor_shapes(config3, "qwen3")
    assert shapes["blk.1.attn_q.weight"] == (32, 16) and shapes["blk.1.attn_q_norm.weight"] == (8,)
    assert check_llama_gguf("q3.gguf", meta, shapes) == config3
    with pytest.raises(ValueError, match=r"2-block qwen2 model: missing \['blk.0.attn_k.bias', "
                       r"'blk.0.attn_q.bias'"):
        check_llama_gguf("q2.gguf", _meta("qwen2"), llama_tensor_shapes(CONFIG))


def test_rope_freqs_are_a_llama_tensor_of_half_the_head_dimension():
    shapes = llama_tensor_shapes(CONFIG)
    assert check_llama_gguf("m.gguf", META, dict(shapes, **{"rope_freqs.weight": (2,)})) == CONFIG
    with pytest.raises(ValueError, match=r"'rope_freqs.weight' of shape \(4,\), expected \(2,\)"):
        check_llama_gguf("m.gguf", META, dict(shapes, **{"rope_freqs.weight": (4,)}))
    with pytest.raises(ValueError, match=r"unexpected \['rope_freqs.weight'\]"):
        check_llama_gguf("q2.gguf", _meta("qwen2"), dict(llama_tensor_shapes(CONFIG, "qwen2"),
                                                          **{"rope_freqs.weight": (2,)}))


@pytest.mark.parametrize("arch, keys, match", [
    ("qwen2", {"general.architecture": "phi2"}, "has architecture 'phi2', which the model "
     "does not implement .it lacks Phi-2's LayerNorm.*; supported: 'llama', 'qwen2', 'qwen3', "
     "'phi3', 'gemma2', 'gemma3', 'olmo2', 'granite'$"),
    ("llama", {"general.architecture": "bert"}, "has architecture 'bert', which the model does "
     "not implement; supported: 'llama', 'qwen2', 'qwen3', 'phi3', .*'granite'$"),
    ("llama", {"llama.rope.scaling.type": "yarn"}, "sets llama.rope.scaling.type='yarn'"),
    ("qwen3", {"qwen3.attention.value_length": 8}, "sets qwen3.attention.value_length=8"),
    ("qwen2", {"qwen2.attention.head_count_kv": 3}, "key-value heads must divide heads"),
])
def test_settings_the_model_lacks_are_refused(arch, keys, match):
    meta = dict(_meta(arch), **keys)
    with pytest.raises(ValueError, match=match):
        check_llama_gguf("m.gguf", meta, llama_tensor_shapes(CONFIG, arch))
