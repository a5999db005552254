"""The phase-plane study: its crossing rule by hand, its Poisson-limit boundaries against the
Poisson limit drawn here from its definition, its Monte Carlo boundaries against those, and its
EXT-4 points identical to EXT-4's own study."""

import math

import numpy as np
import pytest

from sia_theory._infra.seeding import rng_for
from sia_theory.studies.ext_phase_plane import PhasePlaneSettings, crossing, phase_plane_study
from sia_theory.studies.ext_universality import UniversalitySettings, universality_study

SMALL = dict(dims=(3,), ns=(64, 256, 1024), lams=tuple(np.geomspace(0.05, 0.2, 13)) + (30.0,),
             samples=400, limit_samples=3000, ext4_dims=(2,), ext4_ns=(256, 512, 1024),
             ext4_draws=2, ext4_queries=16, cas5_ns=(128, 256, 512), cas5_draws=2,
             cas5_queries=16)


@pytest.fixture(scope="module")
def small():
    return phase_plane_study(PhasePlaneSettings(**SMALL), seed=0)


def test_crossing_is_linear_in_log_lambda():
    assert crossing([1.0, 10.0, 100.0], [0.0, 0.5, 1.0], 0.25) == pytest.approx(10**0.5)
    assert crossing([1.0, 10.0, 100.0], [0.0, 0.5, 1.0], 0.75) == pytest.approx(10**1.5)
    assert math.isnan(crossing([1.0, 10.0], [0.2, 0.3], 0.5))  # never reached
    assert math.isnan(crossing([1.0, 10.0], [0.6, 0.7], 0.5))  # reached before the grid


def _poisson_top_mass(lam, rows=20000, points=400, seed=11):
    """S² (k = 2): the rescaled gaps are the arrival times Γ_i of a unit Poisson process
    (v = Γ^{2/k} = Γ), so the nearest key's mass is 1/(1 + Σ_{i≥2} e^{−λ(Γ_i − Γ_1)}) and the
    Γ_i − Γ_1 are again Poisson arrival times (memoryless)."""
    rng = rng_for(seed, "tests.phase_plane.poisson")
    gaps = np.cumsum(rng.exponential(size=(rows, points)), axis=1)
    mass = 1 / (1 + np.exp(-lam * gaps).sum(axis=1))
    return mass.mean(), mass.std(ddof=1) / math.sqrt(rows)


def test_the_limit_boundary_is_where_the_poisson_limit_holds_a_tenth(small):
    lim = small["limits"].set_index("level").loc[0.1]
    assert lim["lam_limit_low"] < lim["lam_limit"] < lim["lam_limit_high"]
    mean, se = _poisson_top_mass(lim["lam_limit"])
    half = (lim["lam_limit_high"] - lim["lam_limit_low"]) / 2 / lim["lam_limit"]
    slope = 0.1  # d(mass)/d(log λ) near mass 0.1: 0.092 by these Poisson draws (λ = 0.095 … 0.11)
    assert abs(mean - 0.1) < 4 * se + 2 * half * slope, (mean, se, lim.to_dict())


def test_monte_carlo_boundaries_on_s2_hold_the_theory(small):
    b = small["boundaries"]
    sub = b[b["level"] == 0.1]
    assert len(sub) == 3 and sub["ratio"].notna().all()
    assert ((sub["ratio_low"] <= 1.04) & (sub["ratio_high"] >= 0.96)).all(), sub.to_string()
    fit = small["fits"].set_index("source").loc["sphere d=3 boundary 0.1"]
    assert fit["p_ci_low"] < 1 < fit["p_ci_high"] and abs(fit["p"] - 1) < 0.05


def test_ext4_points_are_ext4s_own_draws(small):
    settings = UniversalitySettings(ns=SMALL["ext4_ns"], dims=(2,), spreads=(0.1,),
                                    draws=2, queries=16)
    draws = universality_study(settings, seed=0)["draws"]
    theirs = draws[draws["kind"] == "gaussian"].set_index(["n", "draw"])["beta_50"]
    pts = small["points"]
    ours = pts[pts["source"] == "EXT-4 gaussian d=2"].set_index(["n", "draw"])["beta"]
    assert ours.sort_index().to_numpy() == pytest.approx(theirs.sort_index().to_numpy(),
                                                           rel=1e-12)


@pytest.mark.parametrize("field, value", [("dims", (1,)), ("lams", (1.0, 0.5, 2.0)),
                                          ("levels", (0.9, 0.1)), ("ns", (64, 128)),
                                          ("samples", 1)])
def test_bad_settings_name_the_parameter(field, value):
    with pytest.raises(ValueError, match=f"^{field}"):
        PhasePlaneSettings(**{field: value})
