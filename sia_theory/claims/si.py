"""Claims SI-1 … SI-5: the scale-invariant transform derived and its limits (THEORY.md §1);
SI-6 … SI-10 (Monte Carlo and the figures) are in :mod:`sia_theory.claims.si_montecarlo`
and :mod:`sia_theory.claims.si_entropy_growth`.

Each row = a library study + a pure ``decide_*`` function of the measured numbers; each
negative control feeds the row's alternative law to the same decision function.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp
from scipy.optimize import brentq
from scipy.special import digamma

from sia_theory import ScaleInvariant
from sia_theory.gaussian.closed_forms import expected_negentropy, expected_total_attention
from sia_theory.symbolic import si

from .core import Measurement, claim, negative_control, verdict

# --- SI-1 … SI-3: symbolic, with a numeric cross-check on a grid -------------------------

GRID_T = np.concatenate([[0.0], np.geomspace(1e-3, 1e4, 40)])
"""The ``t`` grid of the numeric cross-checks of SI-1 and SI-2: 0 and 40 log-spaced points
from 1e-3 to 1e4."""
GRID_HYPER = [(tau, alpha, alpha * math.log(alpha) + gap) for tau in (0.1, 1.0, 10.0, 100.0)
              for alpha in (0.5, math.exp(0.5), 3.0) for gap in (0.1, 1.0)]
"""The ``(τ, α, β)`` grid of SI-1's numeric cross-check: τ ∈ {0.1, 1, 10, 100},
α ∈ {0.5, e^½, 3} and β = α log α + gap with gap ∈ {0.1, 1}, so every point lies inside the
region of validity β ≥ α log α (SI-3)."""


def decide_identity(symbolic_zero: bool, max_error: float, scale: float) -> Measurement:
    """PASS iff the symbolic difference is 0 and the numeric difference is rounding-sized."""
    tol = 1e-12 * max(scale, 1.0)
    return Measurement(verdict(symbolic_zero and max_error <= tol),
                       f"symbolic difference zero: {symbolic_zero}; max numeric |difference| on "
                       f"the grid {max_error:.2e}", value=max_error, target=0.0, tolerance=tol)


def _eq16_comparison(paper_a2):
    """Solver's ``(a2, m)`` vs a candidate ``a2`` of eq. 16 (``m = −a2 + β/α``): symbolic
    and numeric on the grid (the numeric route lambdifies the candidate on its own)."""
    sol = si.solve_coefficients()
    paper_m = -paper_a2 + si.beta / si.alpha
    zero = all(sp.simplify(sp.expand_log(sol[k] - v, force=True)) == 0
               for k, v in ((si.a2, paper_a2), (si.m, paper_m)))
    args = (si.t, si.tau, si.alpha, si.beta)
    cand = [sp.lambdify(args, e, "numpy") for e in (paper_a2, paper_m)]
    solver = si.coefficient_functions()
    err, scale = 0.0, 0.0
    for tau, alpha, beta in GRID_HYPER:
        for c, s in zip(cand, solver):
            ref = s(GRID_T, tau, alpha, beta)
            err = max(err, float(np.max(np.abs(c(GRID_T, tau, alpha, beta) - ref))))
            scale = max(scale, float(np.max(np.abs(ref))))
    return zero, err, scale


def _eq16(beta_term):
    return 2 * (sp.log(si.t / si.tau + 1) - sp.log(si.alpha) + beta_term)


@claim("SI-1", "Solving E[Ã_t] = α/(t/τ+1), E[Ã_t log Ã_t] = β/(t/τ+1) gives "
               "a_t² = 2[log(t/τ+1) − log α + β/α], m_t = −a_t² + β/α (SI eq. 16)",
       alternative="any other closed form (e.g. a_t² = 2[log(t/τ+1) − log α + β])",
       seeded=False)
def si_1(quick, seed):
    """The sympy solution of eq. 15 (moments integrated, system solved) vs the paper's eq. 16."""
    return decide_identity(*_eq16_comparison(_eq16(si.beta / si.alpha)))


@negative_control("SI-1")
def si_1_control():
    """SI-1's decision on the alternative ``a_t² = 2[log(t/τ+1) − log α + β]`` (β in place of
    β/α): must FAIL."""
    return decide_identity(*_eq16_comparison(_eq16(si.beta)))


