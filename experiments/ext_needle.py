"""EXT-7: needle retrieval under Gaussian logits for every zoo scheme. Heat maps of P(argmax) over
(t, delta) per scheme and context length N with the exact threshold delta*(t, N) (white), its
extreme-value prediction (dashed) and the mass = 1/2 contour (black); thresholds against t and
N; the retrieval table (largest t retrieved at delta = 3, 4, 5) as CSV."""

import sys

import numpy as np
from _plotting import plt

from sia_theory.studies import Execution
from sia_theory.studies.ext_needle import NeedleSettings, needle_study
from sia_theory.toolkit import run, save_experiment

T_LINE = 100  # the distance of the δ*-against-N panel


def _significant(values, digits=6):
    """Values as text with ``digits`` significant digits (keeps the committed CSV small)."""
    return [f"{x:.{digits}g}" for x in np.asarray(values, dtype=float)]


def _heat_maps(fig, spec, data, schemes, ns):
    grid, th = data["grid"], data["thresholds"]
    axes = spec.subplots(sharey=True, squeeze=False)
    mesh = None
    for i, scheme in enumerate(schemes):
        for j, n in enumerate(ns):
            ax = axes[i, j]
            sub = grid[(grid["scheme"] == scheme) & (grid["n_ctx"] == n)]
            p = sub.pivot(index="delta", columns="t", values="p_argmax")
            x = p.columns.to_numpy(float) + 1.0
            mesh = ax.pcolormesh(x, p.index, p.to_numpy(), vmin=0, vmax=1, cmap="viridis",
                                 shading="nearest", rasterized=True)
            mass = sub.pivot(index="delta", columns="t", values="mass")
            if mass.notna().all().all() and mass.shape[1] > 1:
                ax.contour(x, mass.index, mass.to_numpy(), levels=[0.5], colors="k",
                           linewidths=1.0)
            ts = th[(th["scheme"] == scheme) & (th["n_ctx"] == n)]
            ax.plot(ts["t"] + 1.0, ts["delta_star"], "w-", lw=1.2)
            ax.plot(ts["t"] + 1.0, ts["delta_star_evt"], "--", color="orange", lw=1.0)
            ax.set(xscale="log", ylim=(p.index.min(), p.index.max()))
            ax.tick_params(labelsize=6)
            if i == 0:
                ax.set_title(f"N = {n:.0e}", fontsize=8)
            if j == 0:
                ax.set_ylabel(f"{scheme}\nδ", fontsize=7)
            if i == len(schemes) - 1:
                ax.set_xlabel("t + 1", fontsize=7)
    fig.colorbar(mesh, ax=axes, shrink=0.3, label="P(needle is the argmax)")


def _threshold_lines(ax_t, ax_n, th, schemes, n_max):
    # tab20's dark shades first, then its light ones: distinct colours for up to 20 schemes
    colours = plt.cm.tab20(np.r_[0:20:2, 1:20:2] / 19.0)
    for k, scheme in enumerate(schemes):
        sub = th[th["scheme"] == scheme]
        c = colours[k % len(colours)]
        last = sub[sub["n_ctx"] == n_max]
        ax_t.plot(last["t"] + 1.0, last["delta_star"], "o-", ms=3, color=c, label=scheme)
        ax_t.plot(last["t"] + 1.0, last["delta_star_mass"], "x:", ms=3, color=c)
        at = sub[sub["t"] == T_LINE]
        ax_n.plot(at["n_ctx"], at["delta_star"], "o-", ms=3, color=c, label=scheme)
        ax_n.plot(at["n_ctx"], at["delta_star_closed"], "--", color=c, lw=0.8)
    n = np.array(sorted(th["n_ctx"].unique()), float)
    ax_n.plot(n, np.sqrt(2 * np.log(n)), "k:", label="√(2 log N)")
    ax_t.set(xscale="log", ylim=(0, 25), xlabel="t + 1", ylabel="δ*",
             title=f"δ* (o: argmax ½; x: mass ½) at N = {n_max:.0e} (ALiBi: δ* ≈ t/16 + 1.3)")
    ax_n.set(xscale="log", xlabel="N", ylabel="δ*",
             title=f"δ* at t = {T_LINE} (dashed: closed forms)")
    for ax in (ax_t, ax_n):
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=6, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.16))  # below


def main(quick=False, seed=0, out_dir="figures"):
    settings = NeedleSettings.of(quick)
    data = needle_study(settings, seed=seed, execution=Execution(
        scheduler="sync" if quick else "threads"))
    schemes = list(settings.schemes)
    ns = sorted(settings.heat_n_ctx)
    fig = plt.figure(figsize=(3.0 * len(ns) + 1.5, 1.6 * len(schemes) + 5.5),
                     constrained_layout=True)
    top, bottom = fig.subfigures(2, 1, height_ratios=[1.6 * len(schemes), 5.0])
    _heat_maps(top, top.add_gridspec(len(schemes), len(ns)), data, schemes, ns)
    ax_t, ax_n = bottom.subplots(1, 2)
    _threshold_lines(ax_t, ax_n, data["thresholds"], schemes, max(settings.n_ctx))
    fig.suptitle("EXT-7: needle retrieval under iid Gaussian logits (white: exact δ*, orange "
                 "dashed: extreme-value δ*, black: mass = ½)", fontsize=10)
    table = data["ranges"].pivot_table(index=["scheme", "delta"], columns="n_ctx",
                                       values="max_t").reset_index()
    table.columns = [c if isinstance(c, str) else f"N={int(c):.0e}" for c in table.columns]
    return save_experiment(out_dir, "ext_needle", fig,
                           {"grid": data["grid"].assign(
                               p_argmax=_significant(data["grid"]["p_argmax"]),
                               mass=_significant(data["grid"]["mass"])),
                            "thresholds": data["thresholds"],
                            "table": table, "montecarlo": data["montecarlo"]},
                           seed=seed, quick=quick, settings=settings.__dict__)


if __name__ == "__main__":
    sys.exit(run(main, __doc__))
