"""EXT-1 … EXT-3: the entropy trichotomy in ``c`` of
:class:`~sia_theory.transforms.ScaleInvariantFamily` by the exact route (THEORY.md §6;
docs/criticality.md §2; the theory it is held against is :mod:`sia_theory.gaussian.family`).

:func:`trichotomy_study` computes ``E[H]`` (exact route, with its numerical error), ``E[Z]``,
``E[N]`` and the plug-in on a grid of ``(c, Δ, t)`` (frame ``entropy``); :func:`top_slope`,
:func:`slope_decay`, :func:`prefactor_estimates` and :func:`sqrt_log_slope` reduce it to the
numbers the figure and the claims report.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._infra.settings import StudySettings
from .._infra.validate import check_int, check_real, check_sequence
from ..gaussian.exact import expected_entropy_exact
from ..gaussian.family import frozen_entropy_limit
from ..gaussian.routes import expectation
from ..transforms import ScaleInvariantFamily
from .base import study

__all__ = ["TrichotomySettings", "trichotomy_study", "top_slope", "slope_decay",
           "prefactor_estimates", "sqrt_log_slope"]


@dataclass(frozen=True)
class TrichotomySettings(StudySettings):
    """Grid of the study: ``c`` values, ``Δ`` values, ``t = 10^k`` for ``k`` in ``log10_t``."""

    c_values: tuple = (0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0)
    deltas: tuple = (2, 5, 10)
    log10_t: tuple = tuple(range(2, 31, 2))
    tau: float = 10.0
    alpha: float = math.exp(0.5)
    rtol: float = 1e-6

    def __post_init__(self):
        c_values = tuple(check_real("c_values", c, lo=0.0, lo_open=True)
                         for c in check_sequence("c_values", self.c_values))
        deltas = tuple(check_int("deltas", d, lo=2, hi=100)
                       for d in check_sequence("deltas", self.deltas))
        log10_t = tuple(check_int("log10_t", k, lo=1, hi=30)
                        for k in check_sequence("log10_t", self.log10_t))
        if not (c_values and deltas and len(log10_t) >= 3):
            raise ValueError("c_values and deltas must be non-empty and log10_t must hold at "
                             "least 3 exponents")
        check_real("tau", self.tau, lo=0.0, lo_open=True)
        check_real("alpha", self.alpha, lo=0.0, lo_open=True)
        check_real("rtol", self.rtol, lo=1e-10, hi=1e-2)
        for name, value in (("c_values", c_values), ("deltas", deltas), ("log10_t", log10_t)):
            object.__setattr__(self, name, value)

    @classmethod
    def quick(cls):
        """The seconds-long settings the tests and ``--quick`` run."""
        return cls(c_values=(0.5, 1.0, 2.0), deltas=(10,), log10_t=(20, 25, 30))


@study("ext_trichotomy", TrichotomySettings)
def trichotomy_study(settings: TrichotomySettings, seed: int, execution):
    """Frame ``entropy``, one row per ``(c, Δ, t)``: ``a_t``, ``E[H]`` with its numerical error,
    ``E[log Z]``, ``E[N/Z]``, ``E[Z]``, ``E[N]`` (exact route) and the plug-in
    ``log E[Z] − E[N]/E[Z]``, beside the frozen limit. Deterministic: ``seed`` is not used."""
    rows = []
    for c in settings.c_values:
        fam = ScaleInvariantFamily(c, settings.tau, settings.alpha)
        for delta in settings.deltas:
            for k in settings.log10_t:
                t = 10**int(k)
                h = expected_entropy_exact(fam, t, t * delta, rtol=settings.rtol)
                ez, en = (expectation(q, fam, t, t * delta, route="exact", rtol=settings.rtol)
                          .value for q in ("Z", "N"))
                a_t = float(fam.coefficients(np.array([float(t)]))[0][0])
                rows.append({"c": c, "delta": delta, "t": float(t), "log_t": math.log(t),
                             "a_t": a_t, "H": h.value, "H_error": h.error,
                             "log_Z": h.parts["log_Z"].value,
                             "N_over_Z": h.parts["N_over_Z"].value, "EZ": ez, "EN": en,
                             "plug_in": math.log(ez) - en / ez,
                             "frozen_limit": float(frozen_entropy_limit(c))})
    return {"entropy": pd.DataFrame(rows)}


def _fit(x, y):
    design = np.column_stack([x, np.ones_like(x)])
    return float(np.linalg.lstsq(design, y, rcond=None)[0][0])


def top_slope(frame: pd.DataFrame, c, delta, *, x="log_t", y="H", points=2) -> dict:
    """Least-squares slope of ``y`` on ``x`` over the ``points`` largest ``t`` of one ``(c, Δ)``,
    with an uncertainty for the O(1) corrections: ``|slope − slope over the points just before|``
    (the drift of the local slope, which shrinks as ``t`` grows, so this bounds the distance to
    the limit when the approach is monotone and slowing) plus the numerical error
    ``2·max(H_error)/span``. Returns ``slope, uncertainty, previous, x_mid``."""
    g = frame[(frame["c"] == c) & (frame["delta"] == delta)].sort_values("t")
    xs, ys = g[x].to_numpy(), g[y].to_numpy()
    if xs.size < points + 1:
        raise ValueError(f"top_slope needs at least {points + 1} values of t, got {xs.size}")
    slope = _fit(xs[-points:], ys[-points:])
    previous = _fit(xs[-points - 1:-1], ys[-points - 1:-1])
    numeric = 2.0 * float(g["H_error"].max()) / float(xs[-1] - xs[-points]) if y == "H" else 0.0
    return {"slope": slope, "uncertainty": abs(slope - previous) + numeric,
            "previous": previous, "x_mid": float(np.mean(xs[-points:]))}


def slope_decay(frame: pd.DataFrame, c, delta) -> dict:
    """Exponent ``p`` of the local slope ``dE[H]/d log t ∝ (log t)^p`` over the largest ``t``
    (``p < −1``: the slope is integrable and ``E[H]`` bounded; ``p = −½``: ``√(log t)`` growth;
    ``p = 0``: ``log t`` growth), with the drift to the previous pair as uncertainty."""
    g = frame[(frame["c"] == c) & (frame["delta"] == delta)].sort_values("t")
    x, h = g["log_t"].to_numpy(), g["H"].to_numpy()
    local = (np.diff(h) / np.diff(x))[-3:]  # (<=3,): the top pairs only
    mid = (0.5 * (x[1:] + x[:-1]))[-3:]
    if local.size < 2 or np.any(local <= 0):
        return {"p": np.nan, "uncertainty": np.nan, "slope": float(local[-1])}
    pairs = pd.DataFrame({"c": c, "delta": delta, "t": np.exp(mid), "x": np.log(mid),
                          "H": np.log(local), "H_error": 0.0})
    top = top_slope(pairs, c, delta, x="x") if local.size >= 3 else {
        "slope": _fit(np.log(mid), np.log(local)), "uncertainty": 0.0}
    return {"p": top["slope"], "uncertainty": top["uncertainty"], "slope": float(local[-1])}


def prefactor_estimates(frame: pd.DataFrame, delta, *, c=1.0, t_mins=(1e6, 1e10, 1e14)
                        ) -> pd.DataFrame:
    """Estimates of ``A`` in ``E[H] = A·a_t + B + C/a_t (+ D/a_t²)``: one row per correction
    model and fit window ``t >= t_min`` (windows with too few points are skipped). The spread
    of ``A`` over the rows is the model uncertainty of the extrapolation."""
    rows, seen = [], set()
    g0 = frame[(frame["c"] == c) & (frame["delta"] == delta)]
    for t_min in t_mins:
        g = g0[g0["t"] >= t_min]
        if len(g) in seen:  # the same points as a smaller t_min: not a new window
            continue
        seen.add(len(g))
        a, h = g["a_t"].to_numpy(), g["H"].to_numpy()
        for name, cols in (("a, 1, 1/a", [a, np.ones_like(a), 1 / a]),
                           ("a, 1, 1/a, 1/a²", [a, np.ones_like(a), 1 / a, 1 / a**2])):
            if a.size < len(cols):
                continue
            coef = np.linalg.lstsq(np.column_stack(cols), h, rcond=None)[0]
            rows.append({"delta": delta, "t_min": t_min, "model": name, "A": float(coef[0]),
                         "B": float(coef[1]), "points": int(a.size)})
    return pd.DataFrame(rows)


def sqrt_log_slope(frame: pd.DataFrame, delta, *, c=1.0, t_min=1e10) -> float:
    """Plain least-squares slope of ``E[H]`` against ``√(log t)`` for ``t >= t_min`` (SI Fig. 2's
    regressor; → ``√2·A = 2/√π`` as ``t → ∞`` at ``c = 1``, from above because
    ``a_t = √(1 + 2 log(1 + t/τ))`` grows faster than ``√(2 log t)`` at finite ``t``)."""
    g = frame[(frame["c"] == c) & (frame["delta"] == delta) & (frame["t"] >= t_min)]
    return _fit(np.sqrt(g["log_t"].to_numpy()), g["H"].to_numpy())
