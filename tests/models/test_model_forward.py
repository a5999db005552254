"""SmolLM2-135M through the reference: correctness you can see (Paris, perplexity on the Python
language reference), the RoPE pairing of the GGUF layout, float32 against float64, KV-cache
decoding against the full forward pass, the readouts (losses, scores, forks) and bad input.

Real weights; the texts are loaded from the standard library at test time, never copied."""

import pydoc_data.topics

import numpy as np
import pytest

from sia_theory import ScaleInvariant, Temperature
from sia_theory.attention import NTKRoPE, RoPE, rope
from sia_theory.models import load_contents, load_pretrained

PROMPT = "The capital of France is"


def prose(topic="naming"):
    """Running prose of one language-reference topic: paragraphs that are neither headings,
    grammar, code nor lists, with their line breaks unwrapped."""
    paragraphs = pydoc_data.topics.topics[topic].split("\n\n")
    return "\n\n".join(" ".join(p.split()) for p in paragraphs
                       if p.strip() and not p.startswith((" ", "*", "="))
                       and "::=" not in p and "\n*" not in p and "\n=" not in p)


@pytest.fixture(scope="module")
def loaded():
    return load_pretrained("smollm2-135m")


@pytest.fixture(scope="module")
def model(loaded):
    return loaded[0]


@pytest.fixture(scope="module")
def tokenizer(loaded):
    return loaded[1]


@pytest.fixture(scope="module")
def model64():
    return load_pretrained("smollm2-135m", dtype=np.float64)[0]


@pytest.fixture(scope="module")
def text_ids(tokenizer):
    return tokenizer.encode(prose())[:384]


def test_the_capital_of_france_is_paris(model, tokenizer):
    new = model.generate(tokenizer.encode(PROMPT), 3)
    assert tokenizer.decode(new).startswith(" Paris")


def test_perplexity_on_the_language_reference_is_that_of_a_small_model(model, text_ids):
    """A 135M model on technical English: perplexity of order 10 (measured 12.6 on 1024
    tokens of "naming"); unigram statistics alone give hundreds, a broken model thousands.
    Shuffling the same tokens (same unigram distribution) must cost a lot."""
    ppl = np.exp(model.token_losses(text_ids).mean())
    assert 5.0 < ppl < 30.0, ppl
    shuffled = np.random.default_rng(0).permutation(text_ids)
    assert np.exp(model.token_losses(shuffled).mean()) > 10 * ppl


