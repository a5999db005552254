"""Valid but extreme input gives the finite answer: each value is held against a
log-space oracle written here, independently of the code under test (mpmath at high precision
from the paper's formulas, scipy's ``logsumexp``/``entr``)."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy.special import entr, logsumexp

import sia_theory as sia
from sia_theory.gaussian import montecarlo

FAST = settings(max_examples=40, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow])


def _si_log_weights_mp(t1, t2, tau, alpha, beta):
    """SI eq. 16 written out in mpmath (80 digits): ``log E[e^{L_t}] = m_t + a_t²/2``."""
    mpmath.mp.dps = 80
    tau, alpha, beta = mpmath.mpf(tau), mpmath.mpf(alpha), mpmath.mpf(beta)
    out = []
    for t in range(t1, t2):
        a2 = 2 * (mpmath.log(t / tau + 1) - mpmath.log(alpha) + beta / alpha)
        m = -a2 + beta / alpha
        out.append((m + a2 / 2, m + a2))
    return out


@FAST
@given(log_alpha=st.floats(-40, 5), gap=st.floats(-3, 3), tau=st.floats(0.5, 1e3),
       t1=st.integers(0, 50), width=st.integers(1, 50))
def test_si_closed_forms_match_high_precision_oracle_for_extreme_alpha(log_alpha, gap, tau, t1,
                                                                       width):
    """α from 1e-40 to 1e5: ``a_t² ≈ 2β/α`` and ``m_t ≈ −β/α`` nearly cancel (it gave inf)."""
    alpha = 10.0**log_alpha
    beta = max(alpha * math.log(alpha), 0.0) + 10.0**gap
    si = sia.ScaleInvariant(tau, alpha=alpha, beta=beta)
    terms = _si_log_weights_mp(t1, t1 + width, tau, alpha, beta)
    log_z = mpmath.log(mpmath.fsum(mpmath.exp(w) for w, _ in terms))
    negentropy = mpmath.fsum(mpmath.exp(w) * tilt for w, tilt in terms)
    h = log_z - negentropy / mpmath.exp(log_z)
    assert sia.expected_log_total_attention(si, t1, t1 + width) == pytest.approx(
        float(log_z), rel=1e-12, abs=1e-12)
    assert sia.expected_total_attention(si, t1, t1 + width) == pytest.approx(
        float(mpmath.exp(log_z)), rel=1e-12)
    assert sia.expected_negentropy(si, t1, t1 + width) == pytest.approx(float(negentropy),
                                                                        rel=1e-11)
    assert sia.plug_in_entropy(si, t1, t1 + width) == pytest.approx(float(h), rel=1e-10,
                                                                    abs=1e-10)


def test_si_total_attention_with_tiny_alpha_is_the_exact_digamma_sum():
    """The issue's example (it was inf): ``α Σ 1/(t/τ+1)`` over ``t < 10``."""
    si = sia.ScaleInvariant(10, alpha=1e-20, beta=1.0)
    exact = 1e-20 * sum(1 / (t / 10 + 1) for t in range(10))
    assert sia.expected_total_attention(si, 0, 10) == pytest.approx(exact, rel=1e-13)
    assert sia.expected_total_attention(si, 0, 10) == pytest.approx(
        sia.scale_invariant_total_attention(si, 0, 10), rel=1e-13)


@FAST
@given(s=st.floats(0.05, 30.0), n=st.integers(2, 10**5), t1=st.integers(0, 10))
def test_logn_plug_in_entropy_is_finite_where_weights_overflow(s, n, t1):
    """LogN: every weight is ``e^{a²/2}`` with ``a = s log n``, so ``log E[Z] = a²/2 +
    log(t2 − t1)`` and ``H_plug-in = log(t2 − t1) − a²/2`` (it was NaN once ``a²/2 > 709``)."""
    t2 = min(n, t1 + 200)
    if t1 >= t2:
        t1 = 0
    a2 = (s * math.log(n)) ** 2
    transform = sia.LogN(s)
    log_z = sia.expected_log_total_attention(transform, t1, t2, n_ctx=n)
    assert log_z == pytest.approx(a2 / 2 + math.log(t2 - t1), rel=1e-12)
    assert sia.plug_in_entropy(transform, t1, t2, n_ctx=n) == pytest.approx(
        math.log(t2 - t1) - a2 / 2, rel=1e-10, abs=1e-9)
    if log_z > math.log(np.finfo(float).max):
        with pytest.raises(ValueError, match="overflows float64"):
            sia.expected_total_attention(transform, t1, t2, n_ctx=n)
        with pytest.raises(ValueError, match="overflows float64"):
            sia.expected_negentropy(transform, t1, t2, n_ctx=n)
    else:
        assert sia.expected_total_attention(transform, t1, t2, n_ctx=n) == pytest.approx(
            math.exp(log_z), rel=1e-10)


