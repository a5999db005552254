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
           "at_least", "within", "not_beaten", "combined", "outcome", "RELATIONS",
           "SubCheck", "decide", "complete_seeds"]

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

    @property
    def sd(self) -> float:
        """The per-seed standard deviation behind the interval (``half · √n / t``; ``nan`` for
        one seed)."""
        if self.n < 2:
            return math.nan
        return self.half * math.sqrt(self.n) / float(student_t.ppf(0.5 + LEVEL / 2, self.n - 1))

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


def complete_seeds(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``frame`` (``seed`` and ``scheme`` columns or index levels) whose seed holds
    every scheme the frame holds: a comparison across all the schemes (a ranking, an ordering
    of three) is made on the seeds that ran them all, not on a seed that ran a few (the full
    grid runs SI's side schemes on more seeds than the Table 1 rows)."""
    levels = [n for n in ("seed", "scheme") if n in (frame.index.names or ())]
    flat = frame.reset_index(levels) if levels else frame
    every = flat["scheme"].nunique()
    held = flat.groupby("seed")["scheme"].nunique()
    keep = flat["seed"].isin(held.index[held == every]).to_numpy()
    return frame[keep]


def paired(a: pd.Series, b: pd.Series, level: float = LEVEL) -> Interval:
    """The t interval of ``a − b`` over the seeds both hold (paired by seed)."""
    common = a.index.intersection(b.index)
    if not len(common):
        raise ValueError("the two series share no seed")
    return t_interval((a.loc[common] - b.loc[common]).to_numpy(), level)


# --- sub-checks: held, contradicted or unresolved ----------------------------------------------
# A row's claim is a conjunction of sub-checks, each judged on one interval against one margin
# that the sub-check names (the margins and their justification: docs/training.md, "The rule").
# The rule is an equivalence-style one, the same for every relation:
#
# * a claimed difference ("a exceeds b"): held only when the whole interval lies beyond the
#   margin; contradicted when it lies wholly below the margin (inside it, or the wrong way);
# * a claimed absence ("b is not better than a"): contradicted only when the whole interval
#   shows b better by more than the margin; held when it lies wholly below the margin;
# * a bound (``at_most``, ``at_least``) and a band (``within``) are judged the same way against
#   their bound;
# * everything else (the interval straddles a margin) is unresolved.
#
# Two properties follow and are tested: the outcome depends on where the interval lies relative
# to the margin only, so a difference resolved from 0 but smaller than the margin never holds a
# claimed difference nor contradicts a claimed absence (symmetry in the margin); and shrinking an
# interval around the same mean only moves an outcome from unresolved to decided, never from
# held to contradicted or back (monotone in precision): a sharper estimate of the same gap never
# turns a gap inside the margin into a difference. At the margin itself each relation is the
# mirror of its opposite: ``exceeds`` (d > m) is contradicted by an interval ending at m, which
# holds ``not_beaten`` (d ≤ m); ``at_least`` (d ≥ b) is held by an interval starting at b.
# :func:`combined` makes the row FAIL on any contradiction, PASS when
# everything held, and UNTESTED otherwise: a comparison too wide to decide is a premise unmet,
# not evidence against the paper.

HELD = "held"
"""A sub-check's outcome: its interval lies on the claimed side of its margin."""
CONTRADICTED = "contradicted"
"""A sub-check's outcome: its interval lies on the other side of its margin (a claimed
difference shown smaller than the margin or the wrong way; a claimed absence shown beaten by
more than the margin; a bound or band shown violated)."""
UNRESOLVED = "unresolved"
"""A sub-check's outcome: its interval straddles the margin (allows the claim and its
opposite)."""


def _held_contradicted(relation: str, low, high, margin):
    """``(held, contradicted)`` boolean arrays of ``relation`` for intervals ``[low, high]``
    (arrays or floats) and ``margin``: the one definition of every relation, used by the
    sub-check functions and by the power analysis (:mod:`.power`)."""
    low, high = np.asarray(low, float), np.asarray(high, float)
    if relation == "exceeds":                    # claim: d > margin
        return low > margin, high <= margin
    if relation == "at_least":                   # claim: d ≥ bound
        return low >= margin, high < margin
    if relation in ("not_beaten", "at_most"):    # claim: d ≤ margin (or d ≤ bound)
        return high <= margin, low > margin
    if relation == "within":                     # claim: |d| ≤ margin
        return (low >= -margin) & (high <= margin), (low > margin) | (high < -margin)
    raise ValueError(f"relation must be one of {', '.join(RELATIONS)}, got {relation!r}")


RELATIONS = ("exceeds", "not_beaten", "at_most", "at_least", "within")
"""The sub-check relations (:func:`outcome` and the functions of the same names)."""


def outcome(relation: str, d: Interval, margin: float) -> str:
    """The outcome of sub-check ``relation`` (one of :data:`RELATIONS`) on interval ``d``
    against ``margin`` (``ValueError`` for an unknown relation or a margin that is not a finite
    number; ``within`` needs a margin ``> 0``)."""
    if not isinstance(margin, int | float) or not math.isfinite(margin):
        raise ValueError(f"margin must be a finite number, got {margin!r}")
    if relation == "within" and margin <= 0:
        raise ValueError(f"margin of 'within' must be > 0, got {margin!r}")
    held, contradicted = _held_contradicted(relation, d.low, d.high, margin)
    return HELD if bool(held) else CONTRADICTED if bool(contradicted) else UNRESOLVED


def exceeds(d: Interval, margin: float) -> str:
    """The claimed difference ``d > margin`` (a material difference, ``margin > 0``): held if
    the whole interval lies above ``margin``; contradicted if it lies wholly below it (the
    difference is immaterial or the wrong way); else unresolved.

    Examples
    --------
    >>> exceeds(t_interval([0.10, 0.12, 0.11]), 0.05), exceeds(t_interval([-0.01, 0.0, 0.01]), 0.05)
    ('held', 'contradicted')
    >>> noisy, immaterial = t_interval([-0.2, 0.1, 0.4]), t_interval([0.024, 0.025, 0.026])
    >>> exceeds(noisy, 0.05), exceeds(immaterial, 0.05)
    ('unresolved', 'contradicted')
    """
    return outcome("exceeds", d, margin)


def at_most(d: Interval, bound: float) -> str:
    """The one-sided claim ``d ≤ bound``: held if the whole interval is at most ``bound``,
    contradicted if it lies wholly above it."""
    return outcome("at_most", d, bound)


def at_least(d: Interval, bound: float) -> str:
    """The one-sided claim ``d ≥ bound``: held if the whole interval lies above ``bound``,
    contradicted if it lies wholly below it."""
    return outcome("at_least", d, bound)


def within(d: Interval, tolerance: float) -> str:
    """The two-sided claim ``|d| ≤ tolerance``: held if the whole interval is inside
    ``[−tolerance, tolerance]``, contradicted if it lies wholly outside on one side."""
    return outcome("within", d, tolerance)


def not_beaten(d: Interval, margin: float) -> str:
    """The claimed absence "the other is not better by more than ``margin``" on ``d`` = ours
    minus the other (lower is better): contradicted if the whole interval lies above ``margin``
    (the other resolved better by more than the margin); held if it lies wholly at or below
    ``margin``; else unresolved. The mirror of :func:`exceeds`: a resolved difference smaller
    than the margin holds the absence.

    Examples
    --------
    >>> tie, ahead = t_interval([-0.01, 0.0, 0.01]), t_interval([0.0, 0.04, 0.08])
    >>> not_beaten(tie, 0.05), not_beaten(ahead, 0.05)
    ('held', 'unresolved')
    >>> not_beaten(t_interval([0.024, 0.025, 0.026]), 0.05)  # resolved, but immaterial
    'held'
    """
    return outcome("not_beaten", d, margin)


_SHOWN = {"exceeds": "> {m:g}", "not_beaten": "≤ {m:g}", "at_most": "≤ {m:g}",
          "at_least": "≥ {m:g}", "within": "inside ±{m:g}"}


@dataclass(frozen=True)
class SubCheck:
    """One sub-check of a row: the claim that ``interval`` stands in ``relation`` (one of
    :data:`RELATIONS`) to ``margin``; :attr:`outcome` is held, contradicted or unresolved
    (:func:`outcome`). The power analysis (:mod:`.power`) reads the same objects from a
    pilot."""

    name: str
    relation: str
    interval: Interval
    margin: float

    def __post_init__(self):
        if self.relation not in RELATIONS:
            raise ValueError(f"relation must be one of {', '.join(RELATIONS)}, got "
                             f"{self.relation!r}")

    @property
    def outcome(self) -> str:
        """Held, contradicted or unresolved (:func:`outcome`)."""
        return outcome(self.relation, self.interval, self.margin)

    def __str__(self) -> str:
        return (f"{self.name} {self.interval} (claim "
                f"{_SHOWN[self.relation].format(m=self.margin)}: {self.outcome})")


def decide(subchecks) -> tuple:
    """``(verdict, text)`` of a conjunction of :class:`SubCheck` (:func:`combined` of their
    outcomes; the text lists every sub-check with its interval, claim and outcome)."""
    subchecks = list(subchecks)
    names = [c.name for c in subchecks]
    if len(set(names)) != len(names):
        raise ValueError(f"subchecks must have distinct names, got {names}")
    v, text = combined({c.name: c.outcome for c in subchecks})
    return v, text + " Intervals: " + "; ".join(str(c) for c in subchecks) + "."


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
