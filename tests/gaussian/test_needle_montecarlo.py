"""sia_theory.gaussian.needle_montecarlo, exercised by its own name: the brute-force needle
sampler against P(X + δ > Y) = Φ(δ/√2), and the distribution-free median interval."""

import math

import numpy as np
import pytest
from scipy import special

from sia_theory import NoScale
from sia_theory.gaussian.needle_montecarlo import MAX_N_CTX, median_interval, simulate_needle


def test_two_key_needle_within_four_standard_errors():
    deltas = np.array([0.0, 1.0])
    out = simulate_needle(NoScale(), 2, 0, deltas, samples=4000, seed=2)
    expected = special.ndtr(deltas / math.sqrt(2))
    assert np.all(np.abs(out["p_argmax"] - expected) < 4 * out["p_argmax_se"])
    # the margin is Y − X ~ N(0, 2): P(margin < δ) is the same probability, draw by draw
    wins = (out["margins"][:, None] < deltas).mean(axis=0)
    assert wins == pytest.approx(out["p_argmax"])
    assert out["samples"] == 4000


def test_unraised_needle_mass_is_one_in_n():
    out = simulate_needle(NoScale(), 8, 3, [0.0], samples=3000, seed=0)
    assert abs(out["mass"][0] - 1 / 8) < 4 * out["mass_se"][0]


def test_median_interval_order_statistics():
    """n = 100, k = 4: the order statistics 50 ∓ 20, i.e. x[30] and x[70]."""
    draws = np.arange(100.0)[::-1]
    assert median_interval(draws) == (49.5, 30.0, 70.0)
    with pytest.raises(ValueError, match="draws"):
        median_interval([1.0])


def test_bad_input_named():
    with pytest.raises(ValueError, match="n_ctx"):
        simulate_needle(NoScale(), MAX_N_CTX + 1, 0, [0.0], 2, 0)
    with pytest.raises(ValueError, match="samples"):
        simulate_needle(NoScale(), 4, 0, [0.0], 1, 0)
