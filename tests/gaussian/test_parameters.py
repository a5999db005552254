"""sia_theory.gaussian._parameters, exercised by its own name: the needle functions, the range
expectations and the sampling routes describe each shared parameter as their table does (most
through a placeholder, a few written out), and the walk reaches the known siblings."""

import inspect

import pytest

from sia_theory._infra.docstrings import PLACEHOLDER, parameter_entries
from sia_theory.gaussian._parameters import MONTE_CARLO, NEEDLE, RANGE
from sia_theory.gaussian.closed_forms import expected_total_attention
from sia_theory.gaussian.exact import expected_mass_exact
from sia_theory.gaussian.needle import argmax_probability, row_integral
from sia_theory.gaussian.needle_montecarlo import simulate_needle
from sia_theory.gaussian.needle_theory import classical_threshold

SIBLINGS = {
    "needle": (NEEDLE, {"check_needle", "argmax_probability", "needle_mass", "row_integral",
                        "rest_intensity", "evt_threshold", "classical_threshold",
                        "argmax_threshold", "half_point", "mass_threshold", "simulate_needle"}),
    "range": (RANGE, {"check_range", "expected_total_attention", "expected_negentropy",
                      "scale_invariant_limits", "octave_closed_forms", "range_log_laplace",
                      "expected_entropy_exact", "expected_mass_exact"}),
    "monte carlo": (MONTE_CARLO, {"simulate_gaussian_logits", "context_length_sweep",
                                  "simulate_gaussian_logits_asymptotic",
                                  "entropy_in_range_samples", "simulate_needle"}),
}


@pytest.mark.parametrize("family", SIBLINGS)
def test_every_sibling_describes_the_shared_parameters_as_the_table(family):
    table, known = SIBLINGS[family]
    siblings = table.siblings()
    assert known <= {f.__name__ for f in siblings}
    assert table.check() == []
    for function in siblings:  # every placeholder was expanded at import
        assert not PLACEHOLDER.search(function.__doc__), function.__name__


def test_the_entries_read_as_the_table_wrote_them():
    assert parameter_entries(argmax_probability.__doc__)["n_ctx"] == (
        "int", "Keys the query sees, ``N >= 2``.")
    assert parameter_entries(row_integral.__doc__)["head"] == (
        "int, optional", "Head index, required by a head-dependent transform.")
    # a sibling's own constraint follows the canonical text
    assert parameter_entries(simulate_needle.__doc__)["n_ctx"][1] == (
        "Keys the query sees, ``N >= 2``. At most ``1e7`` here (the draws are brute force).")
    assert parameter_entries(classical_threshold.__doc__)["n_ctx"][1].startswith(
        NEEDLE.description("n_ctx") + " At least 3 here")
    assert parameter_entries(simulate_needle.__doc__)["seed"] == (
        "int", "Seed of the draws, ``0 <= seed < 2**63``.")
    # the pair t1, t2 stays one entry; n_ctx is required by the mass, optional elsewhere
    mass = parameter_entries(expected_mass_exact.__doc__)
    assert mass["t1"] == mass["t2"] and mass["n_ctx"][0] == "int"
    assert parameter_entries(expected_total_attention.__doc__)["n_ctx"][0] == "int, optional"
    assert "t1, t2 : int\n" in inspect.getdoc(expected_total_attention)


def test_a_needle_sibling_written_the_old_way_is_reported():
    """Negative control: argmax_probability's signature with the description n_ctx had in half
    of the needle functions before the table."""
    old = argmax_probability.__doc__.replace("Keys the query sees, ``N >= 2``.",
                                             "Keys in the context, ``>= 2``.")
    [message] = NEEDLE.disagreements(argmax_probability, old)
    assert "argmax_probability: n_ctx is described as 'Keys in the context, ``>= 2``.'" in message
