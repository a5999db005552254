"""A sweep of the engines' public functions held against computations written here from their
definitions (mpmath at 30 digits, scipy quadrature, brute force over explicit tokens, Monte Carlo
within 4 standard errors), each at a few points including the edges of its domain.

``RESULTS`` collects, per function, the independent method, the points and the largest relative
error seen, so the sweep can be printed as a table (set ``SIA_SWEEP_TABLE`` to a path).
"""

from __future__ import annotations

import math
import os

import mpmath as mp
import numpy as np
import pytest
from scipy import integrate, optimize, special, stats

from sia_theory.attention.core import attention_dense, attention_partial
from sia_theory.attention.partials import merge_partials
from sia_theory.attention.rope_scaling import ntk_base
from sia_theory.attention.rotary import rope
from sia_theory.cas.layer import softmax_from_gram
from sia_theory.cas.simplex import simplex_inner_product, simplex_limit
from sia_theory.cas.simplex_weights import simplex_self_weight
from sia_theory.cas.tokens import mean_cosine, normalise_rows
from sia_theory.cas.transition import near_simplex_window
from sia_theory.cas.universality import beta50, participation, simplex_beta50
from sia_theory.gaussian.phase import rem_max_location
from sia_theory.gaussian.quadrature import gauss_legendre_panels
from sia_theory.gaussian.tails import truncated_moments
from sia_theory.sphere.gaps import top_scores
from sia_theory.sphere.model import DistanceLaw, order_parameters

mp.mp.dps = 30
RESULTS: dict[str, dict] = {}


def _record(name, method, points, got, want):
    """Relative errors of ``got`` against ``want`` (absolute where ``want`` is 0), kept in
    :data:`RESULTS`; returns the largest."""
    got = np.atleast_1d(np.asarray(got, dtype=np.float64)).ravel()
    want = np.atleast_1d(np.asarray([float(w) for w in np.ravel(want)], dtype=np.float64))
    err = np.abs(got - want) / np.where(want == 0, 1.0, np.abs(want))
    worst = float(np.max(err))
    entry = RESULTS.setdefault(name, {"method": method, "points": points, "max_rel": 0.0})
    entry["max_rel"] = max(entry["max_rel"], worst)
    return worst


def _mp_softmax(row, beta):
    z = [mp.mpf(beta) * mp.mpf(float(s)) for s in row]
    top = max(z)
    e = [mp.e ** (x - top) for x in z]
    total = mp.fsum(e)
    return [x / total for x in e]


# ----------------------------------------------------------------------------- gaussian
def test_rem_max_location_against_the_formula_at_30_digits():
    ns = [3, 1000, 1e6, 1e30, 1e300]

    def a(n):
        r = mp.sqrt(2 * mp.log(n))
        return r - (mp.log(mp.log(n)) + mp.log(4 * mp.pi)) / (2 * r)

    err = _record("gaussian.phase.rem_max_location", "mpmath formula", "n = 3 … 1e300",
                  rem_max_location(ns), [a(mp.mpf(n)) for n in ns])
    assert err < 1e-14
    with pytest.raises(ValueError, match=r"^n must"):
        rem_max_location([2])


@pytest.mark.parametrize("a, x", [(0.7, np.inf), (0.7, 2.0), (0.7, 0.0), (0.7, -5.0),
                                  (0.7, -30.0), (0.7, -38.5), (3.0, -10.0), (0.0, -20.0)])
