"""Numeric closed forms printed from :mod:`sia_theory.symbolic.si` (sympy derivations).

DO NOT EDIT: regenerate with ``python -m sia_theory.symbolic.codegen``.
``tests/symbolic/test_codegen.py`` re-derives every expression and fails if this file differs
from the generator's output. Numpy
only at import (scipy is imported inside the one function that needs it); no sympy.
"""

import numpy

SI_BOUNDARY_ALPHA = 1.6487212707001282
"""alpha of a_0 = 1, m_0 = 0 (SI §3.3): exp(1/2)."""
SI_BOUNDARY_BETA = 1.6487212707001282
"""beta of a_0 = 1, m_0 = 0 (SI §3.3): exp(1/2)."""
SI_VALIDITY_CONDITION = 'beta >= alpha*log(alpha)'
"""SI eq. 16 validity, as text."""


def si_a2(t, tau, alpha, beta):
    """SI eq. 16 variance a_t^2, solved from eq. 15 (si.solve_coefficients).

    ``-2*log(alpha) - 2*log(tau) + 2*log(t + tau) + 2*beta/alpha``
    """
    return -2*numpy.log(alpha) - 2*numpy.log(tau) + 2*numpy.log(t + tau) + 2*beta/alpha


def si_m(t, tau, alpha, beta):
    """SI eq. 16 mean m_t, solved from eq. 15 (si.solve_coefficients).

    ``2*log(alpha) + 2*log(tau) - 2*log(t + tau) - beta/alpha``
    """
    return 2*numpy.log(alpha) + 2*numpy.log(tau) - 2*numpy.log(t + tau) - beta/alpha


def si_log_weight_mean(t, tau, alpha, beta):
    """log E[e^L_t] = m_t + a_t^2/2 simplified (no cancellation; SI eq. 15a).

    ``log(alpha) + log(tau) - log(t + tau)``
    """
    return numpy.log(alpha) + numpy.log(tau) - numpy.log(t + tau)


def si_tilted_logit_mean(t, tau, alpha, beta):
    """E[L_t e^L_t]/E[e^L_t] = m_t + a_t^2 simplified (SI eq. 15b / 15a).

    ``beta/alpha``
    """
    return beta/alpha


def si_beta_min(alpha):
    """Smallest beta with a_t^2 >= 0 for all t >= 0 (si.validity_condition).

    ``alpha*log(alpha)``
    """
    return alpha*numpy.log(alpha)


def si_is_valid(alpha, beta):
    """SI eq. 16 validity condition on (alpha, beta) (si.validity_condition).

    ``beta >= alpha*log(alpha)``
    """
    return numpy.greater_equal(beta, alpha*numpy.log(alpha))


def lognormal_weight_mean(a2, m):
    """E[e^L] for L ~ N(m, a2) (si.lognormal_moments, SI App. B).

    ``exp(a2/2 + m)``
    """
    return numpy.exp((1/2)*a2 + m)


def lognormal_negentropy_mean(a2, m):
    """E[L e^L] for L ~ N(m, a2) (si.lognormal_moments, SI App. B).

    ``(a2 + m)*exp(a2/2 + m)``
    """
    return (a2 + m)*numpy.exp((1/2)*a2 + m)


def lognormal_log_weight_mean(a2, m):
    """log E[e^L] for L ~ N(m, a2) (si.lognormal_moments; log space).

    ``a2/2 + m``
    """
    return (1/2)*a2 + m


def lognormal_tilted_mean(a2, m):
    """E[L e^L]/E[e^L] for L ~ N(m, a2) (si.lognormal_moments).

    ``a2 + m``
    """
    return a2 + m


def si_range_sum(t1, t2, tau):
    """Sum_{s=t1}^{t2-1} 1/(s/tau+1) by digamma telescoping (si.exact_range_sum).

    ``tau*(-polygamma(0, t1 + tau) + polygamma(0, t2 + tau))``
    """
    import scipy.special
    return tau*(-scipy.special.digamma(t1 + tau) + scipy.special.digamma(t2 + tau))


def si_total_attention_limit(alpha, tau, Delta):
    """lim_{t->oo} E[Z_t^{t Delta}] (si.range_sum_limits, SI Lemma 3.2).

    ``alpha*tau*log(Delta)``
    """
    return alpha*tau*numpy.log(Delta)


def si_negentropy_limit(beta, tau, Delta):
    """lim_{t->oo} E[N_t^{t Delta}] (si.range_sum_limits, SI Lemma 3.2').

    ``beta*tau*log(Delta)``
    """
    return beta*tau*numpy.log(Delta)
