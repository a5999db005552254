"""Scale-invariant coefficients a_t and m_t against distance t for lengthscales
τ ∈ {0.01, 0.1, 1, 10, 100} (SI-2: a_0 = 1, m_0 = 0; SI-10: a_t ≈ 1, m_t ≈ 0 for t ≪ τ)."""

import sys

import numpy as np
import pandas as pd
from _plotting import plt

from sia_theory import ScaleInvariant
from sia_theory.toolkit import run, save_experiment

TAUS = (0.01, 0.1, 1.0, 10.0, 100.0)


def main(quick=False, seed=0, out_dir="figures"):
    # Integer distances (t = 0 is the query's own key), drawn on a symlog axis so t = 0 shows.
    t = np.unique(np.round(np.concatenate([[0.0], np.geomspace(1, 1e5, 60 if quick else 600)])))
    rows = []
    for tau in TAUS:
        a, m = ScaleInvariant(tau=tau).coefficients(t)
        rows.append(pd.DataFrame({"tau": tau, "t": t, "a": a, "m": m}))
    data = pd.concat(rows, ignore_index=True)

    fig, (ax_a, ax_m) = plt.subplots(1, 2, figsize=(10, 4), constrained_layout=True)
    for tau, group in data.groupby("tau"):
        ax_a.plot(group["t"], group["a"], label=f"τ = {tau:g}")
        ax_m.plot(group["t"], group["m"], ".-", ms=2, label=f"τ = {tau:g}")
    for ax, name in ((ax_a, "multiplier $a_t$"), (ax_m, "offset $m_t$")):
        ax.set_xscale("symlog", linthresh=1)
        ax.set_xlabel("distance t (tokens back from the query)")
        ax.set_ylabel(name)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("Scale-invariant transform $L_t = a_t S_t + m_t$ with α = β = $e^{1/2}$ "
                 "(SI eq. 16): $a_0 = 1$, $m_0 = 0$ for every τ")
    return save_experiment(out_dir, "si_coefficients", fig, data, seed=seed, quick=quick,
                           taus=list(TAUS))


if __name__ == "__main__":
    sys.exit(run(main, __doc__))
