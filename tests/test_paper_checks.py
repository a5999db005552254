"""The claims framework: every row can fail (a negative control per claim, seen to FAIL), the
quick table passes for three seeds, and the CSV carries the numbers."""

import math

import pandas as pd
import pytest

import paper_checks
from paper_checks.core import COLUMNS, NEGATIVE_CONTROLS, REGISTRY, run_claims, write_table

NUMERIC = ["value", "ci_low", "ci_high", "target", "tolerance", "seconds"]


def test_every_claim_names_an_alternative_and_has_a_negative_control():
    assert REGISTRY, "no claims registered"
    missing = sorted(set(REGISTRY) - set(NEGATIVE_CONTROLS))
    assert not missing, f"claims without a negative control: {missing}"
    assert not sorted(set(NEGATIVE_CONTROLS) - set(REGISTRY))
    assert all(c.alternative for c in REGISTRY.values())


@pytest.mark.parametrize("claim_id", sorted(NEGATIVE_CONTROLS))
def test_negative_control_fails(claim_id):
    """The claim's decision function, fed the alternative law, must say FAIL."""
    measurement = NEGATIVE_CONTROLS[claim_id]()
    assert isinstance(measurement, paper_checks.Measurement)
    assert measurement.verdict == "FAIL", f"{claim_id}: {measurement.measured}"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_quick_table_has_no_fail_or_error_row(seed):
    table = run_claims(quick=True, seed=seed, progress=False)
    bad = table[table["verdict"].isin(["FAIL", "ERROR"])]
    assert bad.empty, bad[["id", "verdict", "measured"]].to_string()
    assert set(table["id"]) == set(REGISTRY)


def test_written_csv_carries_the_numeric_columns(tmp_path):
    cheap = sorted(REGISTRY)[:2]
    table = run_claims(cheap, quick=True, seed=0, progress=False)
    _, csv = write_table(table, tmp_path, quick=True, seed=0)
    read = pd.read_csv(csv)
    assert list(read.columns) == COLUMNS
    for column in NUMERIC:
        assert pd.api.types.is_float_dtype(read[column]) or pd.api.types.is_integer_dtype(
            read[column]), column
    for row, original in zip(read.itertuples(), table.itertuples()):
        for column in NUMERIC[:-1]:
            a, b = getattr(row, column), getattr(original, column)
            assert (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-12)
    assert read["value"].notna().all(), "every row reports a headline value"
