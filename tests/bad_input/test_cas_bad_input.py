"""Bad input to the CAS entry points gives one ``ValueError`` naming the parameter.

The table :data:`CAS_CASES` uses the bad-value strategies of
``tests/bad_input/test_bad_input.py`` (same ``Case`` rows and kinds) plus two CAS kinds:
``cas_n`` (the closed forms take any real ``n >= 2``, up to the float range, so only values
below 2, fractional, non-finite or not numbers are bad) and ``gamma_array`` (a sequence of
``γ`` with one bad entry). Huge sizes must fail
before any allocation with the parameter, the estimate and the limit in the message.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_bad_input import (
    BAD,
    Case,
    _non_finite,
    _not_numbers,
    _too_big_for_float,
    _with_entry,
    assert_rejected,
)

import sia_theory as sia
from sia_theory.cas import dynamics, jacobian, simplex, tokens, transition

_bad_cas_n = st.one_of(st.floats(max_value=2.0, exclude_max=True, allow_nan=False),
                       st.floats(2.0, 1e300).filter(lambda x: not float(x).is_integer()),
                       _non_finite, _too_big_for_float, _not_numbers)
# simplex_eta's d: the formula holds for any integer d >= 1 (d = 1 included)
_bad_cas_d = st.one_of(st.floats(max_value=1.0, exclude_max=True, allow_nan=False),
                       st.floats(1.0, 1e300).filter(lambda x: not float(x).is_integer()),
                       _non_finite, _too_big_for_float, _not_numbers)
_bad_gamma_array = st.one_of(
    st.floats(max_value=-1e-300, allow_nan=False).flatmap(lambda x: _with_entry([0.5, 1.0], x)),
    _non_finite.flatmap(lambda x: _with_entry([0.5, 1.0], x)),
    st.sampled_from([np.array([1 + 1j, 2]), np.array(["1", "2"]), [10**400, 1], [None, 1],
                     [[0.5, 1.0], [2.0]], []]))
KINDS = {**BAD, "cas_n": _bad_cas_n, "cas_d": _bad_cas_d, "gamma_array": _bad_gamma_array,
         "max_bytes": BAD["integer"].filter(lambda v: v is not None)}

RNG = np.random.default_rng(0)
X = tokens.sample_tokens(n=6, d=4, rho=0.5, rng=tokens.token_rng(0, "test.cas.bad"))
STEP = dict(n=6, d=4, rho=0.5, gamma=1.0, seed=0, samples=2)
DEPTH = dict(STEP, layers=1)
DRAW = dict(n=8, d=4, rho=0.5, seed=0, draw=0, queries=4)


def _with(fn, base, name):
    return lambda v: fn(**{**base, name: v})


def _simplex_cases(fname, base, params):
    fn = getattr(simplex, fname)
    return [Case(f"{fname}.{name}", _with(fn, base, name), name, kind)
            for name, kind in params]


_SW = dict(n=100, gamma=2.0, rho=0.5)
CAS_CASES = [
    Case("critical_gamma.rho", lambda v: simplex.critical_gamma(v), "rho", "probability"),
    *_simplex_cases("simplex_self_weight", _SW, [("n", "cas_n"), ("n", "distances"),
                                                 ("gamma", "nonnegative_real"),
                                                 ("gamma", "gamma_array"),
                                                 ("rho", "probability")]),
    *_simplex_cases("simplex_inner_product", _SW, [("n", "cas_n"), ("gamma", "nonnegative_real"),
                                                   ("rho", "probability"),
                                                   ("alpha", "nonnegative_real"),
                                                   ("q", "positive_real")]),
    *_simplex_cases("simplex_sparsity", _SW, [("n", "cas_n"), ("gamma", "nonnegative_real"),
                                              ("gamma", "gamma_array"), ("rho", "probability")]),
    *_simplex_cases("simplex_eta", dict(_SW, d=8), [("n", "cas_n"), ("d", "cas_d"),
                                                   ("gamma", "nonnegative_real"),
                                                   ("rho", "probability"),
                                                   ("alpha", "nonnegative_real"),
                                                   ("q", "positive_real")]),
    *_simplex_cases("critical_eta_excess", dict(n=100, d=8, rho=0.5),
                    [("n", "cas_n"), ("rho", "probability"), ("q", "positive_real")]),
    *_simplex_cases("transition_width", dict(n=100, rho=0.5), [("n", "cas_n"),
                                                              ("rho", "probability")]),
    *_simplex_cases("simplex_limit", dict(gamma=2.0, rho=0.5),
                    [("gamma", "nonnegative_real"), ("rho", "probability"),
                     ("alpha", "nonnegative_real"), ("q", "positive_real")]),
    *_simplex_cases("jacobian_limit", dict(gamma=2.0, rho=0.5),
                    [("gamma", "nonnegative_real"), ("rho", "probability"),
                     ("q", "positive_real"), ("alpha", "nonnegative_real")]),
    *_simplex_cases("phase_of", dict(gamma=2.0, rho=0.5), [("gamma", "nonnegative_real"),
                                                          ("rho", "probability")]),
    # tokens
    Case("sample_tokens.n", _with(tokens.sample_tokens, dict(n=4, d=4, rho=0.5, rng=RNG), "n"),
         "n", "size"),
    Case("sample_tokens.d", _with(tokens.sample_tokens, dict(n=4, d=4, rho=0.5, rng=RNG), "d"),
         "d", "size"),
    Case("sample_tokens.rho",
         _with(tokens.sample_tokens, dict(n=4, d=4, rho=0.5, rng=RNG), "rho"), "rho",
         "probability"),
    Case("sample_tokens.q", _with(tokens.sample_tokens, dict(n=4, d=4, rho=0.5, rng=RNG), "q"),
         "q", "positive_real"),
    Case("sample_tokens.rng",
         _with(tokens.sample_tokens, dict(n=4, d=4, rho=0.5), "rng"), "rng", "object"),
    Case("token_rng.seed", lambda v: tokens.token_rng(v, "s"), "seed", "integer"),
    Case("token_rng.index", lambda v: tokens.token_rng(0, "s", v), "index", "integer"),
    Case("mean_cosine.X", lambda v: tokens.mean_cosine(v), "X", "array2d"),
    # dynamics
    Case("attention_step.X", lambda v: dynamics.attention_step(v, beta=1.0), "X", "array2d"),
    Case("attention_step.beta", lambda v: dynamics.attention_step(X, beta=v), "beta",
         "nonnegative_real"),
    Case("attention_step.alpha", lambda v: dynamics.attention_step(X, beta=1.0, alpha=v),
         "alpha", "nonnegative_real"),
    Case("attention_step.max_bytes",
         lambda v: dynamics.attention_step(X, beta=1.0, max_bytes=v), "max_bytes", "max_bytes"),
    *[Case(f"simulate_token_step.{name}", _with(dynamics.simulate_token_step, STEP, name), name,
           kind)
      for name, kind in [("n", "size"), ("d", "size"), ("samples", "size"),
                         ("rho", "probability"), ("gamma", "nonnegative_real"),
                         ("gamma", "gamma_array"), ("alpha", "nonnegative_real"),
                         ("q", "positive_real"), ("seed", "integer")]],
    *[Case(f"simulate_depth.{name}", _with(dynamics.simulate_depth, DEPTH, name), name, kind)
      for name, kind in [("n", "size"), ("d", "size"), ("samples", "size"), ("layers", "size"),
                         ("rho", "probability"), ("gamma", "gamma_array"),
                         ("alpha", "nonnegative_real"), ("seed", "integer")]],
    Case("crossing_point.x", lambda v: dynamics.crossing_point(v, [3.0, 2.0, 1.0], 1.5), "x",
         "distances"),
    Case("crossing_point.level", lambda v: dynamics.crossing_point([1, 2, 3], [3, 2, 1], v),
         "level", "real"),
    Case("attention_statistics.A", lambda v: dynamics.attention_statistics(v), "A", "array2d"),
    # Jacobian
    Case("jacobian_eta.X", lambda v: jacobian.jacobian_eta(v, beta=1.0), "X", "array2d"),
    Case("jacobian_eta.beta", lambda v: jacobian.jacobian_eta(X, beta=v), "beta",
         "nonnegative_real"),
    Case("jacobian_eta.alpha", lambda v: jacobian.jacobian_eta(X, beta=1.0, alpha=v), "alpha",
         "nonnegative_real"),
    Case("jacobian_eta.block_rows", lambda v: jacobian.jacobian_eta(X, beta=1.0, block_rows=v),
         "block_rows", "integer"),
    Case("dense_jacobian.X", lambda v: jacobian.dense_jacobian(v, beta=1.0), "X", "array2d"),
    Case("dense_jacobian.beta", lambda v: jacobian.dense_jacobian(X, beta=v), "beta",
         "nonnegative_real"),
    Case("dense_jacobian.method", lambda v: jacobian.dense_jacobian(X, beta=1.0, method=v),
         "method", "object"),
    Case("eta_from_jacobian.J", lambda v: jacobian.eta_from_jacobian(v, 1, 2), "J", "array2d"),
    # transition
    *[Case(f"transition_draw.{name}", _with(transition.transition_draw, DRAW, name), name, kind)
      for name, kind in [("n", "size"), ("d", "size"), ("rho", "probability"),
                         ("seed", "integer"), ("draw", "integer"), ("queries", "integer"),
                         ("rtol", "probability")]],
    Case("transition_draws.ns",
         lambda v: transition.transition_draws(ns=v, d=4, rho=0.5, seed=0, draws=1, queries=4),
         "ns", "distances"),
    Case("transition_draws.draws",
         lambda v: transition.transition_draws(ns=[8], d=4, rho=0.5, seed=0, draws=v,
                                               queries=4), "draws", "size"),
    Case("near_simplex_window.n", lambda v: transition.near_simplex_window(v, 0.2, 0.4), "n",
         "distances"),
    Case("near_simplex_window.rho1", lambda v: transition.near_simplex_window(10, v, 0.4),
         "rho1", "real"),
    Case("near_simplex_window.level",
         lambda v: transition.near_simplex_window(10, 0.2, 0.4, level=v), "level",
         "probability"),
]


@pytest.mark.parametrize("case", CAS_CASES, ids=[c.id for c in CAS_CASES])
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow],
          database=None)
@given(data=st.data())
def test_bad_value_raises_value_error_naming_the_parameter(case, data):
    assert_rejected(case, KINDS[case.kind], data)


# --- the issue's examples, one by one --------------------------------------------------------

_MEMORY = r"needs about [\d.]+ [KMGTP]iB of working memory, more than the limit of"
EXAMPLES = [
    ("sample_tokens(rng=42)",
     lambda: tokens.sample_tokens(n=4, d=4, rho=0.5, rng=42), "rng"),
    ("jacobian_eta at n*d = 1e5", lambda: jacobian.jacobian_eta(np.ones((10**5, 1)), beta=1.0),
     "X=" + r"\(100000, 1\) " + _MEMORY),
    ("dense_jacobian at nd = 1e5",
     lambda: jacobian.dense_jacobian(np.ones((10**4, 10)), beta=1.0),
     r"X=\(10000, 10\) " + _MEMORY),
    ("dense_jacobian over max_bytes",
     lambda: jacobian.dense_jacobian(np.ones((20, 5)), beta=1.0, max_bytes=10**5),
     _MEMORY + r" 97.7 KiB \(max_bytes\)"),
    ("simulate_token_step at n = 1e6",
     lambda: dynamics.simulate_token_step(**dict(STEP, n=10**6)), "n=1000000 " + _MEMORY),
    ("simulate_depth at n = 1e6",
     lambda: dynamics.simulate_depth(**dict(DEPTH, n=10**6)), "n=1000000 " + _MEMORY),
    ("simplex tokens at n = 1e6",
     lambda: tokens.sample_tokens(n=10**6, d=10**6, rho=0.5, tokens="simplex"),
     "n=1000000 " + _MEMORY),
    ("transition draw at n = 1e9",
     lambda: transition.transition_draw(**dict(DRAW, n=10**9, queries=1024)),
     "n=1000000000 " + _MEMORY),
    ("attention_step over max_bytes",
     lambda: dynamics.attention_step(X, beta=1.0, max_bytes=100), _MEMORY),
    ("jacobian_eta with beta = 1e100", lambda: jacobian.jacobian_eta(X, beta=1e100), "beta"),
    ("dense_jacobian with beta = 1e200", lambda: jacobian.dense_jacobian(X, beta=1e200), "beta"),
    ("jacobian_eta overflowing", lambda: jacobian.jacobian_eta(X * 1e-200, beta=1.0),
     "eta overflows"),
    ("attention_step residual overflowing",
     lambda: dynamics.attention_step(X * 1e10, beta=1.0, alpha=1e308), "alpha"),
    ("simplex_self_weight(10**400)",
     lambda: sia.simplex_self_weight(n=10**400, gamma=1.0, rho=0.5), "n"),
    ("complex n", lambda: sia.simplex_self_weight(n=[1j], gamma=1.0, rho=0.5), "n"),
    ("ragged n", lambda: sia.simplex_self_weight(n=[[2, 3], [4]], gamma=1.0, rho=0.5), "n"),
    ("huge int in a gamma array",
     lambda: sia.simplex_self_weight(n=5, gamma=[10**400], rho=0.5), "gamma"),
    ("shapes that do not broadcast",
     lambda: sia.simplex_self_weight(n=[5, 6, 7], gamma=[1.0, 2.0], rho=0.5), "n .*gamma"),
    ("simplex_inner_product alpha = 1e300 is finite, eta overflows",
     lambda: sia.simplex_eta(n=100, d=8, gamma=2.0, rho=0.5, alpha=1e200), "overflows"),
    ("jacobian_limit q = 1e-320", lambda: sia.jacobian_limit(gamma=2.0, rho=0.5, q=1e-320),
     "overflows"),
    ("complex gamma in a sweep",
     lambda: dynamics.simulate_token_step(**dict(STEP, gamma=[1j])), "gamma"),
    ("level NaN", lambda: dynamics.crossing_point([1, 2, 3], [3, 2, 1], math.nan), "level"),
    ("window level 2", lambda: transition.near_simplex_window(10, 0.5, 0.6, level=2), "level"),
    ("complex Jacobian", lambda: jacobian.eta_from_jacobian(np.zeros((2, 2)) + 1j, 1, 2), "J"),
]


@pytest.mark.parametrize("label, call, pattern", EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_issue_example_raises_value_error(label, call, pattern):
    with pytest.raises(ValueError, match=pattern):
        call()


def test_memory_estimate_scales_as_documented():
    """The estimates grow as the arrays do (n² for a layer, (nd)² for the dense Jacobian)."""
    assert dynamics.step_memory(2000, 8) / dynamics.step_memory(1000, 8) == pytest.approx(4,
                                                                                        rel=0.02)
    assert jacobian.dense_jacobian_memory(200, 10) >= 8 * (2000**2)
    assert jacobian.eta_memory(10**5, 1, 512) >= 8 * 10**10


def test_simplex_eta_takes_d_from_one():
    """d = 1 is inside the documented range (the formula holds for any integer d >= 1); the
    bad-input table once drew it as a bad value."""
    assert np.isfinite(sia.simplex_eta(n=100, d=1, gamma=2.0, rho=0.5))
    assert np.isfinite(sia.simplex_eta(n=100, d=1.0, gamma=2.0, rho=0.5))
