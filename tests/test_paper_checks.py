"""The claims framework: every row can fail (a negative control per claim, seen to FAIL), the
quick table passes for three seeds, and the CSV carries the numbers.

The quick table of seed 0 is computed once per ``make test``: the Makefile runs ``sia-theory
check --quick`` first and points ``SIA_QUICK_CLAIMS`` at its CSV, which the test reads (run
alone, the test computes it). Seeds 1 and 2 run each claim that draws random numbers on its
own, so the rows spread over the test workers."""

import math
import os
from pathlib import Path

import pandas as pd
import pytest

import paper_checks
from paper_checks.core import COLUMNS, NEGATIVE_CONTROLS, REGISTRY, STATED, run_claims, write_table

SEEDED = sorted(c.claim_id for c in REGISTRY.values() if c.seeded)

NUMERIC = ["value", "ci_low", "ci_high", "target", "tolerance", "seconds"]


def test_every_claim_names_an_alternative_and_has_a_negative_control():
    assert REGISTRY, "no claims registered"
    missing = sorted(c for c in REGISTRY if STATED not in NEGATIVE_CONTROLS.get(c, {}))
    assert not missing, f"claims without a control of their stated alternative: {missing}"
    assert not sorted(set(NEGATIVE_CONTROLS) - set(REGISTRY))
    assert all(c.alternative for c in REGISTRY.values())


CONTROLS = sorted((claim_id, name) for claim_id, named in NEGATIVE_CONTROLS.items()
                  for name in named)


@pytest.mark.parametrize("claim_id, name", CONTROLS)
def test_negative_control_fails(claim_id, name):
    """The claim's decision function, fed the alternative law, must say FAIL."""
    measurement = NEGATIVE_CONTROLS[claim_id][name]()
    assert isinstance(measurement, paper_checks.Measurement)
    assert measurement.verdict == "FAIL", f"{claim_id} ({name}): {measurement.measured}"


def test_quick_table_has_no_fail_or_error_row():
    stored = os.environ.get("SIA_QUICK_CLAIMS")
    if stored:  # the table `make test` has just written (quick, seed 0)
        header = (Path(stored).parent / "claims.md").read_text().splitlines()[0]
        assert header == "# Paper claims: quick (CI) run, seed 0", header
        table = pd.read_csv(stored)
    else:
        table = run_claims(quick=True, seed=0, progress=False)
    bad = table[table["verdict"].isin(["FAIL", "ERROR"])]
    assert bad.empty, bad[["id", "verdict", "measured"]].to_string()
    assert set(table["id"]) == set(REGISTRY)


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("claim_id", SEEDED)
def test_quick_claim_holds_for_other_seeds(claim_id, seed):
    """The quick verdicts are not tuned to seed 0 (claims that draw no random numbers give the
    same row for every seed and are not repeated)."""
    row = run_claims([claim_id], quick=True, seed=seed, progress=False).iloc[0]
    assert row["verdict"] not in ("FAIL", "ERROR"), row["measured"]


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
