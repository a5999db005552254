"""The power analysis of the trained rows (sia_theory.claims.power): the Monte Carlo decision
probability against the noncentral t written out independently, the seeds needed, the committed
table regenerated from the committed pilots, and UNDERPOWERED against UNTESTED."""

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import nct
from scipy.stats import t as student_t

from sia_theory.claims import power as P
from sia_theory.claims import train as T
from sia_theory.claims import train_controls as C
from sia_theory.claims.core import Measurement

ROOT = Path(__file__).resolve().parents[2]


def _analytic_one_sided(mean, sd, margin, n, level=0.95):
    """P(the t interval lies wholly above or wholly below ``margin``) for normal per-seed
    values: (x̄ − m)/(s/√n) is noncentral t with n − 1 degrees of freedom and noncentrality
    (μ − m)√n/σ; the interval lies above m iff it exceeds t_crit, below iff it is under −t_crit."""
    crit = student_t.ppf(0.5 + level / 2, n - 1)
    delta = (mean - margin) * math.sqrt(n) / sd
    return nct.sf(crit, n - 1, delta) + nct.cdf(-crit, n - 1, delta)


@pytest.mark.parametrize("relation", ["exceeds", "not_beaten", "at_most", "at_least"])
@pytest.mark.parametrize("mean, sd, n", [(0.06, 0.02, 3), (0.05, 0.03, 5), (0.02, 0.01, 4),
                                         (0.035, 0.02, 6), (-0.01, 0.05, 8)])
def test_decision_probability_matches_the_noncentral_t(relation, mean, sd, n):
    mc = P.decision_probability(relation, mean, sd, 0.035, n)
    exact = _analytic_one_sided(mean, sd, 0.035, n)
    se = math.sqrt(exact * (1 - exact) / P.DRAWS) + 1e-12
    assert abs(mc - exact) <= 4 * se + 1e-9, (mc, exact, se)  # within 4 standard errors


def test_within_decision_probability_against_brute_force():
    """|d| ≤ tol: held inside the band, contradicted wholly outside one side; an independent
    loop over the same number of draws from another stream agrees within 4 s.e."""
    rng = np.random.default_rng(12345)
    mean, sd, n, tol = 0.01, 0.02, 5, 0.035
    crit = student_t.ppf(0.975, n - 1)
    hits = 0
    for _ in range(20000):
        x = rng.normal(mean, sd, n)
        m, h = x.mean(), crit * x.std(ddof=1) / math.sqrt(n)
        hits += (-tol <= m - h and m + h <= tol) or m - h > tol or m + h < -tol
    p = hits / 20000
    mc = P.decision_probability("within", mean, sd, tol, n)
    se = math.sqrt(p * (1 - p) * (1 / 20000 + 1 / P.DRAWS))
    assert abs(mc - p) <= 4 * se


def test_seeds_needed_is_the_first_n_reaching_the_power():
    n = P.seeds_needed("not_beaten", 0.0, 0.03, 0.035)
    assert n is not None and n > 2
    assert P.decision_probability("not_beaten", 0.0, 0.03, 0.035, n) >= P.POWER
    assert P.decision_probability("not_beaten", 0.0, 0.03, 0.035, n - 1) < P.POWER
    # a pilot mean at its margin is never decided: None, not a large number
    assert P.seeds_needed("exceeds", 0.035, 0.01, 0.035) is None
    # a larger spread never needs fewer seeds
    assert P.seeds_needed("not_beaten", 0.0, 0.04, 0.035) >= n


@pytest.mark.parametrize("kwargs, name", [
    ({"relation": "bigger"}, "relation"), ({"sd": -1.0}, "sd"), ({"n": 1}, "n"),
    ({"mean": float("nan")}, "mean"), ({"margin": float("inf")}, "margin")])
def test_bad_input_names_the_parameter(kwargs, name):
    args = {"relation": "exceeds", "mean": 0.1, "sd": 0.01, "margin": 0.035, "n": 3, **kwargs}
    with pytest.raises(ValueError, match=name):
        P.decision_probability(**args)


def _load_script():
    path = ROOT / "experiments" / "pilots" / "train_power.py"
    spec = importlib.util.spec_from_file_location("train_power", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_table_and_seeds_needed_come_from_the_committed_pilots(tmp_path):
    script = _load_script()
    fresh = script.main(out_dir=tmp_path)
    committed = (ROOT / "figures" / "train_power.csv").read_text()
    assert (tmp_path / "train_power.csv").read_text() == committed
    assert (tmp_path / "train_pilot_verdicts.csv").read_text() == (
        ROOT / "figures" / "train_pilot_verdicts.csv").read_text()
    assert script.seeds_needed(fresh) == P.SEEDS_NEEDED


def _untested(detail="premise unmet"):
    return Measurement("UNTESTED", "m", 0.0, detail=detail)


def test_an_unresolved_row_below_its_needed_seeds_is_underpowered_not_untested():
    frame = C.synthetic_frame(noise=0.3)  # 4 seeds, wide: TRAIN-3 unresolved
    checks = T.subchecks_train3(frame)
    assert any(c.outcome == "unresolved" and c.name == "SI + RoPE near at L" for c in checks)
    m = P.sized(_untested(), "TRAIN-3", checks)
    assert m.verdict == "UNDERPOWERED"
    assert "SI + RoPE near at L (4 seeds; needs more than 32)" in m.detail
    # the same sub-checks with as many seeds as the table asks for the resolvable ones, and
    # only resolvable ones unresolved: UNTESTED stays (a premise, not the design's size)
    rows = T.subchecks_train2(frame)  # 4 seeds: as many as its sub-checks need (2 or 3)
    assert P.sized(_untested(), "TRAIN-2", rows).verdict == "UNTESTED"
    # a decided row stands whatever the design
    passed = Measurement("PASS", "m", 0.0)
    assert P.sized(passed, "TRAIN-3", checks) is passed


def test_each_sub_check_counts_its_own_seeds():
    """Side runs with 2 seeds beside Table 1 rows with 3: a sub-check on 2 seeds that needs 3
    makes the row UNDERPOWERED although the frame holds 3 seeds."""
    from sia_theory.claims.seeds import SubCheck, t_interval

    c = SubCheck("τ = 100", "not_beaten", t_interval([-0.1, 0.1]), 0.035)
    assert c.outcome == "unresolved" and P.SEEDS_NEEDED["TRAIN-4"]["τ = 100"] == 3
    assert P.underpowered("TRAIN-4", [c]) == [("τ = 100", 3, 2)]
    c3 = SubCheck("τ = 100", "not_beaten", t_interval([-0.1, 0.1, 0.2]), 0.035)
    assert P.underpowered("TRAIN-4", [c3]) == []