def _boundary_comparison(paper_a2, paper_m):
    hyper, coeffs = si.boundary_hyperparameters(), si.boundary_coefficients()
    half = sp.exp(sp.Rational(1, 2))
    zero = (sp.simplify(hyper[si.alpha] - half) == 0 and sp.simplify(hyper[si.beta] - half) == 0
            and sp.simplify(coeffs[si.a2] - paper_a2) == 0
            and sp.simplify(coeffs[si.m] - paper_m) == 0)
    err = abs(float(hyper[si.alpha]) - math.exp(0.5)) + abs(float(hyper[si.beta]) - math.exp(0.5))
    for solver, paper in ((coeffs[si.a2], paper_a2), (coeffs[si.m], paper_m)):
        f, g = (sp.lambdify((si.t, si.tau), e, "numpy") for e in (solver, paper))
        for tau in (0.1, 1.0, 10.0, 100.0):
            err = max(err, float(np.max(np.abs(f(GRID_T, tau) - g(GRID_T, tau)))))
    return zero, err, 2 * math.log(1e4 / 0.1 + 1) + 1


LOG_T_TAU = sp.log(si.t / si.tau + 1)
"""The sympy expression ``log(t/τ + 1)``, in which SI-2's coefficients are written."""


@claim("SI-2", "Boundary conditions a_0² = 1, m_0 = 0 force α = β = e^{1/2}; then "
               "a_t² = 1 + 2 log(t/τ+1), m_t = −2 log(t/τ+1)",
       alternative="other hyperparameters or coefficients (e.g. a_t² = 1 + log(t/τ+1))",
       seeded=False)
def si_2(quick, seed):
    """SI eq. 16 at the boundary ``a_0² = 1, m_0 = 0``: the sympy hyperparameters and coefficients
    against ``α = β = e^{1/2}``, ``a_t² = 1 + 2 log(t/τ+1)``, ``m_t = −2 log(t/τ+1)``, symbolically
    and on a grid (deterministic: ``quick`` and ``seed`` are unused)."""
    return decide_identity(*_boundary_comparison(1 + 2 * LOG_T_TAU, -2 * LOG_T_TAU))


@negative_control("SI-2")
def si_2_control():
    """SI-2's decision on the alternative ``a_t² = 1 + log(t/τ+1)``: must FAIL."""
    return decide_identity(*_boundary_comparison(1 + LOG_T_TAU, -2 * LOG_T_TAU))


def decide_validity(symbolic_match: bool, edge_error: float) -> Measurement:
    """``edge_error``: max relative distance between the numeric edge of validity (the β at
    which a_0² = 0, by root finding on the solver's a_t²) and the claimed boundary."""
    tol = 1e-9
    return Measurement(verdict(symbolic_match and edge_error <= tol),
                       f"sympy condition matches: {symbolic_match}; numeric edge of validity vs "
                       f"claimed boundary: max relative error {edge_error:.1e}",
                       value=edge_error, target=0.0, tolerance=tol)


def _validity_comparison(boundary):
    """``boundary``: the claimed edge ``β = f(α)`` as a sympy expression in ``α``."""
    cond = si.validity_condition()
    match = (isinstance(cond, sp.GreaterThan) and cond.lhs == si.beta
             and sp.simplify(cond.rhs - boundary) == 0)
    a2_fn, _ = si.coefficient_functions()
    f = sp.lambdify(si.alpha, boundary, "math")
    errors = []
    for alpha in (0.3, 1.0, math.exp(0.5), 2.5, 7.0):
        edge = brentq(lambda b, a=alpha: a2_fn(0.0, 1.0, a, b), -50.0, 50.0, xtol=1e-14)
        errors.append(abs(edge - f(alpha)) / max(abs(f(alpha)), 1.0))
    return match, max(errors)


@claim("SI-3", "The solution is valid (a_t² ≥ 0 for all t ≥ 0) iff β ≥ α log α",
       alternative="a different edge of validity (e.g. β ≥ α)",
       seeded=False)
