"""Claims EXT-1 … EXT-3: the entropy trichotomy of the family ``a_t² = 1 + 2c·log(1 + t/τ)``
with scale-invariant total attention (THEORY.md §6; docs/criticality.md §2).

All three run :func:`sia_theory.studies.ext_trichotomy.trichotomy_study` (the study behind
``experiments/ext_trichotomy.py``) by the exact route, which is deterministic: the intervals are
not sampling intervals but the numerical error plus the O(1) corrections, estimated from the
drift of local slopes between the largest ``t`` (see
:func:`~sia_theory.studies.ext_trichotomy.top_slope`) or from the spread of correction models
(EXT-2). A verdict is taken only for the ``c`` whose ranges are in the asymptotic regime at the
largest ``t`` by the a-priori REM criterion on ``(1 − √c)²·log t``
(:func:`~sia_theory.gaussian.family.crossover`): ``>= 2`` on the liquid side (EXT-1), whose
correction falls like ``e^{−crossover}``, and ``>= 5`` on the frozen side (EXT-3), whose gap to
the limit only falls like a power of ``log t``; the others are reported in the detail.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import pandas as pd
from scipy.special import digamma

from sia_theory.gaussian.asymptotic import simulate_gaussian_logits_asymptotic
from sia_theory.gaussian.family import (
    CRITICAL_PREFACTOR,
    crossover,
    frozen_entropy_limit,
    liquid_correction,
    negentropy_slope_theory,
)
from sia_theory.studies.ext_trichotomy import (
    TrichotomySettings,
    prefactor_estimates,
    sqrt_log_slope,
    top_slope,
    trichotomy_study,
)
from sia_theory.transforms import ScaleInvariantFamily

from .core import Measurement, claim, negative_control, verdict

ASYMPTOTIC = 2.0  # EXT-1: (1 − √c)² log t_max >= this, the c enters the verdict
"""EXT-1: a ``c`` on the liquid side enters the verdict only if its REM crossover
``(1 − √c)²·log t_max`` is at least this (its correction falls like ``e^{−crossover}``; module
docstring)."""
FROZEN_ASYMPTOTIC = 5.0  # EXT-3: the same criterion on the frozen side (module docstring)
"""EXT-3: the same criterion on the frozen side, larger because the gap to the limit only falls
like a power of ``log t`` (at ``t = 1e30`` it admits c = 2 and 3, not 1.25 or 1.5)."""
PREFACTOR_TOL = 0.003  # EXT-2: allowed |A − √(2/π)| for every fit (0.4 % of the prefactor)
"""EXT-2: the largest ``|A − √(2/π)|`` allowed for every fitted prefactor (0.4 % of the
prefactor; the fits on the exact data to 1e30 deviate by +0.0001 … +0.0021)."""
NEGENTROPY_RTOL = 1e-3  # measured E[N] slope against (c − 1)ατ log Δ
"""EXT-3: the largest relative error allowed between the measured top slope of ``E[N]`` on
``log t`` and ``(c − 1)ατ log Δ``."""
GAP_RTOL = 0.15  # EXT-3: (H∞ − E[H])/H∞ at the largest t
"""EXT-3: the largest relative gap ``(H∞ − E[H])/H∞`` allowed at the largest ``t`` (measured
0.025–0.089), so that a limit 20 % below ``H∞`` fails."""
GAP_RATE = 0.3  # EXT-3: −d log(H∞ − E[H]) / d log log t over the two largest t
"""EXT-3: the smallest local rate ``−d log(H∞ − E[H]) / d log log t`` over the two largest ``t``
(measured 0.66–0.79): a gap that has stopped shrinking fails."""
K_SE = 4.0  # asymptotic sampler against the exact route: within 4 standard errors
"""EXT-2: the asymptotic sampler must agree with the exact route within this many standard
errors."""


@cache
def _study(quick: bool) -> tuple[TrichotomySettings, pd.DataFrame]:
    settings = TrichotomySettings.of(quick)
    return settings, trichotomy_study(settings, seed=0)["entropy"]


def _t_max(frame) -> float:
    return float(frame["t"].max())


# ------------------------------------------------------------------------------------ EXT-1
def decide_ext1(frame: pd.DataFrame) -> Measurement:
    """For every ``c < 1`` and ``Δ``: top slope of ``E[H]`` on ``log t`` against ``1 − c``,
    allowed ``uncertainty + (1 − c)·t^{−(1−√c)²}`` (the predicted finite-``t`` correction);
    PASS iff all asymptotic ``c`` agree (value: the largest |slope − (1 − c)|)."""
    t_max = _t_max(frame)
    rows, worst, ok = [], (0.0, 0.0, 0.0), True
    for (c, delta), _ in frame[frame["c"] < 1].groupby(["c", "delta"]):
        s = top_slope(frame, c, delta)
        err, tol = abs(s["slope"] - (1 - c)), s["uncertainty"] + liquid_correction(c, t_max)
        judged = crossover(c, t_max) >= ASYMPTOTIC
        rows.append(f"c={c:g}, Δ={delta}: {s['slope']:.5f} vs {1 - c:.3f}"
                    + ("" if judged else " (pre-asymptotic, not judged)"))
        if judged:
            ok &= err <= tol
            worst = max(worst, (err, s["slope"], tol))
    if worst == (0.0, 0.0, 0.0):
        return Measurement("FAIL", "no c < 1 in the asymptotic regime")
    return Measurement(verdict(ok), "; ".join(rows), value=worst[0], target=0.0,
                       tolerance=worst[2], detail=f"slopes over the two largest t up to "
                       f"{t_max:.0e}; tolerance = slope drift + (1−c)·t^-(1−√c)²")


@claim("EXT-1", "For c < 1, E[H_t^{tΔ}] grows like (1 − c)·log t",
       alternative="another growth: slope ≠ 1 − c (e.g. log t as without the transform, or "
                   "√(log t) as at c = 1)", seeded=False)
def ext_1(quick, seed):
    """EXT-1 by the exact route (figures/ext_trichotomy)."""
    _, frame = _study(bool(quick))
    return decide_ext1(frame)


@negative_control("EXT-1")
def ext_1_control():
    """Entropy growing like log t (slope 1, the untransformed law) for c = 0.5."""
    t = 10.0 ** np.arange(20, 31, 5)
    return decide_ext1(pd.DataFrame({"c": 0.5, "delta": 10, "t": t, "log_t": np.log(t),
                                     "H": np.log(t), "H_error": 0.0}))


# ------------------------------------------------------------------------------------ EXT-2
def decide_ext2(estimates: pd.DataFrame, sampler_z: float) -> Measurement:
    """``estimates``: rows of fitted ``A`` (all correction models, windows and Δ). Value: their
    mean, CI: their range; PASS iff every ``A`` is within ``PREFACTOR_TOL`` of ``√(2/π)`` and
    the asymptotic sampler agrees with the exact values (``sampler_z``: the largest |z|) within
    ``K_SE`` standard errors.

    On the exact data to 1e30 the fits deviate by +0.0001 … +0.0021 (the spread of correction
    models and windows); a law with an added ``±0.1·log a_t`` (unbounded, so not ``O(1)``) moves
    them by about ±0.005 (+0.0036 … +0.0082 and −0.0053 … −0.0022 on the exact data), which the
    tolerance rejects. A ``log a_t`` regressor in the model itself is not identifiable over
    ``a_t ∈ [5, 12]`` (fitted to the exact data its coefficient comes out anywhere in −0.04 …
    0.17), so the tolerance, not the model, carries the rejection."""
    a = estimates["A"].to_numpy(dtype=float)
    if not a.size:
        return Measurement("FAIL", "no prefactor fit (too few t)")
    value, lo, hi = float(np.mean(a)), float(np.min(a)), float(np.max(a))
    worst = float(np.max(np.abs(a - CRITICAL_PREFACTOR)))
    ok = worst <= PREFACTOR_TOL and sampler_z <= K_SE
    return Measurement(verdict(ok),
                       f"A = {value:.5f} (range {lo:.5f} … {hi:.5f} over {a.size} fits) vs "
                       f"√(2/π) = {CRITICAL_PREFACTOR:.5f}: farthest fit {worst:.4f} away; "
                       f"sampler vs exact max |z| = {sampler_z:.2f}", value=value, ci_low=lo,
                       ci_high=hi, target=CRITICAL_PREFACTOR, tolerance=PREFACTOR_TOL)


def sampler_cross_check(frame: pd.DataFrame, settings: TrichotomySettings, quick: bool,
                        seed: int) -> tuple[float, str]:
    """The asymptotic sampler (``simulate_gaussian_logits_asymptotic``, seeded) against the
    exact ``E[H]`` at ``c = 1`` for ``t = 1e10, 1e20, 1e30`` (quick: ``1e30``): largest |z|."""
    fam = ScaleInvariantFamily(1.0, settings.tau, settings.alpha)
    exact = frame[frame["c"] == 1.0].set_index(["delta", "t"])["H"]
    ts = [t for t in ((1e30,) if quick else (1e10, 1e20, 1e30))
          if all((d, t) in exact.index for d in settings.deltas)]
    samples = 300 if quick else 2000
    worst, text = 0.0, []
    for t in ts:
        table = simulate_gaussian_logits_asymptotic(
            fam, [(t, d * t) for d in settings.deltas], samples, seed, top_k=1000)
        for d, row in zip(settings.deltas, table.itertuples(), strict=True):
            z = (row.H_mean - exact[(d, t)]) / row.H_se
            worst = max(worst, abs(z))
            text.append(f"t={t:.0e}, Δ={d}: {row.H_mean:.3f} ± {row.H_se:.3f} (z = {z:+.2f})")
    return worst, f"asymptotic sampler ({samples} samples, top_k 1000): " + "; ".join(text)


@claim("EXT-2", "For c = 1 (the SI transform), E[H_t^{tΔ}] = √(2/π)·a_t + O(1), i.e. slope "
                "2/√π ≈ 1.128 against √(log t), to t = 1e30",
       alternative="another prefactor (e.g. 1, entropy ≈ a_t) or growth faster than a_t")
def ext_2(quick, seed):
    """EXT-2: ``E[H] = A a_t + B + C/a_t (+ D/a_t²)`` fitted to the exact values for Δ = 2, 5,
    10 (figures/ext_trichotomy)."""
    settings, frame = _study(bool(quick))
    estimates = pd.concat([prefactor_estimates(frame, d) for d in settings.deltas])
    sampler_z, sampler_text = sampler_cross_check(frame, settings, bool(quick), seed)
    m = decide_ext2(estimates, sampler_z)
    slopes = ", ".join(f"Δ={d}: {sqrt_log_slope(frame, d):.4f}" for d in settings.deltas)
    values = frame[(frame["c"] == 1.0) & (frame["t"] == _t_max(frame))]
    at_top = ", ".join(f"Δ={r.delta}: {r.H:.5f} ± {r.H_error:.0e}" for r in values.itertuples())
    b = estimates.groupby("delta")["B"].mean()
    return Measurement(**{**m.__dict__, "detail": (
        f"slope on √(log t) over t in [1e10, {_t_max(frame):.0e}]: {slopes} (2/√π = "
        f"{2 / math.sqrt(math.pi):.4f}; finite-t biases both ways: a_t/√(2 log t) > 1, the "
        f"C/a_t term growing with Δ); E[H] at t = "
        f"{_t_max(frame):.0e}: {at_top}; O(1) term B(Δ): "
        + ", ".join(f"{d}: {v:.3f}" for d, v in b.items()) + ". " + sampler_text)})


@negative_control("EXT-2")
def ext_2_control():
    """A near miss: entropy 0.83·a_t + 0.5 + 1/a_t (prefactor 4 % above √(2/π) = 0.798, about
    three times the tolerance) — the decision must tell it from the critical law."""
    a = np.sqrt(1 + 2 * np.log1p(10.0 ** np.arange(10, 31, 4) / 10))
    frame = pd.DataFrame({"c": 1.0, "delta": 10, "t": 10.0 ** np.arange(10, 31, 4), "a_t": a,
                          "H": 0.83 * a + 0.5 + 1.0 / a})
    return decide_ext2(prefactor_estimates(frame, 10), 0.0)


def critical_law_frame(extra=lambda a: 0.0, prefactor=CRITICAL_PREFACTOR) -> pd.DataFrame:
    """``E[H] = prefactor·a_t + 0.6 + 2/a_t + extra(a_t)`` at ``c = 1`` on the full study's grid
    of ``t`` for each ``Δ`` (``a_t = √(1 + 2 log(1 + t/τ))``, typed here): the critical law with
    O(1) and ``1/a_t`` corrections of the measured size, plus an alternative's term."""
    settings = TrichotomySettings.full()
    t = 10.0 ** np.asarray(settings.log10_t, dtype=float)
    a = np.sqrt(1 + 2 * np.log1p(t / settings.tau))
    return pd.concat([pd.DataFrame({"c": 1.0, "delta": d, "t": t, "a_t": a,
                                    "H": prefactor * a + 0.6 + 2.0 / a + extra(a)})
                      for d in settings.deltas], ignore_index=True)


