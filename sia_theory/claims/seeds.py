"""Between-seed statistics of the trained-model claims: t intervals of per-seed values and of
differences paired by seed, and verdicts with one seed left out.

Every training run of the grid sees the same data in the same order; its seed sets only the
initialisation. Two schemes trained from the same seed are therefore compared seed by seed (the
difference ``a_k − b_k``), and the interval is Student's t of those differences over the seeds
they share: ``mean ± t(0.975, n − 1) · sd / √n``. The half-width is the smallest difference such a
comparison can resolve; with one seed it is infinite (nothing is resolved).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import t as student_t

from .core import Measurement

__all__ = ["Interval", "t_interval", "paired", "losses", "leave_one_out", "LEVEL",
           "with_seed_checks", "HELD", "CONTRADICTED", "UNRESOLVED", "exceeds", "at_most",
           "at_least", "within", "not_beaten", "combined"]

LEVEL = 0.95
"""Two-sided level of every between-seed interval of the training claims."""


@dataclass(frozen=True)
class Interval:
    """``mean`` of ``n`` per-seed values with its t interval ``[low, high]`` (``half`` its
    half-width; ``inf`` for one seed)."""

    mean: float
    low: float
    high: float
    half: float
    n: int

    def above(self, bound: float) -> bool:
        """Whether the whole interval lies above ``bound``."""
        return self.low > bound

    def below(self, bound: float) -> bool:
        """Whether the whole interval lies below ``bound``."""
        return self.high < bound

    def within(self, tolerance: float) -> bool:
        """Whether the whole interval lies in ``[−tolerance, tolerance]``."""
        return -tolerance <= self.low and self.high <= tolerance

    def __str__(self) -> str:
        if not math.isfinite(self.half):
            return f"{self.mean:+.3f} (n = {self.n}, no interval)"
        return f"{self.mean:+.3f} [{self.low:+.3f}, {self.high:+.3f}]"


def t_interval(values, level: float = LEVEL) -> Interval:
    """The t interval of the mean of ``values`` (finite numbers, at least one).

    Examples
    --------
    >>> iv = t_interval([1.0, 2.0, 3.0])
    >>> round(iv.mean, 6), round(iv.half, 4)  # t(0.975, 2) = 4.3027, sd = 1
    (2.0, 2.4841)
    """
    x = np.asarray(values, dtype=float)
    if x.ndim != 1 or x.size == 0 or not np.isfinite(x).all():
        raise ValueError(f"values must be a non-empty 1-D array of finite numbers, got {x!r}")
    mean = float(x.mean())
    if x.size == 1:
        return Interval(mean, -math.inf, math.inf, math.inf, 1)
    half = float(student_t.ppf(0.5 + level / 2, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size))
    return Interval(mean, mean - half, mean + half, half, int(x.size))


def losses(frame: pd.DataFrame, scheme: str, multiple: int, tau: float | None = 10.0
           ) -> pd.Series:
    """The per-seed losses (indexed by seed) of ``scheme`` at ``multiple`` × L in a frame of
    ``scheme, seed, tau, multiple, loss``; ``tau`` selects the SI schemes' runs (ignored for the
    others). ``ValueError`` if the frame holds none."""
    tau_col = frame["tau"].astype(float)
    rows = (frame["scheme"] == scheme) & (frame["multiple"] == multiple)
    if scheme.startswith("si-"):
        rows &= np.isclose(tau_col, float(tau))
    g = frame[rows]
    if not len(g):
        shown = f" (τ = {tau:g})" if scheme.startswith("si-") else ""
        raise ValueError(f"no validation of {scheme}{shown} at {multiple}L in the table")
    return g.groupby("seed")["loss"].mean()


def paired(a: pd.Series, b: pd.Series, level: float = LEVEL) -> Interval:
    """The t interval of ``a − b`` over the seeds both hold (paired by seed)."""
    common = a.index.intersection(b.index)
    if not len(common):
        raise ValueError("the two series share no seed")
    return t_interval((a.loc[common] - b.loc[common]).to_numpy(), level)


# --- sub-checks: held, contradicted or unresolved ----------------------------------------------
# A row's claim is a conjunction of sub-checks, each judged on one interval. A sub-check is
# ``HELD`` when the interval shows it, ``CONTRADICTED`` when the interval shows the opposite
# (resolved the wrong way, or, for a claimed difference, wholly below the smallest material
# difference), and ``UNRESOLVED`` when the interval allows both. :func:`combined` makes the row
# FAIL on any contradiction, PASS when everything held, and UNTESTED otherwise: a comparison too
# wide to decide is a premise unmet, not evidence against the paper.

HELD = "held"
"""A sub-check's outcome: its interval shows the claimed relation."""
CONTRADICTED = "contradicted"
"""A sub-check's outcome: its interval shows the opposite (resolved the wrong way, or, for a
claimed difference, wholly below the smallest material difference)."""
UNRESOLVED = "unresolved"
"""A sub-check's outcome: its interval allows both the claim and its opposite."""


