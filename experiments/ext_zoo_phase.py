"""EXT-5: every zoo scheme on the REM phase diagram. r(N) = sigma(N)/sqrt(2 log N) for each
scheme to N = 1e30 with its freezing / melting context length (table), the SI transform's
octave ratios to t = 2^100, and the turnover of LogN(0.4)'s global entropy (SI Fig. 1 Monte
Carlo) against N* = e^(2/s^2), e^(1/s^2) and the finite-N freezing point."""

import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from sia_theory._infra.cli import run  # noqa: E402
from sia_theory._infra.io import save_experiment  # noqa: E402
from sia_theory.studies.ext_zoo_phase import (  # noqa: E402
    TurnoverSettings,
    exact_turnover_peak,
    freezing_ratio,
    logn_points,
    octave_ratios,
    peak_ratios,
    phase_schemes,
    turnover_exact,
    turnover_peak,
    turnover_study,
    zoo_phase_table,
)
from sia_theory.transforms import ScaleInvariant  # noqa: E402


def main(quick=False, seed=0, out_dir="figures"):
    schemes = phase_schemes()
    table = zoo_phase_table(schemes)
    grid = np.geomspace(1.1, 1e30, 60 if quick else 240)
    curves = pd.DataFrame([{"scheme": name, "n": n, "ratio": freezing_ratio(t, n)}
                           for name, t in schemes.items() for n in grid])
    octaves = octave_ratios(ScaleInvariant(10.0))
    settings = TurnoverSettings.of(quick)
    entropy = turnover_study(settings, seed=seed)
    peak = turnover_peak(entropy, bootstrap=settings.bootstrap, seed=seed)
    points = logn_points(settings.s)
    exact, exact_peak = None, {}
    if not quick:  # the exact route (no sampling) through the same lengths, and its maximum
        exact = turnover_exact(settings.s, entropy["n"])
        exact_peak = exact_turnover_peak(settings.s, settings.n_min, settings.n_max)

    fig, axes = plt.subplots(1, 3, figsize=(18, 5.2), constrained_layout=True)
    ax = axes[0]
    ax.set_prop_cycle(color=plt.cm.tab20(np.linspace(0, 1, 20))[::1][:len(schemes)])
    for name, sub in curves.groupby("scheme", sort=False):
        ax.plot(sub["n"], sub["ratio"], lw=2 if name in ("logn", "scale-invariant") else 1,
                label=name)
    ax.axhspan(0.9, 1.1, color="grey", alpha=0.2, label="critical band")
    ax.axhline(1, color="k", lw=0.8)
    ax.set(xscale="log", yscale="log", ylim=(0.05, 20), xlabel="context length N",
           ylabel="σ(N) / √(2 log N)", title="Frozen above 1, liquid below")
    ax.legend(fontsize=6, ncol=2)
    ax.grid(alpha=0.3, which="both")
    ax = axes[1]
    ax.plot(octaves["t"], octaves["ratio"], "o-", ms=3, label="ScaleInvariant(τ = 10)")
    ax.axhspan(0.9, 1.1, color="grey", alpha=0.2, label="critical band")
    ax.axhline(1, color="k", lw=0.8)
    ax.set(xscale="log", xlabel="octave start t ([t, 2t), M = t keys)",
           ylabel="σ_t / √(2 log t)", title="SI: every scale range at the critical point")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, which="both")
    ax = axes[2]
    ax.errorbar(entropy["n"], entropy["H_mean"], yerr=2 * entropy["H_se"], fmt="o", ms=3,
                label=f"Monte Carlo E[H], LogN(s = {settings.s}) (±2 se)")
    if exact is not None:
        ax.plot(exact["n"], exact["H_exact"], "-", color="tab:blue", lw=1,
                label=f"exact route, maximum at {exact_peak['n_peak_exact']:.3g}")
    ax.plot(entropy["n"], entropy["H_annealed"], ":", color="grey",
            label="annealed log N − s² log² N/2")
    ax.axvspan(peak["ci_low"], peak["ci_high"], color="tab:blue", alpha=0.15,
               label=f"maximum {peak['n_peak']:.3g} (95 %)")
    for key, style, label in (("annealed_stationary", "--", "e^(1/s²)"),
                              ("freezing_finite", "-.", "finite-N freezing s log N = a_N"),
                              ("freezing_asymptotic", "-", "N* = e^(2/s²)")):
        ax.axvline(points[key], ls=style, color="tab:red", label=f"{label} = {points[key]:.3g}")
    ax.set(xscale="log", xlim=(300, 4e5), ylim=(0.4, 4.2), xlabel="context length N",
           ylabel="global entropy (nats)", title="Does N* explain LogN's turnover?")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3, which="both")
    fig.suptitle("EXT-5: the zoo on the REM phase diagram (iid N(0, 1) base scores)")
    peak_frame = pd.DataFrame([{**{k: v for k, v in peak.items() if k != "n_range"},
                                **peak_ratios(settings.s, peak["n_peak"], "mc"),
                                **exact_peak, **points, "s": settings.s}])
    if exact is not None:
        entropy = entropy.merge(exact, on="n")
    return save_experiment(out_dir, "ext_zoo_phase", fig,
                           {"": table, "curves": curves, "octaves": octaves,
                            "entropy": entropy, "turnover": peak_frame},
                           seed=seed, quick=quick, settings=settings.__dict__)


if __name__ == "__main__":
    sys.exit(run(main, __doc__))
