"""CAS-5 (CAS Fig. 1): the mean post-update inner product over a ``(γ, ρ)`` grid for ``d = 512``,
32 and 2, the 10/50/90 % crossings of each ``d`` at nominal ``ρ``, and how the midpoint of the
lowest ``d`` scales with ``n`` (:func:`phase_diagram`, reduced by
:func:`summarize_phase_diagram`). Every grid row and draw is a sweep cell (resumable with a
store; ``sia-theory sweep cas_fig1_phase_diagram``). Every random draw comes from
:func:`sia_theory._infra.seeding.rng_for` keyed by :data:`PHASE_STUDY`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np
import pandas as pd

from .._infra.settings import StudySettings
from .._infra.stats import fit_slope, mean_ci
from .._infra.validate import check_int, check_real, check_sequence
from ..cas.dynamics import simulate_token_step
from ..cas.transition import transition_draw
from .base import study

__all__ = ["PhaseDiagramSettings", "phase_diagram", "summarize_phase_diagram",
           "phase_diagram_cells", "phase_diagram_cell", "phase_seed_key", "PHASE_STUDY"]


@dataclass(frozen=True)
class PhaseDiagramSettings(StudySettings):
    """CAS Fig. 1 grid (``size × size`` over ``γ ∈ [0, gamma_max]`` and ``ρ``, one draw per
    ``(d, ρ)`` row) and, at nominal ``rho``, the 10/50/90 % crossings for each ``d``
    (``transition_draws`` draws at ``n``) and β₅₀ of the lowest ``d`` for ``scaling_ns``
    (``scaling_draws`` draws each, ``scaling_queries`` query rows).

    Attributes
    ----------
    n : int
        Tokens per draw (the context length).
    size : int
        Points of the grid on each axis: size values of γ times size values of ρ.
    gamma_max : float
        The largest inverse temperature γ of the grid (the grid is [0, gamma_max]).
    rho_range : (float, float)
        The lowest and highest nominal cosine ρ of the grid, inside (0, 1).
    dims : tuple of int
        The token dimensions d, one phase diagram each.
    rho : float
        The nominal cosine at which the 10/50/90 % crossings and β₅₀ are measured.
    transition_draws : int
        Draws per dimension d for the crossings (>= 2).
    scaling_ns : tuple of int
        The context lengths n at which β₅₀ of the lowest d is measured.
    scaling_draws : int
        Draws per context length of the β₅₀ scaling (>= 2).
    scaling_queries : int
        Query rows per draw of the β₅₀ scaling.
    """

    n: int = 1000
    size: int = 40
    gamma_max: float = 10.0
    rho_range: tuple = (0.02, 0.95)
    dims: tuple = (512, 32, 2)
    rho: float = 0.5
    transition_draws: int = 6
    scaling_ns: tuple = (128, 512, 2048, 8192, 32768)
    scaling_draws: int = 12
    scaling_queries: int = 256

    def __post_init__(self):
        check_int("n", self.n, lo=3, hi=10**6)
        check_int("size", self.size, lo=2, hi=10**4)
        check_real("gamma_max", self.gamma_max, lo=0.0, lo_open=True, hi=1e3)
        pair = check_sequence("rho_range", self.rho_range)
        if len(pair) != 2:
            raise ValueError(f"rho_range must be (low, high), got {self.rho_range!r}")
        lo, hi = pair
        lo = check_real("rho_range", lo, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
        hi = check_real("rho_range", hi, lo=lo, hi=1.0, hi_open=True)
        object.__setattr__(self, "rho_range", (lo, hi))
        object.__setattr__(self, "dims", tuple(check_int("dims", d, lo=1, hi=10**5)
                                               for d in check_sequence("dims", self.dims)))
        if not self.dims:
            raise ValueError("dims must hold at least one dimension d")
        check_real("rho", self.rho, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
        check_int("transition_draws", self.transition_draws, lo=2)
        object.__setattr__(self, "scaling_ns", tuple(
            check_int("scaling_ns", n, lo=3, hi=10**6)
            for n in check_sequence("scaling_ns", self.scaling_ns)))
        check_int("scaling_draws", self.scaling_draws, lo=2)
        check_int("scaling_queries", self.scaling_queries, lo=1)

    @classmethod
    def quick(cls):
        # the d = 2 scaling is cheap and needs its full range to tell O(1) from log n
        """The seconds-long settings the tests and ``--quick`` run."""
        return cls(n=200, size=8, transition_draws=3)


PHASE_STUDY = "cas.phase_diagram"
"""Seeding study name of the phase diagram: grid row ``(d, row)`` uses ``seed_int(seed,
PHASE_STUDY, d, row)``; the transition and scaling draws ``token_rng(seed, PHASE_STUDY +
".transition" / ".scaling", n, d, draw)``."""


def phase_diagram_cells(settings: PhaseDiagramSettings) -> list[dict]:
    """The sweep cells of :func:`phase_diagram`, in the order of its tables: one per Fig. 1 row
    ``(d, ρ)`` (``part="grid"``), per crossing draw at ``n`` (``"transition"``) and per scaling
    draw (``"scaling"``); every setting a cell's numbers depend on is in its key."""
    s = settings
    rhos = np.linspace(*s.rho_range, s.size)
    grid = [{"part": "grid", "n": s.n, "d": d, "row": row, "rho": float(rho),
             "gamma_max": s.gamma_max, "size": s.size}
            for d in s.dims for row, rho in enumerate(rhos)]
    transition = [{"part": "transition", "n": s.n, "d": d, "rho": s.rho, "draw": k,
                   "queries": s.n} for d in s.dims for k in range(s.transition_draws)]
    scaling = [{"part": "scaling", "n": n, "d": min(s.dims), "rho": s.rho, "draw": k,
                "queries": s.scaling_queries} for n in s.scaling_ns
               for k in range(s.scaling_draws)]
    return grid + transition + scaling


