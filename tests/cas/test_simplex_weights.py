"""sia_theory.cas.simplex_weights, by its own name: the simplex attention row ``(w, u, …, u)``
against its definition written out here (CAS §2: ``w = n^γ / (n^γ + (n−1) n^{γρ})``), the
uniform row at ``γ = 0``, the phases around ``γ_c = 1/(1−ρ)`` and the argument checks."""

import math

import numpy as np
import pytest

from sia_theory.cas.simplex_weights import (
    check_param,
    critical_gamma,
    log_self_weights,
    phase_of,
    simplex_self_weight,
    simplex_sparsity,
    transition_width,
)


@pytest.mark.parametrize(("n", "gamma", "rho"), [(10, 1.0, 0.5), (1000, 2.0, 0.3), (50, 4.0, 0.8)])
def test_self_weight_and_sparsity_match_the_row_written_out(n, gamma, rho):
    row = np.full(n, float(n) ** (gamma * rho))
    row[0] = float(n) ** gamma  # softmax of β⟨x_i, x_j⟩ with β = γ log n, ⟨x_i, x_i⟩ = 1
    row /= row.sum()
    assert float(simplex_self_weight(n=n, gamma=gamma, rho=rho)) == pytest.approx(row[0],
                                                                                  rel=1e-12)
    ratio, breadth = simplex_sparsity(n=n, gamma=gamma, rho=rho)
    assert float(ratio) == pytest.approx(1.0 / np.sum(row**2), rel=1e-12)
    assert float(breadth) == pytest.approx(math.exp(-np.sum(row * np.log(row))), rel=1e-12)
    log_w, log_v = log_self_weights(n, gamma, rho)
    assert float(log_w) == pytest.approx(math.log(row[0]), rel=1e-12)
    assert float(log_v) == pytest.approx(math.log1p(-row[0]), rel=1e-10)


def test_gamma_zero_is_the_uniform_row():
    ratio, breadth = simplex_sparsity(n=[4, 100], gamma=0.0, rho=0.5)
    np.testing.assert_allclose(ratio, [4, 100], rtol=1e-12)
    np.testing.assert_allclose(breadth, [4, 100], rtol=1e-12)


def test_phases_sit_around_gamma_c_and_the_width_shrinks_like_one_over_log_n():
    for rho in (0.2, 0.5, 0.75):
        gamma_c = 1.0 / (1.0 - rho)
        assert float(critical_gamma(rho)) == pytest.approx(gamma_c, rel=1e-14)
        assert [phase_of(gamma=g, rho=rho) for g in (0.9 * gamma_c, gamma_c, 1.1 * gamma_c)] \
            == ["subcritical", "critical", "supercritical"]
        widths = transition_width(n=np.array([1e3, 1e6]), rho=rho)
        assert widths[0] * math.log(1e3) == pytest.approx(widths[1] * math.log(1e6), rel=1e-12)


def test_check_param_names_the_parameter_for_scalars_and_arrays():
    assert check_param("gamma", 2, 0.0) == 2.0
    for bad in (-1.0, [1.0, -1.0], "x"):
        with pytest.raises(ValueError, match=r"^gamma\b"):
            check_param("gamma", bad, 0.0)
    with pytest.raises(ValueError, match=r"^n must be an integer"):
        check_param("n", 2.5, 2, integer=True)
