"""Claims EXT-4 … EXT-6: one phase diagram for both papers (THEORY.md §6, issue 10 §3).

As in :mod:`paper_checks.cas`: each check runs the library study behind its figure
(``Settings.quick()`` or ``Settings.full()``, the same as ``python experiments/ext_<name>.py
[--quick]``), summarises it with the library's summary function and hands the numbers to a pure
``decide_ext*`` function; each negative control feeds the alternative law to that function and
must get ``FAIL``. Intervals are 95 % (t intervals over seeded draws, or bootstrap).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from sia_theory.cas.tokens import token_rng
from sia_theory.cas.universality import rem_beta50, rem_max_location
from sia_theory.studies.ext_si_on_cas import SIOnCASSettings, si_on_cas_study, summarize_si_on_cas
from sia_theory.studies.ext_universality import (
    UniversalitySettings,
    class_label,
    summarize_universality,
    universality_study,
)
from sia_theory.studies.ext_zoo_phase import (
    TurnoverSettings,
    crossings,
    exact_turnover_peak,
    logn_points,
    octave_ratios,
    peak_ratios,
    turnover_peak,
    turnover_study,
)
from sia_theory.transforms import LogN, ScaleInvariant

from .core import Measurement, claim, negative_control

RATIO_TOL = 0.03  # iid β₅₀ against 2a_n (the exact route: 0.3–0.5 % for n ≥ 2⁸)
SIMPLEX_TOL = 0.05  # β₅₀ against the simplex closed form; and |k − k_simplex|
O1_K = 0.25  # "β₅₀ = O(1)": upper 95 % limit of k below this
SOLVER_TOL = 1e-8  # N* of LogN against e^{2/s²}
CRITICAL_BAND = 0.1  # |σ_t/√(2 log t) − 1| for the SI octaves with t >= 2¹⁴
SI_CHECK_FROM = 14  # octaves 2^14 … 2^100
RESTORE_FRACTION = 0.9  # centring must remove at least this share of the c_q slope


# ----------------------------------------------------------------------------- EXT-4
def _row(summary: pd.DataFrame, label: str) -> pd.Series:
    return summary.set_index("class").loc[label]


def _has(row, value) -> bool:
    return row["k_ci_low"] <= value <= row["k_ci_high"]


def decide_ext4(summary: pd.DataFrame, iid: str, simplex_like: list, rem_like: str,
                low_d: str) -> Measurement:
    """FAIL unless (i) iid scores: the 95 % interval of ``k`` contains the REM law's finite-``n``
    exponent (``β₅₀ = 2a_n`` fitted over the same ``n``), lies below the simplex law's, and
    ``β₅₀/2a_n`` is within ``RATIO_TOL`` of 1; (ii) each simplex-like class: ``k`` within
    ``SIMPLEX_TOL`` of (or its interval containing) the simplex law's finite-``n`` exponent,
    above the REM law's, ``β₅₀`` within ``SIMPLEX_TOL`` of the simplex closed form; (iii) the
    planted REM with the largest spread: interval containing the REM exponent. Then PASS if the
    lowest ``d`` has ``β₅₀ = O(1)`` (``k``'s upper limit below ``O1_K``), else DIVERGES."""
    r = _row(summary, iid)
    k_rem, k_simplex = r["k_rem_finite"], r["k_simplex_finite"]
    iid_ok = (_has(r, k_rem) and r["k_ci_high"] < k_simplex
              and abs(r["rem_ratio"] - 1) <= RATIO_TOL)
    simplex_ok = all((abs(s["k"] - k_simplex) <= SIMPLEX_TOL or _has(s, k_simplex))
                     and s["k_ci_low"] > k_rem and abs(s["simplex_ratio"] - 1) <= SIMPLEX_TOL
                     for s in (_row(summary, label) for label in simplex_like))
    back = _row(summary, rem_like)
    rem_ok = _has(back, k_rem)
    low = _row(summary, low_d)
    o1 = low["k_ci_high"] < O1_K
    outcome = ("FAIL" if not (iid_ok and simplex_ok and rem_ok) else "PASS" if o1
               else "DIVERGES")
    text = "; ".join(f"{x['class']}: k = {x['k']:.3f} [{x['k_ci_low']:.3f}, {x['k_ci_high']:.3f}]"
                     for _, x in summary.iterrows())
    return Measurement(outcome, f"REM law k = {k_rem:.3f}, simplex law k = {k_simplex:.3f} over "
                       f"n = {r['n_min']}…{r['n_max']}; {text}; {low_d}: β₅₀ ∝ n^"
                       f"{low['power_n']:.2f} [{low['power_ci_low']:.2f}, "
                       f"{low['power_ci_high']:.2f}]; iid β₅₀/2a_n = {r['rem_ratio']:.4f}",
                       value=r["k"], ci_low=r["k_ci_low"], ci_high=r["k_ci_high"],
                       target=0.5, tolerance=abs(k_rem - 0.5))


def _ext4_labels(settings: UniversalitySettings) -> dict:
    return {"iid": "iid",
            "simplex_like": [class_label("gaussian", max(settings.dims), 0.0),
                             class_label("planted", 1, min(settings.spreads))],
            "rem_like": class_label("planted", 1, max(settings.spreads)),
            "low_d": class_label("gaussian", min(settings.dims), 0.0)}


@claim("EXT-4", "Universality classes of β₅₀ ∝ (log n)^k (order parameter: mean participation "
                "Σ_j A_ij² crossing ½): iid scores (REM) k = ½ with β₅₀ → 2√(2 log n); simplex "
                "tokens k = 1 (log n/(1−ρ)); near-simplex tokens in the simplex class while the "
                "cosine spread σ·√(2 log n) < 1 − ρ and back in the REM class above; low d "
                "β₅₀ = O(1)",
       alternative="iid scores with k = 1 (the simplex law), or near-simplex tokens with the "
                   "REM exponent (low d not O(1): DIVERGES)")
def ext_4(quick, seed):
    """Issue 10 §3 (figures/ext_universality): β₅₀ over n = 2⁸ … 2¹⁴ for iid scores, the
    planted REM over cosine spreads, Gaussian tokens over d = 2 … 1024 (sweep engine)."""
    settings = UniversalitySettings.of(quick)
    summary = summarize_universality(universality_study(settings, seed=seed, progress=False),
                                     settings.rho)
    m = decide_ext4(summary, **_ext4_labels(settings))
    if quick:
        exact = "exact route not run in quick mode"
    else:
        big = 1e30
        b = rem_beta50(big)
        exact = (f"exact route at n = 1e30: β₅₀ = {b:.3f}, 2a_n = "
                 f"{2 * float(rem_max_location(big)):.3f}, 2√(2 log n) = "
                 f"{2 * math.sqrt(2 * math.log(big)):.3f}")
    return Measurement(**{**m.__dict__, "detail": (
        f"{settings.draws} draws per (class, n), {settings.queries} queries, ρ = {settings.rho}. "
        f"REM: β₅₀ = 2a_n (a_n = √(2 log n) − (log log n + log 4π)/(2√(2 log n)), the location "
        f"of the maximum), so k → ½ only slowly; {exact}. Low d is not O(1) under this order "
        "parameter: a token is isolated from its angular neighbours only at β ∝ n^{2/(d−1)} "
        "(CAS-5's O(1) midpoint is the output-cosine criterion, i.e. neighbour averaging).")})


def ext_4_alternative(seed: int = 0) -> pd.DataFrame:
    """iid scores following the simplex law β₅₀ = simplex_beta50 (k = 1 class), 5 % scatter;
    other classes as measured (simplex-like on the simplex law, REM-like on 2a_n)."""
    from sia_theory.cas.universality import simplex_beta50

    rng = token_rng(seed, "ext.claims.ext4_control")
    rows = []
    for kind, d, spread, law in (("iid", 1, 0.0, "simplex"), ("planted", 1, 0.02, "simplex"),
                                 ("planted", 1, 0.4, "rem"), ("gaussian", 1024, 0.0, "simplex"),
                                 ("gaussian", 2, 0.0, "simplex")):
        for n in 2 ** np.arange(8, 15):
            for draw in range(6):
                beta = (simplex_beta50(n, 0.5) if law == "simplex"
                        else 2 * rem_max_location(n) / spread)
                rows.append({"kind": kind, "d": d, "spread": spread, "n": n, "draw": draw,
                             "log_n": math.log(n), "score_sd": spread or 1.0,
                             "beta_50": float(beta) * (1 + 0.05 * rng.standard_normal()),
                             "class": class_label(kind, d, spread)})
    return summarize_universality(pd.DataFrame(rows))


@negative_control("EXT-4")
def ext_4_control():
    return decide_ext4(ext_4_alternative(), "iid", ["gaussian d=1024", "planted σ=0.02"],
                       "planted σ=0.4", "gaussian d=2")


# ----------------------------------------------------------------------------- EXT-5
def ext5_numbers(quick: bool, seed: int) -> dict:
    """The N* solver against e^{2/s²} (closed form typed here), the SI octave ratios and the
    measured turnover of LogN(0.4)'s global entropy with its candidate points."""
    errors = [abs(crossings(LogN(s))[0][0] / math.exp(2 / s**2) - 1) for s in (0.3, 0.4, 0.5)]
    octaves = octave_ratios(ScaleInvariant(10.0), range(SI_CHECK_FROM, 101))
    settings = TurnoverSettings.of(quick)
    table = turnover_study(settings, seed=seed)
    peak = turnover_peak(table, bootstrap=settings.bootstrap, seed=seed)
    exact = ({} if quick else
             exact_turnover_peak(settings.s, settings.n_min, settings.n_max))
    return {"solver_error": max(errors), "si_ratio_min": float(octaves["ratio"].min()),
            "si_ratio_max": float(octaves["ratio"].max()), "peak": peak, "exact": exact,
            "points": logn_points(settings.s), "s": settings.s}


def decide_ext5(numbers: dict) -> Measurement:
    """FAIL if the N* solver misses e^{2/s²} (``SOLVER_TOL``), an SI octave with t ≥ 2¹⁴ is off
    the critical band, or LogN's entropy has no interior maximum (fewer than 95 % of the
    bootstrap maxima inside the range). Otherwise PASS if the turnover's 95 % interval contains
    N* = e^{2/s²} (N* explains the turnover), else DIVERGES (it does not)."""
    peak, pts = numbers["peak"], numbers["points"]
    si_ok = (abs(numbers["si_ratio_min"] - 1) <= CRITICAL_BAND
             and abs(numbers["si_ratio_max"] - 1) <= CRITICAL_BAND)
    sane = numbers["solver_error"] <= SOLVER_TOL and si_ok and peak["interior"] >= 0.95
    star = pts["freezing_asymptotic"]
    outcome = ("FAIL" if not sane else "PASS" if peak["ci_low"] <= star <= peak["ci_high"]
               else "DIVERGES")
    inside = {k: peak["ci_low"] <= v <= peak["ci_high"] for k, v in pts.items()}
    ratios = [peak_ratios(numbers["s"], peak[k], k) for k in ("n_peak", "ci_low", "ci_high")]
    exact = numbers.get("exact") or {}
    exact_text = (f"; exact route (no sampling): maximum at N = {exact['n_peak_exact']:.4g}, "
                  f"s log N/a_N = {exact['over_a_n_exact']:.3f}" if exact else "")
    return Measurement(outcome, (
        f"LogN(s = {numbers['s']}) entropy maximum at N = {peak['n_peak']:.3g} "
        f"[{peak['ci_low']:.3g}, {peak['ci_high']:.3g}]; N* = e^(2/s²) = {star:.3g} "
        f"({'inside' if inside['freezing_asymptotic'] else 'outside'}), annealed stationary "
        f"point e^(1/s²) = {pts['annealed_stationary']:.3g} "
        f"({'inside' if inside['annealed_stationary'] else 'outside'}), finite-N freezing "
        f"s log N = a_N at {pts['freezing_finite']:.3g} "
        f"({'inside' if inside['freezing_finite'] else 'outside'}); at the maximum s log N = "
        f"{ratios[0]['over_sqrt_n_peak']:.3f} [{ratios[1]['over_sqrt_ci_low']:.3f}, "
        f"{ratios[2]['over_sqrt_ci_high']:.3f}] × √(2 log N) and {ratios[0]['over_a_n_n_peak']:.3f}"
        f" [{ratios[1]['over_a_n_ci_low']:.3f}, {ratios[2]['over_a_n_ci_high']:.3f}] × a_N"
        f"{exact_text}; SI octaves 2^{SI_CHECK_FROM}"
        f"…2^100: σ_t/√(2 log t) in [{numbers['si_ratio_min']:.3f}, "
        f"{numbers['si_ratio_max']:.3f}]; solver error {numbers['solver_error']:.1e}"),
        value=peak["n_peak"], ci_low=peak["ci_low"], ci_high=peak["ci_high"], target=star)


@claim("EXT-5", "Every zoo scheme placed on the REM phase diagram: LogN(s) crosses the iid "
                "freezing point at N* = e^{2/s²} (≈ 2.7e5 for s = 0.4), which explains the "
                "turnover of its global entropy in SI Fig. 1; the SI transform sits at the "
                "critical point in every scale range",
       alternative="no turnover of LogN's entropy, or SI octaves off the critical point "
                   "(a turnover away from N*: DIVERGES)")
def ext_5(quick, seed):
    """Issue 10 §3 (figures/ext_zoo_phase): the zoo table's N* solver, SI's octave ratios to
    t = 2¹⁰⁰ and the maximum of LogN(0.4)'s E[H] (SI Fig. 1 Monte Carlo, independent lengths,
    weighted cubic in log N, parametric bootstrap)."""
    m = decide_ext5(ext5_numbers(bool(quick), seed))
    return Measurement(**{**m.__dict__, "detail": (
        "Annealed liquid entropy log N − s² log² N/2 peaks at e^(1/s²) and reaches 0 at "
        "N* = e^(2/s²); the measured E[H] stays far above the annealed value and peaks in "
        "between, where s·log N is within 2–4 % of the location a_N of the largest of N "
        "Gaussians (finite-N freezing), 15 % below √(2 log N). Zoo table: "
        "figures/ext_zoo_phase.csv.")})


@negative_control("EXT-5")
def ext_5_control():
    """Alternative: no turnover (E[H] increasing over the whole range)."""
    ns = np.geomspace(1e3, 1.5e5, 15).round()
    table = pd.DataFrame({"n": ns, "H_mean": 0.1 * np.log(ns) + 3, "H_se": 0.01})
    return decide_ext5({"solver_error": 0.0, "si_ratio_min": 0.95, "si_ratio_max": 0.99,
                        "peak": turnover_peak(table, bootstrap=200, seed=0), "exact": {},
                        "points": logn_points(0.4), "s": 0.4})


# ----------------------------------------------------------------------------- EXT-6
def decide_ext6(summary: dict) -> Measurement:
    """PASS iff, for every d: the octave slope difference ``(b_raw − b_centred)/c̄`` has its 95 %
    interval inside ``[0.9, 1.1]`` (prediction ``E[Ã_t] ∝ e^{c_q a_t}·α/(1+t/τ)``; the
    alternative, no dependence on ``c_q``, is 0), and centring removes at least
    ``RESTORE_FRACTION`` of it (``|b_centred − b_iid| ≤ (1 − RESTORE_FRACTION)·|b_raw − b_iid|``,
    iid ``N(0, 1)`` scores being SI's own assumption)."""
    dims = [d for d in summary if d != "simplex"]
    ok, parts = True, []
    for d in dims:
        s = summary[d]
        ratio, restored = s["ratio"], s["restored"]
        effect = abs(s["slope"]["raw"][0] - s["slope"]["iid"][0])
        ok &= (0.9 <= ratio[1] and ratio[2] <= 1.1
               and abs(restored[0]) <= (1 - RESTORE_FRACTION) * effect)
        parts.append(f"d={d}: c̄ = {s['c_bar'][0]:.2f}, (b_raw − b_centred)/c̄ = {ratio[0]:.3f} "
                     f"[{ratio[1]:.3f}, {ratio[2]:.3f}], b_centred − b_iid = {restored[0]:+.3f} "
                     f"[{restored[1]:+.3f}, {restored[2]:+.3f}], CAS phase raw "
                     f"{s['phase'].get('raw')}, centred {s['phase'].get('centred')}")
    top = summary[max(dims)]["ratio"]
    return Measurement("PASS" if ok else "FAIL", "; ".join(parts), value=top[0],
                       ci_low=top[1], ci_high=top[2], target=1.0, tolerance=0.1)


@claim("EXT-6", "SI on CAS tokens: a per-query mean score c_q makes E[Ã_t] ∝ t^{−1}·e^{c_q a_t} "
                "(a_t ≈ √(2 log t)) and breaks scale invariance (octave totals not constant) "
                "unless scores are centred per query, which restores it",
       alternative="no dependence of the octave totals on c_q")
def ext_6(quick, seed):
    """Issue 10 §3 (figures/ext_si_on_cas): Gaussian near-simplex tokens (standardised scores,
    raw and centred per query) under ScaleInvariant(10), octave slopes of log Z on a_t per
    query, intervals over draws; exact simplex tokens alongside (no fluctuation)."""
    settings = SIOnCASSettings.of(quick)
    data = si_on_cas_study(settings, seed=seed, progress=False)
    summary = summarize_si_on_cas(data["draws"], data["simplex"], settings.tau, settings.t_fit)
    m = decide_ext6(summary)
    simplex = summary["simplex"][max(summary["simplex"])]
    return Measurement(**{**m.__dict__, "detail": (
        f"n = {settings.n}, {settings.draws} draws × {settings.queries} queries per d. SI never "
        "sits at CAS's critical point here: raw scores collapse onto far keys (self weight → 0, "
        "sub-critical), centred scores keep the self key, √(d(1−ρ)) standard deviations above "
        f"the rest (self weight → 1, super-critical). Exact simplex (no fluctuation): octave "
        f"slopes raw {simplex['slope']['raw']:.2f}, centred {simplex['slope']['centred']:.2f} "
        "(= c − ā and −ā: m_t removes a_t²/2 that no fluctuation restores, so centring alone "
        "does not make simplex tokens scale invariant).")})


@negative_control("EXT-6")
def ext_6_control():
    """Alternative: the octave totals do not depend on c_q (raw slope = centred slope)."""
    summary = {128: {"ratio": (0.0, -0.02, 0.02), "restored": (0.0, -0.02, 0.02),
                     "c_bar": (10.0, 9.5, 10.5),
                     "slope": {"raw": (0.16, 0.14, 0.18), "centred": (0.16, 0.14, 0.18),
                               "iid": (0.16, 0.14, 0.18)},
                     "phase": {"raw": "supercritical", "centred": "supercritical"}}}
    return decide_ext6(summary)