def si_3(quick, seed):
    """SI's validity condition: sympy's condition against ``β ≥ α log α``, and the numeric
    edge (the β at which ``a_0² = 0``, by root finding) at five α (deterministic)."""
    return decide_validity(*_validity_comparison(si.alpha * sp.log(si.alpha)))


@negative_control("SI-3")
def si_3_control():
    """SI-3's decision on the alternative edge ``β ≥ α``: must FAIL."""
    return decide_validity(*_validity_comparison(si.alpha))


# --- SI-4, SI-5: limits of the exact sums, with the next-order term --------------------------

LIMIT_T = (10**3, 10**4, 10**5, 10**6)
"""SI-4, SI-5: the ``t`` at which the exact sums are compared with their expansion in ``1/t``."""
LIMIT_DELTAS = (2, 5, 10)
"""SI-4, SI-5: the range ratios ``Δ`` of the sums ``E[Z_t^{tΔ}]`` and ``E[N_t^{tΔ}]``."""
LIMIT_TRANSFORM = ScaleInvariant(10.0, alpha=2.0, beta=3.0)  # α ≠ β: a route mix-up shows
"""SI-4, SI-5: the transform whose sums are checked, ``ScaleInvariant(τ = 10, α = 2, β = 3)``;
α ≠ β, so a mix-up of the ``E[e^L]`` and ``E[L e^L]`` routes shows."""


def decide_next_order(exact, t_values, c0, c1, c2) -> Measurement:
    """``exact[i, j]``: the sum at ``t_values[j]`` for case ``i``; ``c0, c1, c2`` (per case)
    the limit and the next two coefficients of its expansion in ``1/t``. PASS iff the measured
    approach ``(exact − c0)`` matches the next-order term ``c1/t`` to within twice the size of
    the following term ``c2/t²`` (relative), at every ``t``: then the sum tends to ``c0``."""
    exact, t = np.asarray(exact, float), np.asarray(t_values, float)
    c0, c1, c2 = (np.asarray(c, float)[:, None] for c in (c0, c1, c2))
    mismatch = np.abs((exact - c0) / (c1 / t) - 1.0)  # (cases, t)
    tol = 2.0 * np.abs(c2 / (c1 * t))
    worst = np.unravel_index(np.argmax(mismatch / tol), mismatch.shape)
    return Measurement(verdict(bool(np.all(mismatch <= tol))),
                       f"(exact − limit)/(c₁/t) − 1: max {mismatch[:, 0].max():.2e} at t = "
                       f"{t[0]:g}, {mismatch[:, -1].max():.2e} at t = {t[-1]:g}",
                       value=float(mismatch[worst]), target=0.0, tolerance=float(tol[worst]),
                       detail="c₁/t is the Euler–Maclaurin term −amplitude·τ(τ − ½)(1 − 1/Δ)/t "
                              "from the sympy expansion; tolerance 2|c₂/(c₁t)|.")


def limit_inputs(amplitude, limit_scale=1.0):
    """Exact sums from scipy's digamma (not from the code under test) and the sympy expansion;
    ``limit_scale`` ≠ 1 makes the sum converge to a different limit (the negative control)."""
    tau = LIMIT_TRANSFORM.tau
    cs = si.range_sum_asymptotics(2)
    exact, coeffs = [], []
    for delta in LIMIT_DELTAS:
        t = np.asarray(LIMIT_T, float)
        s = amplitude * tau * (digamma(t * delta + tau) - digamma(t + tau))
        c = [amplitude * float(ck.subs({si.tau: tau, si.Delta: delta})) for ck in cs]
        exact.append(s + (limit_scale - 1.0) * c[0])
        coeffs.append(c)
    c0, c1, c2 = np.array(coeffs).T
    return exact, LIMIT_T, c0, c1, c2


def _squeeze_ok(index, amplitude):
    return sp.simplify(si.range_sum_limits()[index] - amplitude * si.tau * sp.log(si.Delta)) == 0


