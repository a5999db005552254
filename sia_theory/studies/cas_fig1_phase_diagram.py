"""The CAS forward-pass studies, one definition each: the figure script and the claim call the
same function with the same settings (``Settings.quick()`` or ``Settings.full()``), and the claim's
headline number comes from the same summary function applied to the figure's data.

* :func:`transition_study` — β₅₀ against log n and the near-simplex window (CAS-4,
  ``figures/cas_transition``),
* :func:`phase_diagram` — CAS Fig. 1 and the d = 512 / 32 / 2 transitions (CAS-5),
* :func:`depth_study` — the layer iterated at fixed β (CAS-8, ``figures/cas_depth``),
* :func:`sparsity_study` — how many tokens a query attends to (CAS-7,
  ``figures/cas_sparsity``).

Every random draw comes from :func:`sia_theory._infra.seeding.rng_for` keyed by the study's name.
The Jacobian and exact-simplex studies are in :mod:`sia_theory.studies.cas_fig2_jacobian`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np
import pandas as pd

from .._infra.seeding import check_seed, seed_int
from .._infra.settings import StudySettings
from .._infra.stats import fit_slope, mean_ci
from ..cas.config import PHASES
from ..cas.dynamics import simulate_depth, simulate_token_step
from ..cas.simplex import critical_gamma, simplex_inner_product, simplex_sparsity
from ..cas.transition import transition_draw, transition_draws

__all__ = ["TransitionSettings", "transition_study", "summarize_transition",
           "PhaseDiagramSettings", "phase_diagram", "summarize_phase_diagram",
           "phase_diagram_cells", "phase_diagram_cell", "phase_seed_key", "PHASE_STUDY",
           "DepthSettings", "depth_study", "summarize_depth",
           "SparsitySettings", "sparsity_study", "summarize_sparsity",
           "RELATIVE_GAMMAS"]

RELATIVE_GAMMAS = dict(zip(PHASES, (0.5, 1.0, 1.5), strict=True))
"""``γ/γ_c`` representing each phase in the single-layer studies."""


# ----------------------------------------------------------------------------- CAS-4
@dataclass(frozen=True)
class TransitionSettings(StudySettings):
    """β₅₀ of Gaussian near-simplex tokens for each ``n`` in ``ns`` (``draws`` each, measured on
    ``queries`` query rows), and the realised cosine range for each ``d`` in ``window_dims`` at
    ``n = window_n``."""

    d: int = 512
    rho: float = 0.5
    ns: tuple = tuple(2**k for k in range(7, 15))
    draws: int = 4
    queries: int = 512
    window_dims: tuple = (2, 8, 32, 128, 512)
    window_n: int = 2**14

    @classmethod
    def quick(cls):
        return cls(d=128, ns=tuple(2**k for k in range(7, 12)), draws=4, queries=256,
                   window_dims=(2, 32, 128), window_n=1024)


def transition_study(settings: TransitionSettings, *, seed) -> dict:
    """``{"draws": one row per (n, draw), "windows": one row per d}`` (see
    :mod:`sia_theory.cas.transition` for the columns and the window)."""
    seed = check_seed(seed)
    draws = transition_draws(ns=settings.ns, d=settings.d, rho=settings.rho, seed=seed,
                             draws=settings.draws, queries=settings.queries)
    windows = pd.concat([transition_draws(ns=[settings.window_n], d=d, rho=settings.rho,
                                          seed=seed, draws=1, queries=settings.queries,
                                          study="cas.transition.window")
                         for d in settings.window_dims], ignore_index=True)
    windows["window_ratio"] = (1 - windows["rho_min"]) / (1 - windows["rho_max"])
    windows["near_simplex"] = windows["rho_min"] > 0
    return {"draws": draws, "windows": windows}


def summarize_transition(draws: pd.DataFrame, windows: pd.DataFrame) -> dict:
    """Exponent ``k`` of ``β₅₀ ∝ (log n)^k`` (least squares of ``log β₅₀`` on ``log log n`` over
    all draws, 95 % t interval), the fraction of draws whose ``β₅₀`` (and ``β_½``) lie in their
    near-simplex windows, ``β₅₀`` by ``n``, and the smallest ``d`` with ``ρ₁ > 0``."""
    fit = fit_slope(np.log(draws["log_n"]), np.log(draws["beta_50"]))
    inside_cos = ((draws["beta_50"] >= draws["window_cos_low"])
                  & (draws["beta_50"] <= draws["window_cos_high"]))
    inside_self = ((draws["beta_half_self_weight"] >= draws["window_self_low"])
                   & (draws["beta_half_self_weight"] <= draws["window_self_high"]))
    by_n = draws.groupby("n").agg(beta_50=("beta_50", "mean"), low=("window_cos_low", "mean"),
                                  high=("window_cos_high", "mean"),
                                  rho_mean=("rho_mean", "mean"))
    gamma50 = draws["beta_50"] * (1 - draws["rho_mean"]) / draws["log_n"]
    near = windows[windows["near_simplex"]]
    return {"k": fit["slope"], "k_se": fit["se"], "k_ci_low": fit["ci_low"],
            "k_ci_high": fit["ci_high"], "points": fit["points"],
            "inside_cos": float(inside_cos.mean()), "inside_self": float(inside_self.mean()),
            "gamma50_over_gc": float(gamma50.mean()), "by_n": by_n,
            "min_near_simplex_d": int(near["d"].min()) if len(near) else -1,
            "windows": windows}


# ----------------------------------------------------------------------------- CAS-5
@dataclass(frozen=True)
class PhaseDiagramSettings(StudySettings):
    """CAS Fig. 1 grid (``size × size`` over ``γ ∈ [0, gamma_max]`` and ``ρ``, one draw per
    ``(d, ρ)`` row) and, at nominal ``rho``, the 10/50/90 % crossings for each ``d``
    (``transition_draws`` draws at ``n``) and β₅₀ of the lowest ``d`` for ``scaling_ns``
    (``scaling_draws`` draws each, ``scaling_queries`` query rows)."""

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

    @classmethod
    def quick(cls):
        # the d = 2 scaling is cheap and needs its full range to tell O(1) from log n
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


def phase_diagram(settings: PhaseDiagramSettings, *, seed, scheduler="threads", store=None,
                  force=False, progress=True, n_workers=None) -> dict:
    """``{"grid", "transition", "scaling"}``: the Fig. 1 cells (mean cosine before and after one
    layer, self weight, attended cosine), per-draw crossings for each ``d`` at ``n``, and per-draw
    β₅₀ of ``d = min(dims)`` for ``scaling_ns`` (``d = max(dims)`` scales as CAS-4 shows).

    Every row and draw is a cell of :func:`sia_theory.sweeps.run_cells`: on this process's threads
    by default, on Dask with ``scheduler=None`` (embedded LocalCluster) or an address, and kept
    in ``store`` (resumable) if given; the numbers are the same on every scheduler."""
    from ..sweeps import run_cells

    seed = check_seed(seed)
    cells, frames, _ = run_cells(partial(phase_diagram_cell, seed),
                                 phase_diagram_cells(settings), seed=seed, store=store,
                                 scheduler=scheduler, force=force, progress=progress,
                                 study=PHASE_STUDY, seed_key=phase_seed_key, on_error="raise",
                                 n_workers=n_workers)
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


# ----------------------------------------------------------------------------- CAS-8
@dataclass(frozen=True)
class DepthSettings(StudySettings):
    """The layer iterated ``layers`` times at fixed ``β = γ log n`` for ``γ/γ_c`` in
    ``relative_gammas`` and each residual in ``alphas``, ``samples`` draws each."""

    n: int = 1024
    d: int = 128
    rho: float = 0.5
    relative_gammas: tuple = (0.5, 1.0, 2.0)
    layers: int = 12
    samples: int = 16
    alphas: tuple = (0.0, 0.5)

    @classmethod
    def quick(cls):
        return cls(n=256, d=64, layers=6, samples=8)


def depth_study(settings: DepthSettings, *, seed) -> dict:
    """``{"gaussian": one row per (α, γ/γ_c, sample, layer), "simplex": the exact simplex
    iterated through its closed form (α = 0)}``."""
    s = settings
    gc = critical_gamma(s.rho)
    frames = [simulate_depth(n=s.n, d=s.d, rho=s.rho, gamma=[g * gc for g in s.relative_gammas],
                             layers=s.layers, alpha=alpha, samples=s.samples,
                             seed=seed_int(seed, "cas.depth", idx), by_sample=True)
              for idx, alpha in enumerate(s.alphas)]
    gaussian = pd.concat(frames, ignore_index=True)
    gaussian["gamma_over_gc"] = np.round(gaussian["gamma"] / gc, 12)
    simplex = []
    for g_rel in s.relative_gammas:
        values = [s.rho]  # α = 0 maps a simplex of cosine ρ to a simplex: iterate the closed form
        for _ in range(s.layers):
            values.append(float(simplex_inner_product(n=s.n, gamma=g_rel * gc,
                                                      rho=min(values[-1], 1 - 1e-15))))
        simplex.append(pd.DataFrame({"layer": np.arange(s.layers + 1), "gamma_over_gc": g_rel,
                                     "n": s.n, "cos": values}))
    return {"gaussian": gaussian, "simplex": pd.concat(simplex, ignore_index=True)}


def summarize_depth(gaussian: pd.DataFrame) -> dict:
    """Without residual: per draw, the super-critical (largest ``γ``) drift per layer (slope of
    the cosine over layers ``0..L``) and largest single-layer rise; the sub-critical (smallest
    ``γ``) first-layer contraction and final cosine; the critical final cosine. Means with 95 %
    intervals over draws. ``super_runaway``: the fraction of super-critical draws whose cosine
    rose by more than half the sub-critical first-layer contraction over the horizon."""
    g = gaussian[gaussian["alpha"] == 0.0]
    rels = sorted(g["gamma_over_gc"].unique())
    layers = int(g["layer"].max())

    def curves(rel):  # (samples, layers + 1)
        sub = g[np.isclose(g["gamma_over_gc"], rel)]
        return sub.pivot(index="sample", columns="layer", values="cos").to_numpy()

    sub, sup = curves(rels[0]), curves(rels[-1])
    crit = curves(1.0) if any(np.isclose(rels, 1.0)) else None
    layer_axis = np.arange(layers + 1)
    drift = [np.polyfit(layer_axis, c, 1)[0] for c in sup]
    out = {"layers": layers,
           "super_drift_per_layer": mean_ci(drift),
           "super_max_step": mean_ci(np.max(np.diff(sup, axis=1), axis=1)),
           "super_total": mean_ci(sup[:, -1] - sup[:, 0]),
           "super_median_total": float(np.median(sup[:, -1] - sup[:, 0])),
           "super_runaway": float(np.mean(sup[:, -1] - sup[:, 0]
                                          > 0.5 * np.mean(sub[:, 1] - sub[:, 0]))),
           "runaway_start": float(np.min(sup[sup[:, -1] - sup[:, 0] > 0.5 * np.mean(
               sub[:, 1] - sub[:, 0]), 0], initial=np.inf)),
           "sub_first_step": mean_ci(sub[:, 1] - sub[:, 0]),
           "sub_final": mean_ci(sub[:, -1]),
           "start": float(np.mean(sup[:, 0]))}
    if crit is not None:
        out["critical_final"] = mean_ci(crit[:, -1])
        out["critical_first_step"] = mean_ci(crit[:, 1] - crit[:, 0])
    return out


# ----------------------------------------------------------------------------- CAS-7
@dataclass(frozen=True)
class SparsitySettings(StudySettings):
    """Attention sparsity for each ``n`` in ``ns`` (``draws`` independent draws each) at
    ``γ/γ_c`` = :data:`RELATIVE_GAMMAS`."""

    d: int = 512
    rho: float = 0.5
    ns: tuple = tuple(2**k for k in range(5, 13))
    draws: int = 8

    @classmethod
    def quick(cls):
        return cls(d=64, ns=tuple(2**k for k in range(5, 9)), draws=4)


def sparsity_study(settings: SparsitySettings, *, seed) -> dict:
    """``{"gaussian": one row per (n, γ, draw) with entropy and participation ratio,
    "simplex": the exact simplex's participation ratio and exp(entropy) up to n = 1e8}``."""
    s = settings
    gc = critical_gamma(s.rho)
    gammas = [g * gc for g in RELATIVE_GAMMAS.values()]
    gaussian = pd.concat([simulate_token_step(n=n, d=s.d, rho=s.rho, gamma=gammas,
                                              samples=s.draws, by_sample=True,
                                              seed=seed_int(seed, "cas.sparsity", n))
                          for n in s.ns], ignore_index=True)
    gaussian["gamma_over_gc"] = np.round(gaussian["gamma"] / gc, 12)
    gaussian["phase"] = gaussian["gamma_over_gc"].map({v: k for k, v in RELATIVE_GAMMAS.items()})
    fine = np.unique(np.geomspace(s.ns[0], 1e8, 200).round())
    simplex = []
    for phase, g_rel in RELATIVE_GAMMAS.items():
        part, perp = simplex_sparsity(n=fine, gamma=g_rel * gc, rho=s.rho)
        simplex.append(pd.DataFrame({"n": fine, "phase": phase, "gamma_over_gc": g_rel,
                                     "participation": part, "exp_entropy": perp}))
    return {"gaussian": gaussian, "simplex": pd.concat(simplex, ignore_index=True)}


def summarize_sparsity(gaussian: pd.DataFrame) -> dict:
    """Per phase: exponent of ``exp(H) ∝ n^k`` (slope of the entropy ``H`` on ``log n``) and of
    the participation ratio, each with a 95 % interval over the independent draws."""
    out = {}
    for phase in PHASES:
        sub = gaussian[gaussian["phase"] == phase]
        out[phase] = {"exp_entropy": fit_slope(np.log(sub["n"]), sub["entropy"]),
                      "participation": fit_slope(np.log(sub["n"]),
                                                 np.log(sub["effective_tokens"]))}
    return out
