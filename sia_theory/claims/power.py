"""Power before runs: how many seeds each sub-check of a trained row needs to be decided.

A sub-check (:class:`.seeds.SubCheck`) is decided when its t interval over seeds lies wholly on
one side of its margin (held or contradicted, :func:`.seeds.outcome`). Given the per-seed mean
and standard deviation of the compared quantity, measured on a **pilot** that is not used for
the verdict, :func:`decision_probability` is the probability that ``n`` seeds decide it: a
seeded Monte Carlo of ``n`` normal per-seed values, their t interval at :data:`.seeds.LEVEL`,
judged by the very relation the row uses (the one definition in :mod:`.seeds`).
:func:`seeds_needed` is the smallest ``n`` whose probability reaches :data:`POWER` (80 %);
``None`` when no ``n`` up to :data:`MAX_SEEDS` does (a pilot mean at or near the margin can
never be decided: the honest outcome is "not run at a size that can decide it").

:func:`power_table` builds a row's sub-checks from a pilot frame with the row's own
``subchecks_*`` function and lists, per sub-check, the pilot's mean, s.d. and seeds, the margin,
the seeds needed, and the probability that the design's seed count decides it. The table the
trained rows use is :data:`SEEDS_NEEDED` (from the committed pilots; regenerated and checked by
``experiments/pilots/train_power.py`` and its test). A row that is unresolved while one of its
unresolved sub-checks needs more seeds than the grid ran is ``UNDERPOWERED``
(:func:`underpowered`), not ``UNTESTED``.

Reproducibility: the Monte Carlo draws come from ``rng_for(0, "claims.power", n)``; the
probabilities are bit-identical on one machine and platform (4,000 draws: standard error at most
0.008).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy.stats import t as student_t

from .._infra.seeding import rng_for
from .seeds import LEVEL, RELATIONS, SubCheck, _held_contradicted

__all__ = ["POWER", "MAX_SEEDS", "DRAWS", "decision_probability", "seeds_needed",
           "power_table", "SEEDS_NEEDED", "underpowered"]

POWER = 0.80
"""The probability with which a design must decide a sub-check (held or contradicted)."""
MAX_SEEDS = 32
"""The largest seed count :func:`seeds_needed` considers (beyond it: ``None``)."""
DRAWS = 4000
"""Monte Carlo draws per seed count in :func:`decision_probability`."""


def decision_probability(relation: str, mean: float, sd: float, margin: float, n: int,
                         level: float = LEVEL, draws: int = DRAWS) -> float:
    """The probability that ``n`` seeds decide sub-check ``relation`` against ``margin`` when
    the per-seed values are normal with ``mean`` and ``sd`` (module docstring).

    Parameters
    ----------
    relation : str
        One of :data:`.seeds.RELATIONS`.
    mean, sd : float
        The per-seed mean and standard deviation (``sd >= 0``; finite).
    margin : float
        The sub-check's margin or bound.
    n : int
        Seeds, ``2 … 1024``.

    Examples
    --------
    >>> round(decision_probability("exceeds", 0.10, 0.01, 0.035, 3), 2)  # far beyond the margin
    1.0
    >>> decision_probability("exceeds", 0.035, 0.01, 0.035, 5) < 0.1  # at the margin: never
    True
    """
    if relation not in RELATIONS:
        raise ValueError(f"relation must be one of {', '.join(RELATIONS)}, got {relation!r}")
    for name, v in (("mean", mean), ("sd", sd), ("margin", margin)):
        if not isinstance(v, int | float) or not math.isfinite(v):
            raise ValueError(f"{name} must be a finite number, got {v!r}")
    if sd < 0:
        raise ValueError(f"sd must be >= 0, got {sd!r}")
    if not isinstance(n, int | np.integer) or not 2 <= n <= 1024:
        raise ValueError(f"n must be an integer from 2 to 1024, got {n!r}")
    z = rng_for(0, "claims.power", int(n)).standard_normal((draws, int(n)))  # (draws, n)
    x = mean + sd * z
    m = x.mean(axis=1)
    half = student_t.ppf(0.5 + level / 2, n - 1) * x.std(axis=1, ddof=1) / math.sqrt(n)
    held, contradicted = _held_contradicted(relation, m - half, m + half, margin)
    return float(np.mean(held | contradicted))


def seeds_needed(relation: str, mean: float, sd: float, margin: float,
                 power: float = POWER, max_seeds: int = MAX_SEEDS) -> int | None:
    """The smallest seed count from 2 whose :func:`decision_probability` reaches ``power``;
    ``None`` if none up to ``max_seeds`` does.

    Examples
    --------
    >>> seeds_needed("not_beaten", -0.05, 0.02, 0.035)
    3
    >>> seeds_needed("exceeds", 0.036, 0.02, 0.035) is None  # a pilot mean at the margin
    True
    """
    if not 0 < power < 1:
        raise ValueError(f"power must be in (0, 1), got {power!r}")
    for n in range(2, int(max_seeds) + 1):
        if decision_probability(relation, mean, sd, margin, n) >= power:
            return n
    return None


def power_table(row: str, subchecks, design_seeds: int, pilot: str) -> pd.DataFrame:
    """One line per sub-check of ``row`` built from a pilot (``subchecks``: the row's
    :class:`.seeds.SubCheck` list on the pilot frame): ``row, sub_check, relation, margin,
    pilot, pilot_seeds, pilot_mean, pilot_sd, seeds_needed`` (``-1``: more than
    :data:`MAX_SEEDS`), ``design_seeds`` and ``power_at_design`` (the probability that the
    design's seed count decides it)."""
    lines = []
    for c in subchecks:
        if not isinstance(c, SubCheck):
            raise ValueError(f"subchecks must be SubCheck objects, got {type(c).__name__}")
        iv = c.interval
        sd = iv.sd if iv.n >= 2 else math.nan
        if not math.isfinite(sd):
            raise ValueError(f"the pilot of {row} / {c.name} has {iv.n} seed(s): at least 2 are "
                             "needed for a spread")
        needed = seeds_needed(c.relation, iv.mean, sd, c.margin)
        lines.append({"row": row, "sub_check": c.name, "relation": c.relation,
                      "margin": c.margin, "pilot": pilot, "pilot_seeds": iv.n,
                      "pilot_mean": iv.mean, "pilot_sd": sd,
                      "seeds_needed": -1 if needed is None else needed,
                      "design_seeds": int(design_seeds),
                      "power_at_design": decision_probability(c.relation, iv.mean, sd,
                                                              c.margin, int(design_seeds))})
    return pd.DataFrame(lines)


SEEDS_NEEDED: dict = {
    "TRAIN-1": {"SI + p-RoPE flat": 2, "p-RoPE blows up": 2, "NoPE blows up": 2},
    "TRAIN-2": {"rope at 16L": 2, "rope-ntk at 16L": 2, "p-rope at 16L": 2, "nope at 16L": 2,
                "alibi at 16L": 3, "logn-p-rope at 16L": 3, "logn-p-rope-learned at 16L": 3,
                "p-RoPE at L": 2},
    "TRAIN-3": {"SI + RoPE worse at 16L": 5, "SI + RoPE near at L": None, "SI + NoPE flat": 2,
                "SI + NoPE worse at L": None},
    "TRAIN-4": {"τ = 0.1": 4, "τ = 1": None, "τ = 100": 3},
}
"""``{row: {sub-check: seeds}}``: the seeds each sub-check of TRAIN-1 … 4 needs to be decided
with 80 % probability (:func:`seeds_needed`), from the committed pilots (the CPU grid of 0.4, 3
seeds, where it has the runs; else the GPU grid, 5 seeds); ``None``: more than
:data:`MAX_SEEDS`. Written by ``experiments/pilots/train_power.py`` (``figures/train_power.csv``)
and held to it by ``tests/claims/test_power.py``."""


def underpowered(row: str, subchecks) -> list:
    """``[(sub-check, needed, seeds), ...]``: the unresolved sub-checks of ``row`` whose pilot
    needs more seeds than the sub-check's own interval holds (``needed`` ``None`` beyond
    :data:`MAX_SEEDS`), from :data:`SEEDS_NEEDED`; empty when every unresolved sub-check was run
    at its size (or has no pilot). Each sub-check counts its own seeds: the side runs of a grid
    may have fewer than its Table 1 rows."""
    table = SEEDS_NEEDED.get(row, {})
    out = []
    for c in subchecks:
        if c.outcome != "unresolved" or c.name not in table:
            continue
        needed, seeds = table[c.name], c.interval.n
        if needed is None or needed > seeds:
            out.append((c.name, needed, seeds))
    return out


def sized(m, row: str, subchecks):
    """``m`` (a :class:`~.core.Measurement` of ``row``) as ``UNDERPOWERED`` when it is
    ``UNTESTED`` and :func:`underpowered` names a sub-check that its seeds cannot decide by the
    pilot's power analysis; else ``m`` unchanged. A PASS or FAIL stands: the interval decided
    it whatever the design's power."""
    from .core import Measurement

    short = underpowered(row, subchecks) if m.verdict == "UNTESTED" else []
    if not short:
        return m
    named = ", ".join(f"{name} ({seeds} seeds; needs "
                      f"{'more than ' + str(MAX_SEEDS) if n is None else n})"
                      for name, n, seeds in short)
    return Measurement("UNDERPOWERED", m.measured, m.value, m.ci_low, m.ci_high, m.target,
                       m.tolerance, f"not run at a size that can decide it: the pilot's power "
                       f"analysis ({POWER:.0%} to decide each sub-check at its margin) asks for "
                       f"more seeds for {named}. " + m.detail)
