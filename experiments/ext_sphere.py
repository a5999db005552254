"""SPH-1, SPH-2, GAP-1 ... GAP-3: critical attention with bounded scores. (a) The gap-counting
critical scale beta_c (median half-mass point) of uniform keys on S^{d-1}, d = 3, 4, 6, and of
two distance laws of local exponent k = 2, 3 far from the sphere's global shape, over
n = 2^8 ... 2^32, in units of beta*_n = (Cn)^{2/k}; (b) beta_c of the log-laws' families (iid
normal, iid double-exponential, CAS near-simplex tokens, bounded e^{-1/x} scores) against log n
with their laws; (c) the fitted exponents with 95 % bootstrap intervals against the exponent of
each family's finite-n prediction over the same n (iid normal: 0.59, not yet 1/2); (d) the three
regimes on S^2: the nearest key's mass against lambda = beta/beta*_n at n = 2^10 ... 2^40
(extreme-value route) and by Monte Carlo at 2^10."""

import sys

import numpy as np
from _plotting import LEGEND_FONTSIZE, plt

from sia_theory.gaussian.phase import rem_max_location
from sia_theory.studies.ext_sphere import SphereSettings, sphere_study
from sia_theory.toolkit import experiment_parser, run, save_experiment

LAW_OF = {"iid normal": ("a_n (REM, (log n)^½)", lambda n: rem_max_location(n)),
          "simplex tokens": ("log(n − 1) (simplex)", lambda n: np.log(n - 1)),
          "iid double-exponential": ("log n", lambda n: np.log(n)),
          "bounded e^(-1/x)": ("(log n)²", lambda n: np.log(n) ** 2)}


def _panel_sphere(ax, scale, fits):
    for label, sub in scale[scale["beta_star"].notna()].groupby("family", sort=False):
        ratio = sub["beta_c"] / sub["beta_star"]
        err = [(sub["beta_c"] - sub["ci_low"]) / sub["beta_star"],
               (sub["ci_high"] - sub["beta_c"]) / sub["beta_star"]]
        p = fits.loc[label]
        ax.errorbar(sub["n"], ratio, yerr=err, fmt="o-", ms=3, capsize=2,
                    label=f"{label}: p = {p['p']:.3f} [{p['p_ci_low']:.3f}, {p['p_ci_high']:.3f}]")
    ax.set(xscale="log", xlabel="n keys", ylabel="β_c / β*_n",
           title="(a) sphere and distance laws of local exponent k: β_c ∝ n^{2/k} (flat)")
    ax.legend(fontsize=LEGEND_FONTSIZE, loc="center right")  # between the k = 3 and k = 5 rows
    ax.grid(alpha=0.3, which="both")


def _panel_logs(ax, scale):
    for colour, (label, (law_name, law)) in zip(("tab:red", "tab:blue", "tab:purple",
                                                 "tab:green"),
                                                LAW_OF.items(), strict=True):
        sub = scale[scale["family"] == label]
        ns = sub["n"].to_numpy(dtype=float)
        ax.errorbar(np.log(ns), sub["beta_c"], yerr=[sub["beta_c"] - sub["ci_low"],
                    sub["ci_high"] - sub["beta_c"]], fmt="o", ms=3, color=colour, label=label)
        ref = np.asarray(law(ns), dtype=float)
        ax.plot(np.log(ns), ref * np.exp(np.mean(np.log(sub["beta_c"] / ref))), "--",
                color=colour, lw=1, label=f"∝ {law_name}")
    ax.set(xscale="log", yscale="log", xlabel="log n", ylabel="β_c (median half-mass point)",
           title="(b) the gap-counting laws")
    ax.legend(fontsize=LEGEND_FONTSIZE)
    ax.grid(alpha=0.3, which="both")


def _panel_exponents(ax, fits):
    rows = [(f"{f}: k on log n", fits.loc[f, "k"], fits.loc[f, "k_ci_low"],
             fits.loc[f, "k_ci_high"], fits.loc[f, "k_law"]) for f in LAW_OF]
    rows += [(f"{f}: p on n", fits.loc[f, "p"], fits.loc[f, "p_ci_low"], fits.loc[f, "p_ci_high"],
              fits.loc[f, "p_law"]) for f in fits.index[fits["p_law"].notna()]]
    for y, (_, value, lo, hi, target) in enumerate(rows):
        ax.errorbar(value / target, y, xerr=[[(value - lo) / target], [(hi - value) / target]],
                    fmt="o", color="k", capsize=3)
        ax.text(1.31, y, f"{value:.3f} (law {target:.3f})", va="center",
                fontsize=LEGEND_FONTSIZE - 1)
    ax.axvspan(0.97, 1.03, color="grey", alpha=0.2, label="target ± 3 %")
    for x in (0.8, 1.2):
        ax.axvline(x, color="tab:red", ls=":", lw=1)
    ax.set_yticks(range(len(rows)), [r[0] for r in rows], fontsize=LEGEND_FONTSIZE - 1)
    ax.set(xlim=(0.7, 1.55), xlabel="exponent / its target over the same n (k: the finite-n "
           "prediction's; 95 % bootstrap interval); dotted: ±20 %",
           title="(c) exponents against their laws")
    ax.grid(alpha=0.3)


def _panel_regimes(ax, regimes):
    top = regimes[regimes["quantity"] == "top_mass"]
    for (n, route), sub in top.groupby(["n", "route"]):
        mc = route == "monte_carlo"
        ax.errorbar(sub["lam"], sub["value"], yerr=2 * sub["se"], fmt="s" if mc else "o-",
                    ms=4 if mc else 3, mfc="none" if mc else None,
                    label=f"n = 2^{int(np.log2(n))}, {'Monte Carlo' if mc else 'extreme value'}")
    ax.axvspan(0.3, 3, color="grey", alpha=0.15, label="critical: β ≍ β*_n")
    ax.set(xscale="log", xlabel="λ = β/β*_n", ylabel="mass on the nearest key (± 2 se)",
           title="(d) S²: sub-critical → critical → super-critical")
    ax.legend(fontsize=LEGEND_FONTSIZE)
    ax.grid(alpha=0.3, which="both")


def plot(result):
    """The four panels from the study's frames (legends at 9 pt)."""
    scale, fits = result["critical_scale"], result["fits"].set_index("family")
    fig, axes = plt.subplots(2, 2, figsize=(12.5, 10), layout="constrained")
    _panel_sphere(axes[0, 0], scale, fits)
    _panel_logs(axes[0, 1], scale)
    _panel_exponents(axes[1, 0], fits)
    _panel_regimes(axes[1, 1], result["regimes"])
    fig.suptitle("Critical attention with bounded scores: n^{2/k} set by the local exponent k "
                 "and the gap-counting laws (SPH-1, SPH-2, GAP-1 … GAP-3)")
    return fig


def main(quick=False, seed=0, out_dir="figures"):
    settings = SphereSettings.of(quick)
    result = sphere_study(settings, seed=seed)
    return save_experiment(out_dir, "ext_sphere", plot(result), result, seed=seed, quick=quick,
                           settings=settings.__dict__)


if __name__ == "__main__":
    sys.exit(run(main, __doc__, parser=experiment_parser(__doc__)))
