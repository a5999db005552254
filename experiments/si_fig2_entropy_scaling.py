"""SI Fig. 2: entropy in range [t, tΔ) under the scale-invariant transform ~ sqrt(log t), brute
force to t = 1e5, the asymptotic sampler to 1e30, the exact route as the closed-form line."""

import sys

from _plotting import entropy_scaling_experiment

from sia_theory.studies.si_entropy_extension import fig2_extension_settings
from sia_theory.studies.si_entropy_scaling import fig2_settings
from sia_theory.toolkit import run


def main(quick=False, seed=0, out_dir="figures"):
    return entropy_scaling_experiment(fig2_settings(quick), "Scale-invariant attention (τ = 10)",
                                      "si_fig2_entropy_scaling",
                                      quick=quick, seed=seed, out_dir=out_dir,
                                      extension=fig2_extension_settings(quick))


if __name__ == "__main__":
    sys.exit(run(main, __doc__))
