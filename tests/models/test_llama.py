"""sia_theory.models.llama, exercised by its own name on a random checkpoint written here: the
cached decoding path against the obvious one (the whole prefix recomputed for every position),
the GGUF config reader and the RoPE row un-permutation by hand."""

import json

import numpy as np
import pytest

from sia_theory.models.llama import LlamaConfig, LlamaModel, unpermute_rope_rows
from sia_theory.models.loader import load_hf_folder

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


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return load_hf_folder(_tiny_folder(tmp_path_factory.mktemp("tiny")), np.float64)[0]


def test_cached_logits_equal_recomputed_prefixes(model):
    assert isinstance(model, LlamaModel)
    ids = np.array([3, 7, 1, 19, 4, 4, 0, 11])
    full = model.logits(ids)
    for t in range(1, ids.size + 1):
        assert model.logits(ids[:t])[-1] == pytest.approx(full[t - 1], abs=1e-12)
    cache = model.prefill(ids[:5])
    assert cache.last_logits == pytest.approx(full[4], abs=1e-12)
    assert model.continue_(cache, ids[5:]) == pytest.approx(full[5:], abs=1e-12)


def test_unpermute_by_hand():
    """GGUF rows of one head of D = 4 are interleaved (0, 2, 1, 3): un-permuted to half-split."""
    w = np.array([[0.0], [2.0], [1.0], [3.0]])
    assert unpermute_rope_rows(w, 1)[:, 0].tolist() == [0.0, 1.0, 2.0, 3.0]


def test_config_from_metadata():
    meta = {"general.architecture": "llama", "llama.block_count": 2,
            "llama.embedding_length": 16, "llama.attention.head_count": 4,
            "llama.feed_forward_length": 24, "llama.attention.layer_norm_rms_epsilon": 1e-5,
            "llama.context_length": 64, "tokenizer.ggml.tokens": ["a", "b"]}
    cfg = LlamaConfig.from_metadata(meta)
    assert (cfg.n_kv_heads, cfg.rope_base, cfg.head_dim, cfg.vocab_size) == (4, 10000.0, 4, 2)
    with pytest.raises(ValueError, match="architecture"):
        LlamaConfig.from_metadata(dict(meta, **{"general.architecture": "gpt2"}))


def test_bad_ids_named(model):
    with pytest.raises(ValueError, match="ids"):
        model.logits(np.array([20]))