def _outcome(held: bool, contradicted: bool) -> str:
    return HELD if held else CONTRADICTED if contradicted else UNRESOLVED


def exceeds(d: Interval, power: float) -> str:
    """The claim ``d > 0`` (a resolved difference): held if the interval lies above 0;
    contradicted if it lies below 0, or below ``power`` (no material difference: even its upper
    end is smaller than the smallest material difference); else unresolved.

    Examples
    --------
    >>> exceeds(t_interval([0.10, 0.12, 0.11]), 0.05), exceeds(t_interval([-0.01, 0.0, 0.01]), 0.05)
    ('held', 'contradicted')
    >>> exceeds(t_interval([-0.2, 0.1, 0.4]), 0.05), exceeds(t_interval([0.0, 0.04, 0.08]), 0.05)
    ('unresolved', 'unresolved')
    """
    return _outcome(d.above(0.0), d.below(0.0) or d.high < power)


def at_most(d: Interval, bound: float) -> str:
    """The one-sided claim ``d ≤ bound``: held if the whole interval is at most ``bound``,
    contradicted if it lies wholly above it."""
    return _outcome(d.high <= bound, d.above(bound))


def at_least(d: Interval, bound: float) -> str:
    """The one-sided claim ``d ≥ bound``: held if the whole interval is at least ``bound``,
    contradicted if it lies wholly below it."""
    return _outcome(d.low >= bound, d.below(bound))


def within(d: Interval, tolerance: float) -> str:
    """The two-sided claim ``|d| ≤ tolerance``: held if the whole interval is inside
    ``[−tolerance, tolerance]``, contradicted if it lies wholly outside on one side."""
    return _outcome(d.within(tolerance), d.above(tolerance) or d.below(-tolerance))


def not_beaten(d: Interval, power: float) -> str:
    """The absence claim "the other is not better" on ``d`` = ours minus the other: contradicted
    if the interval lies above 0 (the other resolved better); held if it lies below 0 or at most
    ``power`` (the other is better by less than the smallest material difference, if at all);
    else unresolved.

    Examples
    --------
    >>> tie, ahead = t_interval([-0.01, 0.0, 0.01]), t_interval([0.0, 0.04, 0.08])
    >>> not_beaten(tie, 0.05), not_beaten(ahead, 0.05)
    ('held', 'unresolved')
    """
    return _outcome(not d.above(0.0) and (d.below(0.0) or d.high <= power), d.above(0.0))


