"""EXT-6: the SI transform on CAS tokens. Gaussian near-simplex tokens (scores in units of their
within-query sd, raw and centred per query) and exact simplex tokens under ScaleInvariant(10):
octave totals log Z_[t,2t) against a_t (slope c_q raw, SI restored when centred, iid N(0,1)
scores as reference), the per-query slope against c_q, and the self weight (CAS phase) as the
context grows."""

import sys

import numpy as np
import pandas as pd
from _plotting import LEGEND_FONTSIZE, plt, style_legends

from sia_theory.studies import Execution
from sia_theory.studies.ext_si_on_cas import (
    SIOnCASSettings,
    octave_slopes,
    si_on_cas_study,
    summarize_si_on_cas,
)
from sia_theory.toolkit import run, save_experiment

STYLE = {"raw": ("tab:red", "o"), "centred": ("tab:blue", "s"), "iid": ("k", "^")}


def plot(settings, profiles, slopes, simplex):
    """Octave totals, the per-query slope against ``c_q`` and the self weight; ``profiles``:
    the mean over draws and queries per ``(d, variant, quantity, index)``. The Gaussian
    tokens' ``d`` and the exact simplex are line styles, the variants colours (one legend
    each, 9 pt)."""
    fig, axes = plt.subplots(1, 3, figsize=(15, 5.2), layout="constrained")
    big = max(settings.dims)
    dim_styles = {f"d = {d}": "-" if d == big else "--" for d in sorted(settings.dims)[::-1]}
    ax = axes[0]
    for (d, variant), sub in profiles[profiles["quantity"] == "log_octave"].groupby(
            ["d", "variant"]):
        colour, marker = STYLE[variant]
        ax.plot(sub["index"], sub["value"], marker=marker, ms=3, color=colour,
                ls=dim_styles[f"d = {d}"])
    sim = simplex[(simplex["quantity"] == "log_octave") & (simplex["d"] == big)]
    for variant, sub in sim.groupby("variant"):
        ax.plot(sub["index"], sub["value"], ":", color=STYLE[variant][0], lw=2)
    ax.set(xscale="log", xlabel="octave start t", ylabel="E[log Z_[t,2t)] (mean over queries)",
           title="Octave totals under SI")
    top = profiles.loc[profiles["quantity"] == "log_octave", "value"].max()
    ax.set_ylim(top=1.5 * top)  # room above the curves for the two legends
    style_legends(ax, {v: STYLE[v][0] for v in ("raw", "centred", "iid")},
                  {**dim_styles, f"exact simplex, d = {big}": ":"})
    ax.grid(alpha=0.3, which="both")
    ax = axes[1]
    raw = slopes[slopes["variant"] == "raw"].set_index(["d", "draw", "query"])
    cen = slopes[slopes["variant"] == "centred"].set_index(["d", "draw", "query"])
    diff = (raw["slope"] - cen["slope"]).reset_index()
    diff["c_q"] = raw["c_q"].to_numpy()
    for d, sub in diff.groupby("d"):
        ax.plot(sub["c_q"], sub["slope"], ".", ms=3, label=f"d = {d} (one point per query)")
    lim = np.array([diff["c_q"].min(), diff["c_q"].max()])
    ax.plot(lim, lim, "k--", label="prediction b_raw − b_centred = c_q")
    ax.axhline(0, color="grey", lw=0.8, label="alternative: no dependence on c_q")
    ax.set(xlabel="per-query mean score c_q", ylabel="b_raw − b_centred (slope on a_t)",
           title="E[Ã_t] ∝ e^{c_q a_t}·α/(1 + t/τ)")
    ax.legend(fontsize=LEGEND_FONTSIZE, loc="lower right")
    ax.grid(alpha=0.3)
    ax = axes[2]
    for (d, variant), sub in profiles[profiles["quantity"] == "self_weight"].groupby(
            ["d", "variant"]):
        if variant != "iid":
            colour, marker = STYLE[variant]
            ax.plot(sub["index"], sub["value"], marker=marker, ms=3, color=colour,
                    ls=dim_styles[f"d = {d}"])
    ssw = simplex[simplex["quantity"] == "self_weight"]
    for (_, variant), sub in ssw.groupby(["d", "variant"]):
        ax.plot(sub["index"], sub["value"], ":", color=STYLE[variant][0], lw=2)
    ax.set(xscale="log", yscale="log", xlabel="context length N", ylabel="self weight A_ii",
           title="CAS phase: → 1 super-critical, → 0 sub-critical")
    style_legends(ax, {v: STYLE[v][0] for v in ("raw", "centred")},
                  {**dim_styles, "exact simplex (each d)": ":"}, loc="lower left",
                  style_loc="center left")
    ax.grid(alpha=0.3, which="both")
    fig.suptitle(f"EXT-6: SI (τ = {settings.tau:g}) on CAS tokens, ρ = {settings.rho}, "
                 f"n = {settings.n}")
    return fig


def main(quick=False, seed=0, out_dir="figures"):
    settings = SIOnCASSettings.of(quick)
    data = si_on_cas_study(settings, seed=seed, execution=Execution(scheduler="threads"))
    draws, simplex = data["draws"], data["simplex"]
    summary = summarize_si_on_cas(draws, simplex, settings.tau, settings.t_fit)
    slopes = octave_slopes(draws, settings.tau, settings.t_fit)
    rows = []
    for d in settings.dims:
        s = summary[d]
        for variant, (mean, lo, hi) in s["slope"].items():
            rows.append({"d": d, "tokens": "gaussian", "variant": variant, "slope": mean,
                         "ci_low": lo, "ci_high": hi, "c_bar": s["c_bar"][0],
                         "ratio": s["ratio"][0], "ratio_low": s["ratio"][1],
                         "ratio_high": s["ratio"][2], "restored": s["restored"][0],
                         "restored_low": s["restored"][1], "restored_high": s["restored"][2],
                         "phase": s["phase"].get(variant, "")})
        sx = summary["simplex"][d]
        for variant, value in sx["slope"].items():
            rows.append({"d": d, "tokens": "simplex", "variant": variant, "slope": value,
                         "c_bar": sx["c"], "phase": sx["phase"][variant]})
    table = pd.DataFrame(rows)

    profiles = draws.groupby(["d", "variant", "quantity", "index"])["value"].mean().reset_index()
    fig = plot(settings, profiles, slopes, simplex)
    return save_experiment(out_dir, "ext_si_on_cas", fig,
                           {"": table, "slopes": slopes, "profiles": profiles, "simplex": simplex},
                           seed=seed, quick=quick, settings=settings.__dict__)


if __name__ == "__main__":
    sys.exit(run(main, __doc__))
