"""EXT-4: universality classes of the critical scaling beta_50 ~ (log n)^k. The order parameter
for every class is the mean participation sum_j A_ij^2 crossing 1/2: iid scores (REM, beta_50 =
2 a_n -> 2 sqrt(2 log n)), the planted REM over cosine spreads, Gaussian near-simplex tokens over
d = 2 ... 1024 (sweep engine; --store keeps the cells for resuming), and the REM exact route to
n = 1e30."""

import sys

import numpy as np
from _plotting import LEGEND_FONTSIZE, plt

from sia_theory.cas.universality import simplex_beta50
from sia_theory.gaussian.phase import rem_max_location
from sia_theory.studies import Execution
from sia_theory.studies.ext_universality import (
    UniversalitySettings,
    rem_exact_curve,
    summarize_universality,
    universality_study,
)
from sia_theory.toolkit import experiment_parser, run, save_experiment


def plot(settings, draws, summary, exact):
    """β₅₀ per class against n, the exponent per class, and the REM's finite-n ratio; the
    first panel's legend below the three (legends at 9 pt)."""
    fig, axes = plt.subplots(1, 3, figsize=(15, 6.2), layout="constrained")
    ax = axes[0]
    ns = np.array(settings.ns, dtype=float)
    colours = plt.cm.viridis(np.linspace(0, 0.95, summary.shape[0]))
    for colour, row in zip(colours, summary.itertuples()):
        sub = draws[draws["class"] == row._1].groupby("n")["beta_50"].median()
        ax.plot(sub.index, sub.values, "o-", ms=3, color=colour,
                label=f"{row._1}: k = {row.k:.2f}")
    ax.plot(ns, 2 * rem_max_location(ns), "k--", lw=1.5, label="REM: 2a_n")
    ax.plot(ns, simplex_beta50(ns, settings.rho), "k:", lw=1.5, label="simplex closed form")
    ax.set(xscale="log", yscale="log", xlabel="n", ylabel="β₅₀ (median over draws)",
           title="β₅₀: mean Σ_j A_ij² crosses ½")
    # the 14 curves' legend below the panels (it covered the curves of this panel at 6 pt)
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncol=5,
               fontsize=LEGEND_FONTSIZE, title="left panel: class and its exponent k",
               title_fontsize=LEGEND_FONTSIZE)
    ax.grid(alpha=0.3, which="both")
    ax = axes[1]
    y = np.arange(summary.shape[0])
    ax.errorbar(summary["k"], y, xerr=[summary["k"] - summary["k_ci_low"],
                                       summary["k_ci_high"] - summary["k"]], fmt="o", color="k")
    for value, style, label in ((summary["k_rem_finite"].iloc[0], "--", "REM law, this n range"),
                                (summary["k_simplex_finite"].iloc[0], ":", "simplex law, this n"),
                                (0.5, "-", "k = ½ (n → ∞)"), (1.0, "-.", "k = 1 (n → ∞)")):
        ax.axvline(value, ls=style, color="tab:red" if "REM" in label or "½" in label
                   else "tab:blue", label=label)
    ax.set_yticks(y, summary["class"], fontsize=LEGEND_FONTSIZE)
    ax.set(xscale="symlog", xlabel="k in β₅₀ ∝ (log n)^k (95 % interval)",
           title="Exponent per class")
    ax.legend(fontsize=LEGEND_FONTSIZE, loc="lower right")
    ax.grid(alpha=0.3)
    ax = axes[2]
    ax.plot(exact["n"], exact["beta50_exact"] / exact["two_sqrt_2logn"], "o-",
            label="exact route β₅₀ / 2√(2 log n)")
    ax.plot(exact["n"], exact["two_a_n"] / exact["two_sqrt_2logn"], "s--",
            label="2a_n / 2√(2 log n)")
    ax.axhline(1, color="k", lw=0.8)
    ax.set(xscale="log", xlabel="n", ylabel="ratio", title="iid scores: finite-n approach to "
           "2√(2 log n)")
    ax.legend(fontsize=LEGEND_FONTSIZE, loc="lower right")
    ax.grid(alpha=0.3, which="both")
    fig.suptitle("EXT-4: universality classes of the critical scaling (one order parameter)")
    return fig


def main(quick=False, seed=0, out_dir="figures", store=None):
    settings = UniversalitySettings.of(quick)
    draws = universality_study(settings, seed=seed, execution=Execution(
        scheduler="threads", store=store))["draws"]
    summary = summarize_universality(draws, settings.rho)
    exact_ns = [2.0**8, 2.0**14] if quick else [2.0**8, 2.0**11, 2.0**14, 1e6, 1e10, 1e20, 1e30]
    exact = rem_exact_curve(exact_ns)

    fig = plot(settings, draws, summary, exact)
    return save_experiment(out_dir, "ext_universality", fig,
                           {"draws": draws, "summary": summary, "rem_exact": exact},
                           seed=seed, quick=quick, settings=settings.__dict__)


if __name__ == "__main__":
    parser = experiment_parser(__doc__)
    parser.add_argument("--store", default=None,
                        help="folder of the sweep store (resumable); default: in memory")
    sys.exit(run(main, __doc__, parser=parser))