def test_truncated_moments_against_mpmath_derivatives(a, x):
    """Mean and covariance of ``(W, LW)``, ``L = aX + m``, ``W = e^L``, given ``X < x``, from
    ``g(t) = E[e^{tX} 1{X<x}] = e^{t²/2}Φ(x − t)`` and its first two derivatives in ``t``
    (mpmath's numerical differentiation at 40 digits), not from the Mills-ratio formulas the
    library uses. Means to 1e-12; the covariance entries to 1e-9 (they are differences of
    moments that agree to ``(a/x)²``: 1e-10 relative is what float64 keeps of them at x = −38)."""
    m = -0.3
    with mp.workdps(40):
        xm = mp.inf if math.isinf(x) else mp.mpf(x)
        am, mm = mp.mpf(a), mp.mpf(m)

        def g(t, k=0):
            return mp.diff(lambda u: mp.e ** (u * u / 2) * mp.ncdf(xm - u), t, k)

        p = mp.ncdf(xm)
        w = mp.e**mm * g(am) / p
        lw = mp.e**mm * (am * g(am, 1) + mm * g(am)) / p
        w2 = mp.e ** (2 * mm) * g(2 * am) / p
        lw2 = mp.e ** (2 * mm) * (am * g(2 * am, 1) + mm * g(2 * am)) / p
        l2w2 = mp.e ** (2 * mm) * (am**2 * g(2 * am, 2) + 2 * am * mm * g(2 * am, 1)
                                   + mm**2 * g(2 * am)) / p
        want = [w, lw, w2 - w**2, lw2 - w * lw, l2w2 - lw**2]
    t = truncated_moments(a, m, x)
    got = [float(t.w), float(t.lw), float(t.var_w), float(t.cov), float(t.var_lw)]
    if a == 0:  # W = e^m exactly: no variance
        assert got[:2] == pytest.approx([math.exp(m), m * math.exp(m)], rel=1e-14)
        assert max(abs(v) for v in got[2:]) < 1e-13 * got[0] ** 2  # rounding of E[W²] − E[W]²
        return
    assert _record("gaussian.tails.truncated_moments", "mpmath derivatives of the tilted MGF",
                   "a = 0 … 3, x = inf … −38.5", got[:2], want[:2]) < 1e-12
    assert _record("gaussian.tails.truncated_moments", "", "", got[2:], want[2:]) < 1e-9


@pytest.mark.parametrize("order", [1, 3, 8])
def test_gauss_legendre_panels_against_exact_integrals(order):
    edges = [0.0, 0.5, 2.0, 7.0, 50.0]
    x, w = gauss_legendre_panels(edges, order=order)
    deg = 2 * order - 1  # exact on each panel
    poly = w @ (x**deg)
    exact = mp.mpf(50) ** (deg + 1) / (deg + 1)
    err = _record("gaussian.quadrature.gauss_legendre_panels",
                  "exact polynomial integral; ∫e^{−x}", "order 1, 3, 8; 4 panels", poly, exact)
    assert err < 1e-13
    if order == 8:  # a smooth non-polynomial integrand on short panels
        x, w = gauss_legendre_panels(np.linspace(0, 50, 51), order=8)
        err = _record("gaussian.quadrature.gauss_legendre_panels", "", "", w @ np.exp(-x),
                      1 - mp.e ** -50)
        assert err < 1e-14


# ----------------------------------------------------------------------------- cas
@pytest.mark.parametrize("n, rho", [(3, 0.5), (10, -1.0), (1000, 0.5), (10**6, 0.999),
                                    (10**12, 0.0)])
def test_simplex_beta50_against_a_root_of_the_participation(n, rho):
    """Participation of the score row ``(1, ρ, …, ρ)`` (``n − 1`` equal terms) set to ½ by a
    30-digit root in β."""

    def part(beta):
        e = mp.e ** (-mp.mpf(beta) * (1 - mp.mpf(rho)))
        z = 1 + (n - 1) * e
        return (1 + (n - 1) * e**2) / z**2 - mp.mpf(1) / 2

    root = mp.findroot(part, (mp.mpf(1e-3), mp.mpf(1e4)), solver="anderson")
    err = _record("cas.universality.simplex_beta50", "mpmath root of the participation",
                  "n = 3 … 1e12, ρ = −1 … 0.999", simplex_beta50(n, rho), root)
    assert err < 1e-12


def test_participation_against_mpmath_softmax():
    rng = np.random.default_rng(7)
    S = rng.standard_normal((3, 9))
    S[2, :] = 0.0  # ties: uniform
    for beta in (0.0, 0.37, 12.0, 1e6):
        want = mp.fsum(mp.fsum(p**2 for p in _mp_softmax(row, beta)) for row in S) / 3
        err = _record("cas.universality.participation", "mpmath softmax",
                      "β = 0, 0.37, 12, 1e6; a tied row", participation(S, beta), want)
        assert err < 1e-13


