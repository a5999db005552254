"""Bad input gives one ``ValueError`` naming the parameter, for every public entry
point in the table :data:`CASES`.

Each case is ``(id, call, param, kind)``: ``call(value)`` runs the entry point with ``value`` in
the place of ``param`` (every other argument valid and small), and ``kind`` picks the hypothesis
strategy of values that are bad for that type of parameter (:data:`BAD`). The test asserts a
``ValueError`` (not ``OverflowError``, ``TypeError``, ``MemoryError``, a numpy or numba error,
nor a silent NaN) whose message contains ``param``. To cover another module, append its cases
(the ``probability`` and ``array4d`` kinds are there for the CAS and attention entry points).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sia_theory as sia
from sia_theory.gaussian import entropy as entropy_scaling
from sia_theory.gaussian import laws, montecarlo, rng
from sia_theory.studies import si_entropy_scaling as studies
from sia_theory.studies import si_fig1_gaussian as fig1

# --- bad values per parameter type -----------------------------------------------------------

_not_numbers = st.one_of(st.none(), st.booleans(), st.text(max_size=5),
                         st.complex_numbers(allow_nan=False, allow_infinity=False).filter(
                             lambda z: z.imag != 0),
                         st.just({"a": 1}))
_too_big_for_float = st.integers(min_value=2**1024, max_value=10**500)
_non_finite = st.sampled_from([math.nan, math.inf, -math.inf])

# Integers (counts, indices, seeds >= 0): negative, fractional, non-finite, beyond 64 bits.
_bad_integer = st.one_of(
    st.integers(max_value=-1),
    st.floats(allow_nan=False, allow_infinity=False).filter(lambda x: not float(x).is_integer()),
    _non_finite, st.integers(min_value=2**64), _too_big_for_float, _not_numbers)
# Sizes: bad integers, and integers too large for memory (a ValueError before any allocation).
_bad_size = st.one_of(_bad_integer, st.integers(min_value=2**45, max_value=2**62))
_bad_positive_real = st.one_of(st.floats(max_value=0.0, allow_nan=False), _non_finite,
                               _too_big_for_float, _not_numbers)
_bad_nonnegative_real = st.one_of(st.floats(max_value=-1e-300, allow_nan=False), _non_finite,
                                  _too_big_for_float, _not_numbers)
_bad_real = st.one_of(_non_finite, _too_big_for_float, _not_numbers)
_bad_probability = st.one_of(st.floats(max_value=-1e-300, allow_nan=False),
                             st.floats(min_value=1.0 + 1e-12, allow_nan=False), _non_finite,
                             _too_big_for_float, _not_numbers)


def _with_entry(base: list, value) -> st.SearchStrategy:
    """``base`` with one entry replaced by ``value``, as a list (so dtype inference runs)."""
    return st.integers(0, len(base) - 1).map(
        lambda i: [value if j == i else x for j, x in enumerate(base)])


# Arrays of distances (>= 0): a negative, non-finite or non-real entry, or a non-real dtype.
_bad_distances = st.one_of(
    st.floats(max_value=-1e-300, allow_nan=False).flatmap(lambda x: _with_entry([0, 1, 5], x)),
    _non_finite.flatmap(lambda x: _with_entry([0.0, 1.0, 5.0], x)),
    st.sampled_from([np.array([1 + 1j, 2]), np.array(["1", "2"]), np.array([True, False]),
                     [10**400, 1], [None, 1], [[0, 1], [2]], "abc"]))


def _bad_float_array(ndim: int) -> st.SearchStrategy:
    """Arrays that should be ``ndim``-D and finite real: wrong rank, a non-finite entry, a
    non-real dtype, ragged nesting."""
    good = np.zeros((2,) * ndim)
    wrong_rank = st.sampled_from([d for d in range(6) if d != ndim]).map(
        lambda d: np.zeros((2,) * d))
    non_finite = st.tuples(_non_finite, st.integers(0, good.size - 1)).map(
        lambda v: np.where(np.arange(good.size).reshape(good.shape) == v[1], v[0], good))
    dtype = st.sampled_from([good.astype(complex) + 1j, good.astype(str), good.astype(bool),
                             good.astype(object)])
    return st.one_of(wrong_rank, non_finite, dtype, st.just([[0.0, 1.0], [2.0]]), _not_numbers)


# Lists of (t1, t2) ranges inside a context of 10: t1 >= t2, negative, fractional, non-finite,
# non-real, beyond the context, not pairs.
_bad_ranges = st.one_of(
    st.tuples(st.integers(0, 10), st.integers(-5, 10)).filter(lambda p: p[0] >= p[1])
    .map(lambda p: [p]),
    st.sampled_from([[(-1, 3)], [(0.5, 3)], [(0, math.nan)], [(0, 1 + 1j)], [("0", "3")],
                     [(0, 10**400)], [(0, 1, 2)], [3], "ab", 5, []]))
_bad_ranges_in_10 = st.one_of(_bad_ranges, st.integers(11, 2**70).map(lambda t2: [(0, t2)]))

_bad_object = st.one_of(st.none(), st.integers(), st.text(max_size=5), st.floats())

BAD = {"integer": _bad_integer, "size": _bad_size, "positive_real": _bad_positive_real,
       "nonnegative_real": _bad_nonnegative_real, "real": _bad_real,
       "probability": _bad_probability, "distances": _bad_distances, "ranges": _bad_ranges,
       "ranges_in_10": _bad_ranges_in_10,
       "optional_ranges_in_10": _bad_ranges_in_10.filter(lambda v: not (isinstance(v, list)
                                                                       and v == [])),
       "array2d": _bad_float_array(2), "array3d": _bad_float_array(3),
       "array4d": _bad_float_array(4), "object": _bad_object}


@dataclass(frozen=True)
class Case:
    id: str
    call: Callable
    param: str
    kind: str


# --- the entry points ------------------------------------------------------------------------

SI = sia.ScaleInvariant(10.0)
HEADS = sia.ALiBi.standard(4)
STATS = sia.range_statistics(np.zeros((3, 10)), [(0, 5)])
TABLE = pd.DataFrame({"delta": [2] * 4, "t": [10, 20, 40, 80], "H_mean": [1.0, 1.2, 1.3, 1.4]})


def _table_with(column, value):
    table = TABLE.copy()
    column_values = table[column].astype(object).to_list()
    column_values[1] = value
    table[column] = column_values
    return table


def _closed_form_cases(name, fn):
    return [Case(f"{name}.t1", lambda v: fn(SI, v, 10), "t1", "integer"),
            Case(f"{name}.t2", lambda v: fn(SI, 0, v), "t2", "size"),
            Case(f"{name}.n_ctx", lambda v: fn(sia.LogN(0.4), 0, 1, n_ctx=v), "n_ctx", "integer"),
            Case(f"{name}.h", lambda v: fn(HEADS, 0, 10, h=v), "h", "integer"),
            Case(f"{name}.transform", lambda v: fn(v, 0, 10), "transform", "object")]


CASES = [
    # transforms: constructors, coefficients, score_mod
    Case("ScaleInvariant.tau", lambda v: sia.ScaleInvariant(tau=v), "tau", "positive_real"),
    Case("ScaleInvariant.alpha", lambda v: sia.ScaleInvariant(alpha=v), "alpha",
         "positive_real"),
    Case("ScaleInvariant.beta", lambda v: sia.ScaleInvariant(beta=v), "beta", "positive_real"),
    Case("LogN.s", lambda v: sia.LogN(v), "s", "positive_real"),
    Case("ALiBi.slope", lambda v: sia.ALiBi(v), "slope", "nonnegative_real"),
    Case("ALiBi.standard.n_heads", lambda v: sia.ALiBi.standard(v), "n_heads", "size"),
    Case("coefficients.t", lambda v: SI.coefficients(v), "t", "distances"),
    Case("coefficients.n_ctx", lambda v: sia.LogN(0.4).coefficients([0, 1], n_ctx=v), "n_ctx",
         "distances"),
    Case("coefficients.h", lambda v: HEADS.coefficients([0, 1], h=v), "h", "integer"),
    Case("log_moments.t", lambda v: SI.log_moments(v), "t", "distances"),
    Case("score_mod.q_idx", lambda v: SI.score_mod(np.zeros((1, 1)), 0, 0, v, 0), "q_idx",
         "distances"),
    Case("score_mod.kv_idx", lambda v: SI.score_mod(np.zeros((1, 1)), 0, 0, 5, v), "kv_idx",
         "distances"),
    # closed forms
    *_closed_form_cases("expected_total_attention", sia.expected_total_attention),
    *_closed_form_cases("expected_log_total_attention", sia.expected_log_total_attention),
    *_closed_form_cases("expected_negentropy", sia.expected_negentropy),
    *_closed_form_cases("plug_in_entropy", sia.plug_in_entropy),
    Case("scale_invariant_total_attention.t2",
         lambda v: sia.scale_invariant_total_attention(SI, 0, v), "t2", "integer"),
    Case("scale_invariant_negentropy.t1", lambda v: sia.scale_invariant_negentropy(SI, v, 10**6),
         "t1", "integer"),
    Case("scale_invariant_limits.delta", lambda v: sia.scale_invariant_limits(SI, v), "delta",
         "integer"),
    # Monte Carlo
    Case("range_statistics.logits", lambda v: sia.range_statistics(v, [(0, 1)]), "logits",
         "array2d"),
    Case("range_statistics.ranges", lambda v: sia.range_statistics(np.zeros((2, 10)), v),
         "ranges", "ranges_in_10"),
    Case("summarize.ranges", lambda v: sia.summarize(STATS, v), "ranges", "ranges"),
    Case("summarize.stats", lambda v: sia.summarize(v, [(0, 5)]), "stats", "object"),
    Case("simulate_gaussian_logits.n_ctx",
         lambda v: sia.simulate_gaussian_logits(SI, v, [(0, 1)], 4), "n_ctx", "size"),
    Case("simulate_gaussian_logits.samples",
         lambda v: sia.simulate_gaussian_logits(SI, 10, [(0, 1)], v), "samples", "size"),
    Case("simulate_gaussian_logits.seed",
         lambda v: sia.simulate_gaussian_logits(SI, 10, [(0, 1)], 4, seed=v), "seed", "integer"),
    Case("simulate_gaussian_logits.ranges",
         lambda v: sia.simulate_gaussian_logits(SI, 10, v, 4), "ranges", "ranges_in_10"),
    Case("simulate_gaussian_range_statistics.n_ctx",
         lambda v: sia.simulate_gaussian_range_statistics(SI, v, [(0, 1)], 4), "n_ctx", "size"),
    Case("gaussian_logits_reference.samples",
         lambda v: montecarlo.gaussian_logits_reference(SI, 10, v), "samples", "size"),
    Case("context_length_sweep.n_ctx_values",
         lambda v: sia.context_length_sweep(SI, [10, v], samples=4), "n_ctx_values", "size"),
    Case("context_length_sweep.recent",
         lambda v: sia.context_length_sweep(SI, [10], samples=4, recent=v), "recent", "integer"),
    Case("context_length_sweep.ranges",
         lambda v: sia.context_length_sweep(SI, [10], samples=4, ranges=v), "ranges",
         "optional_ranges_in_10"),
    Case("rng.normals.n", lambda v: rng.normals(0, 0, v), "n", "size"),
    # entropy scaling
    Case("entropy_in_range_scaling.t_values",
         lambda v: sia.entropy_in_range_scaling(SI, [2, v], samples=4), "t_values", "size"),
    Case("entropy_in_range_scaling.deltas",
         lambda v: sia.entropy_in_range_scaling(SI, [2, 3], deltas=[2, v], samples=4), "deltas",
         "size"),
    Case("entropy_in_range_scaling.t_values (memory)",
         lambda v: sia.entropy_in_range_scaling(SI, [2, v], deltas=[2], samples=4), "t_values",
         "size"),
    Case("entropy_in_range_scaling.samples",
         lambda v: sia.entropy_in_range_scaling(SI, [2, 3], samples=v), "samples", "size"),
    Case("fit_growth_laws.t", lambda v: sia.fit_growth_laws(_table_with("t", v)), "table['t']",
         "positive_real"),
    Case("fit_growth_laws.H_mean", lambda v: sia.fit_growth_laws(_table_with("H_mean", v)),
         "table['H_mean']", "real"),
    Case("fit_growth_laws.table", lambda v: sia.fit_growth_laws(v), "table", "object"),
    Case("log_spaced_integers.count", lambda v: entropy_scaling.log_spaced_integers(1, 10, v),
         "count", "size"),
    # studies: settings and entry points
    *[Case(f"EntropyScalingSettings.{name}",
           lambda v, name=name: studies.EntropyScalingSettings(**{name: v}), name, "size")
      for name in ("t_max", "n_t", "samples")],
    Case("EntropyScalingSettings.transform",
         lambda v: studies.EntropyScalingSettings(transform=v), "transform", "object"),
    Case("EntropyScalingSettings.deltas",
         lambda v: studies.EntropyScalingSettings(deltas=(2, v)), "deltas", "integer"),
    *[Case(f"ContextSweepSettings.{name}",
           lambda v, name=name: fig1.ContextSweepSettings(**{name: v}), name, "size")
      for name in ("n_max", "n_points", "samples")],
    Case("ContextSweepSettings.recent", lambda v: fig1.ContextSweepSettings(recent=v),
         "recent", "integer"),
    Case("entropy_scaling_study.settings", lambda v: studies.entropy_scaling_study(v, seed=0),
         "settings", "object"),
    Case("entropy_scaling_study.seed",
         lambda v: studies.entropy_scaling_study(studies.EntropyScalingSettings.quick(), seed=v),
         "seed", "integer"),
    Case("context_sweep_study.settings", lambda v: fig1.context_sweep_study(v, seed=0),
         "settings", "object"),
    Case("local_slopes.h", lambda v: laws.local_slopes(v, [10, 20, 40], [2], [(10, 40)]),
         "h", "array3d"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow],
          database=None)
@given(data=st.data())
def test_bad_value_raises_value_error_naming_the_parameter(case, data):
    assert_rejected(case, BAD[case.kind], data)


def assert_rejected(case, strategy, data):
    """Draw one bad value for ``case`` and require a ValueError whose message names its
    parameter (shared by the SI, CAS and attention bad-input tables)."""
    value = data.draw(strategy, label=case.param)
    with pytest.raises(ValueError) as err:
        case.call(value)
    assert case.param in str(err.value), f"{case.id}: message does not name {case.param}"


@pytest.mark.parametrize("kind", sorted(BAD))
@settings(max_examples=20, deadline=None, database=None)
@given(data=st.data())
def test_bad_value_strategies_only_draw_bad_values(kind, data):
    """Each strategy is rejected by the validator of its type (a strategy that drew valid
    values would make the table's tests pass vacuously on those draws)."""
    from sia_theory._infra.validate import check_finite_array, check_int, check_real

    value = data.draw(BAD[kind])
    validators = {
        "integer": lambda v: check_int("x", v, lo=0, hi=2**64 - 1),
        "size": lambda v: sia.simulate_gaussian_logits(SI, v, [(0, 1)], 4),
        "positive_real": lambda v: check_real("x", v, lo=0, lo_open=True),
        "nonnegative_real": lambda v: check_real("x", v, lo=0),
        "real": lambda v: check_real("x", v),
        "probability": lambda v: check_real("x", v, lo=0, hi=1),
        "distances": lambda v: check_finite_array("x", v, lo=0),
        "ranges": lambda v: sia.summarize(STATS, v),
        "ranges_in_10": lambda v: sia.range_statistics(np.zeros((1, 10)), v),
        "optional_ranges_in_10": lambda v: sia.context_length_sweep(SI, [10], samples=4,
                                                                    ranges=v),
        "array2d": lambda v: check_finite_array("x", v, ndim=2),
        "array3d": lambda v: check_finite_array("x", v, ndim=3),
        "array4d": lambda v: check_finite_array("x", v, ndim=4),
        "object": lambda v: sia.summarize(v, [(0, 5)]),
    }
    with pytest.raises(ValueError):
        validators[kind](value)


def test_memory_bound_names_parameter_estimate_and_limit():
    from sia_theory._infra.memory import check_memory

    with pytest.raises(ValueError, match=r"n_ctx=10000000000 needs about 447 GiB .* 1 GiB "
                                         r"\(max_bytes\)"):
        check_memory("n_ctx", 10**10, montecarlo.simulation_memory(10**10, 2, 1),
                     max_bytes=2**30)
    check_memory("n_ctx", 10, 100, max_bytes=2**30)  # within the limit: no error


# --- the issue's examples, one by one --------------------------------------------------------

_EMPTY_STATS = montecarlo.RangeStatistics(*(np.zeros((0, 1)) for _ in range(5)))
EXAMPLES = [
    ("ScaleInvariant(tau=10**400)", lambda: sia.ScaleInvariant(tau=10**400), "tau"),
    ("SI coefficients overflow", lambda: sia.ScaleInvariant(alpha=1e-308, beta=1.0), "alpha"),
    ("LogN coefficients overflow",
     lambda: sia.LogN(1e307).coefficients([0], n_ctx=[1e300]), "non-finite coefficients"),
    ("complex distances", lambda: SI.coefficients(np.array([1 + 1j])), "t"),
    ("string distances", lambda: SI.coefficients("12"), "t"),
    ("string n_ctx", lambda: sia.LogN().coefficients([1], n_ctx="12"), "n_ctx"),
    ("complex score", lambda: SI.apply(np.array([1 + 1j]), [1]), "score"),
    ("complex score_mod score", lambda: SI.score_mod(np.array([[1j]]), 0, 0, 1, 0), "score"),
    ("negative q_idx", lambda: SI.score_mod(np.zeros((1, 1)), 0, 0, np.array([-5]), 0),
     "q_idx"),
    ("NaN kv_idx", lambda: SI.score_mod(np.zeros((1, 1)), 0, 0, 5, np.array([np.nan])),
     "kv_idx"),
    ("empty t_values", lambda: sia.entropy_in_range_scaling(SI, [], samples=4), "t_values"),
    ("empty deltas", lambda: sia.entropy_in_range_scaling(SI, [2, 3], deltas=[], samples=4),
     "deltas"),
    ("fractional summary range", lambda: sia.summarize(STATS, [(0.5, 3.7)]), "ranges"),
    ("summary of zero rows", lambda: sia.summarize(_EMPTY_STATS, [(0, 3)]), "stats"),
    ("NaN in a growth-law table", lambda: sia.fit_growth_laws(_table_with("H_mean", np.nan)),
     "H_mean"),
    ("t = 0 in a growth-law table", lambda: sia.fit_growth_laws(_table_with("t", 0)), "t"),
    ("n_ctx = 1e10", lambda: sia.simulate_gaussian_logits(SI, 10**10, [(0, 10)], 2), "n_ctx"),
    ("slopes without columns", lambda: laws.slope_ratio(pd.DataFrame({"x": [1]})), "slopes"),
    ("sweep without columns", lambda: fig1.recent_mass_ratio(pd.DataFrame(), "a", "b"),
     "sweep"),
]


@pytest.mark.parametrize("label, call, param", EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_issue_example_raises_value_error_naming_the_parameter(label, call, param):
    with pytest.raises(ValueError, match=param.replace("[", r"\[")):
        call()


def test_mean_of_no_values_is_an_error_not_nan():
    from sia_theory._infra.stats import mean_se

    with pytest.raises(ValueError, match="at least one value"):
        mean_se(np.zeros((0, 3)))


def test_constant_growth_curve_fits_exactly():
    table = TABLE.assign(H_mean=2.0)
    fits = sia.fit_growth_laws(table)
    assert np.all(np.isfinite(fits[["slope", "intercept", "r2"]].to_numpy()))
    assert fits["r2"].tolist() == [1.0, 1.0]
    assert np.allclose(fits["slope"], 0.0, atol=1e-12)
