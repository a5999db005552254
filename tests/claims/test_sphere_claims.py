"""Positive controls of the SPH and GAP decision functions (sia_theory/claims/sphere.py): data that
follow each claimed law exactly (the same synthetic half-mass points the negative controls use,
with the measured families' spread) decide PASS, so the FAIL of every negative control in
tests/claims/test_paper_checks.py is the alternative's doing, not a rule that cannot pass."""

import math

import pytest
from scipy.stats import norm

from sia_theory.claims.sphere import (
    FULL,
    LAWS,
    decide_gap,
    decide_sph1,
    decide_sph2,
    fit_half_mass,
    synthetic_half_mass,
    variance_matched_exponent,
)
from sia_theory.studies.ext_sphere import log2_grid, sphere_laws

SPANS = {"rem": FULL.iid_n, "simplex": FULL.token_n, "squared": FULL.bounded_n}
# each law's finite-n scale written out here, not read from the module: the REM's a_n as the
# normal quantile at 1 - 1/n (the location of the largest of n standard normals), the simplex's
# log(n - 1) (CAS's critical beta), and (log n)^2
SCALES = {"rem": lambda n: float(norm.isf(1.0 / n)), "simplex": lambda n: math.log(n - 1),
          "squared": lambda n: math.log(n) ** 2}


def test_the_modules_laws_are_the_three_of_the_abstract():
    assert {law: k for law, (k, _) in LAWS.items()} == {"rem": 0.5, "simplex": 1.0,
                                                        "squared": 2.0}


@pytest.mark.parametrize("law", sorted(LAWS))
def test_each_log_law_passes_its_own_row_and_fails_the_others(law):
    ns = log2_grid(*SPANS[law], FULL.points)
    fit = fit_half_mass(synthetic_half_mass(SCALES[law], ns, 0), 0).log_power
    assert decide_gap(fit, law, ns).verdict == "PASS"
    for other in set(LAWS) - {law}:
        assert decide_gap(fit, other, ns).verdict == "FAIL"


def test_the_sphere_law_passes_sph1():
    ns = log2_grid(*FULL.sphere_n, FULL.points)
    fits = {d: fit_half_mass(synthetic_half_mass(lambda n, d=d: n ** (2 / (d - 1)), ns, 0), 0).power
            for d in FULL.dims}
    assert decide_sph1(fits).verdict == "PASS"


def test_the_local_exponent_law_passes_sph2_and_its_variance_alternative_is_far():
    """n^{2/k} passes; the variance-matched sphere's exponent (written out here for k = 2,
    b = 8: Var(cos) = 4·1·8/(9²·10) = 0.0395, d_eff = 25.3) is far below 2/k."""
    laws = {x: law for x, law in sphere_laws(FULL).items() if x.startswith("law")}
    ns = log2_grid(*FULL.sphere_n, FULL.points)
    fits = {x: fit_half_mass(synthetic_half_mass(lambda n, k=law.k: n ** (2 / k), ns, 0), 0).power
            for x, law in laws.items()}
    assert decide_sph2(fits, laws).verdict == "PASS"
    var = 4 * 1 * 8 / (9**2 * 10)
    assert variance_matched_exponent(laws["law k=2 b=8"]) == pytest.approx(2 / (1 / var - 1))
