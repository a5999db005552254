"""The engine for independent Gaussian logits under any transform (SI §3.2 and beyond).

Logits ``L_t = a_t X_t + m_t`` with ``X_t ~ N(0, 1)`` iid and ``(a_t, m_t)`` from any
:class:`~sia_theory.transforms.Transform`. Four routes reach the same expectations, each
returning an :class:`~.estimate.Estimate` (:func:`~.routes.expectation` in :mod:`.routes`
calls any of them; the type is in :mod:`.estimate`):

* :mod:`.closed_forms`: lognormal moment sums (SI eq. 6–7, App. B–D), octave sums, convergence;
* :mod:`.montecarlo`: brute-force sampling (numba kernels in ``_kernels``, counter-based normals
  in ``rng``, the statistics of given logits in ``range_stats``), bit-identical on any thread
  count;
* :mod:`.exact`: ``E[H]``, ``E[log Z]``, ``E[N/Z]``, masses by Laplace/Frullani integrals at a
  cost independent of the range, on the one integrator ``frullani`` (per-distance factors in
  ``laplace``, the distance sums in ``quadrature``);
* :mod:`.asymptotic` (with ``tails``): a sampler whose cost per sample is flat to ``t = 1e30``.

Around them: :mod:`.entropy` and :mod:`.laws` (entropy in range and its growth law),
:mod:`.family` (the trichotomy in ``c`` of the SI family), :mod:`.phase` (the REM freezing point
of any transform and the zoo), :mod:`.needle`, :mod:`.needle_theory`, :mod:`.needle_montecarlo`
(needle retrieval). Modules load on first use; this package imports nothing.
"""
