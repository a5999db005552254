"""Claims TRAIN-1 … TRAIN-5: SI §5 and App. G–I in miniature (THEORY.md §7; docs/training.md);
TRAIN-6 is in :mod:`.train_needle`, TRAIN-7 in :mod:`.train_phase`, on the helpers here.

Every row reads the one training grid of :func:`sia_theory.studies.train_grid.figure_grid`
through the study ``train_grid`` (full: the store ``build/sweeps/train_grid-seed<seed>``, shared
with ``make figures-train``; missing runs are trained, finished ones read back), then hands a
summary table (:func:`~sia_theory.studies.train_grid.validation_summary`: ``scheme, tau,
multiple, mean, se, n``) to a pure decision function. In miniature the claims are orderings and
shapes, judged with stated tolerances in nats per token.

Quick mode trains 8-step models (seconds), which cannot order anything: the quick rows run the
same study, summary and decision function (the mechanics), report what the decision would be and
are ``INFO``, saying so.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from sia_theory.studies import Execution, sweep_store
from sia_theory.studies.si_fig1_constants import FIG1_RECENT
from sia_theory.studies.train_attention_stats import AttentionStatsSettings, train_attention_stats
from sia_theory.studies.train_grid import (
    TABLE1_SCHEMES,
    TAU_SWEEP,
    figure_grid,
    train_grid,
    validation_summary,
)

from .core import Measurement, claim, negative_control, verdict

FLAT_TOL = 0.10  # nats: |loss(16L) − loss(L)| of a scheme that "stays flat"
"""Nats per token: the largest ``|loss(16L) − loss(L)|`` of a scheme that "stays flat"."""
BLOWUP = 0.30  # nats: the rise from L to 16L of a scheme that "blows up"
"""Nats per token: the smallest rise from L to 16L of a scheme that "blows up"."""
K_SE = 2.0  # "within s.e.": within K_SE standard errors of the difference
""""Within s.e." means within this many standard errors of the difference."""
MIN_NOISE = 0.01  # nats: floor of the run-to-run noise of a single-seed comparison
"""Nats per token: the floor of the run-to-run noise of a single-seed comparison."""
NEAR_TOL = 0.05  # nats: "nearly matches" at L (SI + RoPE against SI + p-RoPE)
"""Nats per token: "nearly matches" at L (TRAIN-3: SI + RoPE against SI + p-RoPE)."""
RESOLVED = 0.05  # TRAIN-5: a theory difference counts if > 5 % of the larger value (and 2 s.e.)
"""TRAIN-5: a theory difference counts if above 5 % of the larger value (and 2 s.e.)."""
QUICK_NOTE = ("quick: 8-step models of width 32 cannot order schemes; the study, summary and "
              "decision ran (mechanics only), verdict not judged: ")
"""The opening of every quick-mode row, which :func:`judged` makes ``INFO``."""


def sweep_store_for(name: str, seed: int) -> Path:
    """The full runs' store of study ``name`` in ``./build/sweeps`` (run from the repository's
    root, as ``make check`` does, it is the figures' store)."""
    return sweep_store(name, seed, Path.cwd() / "build" / "sweeps")


def execution_for(quick: bool, seed: int, name: str = "train_grid") -> Execution:
    """Quick: in memory; full: the store of ``name`` shared with the figures, two runs at a
    time."""
    if quick:
        return Execution()
    return Execution(store=sweep_store_for(name, seed), scheduler=None, n_workers=2, progress=True)


@lru_cache(maxsize=4)
def grid_validation(quick: bool, seed: int) -> pd.DataFrame:
    """The ``validation`` frame of the figure grid (trained once per process and mode)."""
    return train_grid(figure_grid(quick), seed=seed,
                      execution=execution_for(quick, seed))["validation"]


def _row(summary, scheme, multiple, tau=10.0):
    si = scheme.startswith("si-")
    g = summary[(summary["scheme"] == scheme) & (summary["multiple"] == multiple)
                & ((summary["tau"] == tau) if si else True)]
    if not len(g):
        raise ValueError(f"no validation of {scheme} at {multiple}L in the table")
    r = g.iloc[0]
    return float(r["mean"]), (0.0 if pd.isna(r["se"]) else float(r["se"]))


