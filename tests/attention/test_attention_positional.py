"""RoPE, p-RoPE (incl. the SI preset), NTK scaling, QK-norm and ALiBi slopes."""

import math

import numpy as np
import pytest

from sia_theory import ALiBi
from sia_theory.attention import (
    NoPE,
    NTKRoPE,
    PRoPESI,
    RoPE,
    attention,
    ntk_base,
    p_rope_si,
    p_rope_si_frequencies,
    qk_norm,
    rms_norm,
    rope,
    rope_frequencies,
)


def _vectors(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def test_rope_matches_complex_rotation():
    """RoFormer eq. 34 as complex multiplication: (x_k + i x_{k+D/2}) e^{i p θ_k}."""
    x = _vectors((2, 5, 8))
    positions = np.array([0, 1, 7, 30, 1000])
    theta = 10000.0 ** (-2 * np.arange(4) / 8)
    z = (x[..., :4] + 1j * x[..., 4:]) * np.exp(1j * positions[:, None] * theta)
    np.testing.assert_allclose(rope(x, positions), np.concatenate([z.real, z.imag], -1),
                               rtol=0, atol=1e-12)


@pytest.mark.parametrize("encode", [RoPE(), RoPE(fraction=0.5), RoPE(base=500.0), PRoPESI(),
                                    NTKRoPE(train_length=64, inference_length=256)],
                         ids=repr)
def test_rotation_preserves_norms_and_scores_depend_only_on_distance(encode):
    q, k = _vectors((6, 16), 1), _vectors((6, 16), 2)
    positions = np.arange(6)
    np.testing.assert_allclose(np.linalg.norm(encode(q, positions), axis=-1),
                               np.linalg.norm(q, axis=-1), rtol=1e-13)
    scores = encode(q, positions) @ encode(k, positions).T
    shifted = encode(q, positions + 977) @ encode(k, positions + 977).T
    np.testing.assert_allclose(shifted, scores, rtol=0, atol=1e-10)


@pytest.mark.parametrize("fraction, n_rotating", [(0.25, 2), (0.5, 4), (0.75, 6), (1.0, 8)])
def test_p_rope_leaves_low_frequency_dimensions_untouched(fraction, n_rotating):
    x = _vectors((9, 16))
    out = rope(x, np.arange(9) + 3, fraction=fraction)
    untouched = np.r_[n_rotating:8, 8 + n_rotating:16]
    np.testing.assert_array_equal(out[:, untouched], x[:, untouched])
    rotated = np.r_[0:n_rotating, 8:8 + n_rotating]
    assert np.all(np.abs(out[:, rotated] - x[:, rotated]).max(axis=0) > 1e-3)
    np.testing.assert_allclose(rope_frequencies(16, fraction=fraction)[:n_rotating],
                               10000.0 ** (-2 * np.arange(n_rotating) / 16))


def test_p_rope_si_preset_spans_one_to_one_over_1024_on_half_the_pairs():
    theta = p_rope_si_frequencies(128)
    assert theta.shape == (64,)
    assert theta[0] == 1.0 and math.isclose(theta[31], 1 / 1024, rel_tol=1e-14)
    np.testing.assert_allclose(theta[1:32] / theta[:31], 1024 ** (-1 / 31), rtol=1e-13)
    assert np.all(theta[32:] == 0.0)
    x = _vectors((4, 128))
    out = p_rope_si(x, np.arange(4) + 10)
    np.testing.assert_array_equal(out[:, np.r_[32:64, 96:128]], x[:, np.r_[32:64, 96:128]])


def test_ntk_base_matches_formula_and_only_applies_beyond_training_length():
    assert ntk_base(10000.0, 128, 4096, 65536) == pytest.approx(10000 * 16 ** (128 / 126),
                                                                 rel=1e-14)
    assert ntk_base(10000.0, 128, 4096, 4096) == 10000.0
    x = _vectors((3, 8))
    np.testing.assert_allclose(NTKRoPE(16, 64)(x, np.arange(3)),
                               rope(x, np.arange(3), base=10000 * 4 ** (8 / 6)), rtol=1e-14)


def test_qk_norm_gives_unit_rms_per_head():
    raw_q, raw_k = _vectors((2, 3, 5, 8)) * 7, _vectors((2, 3, 5, 8), 1) * 0.01
    q, k = qk_norm(raw_q, raw_k)
    eps = np.finfo(np.float64).eps  # torch's rms_norm default: rms = sqrt(ms / (ms + eps))
    for x, raw in ((q, raw_q), (k, raw_k)):
        mean_square = np.mean(raw**2, axis=-1)
        np.testing.assert_allclose(np.sqrt(np.mean(x**2, axis=-1)),
                                   np.sqrt(mean_square / (mean_square + eps)), rtol=1e-14)
    assert np.array_equal(NoPE()(q, np.arange(5)), q)


def test_alibi_standard_slopes_and_bias_in_attention():
    transform = ALiBi.standard(8)
    np.testing.assert_allclose(transform.slopes, [2.0 ** (-(h + 1)) for h in range(8)],
                               rtol=1e-15)
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((1, 8, 6, 4)) for _ in range(3))
    out = attention(q, k, v, score_mod=transform, block_size=2)
    i, j = np.arange(6)[:, None], np.arange(6)[None, :]
    for h in range(8):
        logits = q[0, h] @ k[0, h].T / 2 - 2.0 ** (-8 * (h + 1) / 8) * (i - j)
        logits = np.where(j <= i, logits, -np.inf)
        w = np.exp(logits - logits.max(1, keepdims=True))
        np.testing.assert_allclose(out[0, h], (w / w.sum(1, keepdims=True)) @ v[0, h],
                                   rtol=0, atol=1e-13)


def test_float32_rotation_keeps_dtype():
    x = _vectors((3, 8)).astype(np.float32)
    assert rope(x, np.arange(3)).dtype == np.float32
    assert rms_norm(x).dtype == np.float32


@pytest.mark.parametrize("call, match", [
    (lambda: rope(_vectors((3, 7)), np.arange(3)), "x must have a head dimension"),
    (lambda: p_rope_si(_vectors((3, 6)), np.arange(3)), "multiple of 4"),
    (lambda: rope(_vectors((3, 8)), np.arange(3), fraction=0.0), "fraction"),
    (lambda: rope(_vectors((3, 8)), np.arange(3), fraction=1.5), "fraction"),
    (lambda: rope(_vectors((3, 8)), np.arange(3), fraction=0.05), "fraction must keep"),
    (lambda: rope(_vectors((3, 8)), np.arange(3), base=1.0), "base"),
    (lambda: rope(_vectors((3, 8)), np.arange(4)), "positions"),
    (lambda: rope(np.full((3, 8), np.nan), np.arange(3)), "x must contain only finite"),
    (lambda: RoPE(fraction=-0.1), "fraction"),
    (lambda: ntk_base(10000.0, 64, 0, 10), "train_length"),
])
def test_bad_input_raises_naming_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()
