"""The committed claims table and the committed figure data report the same numbers: for every
SI claim with a figure, its ``value`` is recomputed from the figure's CSV with the same library
summary function the claim uses (one study, one definition).

``SIA_FIGURES_DIR`` / ``SIA_CLAIMS_DIR`` point the test at other outputs (e.g. a fresh full run
in a temporary folder)."""

import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sia_theory.gaussian.entropy import fit_growth_laws
from sia_theory.gaussian.laws import log_power_fits
from sia_theory.studies.si_fig1_gaussian import recent_mass_ratio

ROOT = Path(__file__).resolve().parents[2]
FIGURES = Path(os.environ.get("SIA_FIGURES_DIR", ROOT / "figures"))
CLAIMS = Path(os.environ.get("SIA_CLAIMS_DIR", ROOT / "paper_checks" / "results")) / "claims.csv"


def claim_row(claim_id: str) -> pd.Series:
    table = pd.read_csv(CLAIMS)
    if "value" not in table.columns:
        pytest.fail("claims.csv is in the old format (no value column): regenerate it with "
                    "`make check` before comparing it with the figures")
    rows = table[table["id"] == claim_id]
    assert len(rows) == 1, f"{claim_id} missing from {CLAIMS}"
    return rows.iloc[0]


def pooled_last_slope(slopes: pd.DataFrame) -> float:
    pooled = slopes[slopes["delta"] == 0].sort_values("window")
    return float(pooled.iloc[-1]["slope"])


CASES = {
    # claim: (figure CSV, value recomputed from it by the claim's own summary function)
    "SI-7": ("si_fig2_entropy_scaling_exact.csv", lambda f: float(log_power_fits(f)["q"].mean())),
    "SI-8": ("si_fig6_standard_entropy_slopes.csv", pooled_last_slope),
    "SI-9": ("si_fig1_gaussian.csv",
             lambda f: recent_mass_ratio(f, "Scale-invariant (τ = 10)", "LogN (s = 0.4)")[0]),
}


@pytest.mark.parametrize("claim_id", sorted(CASES))
def test_claim_value_equals_the_value_recomputed_from_its_figure_data(claim_id):
    row = claim_row(claim_id)
    csv, summary = CASES[claim_id]
    figure_value = summary(pd.read_csv(FIGURES / csv))
    assert np.isclose(row["value"], figure_value, rtol=1e-9, atol=0), (
        f"{claim_id}: claims.csv value {row['value']!r} but {csv} gives {figure_value!r}")


@pytest.mark.parametrize("claim_id, stem", [("SI-7", "si_fig2_entropy_scaling"),
                                            ("SI-8", "si_fig6_standard_entropy")])
def test_entropy_claims_quote_the_r2_of_their_figure(claim_id, stem):
    """The R² the row quotes are the ones the figure's data give (SI-7 once quoted 0.9950
    while Fig. 2's data gave 0.9979)."""
    row = claim_row(claim_id)
    fits = fit_growth_laws(pd.read_csv(FIGURES / f"{stem}_entropy.csv"))
    quoted = {(int(d), law): float(v) for d, a, b in re.findall(
        r"Δ=(\d+): R² √log (\d\.\d+) vs log (\d\.\d+)", row["detail"])
        for law, v in (("sqrt(log t)", a), ("log t", b))}
    assert quoted, f"{claim_id} quotes no R² in its detail: {row['detail']!r}"
    for fit in fits.itertuples():
        assert quoted[(fit.delta, fit.law)] == pytest.approx(fit.r2, abs=5e-5)


def test_si7_decision_on_the_committed_figure_data():
    """SI-7's three inputs all come from Fig. 2's committed data (exact route, brute force,
    sampler): the verdict the full table must show is decided by them alone."""
    from sia_theory.claims.si_entropy_growth import decide_weak_sparsity
    from sia_theory.studies.si_entropy_extension import route_z_scores

    stem = FIGURES / "si_fig2_entropy_scaling"
    exact = pd.read_csv(f"{stem}_exact.csv")
    z_scores = pd.concat([route_z_scores(pd.read_csv(f"{stem}_{key}.csv"), exact)
                          for key in ("entropy", "asymptotic")], ignore_index=True)
    m = decide_weak_sparsity(log_power_fits(exact), z_scores, pd.read_csv(f"{stem}_slopes.csv"))
    assert m.verdict == "PASS", m.measured
    assert 0.45 < m.ci_low <= m.value <= m.ci_high < 0.55
