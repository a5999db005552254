"""sia_theory.gaussian.routes, exercised by its own name: one ``expectation`` entry point, every
route against the lognormal moments written out here (E[e^X] = e^{1/2}, E[X e^X] = e^{1/2})."""

import math

import pytest

from sia_theory import NoScale
from sia_theory.gaussian.routes import QUANTITIES, expectation

N = 64
Z_EXACT = N * math.exp(0.5)  # Σ E[e^X] over 64 standard normal keys
N_EXACT = N * math.exp(0.5)  # Σ E[X e^X] = Σ E[e^X] (Stein: E[X e^X] = E[e^X])


@pytest.mark.parametrize("route", ["closed_form", "exact"])
def test_deterministic_routes_hit_the_lognormal_moments(route):
    z = expectation("Z", NoScale(), 0, N, route=route)
    n = expectation("N", NoScale(), 0, N, route=route)
    assert z.kind == route
    assert z.value == pytest.approx(Z_EXACT, rel=1e-9)
    assert n.value == pytest.approx(N_EXACT, rel=1e-9)


def test_monte_carlo_route_within_four_standard_errors():
    z = expectation("Z", NoScale(), 0, N, route="monte_carlo", samples=4000, seed=5)
    assert z.samples == 4000
    assert abs(z.value - Z_EXACT) < 4 * z.error


def test_mass_route_is_the_key_share():
    m = expectation("mass", NoScale(), 0, 16, route="exact", n_ctx=64)
    assert m.value == pytest.approx(0.25, abs=1e-6)


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"quantity": "W", "route": "exact"}, "quantity"),
    ({"quantity": "H", "route": "guess"}, "route"),
    ({"quantity": "H", "route": "closed_form"}, "does not reach"),
    ({"quantity": "mass", "route": "exact"}, "n_ctx"),
    ({"quantity": "H", "route": "monte_carlo"}, "samples and seed"),
])
def test_bad_input_named(kwargs, name):
    quantity = kwargs.pop("quantity")
    with pytest.raises(ValueError, match=name):
        expectation(quantity, NoScale(), 0, N, **kwargs)
    assert "closed_form" not in QUANTITIES["H"]
