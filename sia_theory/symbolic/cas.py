r"""Critical attention scaling on the simplex, derived in sympy (CAS §2, Theorems 2.1 and 2.4).

Model (CAS eq. 1): ``y_i = x_i/|x_i|``, scores ``β⟨y_i, y_j⟩`` for every ``j`` including ``i``,
``A = softmax`` by rows, ``x_i' = Σ_j A_ij y_j + α x_i``, :math:`\beta = \gamma \log n`. On the
exact simplex (``|x_i|² = q``, ``⟨y_i, y_j⟩ = ρ``) every quantity is a scalar function of
``(n, γ, ρ, α, q)``.

Nothing is typed in from the paper: the self weight is the softmax of the two score values, the
critical exponent comes from the exponent balance of the softmax denominator, the post-update
cosine is computed from the Gram matrix of the vectors ``y_i, y_k, r = Σ_{j∉{i,k}} y_j``, and the
limits are sympy limits. The Jacobian norm ``η`` is the sum of a per-pair and a per-token term
written in Gram invariants (the derivation is in :func:`jacobian_terms`);
:mod:`sia_theory.cas.jacobian` evaluates the same expressions on arbitrary tokens, and on the
simplex they give ``η`` exactly.
"""

from __future__ import annotations

from functools import cache

import sympy as sp

from ..phases import CAS_PHASES as PHASES  # the one phase vocabulary

n, d = sp.symbols("n d", positive=True)
"""Sympy symbols: the number of tokens ``n`` and the dimension ``d``."""
gamma, rho, q, beta = sp.symbols("gamma rho q beta", positive=True)
r"""Sympy symbols: the scaling ``γ`` (:math:`\beta = \gamma \log n`), the cosine ``ρ``, the squared
norm ``q`` and the inverse temperature ``β``."""
alpha = sp.Symbol("alpha", nonnegative=True)
"""Sympy symbol: the residual ``α >= 0``."""
w = sp.Symbol("w", positive=True)  # self weight A_ii
"""Sympy symbol: the self weight ``w = A_ii``."""
s = sp.Symbol("s", real=True)  # relative distance to criticality: gamma = gamma_c (1 + s)
"""Sympy symbol: the relative distance to criticality, ``γ = γ_c (1 + s)``."""


# ----------------------------------------------------------------------------- forward pass
@cache
def self_weight():
    r"""``w = A_ii``: softmax of the self score ``β`` against ``n−1`` scores ``βρ``, with
    :math:`\beta = \gamma \log n`."""
    b = gamma * sp.log(n)
    expr = sp.exp(b) / (sp.exp(b) + (n - 1) * sp.exp(b * rho))
    return sp.simplify(sp.powsimp(sp.expand_power_exp(expr), force=True))


@cache
def critical_exponent():
    r"""``γ_c``: the ``γ`` at which ``(n−1) n^{γρ}`` and ``n^γ`` grow at the same rate.

    The growth exponent of their ratio is ``lim log(ratio)/log n``; setting it to zero gives
    ``γ_c`` (CAS: :math:`\gamma_c = 1/(1-\rho)`). Returns ``(exponent_of_ratio, gamma_c)``.
    """
    ratio = (n - 1) * n ** (gamma * rho) / n**gamma
    exponent = sp.limit(sp.expand_log(sp.log(ratio), force=True) / sp.log(n), n, sp.oo)
    (gamma_c,) = sp.solve(sp.Eq(exponent, 0), gamma)
    return sp.simplify(exponent), sp.simplify(gamma_c)


@cache
def self_weight_limits():
    """``lim_{n→∞} w`` in the three phases, with ``γ = γ_c (1 + s)``: ``{phase: value}``."""
    _, gamma_c = critical_exponent()
    out = {}
    for phase, s_value in zip(PHASES, (-sp.Rational(1, 2), 0, sp.Rational(1, 2)), strict=True):
        # the limit depends on s only through its sign; a representative value proves each case
        # because w is monotone in gamma (checked in tests against the numeric function).
        # 1/w − 1 = (n−1) n^{γρ−γ}; substituting γ before taking the limit lets sympy see the
        # sign of the exponent (it cannot know ρ < 1 on its own).
        ratio = sp.powsimp(sp.expand(1 / self_weight() - 1), force=True)
        ratio = sp.powsimp(sp.simplify(ratio.subs(gamma, gamma_c * (1 + s_value))), force=True)
        out[phase] = sp.limit(1 / (1 + ratio), n, sp.oo)
    return out