def test_logn_plug_in_entropy_issue_example():
    """``plug_in_entropy(LogN(4.0), 0, 1e5, n_ctx=1e5)`` was NaN; the answer is
    ``log(1e5) − (4 log 1e5)²/2 ≈ −1048.87``."""
    value = sia.plug_in_entropy(sia.LogN(4.0), 0, 10**5, n_ctx=10**5)
    assert value == pytest.approx(math.log(1e5) - (4 * math.log(1e5)) ** 2 / 2, rel=1e-12)
    assert value == pytest.approx(-1048.8667, abs=1e-4)


def _shifted(row):
    """``e^{L − max L}`` (``L − max`` is −inf for logits spanning ±1e308: weight 0)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.nan_to_num(np.exp(row - row.max()), nan=0.0)


def _oracle(logits, t1, t2):
    """``(H, log Z, mass)`` of ``[t1, t2)`` for one row, by scipy in log space; ``mass`` as a
    ratio of sums shifted by the row's maximum (no ``log Z`` difference, which would lose
    ``ulp(log Z)`` of relative precision)."""
    row = logits[t1:t2]
    with np.errstate(over="ignore"):
        log_z = logsumexp(row)
    p = _shifted(row)
    weights = _shifted(logits)
    return (float(np.sum(entr(p / p.sum()))), float(log_z),
            float(weights[t1:t2].sum() / weights.sum()))


_huge_floats = st.floats(allow_nan=False, allow_infinity=False, width=64)


@FAST
@given(logits=hnp.arrays(np.float64, st.integers(1, 40), elements=st.one_of(
    _huge_floats, st.floats(-50, 50), st.sampled_from([1e308, -1e308, 1.7e308, -1.7e308]))),
       data=st.data())
def test_range_statistics_finite_for_logits_spanning_the_float_range(logits, data):
    """``H``, ``log Z`` and ``mass`` are finite and match scipy for any finite logits (``H`` was
    inf for logits ±1e308)."""
    n = logits.size
    t1 = data.draw(st.integers(0, n - 1))
    t2 = data.draw(st.integers(t1 + 1, n))
    stats = sia.range_statistics(logits[None, :], [(t1, t2)])
    h, log_z, mass = _oracle(logits, t1, t2)
    assert np.isfinite(stats.H[0, 0]) and np.isfinite(stats.log_Z[0, 0])
    assert np.isfinite(stats.mass[0, 0])
    assert stats.H[0, 0] == pytest.approx(h, abs=1e-9)
    assert stats.log_Z[0, 0] == pytest.approx(log_z, rel=1e-12, abs=1e-9)
    assert stats.mass[0, 0] == pytest.approx(mass, rel=1e-9, abs=1e-12)


def test_range_statistics_issue_example():
    stats = sia.range_statistics(np.array([[1e308, -1e308, 0.0], [-1e308, 1e308, 1e308]]),
                                 [(0, 3)])
    assert stats.H[:, 0] == pytest.approx([0.0, math.log(2)], abs=1e-12)
    assert stats.log_Z[:, 0] == pytest.approx([1e308, 1e308], rel=1e-15)


@pytest.mark.parametrize("alpha, beta", [(1e-20, 1.0), (1e-8, 5.0)])
def test_simulation_with_huge_logits_matches_dense_log_space_oracle(alpha, beta):
    """Logit standard deviations ~1e10: the kernel's per-sample ``H`` and ``log Z`` equal the
    scipy oracle on the same logits (the reference builds them from the same streams)."""
    si = sia.ScaleInvariant(10, alpha=alpha, beta=beta)
    ranges = [(0, 7), (5, 40), (0, 40)]
    stats = sia.simulate_gaussian_range_statistics(si, 40, ranges, 6, seed=3)
    logits = montecarlo.gaussian_logits_reference(si, 40, 6, seed=3)  # (6, 40)
    for i in range(6):
        for r, (t1, t2) in enumerate(ranges):
            h, log_z, mass = _oracle(logits[i], t1, t2)
            assert stats.H[i, r] == pytest.approx(h, abs=1e-9)
            assert stats.log_Z[i, r] == pytest.approx(log_z, rel=1e-12)
            assert stats.mass[i, r] == pytest.approx(mass, rel=1e-9, abs=1e-12)


def test_closed_form_sums_stream_over_long_ranges():
    """A range of 3·2^20 + 2 distances is summed in chunks (flat memory; it needed ~300 MB and
    t2 = 1e9 raised MemoryError): equal to the digamma route, and for LogN to the formula."""
    si = sia.ScaleInvariant(10.0)
    t1, t2 = 5, 3 * 2**20 + 7
    assert sia.expected_total_attention(si, t1, t2) == pytest.approx(
        sia.scale_invariant_total_attention(si, t1, t2), rel=1e-12)
    assert sia.expected_negentropy(si, t1, t2) == pytest.approx(
        sia.scale_invariant_negentropy(si, t1, t2), rel=1e-12)
    n = t2
    a2 = (4.0 * math.log(n)) ** 2
    assert sia.plug_in_entropy(sia.LogN(4.0), t1, t2, n_ctx=n) == pytest.approx(
        math.log(t2 - t1) - a2 / 2, rel=1e-12)
    with pytest.raises(ValueError, match="t2 - t1 must be at most"):
        sia.expected_total_attention(si, 0, 10**12)


# --- CAS (second pass) ------------------------------------------------------------------------


def _simplex_row_mp(n, gamma, rho):
    """The simplex attention row ``(w, u, …, u)`` in mpmath (60 digits, no exponent range
    limit), straight from the softmax of the self score ``β`` against ``n − 1`` scores ``βρ``."""
    mpmath.mp.dps = 60
    n, gamma, rho = mpmath.mpf(n), mpmath.mpf(gamma), mpmath.mpf(rho)
    beta = gamma * mpmath.log(n)
    odds = (n - 1) * mpmath.exp(beta * (rho - 1))
    return n, 1 / (1 + odds), odds / (1 + odds) / (n - 1)  # 1 − w without cancellation


def _sparsity_mp(n, gamma, rho):
    n, w, u = _simplex_row_mp(n, gamma, rho)
    entropy = -(w * mpmath.log(w) + (n - 1) * u * mpmath.log(u))
    return float(1 / (w**2 + (n - 1) * u**2)), float(mpmath.exp(entropy))


def _cosine_mp(n, gamma, rho, alpha, q):
    """``⟨x_i', x_k'⟩/|x_i'|²`` with ``x_i' = (w + α√q) y_i + u y_k + u Σ_{j∉{i,k}} y_j``, from the
    Gram matrix of ``(y_i, y_k, r)`` (CAS §2)."""
    n, w, u = _simplex_row_mp(n, gamma, rho)
    rho, m = mpmath.mpf(rho), n - 2
    gram = mpmath.matrix([[1, rho, m * rho], [rho, 1, m * rho],
                          [m * rho, m * rho, m + m * (m - 1) * rho]])
    a = w + mpmath.mpf(alpha) * mpmath.sqrt(q)
    xi, xk = mpmath.matrix([a, u, u]), mpmath.matrix([u, a, u])
    return float((xi.T * gram * xk)[0] / (xi.T * gram * xi)[0])


CAS_FAST = settings(max_examples=30, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


def test_simplex_sparsity_issue_example():
    """``simplex_sparsity(n=1000, γ=20, ρ=0.5)`` was ``(1.0, nan)`` with a RuntimeWarning."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pr, eff = sia.simplex_sparsity(n=1000, gamma=20.0, rho=0.5)
    assert (pr, eff) == pytest.approx(_sparsity_mp(1000, 20.0, 0.5), rel=1e-12)


