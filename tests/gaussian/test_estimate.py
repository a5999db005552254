"""sia_theory.gaussian.estimate, exercised by its own name: the Estimate type's checks and the
disagreement measure on hand-computed numbers."""

import math

import pytest

from sia_theory.gaussian.estimate import ROUTES, Estimate, assert_agree, disagreement


def test_disagreement_hand_computed():
    """|1.0 − 1.05| − 0.01 (the exact bound) = 0.04 over √(0.01² + 0.02²)."""
    exact = Estimate(1.0, 0.01, "exact")
    mc1 = Estimate(1.05, 0.01, "monte_carlo", samples=100)
    mc2 = Estimate(1.0, 0.02, "asymptotic", samples=100)
    assert disagreement(exact, mc1) == pytest.approx(0.04 / 0.01)
    assert disagreement(mc1, mc2) == pytest.approx(0.05 / math.hypot(0.01, 0.02))
    assert disagreement(exact, Estimate(1.005, 0.0, "closed_form")) == 0.0
    assert disagreement(exact, Estimate(1.5, 0.0, "closed_form")) == math.inf


def test_assert_agree():
    a = Estimate(0.0, 1.0, "monte_carlo", samples=10)
    assert_agree(a, Estimate(3.9, 0.0, "exact"))
    with pytest.raises(AssertionError, match="disagree"):
        assert_agree(a, Estimate(4.1, 0.0, "exact"))


def test_error_kinds():
    e = Estimate(2.0, 0.5, "exact")
    assert (e.bound, e.standard_error, float(e)) == (0.5, 0.0, 2.0)
    s = Estimate(2.0, 0.5, "monte_carlo", samples=4)
    assert (s.bound, s.standard_error) == (0.0, 0.5)
    assert set(ROUTES) == {"closed_form", "monte_carlo", "exact", "asymptotic"}


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"value": 1.0, "error": 0.0, "kind": "guess"}, "kind"),
    ({"value": 1.0, "error": -1.0, "kind": "exact"}, "error"),
    ({"value": 1.0, "error": math.inf, "kind": "exact"}, "error"),
    ({"value": 1.0, "error": 0.1, "kind": "monte_carlo"}, "samples"),
    ({"value": 1.0, "error": 0.1, "kind": "exact", "samples": 3}, "samples"),
])
def test_bad_estimates(kwargs, name):
    with pytest.raises(ValueError, match=name):
        Estimate(**kwargs)
    with pytest.raises(ValueError, match="a must be an Estimate"):
        disagreement(1.0, Estimate(1.0, 0.0, "exact"))
