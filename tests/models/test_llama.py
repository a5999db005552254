"""sia_theory.models.llama, exercised by its own name on a random checkpoint written here: the
cached decoding path against the obvious one (the whole prefix recomputed for every position),
the GGUF config reader and the RoPE row un-permutation by hand."""


import numpy as np
import pytest

from sia_theory.models.llama import LlamaConfig, LlamaModel, unpermute_rope_rows
from sia_theory.models.loader import load_hf_folder


@pytest.fixture(scope="module")
def model(tmp_path_factory, tiny_folder):
    return load_hf_folder(tiny_folder(tmp_path_factory.mktemp("tiny")), np.float64)[0]


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