def _rise(summary, scheme, top=16):
    return _row(summary, scheme, top)[0] - _row(summary, scheme, 1)[0]


def _noise(summary, multiple) -> float:
    """Run-to-run noise of a difference of two single-seed losses at ``multiple``: ``K_SE·√2``
    times the seed standard deviation of SI + p-RoPE (τ = 10), at least ``MIN_NOISE``."""
    mean, se = _row(summary, "si-p-rope", multiple)
    n = summary[(summary["scheme"] == "si-p-rope") & (summary["tau"] == 10.0)
                & (summary["multiple"] == multiple)]["n"].iloc[0]
    sd = se * np.sqrt(n)
    return max(MIN_NOISE, K_SE * np.sqrt(2) * sd)


# --- the decision functions --------------------------------------------------------------------

def decide_train1(summary: pd.DataFrame) -> Measurement:
    """PASS iff SI + p-RoPE stays flat (``|loss(16L) − loss(L)| ≤ FLAT_TOL``) while p-RoPE and
    NoPE blow up (rise ≥ ``BLOWUP``). Value: SI + p-RoPE's rise."""
    si, prope, nope = (_rise(summary, s) for s in ("si-p-rope", "p-rope", "nope"))
    ok = abs(si) <= FLAT_TOL and prope >= BLOWUP and nope >= BLOWUP
    others = ", ".join(f"{s} {_rise(summary, s):+.3f}" for s in TABLE1_SCHEMES
                       if s not in ("si-p-rope", "p-rope", "nope")
                       and s in set(summary["scheme"]))
    return Measurement(verdict(ok), f"rise L → 16L: SI + p-RoPE {si:+.3f} (flat: ≤ {FLAT_TOL}), "
                       f"p-RoPE {prope:+.3f}, NoPE {nope:+.3f} (blow-up: ≥ {BLOWUP})",
                       value=si, target=0.0, tolerance=FLAT_TOL,
                       detail=f"Others (mean over seeds): {others}.")


def decide_train2(summary: pd.DataFrame) -> Measurement:
    """PASS iff at 16L SI + p-RoPE is not worse than any other Table 1 scheme by more than
    ``K_SE`` standard errors of the difference, and at L not worse than p-RoPE by more than
    that. Value: SI + p-RoPE's 16L loss minus the best other's."""
    si16, si16_se = _row(summary, "si-p-rope", 16)
    others = {s: _row(summary, s, 16) for s in TABLE1_SCHEMES
              if s != "si-p-rope" and s in set(summary["scheme"])}
    best = min(others, key=lambda s: others[s][0])
    worse16 = [s for s, (m, se) in others.items() if si16 - m > K_SE * np.hypot(si16_se, se)]
    si1, si1_se = _row(summary, "si-p-rope", 1)
    p1, p1_se = _row(summary, "p-rope", 1)
    margin1 = K_SE * np.hypot(si1_se, p1_se)
    ok = not worse16 and si1 - p1 <= margin1
    gap = si16 - others[best][0]
    return Measurement(verdict(ok), f"16L: SI + p-RoPE {si16:.3f} ± {si16_se:.3f}, best other "
                       f"{best} {others[best][0]:.3f} ± {others[best][1]:.3f}; L: SI + p-RoPE "
                       f"{si1:.3f} vs p-RoPE {p1:.3f} (allowed + {margin1:.3f})",
                       value=gap, target=0.0,
                       tolerance=K_SE * np.hypot(si16_se, others[best][1]),
                       detail=("significantly better than SI + p-RoPE at 16L: "
                               + ", ".join(worse16) if worse16 else
                               "no scheme significantly better at 16L") + ".")


