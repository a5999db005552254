"""The entropy law in real attention: SmolLM2-135M's entropy in range H_t^{2t} and attention per
octave range against distance, per head, classified like analyze() (logarithmic, √(log t)-like,
bounded) from local slopes; each head's phase σ_M/√(2 log M); the attention on the newest tokens
against the context length; beside each, the Gaussian theory's prediction for the measured
per-octave score means and spreads (Monte Carlo of the package)."""

import sys

import numpy as np
import pandas as pd
from _model_common import model_parser, resolve_store
from _plotting import LEGEND_FONTSIZE, plt

from sia_theory.gaussian.laws import ENTROPY_LAWS
from sia_theory.studies import Execution
from sia_theory.studies.model_entropy_law import EntropyLawSettings, entropy_law_study
from sia_theory.toolkit import run, save_experiment

STEM = "model_entropy_law"
COLOURS = {"logarithmic": "tab:blue", "super-logarithmic": "tab:purple",
           "sub-logarithmic": "tab:cyan", "sqrt-log": "tab:orange", "bounded": "tab:green"}
"""One colour per entropy law of :data:`~sia_theory.gaussian.laws.ENTROPY_LAWS`."""


def _examples(heads):
    """One head per law (the one with the smallest exponent standard error)."""
    rows = []
    for law in ENTROPY_LAWS:
        group = heads[heads["law"] == law].sort_values("exponent_se")
        if len(group):
            rows.append(group.iloc[0])
    return pd.DataFrame(rows)


def plot(s, heads, entropy, octaves, recent):
    """Six panels in three rows of two (11 in wide), legends at 9 pt (the bars' legend above
    the bars); ``s`` the settings (``recent``, ``n_prose``, ``n_code``, ``n_tokens`` read)."""
    examples = _examples(heads)
    fig, grid = plt.subplots(3, 2, figsize=(11, 13), layout="constrained")
    axes = grid.ravel()
    ax = axes[0]
    for _, row in examples.iterrows():
        c = entropy[(entropy["layer"] == row["layer"]) & (entropy["head"] == row["head"])]
        colour = COLOURS[row["law"]]
        ax.errorbar(np.log(c["t"]), c["H"], yerr=2 * c["H_se"], fmt="o", ms=3, color=colour,
                    label=f"L{int(row['layer'])} H{int(row['head'])}: {row['law']} "
                          f"(p = {row['exponent']:.2f})")
        ax.plot(np.log(c["t"]), c["H_gaussian"], "--", color=colour, lw=1)
    ax.set(xlabel="log t", ylabel="H_t^{2t} (nats)",
           title="Entropy in range; dashed: Gaussian theory\nfor the measured σ per octave")
    ax.legend(fontsize=LEGEND_FONTSIZE)
    ax = axes[1]
    table = pd.crosstab(heads["layer"], heads["law"]).reindex(columns=list(ENTROPY_LAWS),
                                                              fill_value=0)
    bottom = np.zeros(len(table))
    for law in ENTROPY_LAWS:
        ax.bar(table.index, table[law], bottom=bottom, color=COLOURS[law], label=law)
        bottom += table[law].to_numpy()
    ax.set(xlabel="layer", ylabel="heads", title="Entropy law per head (local slopes, z = 3)")
    ax.set_ylim(top=1.35 * bottom.max())  # room above the bars: the legend covered them
    ax.legend(fontsize=LEGEND_FONTSIZE, loc="upper center", ncol=3)  # five laws: two rows
    ax = axes[2]
    agree = pd.crosstab(heads["law"], heads["predicted_law"])
    ax.imshow(agree.to_numpy(), cmap="Blues")
    ax.set_xticks(range(agree.shape[1]), agree.columns, rotation=20)
    ax.set_yticks(range(agree.shape[0]), agree.index)
    for (i, j), v in np.ndenumerate(agree.to_numpy()):
        ax.text(j, i, str(v), ha="center", va="center")
    ax.set(xlabel="law of the Gaussian theory (measured σ, m per octave)",
           ylabel="measured law", title="Does the Gaussian theory predict\neach head's law?")
    ax = axes[3]
    for _, row in examples.iterrows():
        o = octaves[(octaves["layer"] == row["layer"]) & (octaves["head"] == row["head"])
                    & (octaves["t"] >= 1)]
        colour = COLOURS[row["law"]]
        ax.plot(o["t"], o["mass"], "o-", color=colour, ms=3,
                label=f"L{int(row['layer'])} H{int(row['head'])}")
        ax.plot(o["t"], o["mass_gaussian"], "--", color=colour, lw=1)
    ax.set(xscale="log", yscale="log", xlabel="octave start t (range [t, 2t))",
           ylabel="attention on the octave", title="Total attention per octave (dashed: theory)")
    ax.legend(fontsize=LEGEND_FONTSIZE)
    ax = axes[4]
    for law in ENTROPY_LAWS:
        g = heads[heads["law"] == law]
        ax.scatter(g["layer"] + np.linspace(-0.3, 0.3, len(g)) * 0, g["ratio"], s=12,
                   color=COLOURS[law], label=law)
    ax.axhline(1.0, color="k", ls="--")
    ax.axhspan(0.9, 1.1, color="grey", alpha=0.2)
    m = int(heads["M"].iloc[0])
    ax.set(yscale="log", xlabel="layer", ylabel=f"σ_M / √(2 log M), M = {m}",
           title="Phase per head (> 1.1 frozen, < 0.9 liquid)")
    ax.legend(fontsize=LEGEND_FONTSIZE)
    ax = axes[5]
    for layer, group in recent.groupby("layer"):
        med = group.groupby("n_ctx")["recent_mass"].median()
        ax.plot(med.index, med.values, "-", color=plt.cm.viridis(layer / heads["layer"].max()),
                lw=1)
    overall = recent.groupby("n_ctx")["recent_mass"].median()
    ax.plot(overall.index, overall.values, "k-o", ms=3, lw=2, label="median over all heads")
    ax.set(xscale="log", xlabel="context length N", ylabel=f"attention on {s.recent} newest",
           title="Attention on the newest tokens (colour: layer median)")
    ax.legend(fontsize=LEGEND_FONTSIZE)
    counts = heads["law"].value_counts().to_dict()
    laws = ", ".join(f"{counts.get(law, 0)} {law}" for law in ENTROPY_LAWS)
    fig.suptitle(f"SmolLM2-135M, {s.n_prose} prose + {s.n_code} code documents of "
                 f"{s.n_tokens} tokens: {len(heads)} heads, {laws}")
    return fig


def main(quick=False, seed=0, out_dir="figures", store="auto"):
    s = EntropyLawSettings.of(quick)
    result = entropy_law_study(s, seed=seed, execution=Execution(
        store=resolve_store(store, STEM, seed, quick), progress=True))
    heads, entropy, octaves, recent = (result[k] for k in ("heads", "entropy", "octaves",
                                                           "recent"))
    fig = plot(s, heads, entropy, octaves, recent)
    return save_experiment(out_dir, STEM, fig, {"heads": heads, "entropy": entropy,
                                                "octaves": octaves, "recent": recent},
                           seed=seed, quick=quick, settings={**s.__dict__,
                                                            "t_values": s.t_values.tolist()},
                           laws=heads["law"].value_counts().to_dict(),
                           predicted_laws=heads["predicted_law"].value_counts().to_dict(),
                           law_agreement=float((heads["law"] == heads["predicted_law"]).mean()),
                           phases=heads["phase"].value_counts().to_dict())


if __name__ == "__main__":
    sys.exit(run(main, __doc__, parser=model_parser(__doc__)))
