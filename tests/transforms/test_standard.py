"""Transforms: coefficients vs score_mod, paper formulas, validation."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sia_theory.transforms.standard import ALiBi, LogN, NoScale, ScaleInvariant

TRANSFORMS = [NoScale(), LogN(0.4), ScaleInvariant(10.0), ScaleInvariant(0.01, 2.0, 5.0),
              ALiBi(0.25)]


@pytest.mark.parametrize("transform", TRANSFORMS, ids=repr)
def test_score_mod_equals_coefficients_on_causal_grid(transform):
    T = 37
    q_idx, kv_idx = np.arange(T)[:, None], np.arange(T)[None, :]
    scores = np.random.default_rng(0).standard_normal((T, T))
    modded = transform.score_mod(scores, 0, 0, q_idx, kv_idx)
    for i in range(T):
        t = i - np.arange(i + 1)
        a, m = transform.coefficients(t, i + 1)
        np.testing.assert_array_equal(modded[i, : i + 1], a * scores[i, : i + 1] + m)


def test_logn_multiplies_by_s_log_n_and_needs_n():
    a, m = LogN(0.4).coefficients(np.arange(5), 1000)
    np.testing.assert_allclose(a, 0.4 * math.log(1000), rtol=1e-15)
    assert not m.any()
    with pytest.raises(ValueError, match="n_ctx"):
        LogN().coefficients(np.arange(3))


def test_scale_invariant_reduces_to_identity_at_t0_and_grows_logarithmically():
    a, m = ScaleInvariant(10.0).coefficients(np.array([0.0, 1e8, 1e9]))
    assert a[0] == pytest.approx(1.0, abs=1e-15) and m[0] == pytest.approx(0.0, abs=1e-15)
    # Per decade of t, a^2 grows by 2 log 10 and m falls by 2 log 10 once t >> tau.
    assert a[2] ** 2 - a[1] ** 2 == pytest.approx(2 * math.log(10), rel=1e-6)
    assert m[2] - m[1] == pytest.approx(-2 * math.log(10), rel=1e-6)


def test_alibi_standard_slopes_and_per_head_bias():
    alibi = ALiBi.standard(8)
    np.testing.assert_allclose(alibi.slopes, [2.0 ** (-(h + 1)) for h in range(8)])
    h = np.arange(8)[:, None, None]
    out = alibi.score_mod(np.zeros((8, 4, 4)), 0, h, np.arange(4)[:, None], np.arange(4)[None])
    np.testing.assert_allclose(out[3, 3, 0], -3 * 2.0**-4)
    with pytest.raises(ValueError, match="h is required"):
        alibi.coefficients(np.arange(3))


@pytest.mark.parametrize(("factory", "name"), [
    (lambda: ScaleInvariant(tau=0), "tau"), (lambda: ScaleInvariant(tau=-1), "tau"),
    (lambda: ScaleInvariant(tau=float("nan")), "tau"),
    (lambda: ScaleInvariant(tau=math.inf), "tau"),
    (lambda: ScaleInvariant(alpha=3.0, beta=1.0), "beta"), (lambda: LogN(0), "s"),
    (lambda: LogN(-1), "s"), (lambda: ALiBi(-0.1), "slope"), (lambda: ALiBi.standard(0), "n_heads"),
])
def test_bad_parameters_raise_value_error_naming_them(factory, name):
    with pytest.raises(ValueError, match=rf"^{name} must"):
        factory()


@settings(max_examples=60, deadline=None)
@given(tau=st.floats(1e-3, 1e3), t=st.floats(0, 1e9))
def test_scale_invariant_coefficients_satisfy_mean_plus_variance_identity(tau, t):
    """m_t + a_t^2 = beta/alpha for every t (SI eq. 33), whatever tau."""
    s = ScaleInvariant(tau)
    a, m = s.coefficients(np.array([t]))
    assert m[0] + a[0] ** 2 == pytest.approx(s.beta / s.alpha, abs=1e-9 * max(1, a[0] ** 2))


def test_non_finite_distances_and_context_lengths_rejected():
    with pytest.raises(ValueError, match="^t must"):
        ScaleInvariant().coefficients([np.nan])
    with pytest.raises(ValueError, match="^n_ctx must"):
        LogN().coefficients([0], np.nan)
    with pytest.raises(ValueError, match="^h must be an integer"):
        ALiBi((1.0, 2.0)).coefficients([1], h=0.5)
