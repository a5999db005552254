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


def test_without_window_or_cap_a_layer_keeps_the_transform_itself(model):
    """No window and no soft cap: each layer's attention gets the transform itself (the
    kernel's table path, as before per-layer defaults); with a window, a LayerScoreMod."""
    import dataclasses

    from sia_theory.attention import LayerScoreMod
    from sia_theory.zoo import Temperature

    law = Temperature(1.5)
    cache = model.new_cache(score_mod=law)
    assert all(cache.layer(i)[1] is law for i in range(2))
    windowed = LlamaModel.__new__(LlamaModel)
    windowed.__dict__.update(model.__dict__)
    windowed.config = dataclasses.replace(model.config, sliding_window=3,
                                          layer_types=("full_attention", "sliding_attention"))
    cache = windowed.new_cache(score_mod=law)
    assert cache.layer(0)[1] is law and cache.layer(1)[1] == LayerScoreMod(law, window=3)
    cache.score_mod = None  # set on every layer; the window stays
    assert cache.layer(0)[1] is None and cache.layer(1)[1] == LayerScoreMod(None, window=3)


def test_per_layer_defaults_and_explicit_overrides(model):
    """Each layer runs its own default (position, score_mod); an explicit position= or
    score_mod= replaces it in every layer, and the cached decoding path follows the layers."""
    from sia_theory.attention import RoPE
    from sia_theory.models.llama import LayerDefault
    from sia_theory.zoo import Temperature

    ids = np.array([3, 7, 1, 19, 4, 4, 0, 11, 2, 5])
    saved = model.layer_defaults
    try:
        model.layer_defaults = (LayerDefault(RoPE(100.0)),
                                LayerDefault(RoPE(7.0), Temperature(1.7)))
        with pytest.raises(ValueError, match="default position differ"):
            _ = model.default_position
        mixed = model.logits(ids)
        uniform = model.logits(ids, position=RoPE(7.0), score_mod=Temperature(1.7))
        cache = model.prefill(ids[:4])
        decoded = np.vstack([cache.last_logits, model.continue_(cache, ids[4:])])
        model.default_position, model.default_score_mod = RoPE(7.0), Temperature(1.7)
        assert model.default_position == RoPE(7.0)
        assert np.array_equal(model.logits(ids), uniform)  # the override reached every layer
    finally:
        model.layer_defaults = saved
    assert np.max(np.abs(decoded - mixed[3:])) < 1e-12
    assert np.max(np.abs(mixed - uniform)) > 1e-3
    assert np.max(np.abs(mixed - model.logits(ids))) > 1e-3