def decide_train3(summary: pd.DataFrame) -> Measurement:
    """PASS iff under SI p-RoPE beats RoPE at 16L (SI + RoPE higher by more than the noise of
    :func:`_noise`) while nearly matching it at L (within ``NEAR_TOL``), and SI + NoPE stays
    flat (``FLAT_TOL``) but is worse than SI + p-RoPE at L by more than the noise. Value:
    SI + RoPE minus SI + p-RoPE at 16L."""
    p16, rope16, nope16 = (_row(summary, s, 16)[0] for s in ("si-p-rope", "si-rope",
                                                              "si-nope"))
    p1, rope1, nope1 = (_row(summary, s, 1)[0] for s in ("si-p-rope", "si-rope", "si-nope"))
    n16, n1 = _noise(summary, 16), _noise(summary, 1)
    checks = {"SI + RoPE worse at 16L": rope16 - p16 > n16,
              "SI + RoPE near at L": abs(rope1 - p1) <= NEAR_TOL,
              "SI + NoPE flat": abs(nope16 - nope1) <= FLAT_TOL,
              "SI + NoPE worse at L": nope1 - p1 > n1}
    failed = [k for k, ok in checks.items() if not ok]
    return Measurement(verdict(not failed), f"SI + p-RoPE / RoPE / NoPE: L {p1:.3f} / {rope1:.3f}"
                       f" / {nope1:.3f}; 16L {p16:.3f} / {rope16:.3f} / {nope16:.3f} (noise of "
                       f"one comparison {n1:.3f} at L, {n16:.3f} at 16L)",
                       value=rope16 - p16, target=n16,
                       detail="all sub-checks hold." if not failed else
                       "failed: " + ", ".join(failed) + ".")


def decide_train4(summary: pd.DataFrame) -> Measurement:
    """PASS iff SI + p-RoPE with τ = 10 is the best τ at 16L within the noise of one comparison
    (:func:`_noise`). Value: loss(τ = 10) minus the best other τ's at 16L."""
    losses = {tau: _row(summary, "si-p-rope", 16, tau)[0] for tau in TAU_SWEEP}
    at_l = {tau: _row(summary, "si-p-rope", 1, tau)[0] for tau in TAU_SWEEP}
    noise = _noise(summary, 16)
    others = {t: v for t, v in losses.items() if t != 10.0}
    best = min(others, key=others.get)
    gap = losses[10.0] - others[best]
    shown = ", ".join(f"τ = {t:g}: {v:.3f}" for t, v in losses.items())
    return Measurement(verdict(gap <= noise), f"16L: {shown} (noise {noise:.3f})",
                       value=gap, target=0.0, tolerance=noise,
                       detail=f"Spread over τ at L: {max(at_l.values()) - min(at_l.values()):.3f}"
                              " (SI: near-identical at the training length).")


SCHEMES5 = ("p-rope", "logn-p-rope", "si-p-rope")
"""TRAIN-5's schemes, whose orderings in the theory and the trained models are compared."""


def fig1_features(stats: pd.DataFrame, train_length: int) -> pd.DataFrame:
    """Per scheme of a long Fig. 1 table (``scheme, n_ctx, quantity, mean, se``): the global
    entropy and the recent-token attention at the largest context and the growth of the global
    entropy from the training length to the largest context (columns ``*_se`` beside)."""
    rows = []
    for scheme, g in stats.groupby("scheme"):
        glob = g[g["quantity"] == "global_entropy"].set_index("n_ctx").sort_index()
        mass = g[g["quantity"] == "recent_mass"].set_index("n_ctx").sort_index()
        top = glob.index.max()
        start = glob.index[np.argmin(np.abs(glob.index - train_length))]
        rows.append({"scheme": scheme, "entropy": glob.loc[top, "mean"],
                     "entropy_se": glob.loc[top, "se"], "recent": mass.loc[top, "mean"],
                     "recent_se": mass.loc[top, "se"],
                     "growth": glob.loc[top, "mean"] - glob.loc[start, "mean"],
                     "growth_se": float(np.hypot(glob.loc[top, "se"], glob.loc[start, "se"]))})
    return pd.DataFrame(rows).set_index("scheme")


