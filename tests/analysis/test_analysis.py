"""analyze(): the theory's expectations, computed here from formulas, not from the code.

* NoScale: E[Z_t^{2t}] = t·e^{1/2} (lognormal mean, a = 1, m = 0): diverges; E[H] ~ log t.
* ScaleInvariant(10): E[Z_t^{2t}] → ατ log 2 = e^{1/2}·10·log 2 (SI-4); E[H] ~ √(log t) (SI-7).
* ALiBi(slope > 0): E[Z_t^{2t}] ≤ t·e^{1/2 − slope·t} → 0; the entropy in range is bounded.
* a_t² = 1 + 2c·log(1 + t/τ), c = 2 (THEORY.md §6, EXT-3): bounded entropy, same E[Z] limit.
* Freezing point √(2 log M) (REM) and σ/√(2 log M) for pure multipliers.
"""

import dataclasses
import json
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from sia_theory import (
    REM_PHASES,
    ALiBi,
    LogN,
    NoScale,
    ScaleInvariant,
    Temperature,
    Transform,
    analyze,
)
from sia_theory.analysis import (
    ENTROPY_LAWS,
    LOG_MARGIN,
    AnalysisSettings,
    FixedContext,
    classify_entropy_law,
    convergence,
    freezing_point,
    phase_table,
    scaling_class,
    scheme_study,
    summary_row,
    zoo_studies,
)
from sia_theory.gaussian.laws import local_slopes

SI_LIMIT = math.exp(0.5) * 10 * math.log(2)  # ατ log Δ with α = e^{1/2}, τ = 10, Δ = 2


@dataclass(frozen=True)
class SparseFamily(Transform):
    """a_t² = 1 + 2c·log(1 + t/τ), m_t keeping E[e^{L_t}] = e^{1/2}/(1 + t/τ) (THEORY.md §6)."""

    c: float = 2.0
    tau: float = 10.0
    depends_on = frozenset({"distance"})

    def affine(self, t, n, h):
        a2 = 1 + 2 * self.c * np.log1p(t / self.tau)
        return np.sqrt(a2), 0.5 - np.log1p(t / self.tau) - a2 / 2


@dataclass(frozen=True)
class PowerLawBias(Transform):
    """The README's user transform: L_t = S_t − c·log(1 + t)."""

    c: float = 1.0
    depends_on = frozenset({"distance"})

    def affine(self, t, n, h):
        return np.ones_like(t), -self.c * np.log1p(t)


@pytest.mark.slow  # a few seconds; make test-all and CI run it
def test_no_scale_is_logarithmic_and_its_total_attention_diverges():
    report = analyze(NoScale(), quick=True, zoo=False)
    cf = report.closed_forms
    assert np.allclose(cf["EZ"], cf["t"] * math.exp(0.5), rtol=1e-12)  # t·E[e^{L̄}]
    assert report.entropy_law == "logarithmic"
    assert report.total_attention_limit is None and report.negentropy_limit is None
    # E[H_t^{2t}] → log t − 1/2 (plug-in exact for light tails): slope 1 on log t.
    last = report.slopes[report.slopes["delta"] == 0].iloc[-1]
    assert abs(last["slope"] - 1.0) < 4 * last["se"] + 0.01


def _powered(transform):
    """The analysis with enough entropy samples to tell the laws apart (half the full run's:
    the decay exponent's standard error is ~0.07, 3.5 of them from the nearest law boundary)
    and a small context sweep (these tests read the laws, limits and phases)."""
    settings = AnalysisSettings.full(transform=transform, samples=8192, n_sweep_max=1000,
                                     n_points=4, sweep_samples=64)
    return scheme_study(settings, seed=0)


@pytest.mark.slow  # a few seconds; make test-all and CI run it
def test_scale_invariant_is_sqrt_log_with_limit_alpha_tau_log_2():
    report = _powered(ScaleInvariant(10.0))
    assert report.total_attention[1] == pytest.approx(SI_LIMIT, rel=1e-4)
    assert abs(SI_LIMIT - 11.43) < 0.01
    assert report.negentropy[1] == pytest.approx(SI_LIMIT, rel=1e-4)  # β = α
    assert report.entropy_law == "sqrt-log"
    assert report.phase == "critical"


