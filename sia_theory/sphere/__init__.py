"""Attention with bounded scores on the sphere (arXiv 2605.08505): a fixed query, ``n`` iid keys
on ``S^{d−1}``, scores ``β·cos``; the critical scale ``β*_n ∝ n^{2/k}`` set by the local exponent
``k`` of the query–key distance law (``k = d − 1`` for uniform keys).

Modules: :mod:`.model` (the distance law, exact sampling of the cosines and of the nearest keys,
the order parameters, the Poisson-process derivation) and :mod:`.routes` (Monte Carlo and the
extreme-value route, each an :class:`~sia_theory.gaussian.estimate.Estimate`). The
gap-counting diagnostic that measures ``β_c(n)`` from any scores is :mod:`sia_theory.sphere.gaps`.
The finite-``n`` prediction of the critical scale of iid rows (the hazard rule with the tail's
curvature) is :mod:`sia_theory.sphere.tails`. This package imports nothing on its own.
"""
