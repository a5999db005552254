"""SI closed forms held against the seeded Monte Carlo, and the growth-law fitting."""

import math

import numpy as np
import pandas as pd
import pytest

from sia_theory import LogN, NoScale, ScaleInvariant
from sia_theory.gaussian.closed_forms import expected_negentropy, expected_total_attention
from sia_theory.gaussian.entropy import fit_growth_laws, log_spaced_integers
from sia_theory.gaussian.montecarlo import context_length_sweep, simulate_gaussian_logits

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
    from sia_theory.gaussian.entropy import entropy_in_range_scaling

    with pytest.raises(ValueError, match="^transform must"):
        entropy_in_range_scaling(LogN(0.4), [10, 20], samples=4)


def test_fit_growth_laws_needs_three_points_and_the_columns():
    with pytest.raises(ValueError, match="^table must have at least 3 distinct t"):
        fit_growth_laws(pd.DataFrame({"delta": [2, 2], "t": [10, 100], "H_mean": [1.0, 2.0]}))
    with pytest.raises(ValueError, match="^table must have the columns"):
        fit_growth_laws(pd.DataFrame({"t": [10, 100, 1000]}))


# --- the SI studies (one definition for figure and claim) ----------------------------------

def test_local_slopes_mean_is_the_least_squares_slope_of_the_mean_curve():
    """The per-sample slope is linear in H, so its mean is the OLS slope of H_mean on log t;
    its standard error is the spread of the per-sample OLS slopes (computed here by polyfit)."""
    from sia_theory.gaussian.laws import local_slopes

    rng = np.random.default_rng(4)
    t = log_spaced_integers(100, 10**4, 21)
    h = 0.3 * np.log(t) + rng.standard_normal((50, 2, t.size))  # (samples, deltas, t)
    slopes = local_slopes(h, t, (2, 5), ((100, 1000), (1000, 10**4)))
    for (di, delta), (w, (lo, hi)) in [((0, 2), (0, (100, 1000))), ((1, 5), (1, (1000, 10**4)))]:
        inside = (t >= lo) & (t <= hi)
        per_sample = [np.polyfit(np.log(t[inside]), h[i, di, inside], 1)[0] for i in range(50)]
        row = slopes[(slopes["delta"] == delta) & (slopes["window"] == w)].iloc[0]
        assert row["slope"] == pytest.approx(np.mean(per_sample), rel=1e-10)
        assert row["se"] == pytest.approx(np.std(per_sample, ddof=1) / np.sqrt(50), rel=1e-10)
        assert row["law_log t"] == pytest.approx(1.0, rel=1e-12)
    pooled = slopes[(slopes["delta"] == 0) & (slopes["window"] == 1)].iloc[0]
    both = slopes[(slopes["delta"] > 0) & (slopes["window"] == 1)]["slope"]
    assert pooled["slope"] == pytest.approx(both.mean(), rel=1e-12)


def test_slope_ratio_is_one_for_the_exact_law_and_its_se_matches_the_spread():
    from sia_theory.gaussian.laws import local_slopes, slope_ratio

    t = log_spaced_integers(100, 10**5, 31)
    windows = ((100, 1000), (10**4, 10**5))
    exact = local_slopes(np.tile(np.sqrt(np.log(t)), (3, 1, 1)), t, (2,), windows)
    assert slope_ratio(exact, 0, "sqrt(log t)")[0] == pytest.approx(1.0, rel=1e-12)
    rng = np.random.default_rng(8)
    ratios, ses = [], []
    for _ in range(200):
        noisy = 2 * np.sqrt(np.log(t)) + 0.5 * rng.standard_normal((400, 1, t.size))
        r, se = slope_ratio(local_slopes(noisy, t, (2,), windows))
        ratios.append(r)
        ses.append(se)
    assert np.std(ratios) == pytest.approx(np.mean(ses), rel=0.15)
    assert abs(np.mean(ratios) - 1.0) < 3 * np.std(ratios) / np.sqrt(200) + 0.01


def test_entropy_scaling_study_is_reproducible_and_settings_validate():
    from sia_theory.studies.si_entropy_scaling import EntropyScalingSettings, entropy_scaling_study

    settings = EntropyScalingSettings(ScaleInvariant(10.0), t_min=10, t_max=1000, n_t=9,
                                      deltas=(2, 5), samples=64,
                                      windows=((10, 100), (100, 1000)))
    first, again = (entropy_scaling_study(settings, seed=3) for _ in range(2))
    pd.testing.assert_frame_equal(first["entropy"], again["entropy"])
    pd.testing.assert_frame_equal(first["slopes"], again["slopes"])
    other = entropy_scaling_study(settings, seed=4)
    assert not np.allclose(first["entropy"]["H_mean"], other["entropy"]["H_mean"])
    assert set(first["slopes"]["delta"]) == {0, 2, 5}
    with pytest.raises(ValueError, match="^windows must lie"):
        EntropyScalingSettings(NoScale(), t_max=1000, windows=((10, 10**4),))
    with pytest.raises(ValueError, match="^samples"):
        EntropyScalingSettings(NoScale(), samples=1)
    with pytest.raises(ValueError, match="^settings of study .si_entropy_scaling. must"):
        entropy_scaling_study({"samples": 4}, seed=0)  # not a settings object


def test_context_sweep_study_seeds_transforms_independently():
    from sia_theory.studies.si_fig1_gaussian import (
        ContextSweepSettings,
        context_sweep_study,
        recent_mass_ratio,
    )

    settings = ContextSweepSettings(transforms=(("a", NoScale()), ("b", NoScale())),
                                    n_min=10, n_max=300, n_points=3, samples=200, ranges=())
    sweep = context_sweep_study(settings, seed=1)["sweep"]
    a, b = (sweep[sweep["transform"] == k]["mean"].to_numpy() for k in "ab")
    assert not np.allclose(a, b)  # same law, independent streams
    ratio, se = recent_mass_ratio(sweep, "a", "b")
    assert abs(ratio - 1.0) <= K_SE * se  # both put 100/300 on the recent tokens