def _gram_ikr():
    """Gram matrix of ``(y_i, y_k, r)`` with ``r = Σ_{j∉{i,k}} y_j`` on the simplex."""
    m = n - 2
    return sp.Matrix([[1, rho, m * rho],
                      [rho, 1, m * rho],
                      [m * rho, m * rho, m + m * (m - 1) * rho]])


def _dot(a, b):
    return sp.expand((sp.Matrix(a).T * _gram_ikr() * sp.Matrix(b))[0, 0])


def _off_weight(weight):
    return (1 - weight) / (n - 1)


@cache
def inner_product_in_w():
    """Exact finite-``n`` post-update cosine ``⟨y_i', y_k'⟩`` with ``w`` kept as a symbol.

    ``x_i' = w y_i + u (y_k + r) + α√q y_i`` and ``x_k' = w y_k + u (y_i + r) + α√q y_k`` with
    ``u = (1−w)/(n−1)``, in the basis ``(y_i, y_k, r)``.
    """
    u = _off_weight(w)
    res = alpha * sp.sqrt(q)
    xi = (w + res, u, u)
    xk = (u, w + res, u)
    num, den = _dot(xi, xk), _dot(xi, xi)  # |x_i'| = |x_k'| by symmetry
    return sp.factor(sp.simplify(num)) / sp.factor(sp.simplify(den))


@cache
def inner_product():
    """Exact finite-``n`` post-update cosine as a function of ``(n, γ, ρ, α, q)``."""
    return inner_product_in_w().subs(w, self_weight())


@cache
def inner_product_limit_in_w():
    """``lim_{n→∞}`` of the cosine at fixed self weight ``w`` (the cosine is a rational function
    of ``1/n`` with a denominator that stays positive at ``1/n = 0``, so the phase limit is this
    expression at the limiting ``w``)."""
    return sp.factor(sp.limit(inner_product_in_w(), n, sp.oo))


@cache
def inner_product_limits():
    """``{phase: lim ⟨y_i', y_j'⟩}`` for general ``α, q`` (CAS Theorem 2.1 and its residual
    form)."""
    lim_w = self_weight_limits()
    return {phase: sp.factor(sp.simplify(inner_product_limit_in_w().subs(w, lim_w[phase])))
            for phase in PHASES}


@cache
def critical_self_weight():
    r"""The exact self weight at :math:`\gamma = \gamma_c` for every ``n`` (CAS: ``n/(2n−1)``)."""
    gamma_c = critical_exponent()[1]
    ratio = sp.powsimp(sp.expand(1 / self_weight() - 1), force=True)
    ratio = sp.powsimp(sp.simplify(ratio.subs(gamma, gamma_c)), force=True)
    return sp.factor(sp.simplify(1 / (1 + ratio)))


@cache
def critical_convergence_coefficient():
    r"""``c`` in ``⟨y_i', y_j'⟩ = 4ρ/(1+3ρ) + c/n + O(1/n²)`` at :math:`\gamma = \gamma_c`,
    :math:`\alpha = 0`."""
    h = sp.Symbol("h", positive=True)
    cos_c = inner_product_in_w().subs(alpha, 0).subs(w, critical_self_weight())
    limit = inner_product_limits()["critical"].subs(alpha, 0)
    return sp.factor(sp.limit((cos_c.subs(n, 1 / h) - limit) / h, h, 0))


@cache
def transition_width_constant():
    r"""``c(ρ)`` in "the 10–90 % width of the α = 0 transition, in units of ``γ/γ_c``, is
    ``c(ρ)/log n``" (THEORY.md measured ``3.46/log n`` at ``ρ = 0.5``).

    With ``γ = γ_c(1 + t/log n)`` the self weight tends to the logistic ``w = 1/(1 + e^{−t})`` and
    the cosine to ``ρ/(ρ + (1−ρ)w²)`` (:func:`inner_product_limit_in_w` at :math:`\alpha = 0`).
    Solving ``cos = ρ + f(1−ρ)`` for ``t`` at ``f = 0.1`` and ``0.9`` gives the width in ``t``.
    """
    f = sp.Symbol("f", positive=True)
    cos_w = inner_product_limit_in_w().subs(alpha, 0)
    roots = sp.solve(sp.Eq(cos_w, rho + f * (1 - rho)), w)
    # the two roots are ±(same magnitude); keep the positive one (sign checked at a sample point)
    half = sp.Rational(1, 2)
    roots = [r for r in roots if r.subs({rho: half, f: half}) > 0]
    if len(roots) != 1:
        raise RuntimeError(f"expected one positive self weight, got {roots}")
    t_of_f = sp.log(roots[0] / (1 - roots[0]))  # inverse of the logistic w = 1/(1 + e^{-t})
    return sp.simplify(t_of_f.subs(f, sp.Rational(1, 10)) - t_of_f.subs(f, sp.Rational(9, 10)))