def phase_seed_key(cell: dict) -> tuple:
    """``(study, *index)`` of a phase-diagram cell's seed (see :data:`PHASE_STUDY`)."""
    if cell["part"] == "grid":
        return PHASE_STUDY, cell["d"], cell["row"]
    return f"{PHASE_STUDY}.{cell['part']}", cell["n"], cell["d"], cell["draw"]


def phase_diagram_cell(seed: int, cell: dict, rng_seed: int) -> pd.DataFrame:
    """One phase-diagram cell. A grid row is one token draw seeded by ``rng_seed`` reused across
    the ``γ`` grid (every cell of the paper's figure is one configuration; in d = 2 the
    realised cosine of a draw varies widely); a crossing draw uses ``token_rng(seed, study, n,
    d, draw)``, the generator of the very ``SeedSequence`` whose integer form is ``rng_seed``."""
    if cell["part"] == "grid":
        gammas = np.linspace(0.0, cell["gamma_max"], cell["size"])
        return simulate_token_step(n=cell["n"], d=cell["d"], rho=cell["rho"], gamma=gammas,
                                   samples=1, seed=rng_seed)
    levels = (0.1, 0.5, 0.9) if cell["part"] == "transition" else (0.5,)
    return pd.DataFrame([transition_draw(n=cell["n"], d=cell["d"], rho=cell["rho"], seed=seed,
                                         draw=cell["draw"], queries=cell["queries"],
                                         levels=levels, study=phase_seed_key(cell)[0])])


@study("cas_fig1_phase_diagram", PhaseDiagramSettings, sweepable=True,
       cli_aliases={"d": "dims", "grid": "size"})
def phase_diagram(settings: PhaseDiagramSettings, seed: int, execution):
    """Frames ``grid``, ``transition`` and ``scaling``: the Fig. 1 cells (mean cosine before and
    after one layer, self weight, attended cosine), per-draw crossings for each ``d`` at ``n``,
    and per-draw β₅₀ of ``d = min(dims)`` for ``scaling_ns`` (``d = max(dims)`` scales as CAS-4
    shows). Every row and draw is a sweep cell; the numbers are the same on every scheduler."""
    cells, frames, _ = execution.run_cells(partial(phase_diagram_cell, seed),
                                           phase_diagram_cells(settings), seed=seed,
                                           study=PHASE_STUDY, seed_key=phase_seed_key)
    out = {}
    for part in ("grid", "transition", "scaling"):
        out[part] = pd.concat([f for c, f in zip(cells, frames, strict=True)
                               if c["part"] == part], ignore_index=True)
    for part in ("transition", "scaling"):
        out[part]["log_n"] = np.log(out[part]["n"])
    return out


def summarize_phase_diagram(transition: pd.DataFrame, scaling: pd.DataFrame) -> dict:
    """Per ``d``: midpoint ``γ₅₀/γ_c`` of the realised cosine (mean and 95 % interval over
    draws) and 10–90 % width in ``γ/γ_c``; per scaled ``d``: exponent ``k`` of
    ``β₅₀(1 − ρ̄) ∝ (log n)^k`` (each draw's β₅₀ on the scale of its own realised cosine ρ̄:
    ``k = 1`` if the midpoint follows ``γ_c(ρ̄) log n``, ``k = 0`` if it stays O(1); removing ρ̄
    takes out most of the draw-to-draw scatter of low ``d``)."""
    out = {"by_d": {}, "k": {}}
    for d, sub in transition.groupby("d"):
        scale = sub["log_n"] / (1 - sub["rho_mean"])  # γ_c(realised ρ) log n
        mid = mean_ci(sub["beta_50"] / scale)
        width = (sub["beta_10"] - sub["beta_90"]) / scale
        out["by_d"][int(d)] = {"mid": mid[0], "mid_ci": mid[1:], "width": float(width.mean()),
                               "width_defined": float(np.isfinite(width).mean()),
                               "rho_mean": float(sub["rho_mean"].mean()),
                               "rho_sd": float(sub["rho_mean"].std(ddof=1))}
    for d, sub in scaling.groupby("d"):
        fit = fit_slope(np.log(sub["log_n"]), np.log(sub["beta_50"] * (1 - sub["rho_mean"])))
        out["k"][int(d)] = fit
        out.setdefault("beta50_by_n", {})[int(d)] = sub.groupby("n")["beta_50"].median().to_dict()
    return out
