"""The two routes of sia_theory.sphere.routes held against each other (4 standard errors), and
the three regimes of the Poisson limit."""

import pytest

from sia_theory.gaussian.estimate import assert_agree
from sia_theory.sphere.model import DistanceLaw
from sia_theory.sphere.routes import order_parameter


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
