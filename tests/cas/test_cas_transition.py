"""The transition midpoint and the near-simplex window (CAS-4) against direct computation."""

import math

import numpy as np
import pytest

from sia_theory._infra.stats import fit_slope
from sia_theory.cas.dynamics import attention_step
from sia_theory.cas.simplex import simplex_self_weight
from sia_theory.cas.tokens import mean_cosine, sample_tokens, token_rng
from sia_theory.cas.transition import TRANSITION_STUDY, near_simplex_window, transition_draw


def test_window_collapses_to_the_simplex_self_weight_half_point():
    for n, rho in ((100, 0.3), (5000, 0.7)):
        low, high = near_simplex_window(n, rho, rho)
        assert low == pytest.approx(high)
        # the exact simplex has self weight ½ there (independent closed form)
        assert simplex_self_weight(n=n, gamma=low / math.log(n), rho=rho) == pytest.approx(0.5)


def test_crossings_solve_their_equations_and_lie_in_the_window():
    n, d = 300, 64
    row = transition_draw(n=n, d=d, rho=0.5, seed=3, draw=1, queries=n, levels=(0.1, 0.5, 0.9),
                          rtol=1e-9)
    X = sample_tokens(n=n, d=d, rho=0.5, rng=token_rng(3, TRANSITION_STUDY, n, d, 1))
    before = mean_cosine(X)
    assert row["rho_mean"] == pytest.approx(before, rel=1e-12)
    for level in (10, 50, 90):
        after = mean_cosine(attention_step(X, beta=row[f"beta_{level}"]))
        assert after == pytest.approx(before + level / 100 * (1 - before), abs=1e-7)
    _, A = attention_step(X, beta=row["beta_half_self_weight"], return_attention=True)
    assert np.mean(np.diag(A)) == pytest.approx(0.5, abs=1e-7)
    G = (X / np.linalg.norm(X, axis=1, keepdims=True)) @ (X / np.linalg.norm(
        X, axis=1, keepdims=True)).T
    off = G[~np.eye(n, dtype=bool)]
    assert (row["rho_min"], row["rho_max"]) == pytest.approx((off.min(), off.max()))
    # the rigorous bound: the mean self weight is below ½ at the low end and above at the top
    for beta, side in ((row["window_self_low"], -1), (row["window_self_high"], 1)):
        _, A = attention_step(X, beta=beta, return_attention=True)
        assert side * (np.mean(np.diag(A)) - 0.5) >= 0
    assert row["window_self_low"] <= row["beta_half_self_weight"] <= row["window_self_high"]


def test_fit_slope_recovers_a_known_line_and_its_interval_covers_it():
    rng = np.random.default_rng(0)
    x = np.repeat(np.log(np.log(2.0 ** np.arange(7, 15))), 4)
    y = 0.3 + 1.0 * x + 0.02 * rng.standard_normal(x.size)
    fit = fit_slope(x, y)
    assert fit["ci_low"] < 1.0 < fit["ci_high"]
    assert fit["slope"] == pytest.approx(np.polyfit(x, y, 1)[0], rel=1e-12)


