"""sia_theory.attention.rotary, exercised by its own name: RoPE's frequencies θ_k = base^{−2k/D}
(RoFormer eq. 15), norm preservation and relative-position dependence of q·k."""

import numpy as np
import pytest

from sia_theory.attention.rope_scaling import DynamicNTKRoPE
from sia_theory.attention.rope_variants import LongRoPE
from sia_theory.attention.rotary import (
    RoPE,
    check_head_dim,
    check_positions,
    rope,
    rope_frequencies,
    rotate,
)


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


@pytest.mark.parametrize("bad", [[0.0, 1.0], [[0, 1]], np.array([], dtype=int), [True, False]])
def test_positions_of_a_length_dependent_encoding_are_checked_once(bad):
    """check_positions keeps a non-empty 1-D integer array as it is and refuses floats, a 2-D
    array, an empty one and booleans; the two encodings whose frequencies depend on the sequence
    length (dynamic NTK, LongRoPE) refuse through it, with its message."""
    kept = check_positions(np.array([3, 0, 7], dtype=np.int32))
    assert kept.dtype == np.int32 and kept.tolist() == [3, 0, 7]
    x = np.ones((2 if np.ndim(bad) == 1 and np.size(bad) else 1, 4))
    for call in (check_positions, lambda p: DynamicNTKRoPE(64)(x, p),
                 lambda p: LongRoPE([1.0, 1.0], [2.0, 2.0], 64)(x, p)):
        with pytest.raises(ValueError, match="positions must be a non-empty 1-D integer array"):
            call(bad)
