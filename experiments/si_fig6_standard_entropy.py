"""SI Fig. 6: entropy in range [t, tΔ) without a transform grows like log t (brute force to
t = 1e5, the asymptotic sampler to 1e30, the exact route as the closed-form line)."""

import sys

from _plotting import entropy_scaling_experiment

from sia_theory.studies.si_entropy_extension import fig6_extension_settings
from sia_theory.studies.si_entropy_scaling import fig6_settings
from sia_theory.toolkit import run


def main(quick=False, seed=0, out_dir="figures"):
    return entropy_scaling_experiment(fig6_settings(quick), "Standard attention (no transform)",
                                      "si_fig6_standard_entropy",
                                      quick=quick, seed=seed, out_dir=out_dir,
                                      extension=fig6_extension_settings(quick))


if __name__ == "__main__":
    sys.exit(run(main, __doc__))