@CAS_FAST
@given(log10_n=st.floats(0.31, 300.0), gamma=st.floats(0.0, 60.0), rho=st.floats(1e-6, 0.999))
@example(log10_n=15.5, gamma=0.0, rho=0.5)  # 10^15.5 is not a whole float: n must be rounded
def test_simplex_sparsity_matches_mpmath_from_n_2_to_1e300(log10_n, gamma, rho):
    n = round(10.0**log10_n) if log10_n < 16 else 10.0**log10_n  # floats < 2^53 may be fractional
    pr, eff = sia.simplex_sparsity(n=n, gamma=gamma, rho=rho)
    pr_mp, eff_mp = _sparsity_mp(n, gamma, rho)
    assert np.isfinite(pr) and np.isfinite(eff)
    assert pr == pytest.approx(pr_mp, rel=1e-9)
    assert eff == pytest.approx(eff_mp, rel=1e-9)


@CAS_FAST
@given(log10_n=st.floats(0.31, 300.0), gamma=st.floats(0.0, 60.0), rho=st.floats(1e-6, 0.999),
       log10_res=st.one_of(st.just(None), st.floats(-20.0, 150.0)))
def test_simplex_inner_product_matches_mpmath_at_huge_n_and_residual(log10_n, gamma, rho,
                                                                     log10_res):
    """The cosine was NaN at ``n = 1e300`` (``n²`` overflowed) and raised ``OverflowError`` for
    ``α = 1e300``; the residual ``α√q`` is spread over ``α`` and ``q``."""
    n = round(10.0**log10_n) if log10_n < 16 else 10.0**log10_n  # floats < 2^53 may be fractional
    alpha, q = (0.0, 1.0) if log10_res is None else (10.0**log10_res, 10.0**(log10_res / 2))
    got = sia.simplex_inner_product(n=n, gamma=gamma, rho=rho, alpha=alpha, q=q)
    assert got == pytest.approx(_cosine_mp(n, gamma, rho, alpha, q), rel=1e-9, abs=1e-300)


