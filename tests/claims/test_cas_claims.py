"""Every CAS claim can fail: its negative control (the alternative law fed to the claim's pure
decision function) gives FAIL, and the same function gives PASS on data following the claim."""

import numpy as np
import pandas as pd
import pytest

from sia_theory.cas.config import PHASES
from sia_theory.claims import cas as C1
from sia_theory.claims import cas_near_simplex as C
from sia_theory.claims.core import NEGATIVE_CONTROLS, REGISTRY, STATED

CAS_IDS = [f"CAS-{i}" for i in range(1, 9)]


def test_every_cas_claim_names_its_alternative_and_has_a_control():
    for cid in CAS_IDS:
        assert REGISTRY[cid].alternative
        assert cid in NEGATIVE_CONTROLS


@pytest.mark.parametrize("cid", CAS_IDS)
def test_negative_control_fails(cid):
    assert NEGATIVE_CONTROLS[cid][STATED]().verdict == "FAIL"


def _limits(alpha, q, rhos=(0.2, 0.5, 0.8), error=0.0):
    return pd.DataFrame([{"rho": r, "alpha": alpha, "q": q, "phase": p,
                          "limit": C1.paper_limit(p, r, alpha, q) + error}
                         for r in rhos for p in PHASES])


def test_cas1_and_cas2_pass_on_the_paper_limits_and_fail_off_them():
    assert C1.decide_cas1(_limits(0.0, 1.0), 1e-14, True).verdict == "PASS"
    assert C1.decide_cas1(_limits(0.0, 1.0, error=1e-6), 1e-14, True).verdict == "FAIL"
    assert C1.decide_cas1(_limits(0.0, 1.0), 1e-14, False).verdict == "FAIL"
    assert C1.decide_cas2(_limits(0.5, 2.0), 1e-14, True).verdict == "PASS"
    assert C1.decide_cas2(_limits(0.5, 2.0), 1e-6, True).verdict == "FAIL"


def test_cas3_passes_when_near_simplex_eta_follows_the_finite_size_formula():
    simplex = {256: 0.316, 1024: 0.339, 4096: 0.361}
    genuine = {"matched": {n: {"eta": (1.02 * s, 1.02 * s - 0.003, 1.02 * s + 0.003),
                               "simplex": s, "at_gamma_c": 0.24} for n, s in simplex.items()},
               "matched_deviation": 0.02, "matched_growth": (0.046, 0.045),
               "eta_token_rel_error": 1e-13, "bare_limit": 0.246}
    assert C1.decide_cas3(genuine, 1e-12, True).verdict == "PASS"
    assert C1.decide_cas3(genuine, 1e-6, True).verdict == "FAIL"  # dense Jacobian disagrees
    assert C1.decide_cas3(C1.cas_3_alternative(), 1e-12, True).verdict == "FAIL"


@pytest.mark.parametrize("power", [0.5, 2.0])
def test_cas4_rejects_sqrt_log_and_log_squared(power):
    assert C.decide_cas4(C.cas_4_alternative(power)).verdict == "FAIL"


def test_cas4_accepts_beta_proportional_to_log_n():
    summary = C.cas_4_alternative(1.0)
    assert summary["k_ci_low"] < 1 < summary["k_ci_high"]
    assert C.decide_cas4(summary).verdict == "PASS"


def test_cas5_verdicts():
    assert C.decide_cas5(C.cas_5_alternative(sharp=True, smoothed=True)).verdict == "PASS"
    assert C.decide_cas5(C.cas_5_alternative(sharp=True, smoothed=False)).verdict == "DIVERGES"
    assert C.decide_cas5(C.cas_5_alternative(sharp=False, smoothed=False)).verdict == "FAIL"


def test_cas6_passes_when_the_jump_sharpens_with_d():
    by_d = {d: {"low": (0.01, 0.0, 0.02), "high": (1 - 1 / d, 0, 0), "high_error": 0.0,
                "slope": (s, s - 0.05, s + 0.05)} for d, s in ((16, 0.35), (256, 0.65))}
    genuine = {"by_d": by_d, "slope_difference": (0.3, 0.2, 0.4), "low_max": 0.01,
               "high_error_max": 0.0}
    assert C.decide_cas6(genuine).verdict == "PASS"


def test_cas7_passes_on_square_root_growth_at_criticality():
    fit = lambda k: {"slope": k, "ci_low": k - 0.05, "ci_high": k + 0.05}  # noqa: E731
    genuine = {p: {"exp_entropy": fit(k), "participation": fit(k)}
               for p, k in zip(PHASES, (1.0, 0.5, 0.0), strict=True)}
    assert C.decide_cas7(genuine).verdict == "PASS"


def test_cas8_verdicts():
    genuine = {**C.cas_8_alternative(), "super_drift_per_layer": (0.001, 0.0, 0.003),
               "super_median_total": 0.01, "super_runaway": 0.0}
    assert C.decide_cas8(genuine).verdict == "PASS"
    assert C.decide_cas8({**genuine, "super_runaway": 0.2}).verdict == "DIVERGES"
    assert C.decide_cas8({**genuine, "sub_final": (0.9, 0.88, 0.92)}).verdict == "FAIL"


def test_cas_measurements_carry_numbers():
    m = C.decide_cas4(C.cas_4_alternative(1.0))
    assert np.isfinite([m.value, m.ci_low, m.ci_high, m.target]).all()


def test_cas8_partial_drift_towards_collapse_is_not_preservation():
    """Super-critical draws all rising 20 % of the way to collapse (0.1 from ρ = 0.5, no
    runaway) are not preserved: DIVERGES, where the first decision passed them (its bar was
    half the way); a tenth of the way still passes."""
    assert C.decide_cas8(C._cas8_with(super_rise=0.2)).verdict == "DIVERGES"
    assert C.decide_cas8(C._cas8_with(super_rise=0.05)).verdict == "PASS"
