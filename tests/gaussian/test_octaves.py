"""The octave grid and the convergence decision on octave sums (SI Defs. 3.1–3.2)."""

import numpy as np
import pytest

from sia_theory.gaussian.octaves import (
    CONVERGENCE_ATOL,
    CONVERGENCE_RTOL,
    convergence,
    octave_starts,
)


def test_octave_starts_are_the_powers_of_two_in_range():
    assert octave_starts().tolist() == [2**k for k in range(21)]
    assert octave_starts(100, 3).tolist() == [4, 8, 16, 32, 64]
    assert octave_starts(64, 64).tolist() == [64]


@pytest.mark.parametrize(("args", "name"), [((10, 0), "t_min"), ((2, 3), "t_max")])
def test_octave_starts_bad_input_names_the_parameter(args, name):
    with pytest.raises(ValueError, match=name):
        octave_starts(*args)


def test_a_geometric_approach_converges_exactly_when_the_last_steps_are_within_tolerance():
    """``x_k = 5 + 2^−k``: the step into ``x_k`` is ``2^−k``, so the last three steps of
    ``x_0 … x_K`` are within ``rtol·|x| + atol`` iff ``2^−(K−2) <= 1e-3·(5 + 2^−(K−2)) + 1e-9``:
    first at ``K = 10`` (``2^−8 = 0.0039 <= 0.0050``; ``2^−7 = 0.0078`` is not)."""
    assert (CONVERGENCE_RTOL, CONVERGENCE_ATOL) == (1e-3, 1e-9)
    x = 5 + 2.0 ** -np.arange(11)
    assert convergence(x) == ("converges", x[-1])
    assert convergence(x[:10]) == ("undecided", None)  # steps shrink 8× over three octaves


@pytest.mark.parametrize("values", [
    np.arange(12) * np.log(2),             # log t: equal steps never shrink
    2.0 ** np.arange(12),                  # growing steps
    np.r_[5 + 2.0 ** -np.arange(11), np.nan],  # not finite
])
def test_sequences_that_do_not_approach_a_limit_diverge(values):
    assert convergence(values) == ("diverges", None)


def test_convergence_needs_last_plus_four_values():
    with pytest.raises(ValueError, match="at least 7 octaves"):
        convergence(np.ones(6))
    assert convergence(np.ones(7)) == ("converges", 1.0)
