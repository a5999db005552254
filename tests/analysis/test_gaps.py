"""analyze()'s gap-counting critical scale (sia_theory.analysis.report.transform_critical_scale):
a constant temperature c divides β_c by exactly c (same logits), iid N(0, 1) logits grow like
the REM's a_n, and the report carries the table and the phase."""

import math

import numpy as np
import pytest

from sia_theory import NoScale, analyze
from sia_theory.analysis.report import transform_critical_scale
from sia_theory.gaussian.phase import rem_max_location
from sia_theory.zoo import Temperature


def test_a_temperature_divides_the_critical_scale():
    """L = c·S: every half-mass point of the same rows is β_½(S)/c, so β_c scales by 1/c
    and the exponents do not move."""
    base = transform_critical_scale(NoScale(), 2**11, rows=16, seed=4, points=3)
    hot = transform_critical_scale(Temperature(8.0), 2**11, rows=16, seed=4, points=3)
    np.testing.assert_allclose(hot.table["beta_c"] * 8.0, base.table["beta_c"], rtol=1e-9)
    assert hot.power["value"] == pytest.approx(base.power["value"], rel=1e-9)


def test_no_scale_logits_follow_the_rem_location():
    """iid N(0, 1) logits: β_c/a_n stays within 25 % of its mean over n = 2⁸ … 2¹⁴ (the
    half-mass point is a_n times an O(1) Poisson–Dirichlet functional)."""
    fit = transform_critical_scale(NoScale(), 2**14, rows=64, seed=0, points=4)
    ratio = fit.table["beta_c"] / [float(rem_max_location(n)) for n in fit.table["n"]]
    assert np.all(np.abs(ratio / ratio.mean() - 1) < 0.25)
    assert 1.0 < ratio.mean() < 3.0


def test_report_carries_the_gap_scale_and_phase():
    report = analyze(Temperature(20.0), quick=True, zoo=False, n_ctx=2**12)
    assert report.gap_phase == "frozen"  # 20·N(0, 1) logits: β_c ≈ 2a_n/20 ≈ 0.3
    assert "gap_scale" in report.tables()
    assert "Gap-counting critical scale" in report.markdown()
    assert math.isfinite(report.gaps.power["value"])