# ----------------------------------------------------------------------------- Jacobian norm
# Invariants of a token configuration (all real); per pair (i, k) and per token i.
A_ik, r_k, G_ik, K_ik = sp.symbols("A_ik r_k G_ik K_ik", real=True)
"""Sympy symbols: the per-pair ``(i, k)`` Gram invariants of a token configuration (the Jacobian
norm's pair term)."""
A_ii, r_i, m_i, oo_i, gg_i, aGGa_i, kk_i, bb_i, bo_i = sp.symbols(
    "A_ii r_i m_i oo_i gg_i aGGa_i kk_i bb_i bo_i", real=True)
"""Sympy symbols: the per-token Gram invariants (the Jacobian norm's token term)."""
PAIR_ARGS = (A_ik, r_k, G_ik, K_ik, m_i, oo_i, beta, d)
"""The arguments of the lambdified per-pair term."""
TOKEN_ARGS = (A_ii, r_i, m_i, oo_i, gg_i, aGGa_i, kk_i, bb_i, bo_i, beta, alpha, d)
"""The arguments of the lambdified per-token term."""


@cache
def jacobian_terms():
    """``(pair, token)``: ``|∂X'/∂X|_F² = Σ_{i,k} pair(i,k) + Σ_i token(i)`` (CAS Theorem 2.4's
    ``η`` times ``n d``).

    With ``o_i = Σ_j A_ij y_j``, ``P_k = (I − y_k y_kᵀ)/r_k`` and
    ``C_i = β(Σ_j A_ij y_j y_jᵀ − o_i o_iᵀ)`` the blocks are
    ``∂x_i'/∂x_k = A_ik (I + β (y_k − o_i) y_iᵀ) P_k + δ_ik (C_i P_i + α I)``
    (key/value side, then query side and residual). Expanding ``|·|_F²`` with ``y_iᵀP_i = 0``:

    * pair: ``A_ik²/r_k² [(d−1) + 2β(G_ik K_ik − m_i) + β²(1 − 2K_ik + |o_i|²)(1 − G_ik²)]``
      with ``G = YYᵀ``, ``K_ik = o_i·y_k``, ``m_i = o_i·y_i``;
    * token: ``2(A_ii/r_i² + α/r_i) tr(C_i P̄_i) + 2α A_ii (d−1)/r_i + |C_i P̄_i|²/r_i² + α² d``
      with ``P̄ = r P``, ``tr(C P̄) = β(1 − |o|²) − β(Σ_j A_ij G_ij² − m²)`` and
      ``|C P̄|² = tr C² − |C y|²``, ``tr C² = β²(aᵀ(G∘G)a − 2 Σ_j A_ij K_ij² + |o|⁴)``,
      ``|C y|² = β²(|b|² − 2m b·o + m²|o|²)``, ``b_i = Σ_j A_ij G_ij y_j``.

    Checked against a complex-step dense Jacobian in ``tests/cas/test_cas_jacobian.py``.
    """
    pair = A_ik**2 / r_k**2 * ((d - 1) + 2 * beta * (G_ik * K_ik - m_i)
                               + beta**2 * (1 - 2 * K_ik + oo_i) * (1 - G_ik**2))
    tr_cp = beta * (1 - oo_i) - beta * (gg_i - m_i**2)
    tr_c2 = beta**2 * (aGGa_i - 2 * kk_i + oo_i**2)
    cy2 = beta**2 * (bb_i - 2 * m_i * bo_i + m_i**2 * oo_i)
    token = (2 * (A_ii / r_i**2 + alpha / r_i) * tr_cp + 2 * alpha * A_ii * (d - 1) / r_i
             + (tr_c2 - cy2) / r_i**2 + alpha**2 * d)
    return pair, token


@cache
def simplex_invariants():
    """The invariants of :func:`jacobian_terms` on the exact simplex, in ``(n, w, ρ, q)``."""
    u = _off_weight(w)
    yi, yk = (1, 0, 0), (0, 1, 0)  # third basis vector: r = Σ_{j∉{i,k}} y_j
    o = (w, u, u)  # o_i
    b = (w, u * rho, u * rho)  # Σ_j A_ij G_ij y_j
    m_val, k_off = _dot(o, yi), _dot(o, yk)
    others = n - 1
    return {
        "m": m_val, "k_off": k_off, "oo": _dot(o, o),
        "gg": w + others * u * rho**2,
        # Σ_{j,l} A_ij A_il G_jl²: (i,i), (i,other)×2, (other,same), (other,different)
        "aGGa": w**2 + 2 * w * u * others * rho**2 + u**2 * (others + others * (n - 2) * rho**2),
        "kk": w * m_val**2 + others * u * k_off**2,
        "bb": _dot(b, b), "bo": _dot(b, o),
        "u": u, "r": sp.sqrt(q),
    }