def _ext2_on(frame: pd.DataFrame) -> Measurement:
    estimates = pd.concat([prefactor_estimates(frame, d) for d in frame["delta"].unique()])
    return decide_ext2(estimates, 0.0)


for _name, _frame in (
        ("+0.1·log a_t", lambda: critical_law_frame(lambda a: 0.1 * np.log(a))),
        ("−0.1·log a_t", lambda: critical_law_frame(lambda a: -0.1 * np.log(a))),
        ("prefactor +20 %", lambda: critical_law_frame(prefactor=1.2 * CRITICAL_PREFACTOR)),
        ("prefactor −20 %", lambda: critical_law_frame(prefactor=0.8 * CRITICAL_PREFACTOR))):
    negative_control("EXT-2", _name)(lambda frame=_frame: _ext2_on(frame()))


# ------------------------------------------------------------------------------------ EXT-3
def frozen_gap(frame: pd.DataFrame, c, delta) -> pd.DataFrame:
    """``H∞ − E[H]`` of one ``(c, Δ)`` against ``t`` (``H∞ = ψ(1) − ψ(1 − c^{−½})``), with its
    local decay rate ``−d log gap / d log log t`` between each ``t`` and the previous one (nan
    where a gap is not positive). Columns ``t, H, gap, rel_gap, rate, crossover``."""
    g = frame[(frame["c"] == c) & (frame["delta"] == delta)].sort_values("t")
    limit = float(frozen_entropy_limit(c))
    gap = limit - g["H"].to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_gap = np.where(gap > 0, np.log(np.where(gap > 0, gap, 1.0)), np.nan)
        rate = -np.diff(log_gap) / np.diff(np.log(np.log(g["t"].to_numpy(dtype=float))))
    return pd.DataFrame({"t": g["t"].to_numpy(dtype=float), "H": g["H"].to_numpy(dtype=float),
                         "gap": gap, "rel_gap": gap / limit, "rate": np.r_[np.nan, rate],
                         "crossover": [crossover(c, t) for t in g["t"]]})