@pytest.mark.slow  # a few seconds; make test-all and CI run it
def test_alibi_is_bounded_and_its_total_attention_vanishes():
    report = analyze(ALiBi(2.0**-4), quick=True, zoo=False)
    t = report.closed_forms["t"].to_numpy(float)
    assert np.all(report.closed_forms["EZ"] <= t * np.exp(0.5 - t / 16) * (1 + 1e-12))
    assert report.total_attention_limit == pytest.approx(0.0, abs=1e-12)
    assert report.entropy_law == "bounded"
    assert report.phase == "frozen"  # the bias spread over [t, 2t) is ≈ t/16/√3 ≫ √(2 log t)


@pytest.mark.slow  # a few seconds; make test-all and CI run it
def test_strongly_sparse_family_c2_is_bounded_with_scale_invariant_total_attention():
    report = _powered(SparseFamily(2.0))
    assert report.entropy_law == "bounded"
    assert report.total_attention[1] == pytest.approx(SI_LIMIT, rel=1e-4)
    assert report.phase == "frozen"  # a_t ≈ √(4 log t) = √2·√(2 log t)
    assert report.negentropy[1] is None  # EXT-3: E[N] grows like (c − 1)ατ log 2·log t


def _noisy_slopes(curve, sd=0.5, samples=4096):
    settings = AnalysisSettings()
    t = np.unique(np.concatenate([np.round(np.geomspace(10, 10**5, 41)),
                                  np.ravel(settings.windows)]).astype(np.int64))
    noise = np.random.default_rng(1).standard_normal((samples, 1, t.size))
    return local_slopes(curve(t.astype(float))[None, None, :] + sd * noise, t, (2,),
                        settings.windows)


@pytest.mark.parametrize("curve, law", [
    (lambda t: 0.5 * np.log(t), "logarithmic"),
    (lambda t: 1.2 * np.sqrt(np.log(t)), "sqrt-log"),
    (lambda t: 3.0 - 1.0 / np.sqrt(t), "bounded"),
    (lambda t: 3.0 - 2.0 / np.log(t), "bounded"),
    (lambda t: 1.5 * np.log(np.log(t)), "bounded"),  # slower than √(log t): p = 1 ≥ 3/4
])
def test_classifier_names_each_synthetic_law(curve, law):
    assert classify_entropy_law(_noisy_slopes(curve)) == law


def test_convergence_criterion_on_known_sequences():
    k = np.arange(21)
    assert convergence(5 + 2.0 ** -k) == ("converges", pytest.approx(5.0, abs=1e-5))
    assert convergence(2.0**k)[0] == "diverges"
    assert convergence(k * math.log(2))[0] == "diverges"  # log t: steps do not shrink
    assert convergence(5 + 10 / (k + 1.0)) == ("undecided", None)  # shrinking, not yet 1e-3


def test_phase_of_a_multiplier_is_its_ratio_to_the_freezing_point():
    assert freezing_point(10**4) == pytest.approx(math.sqrt(2 * math.log(10**4)))
    table = phase_table(Temperature(3.0), 2**12, [2**k for k in range(1, 11)])
    m = table["M"].to_numpy(float)
    assert np.allclose(table["ratio"], 3.0 / np.sqrt(2 * np.log(m)), rtol=1e-12)
    phase = table.set_index("M")["phase"]
    # 3/√(2 log M): M = 32 → 1.14, 64 → 1.04, 512 → 0.85, 4096 (whole context) → 0.74.
    assert [phase[32], phase[64], phase[512], phase[4096]] == ["frozen", "critical", "liquid",
                                                               "liquid"]


