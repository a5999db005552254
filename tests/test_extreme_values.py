"""Valid but extreme input gives the finite answer (issue 8, §1): each value is held against a
log-space oracle written here, independently of the code under test (mpmath at high precision
from the paper's formulas, scipy's ``logsumexp``/``entr``)."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy.special import entr, logsumexp

import sia_theory as sia
from sia_theory.si import montecarlo

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
