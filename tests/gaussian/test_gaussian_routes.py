"""Every route to the same expectation returns one result type and is held against every other
route by the same helper (closed form, exact, brute-force Monte Carlo, asymptotic sampler)."""

import itertools
import math

import pytest

from sia_theory import ALiBi, LogN, NoScale, ScaleInvariant, ScaleInvariantFamily
from sia_theory.gaussian.estimate import ROUTES, Estimate, assert_agree, disagreement
from sia_theory.gaussian.exact import expected_entropy_exact
from sia_theory.gaussian.needle import expected_log_rest, row_integral
from sia_theory.gaussian.routes import QUANTITIES, expectation

K = 4.0  # standard errors
SAMPLES = 3000

CASES = [  # (transform, t1, t2, n_ctx)
    (NoScale(), 100, 1000, None),
    (ScaleInvariant(10.0), 100, 1000, None),
    (LogN(0.4), 10, 200, 2000),
    (ALiBi(2.0**-4), 0, 50, None),
    (ScaleInvariantFamily(c=2.0), 50, 500, None),
]
IDS = ["none", "si", "logn", "alibi", "family-c2"]


@pytest.mark.parametrize(("transform", "t1", "t2", "n_ctx"), CASES, ids=IDS)
def test_every_route_to_every_quantity_agrees_with_every_other(transform, t1, t2, n_ctx):
    """All pairs of routes for Z, N, H, log Z and the mass, within 4 combined standard errors
    after the deterministic routes' numerical bounds (one helper for all of them)."""
    checked = 0
    for quantity, routes in QUANTITIES.items():
        if quantity == "mass" and n_ctx is None:
            n = 4 * t2
        else:
            n = n_ctx
        found = {}
        for route in routes:
            if route == "asymptotic" and quantity in ("Z", "N"):
                continue  # the sampler's Z is exp of a sampled log: heavy-tailed, compared in log
            est = expectation(quantity, transform, t1, t2, route=route, n_ctx=n,
                              samples=SAMPLES, seed=11)
            assert isinstance(est, Estimate) and est.kind == route
            found[route] = est
        for a, b in itertools.combinations(found.values(), 2):
            assert_agree(a, b, K)
            checked += 1
    assert checked >= 9


def test_closed_form_and_exact_sums_agree_to_their_bounds_over_a_long_range():
    """E[Z] and E[N] of SI over [1e3, 1e8): the term-by-term closed form and the quadrature."""
    si = ScaleInvariant(10.0)
    for quantity in ("Z", "N"):
        closed = expectation(quantity, si, 10**3, 10**8, route="closed_form")
        exact = expectation(quantity, si, 10**3, 10**8, route="exact")
        assert disagreement(closed, exact) == 0.0
        assert exact.error < 1e-6 * abs(exact.value)


def test_the_needle_and_the_exact_route_share_one_integrator():
    """E[log Z] of N − 1 iid keys: the needle's route (the whole row's Laplace transform with the
    needle's factor divided out) and the exact route on a row of N − 1 keys agree within their
    stated errors (both ~1e-9), far closer than the two integrators of 0.2 did (3.5e-6)."""
    for n in (10**3, 10**6):
        rest = expected_log_rest(NoScale(), n, 0)
        direct = expected_entropy_exact(NoScale(), 0, n - 1).parts["log_Z"]
        assert rest.kind == direct.kind == "exact"
        assert abs(rest.value - direct.value) <= rest.error + direct.error
        assert rest.error < 1e-8
    assert row_integral.cache_info().currsize >= 1


def test_disagreement_counts_standard_errors_after_the_bounds():
    exact = Estimate(1.0, 0.01, "exact")
    mc = Estimate(1.05, 0.01, "monte_carlo", samples=100)
    assert disagreement(exact, mc) == pytest.approx(4.0)  # (0.05 − 0.01)/0.01
    assert disagreement(exact, Estimate(1.005, 0.0, "closed_form")) == 0.0
    assert disagreement(exact, Estimate(1.5, 0.0, "closed_form")) == math.inf
    assert_agree(exact, mc, k=4.0 + 1e-9)
    with pytest.raises(AssertionError, match="disagree"):
        assert_agree(exact, mc, k=3.9)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"value": 1.0, "error": -1.0, "kind": "exact"}, "error"),
    ({"value": 1.0, "error": math.nan, "kind": "exact"}, "error"),
    ({"value": 1.0, "error": 0.1, "kind": "guess"}, "kind"),
    ({"value": 1.0, "error": 0.1, "kind": "monte_carlo"}, "samples"),
    ({"value": 1.0, "error": 0.1, "kind": "exact", "samples": 10}, "samples"),
])
def test_an_estimate_refuses_what_it_cannot_mean(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Estimate(**kwargs)


@pytest.mark.parametrize(("args", "kwargs", "match"), [
    (("entropy", NoScale(), 0, 10), {"route": "exact"}, "quantity"),
    (("H", NoScale(), 0, 10), {"route": "oracle"}, "route"),
    (("H", NoScale(), 0, 10), {"route": "closed_form"}, "does not reach"),
    (("N_over_Z", NoScale(), 0, 10), {"route": "monte_carlo"}, "does not reach"),
    (("H", NoScale(), 0, 10), {"route": "monte_carlo"}, "samples and seed"),
    (("mass", NoScale(), 0, 10), {"route": "exact"}, "n_ctx"),
    (("H", NoScale(), 10, 10), {"route": "exact"}, "t2"),
])
def test_expectation_names_what_is_wrong(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        expectation(*args, **kwargs)


def test_the_routes_table_names_only_known_routes():
    assert set(itertools.chain(*QUANTITIES.values())) <= set(ROUTES)