def decide_train5(model: pd.DataFrame, theory: pd.DataFrame) -> Measurement:
    """PASS iff every ordering the Gaussian theory resolves between the three schemes (pairs
    whose theory difference exceeds 2 s.e. and ``RESOLVED`` of the larger value) of the global
    entropy at 16L, its growth from L to 16L and the attention on the 100 newest tokens at 16L
    has the same sign in the trained models (tables of :func:`fig1_features`). Value: the share
    of resolved orderings that agree."""
    agree, judged, wrong = 0, 0, []
    for q in ("entropy", "growth", "recent"):
        for i, a in enumerate(SCHEMES5):
            for b in SCHEMES5[i + 1:]:
                d = theory.loc[a, q] - theory.loc[b, q]
                se = np.hypot(theory.loc[a, f"{q}_se"], theory.loc[b, f"{q}_se"])
                scale = max(abs(theory.loc[a, q]), abs(theory.loc[b, q]))
                if abs(d) <= max(2 * se, RESOLVED * scale):
                    continue
                judged += 1
                if np.sign(model.loc[a, q] - model.loc[b, q]) == np.sign(d):
                    agree += 1
                else:
                    wrong.append(f"{q}: {a} {'>' if d > 0 else '<'} {b} in theory, not in model")
    share = agree / judged if judged else float("nan")
    ok = judged > 0 and agree == judged
    shown = "; ".join(f"{s}: H {model.loc[s, 'entropy']:.2f} (theory "
                      f"{theory.loc[s, 'entropy']:.2f}), growth {model.loc[s, 'growth']:+.2f} "
                      f"({theory.loc[s, 'growth']:+.2f}), recent {model.loc[s, 'recent']:.3f} "
                      f"({theory.loc[s, 'recent']:.3f})" for s in SCHEMES5)
    return Measurement(verdict(ok), f"{agree} of {judged} resolved orderings agree; {shown}",
                       value=share, target=1.0,
                       detail="; ".join(wrong) + "." if wrong else "every resolved ordering "
                       "agrees.")


# --- the rows -------------------------------------------------------------------------------

def judged(m: Measurement, quick: bool) -> Measurement:
    """``m`` itself in a full run; in quick mode the same numbers as an ``INFO`` row whose text
    opens with :data:`QUICK_NOTE` and the decision it would have been."""
    if not quick:
        return m
    return Measurement("INFO", QUICK_NOTE + f"decision {m.verdict}; " + m.measured,
                       m.value, m.ci_low, m.ci_high, m.target, m.tolerance, m.detail)


def _summary(quick, seed):
    return validation_summary(grid_validation(bool(quick), seed))


@claim("TRAIN-1", "Table 1 shape: SI + p-RoPE stays flat from L to 16L while p-RoPE and NoPE "
                  "blow up at 16L (in miniature: |rise| ≤ 0.1 nats against ≥ 0.3)",
       alternative="SI + p-RoPE rises beyond L like p-RoPE")
def train_1(quick, seed):
    """SI Table 1 / Fig. 3 (figures/train_table1)."""
    return judged(decide_train1(_summary(quick, seed)), quick)


@claim("TRAIN-2", "Table 1 / Fig. 3: SI + p-RoPE is the best scheme at 16L and not worse than "
                  "p-RoPE at L (within 2 s.e. over seeds)",
       alternative="another scheme beats SI + p-RoPE at 16L (e.g. LogN + p-RoPE lower)")
def train_2(quick, seed):
    """SI Table 1 (figures/train_table1)."""
    return judged(decide_train2(_summary(quick, seed)), quick)


@claim("TRAIN-3", "Fig. 8 / App. I.3: under SI, p-RoPE beats RoPE at 16L while nearly matching "
                  "it at L; SI + NoPE stays flat but is worse in distribution",
       alternative="SI + RoPE generalises as well as SI + p-RoPE")
def train_3(quick, seed):
    """SI App. I.3 (figures/train_si_positions)."""
    return judged(decide_train3(_summary(quick, seed)), quick)


