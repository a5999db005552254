"""sia_theory.attention.rotary, exercised by its own name: RoPE's frequencies θ_k = base^{−2k/D}
(RoFormer eq. 15), norm preservation and relative-position dependence of q·k."""

import numpy as np
import pytest

from sia_theory.attention.rotary import RoPE, check_head_dim, rope, rope_frequencies, rotate


def test_frequencies_closed_form_and_p_rope():
    assert rope_frequencies(8, base=10000.0) == pytest.approx([1.0, 0.1, 0.01, 0.001])
    assert rope_frequencies(8, fraction=0.5) == pytest.approx([1.0, 0.1, 0.0, 0.0])


def test_rotation_of_one_pair_by_hand():
    """D = 2, θ = 1: position p rotates (1, 0) to (cos p, sin p)."""
    out = rotate(np.array([[1.0, 0.0], [1.0, 0.0]]), np.array([0, 2]), np.array([1.0]))
    assert out == pytest.approx(np.array([[1.0, 0.0], [np.cos(2), np.sin(2)]]))


def test_dot_products_depend_on_relative_position_only():
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal((2, 1, 16))
    def dot(i, j):
        return float(np.sum(rope(q, [i]) * rope(k, [j])))
    assert dot(7, 3) == pytest.approx(dot(104, 100), rel=1e-12)
    x = rng.standard_normal((5, 16))
    assert np.linalg.norm(RoPE(500.0)(x, np.arange(5)), axis=1) == \
        pytest.approx(np.linalg.norm(x, axis=1))


def test_bad_input_named():
    with pytest.raises(ValueError, match="head_dim"):
        check_head_dim(3)
    with pytest.raises(ValueError, match="base"):
        rope_frequencies(8, base=1.0)
    with pytest.raises(ValueError, match="fraction"):
        rope_frequencies(8, fraction=0.1)
    with pytest.raises(ValueError, match="positions"):
        rope(np.ones((2, 4)), [0])
