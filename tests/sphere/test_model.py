"""sia_theory.sphere.model, exercised by its own name: on S² (d = 3) the cosine of a uniform key
is uniform on [−1, 1] (Archimedes), so every constant of the distance law is known by hand."""

import math

import numpy as np
import pytest

from sia_theory.sphere.model import (
    DistanceLaw,
    check_dimension,
    order_parameters,
    sample_cosines,
    sample_cosines_by_vectors,
)


def test_constants_on_the_two_sphere():
    """d = 3: k = 2, b = 1, P(1 − cos ≤ x) = x/2 (C = ½, c = C/2 = ¼), β*_n = n/2."""
    law = DistanceLaw.uniform(3)
    assert (law.k, law.b) == (2.0, 1.0)
    assert law.C == pytest.approx(0.5) and law.c == pytest.approx(0.25)
    assert law.critical_beta(1000) == pytest.approx(500.0)
    assert law.gap_isf(np.array([0.1, 0.5])) == pytest.approx([0.8, 0.0])


@pytest.mark.parametrize("d", [3, 10])
def test_beta_draws_match_vectors_in_moments(d):
    """E[cos] = 0 and E[cos²] = 1/d for uniform keys on S^{d−1}; both paths, 4 SE."""
    rng = np.random.default_rng(0)
    for draw in (sample_cosines(DistanceLaw.uniform(d), 4000, 5, rng),
                 sample_cosines_by_vectors(d, 4000, 5, rng)):
        x = draw.ravel()
        se = math.sqrt(1 / x.size)
        assert abs(x.mean()) < 4 * se
        assert abs(np.mean(x * x) - 1 / d) < 4 * np.std(x * x) / math.sqrt(x.size)


def test_order_parameters_by_hand():
    """Weights (0.6, 0.2, 0.2): top 0.6, one key holds half, entropy −Σ p log p."""
    logits = np.log(np.array([[3.0, 1.0, 1.0]]))
    out = order_parameters(logits)
    p = np.array([0.6, 0.2, 0.2])
    assert out["top_mass"][0] == pytest.approx(0.6)
    assert out["share_count"][0] == 1.0
    assert order_parameters(logits, share=0.7)["share_count"][0] == 2.0
    assert out["entropy"][0] == pytest.approx(-np.sum(p * np.log(p)))


def test_bad_input_named():
    with pytest.raises(ValueError, match=r"^d "):
        check_dimension(1)
    with pytest.raises(ValueError, match=r"^k "):
        DistanceLaw(math.inf, 1.0)
    with pytest.raises(ValueError, match="share"):
        order_parameters(np.zeros((1, 2)), share=1.0)
