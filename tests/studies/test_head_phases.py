"""Head by head, the REM ratio and the gap-counting half-mass point against the measured entropy
(:mod:`sia_theory.studies.head_phases`): synthetic heads whose phase is known, written out here."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import brentq

from sia_theory.gaussian.phase import PHASE_BAND
from sia_theory.sphere.gaps import half_mass_beta
from sia_theory.studies.head_phases import (
    HeadPhaseSettings,
    compare_predictors,
    head_measures,
    head_phases,
)

ROW = 4096  # one query row: M = 2048, the window [M, 2M) is keys 1 … 2048
M = (ROW + 1) // 2


def gaussian_head(ratios, seed=0):
    """``(H, 1, ROW + 1)`` iid ``N(0, σ²)`` logits, ``σ = r·√(2 log M)`` per head."""
    sigma = np.asarray(ratios)[:, None, None] * math.sqrt(2 * math.log(M))
    return np.random.default_rng(seed).standard_normal((len(ratios), 1, ROW + 1)) * sigma


def window(logits, h=0):
    """The window's logits by distance ``[M, 2M)`` of head ``h`` (key ``ROW − t``)."""
    return logits[h, 0, ROW - np.arange(M, 2 * M)]


def half_mass_by_bisection(x):
    """``Σ_{j≠top} e^{−β(max − x_j)} = 1`` solved by bracketing (gaps.py's definition, written
    out with scipy's root finder instead of its Newton iteration)."""
    gaps = np.sort(x.max() - x)[1:]
    return brentq(lambda b: np.exp(-b * gaps).sum() - 1.0, 1e-9, 1e6, xtol=1e-13, rtol=1e-13)


def test_gaussian_heads_match_the_rem_and_the_gap_diagnostic():
    """iid Gaussian logits of known ``r``: σ and ``r`` as written out; ``β_½`` equal to
    :func:`sia_theory.sphere.gaps.half_mass_beta` of the window and to a bisection; the REM's liquid
    entropy ``H/log M = 1 − r²`` (``log Z = log M + σ²/2``, ``Σ p x = σ²``; both concentrate
    for ``r < 1/2``, where ``Σ p x``'s relative variance ``~ M^{4r² − 1}`` vanishes: checked at
    ``r = 0.2, 0.3``); both phase measures liquid at ``r <= 0.5``, frozen at ``r = 4``."""
    ratios = [0.2, 0.3, 0.5, 4.0]
    logits = gaussian_head(ratios)
    out = head_measures(logits, [ROW])
    for h, r in enumerate(ratios):
        x = window(logits, h)
        assert out["sigma"][h] == pytest.approx(x.std(), rel=1e-12)
        assert out["ratio"][h] == pytest.approx(x.std() / math.sqrt(2 * math.log(M)),
                                                rel=1e-12)
        assert out["ratio"][h] == pytest.approx(r, rel=0.05)
        assert out["beta_half"][h] == pytest.approx(half_mass_beta(x)[0], rel=1e-12)
        assert out["beta_half"][h] == pytest.approx(half_mass_by_bisection(x), rel=1e-9)
    for h in (0, 1):
        assert out["entropy_far"][h] == pytest.approx(1 - out["ratio"][h] ** 2, abs=0.01)
    assert out["rem_phase"].tolist() == ["liquid"] * 3 + ["frozen"]
    assert out["gap_phase"].tolist() == ["liquid"] * 3 + ["frozen"]


@pytest.mark.parametrize("factor, phase", [(0.5, "liquid"), (1.0, "critical"),
                                           (2.0, "frozen")])
def test_a_simplex_like_head_is_placed_by_its_gap_and_missed_by_the_rem(factor, phase):
    """One key ``c`` above ``M − 1`` equal others: ``β_½ = log(M − 1)/c`` exactly (gaps.py's
    simplex row), so ``c = factor·log(M − 1)`` puts the head at ``1/β_½ = factor``; its spread
    ``σ ≈ c/√M`` keeps the REM ratio liquid whatever ``c``. The top key's weight is
    ``e^c/(e^c + M − 1)``, written out."""
    c = factor * math.log(M - 1)
    logits = np.zeros((1, 1, ROW + 1))
    logits[0, 0, ROW - 3000] = c  # distance 3000, inside [M, 2M)
    out = head_measures(logits, [ROW]).iloc[0]
    assert out["beta_half"] == pytest.approx(math.log(M - 1) / c, rel=1e-10)
    assert out["gap_phase"] == phase and out["rem_phase"] == "liquid"
    w = math.exp(c) / (math.exp(c) + M - 1)
    entropy = -(w * math.log(w) + (1 - w) * math.log((1 - w) / (M - 1)))
    assert out["entropy_far"] == pytest.approx(entropy / math.log(M), rel=1e-9)


def test_the_gap_phase_band_is_the_analysis_reports_rule():
    """``1/β_½`` against ``1 ± PHASE_BAND``: just inside and just outside each edge."""
    rows = []
    for inv in (1 - 1.01 * PHASE_BAND, 1 - 0.99 * PHASE_BAND, 1 + 0.99 * PHASE_BAND,
                1 + 1.01 * PHASE_BAND):
        logits = np.zeros((1, 1, ROW + 1))
        logits[0, 0, 100] = inv * math.log(M - 1)  # distance ROW − 100, inside the window
        rows.append(head_measures(logits, [ROW])["gap_phase"][0])
    assert rows == ["liquid", "critical", "critical", "frozen"]


