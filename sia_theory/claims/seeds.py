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
           "with_seed_checks"]

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
      survive a change of seed and the row is ``UNTESTED`` (premise: a verdict that holds with
      any one seed left out); an ``UNTESTED`` without a seed is reported only;
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
                           m.tolerance, f"premise unmet: a verdict that holds with any one seed "
                           f"left out (all seeds: {m.verdict}; " + "/".join(flips)
                           + " without one). " + detail)
    return Measurement(m.verdict, m.measured, m.value, m.ci_low, m.ci_high, m.target,
                       m.tolerance, detail)
