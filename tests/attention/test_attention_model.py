"""Decoder and InAttention: incremental decoding equals the full forward pass; cache sizes."""

import numpy as np
import pytest

from sia_theory import ALiBi, LogN, NoScale, ScaleInvariant
from sia_theory.attention import (
    Decoder,
    DecoderConfig,
    NoPE,
    NTKRoPE,
    PRoPESI,
    RoPE,
    attention,
    rms_norm,
)

VARIANTS = {
    "standard": dict(inattention=False),
    "inattention_initial": dict(inattention=True, inattention_cache="initial"),
    "inattention_initial_chunked": dict(inattention=True, inattention_cache="initial",
                                        kv_chunk=5),
    "inattention_projected": dict(inattention=True, inattention_cache="projected"),
}


def _config(variant="standard", **kwargs):
    base = dict(vocab_size=40, d_model=32, n_heads=2, n_layers=3, seed=3,
                position=PRoPESI(), transform=ScaleInvariant(tau=10.0))
    base.update(VARIANTS[variant])
    base.update(kwargs)
    return DecoderConfig(**base)


def _tokens(batch=2, length=24, seed=0, vocab=40):
    return np.random.default_rng(seed).integers(0, vocab, (batch, length))


def _incremental(model, tokens, prefill):
    cache = model.new_cache()
    pieces = [model.forward(tokens[:, :prefill], cache)]
    for i in range(prefill, tokens.shape[1]):
        pieces.append(model.decode_step(tokens[:, i], cache)[:, None])
    return np.concatenate(pieces, axis=1), cache


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("extra", [
    dict(), dict(position=RoPE(), transform=LogN(0.4)), dict(position=NoPE(), qk_norm=False),
    dict(position=RoPE(fraction=0.5), transform=ALiBi.standard(2), block_size=5),
    dict(position=NTKRoPE(16, 64), transform=NoScale()),
], ids=["si_prope", "logn_rope", "nope_noqknorm", "alibi_prope_blocks", "ntk"])
def test_token_by_token_decoding_equals_full_forward(variant, extra):
    model = Decoder(_config(variant, **extra))
    tokens = _tokens()
    full = model.forward(tokens)
    assert full.shape == (2, 24, 40) and np.all(np.isfinite(full))
    incremental, cache = _incremental(model, tokens, prefill=7)
    assert cache.length == 24
    np.testing.assert_allclose(incremental, full, rtol=0, atol=1e-10)


def test_inattention_keys_and_values_come_from_initial_embeddings():
    """INA §3: Q = W_Q X from each layer's hidden state, K = W_K Y and V = W_V Y from the
    RMS-normed initial embeddings Y. Rebuilt by hand from the weights and compared."""
    model = Decoder(_config("inattention_initial"))
    c, split = model.config, model._split_heads
    tokens = _tokens(batch=1)
    cache = model.new_cache()
    logits = model.forward(tokens, cache)
    y = rms_norm(model.embedding[tokens])  # (1, T, d)
    np.testing.assert_array_equal(cache.initial(), y)
    positions = np.arange(tokens.shape[1])
    x = y
    for layer in model.layers:
        q = c.position(rms_norm(split(rms_norm(x) @ layer["w_q"])), positions)
        k = c.position(rms_norm(split(y @ layer["w_k"])), positions)  # from Y, not x
        v = split(y @ layer["w_v"])
        mixed = attention(q, k, v, score_mod=c.transform)  # (1, H, T, Dh)
        x = x + mixed.transpose(0, 2, 1, 3).reshape(x.shape) @ layer["w_o"]
        up = np.maximum(rms_norm(x) @ layer["w_up"], 0.0)
        x = x + (up * up) @ layer["w_down"]
    np.testing.assert_allclose(rms_norm(x) @ model.unembedding, logits, rtol=0, atol=1e-12)
    standard = Decoder(_config("standard"))  # same seed, same weights, self-attention
    assert np.max(np.abs(standard.forward(tokens) - logits)) > 0.1


@pytest.mark.parametrize("n_layers", [1, 2, 6])
def test_cache_bytes_grow_linearly_and_inattention_saves_twice_the_layers(n_layers):
    sizes = {}
    for variant in VARIANTS:
        model = Decoder(_config(variant, n_layers=n_layers, d_model=16, n_heads=2))
        cache = model.new_cache()
        per_length = []
        for length in (4, 8, 16):
            model.forward(_tokens(batch=1, length=length if not per_length else length // 2,
                                  seed=length), cache)
            per_length.append(cache.nbytes)
        sizes[variant] = per_length
    d, itemsize = 16, 8
    assert sizes["standard"] == [2 * n_layers * t * d * itemsize for t in (4, 8, 16)]
    assert sizes["inattention_projected"] == sizes["standard"]
    assert sizes["inattention_initial"] == [t * d * itemsize for t in (4, 8, 16)]
    assert sizes["inattention_initial_chunked"] == sizes["inattention_initial"]


def test_float32_model_close_to_float64():
    tokens = _tokens()
    exact = Decoder(_config()).forward(tokens)
    single = Decoder(_config(dtype="float32")).forward(tokens)
    assert single.dtype == np.float32
    assert np.max(np.abs(single - exact)) < 1e-4


