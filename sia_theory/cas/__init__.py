"""Critical attention scaling (CAS; Chen, Lin, Polyanskiy, Rigollet, ICLR 2026).

Modules: ``config`` (phase names, token kinds), ``simplex`` (closed forms on the exact simplex,
lambdified from :mod:`sia_theory.symbolic.cas`: the cosine, with the attention row in
``simplex_weights`` and the Jacobian norm in ``simplex_jacobian``), ``tokens`` (sampling),
``dynamics`` (the layer and its simulation), ``jacobian`` (η), ``transition`` (β₅₀ and the
near-simplex window), ``studies`` and ``studies_jacobian`` (one definition per figure and
claim). Physical parameters are keyword-only throughout.
"""
