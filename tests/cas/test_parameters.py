"""sia_theory.cas._parameters, exercised by its own name: the functions of the exact simplex
describe ``n``, ``gamma``, ``rho``, ``alpha``, ``q`` as the table does, where they take scalars
only with the narrower type."""

from sia_theory._infra.docstrings import PLACEHOLDER, parameter_entries
from sia_theory.cas._parameters import SIMPLEX
from sia_theory.cas.simplex import simplex_limit
from sia_theory.cas.simplex_jacobian import simplex_eta
from sia_theory.cas.simplex_weights import phase_of, simplex_self_weight


def test_every_simplex_function_describes_the_shared_parameters_as_the_table():
    siblings = SIMPLEX.siblings()
    assert {"simplex_self_weight", "critical_gamma", "phase_of", "simplex_sparsity",
            "transition_width", "simplex_inner_product", "simplex_limit", "jacobian_limit",
            "simplex_eta", "critical_eta_excess", "check_rho", "check_n"} <= \
        {f.__name__ for f in siblings}
    assert SIMPLEX.check() == []
    for function in siblings:
        assert not PLACEHOLDER.search(function.__doc__), function.__name__


def test_the_entries_read_as_the_table_wrote_them():
    rho = "The off-diagonal inner product of the simplex, in ``(0, 1)``."
    assert parameter_entries(simplex_self_weight.__doc__)["rho"] == ("float or array_like", rho)
    assert parameter_entries(phase_of.__doc__)["rho"] == ("float", rho)  # scalars only
    assert parameter_entries(simplex_limit.__doc__)["q"] == (
        "float or array_like, optional", "The tokens' squared norm, ``> 0``.")
    entries = parameter_entries(simplex_eta.__doc__)
    assert list(entries) == ["n", "d", "gamma", "rho", "alpha", "q"]  # the signature's order


def test_a_simplex_function_with_its_own_rho_is_reported():
    """Negative control: phase_of as it was described before the table."""
    old = phase_of.__doc__.replace(
        "The off-diagonal inner product of the simplex, in ``(0, 1)``.", "In ``(0, 1)``.")
    [message] = SIMPLEX.disagreements(phase_of, old)
    assert message.startswith("phase_of: rho is described as 'In ``(0, 1)``.'")
