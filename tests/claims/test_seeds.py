"""The between-seed statistics of the training claims (sia_theory.claims.seeds) against
scipy's own t quantiles and hand-computed intervals."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from sia_theory.claims.seeds import Interval, leave_one_out, losses, paired, t_interval


def test_t_interval_is_students_from_its_definition():
    x = np.array([3.1, 3.3, 3.0, 3.4])
    iv = t_interval(x)
    sd = math.sqrt(sum((v - x.mean()) ** 2 for v in x) / 3)
    half = 3.182446305284263 * sd / 2  # t(0.975, 3), from a table
    assert iv.mean == pytest.approx(3.2) and iv.half == pytest.approx(half, rel=1e-9)
    lo, hi = stats.t.interval(0.95, 3, loc=x.mean(), scale=stats.sem(x))
    assert (iv.low, iv.high) == pytest.approx((lo, hi), rel=1e-12)


def test_one_seed_has_no_interval_and_resolves_nothing():
    iv = t_interval([2.0])
    assert iv.n == 1 and math.isinf(iv.half)
    assert not iv.above(-100) and not iv.below(100) and not iv.within(100)
    assert "no interval" in str(iv)


@pytest.mark.parametrize("bad", [[], [1.0, float("nan")], [[1.0, 2.0]]])
def test_bad_values_are_refused(bad):
    with pytest.raises(ValueError, match="values"):
        t_interval(bad)


def test_paired_uses_only_the_shared_seeds_and_the_differences_spread():
    a = pd.Series([1.0, 2.0, 3.0, 9.0], index=[0, 1, 2, 5])
    b = pd.Series([0.5, 1.4, 2.6], index=[0, 1, 2])
    iv = paired(a, b)
    direct = t_interval([0.5, 0.6, 0.4])
    assert (iv.mean, iv.low, iv.high) == pytest.approx((direct.mean, direct.low, direct.high),
                                                       rel=1e-12)
    assert iv.n == 3
    with pytest.raises(ValueError, match="share no seed"):
        paired(a, pd.Series([1.0], index=[7]))


def test_pairing_removes_a_shared_seed_effect():
    shared = np.array([0.3, -0.2, 0.1, -0.4])
    a = pd.Series(3.0 + shared + [0.01, -0.01, 0.0, 0.0])
    b = pd.Series(3.1 + shared)
    assert paired(a, b).above(-0.2) and paired(a, b).below(0.0)  # resolved: a lower by 0.1
    unpaired = t_interval(a).half + t_interval(b).half
    assert paired(a, b).half < unpaired / 10


def test_losses_selects_tau_for_si_schemes_only():
    frame = pd.DataFrame({"scheme": ["si-p-rope", "si-p-rope", "p-rope"], "seed": [0, 0, 0],
                          "tau": [10.0, 1.0, np.nan], "multiple": [1, 1, 1],
                          "loss": [3.0, 3.5, 4.0]})
    assert losses(frame, "si-p-rope", 1, 1.0).tolist() == [3.5]
    assert losses(frame, "p-rope", 1).tolist() == [4.0]
    with pytest.raises(ValueError, match="no validation of nope"):
        losses(frame, "nope", 1)


def test_leave_one_out_needs_three_seeds():
    frame = pd.DataFrame({"seed": [0, 1]})
    assert leave_one_out(frame, lambda f: None) == {}
    frame = pd.DataFrame({"seed": [0, 1, 2]})

    class V:
        def __init__(self, v):
            self.verdict = v

    out = leave_one_out(frame, lambda f: V("PASS" if 2 in set(f["seed"]) else "FAIL"))
    assert out == {0: "PASS", 1: "PASS", 2: "FAIL"}


def test_interval_str_shows_the_bounds():
    assert str(Interval(0.1, 0.05, 0.15, 0.05, 4)) == "+0.100 [+0.050, +0.150]"


def test_an_untested_decision_with_a_seed_left_out_is_reported_not_a_flip():
    from sia_theory.claims.core import Measurement
    from sia_theory.claims.seeds import with_seed_checks

    frame = pd.DataFrame({"seed": [0, 1, 2, 3]})

    def decide(f):  # PASS on four seeds, too few to resolve on three
        return Measurement("PASS" if len(f) == 4 else "UNTESTED", "m")

    m = with_seed_checks(decide(frame), frame, decide)
    assert m.verdict == "PASS" and "without seed 0 UNTESTED" in m.detail

    def flips(f):  # FAIL without seed 3
        return Measurement("FAIL" if 3 not in set(f["seed"]) else "PASS", "m")

    assert with_seed_checks(flips(frame), frame, flips).verdict == "UNTESTED"
