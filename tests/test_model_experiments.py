"""Library pieces of the real-model experiments (issue 11): YaRN's frequency interpolation
against the paper's construction, the corpus (deterministic, offline), passkey prompts and their
scoring, and the score statistics against independent numpy/scipy computations."""

import math
import socket

import numpy as np
import pytest

from sia_theory.attention import RoPE, YaRNRoPE, rope, yarn_frequencies
from sia_theory.models import corpus
from sia_theory.zoo import YaRNTemperature


def _yarn_paper(head_dim, base, train, target, alpha, beta):
    """YaRN §3.2 written out frequency by frequency (Peng et al. 2023): wavelength
    λ_d = 2π b^{2d/|D|}, r = L/λ_d, γ(r) piecewise, h(θ_d) = (1 − γ)θ_d/s + γθ_d."""
    s = target / train
    out = []
    for d in range(head_dim // 2):
        wavelength = 2 * math.pi * base ** (2 * d / head_dim)
        theta = 2 * math.pi / wavelength
        r = train / wavelength
        if r < alpha:
            gamma = 0.0
        elif r > beta:
            gamma = 1.0
        else:
            gamma = (r - alpha) / (beta - alpha)
        out.append((1 - gamma) * theta / s + gamma * theta)
    return np.array(out)


@pytest.mark.parametrize("head_dim, base, train, target", [(64, 1e5, 8192, 16384),
                                                           (64, 1e4, 4096, 32768),
                                                           (128, 5e5, 8192, 12288)])
def test_yarn_frequencies_match_the_papers_per_frequency_construction(head_dim, base, train,
                                                                      target):
    got = yarn_frequencies(head_dim, base, train, target, 1.0, 32.0)
    want = _yarn_paper(head_dim, base, train, target, 1.0, 32.0)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)
    # the three regimes are all present for these sizes: kept, interpolated, blended
    theta = base ** (-2 * np.arange(head_dim // 2) / head_dim)
    s = target / train
    assert np.isclose(got[0], theta[0]) and np.isclose(got[-1], theta[-1] / s)
    blended = (got < theta * (1 - 1e-12)) & (got > theta / s * (1 + 1e-12))
    assert blended.any()


def test_yarn_rope_rotates_pairs_k_and_k_plus_half_by_the_interpolated_angles():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 7, 64))
    positions = np.array([0, 1, 5, 100, 8191, 12000, 16383])
    h = _yarn_paper(64, 1e5, 8192, 16384, 1.0, 32.0)
    z = (x[..., :32] + 1j * x[..., 32:]) * np.exp(1j * positions[:, None] * h)
    got = YaRNRoPE(8192, 16384, base=1e5)(x, positions)
    np.testing.assert_allclose(got, np.concatenate([z.real, z.imag], -1), rtol=0, atol=1e-10)


def test_yarn_at_scale_one_is_plain_rope():
    x = np.random.default_rng(4).standard_normal((3, 9, 64)).astype(np.float32)
    positions = np.arange(9) * 997
    for target in (8192, 4096):  # s = 1 and no extension (s clipped to 1)
        yarn = YaRNRoPE(8192, target, base=1e5)
        np.testing.assert_array_equal(yarn(x, positions), RoPE(base=1e5)(x, positions))
        np.testing.assert_array_equal(yarn(x, positions), rope(x, positions, 1e5))
        assert yarn.attention_factor() == YaRNTemperature(1.0)


def test_yarn_attention_factor_is_the_zoo_temperature_of_the_same_scale():
    yarn = YaRNRoPE(8192, 16384, base=1e5)
    assert yarn.scale == 2.0
    assert yarn.attention_factor() == YaRNTemperature(2.0)
    # (0.1 ln 2 + 1)^2 on the logit: the factor multiplies both q and k
    assert yarn.attention_factor().multiplier() == pytest.approx((0.1 * math.log(2) + 1) ** 2)


@pytest.mark.parametrize("kwargs, match", [
    (dict(train_length=0, target_length=8), "train_length"),
    (dict(train_length=8, target_length=8, alpha=2.0, beta=1.0), "beta"),
    (dict(train_length=8, target_length=8, base=1.0), "base"),
])
def test_yarn_rejects_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        YaRNRoPE(**kwargs)


