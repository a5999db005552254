"""One phase plane for the critical inverse temperature (arXiv 2605.08505, 2605.12697) beside
EXT-4 and CAS-5. (a-d) beta against n for keys uniform on S^{d-1}: the mean mass on the nearest
key by Monte Carlo (colour), the measured sub/critical (mass 0.1) and critical/super (mass 0.9)
boundaries with 95 % intervals, the theory's boundaries lambda_l beta*_n (beta*_n ∝ n^{2/(d-1)},
lambda_l from the extreme-value route), the REM's 2a_n ((log n)^{1/2}) and the simplex's
log(n-1)/(1-rho) (log n) lines, and EXT-4's (participation beta_50 of near-simplex tokens, iid
scores) and CAS-5's (output-cosine midpoint, d = 2) measured medians; (e) the measured
boundaries in units of the theory's, beta/(lambda_l beta*_n), flat at 1 in the Poisson regime;
(f) every fitted exponent p of beta ∝ n^p against its law."""

import sys

import numpy as np
from _plotting import plt

from sia_theory.gaussian.phase import rem_max_location
from sia_theory.studies.ext_phase_plane import PhasePlaneSettings, phase_plane_study
from sia_theory.toolkit import experiment_parser, run, save_experiment

REGION_COLOURS = ("white", "0.85", "0.6")  # sub-critical, critical, super-critical
LEVEL_COLOURS = ("tab:blue", "tab:red")  # the nearest-key mass 0.1 and 0.9 boundaries
MARKERS = {"EXT-4 iid": ("kx", r"EXT-4 iid scores $\beta_{50}$"),
           "CAS-5 d=2": ("m^", r"CAS-5 output-cosine $\beta_{50}$")}
OTHER_MARKER = ("cs", r"EXT-4 near-simplex tokens $\beta_{50}$ (participation), the panel's $d$")


def _panel_plane(ax, d, result, rho):
    plane = result["plane"][result["plane"]["d"] == d]
    grid = plane.pivot(index="lam", columns="n", values="top_mass")
    ns = grid.columns.to_numpy(dtype=float)
    beta = np.outer(grid.index.to_numpy(), plane.groupby("n")["beta_star"].first().to_numpy())
    levels = sorted(result["boundaries"]["level"].unique())
    mesh = ax.contourf(np.broadcast_to(ns, beta.shape), beta, grid.to_numpy(),
                       levels=[0, *levels, 1], colors=REGION_COLOURS, alpha=0.7)
    bounds = result["boundaries"][result["boundaries"]["d"] == d]
    lims = result["limits"][result["limits"]["d"] == d].set_index("level")
    line = np.geomspace(ns[0], ns[-1], 50)
    star = (plane["beta_star"].iloc[0] / ns[0] ** (2 / (d - 1))) * line ** (2 / (d - 1))
    for colour, (level, sub) in zip(LEVEL_COLOURS, bounds.groupby("level")):
        ax.errorbar(sub["n"], sub["beta"], yerr=[sub["beta"] - sub["beta_low"],
                    sub["beta_high"] - sub["beta"]], fmt="o", color=colour, ms=4, capsize=2,
                    label=f"measured boundary: nearest-key mass {level:g} (95 % interval)")
        ax.plot(line, lims.loc[level, "lam_limit"] * star, "-", color=colour, lw=1,
                label=rf"theory $\lambda_\ell\,\beta^*_n$, mass {level:g}")
    ax.plot(line, 2 * rem_max_location(line), "k--", lw=1,
            label=r"REM $2a_n \propto (\log n)^{1/2}$")
    ax.plot(line, np.log(line - 1) / (1 - rho), "g--", lw=1,
            label=r"simplex $\log(n-1)/(1-\rho)$")
    pts = result["points"]
    for source, sub in pts[(pts["d"] == d) | ((pts["d"] == 1) & (d == 2))].groupby("source"):
        med = sub.groupby("n")["beta"].median()
        fmt, label = MARKERS.get(source, OTHER_MARKER)
        ax.plot(med.index, med.to_numpy(), fmt, ms=6, mfc="none", label=label)
    lam = ", ".join(f"{lims.loc[level, 'lam_limit']:.3g} (mass {level:g})"
                    for level in sorted(lims.index))
    ax.set(xscale="log", yscale="log", xlabel="$n$ keys", ylabel=r"$\beta$",
           title=f"({'abcd'[list(result['dims']).index(d)]}) keys on $S^{{{d - 1}}}$: "
                 rf"$\beta^*_n \propto n^{{{2 / (d - 1):.3g}}}$" + "\n"
                 rf"theory lines at $\lambda_\ell$ = {lam}")
    ax.grid(alpha=0.3, which="both")
    return mesh