def test_simplex_limits_at_huge_n_and_residual():
    """The finite-``n`` cosine tends to the phase limits (CAS Theorem 2.1: ``1, 4ρ/(1+3ρ), ρ``)
    at ``n = 1e300``; a residual beyond the float range leaves ``ρ`` (every token keeps itself)."""
    for gamma, limit in [(1.0, 1.0), (2.0, 0.8), (3.0, 0.5)]:
        assert sia.simplex_inner_product(n=1e300, gamma=gamma, rho=0.5) == pytest.approx(
            limit, abs=1e-12)
        assert sia.simplex_limit(gamma=gamma, rho=0.5) == pytest.approx(limit, rel=1e-14)
    assert sia.simplex_limit(gamma=2.0, rho=0.5, alpha=1e200, q=1e300) == pytest.approx(0.5)
    assert sia.simplex_inner_product(n=1000, gamma=2.0, rho=0.5, alpha=1e300) == pytest.approx(
        0.5, rel=1e-12)


def _eta_mp(n, d, gamma, rho, alpha, q):
    """Simplex ``η`` from the sympy expression evaluated in mpmath (the log-space, bounded-variable
    route of the library against the plain expression at 60 digits)."""
    import sympy as sp

    from sia_theory.symbolic import cas

    _, w, _ = _simplex_row_mp(n, gamma, rho)
    fn = sp.lambdify((cas.n, cas.d, cas.w, cas.beta, cas.rho, cas.alpha, cas.q),
                     cas.simplex_eta_in_w(), "mpmath")
    return float(fn(mpmath.mpf(n), mpmath.mpf(d), w, mpmath.mpf(gamma) * mpmath.log(n),
                    mpmath.mpf(rho), mpmath.mpf(alpha), mpmath.mpf(q)))


@pytest.mark.parametrize("n, d, gamma, rho, alpha, q, rel", [
    (1e300, 64, 2.0, 0.5, 0.0, 1.0, 1e-9),      # critical at n = 1e300 (was NaN)
    (1e300, 1e300, 2.0, 0.5, 0.0, 1.0, 1e-9),   # and d = 1e300 (was NaN)
    (1e300, 64, 1.5, 0.5, 0.3, 2.0, 1e-9),      # subcritical with residual
    (1000, 64, 2.0, 0.5, 1.0, 1e300, 1e-9),     # q = 1e300 (was OverflowError)
    (1000, 64, 0.0, 0.5, 0.0, 1.0, 1e-9),       # γ = 0: uniform attention
    (10**6, 16, 3.0, 1e-12, 0.0, 1.0, 1e-9),    # ρ near 0
    # ρ near 1: differences of O(1) moments lose about 1e-16/(1 − ρ) of relative precision
    (10**6, 16, 3.0, 1 - 1e-9, 0.0, 1.0, 1e-6),
])
def test_simplex_eta_matches_mpmath_on_extreme_valid_input(n, d, gamma, rho, alpha, q, rel):
    got = sia.simplex_eta(n=n, d=d, gamma=gamma, rho=rho, alpha=alpha, q=q)
    assert np.isfinite(got)
    assert got == pytest.approx(_eta_mp(n, d, gamma, rho, alpha, q), rel=rel, abs=1e-300)