# --- corpus ------------------------------------------------------------------------------------

def _bytes_encode(text):
    """An independent stand-in tokenizer: UTF-8 bytes."""
    return list(text.encode("utf-8"))


@pytest.fixture
def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the corpus must not open network connections")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def test_corpus_is_deterministic_offline_and_from_the_standard_library(no_network):
    from pydoc_data.topics import topics

    first = corpus.long_documents(_bytes_encode, 20_000, 2, 2)
    again = corpus.long_documents(_bytes_encode, 20_000, 2, 2)
    assert [d.name for d in first] == [d.name for d in again]
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a.ids, b.ids)
        assert a.ids.shape == (20_000,)
    prose, code = first[:2], first[2:]
    keys = sorted(topics)
    assert prose[0].parts[0] == keys[0]  # consecutive runs of the sorted topics
    assert keys.index(prose[1].parts[0]) == keys.index(prose[0].parts[-1]) + 1
    text = "\n\n".join(topics[k] for k in prose[0].parts).encode()
    assert bytes(prose[0].ids.astype(np.uint8)) == text[:20_000]
    module = code[0].parts[0]
    assert module == corpus.CODE_MODULES[0]
    import importlib.util
    from pathlib import Path
    source = Path(importlib.util.find_spec(module).origin).read_bytes()
    assert bytes(code[0].ids.astype(np.uint8)) == source[:20_000]


def test_corpus_says_when_python_has_too_little_text():
    with pytest.raises(ValueError, match="count"):
        corpus.prose_documents(_bytes_encode, 10**7, 1)
    with pytest.raises(ValueError, match="count"):
        corpus.code_documents(_bytes_encode, 10**7, 1)
    with pytest.raises(ValueError, match="n_prose"):
        corpus.long_documents(_bytes_encode, 100, 0, 0)


def test_passkey_prompt_hides_the_key_at_the_requested_depth():
    key = corpus.passkey_key(0, 3)
    assert key == corpus.passkey_key(0, 3) and 10_000 <= key <= 99_999
    keys = {corpus.passkey_key(0, t) for t in range(20)}
    assert len(keys) > 15  # different trials, different keys
    for depth in (0.0, 0.25, 0.5, 1.0):
        p = corpus.passkey_prompt(_bytes_encode, key, depth, 2000)
        text = bytes(p.ids.astype(np.uint8)).decode()
        assert len(p.ids) == 2000
        assert text.startswith(corpus.PASSKEY_INTRO) and text.endswith(corpus.QUESTION)
        needle = corpus.NEEDLE.format(key=key)
        assert text[p.needle_start:p.needle_start + len(needle)] == needle
        fill = 2000 - len(corpus.PASSKEY_INTRO) - len(needle) - len(corpus.QUESTION)
        assert p.needle_start - len(corpus.PASSKEY_INTRO) == round(depth * fill)
        assert bytes(p.answer.astype(np.uint8)).decode() == f" {key}"
    # the prefix before the needle is the same for every key: a KV cache of it can be shared
    a = corpus.passkey_prompt(_bytes_encode, 12345, 0.5, 2000)
    b = corpus.passkey_prompt(_bytes_encode, 67890, 0.5, 2000)
    np.testing.assert_array_equal(a.ids[:a.prefix], b.ids[:b.prefix])
    with pytest.raises(ValueError, match="n_tokens"):
        corpus.passkey_prompt(_bytes_encode, key, 0.5, 100)


def test_score_passkey_is_greedy_decoding_by_teacher_forcing():
    rng = np.random.default_rng(0)
    answer = np.array([5, 1, 7, 2, 2, 9])
    logits = rng.standard_normal((6, 12))
    logits[np.arange(6), answer] += 10.0  # every position prefers the answer token
    result = corpus.score_passkey(logits, answer)
    want = sum(logits[j, answer[j]] - np.log(np.exp(logits[j]).sum()) for j in range(6))
    assert result["correct"] and result["digits_correct"] == 6
    assert result["log_likelihood"] == pytest.approx(want, rel=1e-12)
    logits[3, answer[3]] -= 20.0  # the fourth digit is wrong: greedy decoding fails there
    result = corpus.score_passkey(logits, answer)
    assert not result["correct"] and result["digits_correct"] == 3
