"""sia_theory.gaussian.needle_mass_threshold, exercised by its own name: the bracketing root
finder from far guesses, and δ*_mass of small exchangeable contexts found independently by
Gauss–Hermite quadrature and brentq."""

import math

import numpy as np
import pytest
from scipy import optimize

from sia_theory import NoScale
from sia_theory.gaussian.needle_mass_threshold import (
    bracket_root,
    free_energy_threshold,
    mass_threshold,
)


@pytest.mark.parametrize("guess", [-1e3, -2.0, 0.0, 2.0, 1e3])
def test_bracket_root_does_not_depend_on_the_guess(guess):
    assert bracket_root(lambda d: d**3 - 2.0, guess) == pytest.approx(2 ** (1 / 3), abs=1e-6)


def test_two_keys_mass_threshold_and_its_prediction_are_zero():
    """n = 2: E[σ(X + δ − Y)] = ½ at δ = 0 (X − Y is symmetric), and E[log Z_rest] = E[Y] = 0."""
    assert free_energy_threshold(NoScale(), 2, 0) == pytest.approx(0.0, abs=1e-9)
    assert mass_threshold(NoScale(), 2, 0) == pytest.approx(0.0, abs=1e-5)
    assert mass_threshold(NoScale(), 2, 0, guess=40.0) == pytest.approx(0.0, abs=1e-5)


def test_three_keys_mass_threshold_against_gauss_hermite():
    """E[e^{X+δ} / (e^{X+δ} + e^{Y1} + e^{Y2})] = ½ with X, Y1, Y2 iid N(0, 1), the
    expectation by a 60³-point Gauss–Hermite rule and the root by brentq."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(60)
    weights = weights / math.sqrt(2 * math.pi)  # (60,) the N(0, 1) rule
    x, y1, y2 = np.meshgrid(nodes, nodes, nodes, indexing="ij")  # (60, 60, 60)
    w = weights[:, None, None] * weights[None, :, None] * weights[None, None, :]

    def excess(d):
        return float((w / (1 + np.exp(y1 - x - d) + np.exp(y2 - x - d))).sum()) - 0.5

    ref = optimize.brentq(excess, -5, 5, xtol=1e-10)
    assert mass_threshold(NoScale(), 3, 0) == pytest.approx(ref, abs=1e-5)
    assert ref > 0
    assert free_energy_threshold(NoScale(), 3, 0) > 0  # E[log(e^{Y1} + e^{Y2})] > 0


def test_bad_input_names_the_parameter():
    with pytest.raises(ValueError, match="guess"):
        mass_threshold(NoScale(), 10, 0, guess=float("nan"))
    with pytest.raises(ValueError, match="n_ctx"):
        free_energy_threshold(NoScale(), 1, 0)
