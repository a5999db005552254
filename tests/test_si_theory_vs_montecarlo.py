"""SI closed forms held against the seeded Monte Carlo, and the growth-law fitting."""

import math

import numpy as np
import pandas as pd
import pytest

from sia_theory import LogN, NoScale, ScaleInvariant
from sia_theory.si.closed_forms import expected_negentropy, expected_total_attention
from sia_theory.si.entropy_scaling import fit_growth_laws, log_spaced_integers
from sia_theory.si.montecarlo import context_length_sweep, simulate_gaussian_logits

K_SE = 4.0

# Ranges where the lognormal weights are light enough (a_t² ≲ 3) for a sample standard error
# to describe the Monte Carlo error; larger t are checked exactly in test_closed_forms.
CASES = [(ScaleInvariant(100.0), 0, 50, None), (ScaleInvariant(10.0), 0, 10, None),
         (ScaleInvariant(10.0), 5, 20, None), (ScaleInvariant(1.0), 0, 3, None),
         (NoScale(), 0, 200, None), (LogN(0.4), 10, 60, 100)]


@pytest.mark.parametrize(("transform", "t1", "t2", "n_ctx"), CASES,
                         ids=[f"{c[0]!r}-{c[1]}-{c[2]}" for c in CASES])
def test_total_attention_and_negentropy_match_closed_form(transform, t1, t2, n_ctx):
    n_ctx = n_ctx or t2
    row = simulate_gaussian_logits(transform, n_ctx, [(t1, t2)], samples=40_000, seed=11).iloc[0]
    exact_z = expected_total_attention(transform, t1, t2, n_ctx)
    exact_n = expected_negentropy(transform, t1, t2, n_ctx)
    assert abs(row.Z_mean - exact_z) <= K_SE * row.Z_se
    assert abs(row.N_mean - exact_n) <= K_SE * row.N_se
    assert row.samples == 40_000


def test_monte_carlo_error_shrinks_like_one_over_root_samples():
    s = ScaleInvariant(10.0)
    se = [simulate_gaussian_logits(s, 10, [(0, 10)], samples=n, seed=3).iloc[0].Z_se
          for n in (4_000, 64_000)]
    assert se[0] / se[1] == pytest.approx(4.0, rel=0.15)


def test_fit_growth_laws_recovers_exact_sqrt_log_and_log_laws():
    t = log_spaced_integers(10, 10**5, 12).astype(float)
    table = pd.concat([pd.DataFrame({"delta": 2, "t": t, "H_mean": 2 * np.sqrt(np.log(t)) + 1}),
                       pd.DataFrame({"delta": 5, "t": t, "H_mean": 0.5 * np.log(t) - 3})])
    fits = fit_growth_laws(table).set_index(["delta", "law"])
    assert fits.loc[(2, "sqrt(log t)"), "r2"] == pytest.approx(1.0, abs=1e-12)
    assert fits.loc[(2, "sqrt(log t)"), "slope"] == pytest.approx(2.0, rel=1e-10)
    assert fits.loc[(5, "log t"), "slope"] == pytest.approx(0.5, rel=1e-10)
    assert fits.loc[(5, "log t"), "intercept"] == pytest.approx(-3.0, rel=1e-10)
    assert fits.loc[(2, "log t"), "r2"] < 0.999


def test_no_scale_entropy_in_long_range_matches_plug_in():
    """Without a transform, E[H] → log(t2 − t1) − 1/2 for long ranges (THEORY.md §2 note)."""
    row = simulate_gaussian_logits(NoScale(), 20_000, [(10_000, 20_000)], samples=256,
                                   seed=5).iloc[0]
    assert abs(row.H_mean - (math.log(10_000) - 0.5)) <= K_SE * row.H_se + 1e-3


def test_log_spaced_integers_validates_and_is_sorted_unique():
    values = log_spaced_integers(1, 1000, 50)
    assert values[0] == 1 and values[-1] == 1000 and np.all(np.diff(values) > 0)
    with pytest.raises(ValueError, match="^stop must"):
        log_spaced_integers(10, 5, 3)


@pytest.mark.parametrize("transform", [NoScale(), LogN(0.4)], ids=repr)
def test_position_independent_transforms_put_k_over_n_mass_on_recent_tokens(transform):
    """IID logits + a transform that ignores position ⇒ exchangeable tokens ⇒ E[mass on k of N]
    = k/N exactly, however the logits are scaled (why LogN cannot protect the local context)."""
    sweep = context_length_sweep(transform, [300, 1000, 3000], samples=512, seed=2, recent=100)
    recent = sweep[sweep["quantity"] == "recent_mass"]
    z = (recent["mean"] - 100 / recent["n_ctx"]) / recent["se"]
    assert np.all(np.abs(z) <= K_SE), z.tolist()


def test_entropy_scaling_rejects_context_dependent_transforms():
    from sia_theory.si.entropy_scaling import entropy_in_range_scaling

    with pytest.raises(ValueError, match="^transform must"):
        entropy_in_range_scaling(LogN(0.4), [10, 20], samples=4)


def test_fit_growth_laws_needs_three_points_and_the_columns():
    with pytest.raises(ValueError, match="^table must have at least 3 distinct t"):
        fit_growth_laws(pd.DataFrame({"delta": [2, 2], "t": [10, 100], "H_mean": [1.0, 2.0]}))
    with pytest.raises(ValueError, match="^table must have the columns"):
        fit_growth_laws(pd.DataFrame({"t": [10, 100, 1000]}))