def test_same_seed_same_weights_different_seed_different_logits():
    tokens = _tokens()
    a, b = Decoder(_config()).forward(tokens), Decoder(_config()).forward(tokens)
    np.testing.assert_array_equal(a, b)
    assert np.max(np.abs(Decoder(_config(seed=4)).forward(tokens) - a)) > 0.1


@pytest.mark.parametrize("kwargs, match", [
    (dict(d_model=33), "d_model must be a multiple"),
    (dict(d_model=24, n_heads=4), "multiple of 4"),
    (dict(position="rope"), "position must be"),
    (dict(transform=lambda s: s), "transform"),
    (dict(inattention_cache="y"), "inattention_cache"),
    (dict(dtype="float16"), "dtype"),
    (dict(n_layers=0), "n_layers"),
    (dict(block_size=0), "block_size"),
    (dict(kv_chunk=0), "kv_chunk"),
    (dict(inattention=1), "inattention must be True or False"),
])
def test_bad_config_raises_naming_the_field(kwargs, match):
    with pytest.raises(ValueError, match=match):
        _config(**kwargs)


def test_bad_tokens_and_cache_raise():
    model = Decoder(_config())
    with pytest.raises(ValueError, match="tokens must lie"):
        model.forward(np.array([[0, 40]]))
    with pytest.raises(ValueError, match="tokens must be a non-empty 2-D integer"):
        model.forward(np.array([0.5, 1.0]))
    with pytest.raises(ValueError, match="cache must be a DecodingCache of mode"):
        model.forward(_tokens(), Decoder(_config("inattention_initial")).new_cache())
    for variant in ("standard", "inattention_initial"):
        model = Decoder(_config(variant))
        cache = model.new_cache()
        model.forward(_tokens(batch=2), cache)
        with pytest.raises(ValueError, match="batch size 2, got 3"):
            model.decode_step(np.array([1, 2, 3]), cache)


@pytest.mark.parametrize("variant", ["inattention_initial", "inattention_initial_chunked",
                                     "inattention_projected"])
def test_inattention_cache_built_from_embeddings_decodes_like_full_forward(variant):
    model = Decoder(_config(variant))
    tokens = _tokens(length=20)
    full = model.forward(tokens)
    cache = model.inattention_cache(tokens[:, :12], capacity=20)
    steps = [model.decode_step(tokens[:, i], cache) for i in range(12, 20)]
    np.testing.assert_allclose(np.stack(steps, axis=1), full[:, 12:], rtol=0, atol=1e-10)
    with pytest.raises(ValueError, match="inattention=True"):
        Decoder(_config()).inattention_cache(tokens)


def test_first_layer_logits_are_the_transform_of_raw_scores():
    """SI §3: L = a_t S + m_t with a_t^2 = 1 + 2 log(t/tau + 1), m_t = -2 log(t/tau + 1)."""
    model = Decoder(_config(transform=ScaleInvariant(tau=4.0)))
    tokens = _tokens(length=30)
    raw = model.attention_logits(tokens, layer=0, last=5, transformed=False)
    logits = model.attention_logits(tokens, layer=0, last=5)
    assert logits.shape == (2, 2, 5, 30)
    t = (np.arange(25, 30)[:, None] - np.arange(30)[None, :]).astype(float)  # (5, 30)
    causal = t >= 0
    log_term = np.log(np.where(causal, t, 0) / 4.0 + 1)
    expected = np.sqrt(1 + 2 * log_term) * raw - 2 * log_term
    np.testing.assert_allclose(logits[..., causal], expected[..., causal], rtol=0, atol=1e-12)
    assert np.all(logits[..., ~causal] == -np.inf) and np.all(raw[..., ~causal] == -np.inf)
    deeper = model.attention_logits(tokens, layer=2, last=5)
    assert np.all(np.isfinite(deeper[..., causal]))
    assert np.abs(deeper[..., causal] - logits[..., causal]).max() > 0.01


def test_alibi_slope_count_must_match_heads():
    with pytest.raises(ValueError,
                       match=r"^transform: ALiBi.*supports 3 heads but the model has n_heads=4"):
        DecoderConfig(d_model=32, n_heads=4, transform=ALiBi((0.1, 0.2, 0.3)))


def test_failed_forward_leaves_the_cache_unchanged():
    """A call that fails half-way through the layers must not leave stale keys behind."""
    model = Decoder(DecoderConfig(vocab_size=16, d_model=16, n_heads=2, n_layers=2))
    tokens = np.arange(5)[None] % 16
    cache = model.new_cache()
    model.forward(tokens[:, :3], cache)
    before = [cache.keys(i).copy() for i in range(2)]
    original = model.layers[1]["w_o"]
    model.layers[1]["w_o"] = original[:3]  # wrong shape: layer 1 raises after layer 0 appended
    with pytest.raises(ValueError):
        model.forward(tokens[:, 3:], cache)
    model.layers[1]["w_o"] = original
    assert cache.length == 3
    for i in range(2):
        np.testing.assert_array_equal(cache.keys(i), before[i])
    full = model.forward(tokens)
    np.testing.assert_allclose(model.forward(tokens[:, 3:], cache), full[:, 3:], atol=1e-10)
