"""Finite-n behaviour on the exact simplex: the post-update cosine and the Jacobian norm eta
converge to their CAS limits (Theorems 2.1, 2.4) as n grows, with and without residual, and the
critical eta excess compared with its derived 1/n, beta/d and beta^2/d terms."""

import sys

import numpy as np
from _plotting import LEGEND_FONTSIZE, plt, style_legends

from sia_theory.cas.config import PHASE_LABELS
from sia_theory.studies.cas_finite_n import FiniteNSettings, finite_n_study
from sia_theory.toolkit import run, save_experiment


def plot(settings, data):
    """Five panels in three rows of two (11 in wide), the legend of the critical-excess panel
    in the sixth; legends at 9 pt."""
    curves, excess, matched = data["curves"], data["critical_excess"], data["matched"]
    checks = data["token_checks"].dropna(subset=["eta_tokens"])
    rho, q = settings.rho, settings.q
    relative_gammas = tuple(sorted(curves["gamma_over_gc"].unique()))
    phase_names = {g: PHASE_LABELS[p] for g, p in zip(
        curves["gamma_over_gc"], curves["phase"], strict=True)}

    fig, axes = plt.subplots(3, 2, figsize=(11, 13), layout="constrained")
    colours = dict(zip(relative_gammas, plt.rcParams["axes.prop_cycle"].by_key()["color"],
                       strict=False))
    styles = dict(zip(settings.alphas, ("-", "--", "-.", ":"), strict=False))
    phase_colours = {phase_names[g]: colours[g] for g in relative_gammas}
    alpha_styles = {f"α = {a}": styles[a] for a in settings.alphas}
    ax = axes[0, 0]
    for (g_rel, alpha), sub in curves.groupby(["gamma_over_gc", "alpha"]):
        ax.plot(sub["n"], sub["cos"], styles[alpha], color=colours[g_rel])
        ax.axhline(sub["cos_limit"].iloc[0], color=colours[g_rel], lw=0.8, ls=":")
    ax.set(xscale="log", xlabel="n", ylabel=r"exact $\langle y_i', y_j'\rangle$",
           title=f"Post-update cosine, simplex ρ = {rho}\n(dotted: n → ∞ limits)")
    ax.set_ylim(top=1.25)
    style_legends(ax, phase_colours, alpha_styles, loc="upper right", style_loc="upper left")
    ax = axes[0, 1]
    for g_rel in relative_gammas:
        sub = curves[(curves["gamma_over_gc"] == g_rel) & (curves["alpha"] == 0.0)]
        err = np.abs(sub["cos"] - sub["cos_limit"])
        ax.plot(sub["n"], err, color=colours[g_rel], label=phase_names[g_rel])
        slope = {0.5: 2 * (0.5 - 1), 1.0: -1.0, 1.5: 1 - 1.5}[g_rel]
        ref = err.iloc[-1] * (sub["n"] / sub["n"].iloc[-1]) ** slope
        ax.plot(sub["n"], ref, ":", color=colours[g_rel], label=f"slope {slope:g}")
    ax.set(xscale="log", yscale="log", xlabel="n", ylabel="|cos_n − limit|  (α = 0)",
           title="Convergence rates:\nn^{2(γ/γc−1)}, 1/n, n^{1−γ/γc}")
    ax.legend(fontsize=LEGEND_FONTSIZE, loc="lower left")
    ax = axes[1, 0]
    for (g_rel, alpha), sub in curves.groupby(["gamma_over_gc", "alpha"]):
        ax.plot(sub["n"], sub["eta_d_eq_n"], styles[alpha], color=colours[g_rel])
        ax.axhline(sub["eta_limit"].iloc[0], color=colours[g_rel], lw=0.8, ls=":")
    for (g_rel, _alpha), sub in checks.groupby(["gamma_over_gc", "alpha"]):
        ax.plot(sub["n"], sub["eta_tokens"], "o", mfc="none", color=colours[g_rel])
    ax.set(xscale="log", xlabel="n (= d)", ylabel=r"$\eta$",
           title="η on the simplex, d = n\n(lines: closed form; ○: jacobian_eta on tokens)")
    ax.set_ylim(top=3.2)
    style_legends(ax, phase_colours, alpha_styles, loc="upper right", style_loc="upper left")
    ax = axes[2, 0]
    for case, marker in (("d = n", "-"), ("d = 512", "--")):
        sub = excess[excess["case"] == case]
        ax.plot(sub["n"], sub["excess"], marker, color="k", lw=2,
                label=f"exact η − (1−1/d)/4, {case}")
        total = sub["term_1_over_n"] + sub["term_beta_over_d"] + sub["term_beta2_over_d"]
        ax.plot(sub["n"], total, marker, color="tab:red", label=f"1/(2n) + c₁β/d + c₂β²/d, {case}")
        if case == "d = n":
            ax.plot(sub["n"], sub["term_1_over_n"], ":", color="tab:blue", label="1/(2n)")
        ax.plot(sub["n"], sub["term_beta_over_d"], ":", color="tab:orange" if case == "d = n"
                else "tab:brown", label=f"β(1−ρ)(2+ρ)/(4d), {case}")
        ax.plot(sub["n"], sub["term_beta2_over_d"], ":", color="tab:green" if case == "d = n"
                else "tab:olive", label=f"β²ρ(1−ρ)²/(16d), {case}")
    crit = checks[(checks["gamma_over_gc"] == 1.0) & (checks["alpha"] == 0.0)]
    ax.plot(crit["n"], crit["eta_tokens"] - (1 - 1 / crit["n"]) / (4 * q), "o", mfc="none",
            color="k", ms=8, label="jacobian_eta on simplex tokens − limit, d = n")
    ax.set(xscale="log", yscale="log", xlabel="n", ylabel="excess over the critical limit",
           title="Critical η: finite-size excess\n(γ = γc, α = 0, q = 1; legend on the right)")
    axes[2, 1].axis("off")
    axes[2, 1].legend(*ax.get_legend_handles_labels(), loc="center", fontsize=LEGEND_FONTSIZE,
                      title="critical η excess (left)", title_fontsize=LEGEND_FONTSIZE)
    ax = axes[1, 1]
    ax.plot(matched["n"], matched["eta"], "o", ms=4, mfc="none", color="k",
            label=f"Gaussian tokens d = {settings.matched_d},\nβ at mean A_ii = ½ (per draw)")
    ax.plot(matched["n"], matched["eta_simplex"], "s", ms=4, color="tab:red",
            label="exact simplex formula at A_ii = ½\n(realised ρ)")
    ax.plot(matched["n"], matched["eta_at_gamma_c"], "^", ms=4, color="tab:blue",
            label="Gaussian tokens at γ_c\nof the realised cosine")
    ax.axhline(matched["eta_bare_limit"].iloc[0], color="grey", ls=":",
               label="bare limit (1−1/d)/4")
    ax.set(xscale="log", xlabel="n", ylabel=r"$\eta$",
           title="Near-simplex tokens, d ≪ n: the β/d and β²/d\nterms at a matched self weight")
    ns = sorted(matched["n"].unique())
    ax.set_xticks(ns, [f"{n:,}" for n in ns], minor=False)
    ax.xaxis.set_minor_formatter(plt.NullFormatter())  # the log axis' 3×10², 4×10² overlapped
    low, high = ax.get_ylim()
    ax.set_ylim(top=high + 0.8 * (high - low))  # room above the points for the legend
    ax.legend(fontsize=LEGEND_FONTSIZE, loc="upper left")
    for ax in axes.ravel()[:5]:
        ax.grid(alpha=0.3, which="both")
    fig.suptitle("Exact simplex at finite n: convergence to CAS Theorems 2.1 and 2.4")
    return fig


def main(quick=False, seed=0, out_dir="figures"):
    settings = FiniteNSettings.of(quick)
    data = finite_n_study(settings, seed=seed)
    return save_experiment(out_dir, "cas_finite_n", plot(settings, data), data, seed=seed,
                           quick=quick, settings=settings.__dict__)

if __name__ == "__main__":
    sys.exit(run(main, __doc__))
