"""EXT-6: the SI transform on CAS tokens. Gaussian near-simplex tokens (scores in units of their
within-query sd, raw and centred per query) and exact simplex tokens under ScaleInvariant(10):
octave totals log Z_[t,2t) against a_t (slope c_q raw, SI restored when centred, iid N(0,1)
scores as reference), the per-query slope against c_q, and the self weight (CAS phase) as the
context grows."""

import sys

import numpy as np
import pandas as pd
from _plotting import plt

from sia_theory.studies import Execution
from sia_theory.studies.ext_si_on_cas import (
    SIOnCASSettings,
    octave_slopes,
    si_on_cas_study,
    summarize_si_on_cas,
)
from sia_theory.toolkit import run, save_experiment

STYLE = {"raw": ("tab:red", "o"), "centred": ("tab:blue", "s"), "iid": ("k", "^")}


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

    fig, axes = plt.subplots(1, 3, figsize=(17, 5), constrained_layout=True)
    ax = axes[0]
    octs = draws[draws["quantity"] == "log_octave"]
    for (d, variant), sub in octs.groupby(["d", "variant"]):
        mean = sub.groupby("index")["value"].mean()
        colour, marker = STYLE[variant]
        ax.plot(mean.index, mean.values, marker=marker, ms=3, color=colour,
                ls="-" if d == max(settings.dims) else "--", label=f"{variant}, d = {d}")
    sim = simplex[(simplex["quantity"] == "log_octave") & (simplex["d"] == max(settings.dims))]
    for variant, sub in sim.groupby("variant"):
        ax.plot(sub["index"], sub["value"], ":", color=STYLE[variant][0], lw=2,
                label=f"simplex {variant}")
    ax.set(xscale="log", xlabel="octave start t", ylabel="E[log Z_[t,2t)] (mean over queries)",
           title="Octave totals under SI")
    ax.legend(fontsize=6, ncol=2)
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
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    ax = axes[2]
    sw = draws[draws["quantity"] == "self_weight"]
    for (d, variant), sub in sw.groupby(["d", "variant"]):
        if variant == "iid":
            continue
        mean = sub.groupby("index")["value"].mean()
        colour, marker = STYLE[variant]
        ax.plot(mean.index, mean.values, marker=marker, ms=3, color=colour,
                ls="-" if d == max(settings.dims) else "--", label=f"{variant}, d = {d}")
    ssw = simplex[simplex["quantity"] == "self_weight"]
    for (d, variant), sub in ssw.groupby(["d", "variant"]):
        ax.plot(sub["index"], sub["value"], ":", color=STYLE[variant][0], lw=2,
                label=f"simplex {variant}, d = {d}")
    ax.set(xscale="log", yscale="log", xlabel="context length N", ylabel="self weight A_ii",
           title="CAS phase: → 1 super-critical, → 0 sub-critical")
    ax.legend(fontsize=6)
    ax.grid(alpha=0.3, which="both")
    fig.suptitle(f"EXT-6: SI (τ = {settings.tau:g}) on CAS tokens, ρ = {settings.rho}, "
                 f"n = {settings.n}")
    return save_experiment(out_dir, "ext_si_on_cas", fig,
                           {"": table, "slopes": slopes,
                            "profiles": draws.groupby(["d", "variant", "quantity", "index"])
                            ["value"].mean().reset_index(), "simplex": simplex},
                           seed=seed, quick=quick, settings=settings.__dict__)


if __name__ == "__main__":
    sys.exit(run(main, __doc__))
