"""Bad input to the sphere engine and the gap-counting diagnostic: one ``ValueError`` naming the
parameter, for hypothesis-drawn bad values of each type (the shared table's strategies)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_bad_input import BAD, Case, assert_rejected

from sia_theory.sphere.gaps import critical_scale, gap_counts, half_mass_beta, top_scores
from sia_theory.sphere.model import DistanceLaw, sample_cosines, top_cosines
from sia_theory.sphere.routes import order_parameter

LAW = DistanceLaw.uniform(3)
RNG = np.random.default_rng(0)
ROWS = {8: np.zeros((1, 8)), 9: np.zeros((1, 9)), 10: np.zeros((1, 10))}


def _is_one_row(v) -> bool:
    """A finite real 1-D array of >= 2 entries: one row of scores, which is valid."""
    return (isinstance(v, np.ndarray) and v.ndim == 1 and v.size >= 2
            and v.dtype.kind in "fiu" and bool(np.all(np.isfinite(v))))


# scores may be one row (1-D) or rows (2-D): the 2-D strategy without its valid 1-D draws
STRATEGIES = {**BAD, "scores": BAD["array2d"].filter(lambda v: not _is_one_row(v))}

CASES = [
    Case("DistanceLaw.k", lambda v: DistanceLaw(v, 1.0), "k", "positive_real"),
    Case("DistanceLaw.b", lambda v: DistanceLaw(2.0, v), "b", "positive_real"),
    Case("DistanceLaw.uniform.d", lambda v: DistanceLaw.uniform(v), "d", "size"),
    Case("critical_beta.n", lambda v: LAW.critical_beta(v), "n", "positive_real"),
    Case("sample_cosines.n", lambda v: sample_cosines(LAW, v, 1, RNG), "n", "size"),
    Case("top_cosines.top_k", lambda v: top_cosines(LAW, 100, v, 1, RNG), "top_k", "integer"),
    Case("order_parameter.n", lambda v: order_parameter("top_mass", LAW, v, 1.0,
                                                        route="monte_carlo"), "n", "size"),
    Case("order_parameter.lam", lambda v: order_parameter("top_mass", LAW, 100, v,
                                                          route="asymptotic"), "lam",
         "positive_real"),
    Case("order_parameter.seed", lambda v: order_parameter("top_mass", LAW, 100, 1.0,
                                                           route="asymptotic", seed=v), "seed",
         "integer"),
    Case("half_mass_beta.scores", lambda v: half_mass_beta(v), "scores", "scores"),
    Case("gap_counts.gaps", lambda v: gap_counts([[1.0, 0.0]], v), "gaps", "distances"),
    Case("top_scores.n", lambda v: top_scores(np.negative, v, 4, 1, RNG), "n", "integer"),
    Case("critical_scale.boots", lambda v: critical_scale(ROWS, boots=v), "boots", "integer"),
    Case("critical_scale.seed", lambda v: critical_scale(ROWS, seed=v), "seed", "integer"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow],
          database=None)
@given(data=st.data())
def test_bad_value_raises_value_error_naming_the_parameter(case, data):
    assert_rejected(case, STRATEGIES[case.kind], data)