def synthetic_heads(seed=0, n=40):
    """Two sources: in ``a`` the entropy falls with ``r`` (β_½ unrelated), in ``b`` it rises
    with ``β_½`` (``r`` unrelated)."""
    rng = np.random.default_rng(seed)
    r, beta = np.exp(rng.normal(size=(2, n))), np.exp(rng.normal(size=(2, n)))
    phase = np.array(["liquid", "critical", "frozen"])[rng.integers(0, 3, size=(2, n))]
    entropy = np.stack([1 / (1 + r[0]), beta[1] / (1 + beta[1])])
    return pd.concat([pd.DataFrame({"source": s, "ratio": r[k], "beta_half": beta[k],
                                    "rem_phase": phase[k], "gap_phase": phase[k],
                                    "entropy_far": entropy[k], "entropy_octaves": entropy[k]})
                      for k, s in enumerate("ab")], ignore_index=True)


def test_compare_predictors_names_the_measure_that_ranks_the_entropy():
    """Negative control each way: an entropy set by ``r`` alone gives ``ρ_rem = −1`` and
    ``better = "rem"``; one set by ``β_½`` alone gives ``ρ_gap = +1`` and ``"gap"``."""
    out = compare_predictors(synthetic_heads(), boots=200).set_index(["source", "entropy"])
    a, b = out.loc[("a", "entropy_far")], out.loc[("b", "entropy_far")]
    assert a["rho_rem"] == pytest.approx(-1.0) and a["better"] == "rem"
    assert b["rho_gap"] == pytest.approx(1.0) and b["better"] == "gap"
    assert a["rho_rem_low"] <= a["rho_rem"] <= a["rho_rem_high"]
    assert abs(a["rho_gap"]) < 0.5 and abs(b["rho_rem"]) < 0.5


def test_compare_predictors_is_reproducible_from_its_seed():
    heads = synthetic_heads(seed=3)
    one, two = (compare_predictors(heads, boots=50, seed=7) for _ in range(2))
    pd.testing.assert_frame_equal(one, two)
    other = compare_predictors(heads, boots=50, seed=8)
    assert not np.allclose(one["rho_gap_low"], other["rho_gap_low"])


def test_tercile_agreement_is_one_for_phases_that_follow_the_entropy():
    heads = synthetic_heads(n=30)
    for _, g in heads.groupby("source"):
        order = np.argsort(np.argsort(-g["entropy_far"].to_numpy()))
        heads.loc[g.index, "rem_phase"] = np.array(["liquid", "critical", "frozen"])[order // 10]
    out = compare_predictors(heads, boots=20)
    assert (out.loc[out["entropy"] == "entropy_far", "agree_rem"] == 1.0).all()


@pytest.mark.parametrize("kwargs, name", [
    ({"logits": np.zeros((2, 8)), "rows": [4]}, "logits"),
    ({"logits": np.zeros((1, 1, 9)), "rows": [5]}, "rows"),
    ({"logits": np.zeros((1, 1, 9)), "rows": [4, 6]}, "rows"),
    ({"logits": np.zeros((1, 1, 9)), "rows": [2]}, "rows"),
    ({"logits": np.full((1, 1, 9), np.nan), "rows": [4]}, "logits"),
])
def test_head_measures_refuses_bad_input_naming_it(kwargs, name):
    with pytest.raises(ValueError, match=name):
        head_measures(**kwargs)


def test_bad_settings_and_boots_are_refused_naming_them():
    with pytest.raises(ValueError, match="boots"):
        compare_predictors(synthetic_heads(), boots=5)
    with pytest.raises(ValueError, match="at least 4"):
        compare_predictors(synthetic_heads().head(3))
    for field, value in (("queries", 0), ("model_lengths", (8,)), ("windows", 0),
                         ("boots", 1), ("grid", "full")):
        with pytest.raises(ValueError, match=field):
            HeadPhaseSettings(**{field: value})
    with pytest.raises(ValueError, match="model_lengths or grid"):
        HeadPhaseSettings(model_lengths=(), grid=None)


def test_the_quick_study_measures_every_head_of_the_quick_runs():
    """The quick grid's runs at ``L`` and ``16L``: finite measures, each head once per source
    (RoPE and RoPE + NTK share their run at ``L``), and both entropies compared."""
    result = head_phases(HeadPhaseSettings.quick(), seed=0)
    heads, comparison = result["heads"], result["comparison"]
    assert heads[["ratio", "beta_half", "entropy_far", "entropy_octaves"]].notna().all().all()
    assert set(heads["source"]) == set(comparison["source"]) and len(set(heads["source"])) == 2
    at_l = heads[heads["context"] == heads["context"].min()]
    assert "rope-ntk" not in set(at_l["scheme"]) and "rope-ntk" in set(heads["scheme"])
    assert comparison["rho_rem"].between(-1, 1).all()
