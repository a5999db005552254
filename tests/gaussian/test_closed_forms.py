"""Closed forms for Gaussian logits: two independent routes must agree."""

import math

import pytest

from sia_theory import LogN, NoScale, ScaleInvariant
from sia_theory.gaussian.closed_forms import (
    expected_negentropy,
    expected_total_attention,
    plug_in_entropy,
    scale_invariant_limits,
    scale_invariant_negentropy,
    scale_invariant_total_attention,
)


@pytest.mark.parametrize("tau", [0.01, 1.0, 10.0, 100.0])
@pytest.mark.parametrize(("t1", "t2"), [(0, 1), (10, 100), (1000, 5000), (100_000, 1_000_000)])
def test_total_attention_sum_of_moments_matches_digamma_form(tau, t1, t2):
    s = ScaleInvariant(tau)
    assert expected_total_attention(s, t1, t2) == pytest.approx(
        scale_invariant_total_attention(s, t1, t2), rel=1e-10)
    assert expected_negentropy(s, t1, t2) == pytest.approx(
        scale_invariant_negentropy(s, t1, t2), rel=1e-10)


@pytest.mark.parametrize("delta", [2, 5, 10])
def test_range_totals_approach_alpha_tau_log_delta(delta):
    s = ScaleInvariant(10.0)
    limit_z, limit_n = scale_invariant_limits(s, delta)
    assert limit_z == pytest.approx(s.alpha * s.tau * math.log(delta), rel=1e-14)
    errors = [abs(scale_invariant_total_attention(s, t, t * delta) / limit_z - 1)
              for t in (10**3, 10**5, 10**7)]
    # The approach is O(1/t): each factor 100 in t shrinks the error by about 100.
    assert errors[0] > errors[1] > errors[2] and errors[2] < 1e-5
    assert errors[0] / errors[1] == pytest.approx(100, rel=0.1)


def test_no_scale_moments_and_plug_in_entropy():
    assert expected_total_attention(NoScale(), 5, 25) == pytest.approx(20 * math.exp(0.5))
    assert expected_negentropy(NoScale(), 5, 25) == pytest.approx(20 * math.exp(0.5))
    assert plug_in_entropy(NoScale(), 100, 1000) == pytest.approx(math.log(900) - 0.5)


def test_logn_closed_form_uses_context_length():
    s, n = 0.4, 4096
    a = s * math.log(n)
    assert expected_total_attention(LogN(s), 0, 100, n) == pytest.approx(100 * math.exp(a * a / 2))
    with pytest.raises(ValueError, match="n_ctx"):
        expected_total_attention(LogN(s), 0, 100)


@pytest.mark.parametrize(("args", "name"), [((5, 5), "t2"), ((-1, 5), "t1"), ((0, 11, 10), "t2"),
                                            ((0.5, 3), "t1"), ((0, 3, 0), "n_ctx")])
def test_bad_ranges_raise_value_error_naming_them(args, name):
    with pytest.raises(ValueError, match=rf"^{name} must"):
        expected_total_attention(NoScale(), *args)


def test_scale_invariant_only_routes_reject_other_transforms():
    with pytest.raises(ValueError, match="^transform must"):
        scale_invariant_total_attention(NoScale(), 0, 10)
    with pytest.raises(ValueError, match="^delta must"):
        scale_invariant_limits(ScaleInvariant(), 1)


def test_power_law_routes_accept_any_transform_declaring_it():
    """The exact digamma routes read the declared ``power_law``, not the class: a user
    transform wrapping ScaleInvariant's coefficients and declaring its (alpha, beta, tau) is
    accepted, and the digamma sums agree with its summed lognormal moments."""
    from sia_theory import Transform

    si = ScaleInvariant(3.0, alpha=2.0, beta=3.0)

    class Wrapped(Transform):
        depends_on = frozenset({"distance"})
        power_law = (2.0, 3.0, 3.0)

        def affine(self, t, n, h):
            return si.coefficients(t)

    for t1, t2 in [(0, 7), (50, 4000)]:
        assert scale_invariant_total_attention(Wrapped(), t1, t2) == pytest.approx(
            expected_total_attention(Wrapped(), t1, t2), rel=1e-10)
        assert scale_invariant_negentropy(Wrapped(), t1, t2) == pytest.approx(
            expected_negentropy(Wrapped(), t1, t2), rel=1e-10)
    assert scale_invariant_limits(Wrapped(), 4) == pytest.approx(
        (2.0 * 3.0 * math.log(4), 3.0 * 3.0 * math.log(4)), rel=1e-14)
    with pytest.raises(ValueError, match="power_law"):
        scale_invariant_negentropy(LogN(0.4), 0, 10)
    with pytest.raises(ValueError, match="^transform must be a sia_theory Transform"):
        scale_invariant_limits("ScaleInvariant", 2)


def test_head_dependent_closed_forms_take_the_head():
    from sia_theory import ALiBi

    alibi = ALiBi((0.5, 0.25))
    for h, slope in enumerate((0.5, 0.25)):
        direct = math.fsum(math.exp(0.5 - slope * t) for t in range(3, 40))
        assert expected_total_attention(alibi, 3, 40, h=h) == pytest.approx(direct, rel=1e-13)
    with pytest.raises(ValueError, match="called without a head index h \\(h is required"):
        expected_total_attention(alibi, 3, 40)
    with pytest.raises(ValueError, match="^h must be an integer"):
        expected_total_attention(alibi, 3, 40, h=2)
