"""One study, one definition: for every CAS claim with a figure, the committed claims table
(``paper_checks/results/claims.csv``) reports the number that the claim's own summary and
decision functions compute from the committed figure data (``figures/<stem>_*.csv``).

Both sides must come from one run (same seed, both full or both quick: checked against the
figure's JSON and the table's header). ``SIA_CLAIMS_DIR`` and ``SIA_FIGURES_DIR`` point the test
at another table or figure folder (e.g. a fresh ``python -m paper_checks --out DIR`` run).
"""

import json
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sia_theory.claims import cas as C1
from sia_theory.claims import cas_near_simplex as C
from sia_theory.studies.cas_depth import summarize_depth
from sia_theory.studies.cas_fig1_phase_diagram import summarize_phase_diagram
from sia_theory.studies.cas_fig2_jacobian import summarize_jacobian_sweep
from sia_theory.studies.cas_finite_n import summarize_finite_n
from sia_theory.studies.cas_sparsity import summarize_sparsity
from sia_theory.studies.cas_transition import summarize_transition

ROOT = Path(__file__).resolve().parents[2]
CLAIMS_DIR = Path(os.environ.get("SIA_CLAIMS_DIR", ROOT / "paper_checks" / "results"))
FIGURES_DIR = Path(os.environ.get("SIA_FIGURES_DIR", ROOT / "figures"))


def _finite(frames, params):
    return summarize_finite_n(frames["token_checks"], frames["matched"])


def _cas1(frames, params):
    limits = frames["limits"][frames["limits"]["alpha"] == 0]
    return C1.decide_cas1(limits, _finite(frames, params)["cos_error"][0.0], True)


def _cas2(frames, params):
    limits = frames["limits"][frames["limits"]["alpha"] > 0]
    errors = _finite(frames, params)["cos_error"]
    return C1.decide_cas2(limits, max(v for a, v in errors.items() if a > 0), True)


# claim → (figure stem, data keys, its value recomputed from the figure data, verdict decided by
# the figure data alone)
FROM_FIGURE = {
    "CAS-1": ("cas_finite_n", ("limits", "token_checks", "matched"), _cas1, False),
    "CAS-2": ("cas_finite_n", ("limits", "token_checks", "matched"), _cas2, False),
    "CAS-3": ("cas_finite_n", ("token_checks", "matched"),
              lambda f, p: C1.decide_cas3(_finite(f, p), 0.0, True), False),
    "CAS-4": ("cas_transition", ("draws", "windows"),
              lambda f, p: C.decide_cas4(summarize_transition(f["draws"], f["windows"])), True),
    "CAS-5": ("cas_fig1_phase_diagram", ("transition", "scaling"),
              lambda f, p: C.decide_cas5({**summarize_phase_diagram(f["transition"],
                                                                    f["scaling"]),
                                          "rho": p["settings"]["rho"]}), True),
    "CAS-6": ("cas_fig2_jacobian", ("eta",),
              lambda f, p: C.decide_cas6(summarize_jacobian_sweep(f["eta"],
                                                                  p["settings"]["rho"])), True),
    "CAS-7": ("cas_sparsity", ("gaussian",),
              lambda f, p: C.decide_cas7(summarize_sparsity(f["gaussian"])), True),
    "CAS-8": ("cas_depth", ("gaussian",),
              lambda f, p: C.decide_cas8(summarize_depth(f["gaussian"])), True),
}


def claims_table():
    path = CLAIMS_DIR / "claims.csv"
    if not path.exists():
        pytest.fail(f"no claims table at {path}")
    table = pd.read_csv(path)
    if "value" not in table.columns:
        pytest.fail("the committed claims.csv predates the numeric columns (value, ci_low, "
                    "ci_high, ...); regenerate it with `make check` to run this test")
    header = (CLAIMS_DIR / "claims.md").read_text().splitlines()[0]
    match = re.match(r"# Paper claims: (full|quick \(CI\)) run, seed (\d+)", header)
    assert match, f"unexpected claims.md header {header!r}"
    return table.set_index("id"), match.group(1) != "full", int(match.group(2))


@pytest.mark.parametrize("claim_id", sorted(FROM_FIGURE))
def test_claim_reports_the_number_of_its_figure_data(claim_id):
    table, quick, seed = claims_table()
    if claim_id not in table.index:
        pytest.fail(f"{claim_id} is not in {CLAIMS_DIR / 'claims.csv'}")
    stem, keys, recompute, verdict_from_figure = FROM_FIGURE[claim_id]
    params = json.loads((FIGURES_DIR / f"{stem}.json").read_text())["parameters"]
    assert (params["quick"], params["seed"]) == (quick, seed), (
        f"figures/{stem} ({'quick' if params['quick'] else 'full'}, seed {params['seed']}) and the "
        f"claims table ({'quick' if quick else 'full'}, seed {seed}) come from different runs")
    frames = {key: pd.read_csv(FIGURES_DIR / f"{stem}_{key}.csv") for key in keys}
    measured = recompute(frames, params)
    row = table.loc[claim_id]
    for column in ("value", "ci_low", "ci_high"):
        expected, got = float(row[column]), getattr(measured, column)
        if np.isnan(expected):
            assert np.isnan(got), f"{claim_id} {column}: table nan, figure data {got}"
        else:
            assert got == pytest.approx(expected, rel=1e-9, abs=1e-15), (
                f"{claim_id} {column}: claims table {expected!r}, figure data {got!r}")
    if verdict_from_figure:
        assert measured.verdict == row["verdict"]