def decide_ext3(frame: pd.DataFrame, settings: TrichotomySettings) -> Measurement:
    """For every ``c > 1`` and ``Δ``: the approach of ``E[H]`` to the stated limit
    ``H∞ = ψ(1) − ψ(1 − c^{−½})`` and the growth of ``E[N]``.

    A ``c`` is judged if ``crossover(c, t_max) >= FROZEN_ASYMPTOTIC`` (5): at ``t = 1e30`` that
    is ``c = 2`` (11.8) and ``c = 3`` (37), not ``c = 1.25`` (0.96) or ``1.5`` (3.5), whose gaps
    are still 35 % and 19 % of ``H∞``. (The gap falls like a power of ``log t``, local rate
    0.6–0.8, where the liquid side's correction falls like ``e^{−crossover}``: the frozen side
    needs the larger crossover.) For each judged ``(c, Δ)``:

    * ``E[H] < H∞`` at every ``t``;
    * the gap ``H∞ − E[H]`` decreases with ``t`` wherever ``crossover(c, t) >= 5``;
    * the relative gap at the largest ``t`` is ``<= GAP_RTOL`` (0.15; measured 0.025–0.089), so a
      limit 20 % lower than ``H∞`` fails, and a limit 20 % higher fails the first test;
    * the local rate ``−d log gap / d log log t`` over the two largest ``t`` is ``>= GAP_RATE``
      (0.3; measured 0.66–0.79): a gap that has stopped shrinking (a limit a little below
      ``H∞``) fails;

    and, for every ``c > 1``, the top slope of ``E[N]`` on ``log t`` equals ``(c − 1)ατ log Δ``
    to ``NEGENTROPY_RTOL``. Value: the largest relative gap at ``t_max`` over the judged rows.

    What data to 1e30 cannot exclude: an unbounded law that stays below ``H∞`` to 1e30 with a
    shrinking gap looks exactly like an approach to ``H∞`` (for example ``K + 0.2·log log t``
    through the measured ``E[H](1e30)`` crosses ``H∞`` only near t ≈ 1e81 at c = 2, Δ = 10 and
    t ≈ 1e38 at c = 3); only the closed form of the limit (Poisson–Dirichlet) says that the
    approach continues. The controls therefore add the unbounded terms to the bounded law from
    the grid's first ``t`` on (the alternative agrees with it there and grows beyond).
    """
    t_max = _t_max(frame)
    text, worst_gap, ok_h, worst_n, judged_any = [], -np.inf, True, 0.0, False
    for (c, delta), _ in frame[frame["c"] > 1].groupby(["c", "delta"]):
        gap = frozen_gap(frame, c, delta)
        n = top_slope(frame, c, delta, y="EN")
        theory = negentropy_slope_theory(c, settings.alpha, settings.tau, delta)
        worst_n = max(worst_n, abs(n["slope"] / theory - 1))
        judged = crossover(c, t_max) >= FROZEN_ASYMPTOTIC
        top = gap.iloc[-1]
        text.append(f"c={c:g}, Δ={delta}: E[H]({t_max:.0e}) = {top.H:.3f} vs H∞ = "
                    f"{float(frozen_entropy_limit(c)):.3f} (gap {top.rel_gap:.1%}, rate "
                    f"{top.rate:.2f}), E[N] slope {n['slope']:.4g} vs {theory:.4g}"
                    + ("" if judged else " (pre-asymptotic)"))
        if judged:
            judged_any = True
            late = gap[gap["crossover"] >= FROZEN_ASYMPTOTIC]["gap"].to_numpy()
            below = bool(np.all(gap["gap"] > 0))
            shrinking = late.size >= 2 and bool(np.all(np.diff(late) < 0))
            ok_h &= (below and shrinking and top.rel_gap <= GAP_RTOL
                     and bool(top.rate >= GAP_RATE))
            worst_gap = max(worst_gap, top.rel_gap if below else np.inf)
    ok_n = worst_n <= NEGENTROPY_RTOL
    value = worst_gap if judged_any else np.nan
    return Measurement(verdict(judged_any and ok_h and ok_n), "; ".join(text), value=value,
                       target=0.0, tolerance=GAP_RTOL, detail=(
                           f"judged: crossover (1−√c)² log t_max ≥ {FROZEN_ASYMPTOTIC:g}; each "
                           f"judged row below H∞ at every t, its gap shrinking, ≤ "
                           f"{GAP_RTOL:.0%} of H∞ at t_max with local rate ≥ {GAP_RATE:g} "
                           f"(−d log gap/d log log t); E[N] slope relative error ≤ "
                           f"{worst_n:.1e} (tolerance {NEGENTROPY_RTOL:g}). An unbounded law "
                           "below H∞ until past 1e30 cannot be told apart from this data."))