def _shared_legend(fig, axes) -> None:
    """One legend for the plane panels, under the figure: each label once."""
    entries = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            entries.setdefault(label, handle)
    fig.legend(entries.values(), entries.keys(), loc="outside lower center", ncol=3,
               fontsize=8, title="panels (a)–(d)", title_fontsize=8)


def _panel_ratio(ax, bounds):
    for (d, level), sub in bounds.groupby(["d", "level"]):
        ax.errorbar(sub["n"] * (1.04 if level > 0.5 else 1), sub["ratio"],
                    yerr=[sub["ratio"] - sub["ratio_low"], sub["ratio_high"] - sub["ratio"]],
                    fmt="o-" if level < 0.5 else "s--", ms=3, capsize=2,
                    label=f"$d$ = {d}, mass {level:g}")
    ax.axhline(1, color="k", lw=1)
    ax.set(xscale="log", yscale="log", xlabel="$n$ keys",
           ylabel=r"$\beta_{\rm measured} / (\lambda_\ell^\infty \beta^*_n)$",
           title="(e) measured boundaries in units of the theory's (95 % intervals)")
    ax.legend(fontsize=7, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.13))
    ax.grid(alpha=0.3, which="both")


def _panel_exponents(ax, fits):
    for y, f in enumerate(fits.itertuples()):
        ax.errorbar(f.p, y, xerr=[[f.p - f.p_ci_low], [f.p_ci_high - f.p]], fmt="o",
                    color="k", capsize=3)
        ax.plot(f.p_law, y, "r|", ms=12)
    ax.set_yticks(range(len(fits)), [f"{s} (law {p:.3g})" for s, p in
                                     zip(fits["source"], fits["p_law"], strict=True)],
                  fontsize=6)
    ax.set(xlabel=r"exponent $p$ of $\beta \propto n^p$ (95 % t interval); red: the law's",
           title="(f) exponents on $n$ against their laws")
    ax.grid(alpha=0.3)


def draw(frames: dict, dims, rho: float):
    """The figure of the study's ``frames`` for the plane panels of ``dims`` (at most 4)."""
    fig, axes = plt.subplots(2, 3, figsize=(18, 12), constrained_layout=True)
    panels = [axes[0, 0], axes[0, 1], axes[0, 2], axes[1, 0]]
    for ax in panels[len(dims):]:
        ax.set_visible(False)
    view = {**frames, "dims": dims}
    for ax, d in zip(panels, dims):
        mesh = _panel_plane(ax, d, view, rho)
    fig.colorbar(mesh, ax=panels[: len(dims)], shrink=0.5,
                 label="mean mass on the nearest key (Monte Carlo): white sub-critical, "
                       "light critical, dark super-critical")
    _shared_legend(fig, panels[: len(dims)])
    _panel_ratio(axes[1, 1], frames["boundaries"])
    _panel_exponents(axes[1, 2], frames["fits"])
    fig.suptitle(r"The phase plane of $\beta$ against $n$: keys on $S^{d-1}$ "
                 r"($\beta^*_n \propto n^{2/(d-1)}$, arXiv 2605.08505) beside the REM and "
                 "simplex laws (arXiv 2605.12697), EXT-4 and CAS-5")
    return fig


def main(quick=False, seed=0, out_dir="figures"):
    settings = PhasePlaneSettings.of(quick)
    result = phase_plane_study(settings, seed=seed)
    frames = {k: result[k] for k in ("plane", "boundaries", "limits", "points", "fits")}
    fig = draw(frames, settings.dims[:4], settings.rho)
    return save_experiment(out_dir, "ext_phase_plane", fig, frames, seed=seed, quick=quick,
                           settings=settings.__dict__)


if __name__ == "__main__":
    sys.exit(run(main, __doc__, parser=experiment_parser(__doc__)))