def _interleaved_rope(x, positions, base=1e5):
    """GGML's "normal" RoPE: pairs (2i, 2i+1) rotated by position * base^(-2i/D)."""
    dim = x.shape[-1]
    theta = base ** (-2.0 * np.arange(dim // 2) / dim)
    angle = np.asarray(positions, float)[:, None] * theta  # (T, D/2)
    cos, sin = np.cos(angle), np.sin(angle)
    even, odd = x[..., 0::2], x[..., 1::2]
    out = np.empty(x.shape)
    out[..., 0::2] = even * cos - odd * sin
    out[..., 1::2] = even * sin + odd * cos
    return out.astype(x.dtype)


def test_layer0_scores_equal_raw_gguf_weights_with_interleaved_rope(model64, text_ids):
    """The convention: GGUF rows + interleaved pairs == the model's un-permuted rows +
    half-split RoPE. Computed here from the raw file tensors, independently of the model."""
    tensors = load_contents("smollm2-135m")[0].tensors
    ids = np.array(text_ids[:48])
    x = tensors["token_embd.weight"][ids].astype(np.float64)  # (T, d)
    h = x / np.sqrt(np.mean(x**2, axis=1, keepdims=True) + 1e-5) * tensors[
        "blk.0.attn_norm.weight"]
    q = (h @ tensors["blk.0.attn_q.weight"].T).reshape(48, 9, 64).transpose(1, 0, 2)
    k = (h @ tensors["blk.0.attn_k.weight"].T).reshape(48, 3, 64).transpose(1, 0, 2)
    q, k = _interleaved_rope(q, np.arange(48)), _interleaved_rope(k, np.arange(48))
    expected = q @ np.repeat(k, 3, axis=0).swapaxes(1, 2) / 8.0  # (9, T, T); head h -> h // 3
    rows = np.array([0, 20, 47])
    got = model64.attention_scores(ids, [0], rows)[0]  # (9, 3, T)
    visible = np.arange(48)[None, :] <= rows[:, None]
    assert np.all(got[:, ~visible] == -np.inf)
    np.testing.assert_allclose(got[:, visible], expected[:, rows][:, visible], rtol=1e-5,
                               atol=1e-4)  # the cache holds float32 weights


_PERM = np.array([j * 32 + i for i in range(32) for j in range(2)])  # HF row -> GGUF row


def _raw_rows_half_split(x, positions):
    """The other wrong pairing: the GGUF (permuted) row order with half-split RoPE."""
    return rope(np.ascontiguousarray(x[..., _PERM]), positions, 1e5)


@pytest.mark.parametrize("wrong", [_interleaved_rope, _raw_rows_half_split])
def test_the_wrong_rope_pairing_destroys_the_model(model, text_ids, wrong):
    """Either wrong pairing multiplies the perplexity by about 9 (measured: 16 -> 150 on 192
    tokens). It does not lose " Paris" after the 5-token prompt, which needs little position
    information, so perplexity is the test."""
    right = np.exp(model.token_losses(text_ids[:192]).mean())
    assert np.exp(model.token_losses(text_ids[:192], position=wrong).mean()) > 4 * right


def test_float32_and_float64_agree(model, model64, text_ids):
    ids = text_ids[:96]
    single, double = model.logits(ids), model64.logits(ids)
    assert single.dtype == np.float32 and double.dtype == np.float64
    assert np.abs(single - double).max() < 1e-3 * np.abs(double).max()
    assert np.mean(single.argmax(1) == double.argmax(1)) > 0.97


@pytest.mark.parametrize("dtype, tolerance", [(np.float32, 1e-4), (np.float64, 1e-10)])
def test_kv_cache_decoding_equals_the_full_forward(model, model64, text_ids, dtype, tolerance):
    m = model if dtype == np.float32 else model64
    ids = text_ids[:48]
    full = m.logits(ids)  # (48, vocab)
    cache = m.prefill(ids[:20])
    steps = [cache.last_logits] + [m.continue_(cache, [t])[0] for t in ids[20:47]]
    assert np.abs(np.array(steps) - full[19:47]).max() < tolerance
    assert cache.length == 47


def test_forks_and_truncation_continue_a_shared_prefix(model64, text_ids):
    prefix, a, b = text_ids[:40], text_ids[40:50], text_ids[60:66]
    cache = model64.prefill(prefix)
    got_a = model64.continue_(cache.fork(), a)
    got_b = model64.continue_(cache.fork(), b)
    assert cache.length == 40
    np.testing.assert_allclose(got_a, model64.logits(prefix + a)[40:], atol=1e-10)
    np.testing.assert_allclose(got_b, model64.logits(prefix + b)[40:], atol=1e-10)
    model64.continue_(cache, a)
    cache.truncate(40)
    np.testing.assert_allclose(model64.continue_(cache, b), got_b, atol=1e-10)


def test_generate_from_a_cache_equals_generate(model, tokenizer):
    ids = tokenizer.encode(PROMPT)
    cache = model.prefill(ids[:3])
    assert model.generate(ids[3:], 4, cache=cache) == model.generate(ids, 4)


def test_token_losses_are_the_log_softmax_of_the_logits(model64, text_ids):
    ids = text_ids[:64]
    logits = model64.logits(ids)  # (64, vocab)
    top = logits.max(1, keepdims=True)
    log_p = logits - top - np.log(np.exp(logits - top).sum(1, keepdims=True))
    expected = -log_p[np.arange(63), ids[1:]]
    np.testing.assert_allclose(model64.token_losses(ids), expected, atol=1e-10)


def test_score_mods_and_position_encodings_pass_through(model64, text_ids):
    ids = text_ids[:40]
    base = model64.logits(ids)
    # RoPE as trained, written explicitly, and NTK scaling at the training length
    np.testing.assert_allclose(model64.logits(ids, position=RoPE(1e5)), base, atol=1e-12)
    np.testing.assert_allclose(model64.logits(ids, position=NTKRoPE(8192, 4096, base=1e5)),
                               base, atol=1e-12)
    # a zoo transform and the same multiplier as a FlexAttention callable act alike
    zoo = model64.logits(ids, score_mod=Temperature(0.8))
    flex = model64.logits(ids, score_mod=lambda s, b, h, q, k: s * 0.8)  # L = c·S
    np.testing.assert_allclose(zoo, flex, atol=1e-9)
    assert np.abs(zoo - base).max() > 0.1
    assert np.abs(model64.logits(ids, score_mod=ScaleInvariant(10.0)) - base).max() > 0.1


def test_queries_keys_are_what_attention_scores_use(model64, text_ids):
    ids = text_ids[:32]
    pairs = model64.queries_keys(ids, [2, 5])
    q, k = pairs[5]
    assert q.shape == (9, 32, 64) and k.shape == (3, 32, 64)
    scores = model64.attention_scores(ids, [5], [31])[0, :, 0]  # (9, 32)
    np.testing.assert_allclose(scores[7], q[7, 31] @ k[2].T / 8.0, rtol=1e-12)


@pytest.mark.parametrize("call, match", [
    (lambda m: m.logits([1, 49152]), r"ids must lie in \[0, vocab_size - 1 = 49151\], got 49152"),
    (lambda m: m.logits([-1, 5]), "ids must lie in .* got -1"),
    (lambda m: m.logits([]), "non-empty 1-D sequence of integer token ids"),
    (lambda m: m.logits([1.5, 2.0]), "integer token ids"),
    (lambda m: m.logits([[1, 2]]), "1-D"),
    (lambda m: m.token_losses([5]), "at least 2 tokens"),
    (lambda m: m.generate([5], 0), "max_new_tokens"),
    (lambda m: m.generate([5], 2, score_mod=Temperature(0.5), cache=m.prefill([5])),
     "come from the cache"),
    (lambda m: m.attention_scores([5, 6], [0], [2]), "query_positions"),
    (lambda m: m.queries_keys([5, 6], [30]), "layers"),
    (lambda m: m.logits([5, 6], position=lambda x, p: x[..., :2]), "position must return"),
    (lambda m: m.head_losses(np.zeros((2, 5), np.float32), [1, 2]), "hidden must have shape"),
])
def test_bad_input_is_refused(model, call, match):
    with pytest.raises(ValueError, match=match):
        call(model)


def test_text_longer_than_memory_allows_is_refused_before_any_work(model):
    cache = model.prefill([5, 6, 7])
    model.max_bytes = 64 * 2**20
    try:
        with pytest.raises(ValueError, match=r"ids=.*tokens.*more than the limit"):
            model.logits(np.zeros(20_000, int))
        with pytest.raises(ValueError, match="more than the limit"):
            model.continue_(cache, np.zeros(20_000, int))
    finally:
        model.max_bytes = None
    assert cache.length == 3  # untouched