@claim("TRAIN-4", "Fig. 5 / App. H: of τ ∈ {0.1, 1, 10, 100}, SI + p-RoPE with τ = 10 is best "
                  "at 16L (within the run-to-run noise)",
       alternative="another τ (e.g. τ = 1) clearly best at 16L")
def train_4(quick, seed):
    """SI Fig. 5 (figures/train_tau)."""
    return judged(decide_train4(_summary(quick, seed)), quick)


@claim("TRAIN-5", "Fig. 1 bottom row: the trained models' attention (no scaling, LogN, SI; "
                  "p-RoPE) shows the Gaussian theory's pattern: the same orderings of global "
                  "entropy, its growth beyond L and the attention on the "
                  f"{FIG1_RECENT} newest tokens",
       alternative="SI's attention behaves like LogN's (their statistics swapped)")
def train_5(quick, seed):
    """SI Fig. 1 bottom row (figures/train_attention_stats), seed 0's runs."""
    settings = AttentionStatsSettings.of(bool(quick))
    result = train_attention_stats(settings, seed=seed, execution=execution_for(bool(quick), seed))
    length = settings.grid.train.train_length
    m = decide_train5(fig1_features(result["model"], length),
                      fig1_features(result["theory"], length))
    return judged(m, quick)


# --- negative controls: synthetic tables ------------------------------------------------------

def synthetic_summary(rise=None, at_l=None, se=0.01, n=3) -> pd.DataFrame:
    """A summary table following the claims: every scheme at 3.90 at L; rises from L to 16L
    SI + p-RoPE 0, LogN 0.02, ALiBi 0.01, RoPE 0.5, p-RoPE 0.5, NoPE 1.5, RoPE + NTK 0.2, SI +
    RoPE 0.3, SI + NoPE 0; SI + NoPE 0.2 worse at L; SI + p-RoPE with τ ≠ 10 0.1 worse at 16L.
    ``rise`` / ``at_l`` override per ``(scheme, tau)`` (``tau`` None for non-SI)."""
    rises = {("si-p-rope", 10.0): 0.0, ("logn-p-rope", None): 0.02, ("alibi", None): 0.01,
             ("rope", None): 0.5, ("p-rope", None): 0.5, ("nope", None): 1.5,
             ("rope-ntk", None): 0.2, ("si-rope", 10.0): 0.3, ("si-nope", 10.0): 0.0,
             ("si-p-rope", 0.1): 0.1, ("si-p-rope", 1.0): 0.1, ("si-p-rope", 100.0): 0.1}
    base = {k: 3.9 for k in rises}
    base[("si-nope", 10.0)] = 4.1
    rises.update(rise or {})
    base.update(at_l or {})
    rows = []
    for (scheme, tau), r in rises.items():
        for multiple in (1, 4, 16):
            loss = base[(scheme, tau)] + r * np.log2(multiple) / 4
            rows.append({"scheme": scheme, "tau": np.nan if tau is None else tau,
                         "length": 256 * multiple, "multiple": multiple, "mean": loss,
                         "se": se, "n": n})
    return pd.DataFrame(rows)


def synthetic_fig1(swap=False, si_recent_scale=None):
    """Fig. 1 feature tables ``(model, theory)``: the theory's pattern (no scaling highest
    entropy and growth, lowest recent attention; SI's recent attention 3× LogN's) with the model
    following it; ``swap`` exchanges SI's and LogN's measured rows; ``si_recent_scale`` sets
    SI's measured recent attention to that multiple of LogN's."""
    theory = pd.DataFrame({"entropy": [7.0, 4.0, 3.6], "growth": [2.7, 1.0, 0.8],
                           "recent": [0.02, 0.05, 0.15]}, index=list(SCHEMES5))
    for c in ("entropy", "growth", "recent"):
        theory[f"{c}_se"] = 0.001
    model = theory.copy()
    model[["entropy", "growth", "recent"]] *= 0.9
    if swap:
        model.loc[["logn-p-rope", "si-p-rope"]] = model.loc[["si-p-rope", "logn-p-rope"]].values
    if si_recent_scale is not None:
        model.loc["si-p-rope", "recent"] = si_recent_scale * model.loc["logn-p-rope", "recent"]
    return model, theory