@claim("EXT-3", "For c > 1, E[H] stays bounded while E[N_t^{tΔ}] grows like (c − 1)·ατ·log Δ·"
                "log t (strong sparsity is incompatible with SI Def. 3.2)",
       alternative="E[H] unbounded (crossing its stated limit ψ(1) − ψ(1 − c^-1/2)), a limit "
                   "20 % off, or E[N] bounded", seeded=False)
def ext_3(quick, seed):
    """EXT-3 by the exact route (E[H]) and the summed lognormal moments (E[N])."""
    settings, frame = _study(bool(quick))
    return decide_ext3(frame, settings)


@negative_control("EXT-3")
def ext_3_control():
    """Entropy growing like 0.3·log t and a bounded E[N] for c = 2."""
    t = 10.0 ** np.arange(20, 31, 5)
    frame = pd.DataFrame({"c": 2.0, "delta": 10, "t": t, "log_t": np.log(t),
                          "H": 0.3 * np.log(t), "H_error": 0.0, "EN": 5.0})
    return decide_ext3(frame, TrichotomySettings.quick())


def frozen_law_frame(limit_scale=1.0, extra=lambda t: 0.0, negentropy_scale=1.0,
                     cs=(2.0, 3.0)) -> pd.DataFrame:
    """``E[H] = s·H∞ − 0.07·H∞·(log t/log 1e30)^{−0.7} + extra(t)`` and ``E[N]`` with slope
    ``negentropy_scale·(c − 1)ατ log Δ`` on the full study's grid, Δ = 10: an approach to
    ``s·H∞`` with the measured size (7 % short at 1e30) and rate (0.7) of the gap, ``H∞`` from
    scipy's digamma here. ``extra`` adds an alternative's term (an unbounded growth)."""
    settings = TrichotomySettings.full()
    t = 10.0 ** np.asarray(settings.log10_t, dtype=float)
    u = np.log(t)
    rows = []
    for c in cs:
        limit = float(digamma(1.0) - digamma(1.0 - c**-0.5))
        slope = negentropy_scale * (c - 1) * settings.alpha * settings.tau * math.log(10)
        h = limit_scale * limit - 0.07 * limit * (u / math.log(1e30)) ** -0.7 + extra(t)
        rows.append(pd.DataFrame({"c": c, "delta": 10, "t": t, "log_t": u, "H": h,
                                  "H_error": 0.0, "EN": slope * u}))
    return pd.concat(rows, ignore_index=True)