def test_context_dependent_transform_is_frozen_at_n_ctx():
    logn = LogN(0.4)
    frozen = FixedContext(logn, 2**20)
    t = np.arange(0, 5000, 7.0)
    assert np.array_equal(frozen.coefficients(t)[0], logn.coefficients(t, 2**20)[0])
    assert "context" not in frozen.depends_on
    report = analyze(logn, quick=True, zoo=False)
    # Whole context, M = n = 2^20: 0.4·log n / √(2 log n) = 0.4·√(log(2^20)/2) ≈ 1.053.
    expected = 0.4 * math.sqrt(math.log(2**20) / 2)
    assert report.summary.iloc[0]["ratio_context"] == pytest.approx(expected, rel=1e-9)
    assert report.entropy_law in ENTROPY_LAWS


@pytest.mark.slow  # half a minute or more: make test-all
def test_user_transform_with_the_zoo_writes_one_atomic_set(tmp_path):
    report = analyze(PowerLawBias(0.5), quick=True, seed=3)
    zoo = report.zoo
    assert len(zoo) == 17 and zoo["entropy_law"].isin(ENTROPY_LAWS).all()
    assert set(zoo["phase"]) <= set(REM_PHASES)
    si = zoo.set_index("scheme").loc["scale-invariant"]
    assert si["total_attention_limit"] == pytest.approx(SI_LIMIT, rel=1e-4)
    # c = 1/2 < 1: E[Z_t^{2t}] = Σ e^{1/2}(1+s)^{-1/2} grows like √t: diverges.
    assert report.total_attention_limit is None
    paths = report.write(tmp_path, "bias")
    names = {p.name for p in tmp_path.iterdir()}
    assert {"bias.md", "bias.png", "bias.json", "bias_zoo.csv", "bias.manifest.json"} <= names
    assert set(paths) | {"bias.manifest.json"} == names  # one set: nothing else written
    meta = json.loads((tmp_path / "bias.json").read_text())
    assert meta["parameters"]["seed"] == 3 and meta["versions"]["numpy"]
    assert pd.read_csv(tmp_path / "bias_summary.csv").iloc[0]["entropy_law"] == \
        report.entropy_law
    assert not list(tmp_path.glob(".*"))


def test_same_seed_same_numbers_and_seeds_differ():
    settings = AnalysisSettings(ScaleInvariant(10.0), t_max=10**3, n_t=13, samples=256,
                                windows=((10, 100), (100, 1000)), n_sweep_max=100, n_points=3,
                                sweep_samples=64)
    a = scheme_study(settings, seed=7)
    b = scheme_study(settings, seed=7)
    c = scheme_study(settings, seed=8)
    assert a.entropy.equals(b.entropy) and a.sweep.equals(b.sweep)
    assert not a.entropy["H_mean"].equals(c.entropy["H_mean"])


@pytest.mark.parametrize("kwargs", [{"n_ctx": 3}, {"seed": -1}])
def test_bad_arguments_are_value_errors(kwargs):
    with pytest.raises(ValueError):
        analyze(NoScale(), quick=True, zoo=False, **kwargs)
    with pytest.raises(ValueError, match="Transform"):
        analyze(3, quick=True)
    # a callable is read as a bare score_mod(score, b, h, q_idx, kv_idx): this one is not one
    with pytest.raises(ValueError, match="score_mod.*failed on numpy index grids"):
        analyze(lambda t: t, quick=True)


@pytest.mark.parametrize("p, se, law", [
    (-0.450, 0.073, "super-logarithmic"),  # LogN alone: −0.45 + 3·0.073 = −0.23, past −0.1
    (-0.504, 0.28, "logarithmic"),  # the same scheme at a quarter of the precision: undecided
    (-0.01, 0.001, "logarithmic"),
    (0.0, 0.5, "logarithmic"),
    (-0.25, 0.05, "logarithmic"),  # the interval's end exactly on the band's edge −0.1
    (-0.25, 0.049, "super-logarithmic"),
    (-0.13, 0.005, "super-logarithmic"),
    (0.12, 0.0, "sub-logarithmic"),
    (0.2, 0.03, "sub-logarithmic"),
    (0.2, 0.04, "logarithmic"),
    (0.3, 0.01, "sqrt-log"),
    (0.8, 0.01, "bounded"),
    (-math.inf, math.nan, "super-logarithmic"),  # the first window's slope <= 0, the last > 0
])
def test_scaling_class_decides_on_the_interval_of_p(p, se, law):
    assert LOG_MARGIN == 0.1
    assert scaling_class(p, se, 3.0) == law
    assert scaling_class(p, se, 3.0, growing=False) == "bounded"


