"""sia_theory.gaussian.tails, exercised by its own name: truncated lognormal moments against the
untruncated closed forms and scipy quadrature, exact tail draws, and distance bins."""

import math

import numpy as np
import pytest
from scipy import integrate, special

from sia_theory import NoScale, ScaleInvariant
from sia_theory.gaussian.tails import distance_bins, tail_normals, truncated_moments


def test_untruncated_moments_are_the_lognormal_ones():
    """x = +inf: E[W] = e^{m+a²/2}, E[LW] = (m + a²) E[W], Var W = e^{2m+a²}(e^{a²} − 1)."""
    a, m = 0.8, -0.3
    tm = truncated_moments(a, m, np.inf)
    w = math.exp(m + a * a / 2)
    assert float(tm.w) == pytest.approx(w, rel=1e-13)
    assert float(tm.lw) == pytest.approx((m + a * a) * w, rel=1e-12)
    assert float(tm.var_w) == pytest.approx(math.exp(2 * m + a * a) * math.expm1(a * a),
                                            rel=1e-12)


def test_truncated_moments_against_quadrature():
    """Given X < x = 0.5: E[W], E[LW], Var(W), Cov(W, LW), Var(LW) by quad of φ(y)/Φ(x)."""
    a, m, x = 1.3, 0.4, 0.5
    tm = truncated_moments(a, m, x)
    px = special.ndtr(x)

    def moment(f):
        return integrate.quad(lambda y: f(a * y + m) * math.exp(-y * y / 2)
                              / math.sqrt(2 * math.pi), -40, x, epsrel=1e-12)[0] / px

    w = moment(math.exp)
    lw = moment(lambda s: s * math.exp(s))
    assert (float(tm.w), float(tm.lw)) == pytest.approx((w, lw), rel=1e-9)
    assert float(tm.var_w) == pytest.approx(moment(lambda s: math.exp(2 * s)) - w * w, rel=1e-8)
    assert float(tm.cov) == pytest.approx(moment(lambda s: s * math.exp(2 * s)) - w * lw,
                                          rel=1e-8)
    assert float(tm.var_lw) == pytest.approx(moment(lambda s: (s * math.exp(s)) ** 2) - lw * lw,
                                             rel=1e-8)


def test_tail_normals_are_above_x_with_the_inverse_mills_mean():
    """E[X | X > x] = φ(x)/Φ̄(x); 20000 seeded uniforms, within 4 standard errors (x = 5, 30)."""
    u = 1.0 - np.random.default_rng(4).random(20_000)
    for x in (5.0, 30.0):
        draws = tail_normals(special.log_ndtr(-x), u)
        assert np.all(draws > x)
        mean = math.exp(-x * x / 2 - special.log_ndtr(-x)) / math.sqrt(2 * math.pi)
        assert abs(draws.mean() - mean) < 4 * draws.std(ddof=1) / math.sqrt(u.size)


def test_distance_bins_cover_the_range():
    bins = distance_bins(ScaleInvariant(10.0), 100.0, 1e12)
    assert math.fsum(bins.count) == pytest.approx(1e12 - 100)
    assert bins.lo[0] == 100 and bins.hi[-1] == 1e12
    assert np.all(bins.hi[:-1] == bins.lo[1:])
    one = distance_bins(NoScale(), 0.0, 1e6)  # constant coefficients: few, wide bins
    assert one.count.size < 100
    with pytest.raises(ValueError, match="tol"):
        distance_bins(NoScale(), 0.0, 10.0, tol=0.0)