def test_beta50_against_a_30_digit_root():
    rng = np.random.default_rng(11)
    S = rng.standard_normal((4, 50))

    def f(beta):
        return mp.fsum(mp.fsum(p**2 for p in _mp_softmax(row, beta)) for row in S) / 4 - 0.5

    root = mp.findroot(f, (mp.mpf(0.5), mp.mpf(20)), solver="anderson")
    err = _record("cas.universality.beta50", "mpmath root of brute-force participation",
                  "4 × 50 Gaussian scores; level ½", beta50(S), root)
    assert err < 1e-4  # documented: xtol 1e-5 in log β
    assert math.isnan(beta50(np.zeros((2, 5))))  # never crosses ½: nan, as documented


@pytest.mark.parametrize("n, gamma, rho", [(2, 0.0, 0.5), (1000, 2.0, 0.5), (10**6, 40.0, 0.01),
                                           (7, 3.0, 0.99)])
def test_simplex_self_weight_against_brute_force_softmax(n, gamma, rho):
    beta = gamma * math.log(n)
    if n <= 1000:
        want = _mp_softmax([1.0] + [rho] * (n - 1), beta)[0]
    else:
        want = 1 / (1 + (n - 1) * mp.e ** (-mp.mpf(beta) * (1 - mp.mpf(rho))))
    err = _record("cas.simplex_weights.simplex_self_weight",
                  "mpmath softmax of the simplex Gram row", "n = 2 … 1e6, γ = 0 … 40",
                  simplex_self_weight(n=n, gamma=gamma, rho=rho), want)
    assert err < 1e-13


def _simplex_layer_cosine(n, gamma, rho, alpha, q):
    """Post-layer cosine on the simplex from ``M = A + α√q I`` and ``G_Y = (1−ρ)I + ρJ``, both
    of the form ``xI + yJ`` (``J = 11ᵀ``), in mpmath."""
    n, rho, alpha, q = (mp.mpf(v) for v in (n, rho, alpha, q))
    beta = mp.mpf(gamma) * mp.log(n)
    w = 1 / (1 + (n - 1) * mp.e ** (-beta * (1 - rho)))
    b = (1 - w) / (n - 1)
    mx, my = w - b + alpha * mp.sqrt(q), b

    def times(u, v):
        return (u[0] * v[0], u[0] * v[1] + u[1] * v[0] + n * u[1] * v[1])

    x, y = times(times((mx, my), (1 - rho, rho)), (mx, my))  # M G Mᵀ (M symmetric)
    return y / (x + y)


@pytest.mark.parametrize("n, gamma, rho, alpha, q", [
    (2, 0.0, 0.5, 0.0, 1.0), (1000, 2.0, 0.5, 0.0, 1.0), (10**6, 1.5, 0.3, 1.0, 2.0),
    (10**12, 4.0, 0.5, 0.5, 1.0), (50, 0.0, 0.9, 3.0, 0.1)])
def test_simplex_inner_product_against_explicit_matrices(n, gamma, rho, alpha, q):
    want = _simplex_layer_cosine(n, gamma, rho, alpha, q)
    got = simplex_inner_product(n=n, gamma=gamma, rho=rho, alpha=alpha, q=q)
    err = _record("cas.simplex.simplex_inner_product", "mpmath M·G·Mᵀ on the simplex",
                  "n = 2 … 1e12, α = 0 … 3", got, want)
    assert err < 1e-12
    if n <= 50:  # and against actual tokens through numpy: Y = √Gram, one layer
        gram = q * ((1 - rho) * np.eye(n) + rho * np.ones((n, n)))
        vals, vecs = np.linalg.eigh(gram)
        X = vecs * np.sqrt(vals)  # X Xᵀ = Gram
        Y = X / np.linalg.norm(X, axis=1, keepdims=True)
        S = gamma * math.log(n) * (Y @ Y.T)
        A = special.softmax(S, axis=1)
        out = A @ Y + alpha * X
        cos = out[0] @ out[1] / (np.linalg.norm(out[0]) * np.linalg.norm(out[1]))
        assert _record("cas.simplex.simplex_inner_product", "", "", got, cos) < 1e-12


@pytest.mark.parametrize("gamma, rho, alpha, q", [(1.0, 0.5, 0.0, 1.0), (2.0, 0.5, 0.0, 1.0),
                                                  (4.0, 0.5, 0.0, 1.0), (1.0, 0.3, 1.0, 2.0),
                                                  (2.0, 0.3, 1.0, 2.0), (3.0, 0.3, 1.0, 2.0)])