@pytest.mark.parametrize("kwargs, name", [
    ({"exponent": math.nan, "exponent_se": 0.1}, "exponent"),
    ({"exponent": 0.1, "exponent_se": -0.1}, "exponent_se"),
    ({"exponent": 0.1, "exponent_se": math.nan}, "exponent_se"),
    ({"exponent": 0.1, "exponent_se": 0.1, "z": 0.0}, "z"),
    ({"exponent": 0.1, "exponent_se": 0.1, "margin": 0.25}, "margin"),
])
def test_scaling_class_refuses_bad_input(kwargs, name):
    with pytest.raises(ValueError, match=name):
        scaling_class(**kwargs)


def _quick_law(transform):
    """The class at analyze()'s quick settings (seed 0), with a token context sweep."""
    settings = AnalysisSettings.quick(transform=transform)
    settings = dataclasses.replace(settings, n_sweep_max=100, n_points=3, sweep_samples=16)
    return scheme_study(settings, seed=0).evidence


# Measured at the quick settings, seed 0 (p ± se): NoScale −0.015 ± 0.001, LogN(0.4) −0.410 ±
# 0.072, Temperature(1.5) −0.091 ± 0.004 and (1.65) −0.138 ± 0.005, SparseFamily(0.6) 0.220 ±
# 0.035 and (0.5) 0.133 ± 0.026. The pairs are near alternatives (10 % and 17 % apart in their
# parameter) on the two sides of the band |p| <= 0.1 + 3 se.
@pytest.mark.parametrize("transform, law", [
    (NoScale(), "logarithmic"),
    (LogN(0.4), "super-logarithmic"),
    (Temperature(1.5), "logarithmic"),
    (Temperature(1.65), "super-logarithmic"),
    (SparseFamily(0.5), "logarithmic"),
    (SparseFamily(0.6), "sub-logarithmic"),
])
def test_real_schemes_of_each_class(transform, law):
    ev = _quick_law(transform)
    assert ev.law == law
    assert ev.describe().startswith(f"{law} (p = ")


@pytest.mark.slow  # 17 small studies: about 10 s
def test_zoo_rows_use_the_reports_own_settings(monkeypatch):
    """A zoo member's row is the numbers it gets analysed alone (one truth per report)."""
    def tiny(cls, n_ctx=2**20, **kwargs):
        return cls(n_ctx=n_ctx, t_max=10**3, n_t=13, samples=256,
                   windows=((10, 100), (100, 1000)), n_sweep_max=100, n_points=3,
                   sweep_samples=16, label="quick", **kwargs)

    monkeypatch.setattr(AnalysisSettings, "quick", classmethod(tiny))
    report = analyze(LogN(0.4), quick=True, name="logn")
    rows = report.zoo.set_index("scheme")
    alone = report.summary.iloc[0]
    member = rows.loc["logn"].iloc[-1]  # the zoo's own LogN(0.4), after the report's row
    for column in ("decay_exponent_p", "decay_exponent_se", "entropy_law", "samples", "t_max"):
        assert member[column] == alone[column]
    assert set(rows["samples"]) == {256} and set(rows["t_max"]) == {1000}
    settings = tiny(AnalysisSettings)
    none = zoo_studies(settings, 0)[0]
    assert summary_row(none)["decay_exponent_p"] == \
        summary_row(scheme_study(settings.with_transform(NoScale(), "none"), seed=0))[
            "decay_exponent_p"]
