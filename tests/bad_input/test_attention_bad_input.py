"""Bad input to the attention reference: bad values give one ValueError naming the parameter,
extreme valid values give the right finite answer (oracles written here), and sizes that cannot
fit are refused before any work."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_bad_input import BAD, Case, assert_rejected

from sia_theory import ScaleInvariant
from sia_theory.attention import (
    Decoder,
    DecoderConfig,
    attention,
    attention_scores,
    merge_partials,
    qk_norm,
    rms_norm,
)

OPTIONAL = {"block_size", "workers", "eps"}
GOOD = np.random.default_rng(0).standard_normal((1, 2, 8, 4))

CASES = [
    Case("attention-q", lambda v: attention(v, GOOD, GOOD), "q", "array4d"),
    Case("attention-k", lambda v: attention(GOOD, v, GOOD), "k", "array4d"),
    Case("attention-v", lambda v: attention(GOOD, GOOD, v), "v", "array4d"),
    Case("attention-block", lambda v: attention(GOOD, GOOD, GOOD, block_size=v), "block_size",
         "integer"),
    Case("attention-workers", lambda v: attention(GOOD, GOOD, GOOD, workers=v), "workers",
         "integer"),
    Case("scores-q", lambda v: attention_scores(v, GOOD), "q", "array4d"),
    Case("rms_norm-eps", lambda v: rms_norm(GOOD, eps=v), "eps", "nonnegative_real"),
    Case("decoder-vocab", lambda v: DecoderConfig(vocab_size=v), "vocab_size", "integer"),
    Case("decoder-layers", lambda v: DecoderConfig(n_layers=v), "n_layers", "integer"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow],
          database=None)
@given(data=st.data())
def test_bad_value_raises_value_error_naming_the_parameter(case, data):
    strategy = BAD[case.kind]
    if case.param in OPTIONAL:  # None is the documented default there, not a bad value
        strategy = strategy.filter(lambda v: v is not None)
    assert_rejected(case, strategy, data)


@pytest.mark.parametrize("scale", [1e-300, 1e-200, 1.0, 1e200, 1e300])
def test_rms_norm_is_scale_invariant_over_the_whole_float_range(scale):
    """x / rms(x) does not depend on the scale of x; 0.1 gave zeros for rows of 1e200 (mean(x²)
    overflowed). Oracle: the obvious formula on the unscaled row (eps negligible there)."""
    x = np.array([[3.0, -4.0, 12.0], [1.0, 1.0, 1.0]])
    expected = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True))
    got = rms_norm(x * scale, eps=0.0)
    np.testing.assert_allclose(got, expected, rtol=1e-15)


@pytest.mark.parametrize("bad", [np.array([1 + 1j, 2]), np.array(["a"]), np.array([np.nan, 1.0]),
                                 np.array([np.inf]), 3.0, np.zeros((2, 0)), [[1, 2], [3]]])
def test_rms_norm_refuses_bad_input_naming_x(bad):
    with pytest.raises(ValueError, match="^x must"):
        rms_norm(bad)


def test_rms_norm_keeps_eps_on_the_original_scale():
    """For a tiny row eps dominates: x/sqrt(mean(x²) + eps) ≈ x/sqrt(eps), a representable number
    (6.7e-193 here), not 0 and not NaN."""
    x = np.array([[1e-200, 2e-200]])
    got = rms_norm(x)
    np.testing.assert_allclose(got, x / np.sqrt(np.finfo(np.float64).eps), rtol=1e-12)
    assert np.all(rms_norm(np.zeros((2, 3)), eps=0.0) == 0.0)


def test_rms_norm_matches_the_plain_formula_and_keeps_float32():
    x = np.random.default_rng(1).standard_normal((4, 16))
    eps = np.finfo(np.float64).eps
    np.testing.assert_allclose(rms_norm(x), x / np.sqrt((x * x).mean(-1, keepdims=True) + eps),
                               rtol=1e-14)
    assert rms_norm(x.astype(np.float32)).dtype == np.float32
    assert rms_norm(np.array([[3, 4]])).dtype == np.float64  # integers normalised in float64
    q, k = qk_norm(x, 2 * x)
    np.testing.assert_allclose(q, k, rtol=1e-14)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_merge_partials_refuses_a_non_finite_output(bad):
    out, lse = np.ones((1, 1, 2, 3)), np.zeros((1, 1, 2))
    broken = out.copy()
    broken[0, 0, 1, 0] = bad
    with pytest.raises(ValueError, match=r"parts\[1\] output"):
        merge_partials([(out, lse), (broken, lse)])


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_merge_partials_refuses_nan_or_plus_inf_lse_and_does_not_call_it_masked(bad):
    out, lse = np.ones((1, 1, 2, 3)), np.zeros((1, 1, 2))
    broken = lse.copy()
    broken[0, 0, 0] = bad
    with pytest.raises(ValueError, match=r"parts\[0\] lse") as err:
        merge_partials([(out, broken), (out, lse)])
    assert "masked" not in str(err.value).split(";")[0]


def test_merge_partials_of_a_split_equals_the_whole():
    """The valid path is unchanged: split-KV merge equals attention over all keys."""
    from sia_theory.attention import attention_partial

    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal((1, 2, 4, 8)) for _ in range(3))
    k, v = rng.standard_normal((1, 2, 12, 8)), rng.standard_normal((1, 2, 12, 8))
    parts = [attention_partial(q, k[:, :, a:b], v[:, :, a:b], q_start=8, kv_start=a,
                               score_mod=ScaleInvariant(3.0))
             for a, b in ((0, 5), (5, 12))]
    whole, lse = attention(q, k, v, score_mod=ScaleInvariant(3.0), return_lse=True)
    merged, merged_lse = merge_partials(parts)
    np.testing.assert_allclose(merged, whole, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(merged_lse, lse, rtol=1e-12)


def test_dense_scores_too_large_for_memory_are_refused_before_any_work():
    q = np.zeros((1, 1, 2**17, 8))  # T = 2^17: the example, 384 GiB of float64 scores
    with pytest.raises(ValueError, match=r"Tq\*Tk=.*needs about .* of working memory"):
        attention_scores(q, q)
    with pytest.raises(ValueError, match="max_bytes"):
        attention_scores(np.zeros((1, 1, 64, 8)), np.zeros((1, 1, 64, 8)), max_bytes=1000)


def test_decoder_too_large_for_memory_is_refused_before_allocating():
    with pytest.raises(ValueError, match="vocab_size/d_model/n_layers=.*needs about"):
        Decoder(DecoderConfig(vocab_size=10**10))