@negative_control("TRAIN-1")
def train_1_control():
    """SI + p-RoPE rises like p-RoPE (0.5 from L to 16L)."""
    return decide_train1(synthetic_summary(rise={("si-p-rope", 10.0): 0.5}))


@negative_control("TRAIN-2")
def train_2_control():
    """LogN + p-RoPE 0.1 below SI + p-RoPE at 16L."""
    return decide_train2(synthetic_summary(rise={("logn-p-rope", None): -0.1}))


@negative_control("TRAIN-3")
def train_3_control():
    """SI + RoPE generalises as SI + p-RoPE (no rise)."""
    return decide_train3(synthetic_summary(rise={("si-rope", 10.0): 0.0}))


@negative_control("TRAIN-4")
def train_4_control():
    """τ = 1 best at 16L by 0.1."""
    return decide_train4(synthetic_summary(rise={("si-p-rope", 1.0): -0.1}))


@negative_control("TRAIN-5")
def train_5_control():
    """SI's and LogN's attention statistics swapped."""
    return decide_train5(*synthetic_fig1(swap=True))


def _margin(se=0.01):
    return K_SE * np.hypot(se, se)


# nearest alternatives: the judged quantity 20 % beyond its tolerance
negative_control("TRAIN-1", "SI rise 20 % beyond the flat tolerance")(
    lambda: decide_train1(synthetic_summary(rise={("si-p-rope", 10.0): 1.2 * FLAT_TOL})))
negative_control("TRAIN-1", "p-RoPE rise 20 % short of a blow-up")(
    lambda: decide_train1(synthetic_summary(rise={("p-rope", None): 0.8 * BLOWUP})))
negative_control("TRAIN-1", "NoPE rise 20 % short of a blow-up")(
    lambda: decide_train1(synthetic_summary(rise={("nope", None): 0.8 * BLOWUP})))
negative_control("TRAIN-2", "best other 20 % beyond 2 s.e. below SI at 16L")(
    lambda: decide_train2(synthetic_summary(rise={("alibi", None): -1.2 * _margin()})))
negative_control("TRAIN-2", "SI 20 % beyond 2 s.e. above p-RoPE at L")(
    lambda: decide_train2(synthetic_summary(at_l={("si-p-rope", 10.0): 3.9 + 1.2 * _margin()})))
_NOISE = K_SE * np.sqrt(2) * 0.01 * np.sqrt(3)  # _noise of synthetic_summary (se 0.01, n 3)
negative_control("TRAIN-3", "SI + RoPE's 16L gap 20 % below the noise")(
    lambda: decide_train3(synthetic_summary(rise={("si-rope", 10.0): 0.8 * _NOISE})))
negative_control("TRAIN-3", "SI + NoPE's L gap 20 % below the noise")(
    lambda: decide_train3(synthetic_summary(at_l={("si-nope", 10.0): 3.9 + 0.8 * _NOISE})))
negative_control("TRAIN-3", "SI + RoPE 20 % beyond the near tolerance at L")(
    lambda: decide_train3(synthetic_summary(at_l={("si-rope", 10.0): 3.9 + 1.2 * NEAR_TOL})))
negative_control("TRAIN-4", "τ = 10 20 % beyond the noise above the best")(
    lambda: decide_train4(synthetic_summary(rise={("si-p-rope", 10.0): 1.2 * _NOISE,
                                                  ("si-p-rope", 0.1): 0.0,
                                                  ("si-p-rope", 1.0): 0.0,
                                                  ("si-p-rope", 100.0): 0.0})))
negative_control("TRAIN-5", "SI's recent-token attention 20 % below LogN's")(
    lambda: decide_train5(*synthetic_fig1(si_recent_scale=0.8)))
