"""The exact route (Laplace/Frullani integrals) against brute-force Monte Carlo, independent
exact small cases and plain summation."""

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

    def affine(self, t, n, h):
        return self._a + 0.0 * t, self._m + 0.0 * t


def test_one_token_has_zero_entropy_and_full_mass():
    h = expected_entropy_exact(NoScale(), 0, 1)
    assert abs(h.value) <= h.error + 1e-12
    assert h.parts["log_Z"].value == pytest.approx(0.0, abs=1e-8)  # E[log e^X] = E[X] = 0
    assert expected_mass_exact(NoScale(), 0, 1, 1).value == pytest.approx(1.0, abs=1e-8)


@pytest.mark.parametrize("m", [-30.0, 0.0, 12.0])
def test_two_deterministic_tokens_have_entropy_log_2(m):
    h = expected_entropy_exact(Constant(0.0, m), 0, 2)
    assert h.value == pytest.approx(math.log(2), abs=1e-8)
    assert h.parts["log_Z"].value == pytest.approx(m + math.log(2), abs=1e-8)


def test_mass_of_exchangeable_tokens_is_their_share():
    """iid logits: by symmetry E[Z_range/Z] = (t2 − t1)/n exactly."""
    assert expected_mass_exact(NoScale(), 0, 10, 100).value == pytest.approx(0.1, abs=1e-8)


CASES = [
    (NoScale(), 1000, (100, 1000)),
    (ScaleInvariant(), 2000, (200, 2000)),
    (LogN(0.4), 4096, (400, 4096)),
    (ALiBi(2.0**-4), 500, (10, 50)),
    (ZOO["critical"], 4096, (100, 4096)),
    (ScaleInvariant(1.0), 5000, (1000, 2000)),
]


@pytest.mark.parametrize(("transform", "n_ctx", "rng"), CASES,
                         ids=[type(c[0]).__name__ for c in CASES])
def test_exact_entropy_and_mass_match_brute_force_monte_carlo(transform, n_ctx, rng):
    mc = simulate_gaussian_logits(transform, n_ctx, [rng], 4000, seed=1).iloc[0]
    h = expected_entropy_exact(transform, *rng, n_ctx=n_ctx)
    mass = expected_mass_exact(transform, *rng, n_ctx)
    assert abs(h.value - mc.H_mean) <= K_SE * mc.H_se + h.error
    assert abs(mass.value - mc.mass_mean) <= K_SE * mc.mass_se + mass.error
    log_z = h.parts["log_Z"]
    assert abs(log_z.value - mc.log_Z_mean) <= K_SE * mc.log_Z_se + log_z.error


def test_range_laplace_transform_matches_monte_carlo():
    from sia_theory import range_log_laplace
    from sia_theory.gaussian.montecarlo import simulate_gaussian_range_statistics

    z = simulate_gaussian_range_statistics(ScaleInvariant(), 1000, [(10, 1000)], 4000, 2).Z[:, 0]
    log_s = np.log([0.003, 0.01, 0.03])  # Φ from ~0.8 to ~0.2 (E[Z] ≈ 64)
    phi = np.exp(range_log_laplace(ScaleInvariant(), 10, 1000, log_s))
    draws = np.exp(-np.exp(log_s)[None, :] * z[:, None])  # (samples, 3)
    se = draws.std(axis=0, ddof=1) / math.sqrt(z.size)
    assert np.all(np.abs(phi - draws.mean(axis=0)) <= K_SE * se)


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


@pytest.mark.parametrize(("t1", "t2"), [(0, 10), (3, 50_000), (100, 2 * 10**6)])
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
                                            ((0, 1e33), "t2"), ((0.5, 3), "t1")])
def test_bad_ranges_raise_value_error_naming_them(args, name):
    with pytest.raises(ValueError, match=rf"^{name} must"):
        expected_entropy_exact(NoScale(), *args)
    with pytest.raises(ValueError, match=rf"^{name} must"):
        distance_quadrature(*args)


