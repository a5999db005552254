"""sia_theory.cas.transition, exercised by its own name: the near-simplex window in closed form
and one draw's crossings checked against the defining equations, recomputed here."""

import math

import numpy as np
import pytest

from sia_theory.cas.tokens import normalise_rows, sample_tokens, token_rng
from sia_theory.cas.transition import TRANSITION_STUDY, near_simplex_window, transition_draw


def test_window_closed_form():
    """w = ½: [log(n−1)/(1−ρ₁), log(n−1)/(1−ρ₂)]; ρ₁ = ρ₂ is a single point."""
    low, high = near_simplex_window(101, 0.2, 0.6)
    assert (float(low), float(high)) == pytest.approx((math.log(100) / 0.8, math.log(100) / 0.4))
    low, high = near_simplex_window(11, 0.5, 0.5, level=0.9)
    assert float(low) == float(high) == pytest.approx((math.log(10) + math.log(9)) / 0.5)


def test_draw_crossings_satisfy_their_equations():
    """The self-weight-½ point: mean_i 1/Σ_j e^{β(G_ij − 1)} = ½ on the same tokens; inside the
    rigorous window."""
    n, d = 64, 256
    row = transition_draw(n=n, d=d, rho=0.5, seed=0, draw=0, queries=64, rtol=1e-6)
    X = sample_tokens(n=n, d=d, rho=0.5, rng=token_rng(0, TRANSITION_STUDY, n, d, 0))
    Y, _ = normalise_rows(X)
    G = Y @ Y.T
    b = row["beta_half_self_weight"]
    assert np.mean(1.0 / np.exp(b * (G - 1.0)).sum(axis=1)) == pytest.approx(0.5, rel=1e-4)
    assert row["window_self_low"] <= b <= row["window_self_high"]
    off = G[~np.eye(n, dtype=bool)]
    assert (row["rho_min"], row["rho_max"]) == pytest.approx((off.min(), off.max()))


def test_bad_input_named():
    with pytest.raises(ValueError, match=r"^n "):
        near_simplex_window(1, 0.1, 0.2)
    with pytest.raises(ValueError, match="rho1"):
        near_simplex_window(10, -2.0, 0.2)
    with pytest.raises(ValueError, match="level"):
        near_simplex_window(10, 0.1, 0.2, level=1.0)
    with pytest.raises(ValueError, match="levels"):
        transition_draw(n=8, d=8, rho=0.5, seed=0, draw=0, levels=(1.5,))
