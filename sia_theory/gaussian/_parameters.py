"""The parameters that sibling functions of the Gaussian engine share, each described once
(:mod:`sia_theory._infra.docstrings`: a ``{name}`` line in a docstring stands for the entry).

* :data:`NEEDLE`: the needle functions (``needle``, ``needle_theory``,
  ``needle_mass_threshold``, ``needle_montecarlo``);
* :data:`RANGE`: the expectations over a distance range (``closed_forms``, ``exact``);
* :data:`MONTE_CARLO`: the sampling routes (``montecarlo``, ``asymptotic``, ``entropy``,
  ``needle_montecarlo``).
"""

from __future__ import annotations

from .._infra.docstrings import ParameterTable

_TRANSFORM = ("Transform", "The logit transform.")

NEEDLE = ParameterTable("needle", [
    "sia_theory.gaussian.needle", "sia_theory.gaussian.needle_theory",
    "sia_theory.gaussian.needle_mass_threshold", "sia_theory.gaussian.needle_montecarlo",
], {
    "transform": _TRANSFORM,
    "n_ctx": ("int", "Keys the query sees, ``N >= 2``."),
    "t": ("int", "The needle's distance from the query, ``0 <= t < n_ctx``."),
    "head": ("int", "Head index, required by a head-dependent transform."),
    "deltas": ("array_like of float", "Raises ``δ`` of the needle's base score (finite, in "
               "units of its standard deviation)."),
    "guess": ("float", "Where the bracket starts (finite)."),
})
"""The needle at distance ``t`` in a context of ``n_ctx`` keys, raised by ``δ``."""

RANGE = ParameterTable("range", [
    "sia_theory.gaussian.closed_forms", "sia_theory.gaussian.exact",
], {
    "transform": _TRANSFORM,
    "t1, t2": ("int", "The distance range ``[t1, t2)``, ``0 <= t1 < t2`` (and ``t2 <= n_ctx`` "
               "when ``n_ctx`` is given)."),
    "n_ctx": ("int", "The number of keys the query sees, ``>= 1``; required by a transform "
              "whose ``depends_on`` contains ``\"context\"`` (e.g. "
              ":class:`~sia_theory.transforms.LogN`)."),
    "h": ("int", "The head index, in ``[0, transform.n_heads − 1]``; required by a transform "
          "whose ``depends_on`` contains ``\"head\"`` (e.g. ALiBi, one slope per head)."),
})
"""A query's attention over the distances ``[t1, t2)`` of its row of ``n_ctx`` keys."""

MONTE_CARLO = ParameterTable("Monte Carlo", [
    "sia_theory.gaussian.montecarlo", "sia_theory.gaussian.asymptotic",
    "sia_theory.gaussian.entropy", "sia_theory.gaussian.needle_montecarlo",
], {
    "samples": ("int", "Monte Carlo samples, ``>= 2``."),
    "seed": ("int", "Seed of the draws, ``0 <= seed < 2**63``."),
})
"""The draws of a sampling route."""