def test_simplex_limit_against_the_cosine_at_n_1e80(gamma, rho, alpha, q):
    """At ``γ/γ_c = γ(1−ρ) ≠ 1`` the finite-n cosine at n = 1e80 sits within n^{−|…|} of the
    limit; at ``γ_c`` the limit has ``w = ½``, reached as ``n → ∞`` exactly."""
    gc = 1 / (1 - rho)
    if math.isclose(gamma, gc):
        big = _simplex_layer_cosine(10**80, gamma, rho, alpha, q)
    else:
        big = _simplex_layer_cosine(mp.mpf(10) ** 300, gamma, rho, alpha, q)
    got = simplex_limit(gamma=gamma, rho=rho, alpha=alpha, q=q)
    err = _record("cas.simplex.simplex_limit", "mpmath cosine at n = 1e300",
                  "γ below, at and above γ_c; α = 0, 1", got, big)
    assert err < 1e-6


@pytest.mark.parametrize("n, rho1, rho2, level", [(2, 0.5, 0.5, 0.5), (1000, -1.0, 0.3, 0.2),
                                                  (10**9, 0.1, 0.9, 0.99)])
def test_near_simplex_window_against_the_bounding_simplices(n, rho1, rho2, level):
    """Each end is the β at which tokens with every cosine equal to ρ₁ (or ρ₂) have self weight
    ``level``: a root of ``1/(1 + (n−1)e^{−β(1−ρ)}) − level``."""
    def root(rho):
        return optimize.brentq(lambda b: 1 / (1 + (n - 1) * math.exp(-b * (1 - rho))) - level,
                               -100.0, 1e4, xtol=1e-14, rtol=1e-15)
    got = np.asarray(near_simplex_window(n, rho1, rho2, level), dtype=float)
    want = np.array([root(rho1), root(rho2)])
    if n == 2 and level == 0.5:  # log(n − 1) + logit ½ = 0: both ends are β = 0
        assert np.all(np.abs(got) < 1e-13) and np.all(np.abs(want) < 1e-13)
        return
    err = _record("cas.transition.near_simplex_window", "brentq on the simplex self weight",
                  "n = 2 … 1e9, ρ₁ = −1 … 0.1", got, want)
    assert err < 1e-10
    with pytest.raises(ValueError, match="level"):
        near_simplex_window(n, rho1, rho2, 1.0)


@pytest.mark.parametrize("beta", [0.0, 2.5, 1e300])
def test_softmax_from_gram_against_scipy(beta):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((6, 4))
    G = X @ X.T
    G[5, :] = G[5, 0]  # a tied row: uniform at any β
    got = softmax_from_gram(G, beta)
    if beta < 1e10:
        want = special.softmax(beta * G, axis=1)
    else:  # one-hot on the row maximum (uniform over ties)
        want = (G == G.max(axis=1, keepdims=True)).astype(float)
        want /= want.sum(axis=1, keepdims=True)
    err = _record("cas.layer.softmax_from_gram", "scipy.special.softmax; one-hot limit",
                  "β = 0, 2.5, 1e300; a tied row", got, want)
    assert err < 1e-14


@pytest.mark.parametrize("scale", [1e-300, 1.0, 1e300])
def test_normalise_rows_and_mean_cosine_against_mpmath(scale):
    rng = np.random.default_rng(5)
    X = rng.standard_normal((7, 3)) * scale
    Y, norms = normalise_rows(X)
    rows = [[mp.mpf(float(v)) for v in r] for r in X]
    want_norm = [mp.sqrt(mp.fsum(v**2 for v in r)) for r in rows]
    want_y = [[v / nn for v in r] for r, nn in zip(rows, want_norm)]
    err = _record("cas.tokens.normalise_rows", "mpmath norms", "rows of 1e-300, 1, 1e300",
                  np.concatenate([Y.ravel(), norms]),
                  [v for r in want_y for v in r] + want_norm)
    assert err < 1e-15
    pairs = [mp.fsum(a * b for a, b in zip(want_y[i], want_y[j]))
             for i in range(7) for j in range(7) if i != j]
    err = _record("cas.tokens.mean_cosine", "mpmath mean over the 42 ordered pairs",
                  "rows of 1e-300, 1, 1e300", mean_cosine(X), mp.fsum(pairs) / len(pairs))
    assert err < 1e-13


