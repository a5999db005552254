"""sia_theory.sphere.routes, exercised by its own name: the order parameters on S² against a
numpy brute force (uniform cosines on [−1, 1], softmax of β·cos), and the two routes held
together within 4 standard errors."""

import math

import numpy as np
import pytest

from sia_theory.gaussian.estimate import assert_agree
from sia_theory.sphere.model import DistanceLaw
from sia_theory.sphere.routes import asymptotic_order_parameters, order_parameter

N, LAM = 2048, 1.0


def _brute_top_mass(samples, seed):
    cos = np.random.default_rng(seed).uniform(-1.0, 1.0, size=(samples, N))
    beta = LAM * N / 2  # β*_n = n/2 on S²
    w = np.exp(beta * (cos - cos.max(axis=1, keepdims=True)))
    top = 1.0 / w.sum(axis=1)
    return top.mean(), top.std(ddof=1) / math.sqrt(samples)


def test_monte_carlo_route_against_numpy_brute_force():
    mc = order_parameter("top_mass", DistanceLaw.uniform(3), N, LAM, route="monte_carlo",
                         samples=1000, seed=1)
    mean, se = _brute_top_mass(1000, 2)
    assert abs(mc.value - mean) < 4 * math.hypot(mc.error, se)


def test_asymptotic_route_agrees():
    law = DistanceLaw.uniform(3)
    for quantity in ("top_mass", "entropy"):
        assert_agree(order_parameter(quantity, law, N, LAM, route="monte_carlo", samples=600),
                     order_parameter(quantity, law, N, LAM, route="asymptotic", samples=600,
                                     top_k=256))


def test_asymptotic_with_all_keys_given_is_the_plain_softmax():
    """K = n = 2 keys drawn: no tail (m = 0). Cosines 1 and 0.9 at β = 5: weights ∝ (1, e^{−½}),
    so the top mass is 1/(1 + e^{−½}) and the entropy the binary entropy of it."""
    law = DistanceLaw.uniform(3)
    out = asymptotic_order_parameters(law, 2, 5.0, np.array([[1.0, 0.9]]))
    p = 1 / (1 + math.exp(-0.5))
    assert out["top_mass"][0] == pytest.approx(p, rel=1e-12)
    assert out["entropy"][0] == pytest.approx(-p * math.log(p) - (1 - p) * math.log(1 - p),
                                              rel=1e-12)


def test_bad_input_named():
    law = DistanceLaw.uniform(3)
    with pytest.raises(ValueError, match="quantity"):
        order_parameter("mass", law, 10, 1.0, route="monte_carlo")
    with pytest.raises(ValueError, match="route"):
        order_parameter("top_mass", law, 10, 1.0, route="exact")
    with pytest.raises(ValueError, match="lam"):
        order_parameter("top_mass", law, 10, 0.0, route="monte_carlo")
    with pytest.raises(ValueError, match="law"):
        order_parameter("top_mass", 3, 10, 1.0, route="monte_carlo")