def library_route_error(index, amplitude, t=10**3) -> float:
    """Largest relative gap between the library's closed form for ``LIMIT_TRANSFORM`` (index 0:
    ``expected_total_attention``, the ``E[e^L]`` route; 1: ``expected_negentropy``, the
    ``E[L e^L]`` route, from the transform's own ``a_t, m_t``) and the hypothesis' digamma sum:
    ties the lemma to the transform the package implements (α ≠ β, so a route mix-up shows)."""
    route = (expected_total_attention, expected_negentropy)[index]
    tau = LIMIT_TRANSFORM.tau
    return max(abs(route(LIMIT_TRANSFORM, t, t * delta)
                   / (amplitude * tau * (digamma(t * delta + tau) - digamma(t + tau))) - 1)
               for delta in LIMIT_DELTAS)


def _limit_row(index, amplitude_symbol, amplitude):
    m = decide_next_order(*limit_inputs(amplitude))
    route_error = library_route_error(index, amplitude)
    ok = m.verdict == "PASS" and _squeeze_ok(index, amplitude_symbol) and route_error < 1e-9
    name = ("expected_total_attention", "expected_negentropy")[index]
    return Measurement(verdict(ok), m.measured, m.value, m.ci_low, m.ci_high, m.target,
                       m.tolerance, f"Squeeze of the App. E bounds gives the limit symbolically; "
                       f"{m.detail} α = 2, β = 3, τ = 10, Δ = 2, 5, 10; the library's {name} "
                       f"of that transform matches the digamma sum to {route_error:.1e} "
                       f"(required < 1e-9).")


@claim("SI-4", "E[Ã_t] = α/(t/τ+1) implies E[Z_t^{tΔ}] → ατ log Δ as t → ∞ (Lemma, App. E)",
       alternative="the sums converge to another limit (e.g. ατ log Δ·(1 + 1e-3))",
       seeded=False)
def si_4(quick, seed):
    """SI Lemma (App. E) for ``E[Z_t^{tΔ}]``: the exact digamma sums approach ``ατ log Δ`` by the
    next-order term, the squeeze gives the limit symbolically, and the library's
    ``expected_total_attention`` matches the sums (deterministic)."""
    return _limit_row(0, si.alpha, LIMIT_TRANSFORM.alpha)


@negative_control("SI-4")
def si_4_control():
    """SI-4's decision on sums converging to ``ατ log Δ·(1 + 1e-3)``: must FAIL."""
    return decide_next_order(*limit_inputs(LIMIT_TRANSFORM.alpha, limit_scale=1 + 1e-3))


@claim("SI-5", "E[Ã_t log Ã_t] = β/(t/τ+1) implies E[N_t^{tΔ}] → βτ log Δ as t → ∞",
       alternative="the sums converge to another limit (e.g. βτ log Δ·(1 + 1e-3))",
       seeded=False)
def si_5(quick, seed):
    """As :func:`si_4` for ``E[N_t^{tΔ}] → βτ log Δ``, through the library's ``expected_negentropy``
    (deterministic)."""
    return _limit_row(1, si.beta, LIMIT_TRANSFORM.beta)


@negative_control("SI-5")
def si_5_control():
    """SI-5's decision on sums converging to ``βτ log Δ·(1 + 1e-3)``: must FAIL."""
    return decide_next_order(*limit_inputs(LIMIT_TRANSFORM.beta, limit_scale=1 + 1e-3))



# --- the nearest alternatives: each claim's quantity 20 % off ----------------------------------

for _sign, _scale in (("+", 1.2), ("−", 0.8)):
    negative_control("SI-1", f"a_t² {_sign}20 %")(
        lambda s=_scale: decide_identity(*_eq16_comparison(s * _eq16(si.beta / si.alpha))))
    negative_control("SI-2", f"log coefficient {_sign}20 %")(
        lambda s=_scale: decide_identity(*_boundary_comparison(1 + 2 * s * LOG_T_TAU,
                                                               -2 * s * LOG_T_TAU)))
    negative_control("SI-3", f"edge {_sign}20 %")(
        lambda s=_scale: decide_validity(*_validity_comparison(s * si.alpha * sp.log(si.alpha))))
    negative_control("SI-4", f"limit {_sign}20 %")(
        lambda s=_scale: decide_next_order(*limit_inputs(LIMIT_TRANSFORM.alpha, limit_scale=s)))
    negative_control("SI-5", f"limit {_sign}20 %")(
        lambda s=_scale: decide_next_order(*limit_inputs(LIMIT_TRANSFORM.beta, limit_scale=s)))