# ----------------------------------------------------------------------------- sphere
@pytest.mark.parametrize("k, b", [(0.5, 0.25), (1.0, 0.5), (3.0, 1.5), (50.0, 0.7)])
def test_distance_law_constant_against_the_beta_cdf(k, b):
    """``c = lim P(r ≤ ρ)/ρ^k`` with ``P(r ≤ ρ) = I_{ρ²/4}(k/2, b)`` (mpmath's regularised
    incomplete beta at ρ = 1e-12: the O(ρ²) correction is 1e-24)."""
    rho = mp.mpf("1e-12")
    want = mp.betainc(k / 2, b, 0, rho**2 / 4, regularized=True) / rho**k
    err = _record("sphere.model.DistanceLaw.c", "mpmath incomplete beta at ρ = 1e-12",
                  "k = 0.5 … 50", DistanceLaw(k, b).c, want)
    assert err < 1e-12


def test_order_parameters_against_mpmath_softmax():
    rng = np.random.default_rng(9)
    L = np.vstack([rng.standard_normal(12) * 3, np.zeros(12),
                   np.r_[700.0, -700.0, np.zeros(10)]])  # (3, 12): spread, uniform, extreme
    out = order_parameters(L, share=0.6)
    top, count, ent = [], [], []
    for row in L:
        p = sorted(_mp_softmax(row, 1.0), reverse=True)
        top.append(p[0])
        cum, c = mp.mpf(0), 0
        while cum < mp.mpf("0.6"):
            cum += p[c]
            c += 1
        count.append(c)
        ent.append(-mp.fsum(x * mp.log(x) for x in p if x > 0))
    err = _record("sphere.model.order_parameters", "mpmath softmax, sort, entropy",
                  "3 rows: spread, uniform, ±700 logits",
                  np.concatenate([out["top_mass"], out["share_count"], out["entropy"]]),
                  top + count + ent)
    assert err < 1e-13


@pytest.mark.parametrize("n", [2, 5, 10**12])
def test_top_scores_against_uniform_order_statistics(n):
    """Scores uniform on (0, 1) (``isf(p) = 1 − p``): ``E[1 − s_(i)] = i/(n + 1)``; the Monte
    Carlo mean of 20000 rows within 4 standard errors, for i = 1, 2."""
    rows = 20000
    top = top_scores(lambda p: 1.0 - p, n, 2, rows, np.random.default_rng(17))
    assert top.shape == (rows, min(2, n))
    assert np.all(np.diff(top, axis=1) <= 0)
    for i in range(top.shape[1]):
        gap = 1.0 - top[:, i]
        mean, se = gap.mean(), gap.std(ddof=1) / math.sqrt(rows)
        want = (i + 1) / (n + 1)
        assert abs(mean - want) <= 4 * se, (i, mean, se, want)
        _record("sphere.gaps.top_scores", "uniform order statistics, Monte Carlo ± 4 se",
                "n = 2, 5, 1e12; i = 1, 2", mean, want)


# ----------------------------------------------------------------------------- attention
def _naive_attention(q, k, v, causal, scale):
    """Softmax attention with one loop per query row (float64)."""
    B, H, Tq, D = q.shape
    Tk = k.shape[2]
    out = np.zeros((B, H, Tq, v.shape[-1]))
    lse = np.zeros((B, H, Tq))
    for b in range(B):
        for h in range(H):
            for i in range(Tq):
                s = scale * (k[b, h] @ q[b, h, i])
                if causal:
                    s = np.where(np.arange(Tk) <= i + (Tk - Tq), s, -np.inf)
                lse[b, h, i] = special.logsumexp(s)
                out[b, h, i] = np.exp(s - lse[b, h, i]) @ v[b, h]
    return out, lse


@pytest.mark.parametrize("causal", [True, False])
def test_attention_dense_against_a_loop_over_queries(causal):
    rng = np.random.default_rng(21)
    q, k, v = (rng.standard_normal((1, 2, 9, 4)) for _ in range(3))
    out, lse = attention_dense(q, k, v, causal=causal, return_lse=True)
    want_out, want_lse = _naive_attention(q, k, v, causal, 1 / math.sqrt(4))
    err = _record("attention.core.attention_dense", "a loop over query rows with logsumexp",
                  "9 × 9, causal and not", np.r_[out.ravel(), lse.ravel()],
                  np.r_[want_out.ravel(), want_lse.ravel()])
    assert err < 1e-12


