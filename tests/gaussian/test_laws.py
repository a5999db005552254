"""sia_theory.gaussian.laws, exercised by its own name: local slopes, the growth-law classifier
and the (log t)^q fits on synthetic curves whose law is known by construction."""

import numpy as np
import pandas as pd
import pytest

from sia_theory.gaussian.laws import (
    classify_entropy_law,
    entropy_law_evidence,
    local_slopes,
    log_power_fits,
    slope_ratio,
)

T = 2.0 ** np.arange(1, 61)
WINDOWS = [(2, 1e4), (1e4, 1e9), (1e9, 1.2e18)]


def _samples(curve, noise=1e-3, samples=64, seed=0):
    """Per-sample curves (samples, 1 delta, t): `curve(t)` plus seeded noise."""
    rng = np.random.default_rng(seed)
    return curve(T)[None, None, :] + noise * rng.standard_normal((samples, 1, T.size))


@pytest.mark.parametrize(("curve", "law"), [
    (lambda t: 0.3 * np.log(t), "logarithmic"),
    (lambda t: 2.0 * np.sqrt(np.log(t)), "sqrt-log"),
    (lambda t: 1.0 - 1.0 / np.log(t), "bounded"),
])
def test_classifier_recovers_the_law(curve, law):
    slopes = local_slopes(_samples(curve), T, [2], WINDOWS)
    assert classify_entropy_law(slopes) == law


def test_local_slope_of_a_log_line_is_its_prefactor():
    slopes = local_slopes(_samples(lambda t: 0.3 * np.log(t)), T, [2], WINDOWS)
    assert slopes["slope"].to_numpy() == pytest.approx(0.3, abs=1e-4)
    ratio, _ = slope_ratio(slopes, 0, "log t")
    assert ratio == pytest.approx(1.0, abs=1e-3)


def test_sqrt_log_evidence_exponent_is_one_half():
    """d√(log t)/d log t = (log t)^{-1/2}/2: the decay exponent p = 1/2."""
    ev = entropy_law_evidence(local_slopes(_samples(lambda t: np.sqrt(np.log(t)), noise=1e-5),
                                           T, [2], WINDOWS))
    assert ev.growing and ev.falling and ev.like_sqrt
    assert ev.exponent == pytest.approx(0.5, abs=0.05)


def test_log_power_fit_recovers_c_b_q():
    t = np.logspace(2, 30, 40)
    frame = pd.DataFrame({"delta": 2, "t": t, "H_exact": 1.0 + 2.0 * np.log(t) ** 0.5})
    fit = log_power_fits(frame, t_mins=(1e2,)).iloc[0]
    assert (fit["c"], fit["b"], fit["q"]) == pytest.approx((1.0, 2.0, 0.5), rel=1e-5)


def test_bad_input_named():
    with pytest.raises(ValueError, match=r"^h "):
        local_slopes(np.zeros((1, 1, T.size)), T, [2], WINDOWS)
    with pytest.raises(ValueError, match="windows"):
        local_slopes(_samples(np.log), T, [2], [(1e20, 1e21)])
    slopes = local_slopes(_samples(np.log), T, [2], WINDOWS)
    with pytest.raises(ValueError, match=r"^z "):
        entropy_law_evidence(slopes, z=0.0)
