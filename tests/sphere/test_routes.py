"""The two routes of sia_theory.sphere.routes held against each other (4 standard errors), the
Monte Carlo route against a numpy brute force on S² (uniform cosines on [−1, 1], softmax of
β·cos), the extreme-value route with every key given against the plain softmax, and the three
regimes of the Poisson limit."""

import math

import numpy as np
import pytest

from sia_theory.gaussian.estimate import assert_agree
from sia_theory.sphere.model import DistanceLaw
from sia_theory.sphere.routes import asymptotic_order_parameters, order_parameter


def test_monte_carlo_route_against_numpy_brute_force():
    """n = 2048 keys on S² at β = β*_n = n/2: the nearest key's mass by the route and by numpy
    (uniform cosines, written out here), 1000 rows each, within 4 standard errors."""
    n = 2048
    mc = order_parameter("top_mass", DistanceLaw.uniform(3), n, 1.0, route="monte_carlo",
                         samples=1000, seed=1)
    cos = np.random.default_rng(2).uniform(-1.0, 1.0, size=(1000, n))
    w = np.exp(n / 2 * (cos - cos.max(axis=1, keepdims=True)))
    top = 1.0 / w.sum(axis=1)
    assert abs(mc.value - top.mean()) < 4 * math.hypot(mc.error,
                                                       top.std(ddof=1) / math.sqrt(1000))


def test_asymptotic_with_all_keys_given_is_the_plain_softmax():
    """K = n = 2 keys drawn: no tail (m = 0). Cosines 1 and 0.9 at β = 5: weights ∝ (1, e^{−½}),
    so the top mass is 1/(1 + e^{−½}) and the entropy the binary entropy of it."""
    law = DistanceLaw.uniform(3)
    out = asymptotic_order_parameters(law, 2, 5.0, np.array([[1.0, 0.9]]))
    p = 1 / (1 + math.exp(-0.5))
    assert out["top_mass"][0] == pytest.approx(p, rel=1e-12)
    assert out["entropy"][0] == pytest.approx(-p * math.log(p) - (1 - p) * math.log(1 - p),
                                              rel=1e-12)


@pytest.mark.parametrize("d, lam", [(3, 0.3), (3, 1.0), (3, 3.0), (4, 1.0), (8, 0.3), (8, 3.0),
                                    (16, 1.0), (64, 1.0)])
@pytest.mark.parametrize("quantity", ["top_mass", "share_count", "entropy"])
def test_monte_carlo_and_extreme_value_routes_agree(d, lam, quantity):
    """n = 2¹² keys, 600 rows each (measured with seed 3: all within 2.8 se, d = 3 … 64,
    λ = 0.3 … 3; the tail enters by the exact Beta law, so even d = 64, where 1 570 keys hold
    half the mass at λ = 1, agrees)."""
    law = DistanceLaw.uniform(d)
    mc = order_parameter(quantity, law, 2**12, lam, route="monte_carlo", samples=600, seed=3)
    ev = order_parameter(quantity, law, 2**12, lam, route="asymptotic", samples=600, seed=3,
                         top_k=512)
    assert_agree(mc, ev, k=4.0)


@pytest.mark.parametrize("share", [0.2, 0.9])
def test_the_keys_holding_other_shares_agree_between_routes(share):
    """d = 3, λ = 0.3, n = 2¹²: the fewest keys holding 20 % and 90 % of the mass, Monte Carlo
    against the extreme-value route (whose 90 % count falls in the tail), 4 standard errors."""
    law = DistanceLaw.uniform(3)
    kwargs = {"samples": 600, "seed": 5, "share": share}
    assert_agree(order_parameter("share_count", law, 2**12, 0.3, route="monte_carlo", **kwargs),
                 order_parameter("share_count", law, 2**12, 0.3, route="asymptotic", top_k=64,
                                 **kwargs), k=4.0)


def test_three_regimes_of_the_critical_scale():
    """β = λβ*_n at n = 2⁴⁰ (extreme-value route): λ = 0.01 spreads the mass over many keys,
    λ = 1 keeps it on a few (top mass strictly inside (0, 1)), λ = 100 puts it on one."""
    law = DistanceLaw.uniform(3)

    def top(lam):
        return order_parameter("top_mass", law, 2**40, lam, route="asymptotic", samples=400)

    sub, crit, sup = top(0.01), top(1.0), top(100.0)
    assert sub.value < 0.02
    assert 0.3 < crit.value < 0.8
    assert sup.value > 0.98
    half = order_parameter("share_count", law, 2**40, 0.01, route="asymptotic", samples=400)
    assert half.value > 20  # ~λ^{−k/2}·log 2 = 69 keys hold half the mass


@pytest.mark.parametrize("kwargs, name", [
    ({"quantity": "mass"}, "quantity"), ({"route": "exact"}, "route"), ({"n": 1}, "n"),
    ({"lam": 0.0}, "lam"), ({"samples": 1}, "samples"), ({"law": 3}, "law"),
    ({"share": 1.0}, "share"),
])
def test_bad_input_names_the_parameter(kwargs, name):
    args = {"quantity": "top_mass", "law": DistanceLaw.uniform(3), "n": 100, "lam": 1.0,
            "route": "monte_carlo", **kwargs}
    with pytest.raises(ValueError, match=rf"^{name} must"):
        order_parameter(args.pop("quantity"), args.pop("law"), args.pop("n"), args.pop("lam"),
                        **args)
