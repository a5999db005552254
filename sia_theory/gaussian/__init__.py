"""The engine for independent Gaussian logits under any transform (SI §3.2 and beyond).

Logits ``L_t = a_t X_t + m_t`` with ``X_t ~ N(0, 1)`` iid and ``(a_t, m_t)`` from any
:class:`~sia_theory.transforms.Transform`. Four routes reach the same expectations, each
returning an :class:`~.estimate.Estimate` (``routes.expectation`` calls any of them):

* ``closed_forms``: lognormal moment sums (SI eq. 6–7, App. B–D), octave sums, convergence;
* ``montecarlo``: brute-force sampling (numba kernels in ``_kernels``, counter-based normals in
  ``rng``, the statistics of given logits in ``range_stats``), bit-identical on any thread count;
* ``exact``: ``E[H]``, ``E[log Z]``, ``E[N/Z]``, masses by Laplace/Frullani integrals at a cost
  independent of the range, on the one integrator ``frullani`` (per-distance factors in
  ``laplace``, the distance sums in ``quadrature``);
* ``asymptotic`` (with ``tails``): a sampler whose cost per sample is flat to ``t = 1e30``.

Around them: ``entropy`` and ``laws`` (entropy in range and its growth law), ``family`` (the
trichotomy in ``c`` of the SI family), ``phase`` (the REM freezing point of any transform and
the zoo), ``needle``, ``needle_theory``, ``needle_montecarlo`` (needle retrieval). Modules load
on first use; this package imports nothing.
"""
