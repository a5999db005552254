"""sia_theory.gaussian.phase, exercised by its own name: the REM freezing point, phase bands and
the Gumbel centring of the maximum of n normals (against seeded Monte Carlo)."""

import math

import numpy as np
import pytest

from sia_theory import NoScale
from sia_theory.gaussian import phase
from sia_theory.gaussian.phase import (
    PHASE_BAND,
    freezing_point,
    phase_of_ratio,
    phase_shift,
    phase_table,
    rem_max_location,
)


def test_freezing_point_values():
    assert freezing_point([2, math.e**8]) == pytest.approx([math.sqrt(2 * math.log(2)), 4.0])
    with pytest.raises(ValueError, match="M"):
        freezing_point(1)


def test_phase_bands():
    r = [1 - 2 * PHASE_BAND, 1.0, 1 + PHASE_BAND, 1 + 2 * PHASE_BAND]
    assert phase_of_ratio(r).tolist() == ["liquid", "critical", "critical", "frozen"]


def test_phase_shift_shares():
    out = phase_shift([0.5, 1.0, 2.0, 2.0], [0.5, 2.0, 2.0, 0.5])
    assert out["liquid_train"] == 0.25 and out["frozen_train"] == 0.5
    assert out["phase_changed"] == 0.5
    assert out["phase_shift"] == pytest.approx(np.median([0, math.log(2), 0, math.log(4)]))
    with pytest.raises(ValueError, match="ratio_train"):
        phase_shift([1.0, 2.0], [1.0])


def test_phase_table_of_standard_attention():
    """NoScale: σ = 1 on every range, r = 1/√(2 log M)."""
    table = phase_table(NoScale(), 1024, [2, 64, 512])
    assert table["M"].tolist() == [1024, 2, 64, 512]
    assert table["sigma"].to_numpy() == pytest.approx(1.0)
    assert table["ratio"].to_numpy() == pytest.approx(1 / np.sqrt(2 * np.log(table["M"])))
    assert set(table["phase"]) == {"liquid"}
    with pytest.raises(ValueError, match="n_ctx"):
        phase_table(NoScale(), 1, [2])


def test_rem_max_location_against_monte_carlo():
    """The Gumbel centring a_n of max of n = 10⁴ normals: the max's mean is a_n + γ/√(2 log n)
    (Gumbel mean γ on the scale 1/√(2 log n)); 2000 seeded maxima, within 4 standard errors."""
    n = 10_000
    rng = np.random.default_rng(1)
    maxima = rng.standard_normal((2000, n)).max(axis=1)
    expected = float(rem_max_location(n)) + 0.5772156649 / math.sqrt(2 * math.log(n))
    se = maxima.std(ddof=1) / math.sqrt(maxima.size)
    assert abs(maxima.mean() - expected) < 4 * se + 0.02  # + O(1/log n) finite-n bias
    with pytest.raises(ValueError, match=r"^n "):
        rem_max_location(2)


def test_context_spread_of_standard_attention_is_one():
    assert phase.context_spread(NoScale(), 1e6) == pytest.approx(1.0)
