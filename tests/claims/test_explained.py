"""The DIVERGES rows that arXiv 2605.08505 explains (CAS-5, EXT-4) say so in their detail, with
the citation, only when the measured numbers fit the published law; the other verdicts carry no
such sentence."""

import math
import os

import pandas as pd
import pytest

from sia_theory.claims import cas_near_simplex as C
from sia_theory.claims import explained, run_claims
from sia_theory.claims.ext_universality import EXT4_LABELS, decide_ext4, ext_4_law

CITATION = "arXiv 2605.08505"
CAS5_MEDIANS = {128: 2.72, 512: 2.72, 2048: 2.58, 8192: 1.97, 32768: 3.17}  # the full run's


def test_cas5_divergence_cites_the_sub_critical_local_average():
    summary = C.cas_5_alternative(sharp=True, smoothed=False)
    summary["beta50_by_n"] = {2: CAS5_MEDIANS}
    m = C.decide_cas5(summary)
    assert m.verdict == "DIVERGES"
    assert CITATION in m.detail and "local average" in m.detail
    # β*_n = (Cn)² on S¹: c = 4^{−1/2}/((1/2)·B(1/2, 1/2)) = 1/π, C = c·√2 (written out here)
    big_c = math.sqrt(2) / math.pi
    worst = max(b / (big_c * n) ** 2 for n, b in CAS5_MEDIANS.items())
    assert f"β₅₀/β*_n ≤ {worst:.2g}" in m.detail
    assert f"{(big_c * 128) ** 2:.3g} … {(big_c * 32768) ** 2:.3g}" in m.detail


@pytest.mark.parametrize("sharp, smoothed", [(True, True), (False, False)])
def test_cas5_pass_and_fail_cite_nothing(sharp, smoothed):
    assert C.decide_cas5(C.cas_5_alternative(sharp=sharp, smoothed=smoothed)).detail == ""


def _ext4_with_low_d(power, low, high):
    summary = ext_4_law()
    row = summary["class"] == EXT4_LABELS["low_d"]
    summary.loc[row, ["k", "k_ci_low", "k_ci_high"]] = (15.0, 14.0, 16.4)  # not O(1)
    summary.loc[row, ["power_n", "power_ci_low", "power_ci_high"]] = (power, low, high)
    return summary


def test_ext4_divergence_cites_the_sphere_law_when_the_exponent_holds_it():
    m = decide_ext4(_ext4_with_low_d(2.05, 1.89, 2.20), **EXT4_LABELS)
    assert m.verdict == "DIVERGES"
    assert CITATION in m.detail and "n^2.05 [1.89, 2.20]" in m.detail


@pytest.mark.parametrize("power, low, high", [(1.0, 0.9, 1.1), (2.5, 2.3, 2.7), (1.6, 1.5, 1.7)])
def test_ext4_divergence_off_the_sphere_law_cites_nothing(power, low, high):
    """A low-d exponent whose interval misses 2/(d − 1) = 2 (log-like, +25 %, −20 %) still
    DIVERGES, but the published law does not explain it."""
    m = decide_ext4(_ext4_with_low_d(power, low, high), **EXT4_LABELS)
    assert m.verdict == "DIVERGES" and m.detail == ""


def test_ext4_pass_cites_nothing():
    m = decide_ext4(ext_4_law(), **EXT4_LABELS)
    assert m.verdict == "PASS" and m.detail == ""


def test_quick_rows_carry_the_citation():
    stored = os.environ.get("SIA_QUICK_CLAIMS")
    ids = ["CAS-5", "EXT-4"]
    table = (pd.read_csv(stored) if stored
             else run_claims(ids, quick=True, seed=0, progress=False))
    for row in table[table["id"].isin(ids)].itertuples():
        assert row.verdict == "DIVERGES", (row.id, row.measured)
        assert CITATION in row.detail, (row.id, row.detail)


@pytest.mark.parametrize("call, name", [
    (lambda: explained.low_d_exponent(1, 2.0, 1.9, 2.1), "d"),
    (lambda: explained.sub_critical_average(1, {128: 2.7}), "d"),
    (lambda: explained.sub_critical_average(2, {128: float("nan")}), "beta50_by_n"),
    (lambda: explained.sub_critical_average(2, {}), "beta50_by_n")])
def test_bad_input_is_refused_naming_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_cas5_is_cited_only_below_the_sub_critical_band():
    """β₅₀ = 2.72 at n = 128 on S^1 is 8e-4·β*_n (cited); the same panel at 0.04·β*_n (above
    SPH-3's 0.01·β*_n band) is not."""
    assert "2605.08505" in explained.sub_critical_average(2, {128: 2.72, 512: 2.72})
    assert explained.sub_critical_average(2, {128: 2.72, 512: 2000.0}) == ""