def _from_first_t(law):
    """``law(t) − law(t_first)``: an unbounded term counted from the grid's first ``t``, so the
    alternative agrees with the bounded law there and adds its growth beyond."""
    t_first = 10.0 ** TrichotomySettings.full().log10_t[0]
    return lambda t: law(t) - law(t_first)


for _name, _frame in (
        ("+0.2·log log t", lambda: frozen_law_frame(
            extra=_from_first_t(lambda t: 0.2 * np.log(np.log(t))))),
        ("+0.5·√(log log t)", lambda: frozen_law_frame(
            extra=_from_first_t(lambda t: 0.5 * np.sqrt(np.log(np.log(t)))))),
        ("limit +20 %", lambda: frozen_law_frame(limit_scale=1.2)),
        ("limit −20 %", lambda: frozen_law_frame(limit_scale=0.8)),
        ("E[N] slope +20 %", lambda: frozen_law_frame(negentropy_scale=1.2)),
        ("E[N] slope −20 %", lambda: frozen_law_frame(negentropy_scale=0.8))):
    negative_control("EXT-3", _name)(
        lambda frame=_frame: decide_ext3(frame(), TrichotomySettings.full()))


def liquid_law_frame(slope_scale=1.0, c=0.5) -> pd.DataFrame:
    """``E[H] = slope_scale·(1 − c)·log t + 3`` at ``t = 1e20, 1e25, 1e30`` (Δ = 10): the
    liquid law, or its slope off by ``slope_scale``."""
    t = 10.0 ** np.arange(20, 31, 5)
    return pd.DataFrame({"c": c, "delta": 10, "t": t, "log_t": np.log(t),
                         "H": slope_scale * (1 - c) * np.log(t) + 3, "H_error": 0.0})


for _sign, _scale in (("+", 1.2), ("−", 0.8)):
    negative_control("EXT-1", f"slope (1 − c) {_sign}20 %")(
        lambda s=_scale: decide_ext1(liquid_law_frame(s)))
