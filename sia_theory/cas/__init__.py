"""Critical attention scaling (CAS; Chen, Lin, Polyanskiy, Rigollet, ICLR 2026).

Modules (this package imports nothing; import from them): :mod:`.config` (phase names, token
kinds), :mod:`.simplex` (closed forms on the exact simplex, lambdified from
:mod:`sia_theory.symbolic.cas`: the cosine, with the attention row from ``simplex_weights`` and
the Jacobian norm from ``simplex_jacobian``, every name importable from ``simplex``),
:mod:`.tokens` (sampling and the tokens' distance law), :mod:`.dynamics` (the layer of
``layer`` and its simulation over depth), :mod:`.jacobian` (η), :mod:`.transition` (β₅₀ and
the near-simplex window) and :mod:`.universality` (one phase diagram for iid, simplex and
near-simplex tokens). The figures' studies are in :mod:`sia_theory.studies`. Physical
parameters are keyword-only throughout.
"""
