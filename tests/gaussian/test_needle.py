"""sia_theory.gaussian.needle, exercised by its own name: the needle's argmax probability and mass
for exchangeable standard normal keys, against symmetry and one-dimensional quadratures."""

import math

import numpy as np
import pytest
from scipy import integrate, special

from sia_theory import NoScale, ScaleInvariant
from sia_theory.gaussian.needle import (
    argmax_probability,
    check_needle,
    expected_log_rest,
    needle_coefficients,
    needle_mass,
    needle_mass_with_error,
)


def test_two_keys_argmax_probability_is_a_normal_cdf():
    """P(X + δ > Y) = Φ(δ/√2) for X, Y iid N(0, 1)."""
    deltas = np.array([-1.0, 0.0, 0.5, 2.0])
    got = argmax_probability(NoScale(), 2, 0, deltas)
    assert got == pytest.approx(special.ndtr(deltas / math.sqrt(2)), abs=1e-9)


@pytest.mark.parametrize("n", [3, 10, 1000])
def test_unraised_needle_wins_and_weighs_one_in_n(n):
    """δ = 0: every key is alike, so P(argmax) = E[mass] = 1/n."""
    assert float(argmax_probability(NoScale(), n, 1, [0.0])[0]) == pytest.approx(1 / n, abs=1e-9)
    values, errors = needle_mass_with_error(NoScale(), n, 1, [0.0])
    assert abs(values[0] - 1 / n) < 1e-6 + errors[0]


def test_raised_needle_among_three_keys_against_quadrature():
    """P(X + δ > max(Y1, Y2)) = ∫ φ(u − δ) Φ(u)² du."""
    delta = 1.3
    ref, _ = integrate.quad(lambda u: math.exp(-0.5 * (u - delta) ** 2) / math.sqrt(2 * math.pi)
                            * special.ndtr(u) ** 2, -20, 20)
    assert float(argmax_probability(NoScale(), 3, 2, [delta])[0]) == pytest.approx(ref, abs=1e-9)


def test_needle_mass_of_two_keys_against_quadrature():
    """E[σ(X + δ − Y)] = E[σ(D + δ)], D ~ N(0, 2)."""
    delta = 0.7
    ref, _ = integrate.quad(lambda d: special.expit(d + delta) * math.exp(-d * d / 4)
                            / math.sqrt(4 * math.pi), -40, 40)
    assert float(needle_mass(NoScale(), 2, 0, [delta])[0]) == pytest.approx(ref, abs=1e-6)


def test_log_rest_of_one_other_key_is_zero():
    """n = 2: Z_rest = e^Y, E[log Z_rest] = 0."""
    assert expected_log_rest(NoScale(), 2, 0).value == pytest.approx(0.0, abs=1e-6)


def test_coefficients_are_the_transforms():
    """SI eq. 16 at t = τ: a² = 1 + 2 log 2."""
    a, m = needle_coefficients(ScaleInvariant(tau=10.0), 100, 10)
    assert a * a == pytest.approx(1 + 2 * math.log(2))
    assert m == pytest.approx(-a * a + 1.0)  # β/α = 1 at the default α = β


def test_bad_input_named():
    with pytest.raises(ValueError, match="n_ctx"):
        check_needle(NoScale(), 1, 0)
    with pytest.raises(ValueError, match=r"^t "):
        check_needle(NoScale(), 5, 5)
    with pytest.raises(ValueError, match="deltas"):
        argmax_probability(NoScale(), 5, 0, [np.nan])