@cache
def simplex_eta_in_w():
    """Exact ``η = |∂X'/∂X|_F²/(n d)`` on the simplex with ``w`` and ``β`` kept as symbols."""
    pair, token = jacobian_terms()
    v = simplex_invariants()
    common = {r_k: v["r"], r_i: v["r"], m_i: v["m"], oo_i: v["oo"]}
    pair_self = pair.subs({A_ik: w, G_ik: 1, K_ik: v["m"], **common})
    pair_other = pair.subs({A_ik: v["u"], G_ik: rho, K_ik: v["k_off"], **common})
    tok = token.subs({A_ii: w, gg_i: v["gg"], aGGa_i: v["aGGa"], kk_i: v["kk"],
                      bb_i: v["bb"], bo_i: v["bo"], **common})
    # cancel + factor reaches the same rational function as simplify in a fifth of the time
    return sp.factor(sp.cancel(sp.together((pair_self + (n - 1) * pair_other + tok) / d)))


@cache
def simplex_eta():
    """Exact finite-``(n, d)`` simplex ``η`` as a function of ``(n, d, γ, ρ, α, q)``."""
    return simplex_eta_in_w().subs({w: self_weight(), beta: gamma * sp.log(n)})


@cache
def eta_beta_coefficients():
    r"""``η = E0 + β E1 + β² E2``; returns the ``n → ∞`` limits at fixed ``w, d``:
    ``(E0_∞, d·E1_∞, d·E2_∞)`` as functions of ``(w, ρ, q, d, α)``.

    ``E0_∞ = α² + (1 − 1/d)(w² + 2α√q w)/q`` gives Theorem 2.4 (:math:`\alpha = 0`) at the limiting
    ``w``; the ``β`` and ``β²`` coefficients are ``O(1/d)``, so the theorem needs ``β²/d → 0`` at
    criticality (``w(1−w)`` does not vanish there).
    """
    num, den = sp.fraction(sp.together(simplex_eta_in_w()))
    poly = sp.Poly(sp.expand(num), beta)
    if poly.degree() > 2:
        raise RuntimeError("eta is not quadratic in beta")
    return tuple(sp.factor(sp.limit(poly.coeff_monomial(beta**k) / den * (1 if k == 0 else d),
                                    n, sp.oo)) for k in range(3))


@cache
def jacobian_limits():
    r"""``{phase: lim η}`` when ``β²/d → 0`` (CAS Theorem 2.4 at :math:`\alpha = 0`; general ``α``
    kept)."""
    e0 = eta_beta_coefficients()[0]
    lim_w = self_weight_limits()
    return {phase: sp.factor(e0.subs(w, lim_w[phase])) for phase in PHASES}


@cache
def critical_excess_terms():
    r"""Leading finite-size excess of the simplex ``η`` over its limit at :math:`\gamma = \gamma_c`,
    :math:`\alpha = 0`.

    At ``γ_c`` the self weight is exactly ``w = n/(2n−1)``. Returns ``{"1/n": c_n, "beta/d": c_1,
    "beta^2/d": c_2}`` such that ``η = (1−1/d)/(4q) + c_n/n + c_1 β/d + c_2 β²/d + ...`` (the
    ``1/n`` coefficient taken at ``d → ∞``; the others at ``n → ∞``).
    """
    e0, e1, e2 = (c.subs(alpha, 0) for c in eta_beta_coefficients())
    eta = simplex_eta_in_w().subs(alpha, 0).subs(w, critical_self_weight())
    h = sp.Symbol("h", positive=True)
    e_inf_d = sp.limit(eta.subs(beta, 0), d, sp.oo)
    limit_inf_d = sp.limit(e0.subs(w, sp.Rational(1, 2)), d, sp.oo)
    c_n = sp.limit((e_inf_d.subs(n, 1 / h) - limit_inf_d) / h, h, 0)
    half = {w: sp.Rational(1, 2)}
    return {"1/n": sp.factor(c_n), "beta/d": sp.factor(e1.subs(half)),
            "beta^2/d": sp.factor(e2.subs(half))}


@cache
def eta_fixed_n_large_d():
    """``lim_{d→∞} η`` at fixed ``n`` (THEORY.md: ``w² + (1−w)²/(n−1)`` for ``q = 1``)."""
    return sp.factor(sp.limit(simplex_eta_in_w().subs(alpha, 0), d, sp.oo))