@pytest.mark.parametrize("gamma", [1e3, 1e300])
def test_simplex_eta_with_huge_beta_is_the_one_hot_value(gamma):
    """``β = γ log n`` up to 7e300 (it was NaN from ``β²·0``): with ``w = 1`` only the
    key/value self term is left, ``η = (1 − 1/d)/q`` exactly (each token's Jacobian is its own
    projection ``P_i``)."""
    assert sia.simplex_eta(n=1000, d=64, gamma=gamma, rho=0.5, q=2.0) == pytest.approx(
        (1 - 1 / 64) / 2.0, rel=1e-14)


def test_simplex_self_weight_extremes():
    assert sia.simplex_self_weight(n=1000, gamma=0.0, rho=0.5) == pytest.approx(1e-3, rel=1e-14)
    assert sia.simplex_self_weight(n=1e300, gamma=2.0, rho=0.5) == pytest.approx(0.5, rel=1e-14)
    assert sia.simplex_self_weight(n=1e300, gamma=1.0, rho=0.5) == pytest.approx(
        float(_simplex_row_mp(1e300, 1.0, 0.5)[1]), rel=1e-12)


def _tokens(seed, n=7, d=5):
    from sia_theory.cas import tokens

    return tokens.sample_tokens(n=n, d=d, rho=0.4, rng=tokens.token_rng(seed, "test.extreme"))


@CAS_FAST
@given(seed=st.integers(0, 2**32), c=st.sampled_from([1e-300, 1e-200, 1e200, 1e300]),
       beta=st.floats(0.0, 50.0), alpha=st.sampled_from([0.0, 0.5]))
def test_attention_step_is_scale_invariant_in_x(seed, c, beta, alpha):
    """``attention_step(X·1e200)`` returned zeros and ``X·1e-200`` reported a zero row; the layer
    sees directions only, so ``attention_step(cX) = attention_step(X)`` at ``α = 0`` and
    ``attention_step(X; α=0) + αcX`` with a residual."""
    from sia_theory.cas.dynamics import attention_step

    X = _tokens(seed)
    base = attention_step(X, beta=beta)
    got = attention_step(c * X, beta=beta, alpha=alpha)
    expected = base + alpha * (c * X)
    if alpha and c > 1:  # the residual dominates: compare relative to it
        assert np.allclose(got / c, expected / c, rtol=1e-13, atol=0)
    else:
        assert np.allclose(got, expected, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("beta", [1e6, 1e100, 1.7e308])
def test_attention_step_with_huge_beta_is_the_one_hot_limit(beta):
    """Distinct tokens: as ``β → ∞`` each token attends only to itself, so ``X' = Y``."""
    from sia_theory.cas.dynamics import attention_step
    from sia_theory.cas.tokens import normalise_rows

    X = _tokens(3)
    out, A = attention_step(X, beta=beta, return_attention=True)
    assert np.all(np.isfinite(out)) and np.all(np.isfinite(A))
    assert np.allclose(A, np.eye(X.shape[0]), atol=1e-300)
    assert np.allclose(out, normalise_rows(X)[0], rtol=1e-14, atol=1e-15)


def test_token_step_with_huge_gamma_is_finite_one_hot():
    from sia_theory.cas.dynamics import simulate_token_step

    frame = simulate_token_step(n=8, d=8, rho=0.5, gamma=[1e300, 1.7e308], seed=0, samples=2)
    assert np.all(np.isfinite(frame.select_dtypes("number").to_numpy()))
    assert frame["self_weight_mean"].tolist() == [1.0, 1.0]
    assert frame["entropy_mean"].tolist() == [0.0, 0.0]
    assert np.allclose(frame["cos_after_mean"], frame["cos_before_mean"], rtol=1e-13)


@pytest.mark.parametrize("c", [1e-100, 1e100, 1e150])
def test_jacobian_eta_scales_as_inverse_square_norm(c):
    """``η(cX) = η(X)/c²`` (the layer is homogeneous of degree 0); the dense complex-step
    Jacobian at ``X·1e-100`` returned ``η = 0`` (its step was not small against ``X``)."""
    from sia_theory.cas.jacobian import dense_jacobian, eta_from_jacobian, jacobian_eta

    X = _tokens(5, n=5, d=3)
    eta = jacobian_eta(X, beta=3.0)
    assert jacobian_eta(c * X, beta=3.0) * c**2 == pytest.approx(eta, rel=1e-12)
    for method in ("complex_step", "blocks"):
        dense = eta_from_jacobian(dense_jacobian(c * X, beta=3.0, method=method), 5, 3)
        assert dense * c**2 == pytest.approx(eta, rel=1e-11)