def test_scale_invariant_family_at_c_1_is_the_si_transform():
    from sia_theory import ScaleInvariantFamily

    t = np.array([0.0, 1.0, 7.0, 1e3, 1e12, 1e30])
    a_f, m_f = ScaleInvariantFamily(1.0, 10.0, math.exp(0.5)).coefficients(t)
    a_s, m_s = ScaleInvariant(10.0).coefficients(t)
    np.testing.assert_allclose(a_f, a_s, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(m_f, m_s, rtol=1e-12, atol=1e-12)
    assert ScaleInvariantFamily(1.0, 10.0, math.exp(0.5)).power_law == pytest.approx(
        ScaleInvariant(10.0).power_law, rel=1e-12)


@pytest.mark.parametrize("c", [0.25, 1.0, 2.0])
def test_scale_invariant_family_keeps_total_attention_and_its_log_moments(c):
    from sia_theory import ScaleInvariantFamily

    fam = ScaleInvariantFamily(c, 3.0, 1.7)
    t = np.array([0.0, 2.0, 50.0, 1e6])
    a, m = fam.coefficients(t)
    log_w, tilt = fam.log_moments(t)
    np.testing.assert_allclose(np.exp(m + a * a / 2), 1.7 / (t / 3.0 + 1), rtol=1e-12)
    np.testing.assert_allclose(log_w, m + a * a / 2, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(tilt, m + a * a, rtol=1e-12, atol=1e-12)
    assert (fam.power_law is None) == (c != 1.0)
    with pytest.raises(ValueError, match="^c must"):
        ScaleInvariantFamily(0.0)


@pytest.mark.parametrize("kind", ["F", "E", "Q"])
def test_step_kernel_matches_its_numpy_reference(kind):
    from sia_theory.gaussian.laplace import step_expectation, step_expectation_reference

    a, mu = np.meshgrid([0.0, 0.3, 1.0, 3.0, 12.0, 28.0], np.linspace(-300.0, 40.0, 69))
    fast, slow = step_expectation(kind, a, mu), step_expectation_reference(kind, a, mu)
    if kind == "F":  # relative accuracy down to the tails
        np.testing.assert_allclose(fast, slow, rtol=1e-11, atol=0)
    else:
        np.testing.assert_allclose(fast, slow, rtol=1e-11, atol=1e-300)


@pytest.mark.parametrize(("call", "name"), [
    (lambda: expected_entropy_exact(NoScale(), 0, 10, rtol=0), "rtol"),
    (lambda: distance_quadrature(0, 10, rtol=float("nan")), "rtol"),
    (lambda: expected_entropy_exact("not a transform", 0, 10), "transform"),
    (lambda: expected_entropy_exact(LogN(0.4), 0, 10), "n_ctx"),
    (lambda: expected_mass_exact(NoScale(), 0, 10, None), "n_ctx"),
    (lambda: expected_mass_exact(NoScale(), 0, 10, 5), "t2"),
    (lambda: laplace_log_factor(-1.0, 0.0, 0.0), "a"),
    (lambda: laplace_tilted(1.0, float("inf"), 0.0), "m"),
])
def test_bad_arguments_raise_value_error_naming_them(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# --- regression: the step zone of E and Q left of the Gaussian window (found in review) -------

def _quad_step(kind, a, mu):
    """Independent oracle: adaptive scipy quadrature of E[k(mu + aX)] with the step as a
    breakpoint."""
    from scipy import integrate

    k = {"E": lambda y: np.exp(-np.exp(min(y, 700.0))),
         "Q": lambda y: np.exp(y - np.exp(min(y, 700.0)))}[kind]
    x_star = -mu / a
    points = sorted({x_star, x_star + 2 / a, x_star - 2 / a, 0.0, a})
    value, _ = integrate.quad(lambda x: np.exp(-0.5 * x * x) / np.sqrt(2 * np.pi) * k(mu + a * x),
                              points[0] - 12, points[-1] + 12, points=points, limit=500,
                              epsabs=0, epsrel=1e-12)
    return value


@pytest.mark.parametrize("kind, a, mu", [("Q", 5.0, 60.0), ("E", 3.0, 40.0), ("E", 28.0, 454.0),
                                         ("Q", 28.0, 454.0), ("Q", 12.0, 200.0),
                                         ("E", 2.0, 25.0), ("E", 1.0, 3.0)])
def test_step_expectation_matches_adaptive_quadrature_when_the_step_is_far_left(kind, a, mu):
    """x* = −μ/a below −10: the mass of E and Q sits in the step zone just right of x*, which the
    first version left out (it returned 1–5 % of the value for E(3, 40))."""
    from sia_theory.gaussian.laplace import step_expectation, step_expectation_reference

    expected = _quad_step(kind, a, mu)
    for route in (step_expectation, step_expectation_reference):
        assert float(route(kind, a, mu)) == pytest.approx(expected, rel=1e-6, abs=0)


def test_frozen_temperature_entropy_matches_brute_force():
    """A strongly frozen row (50 tokens, logits 15·X): E[H] from the exact route against seeded
    brute-force Monte Carlo within 4 standard errors (it was −63.8 before the step-zone fix)."""
    from sia_theory.zoo import Temperature

    transform = Temperature(15.0)
    exact = expected_entropy_exact(transform, 0, 50, n_ctx=50)
    mc = simulate_gaussian_logits(transform, 50, [(0, 50)], samples=20000, seed=3).iloc[0]
    assert abs(exact.value - mc["H_mean"]) <= 4 * mc["H_se"] + exact.error
    mass = expected_mass_exact(transform, 0, 10, 50)
    assert mass.value == pytest.approx(0.2, abs=1e-6)  # 10 of 50 exchangeable tokens
