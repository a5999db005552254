"""Claims TRAIN-1 … TRAIN-5: SI §5 and App. G–I in miniature (THEORY.md §7; docs/training.md);
TRAIN-6 is in :mod:`.train_needle`, TRAIN-7 in :mod:`.train_phase`, the negative controls of
TRAIN-1 … 5 in :mod:`.train_controls`.

Every row reads the one training grid of :func:`sia_theory.studies.train_grid.figure_grid`
through the study ``train_grid`` (full: the store ``build/sweeps/train_grid-seed<seed>``, shared
with ``make figures-train``; missing runs are trained, finished ones read back) and hands the
per-seed validation losses (``scheme, seed, tau, multiple, loss``) to a pure decision function,
which compares schemes seed by seed (:mod:`.seeds`: t intervals at 95 %, paired by seed, since
every run sees the same data in the same order). In miniature the claims are orderings and
shapes, judged with stated tolerances in nats per token. A row is a conjunction of sub-checks,
each held, contradicted or unresolved on its interval (:func:`.seeds.combined`): FAIL only on a
contradiction, PASS when every sub-check held, ``UNTESTED`` when nothing is contradicted but
something is unresolved (the seeds cannot decide it). Each row is decided at the last
checkpoint on every seed and its detail says (:func:`.seeds.with_seed_checks`) what the decision
is with each seed left out (a verdict that flips is ``UNTESTED``: it does not survive a change of
seed), at the checkpoint before the last (a different verdict: the ordering is still moving),
and on the prose and the code documents alone.

Quick mode trains 8-step models (seconds), which cannot order anything: the quick rows run the
same study, frames and decision function (the mechanics), report what the decision would be and
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
from sia_theory.studies.train_grid import TABLE1_ROWS, TAU_SWEEP, figure_grid, train_grid

from .core import Measurement, claim
from .power import sized
from .seeds import (
    LEVEL,
    Interval,
    SubCheck,
    complete_seeds,
    decide,
    losses,
    paired,
    with_seed_checks,
)

# --- the margins (docs/training.md, "The rule"): fixed before the deciding runs --------------
# Every margin is in nats per token and is derived from SI's own Table 1 (trained at 4k,
# validated at 4k / 16k / 64k), never from the miniature's data: SI + p-RoPE 3.244 / 3.235 /
# 3.247, LogN + p-RoPE 3.256 / 3.262 / 3.317, ALiBi 3.281 / 3.272 / 3.270, p-RoPE 3.260 / 3.984 /
# 5.735, NoPE 3.397 / 6.430 / 8.125.

MARGIN = 0.035
"""Nats per token: the smallest material difference between two schemes, half the gap at 16L
between SI + p-RoPE and LogN + p-RoPE in SI's Table 1 (3.317 − 3.247 = 0.070 at 64k), the
comparison SI's text makes between its method and the LogN scaling it refines. SI's smallest
gap at 64k, to ALiBi (3.270 − 3.247 = 0.023), is inside it: by this margin SI's own table does
not make SI materially better than ALiBi, which no row claims (TRAIN-2 claims only that SI is
not beaten). A claimed difference is held only when its interval lies above it
(:func:`.seeds.exceeds`); a claimed absence ("not beaten") is contradicted only when the other is
resolved better by more than it (:func:`.seeds.not_beaten`); "nearly matches" is an interval
inside ±MARGIN (:func:`.seeds.within`), which admits the gaps at the training length between SI
and the rows within 0.02 of it (0.012 – 0.017 at 4k), not ALiBi's 0.037."""
FLAT_TOL = 0.10
"""Nats per token: the largest rise ``loss(16L) − loss(L)`` of a scheme that "stays flat"
(one-sided: a loss that falls with more context is flat or better): LogN + p-RoPE's rise in SI's
Table 1 (3.317 − 3.256 = 0.061), which SI counts as generalising, plus :data:`MARGIN`
(0.096, rounded to 0.10)."""
BLOWUP = 0.30
"""Nats per token: the smallest rise from L to 16L of a scheme that "blows up": three times
:data:`FLAT_TOL` (so that no rise is both), 12 % of the smallest blow-up in SI's Table 1
(p-RoPE: 5.735 − 3.260 = 2.475)."""
NEAR_TOL = MARGIN
"""Nats per token: "nearly matches" at L (TRAIN-3: SI + RoPE minus SI + p-RoPE inside
±NEAR_TOL); the same number as :data:`MARGIN`."""
ORDER_FRACTION = 0.10
"""TRAIN-5: a model ordering agrees with the theory's when the model's difference (in the
theory's direction) is resolved above this fraction of the theory's own difference."""
RESOLVED = 0.05  # TRAIN-5: a theory difference counts if > 5 % of the larger value (and 2 s.e.)
"""TRAIN-5: a theory difference counts if above 5 % of the larger value (and 2 s.e.)."""
QUICK_NOTE = ("quick: 8-step models of width 32 cannot order schemes; the study, frames and "
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
def grid_frames(quick: bool, seed: int) -> dict:
    """The figure grid's per-seed frames (trained once per process and mode): ``final``, the
    pooled validation at the last checkpoint; ``earlier``, at the checkpoint before it; and
    ``prose`` / ``code``, each kind's documents at the last checkpoint (columns ``scheme, seed,
    tau, multiple, loss``)."""
    result = train_grid(figure_grid(quick), seed=seed, execution=execution_for(quick, seed))
    points = result["checkpoints"]
    steps = sorted(points["step"].unique())
    columns = ["scheme", "seed", "tau", "length", "multiple", "loss"]

    def at(step, kind="all"):
        return points[(points["step"] == step) & (points["kind"] == kind)][columns]

    frames = {"final": at(steps[-1]), "earlier": at(steps[-2]) if len(steps) > 1 else None}
    for kind in sorted(set(points["kind"]) - {"all"}):
        frames[kind] = at(steps[-1], kind)
    return frames


def grid_validation(quick: bool, seed: int) -> pd.DataFrame:
    """The per-seed validation losses at the last checkpoint (``grid_frames(...)["final"]``)."""
    return grid_frames(quick, seed)["final"]


def decided(decide, quick, seed, row=None, subchecks=None) -> Measurement:
    """``decide`` on the grid's last checkpoint with the seed, checkpoint and document-kind
    checks of :func:`.seeds.with_seed_checks`, sized by the power analysis
    (:func:`.power.sized`: an unresolved row whose comparisons need more seeds than were run is
    ``UNDERPOWERED``) when ``row`` and its ``subchecks`` function are given, then
    :func:`judged`."""
    f = grid_frames(bool(quick), seed)
    kinds = {k: v for k, v in f.items() if k not in ("final", "earlier")}
    m = with_seed_checks(decide(f["final"]), f["final"], decide, f["earlier"], kinds)
    if row is not None:
        m = sized(m, row, subchecks(f["final"]))
    return judged(m, quick)


def _rise(frame, scheme, tau=10.0, top=16) -> Interval:
    """The t interval over seeds of ``loss(top·L) − loss(L)`` of one scheme."""
    return paired(losses(frame, scheme, top, tau), losses(frame, scheme, 1, tau))


def _versus(frame, a, b, multiple, tau_a=10.0, tau_b=10.0) -> Interval:
    """The t interval of ``loss(a) − loss(b)`` at ``multiple`` × L, paired by seed."""
    return paired(losses(frame, a, multiple, tau_a), losses(frame, b, multiple, tau_b))


def _seeds(checks) -> str:
    """How many seeds the sub-checks' intervals are over: ``"3 seeds"``, or ``"3–5 seeds"``
    when the schemes ran different seed sets (each interval over the seeds its schemes
    share)."""
    counts = sorted({c.interval.n for c in checks})
    if len(counts) == 1:
        return f"{counts[0]} seed{'s' * (counts[0] != 1)}"
    return f"{counts[0]}–{counts[-1]} seeds (each interval over the seeds its schemes share)"


def _detail(subchecks) -> tuple:
    """``(verdict, detail)`` of a row's sub-checks (:func:`.seeds.decide`)."""
    return decide(subchecks)


# --- the decision functions --------------------------------------------------------------------
# Each row's sub-checks are built by ``subchecks_trainN(frame)`` (a list of
# :class:`.seeds.SubCheck`: a name, a relation, a t interval over seeds, paired by seed, and the
# margin the relation is judged against) and decided by ``decide_trainN(frame)``; the power
# analysis (:mod:`.power`) builds the same sub-checks from a pilot. A frame is the per-seed
# ``scheme, seed, tau, multiple, loss`` (the study's ``validation``, or its ``checkpoints`` at
# one step and kind).

def subchecks_train1(frame: pd.DataFrame) -> list:
    """TRAIN-1: SI + p-RoPE's rise L → 16L at most ``FLAT_TOL``; p-RoPE's and NoPE's at least
    ``BLOWUP``."""
    return [SubCheck("SI + p-RoPE flat", "at_most", _rise(frame, "si-p-rope"), FLAT_TOL),
            SubCheck("p-RoPE blows up", "at_least", _rise(frame, "p-rope"), BLOWUP),
            SubCheck("NoPE blows up", "at_least", _rise(frame, "nope"), BLOWUP)]


def decide_train1(frame: pd.DataFrame) -> Measurement:
    """SI + p-RoPE stays flat (its rise from L to 16L at most ``FLAT_TOL``: one-sided, a fall
    is not a failure) while p-RoPE and NoPE blow up (their rises at least ``BLOWUP``), each
    sub-check held, contradicted or unresolved on its t interval over seeds (:mod:`.seeds`):
    FAIL on a contradiction, PASS when all held, else UNTESTED. Value: SI + p-RoPE's mean
    rise, with its interval."""
    checks = subchecks_train1(frame)
    si, prope, nope = (c.interval for c in checks)
    v, detail = _detail(checks)
    others = ", ".join(f"{s} {_rise(frame, s)}" for s in TABLE1_ROWS
                       if s not in ("si-p-rope", "p-rope", "nope")
                       and s in set(frame["scheme"]))
    return Measurement(v, f"rise L → 16L over {_seeds(checks)} ({LEVEL:.0%} t "
                       f"intervals): SI + p-RoPE {si} (flat: at most {FLAT_TOL}), p-RoPE "
                       f"{prope}, NoPE {nope} (blow-up: at least {BLOWUP})",
                       value=si.mean, ci_low=si.low, ci_high=si.high, target=0.0,
                       tolerance=FLAT_TOL, detail=f"{detail} Others: {others}.")


def subchecks_train2(frame: pd.DataFrame) -> list:
    """TRAIN-2: SI + p-RoPE not beaten by more than ``MARGIN`` by any other Table 1 row at 16L
    (SI minus it), nor by p-RoPE at L."""
    checks = [SubCheck(f"{s} at 16L", "not_beaten", _versus(frame, "si-p-rope", s, 16), MARGIN)
              for s in TABLE1_ROWS if s != "si-p-rope" and s in set(frame["scheme"])]
    return checks + [SubCheck("p-RoPE at L", "not_beaten",
                              _versus(frame, "si-p-rope", "p-rope", 1), MARGIN)]


def decide_train2(frame: pd.DataFrame) -> Measurement:
    """No other Table 1 row (:data:`TABLE1_ROWS`, the learned LogN included) is better than SI +
    p-RoPE at 16L by more than ``MARGIN``, nor p-RoPE at L: each comparison (SI minus the other,
    paired by seed) is contradicted if its interval lies above ``MARGIN``, held if it lies at or
    below it (:func:`.seeds.not_beaten`), else unresolved; FAIL on a contradiction, PASS when all
    held, else UNTESTED. Value: SI + p-RoPE minus the best other at 16L (mean over seeds, with
    its paired interval); tolerance: ``MARGIN``."""
    checks = subchecks_train2(frame)
    others = {c.name[:-len(" at 16L")]: c.interval for c in checks[:-1]}
    best = max(others, key=lambda s: others[s].mean)  # the largest SI − other: the lowest other
    at_l = checks[-1].interval
    v, detail = _detail(checks)
    gap = others[best]
    resolution = max(d.half for d in others.values())
    return Measurement(v, f"16L, SI + p-RoPE minus the best other ({best}): {gap}; "
                       f"L, SI + p-RoPE minus p-RoPE: {at_l} ({_seeds(checks)}, paired; "
                       f"half-width up to {resolution:.3f} at 16L; margin {MARGIN})",
                       value=gap.mean, ci_low=gap.low, ci_high=gap.high, target=0.0,
                       tolerance=MARGIN, detail="SI + p-RoPE not beaten by each (SI minus it): "
                       + detail)


def subchecks_train3(frame: pd.DataFrame) -> list:
    """TRAIN-3: SI + RoPE worse than SI + p-RoPE at 16L by more than ``MARGIN``, within
    ±``NEAR_TOL`` of it at L; SI + NoPE's rise at most ``FLAT_TOL`` and SI + NoPE worse than
    SI + p-RoPE at L by more than ``MARGIN``."""
    return [SubCheck("SI + RoPE worse at 16L", "exceeds",
                     _versus(frame, "si-rope", "si-p-rope", 16), MARGIN),
            SubCheck("SI + RoPE near at L", "within",
                     _versus(frame, "si-rope", "si-p-rope", 1), NEAR_TOL),
            SubCheck("SI + NoPE flat", "at_most", _rise(frame, "si-nope"), FLAT_TOL),
            SubCheck("SI + NoPE worse at L", "exceeds",
                     _versus(frame, "si-nope", "si-p-rope", 1), MARGIN)]


def decide_train3(frame: pd.DataFrame) -> Measurement:
    """Under SI, p-RoPE beats RoPE at 16L (SI + RoPE minus SI + p-RoPE above ``MARGIN``:
    :func:`.seeds.exceeds`) while nearly matching it at L (that difference inside
    ``±NEAR_TOL``, two-sided), and SI + NoPE stays flat (its rise at most ``FLAT_TOL``,
    one-sided) but is worse than SI + p-RoPE at L (above ``MARGIN``); paired by seed, each
    sub-check held, contradicted or unresolved: FAIL on a contradiction, PASS when all held,
    else UNTESTED. Value: SI + RoPE minus SI + p-RoPE at 16L; tolerance: ``MARGIN``."""
    checks = subchecks_train3(frame)
    rope16, rope1, nope_rise, nope1 = (c.interval for c in checks)
    v, detail = _detail(checks)
    return Measurement(v, f"minus SI + p-RoPE over {rope16.n} seeds "
                       f"(paired): SI + RoPE {rope1} at L, {rope16} at 16L; SI + NoPE {nope1} "
                       f"at L; SI + NoPE's rise {nope_rise}",
                       value=rope16.mean, ci_low=rope16.low, ci_high=rope16.high, target=0.0,
                       tolerance=MARGIN, detail=detail)


def subchecks_train4(frame: pd.DataFrame) -> list:
    """TRAIN-4: τ = 10 not beaten by more than ``MARGIN`` by any other τ of
    :data:`TAU_SWEEP` at 16L (τ = 10 minus it)."""
    return [SubCheck(f"τ = {t:g}", "not_beaten",
                     _versus(frame, "si-p-rope", "si-p-rope", 16, 10.0, t), MARGIN)
            for t in TAU_SWEEP if t != 10.0]


def decide_train4(frame: pd.DataFrame) -> Measurement:
    """SI + p-RoPE with τ = 10 is the best of :data:`TAU_SWEEP` at 16L: each other τ (τ = 10
    minus it, paired by seed) judged by :func:`.seeds.not_beaten` with ``MARGIN``; FAIL on a
    contradiction, PASS when all held, else UNTESTED. A τ outside the sweep in the frame (τ
    rescaled with L) is reported, not judged; so is each τ at L (paired). Value: τ = 10 minus
    the best other τ at 16L; tolerance: ``MARGIN``."""
    taus = sorted(float(t) for t in frame.loc[frame["scheme"] == "si-p-rope", "tau"].unique())
    checks = subchecks_train4(frame)
    others = dict(zip((t for t in TAU_SWEEP if t != 10.0), (c.interval for c in checks)))
    extra = {t: _versus(frame, "si-p-rope", "si-p-rope", 16, 10.0, t) for t in taus
             if t not in TAU_SWEEP}
    at_l = {t: _versus(frame, "si-p-rope", "si-p-rope", 1, 10.0, t) for t in taus if t != 10.0}
    best = max(others, key=lambda t: others[t].mean)
    v, detail = _detail(checks)
    gap = others[best]
    return Measurement(v, f"16L, τ = 10 minus each τ ({gap.n} seeds, paired): "
                       + ", ".join(f"{c.name}: {c.interval}" for c in checks),
                       value=gap.mean, ci_low=gap.low, ci_high=gap.high,
                       target=0.0, tolerance=MARGIN,
                       detail="τ = 10 not beaten by each τ (τ = 10 minus it): " + detail
                       + "".join(f" τ rescaled with L ({t:g}, not judged): τ = 10 minus it {d}."
                                 for t, d in extra.items())
                       + " At L, τ = 10 minus each τ (paired; SI: near-identical at the "
                         "training length): " + ", ".join(f"τ = {t:g}: {d}"
                                                          for t, d in at_l.items()) + ".")


SCHEMES5 = ("p-rope", "logn-p-rope", "si-p-rope")
"""TRAIN-5's schemes, whose orderings in the theory and the trained models are compared."""


def _fig1_one(stats: pd.DataFrame, train_length: int) -> pd.DataFrame:
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


def fig1_features(stats: pd.DataFrame, train_length: int) -> pd.DataFrame:
    """Per scheme of a long Fig. 1 table (``scheme, n_ctx, quantity, mean, se``): the global
    entropy and the recent-token attention at the largest context and the growth of the global
    entropy from the training length to the largest context (columns ``*_se`` beside: the
    standard errors over windows, layers and heads of one run). A table with a ``seed`` column
    (the study's ``model`` frame) gives the features per seed and scheme (index ``seed,
    scheme``); without it, per scheme (index ``scheme``)."""
    if "seed" not in stats:
        return _fig1_one(stats, train_length)
    parts = {int(k): _fig1_one(g, train_length) for k, g in stats.groupby("seed")}
    return pd.concat(parts, names=["seed", "scheme"])


def _per_seed5(model: pd.DataFrame) -> pd.DataFrame:
    """``model`` (features of :func:`fig1_features`: index ``seed, scheme``; or ``seed`` and
    ``scheme`` columns; or index ``scheme`` alone, one run per scheme, taken as seed 0) with
    index ``seed, scheme``."""
    if isinstance(model.index, pd.MultiIndex) and list(model.index.names) == ["seed", "scheme"]:
        return model
    if {"seed", "scheme"} <= set(model.columns):
        return model.set_index(["seed", "scheme"])
    if model.index.name == "scheme" or "scheme" not in model.columns:
        return pd.concat({0: model}, names=["seed", "scheme"])
    raise ValueError("model must be indexed by seed and scheme (or hold those columns), got "
                     f"index {list(model.index.names)} and columns {list(model.columns)}")


def _across_seeds(model: pd.DataFrame, scheme: str, quantity: str) -> pd.Series:
    """The per-seed ``quantity`` of ``scheme`` (indexed by seed; ``ValueError`` if absent)."""
    try:
        return model.xs(scheme, level="scheme")[quantity]
    except KeyError:
        raise ValueError(f"model holds no run of {scheme}") from None


def theory_orderings(theory: pd.DataFrame) -> list:
    """``[(quantity, a, b, d)]``: every ordering between two schemes of :data:`SCHEMES5` that
    the Gaussian theory resolves (its difference ``d = theory_a − theory_b`` beyond 2 s.e. and
    beyond ``RESOLVED`` of the larger value) of the global entropy at 16L, its growth from L to
    16L and the attention on the newest tokens at 16L."""
    out = []
    for q in ("entropy", "growth", "recent"):
        for i, a in enumerate(SCHEMES5):
            for b in SCHEMES5[i + 1:]:
                d = float(theory.loc[a, q] - theory.loc[b, q])
                se = np.hypot(theory.loc[a, f"{q}_se"], theory.loc[b, f"{q}_se"])
                scale = max(abs(theory.loc[a, q]), abs(theory.loc[b, q]))
                if abs(d) > max(2 * se, RESOLVED * scale):
                    out.append((q, a, b, d))
    return out


def subchecks_train5(model_per_seed: pd.DataFrame, theory: pd.DataFrame) -> list:
    """TRAIN-5: for every ordering the theory resolves (:func:`theory_orderings`), the model's
    difference in the theory's direction, ``sign(d) · (model_a − model_b)`` paired by seed,
    exceeds ``ORDER_FRACTION · |d|`` (a tenth of the theory's own gap). ``model_per_seed``:
    :func:`fig1_features` of the study's ``model`` frame (per seed and scheme); ``theory``:
    :func:`fig1_features` of its ``theory`` frame."""
    model = _per_seed5(model_per_seed)
    checks = []
    for q, a, b, d in theory_orderings(theory):
        sign = float(np.sign(d))
        diff = paired(sign * _across_seeds(model, a, q), sign * _across_seeds(model, b, q))
        name = f"{q}: {a} {'>' if d > 0 else '<'} {b}"
        checks.append(SubCheck(name, "exceeds", diff, ORDER_FRACTION * abs(d)))
    return checks


def decide_train5(model: pd.DataFrame, theory: pd.DataFrame) -> Measurement:
    """Every ordering the Gaussian theory resolves between the three schemes
    (:func:`theory_orderings`) holds in the trained models, seed by seed: the model's difference
    in the theory's direction (its t interval over seeds, paired by seed) lies above
    ``ORDER_FRACTION`` of the theory's difference (:func:`subchecks_train5`,
    :func:`.seeds.exceeds`); FAIL on a contradiction (an interval wholly below its margin: the
    ordering is reversed, absent, or smaller than a tenth of the theory's gap), PASS when every
    ordering held, else UNTESTED (one seed gives no interval: UNTESTED). ``model``: per-seed
    features (:func:`fig1_features` of a table with a ``seed`` column; a table per scheme alone
    is one seed); ``theory``: :func:`fig1_features` of the Gaussian prediction. UNTESTED too if
    the theory resolves no ordering. Value: the share of the resolved orderings held."""
    model = _per_seed5(model)
    seeds = sorted(int(k) for k in model.index.get_level_values("seed").unique())
    shown = "; ".join(
        f"{s}: H {_across_seeds(model, s, 'entropy').mean():.2f} (theory "
        f"{theory.loc[s, 'entropy']:.2f}), growth {_across_seeds(model, s, 'growth').mean():+.2f} "
        f"({theory.loc[s, 'growth']:+.2f}), recent {_across_seeds(model, s, 'recent').mean():.3f}"
        f" ({theory.loc[s, 'recent']:.3f})" for s in SCHEMES5)
    per_seed = "; ".join(
        f"seed {k}: " + ", ".join(f"{s} {model.loc[(k, s), 'entropy']:.2f} / "
                                  f"{model.loc[(k, s), 'growth']:+.2f} / "
                                  f"{model.loc[(k, s), 'recent']:.3f}"
                                  for s in SCHEMES5 if (k, s) in model.index)
        for k in seeds)
    checks = subchecks_train5(model, theory)
    one = (" One seed gives no interval (infinite half-width): nothing is resolved, so the row "
           "is UNTESTED." if len(seeds) < 2 else "")
    where = (f"Per seed (H at 16L / growth L → 16L / attention on the {FIG1_RECENT} newest "
             f"tokens at 16L): {per_seed}.")
    if not checks:
        return Measurement("UNTESTED", f"the Gaussian theory resolves no ordering; mean over "
                           f"{len(seeds)} seeds: {shown}", target=1.0,
                           detail=f"premise unmet: no ordering to test. {where}")
    v, detail = decide(checks)
    held = sum(c.outcome == "held" for c in checks)
    return Measurement(v, f"{held} of {len(checks)} resolved orderings held over {len(seeds)} "
                       f"seed{'s' * (len(seeds) != 1)} ({LEVEL:.0%} t intervals of the "
                       f"model's difference in the theory's direction, paired by seed, against "
                       f"{ORDER_FRACTION:g} of the theory's difference); mean over seeds "
                       f"(theory): {shown}",
                       value=held / len(checks), target=1.0,
                       detail=f"{detail}{one} {where}")


# --- the rows -------------------------------------------------------------------------------

def judged(m: Measurement, quick: bool) -> Measurement:
    """``m`` itself in a full run; in quick mode the same numbers as an ``INFO`` row whose text
    opens with :data:`QUICK_NOTE` and the decision it would have been."""
    if not quick:
        return m
    return Measurement("INFO", QUICK_NOTE + f"decision {m.verdict}; " + m.measured,
                       m.value, m.ci_low, m.ci_high, m.target, m.tolerance, m.detail)



@claim("TRAIN-1", "Table 1 shape: SI + p-RoPE stays flat from L to 16L while p-RoPE and NoPE "
                  "blow up at 16L (in miniature, 95 % t intervals over seeds: the rise at most 0.1 "
                  "nats against at least 0.3)",
       alternative="SI + p-RoPE rises beyond L like p-RoPE")
def train_1(quick, seed):
    """SI Table 1 / Fig. 3 (figures/train_table1)."""
    return decided(decide_train1, quick, seed, "TRAIN-1", subchecks_train1)


@claim("TRAIN-2", "Table 1 / Fig. 3: SI + p-RoPE is the best scheme at 16L and not worse than "
                  "p-RoPE at L (no scheme resolved below it: paired 95 % t intervals over seeds)",
       alternative="another scheme beats SI + p-RoPE at 16L (e.g. LogN + p-RoPE lower)")
def train_2(quick, seed):
    """SI Table 1 (figures/train_table1)."""
    return decided(decide_train2, quick, seed, "TRAIN-2", subchecks_train2)


@claim("TRAIN-3", "Fig. 8 / App. I.3: under SI, p-RoPE beats RoPE at 16L while nearly matching "
                  "it at L; SI + NoPE stays flat but is worse in distribution",
       alternative="SI + RoPE generalises as well as SI + p-RoPE")
def train_3(quick, seed):
    """SI App. I.3 (figures/train_si_positions)."""
    return decided(decide_train3, quick, seed, "TRAIN-3", subchecks_train3)


@claim("TRAIN-4", "Fig. 5 / App. H: of τ ∈ {0.1, 1, 10, 100}, SI + p-RoPE with τ = 10 is best "
                  "at 16L (no τ resolved below it: paired 95 % t intervals over seeds)",
       alternative="another τ (e.g. τ = 1) clearly best at 16L")
def train_4(quick, seed):
    """SI Fig. 5 (figures/train_tau)."""
    return decided(decide_train4, quick, seed, "TRAIN-4", subchecks_train4)


@claim("TRAIN-5", "Fig. 1 bottom row: the trained models' attention (no scaling, LogN, SI; "
                  "p-RoPE) shows the Gaussian theory's pattern: the same orderings of global "
                  "entropy, its growth beyond L and the attention on the "
                  f"{FIG1_RECENT} newest tokens (each resolved above a tenth of the theory's "
                  "gap: paired 95 % t intervals over seeds)",
       alternative="SI's attention behaves like LogN's (their statistics swapped)")
def train_5(quick, seed):
    """SI Fig. 1 bottom row (figures/train_attention_stats), the runs of every seed that
    trained the three schemes (:func:`.seeds.complete_seeds`); the decision with each seed left
    out in the detail (:func:`.seeds.with_seed_checks`)."""
    settings = AttentionStatsSettings.of(bool(quick))
    result = train_attention_stats(settings, seed=seed, execution=execution_for(bool(quick), seed))
    length = settings.grid.train.train_length
    model = complete_seeds(fig1_features(result["model"], length).reset_index())
    theory = fig1_features(result["theory"], length)

    def decide5(frame):
        return decide_train5(frame, theory)

    return judged(with_seed_checks(decide5(model), model, decide5), quick)