def combined(checks: dict) -> tuple:
    """``(verdict, text)`` of a conjunction ``{name: outcome}``: FAIL if any sub-check is
    contradicted, PASS if all held, else UNTESTED; the text names the sub-checks by outcome
    (an UNTESTED one opens with "premise unmet").

    Examples
    --------
    >>> combined({"a": HELD, "b": UNRESOLVED})[0], combined({"a": CONTRADICTED, "b": UNRESOLVED})[0]
    ('UNTESTED', 'FAIL')
    """
    bad = {o for o in checks.values()} - {HELD, CONTRADICTED, UNRESOLVED}
    if bad or not checks:
        raise ValueError(f"checks must map names to held/contradicted/unresolved, got {checks!r}")
    names = {o: [k for k, v in checks.items() if v == o]
             for o in (CONTRADICTED, UNRESOLVED, HELD)}
    verdict = ("FAIL" if names[CONTRADICTED] else "PASS" if not names[UNRESOLVED]
               else "UNTESTED")
    text = "; ".join(f"{o}: {', '.join(v)}" for o, v in names.items() if v)
    if verdict == "UNTESTED":
        text = ("premise unmet: intervals that decide every sub-check (nothing is "
                "contradicted, but not everything is decided); " + text)
    return verdict, text + "."


def leave_one_out(frame: pd.DataFrame, decide) -> dict:
    """``{seed: verdict}``: ``decide(frame without that seed).verdict`` for each seed of the
    frame (empty with fewer than three seeds: two left would be one comparison)."""
    seeds = sorted(frame["seed"].unique())
    if len(seeds) < 3:
        return {}
    return {int(k): decide(frame[frame["seed"] != k]).verdict for k in seeds}


def with_seed_checks(m: Measurement, frame: pd.DataFrame, decide, earlier=None,
                     kinds=None) -> Measurement:
    """``m`` (the decision on every seed of ``frame`` at the last checkpoint) with the checks
    that say whether it can be trusted, in its detail:

    * leave-one-out: the decision with each seed left out (:func:`leave_one_out`); if any of
      them is the other decision (FAIL for a PASS, PASS for a FAIL), the verdict does not
      survive a change of seed and the row is ``UNTESTED`` (premise: a verdict that no single
      seed reverses); an ``UNTESTED`` without a seed is reported only, and when every
      leave-one-out decision is ``UNTESTED`` the detail says that the remaining seeds cannot
      decide it;
    * ``earlier``: the same frame at the checkpoint before the last; a different verdict there
      means the ordering is still moving (said, the verdict kept);
    * ``kinds``: ``{kind: frame}`` of the validation documents of one kind (prose, code), each
      decision reported.
    """
    notes = []
    loo = leave_one_out(frame, decide)
    if loo:
        notes.append("leave-one-out: " + ", ".join(f"without seed {k} {v}"
                                                    for k, v in loo.items()))
        if set(loo.values()) == {"UNTESTED"}:
            notes.append(f"with {len(loo) - 1} seeds left no leave-one-out decision is reached, "
                         "so leaving a seed out cannot test this verdict (nor does it reverse "
                         "it)")
    if earlier is not None:
        before = decide(earlier).verdict
        notes.append(f"at the checkpoint before the last: {before}"
                     + ("" if before == m.verdict else " (the ordering is still moving)"))
    for kind, part in (kinds or {}).items():
        notes.append(f"{kind} documents alone: {decide(part).verdict}")
    detail = (m.detail + " " if m.detail else "") + "; ".join(notes) + ("." if notes else "")
    # a decision the other way (PASS against FAIL) with a seed left out; one that is only
    # UNTESTED there (too few seeds left to resolve a comparison) is reported, not a flip
    flips = sorted({v for v in loo.values() if v in ("PASS", "FAIL") and v != m.verdict})
    if flips and m.verdict in ("PASS", "FAIL"):
        return Measurement("UNTESTED", m.measured, m.value, m.ci_low, m.ci_high, m.target,
                           m.tolerance, f"premise unmet: a verdict that no single seed reverses "
                           f"(all seeds: {m.verdict}; " + "/".join(flips)
                           + " without one). " + detail)
    return Measurement(m.verdict, m.measured, m.value, m.ci_low, m.ci_high, m.target,
                       m.tolerance, detail)
