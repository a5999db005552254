"""sia_theory.gaussian.exact, exercised by its own name: the exact route's entropy, mass and
Laplace transform against one-dimensional quadratures and symmetry, written out here."""

import math

import numpy as np
import pytest
from scipy import integrate, special

from sia_theory import NoScale
from sia_theory.gaussian.exact import (
    expected_entropy_exact,
    expected_mass_exact,
    range_log_laplace,
)


def _normal(x, var=1.0):
    return math.exp(-0.5 * x * x / var) / math.sqrt(2 * math.pi * var)


def test_two_keys_entropy_against_quadrature():
    """Two standard normal keys: p = expit(D), D = X1 − X2 ~ N(0, 2), H the binary entropy."""
    def binary_entropy(d):
        p = special.expit(d)
        return -(p * math.log(p) + (1 - p) * math.log1p(-p)) if 0 < p < 1 else 0.0

    ref, _ = integrate.quad(lambda d: binary_entropy(d) * _normal(d, 2.0), -40, 40, limit=200)
    h = expected_entropy_exact(NoScale(), 0, 2)
    assert abs(h.value - ref) < 1e-6 + h.error
    assert h.parts["log_Z"].value - h.parts["N_over_Z"].value == pytest.approx(h.value)


@pytest.mark.parametrize(("t1", "t2", "n"), [(0, 10, 100), (30, 100, 100), (0, 1, 1000)])
def test_mass_of_exchangeable_keys_is_the_key_share(t1, t2, n):
    """NoScale: the keys are exchangeable, so E[Z_range/Z] = (t2 − t1)/n exactly."""
    m = expected_mass_exact(NoScale(), t1, t2, n)
    assert abs(m.value - (t2 - t1) / n) < 1e-6 + m.error


def test_range_log_laplace_of_one_key_against_quadrature():
    """log E[exp(−s e^X)] for one standard normal key."""
    log_s = np.array([-2.0, 0.0, 1.5])
    got = range_log_laplace(NoScale(), 0, 1, log_s)
    for u, value in zip(log_s, got, strict=True):
        ref, _ = integrate.quad(lambda x, u=u: math.exp(-math.exp(u + x)) * _normal(x), -40, 40)
        assert value == pytest.approx(math.log(ref), rel=1e-7)


def test_bad_arguments_named():
    with pytest.raises(ValueError, match="n_ctx"):
        expected_mass_exact(NoScale(), 0, 10, None)
    with pytest.raises(ValueError, match="t2"):
        expected_mass_exact(NoScale(), 0, 10, 5)
    with pytest.raises(ValueError, match="rtol"):
        expected_entropy_exact(NoScale(), 0, 10, rtol=1.0)
