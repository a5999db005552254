"""Claim TRAIN-7: theory beside practice (the toolkit's own question): does the size of a trained
scheme's REM phase shift from L to 16L, read off the heads' scores
(:mod:`sia_theory.studies.train_phase`), rank its loss change? An exact one-sided permutation test
of Spearman's ρ over the schemes."""

from __future__ import annotations

from functools import lru_cache
from itertools import islice, permutations

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from sia_theory.studies.train_phase import PhaseSettings, train_phase

from .core import Measurement, claim, negative_control, verdict
from .train import execution_for, judged

__all__ = ["decide_train7", "spearman_critical", "synthetic_phase_summary", "ranking_with_rho",
           "ALPHA"]

ALPHA = 0.05  # TRAIN-7: one-sided level of the exact permutation test of Spearman's rho
"""TRAIN-7: the one-sided level of the exact permutation test of Spearman's ρ."""


def spearman_critical(n: int, alpha: float = ALPHA) -> float:
    """The smallest Spearman ρ of ``n`` distinct pairs whose exact one-sided permutation
    p-value is ``≤ alpha`` (all ``n!`` rankings; ``n ≤ 10``)."""
    if not 3 <= n <= 10:
        raise ValueError(f"n must be in [3, 10] for the exact distribution, got {n}")
    rho = np.round(_exact_rhos(n), 12)
    values, counts = np.unique(rho, return_counts=True)  # ascending
    p_at_least = np.cumsum(counts[::-1])[::-1] / rho.size  # P(ρ >= value) under the null
    ok = values[p_at_least <= alpha]
    return float(ok.min()) if ok.size else float("inf")


@lru_cache(maxsize=8)
def _exact_rhos(n: int) -> np.ndarray:
    ranks = np.array(list(permutations(range(n))), dtype=np.int64)  # (n!, n)
    d2 = ((ranks - np.arange(n)) ** 2).sum(axis=1)
    return 1 - 6 * d2 / (n * (n * n - 1))


def decide_train7(summary: pd.DataFrame) -> Measurement:
    """PASS iff the schemes' phase shift (median over heads of ``|log r(16L)/r(L)|``) ranks
    their loss change from L to 16L: Spearman's ρ at or above the exact one-sided critical value
    at ``ALPHA`` (:func:`spearman_critical`). ``summary``: ``scheme, phase_shift, loss_change,
    phase_changed`` (:func:`~sia_theory.studies.train_phase.phase_shift_summary`). Value: ρ."""
    n = len(summary)
    rho = float(spearmanr(summary["phase_shift"], summary["loss_change"]).statistic)
    critical = spearman_critical(n)
    p_value = float(np.mean(_exact_rhos(n) >= rho - 1e-12))
    shown = ", ".join(f"{r.scheme} {r.phase_shift:.2f} / {r.loss_change:+.3f}"
                      for r in summary.sort_values("loss_change").itertuples())
    # decided on the exact p-value (the critical value is the same decision, but a ρ equal to
    # it must not fail on a rounding of the two)
    return Measurement(verdict(p_value <= ALPHA), f"ρ = {rho:+.2f} over {n} schemes (exact "
                       f"one-sided p = {p_value:.3f}; critical {critical:.3f} at {ALPHA}); phase "
                       f"shift / loss change: {shown}", value=rho, target=critical,
                       detail="share of heads that changed phase: " + ", ".join(
                           f"{r.scheme} {r.phase_changed:.2f}" for r in summary.itertuples())
                       + ".")


@claim("TRAIN-7", "Theory beside practice (the toolkit's question, not a paper's): the size of a "
                  "trained scheme's REM phase shift from L to 16L ranks its loss change "
                  f"(Spearman ρ significant at {ALPHA}, one-sided, exact, over the nine "
                  "schemes)",
       alternative="no relation, or the reverse ranking")
def train_7(quick, seed):
    """figures/train_phase, seed 0's runs."""
    result = train_phase(PhaseSettings.of(bool(quick)), seed=seed,
                         execution=execution_for(bool(quick), seed))
    return judged(decide_train7(result["summary"]), quick)


def synthetic_phase_summary(order=None, n=9) -> pd.DataFrame:
    """``n`` schemes with phase shifts ``0.1 … 0.1 n`` and loss changes ranked by ``order``
    (a permutation of ``range(n)``; default: the same ranking, ρ = 1)."""
    order = list(range(n)) if order is None else list(order)
    return pd.DataFrame({"scheme": [f"s{k}" for k in range(n)],
                         "phase_shift": 0.1 * (1 + np.arange(n)),
                         "loss_change": 0.05 * np.asarray(order, float),
                         "phase_changed": 0.0})


def ranking_with_rho(rho: float, n: int = 9) -> tuple:
    """The first permutation (lexicographic) of ``range(n)`` whose Spearman ρ against the
    identity is the attainable value nearest to ``rho`` (:func:`_exact_rhos` lists them in
    that order)."""
    k = int(np.argmin(np.abs(_exact_rhos(n) - rho)))
    return next(islice(permutations(range(n)), k, None))


negative_control("TRAIN-7")(lambda: decide_train7(synthetic_phase_summary(order=range(8, -1, -1))))
negative_control("TRAIN-7", "no relation (ρ = 0)")(
    lambda: decide_train7(synthetic_phase_summary(order=ranking_with_rho(0.0))))
negative_control("TRAIN-7", "ρ 20 % below the critical value")(
    lambda: decide_train7(synthetic_phase_summary(
        order=ranking_with_rho(0.8 * spearman_critical(9)))))