def test_merge_partials_against_attention_over_all_keys():
    rng = np.random.default_rng(22)
    q = rng.standard_normal((1, 1, 3, 4))
    k, v = (rng.standard_normal((1, 1, 10, 4)) for _ in range(2))
    parts = [attention_partial(q, k[:, :, a:b], v[:, :, a:b], q_start=0, kv_start=a,
                               causal=False) for a, b in ((0, 1), (1, 7), (7, 10))]
    out, lse = merge_partials(parts)
    want_out, want_lse = _naive_attention(q, k, v, False, 0.5)
    err = _record("attention.partials.merge_partials", "attention over all keys (loop)",
                  "chunks of 1, 6, 3 keys", np.r_[out.ravel(), lse.ravel()],
                  np.r_[want_out.ravel(), want_lse.ravel()])
    assert err < 1e-12


@pytest.mark.parametrize("fraction", [1.0, 0.5])
def test_rope_against_complex_rotation(fraction):
    rng = np.random.default_rng(23)
    D, base = 8, 10000.0
    x = rng.standard_normal((3, D))
    pos = np.array([0, 17, 10**6])
    got = rope(x, pos, base=base, fraction=fraction)
    half = D // 2
    rotated = round(fraction * half)
    want = x.copy()
    for t, p in enumerate(pos):
        for j in range(half):
            # the highest frequencies (small j) rotate under p-RoPE
            theta = base ** (-2 * j / D) if j < rotated else 0.0
            z = complex(x[t, j], x[t, j + half]) * complex(math.cos(p * theta),
                                                           math.sin(p * theta))
            want[t, j], want[t, j + half] = z.real, z.imag
    err = _record("attention.rotary.rope", "complex multiplication per pair",
                  "positions 0, 17, 1e6; p-RoPE ½", got, want)
    assert err < 1e-9  # position·θ = 1e6 rad: the angle itself carries ~1e-10


@pytest.mark.parametrize("train, inference", [(4096, 2048), (4096, 4096), (4096, 65536)])
def test_ntk_base_against_the_formula(train, inference):
    d, base = 128, 10000.0
    want = base * max(1.0, inference / train) ** (d / (d - 2))
    err = _record("attention.rope_scaling.ntk_base", "formula written out",
                  "L_inf below, at, 16× L_tr", ntk_base(base, d, train, inference), want)
    assert err < 1e-14


def test_scipy_quadrature_route_agrees_with_mpmath():
    """The sweep's own tools agree (so a mismatch above is the engine's): scipy's quad of a
    truncated lognormal moment against mpmath."""
    a, m, x = 0.7, -0.3, 0.0
    num = integrate.quad(lambda u: math.exp(a * u + m) * stats.norm.pdf(u), -np.inf, x)[0]
    want = mp.e ** (m + a**2 / 2) * mp.ncdf(x - a)
    assert abs(num - float(want)) < 1e-12


