"""sia_theory.attention.rope_variants, exercised by its own name: linear interpolation, LongRoPE's
short/long factors (its attention factor is the zoo's: tests/zoo/test_models.py)."""


import numpy as np
import pytest

from sia_theory.attention.rope_variants import LinearRoPE, LongRoPE, ProportionalRoPE


def test_linear_rope_divides_positions():
    """Position p under factor 4 rotates like position p/4 of plain RoPE."""
    x = np.random.default_rng(0).standard_normal((1, 8))
    assert LinearRoPE(4.0)(x, np.array([8])) == pytest.approx(
        LinearRoPE(1.0)(x, np.array([2])), rel=1e-12)
    assert LinearRoPE(4.0).frequencies(4) == pytest.approx([0.25, 0.0025])


def test_longrope_switches_factors_past_the_original_length():
    rope = LongRoPE([1.0, 2.0], [4.0, 8.0], original_max_position_embeddings=100)
    base = np.array([1.0, 0.01])  # 10000^{-2k/4}
    assert rope.frequencies(4) == pytest.approx(base / [1.0, 2.0])
    assert rope.frequencies(4, seq_len=101) == pytest.approx(base / [4.0, 8.0])
    with pytest.raises(ValueError, match="short_factor and long_factor"):
        LongRoPE([1.0], [1.0, 2.0], 100)
    with pytest.raises(ValueError, match="head_dim"):
        rope.frequencies(8)


def test_proportional_rope_zeros_after_the_partial_share():
    rope = ProportionalRoPE(rope_theta=10000.0, factor=2.0, partial_rotary_factor=0.5)
    assert rope.frequencies(8) == pytest.approx([0.5, 0.05, 0.0, 0.0])
