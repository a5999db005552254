"""The parameters that sibling functions of the CAS engine share, each described once
(:mod:`sia_theory._infra.docstrings`: a ``{name}`` line in a docstring stands for the entry).

* :data:`SIMPLEX`: the exact simplex (``simplex_weights``, ``simplex``, ``simplex_jacobian``).
"""

from __future__ import annotations

from .._infra.docstrings import ParameterTable

SIMPLEX = ParameterTable("simplex", [
    "sia_theory.cas.simplex_weights", "sia_theory.cas.simplex", "sia_theory.cas.simplex_jacobian",
], {
    "n": ("int or array_like", "The number of tokens, an integer ``>= 2``."),
    "gamma": ("float or array_like", r"The scale exponent ``γ >= 0`` "
              r"(:math:`\beta = \gamma \log n`)."),
    "rho": ("float or array_like", "The off-diagonal inner product of the simplex, in "
            "``(0, 1)``."),
    "alpha": ("float or array_like", "The residual weight, ``>= 0``."),
    "q": ("float or array_like", "The tokens' squared norm, ``> 0``."),
})
"""``n`` tokens on the exact simplex (inner products ``ρ``), one CAS layer at scale ``γ``
with residual ``α``."""