# ----------------------------------------------------------------------------- defects found
@pytest.mark.parametrize("call, name", [
    (lambda: participation(np.zeros((2, 5)), -1.0), "beta"),  # was 0.2 (β < 0 accepted)
    (lambda: participation(np.array([[1.0, 0.0]]), math.inf), "beta"),  # was nan
    (lambda: participation(np.zeros(5), 1.0), "scores"),  # was numpy's axis error
    (lambda: participation(np.array([[np.nan, 0.0]]), 1.0), "scores"),  # was nan
    (lambda: softmax_from_gram(np.eye(3), -1.0), "beta"),  # was a softmax at −β
    (lambda: softmax_from_gram(np.eye(3), math.nan), "beta"),  # was all nan
    (lambda: softmax_from_gram(np.full((2, 2), np.nan), 1.0), "gram"),  # was all nan
    (lambda: order_parameters(np.array([[np.nan, 0.0]])), "logits"),  # was share_count 1
    (lambda: order_parameters(np.array([[-np.inf, 0.0]])), "logits"),  # was entropy nan
    (lambda: order_parameters(np.zeros(4)), "logits"),  # was numpy's axis error
    (lambda: gauss_legendre_panels([0.0, 1.0], order=2.5), "order"),  # was TypeError
    (lambda: gauss_legendre_panels([0.0, 1.0], order=0), "order"),  # was numpy's "deg"
    (lambda: gauss_legendre_panels([0.0, np.inf]), "edges"),  # was nan nodes
    (lambda: truncated_moments(-1.0, 0.0, 0.0), "a"),  # was moments of a < 0
    (lambda: truncated_moments(1.0, 0.0, -np.inf), "x"),  # was nan
    (lambda: truncated_moments(1.0, 0.0, np.nan), "x"),  # was nan
    (lambda: truncated_moments(1.0, np.nan, 0.0), "m"),  # was nan
    (lambda: truncated_moments(40.0, 0.0, np.inf), "a and m"),  # was inf/nan
    (lambda: DistanceLaw(1e4, 1e4).c, "k and b"),  # was OverflowError
])
def test_bad_input_found_by_the_sweep_is_refused_naming_the_parameter(call, name):
    with pytest.raises(ValueError, match=rf"^{name} must"):
        call()


@pytest.mark.parametrize("n", [1e155, 1e300])
def test_simplex_beta50_beyond_n_squared_overflow(n):
    """``n(n − 3)/2`` overflows float64 beyond n ≈ 1.9e154 (it returned nan there): against the
    closed form at 40 digits."""
    with mp.workdps(40):
        nm = mp.mpf(n)
        w = (1 + mp.sqrt(1 + nm * (nm - 3) / 2)) / nm
        want = (mp.log(nm - 1) + mp.log(w / (1 - w))) / (1 - mp.mpf(0.5))
    got = simplex_beta50(n, 0.5)
    assert _record("cas.universality.simplex_beta50", "", "n = 1e155, 1e300", got, want) < 1e-13


def test_distance_law_critical_beta_where_c_is_beyond_float64():
    """k = b = 10⁴: c = e^{2611} is not a float64 (``critical_beta`` raised OverflowError), β*_n
    is 3.87: against mpmath's log B(k/2, b)."""
    k, b, n = 1e4, 1e4, 1e300
    with mp.workdps(40):
        a = mp.mpf(k) / 2
        log_c = -a * mp.log(4) - mp.log(a) - mp.log(mp.beta(a, b))
        want = mp.e ** (2 / mp.mpf(k) * (log_c + a * mp.log(2) + mp.log(n)))
    law = DistanceLaw(k, b)
    assert _record("sphere.model.DistanceLaw.critical_beta", "mpmath log B at 40 digits",
                   "k = b = 1e4, n = 1e300", law.critical_beta(n), want) < 1e-12
    assert law.log_c == pytest.approx(float(log_c), rel=1e-13)


@pytest.fixture(scope="module", autouse=True)
def _sweep_table():
    """With ``SIA_SWEEP_TABLE=path`` set, write the sweep's table there after the module."""
    yield
    path = os.environ.get("SIA_SWEEP_TABLE")
    if path:
        with open(path, "w") as f:
            f.write("| function | independent method | points | max rel. error |\n"
                    "|---|---|---|---|\n")
            f.writelines(f"| {name} | {r['method']} | {r['points']} | {r['max_rel']:.1e} |\n"
                         for name, r in RESULTS.items())


@pytest.mark.parametrize("k, b", [(2000.0, 1.0), (1e4, 1.0)])
def test_distance_law_critical_beta_where_c_underflows_or_two_to_the_k_overflows(k, b):
    """k = 2000, b = 1: c = e^{−1393} underflows to 0 (``critical_beta`` raised a math domain
    error); k = 10⁴: 2^{k/2} overflows (OverflowError). β*_n is finite (about 0.5 at n = 10):
    against mpmath's log B(k/2, b)."""
    n = 10.0
    with mp.workdps(40):
        a = mp.mpf(k) / 2
        log_c = -a * mp.log(4) - mp.log(a) - mp.log(mp.beta(a, b))
        want = mp.e ** (2 / mp.mpf(k) * (log_c + a * mp.log(2) + mp.log(n)))
    assert float(abs(DistanceLaw(k, b).critical_beta(n) / want - 1)) < 1e-12
