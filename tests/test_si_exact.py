"""The exact route (Laplace/Frullani integrals) against brute-force Monte Carlo, independent
exact small cases and plain summation (issue 10 §1)."""

import math

import numpy as np
import pytest

from sia_theory import (
    ALiBi,
    LogN,
    NoScale,
    ScaleInvariant,
    Transform,
    distance_quadrature,
    expected_entropy_exact,
    expected_mass_exact,
    laplace_log_factor,
    laplace_tilted,
    simulate_gaussian_logits,
)
from sia_theory.zoo import ZOO

K_SE = 4  # Monte Carlo agreement: within 4 standard errors


class Constant(Transform):
    """Every distance gets the same (a, m): a = 0 makes the logits deterministic."""

    depends_on = frozenset({"distance"})

    def __init__(self, a, m):
        self._a, self._m = a, m

    def _affine(self, t, n, h):
        return self._a + 0.0 * t, self._m + 0.0 * t


def test_one_token_has_zero_entropy_and_full_mass():
    h = expected_entropy_exact(NoScale(), 0, 1)
    assert abs(h.value) <= h.error + 1e-12
    assert h.log_z == pytest.approx(0.0, abs=1e-8)  # E[log e^X] = E[X] = 0
    assert expected_mass_exact(NoScale(), 0, 1, 1).value == pytest.approx(1.0, abs=1e-8)


@pytest.mark.parametrize("m", [-30.0, 0.0, 12.0])
def test_two_deterministic_tokens_have_entropy_log_2(m):
    h = expected_entropy_exact(Constant(0.0, m), 0, 2)
    assert h.value == pytest.approx(math.log(2), abs=1e-8)
    assert h.log_z == pytest.approx(m + math.log(2), abs=1e-8)


def test_mass_of_exchangeable_tokens_is_their_share():
    """iid logits: by symmetry E[Z_range/Z] = (t2 − t1)/n exactly."""
    assert expected_mass_exact(NoScale(), 0, 10, 100).value == pytest.approx(0.1, abs=1e-8)


CASES = [
    (NoScale(), 1000, (100, 1000)),
    (ScaleInvariant(), 2000, (200, 2000)),
    (LogN(0.4), 4096, (400, 4096)),
    (ALiBi(2.0**-4), 500, (10, 50)),
    (ZOO["critical"], 4096, (100, 4096)),
]


@pytest.mark.parametrize(("transform", "n_ctx", "rng"), CASES,
                         ids=[type(c[0]).__name__ for c in CASES])
def test_exact_entropy_and_mass_match_brute_force_monte_carlo(transform, n_ctx, rng):
    mc = simulate_gaussian_logits(transform, n_ctx, [rng], 4000, seed=1).iloc[0]
    h = expected_entropy_exact(transform, *rng, n_ctx=n_ctx)
    mass = expected_mass_exact(transform, *rng, n_ctx)
    assert abs(h.value - mc.H_mean) <= K_SE * mc.H_se + h.error
    assert abs(mass.value - mc.mass_mean) <= K_SE * mc.mass_se + mass.error
    assert abs(h.log_z - mc.log_Z_mean) <= K_SE * mc.log_Z_se + h.log_z_error


def test_laplace_primitives_match_direct_quadrature():
    from scipy import integrate

    a, m, log_s = 3.0, -5.0, 2.0
    s = math.exp(log_s)

    def expect(f):
        return integrate.quad(lambda x: math.exp(-x * x / 2) / math.sqrt(2 * math.pi)
                              * f(a * x + m), -12, 12, points=[-(log_s + m) / a], limit=400,
                              epsabs=0, epsrel=1e-12)[0]

    assert float(laplace_log_factor(a, m, log_s)) == pytest.approx(
        math.log(expect(lambda L: math.exp(-s * math.exp(L)))), rel=1e-9)
    t0, t1 = laplace_tilted(a, m, log_s)
    assert float(t0) == pytest.approx(expect(lambda L: math.exp(L - s * math.exp(L))), rel=1e-8)
    assert float(t1) == pytest.approx(expect(lambda L: L * math.exp(L - s * math.exp(L))),
                                      rel=1e-7)


@pytest.mark.parametrize(("t1", "t2"), [(0, 10), (3, 50_000), (100, 10**7)])
@pytest.mark.parametrize("f", [lambda t: 1 / (t / 10 + 1), lambda t: (t + 1.0) ** -0.5,
                               lambda t: np.log(t + 2.0) / (t + 5.0)],
                         ids=["si-weight", "inverse-sqrt", "log-over-t"])
def test_distance_quadrature_matches_plain_summation(t1, t2, f):
    nodes, weights = distance_quadrature(t1, t2, rtol=1e-6)
    exact = math.fsum(f(np.arange(t1, t2, dtype=np.float64)))
    assert float(np.sum(weights * f(nodes))) == pytest.approx(exact, rel=1e-7)
    assert math.fsum(weights) == pytest.approx(t2 - t1, rel=1e-15)
    assert nodes.size < 200


@pytest.mark.parametrize(("args", "name"), [((5, 5), "t2"), ((-1, 5), "t1"),
                                            ((0, 2e30), "t2"), ((0.5, 3), "t1")])
def test_bad_ranges_raise_value_error_naming_them(args, name):
    with pytest.raises(ValueError, match=rf"^{name} must"):
        expected_entropy_exact(NoScale(), *args)
    with pytest.raises(ValueError, match=rf"^{name} must"):
        distance_quadrature(*args)
