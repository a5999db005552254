"""The generated numeric module is the sympy derivation, printed; the run-time path needs neither
sympy nor numba; the top-level package re-exports lazily."""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import sia_theory
from sia_theory.symbolic import codegen, generated

ROOT = Path(__file__).resolve().parents[2]


def test_committed_generated_module_is_what_the_generator_prints_now():
    """Re-derives every expression in sympy; if this fails, run
    ``python -m sia_theory.symbolic.codegen`` and commit the result."""
    assert codegen.GENERATED_PATH.read_text() == codegen.render()


def test_generator_check_mode_agrees(capsys):
    assert codegen.main(["--check"]) == 0
    assert codegen.main(["--bogus"]) == 2


def test_generated_si_coefficients_match_the_paper_formula():
    """SI eq. 16 typed in here: a_t^2 = 2[log(t/tau+1) - log alpha + beta/alpha],
    m_t = -a_t^2 + beta/alpha."""
    t = np.array([0.0, 0.5, 3.0, 1e3, 1e9])
    for tau, alpha, beta in [(10.0, math.exp(0.5), math.exp(0.5)), (0.5, 2.0, 3.0)]:
        a2 = 2 * (np.log(t / tau + 1) - math.log(alpha) + beta / alpha)
        np.testing.assert_allclose(generated.si_a2(t, tau, alpha, beta), a2, rtol=1e-12,
                                   atol=1e-12)
        np.testing.assert_allclose(generated.si_m(t, tau, alpha, beta), beta / alpha - a2,
                                   rtol=1e-12, atol=1e-12)
    assert generated.SI_BOUNDARY_ALPHA == generated.SI_BOUNDARY_BETA == math.exp(0.5)


def test_generated_validity_condition_is_the_boundary_of_nonnegative_variance():
    for alpha in (0.5, 1.0, 2.0, 30.0):
        bound = alpha * math.log(alpha)
        assert generated.si_beta_min(alpha) == pytest.approx(bound, rel=1e-15, abs=1e-15)
        assert generated.si_is_valid(alpha, bound + 1e-9)
        assert not generated.si_is_valid(alpha, bound - 1e-9)
        # at beta = bound, a_0^2 = 0 (tolerance: rounding of the log)
        assert generated.si_a2(0.0, 1.0, alpha, bound) == pytest.approx(0.0, abs=1e-12)


def test_generated_lognormal_moments_match_quadrature():
    x = np.linspace(-12, 12, 200_001)  # standard normal grid
    density = np.exp(-x * x / 2) / math.sqrt(2 * math.pi)
    for a2, m in [(1.0, 0.0), (2.5, -1.0), (0.1, 0.3)]:
        logit = m + math.sqrt(a2) * x
        weight = np.exp(logit) * density
        assert generated.lognormal_weight_mean(a2, m) == pytest.approx(
            np.trapezoid(weight, x), rel=1e-9)
        assert generated.lognormal_negentropy_mean(a2, m) == pytest.approx(
            np.trapezoid(weight * logit, x), rel=1e-9)


@pytest.mark.parametrize(("t1", "t2", "tau"), [(0, 1, 10.0), (3, 40, 0.5), (100, 5000, 7.0)])
def test_generated_range_sum_matches_direct_sum(t1, t2, tau):
    direct = math.fsum(1 / (s / tau + 1) for s in range(t1, t2))
    assert generated.si_range_sum(t1, t2, tau) == pytest.approx(direct, rel=1e-12)


def test_generated_limits_are_tau_log_delta():
    assert generated.si_total_attention_limit(2.0, 10.0, 5) == pytest.approx(
        2.0 * 10.0 * math.log(5), rel=1e-15)
    assert generated.si_negentropy_limit(3.0, 0.5, 2) == pytest.approx(
        3.0 * 0.5 * math.log(2), rel=1e-15)


PROBE = """
import json, sys
loaded = lambda: {"numba": "numba" in sys.modules, "sympy": "sympy" in sys.modules}
import sia_theory
steps = {"import sia_theory": dict(loaded(), transforms="sia_theory.transforms" in sys.modules)}
import sia_theory.attention
steps["import sia_theory.attention"] = loaded()
import numpy as np
from sia_theory import ScaleInvariant, expected_total_attention, scale_invariant_total_attention
ScaleInvariant(10).coefficients(np.arange(10))
steps["ScaleInvariant coefficients"] = loaded()
expected_total_attention(ScaleInvariant(10), 0, 100)
scale_invariant_total_attention(ScaleInvariant(10), 0, 100)
steps["closed forms"] = loaded()
print(json.dumps(steps))
"""


def test_runtime_path_loads_neither_numba_nor_sympy():
    """Module-loading facts in a fresh process (the timings are in benchmarks/bench_import.py)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                         env=env, check=True, cwd=ROOT)
    steps = json.loads(out.stdout.strip().splitlines()[-1])
    assert steps.pop("import sia_theory") == {"numba": False, "sympy": False,
                                              "transforms": False}
    for step, modules in steps.items():
        assert modules == {"numba": False, "sympy": False}, step


def test_every_exported_name_imports_lazily():
    exported = set(sia_theory.__all__)
    assert len(exported) == len(sia_theory.__all__)
    assert set(dir(sia_theory)) >= exported
    for name in sia_theory.__all__:
        value = getattr(sia_theory, name)
        assert value is not None
        namespace = {}
        exec(f"from sia_theory import {name} as x", namespace)
        assert namespace["x"] is value
    from sia_theory import attention, symbolic
    assert attention.attention is sia_theory.attention.attention
    assert symbolic.si.solve_coefficients is not None
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        sia_theory.nope  # noqa: B018
