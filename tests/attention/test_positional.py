"""sia_theory.attention.positional, exercised by its own name: SI's p-RoPE frequencies (App. G:
D/4 geometric from 1 to 1/1024, then zeros), RMSNorm and QK-norm, NoPE."""

import numpy as np
import pytest

from sia_theory.attention.positional import (
    NoPE,
    PRoPESI,
    p_rope_si,
    p_rope_si_frequencies,
    qk_norm,
    rms_norm,
)


def test_p_rope_si_frequencies():
    f = p_rope_si_frequencies(16)  # D/4 = 4 rotating: 1, 1024^{-1/3}, 1024^{-2/3}, 1/1024
    assert f == pytest.approx([1.0, 1024 ** (-1 / 3), 1024 ** (-2 / 3), 1 / 1024, 0, 0, 0, 0])
    assert PRoPESI().frequencies(16) == pytest.approx(f)
    x = np.random.default_rng(0).standard_normal((3, 16))
    out = p_rope_si(x, np.arange(3))
    assert np.array_equal(out[:, 4:8], x[:, 4:8])  # the zero frequencies leave pairs alone
    assert np.array_equal(out[:, 12:], x[:, 12:])


def test_rms_norm_by_hand_and_at_extreme_scales():
    x = np.array([[3.0, 4.0], [3e200, 4e200], [0.0, 0.0]])
    out = rms_norm(x, eps=0.0)
    rms = np.sqrt(12.5)
    assert out[0] == pytest.approx([3 / rms, 4 / rms])
    assert out[1] == pytest.approx(out[0])
    assert np.array_equal(out[2], [0.0, 0.0])
    q, k = qk_norm(x[:1], 2 * x[:1], eps=0.0)
    assert q == pytest.approx(k)


def test_nope_is_identity_and_bad_input():
    x = np.ones((2, 4))
    assert NoPE()(x, [0, 1]) is x
    assert np.array_equal(NoPE().frequencies(4), [0.0, 0.0])
    with pytest.raises(ValueError, match="head_dim"):
        p_rope_si_frequencies(6)
    with pytest.raises(ValueError, match="eps"):
        rms_norm(x, eps=-1.0)
