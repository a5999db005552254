"""Closed-form expectations for Gaussian base logits (SI §3.2, App. B and D).

With ``L_t = a_t L̄_t + m_t`` and ``L̄_t ~ N(0, 1)`` iid, every range expectation is a sum of
lognormal moments. The moment functions, the digamma range sums and their limits are printed
from the sympy derivations of :mod:`sia_theory.symbolic.si` into
:mod:`sia_theory.symbolic.generated` (no sympy at run time), and the coefficients come from the
transform object, so these functions work for any :class:`~sia_theory.transforms.Transform`.
``n_ctx`` and a head ``h`` are passed to the transform's ``coefficients`` (a transform whose
``depends_on`` contains ``"context"`` or ``"head"`` and is not given it says so); ``h`` is
checked against the transform's ``n_heads``; the exact SI sums need its declared ``power_law``.

Sums are taken in log space from the transform's ``log_moments`` (log-sum-exp shifted by the
largest term), so a finite answer is returned even when single terms ``e^{m + a²/2}``
overflow; an answer that itself exceeds float64 raises ``ValueError`` (and
:func:`expected_log_total_attention` gives its logarithm).
"""

from __future__ import annotations

import numpy as np

from .._infra.docstrings import shared_parameters
from .._infra.validate import check_int
from ..symbolic import generated
from ..transforms import ScaleInvariant, Transform, declared_dependence
from ._parameters import RANGE
from .octaves import CONVERGENCE_ATOL, CONVERGENCE_RTOL, convergence, octave_starts

__all__ = [
    "check_range",
    "expected_total_attention",
    "expected_log_total_attention",
    "expected_negentropy",
    "plug_in_entropy",
    "scale_invariant_total_attention",
    "scale_invariant_negentropy",
    "scale_invariant_limits",
    "octave_starts",
    "octave_closed_forms",
    "convergence",
    "CONVERGENCE_RTOL",
    "CONVERGENCE_ATOL",
]


@shared_parameters(RANGE)
def check_range(t1, t2, n_ctx=None) -> tuple[int, int, int | None]:
    """Validate a distance range ``[t1, t2)``.

    Parameters
    ----------
    {t1, t2, n_ctx}

    Returns
    -------
    tuple
        ``(t1, t2, n_ctx)`` as ints (``n_ctx`` None when not given).

    Raises
    ------
    ValueError
        Naming the argument that is out of range.
    """
    n_ctx = None if n_ctx is None else check_int("n_ctx", n_ctx, lo=1)
    t1 = check_int("t1", t1, lo=0)
    t2 = check_int("t2", t2, lo=t1 + 1, hi=n_ctx)
    return t1, t2, n_ctx


# Range sums are streamed over chunks of distances (memory stays flat); a range longer than
# MAX_DISTANCES would take minutes (about 25 ns per distance: 1e9 distances about 30 s) and is
# refused upfront.
CHUNK = 2**20
MAX_DISTANCES = 2**32
_LOG_MAX_FLOAT = float(np.log(np.finfo(np.float64).max))


def _range_moments(transform: Transform, t1, t2, n_ctx, h):
    """``(log_max, total, tilted)``: ``Σ_t E[e^{L_t}] = e^{log_max}·total`` and
    ``Σ_t E[L_t e^{L_t}] = e^{log_max}·tilted`` over ``t`` in ``[t1, t2)``, summed in chunks
    with a running maximum (so ``total >= 1`` and nothing overflows)."""
    if not isinstance(transform, Transform):
        raise ValueError(f"transform must be a sia_theory Transform, got {transform!r}")
    t1, t2, n_ctx = check_range(t1, t2, n_ctx)
    if t2 - t1 > MAX_DISTANCES:
        raise ValueError(f"t2 - t1 must be at most {MAX_DISTANCES} distances (a closed-form sum "
                         f"over more takes minutes; for a transform with a power_law use "
                         f"scale_invariant_total_attention), got t2 - t1 = {t2 - t1}")
    if h is not None and "head" in declared_dependence(transform):
        h = check_int("h", h, lo=0, hi=None if transform.n_heads is None
                      else transform.n_heads - 1)
    log_max, total, tilted = -np.inf, 0.0, 0.0
    for start in range(t1, t2, CHUNK):
        t = np.arange(start, min(start + CHUNK, t2))  # (chunk,)
        log_w, tilt = transform.log_moments(t, n_ctx, h)  # (chunk,) each
        if not (np.all(np.isfinite(log_w)) and np.all(np.isfinite(tilt))):
            raise ValueError(f"transform {transform!r} gives non-finite log moments m + a^2/2, "
                             f"m + a^2 on [{t1}, {t2}) (its coefficients overflow float64)")
        chunk_max = float(np.max(log_w))
        if chunk_max > log_max:  # re-express the running sums relative to the new maximum
            scale = np.exp(log_max - chunk_max)
            total, tilted, log_max = total * scale, tilted * scale, chunk_max
        shifted = np.exp(log_w - log_max)  # (chunk,) <= 1
        total += float(np.sum(shifted))
        tilted += float(np.sum(tilt * shifted))
    return log_max, total, tilted


def _finite(name: str, value: float, hint: str) -> float:
    if not np.isfinite(value):
        raise ValueError(f"{name} overflows float64 for these arguments ({hint})")
    return float(value)


@shared_parameters(RANGE)
def expected_log_total_attention(transform: Transform, t1, t2, n_ctx=None, h=None) -> float:
    r""":math:`\log \mathbb{E}[Z_{t_1}^{t_2}] = \operatorname{logsumexp}_t (m_t + a_t^2/2)` (SI eq.
    6, App. B) in log space: finite whenever the coefficients are, even where ``E[Z]`` itself
    overflows float64.

    Parameters
    ----------
    {transform, t1, t2, n_ctx, h}

    Returns
    -------
    float

    Raises
    ------
    ValueError
        As :func:`expected_total_attention`, except that a large answer is no error.

    Examples
    --------
    >>> from sia_theory import NoScale, expected_log_total_attention
    >>> round(expected_log_total_attention(NoScale(), 0, 10**6), 9)  # log(10⁶·e^{1/2})
    14.315510558
    """
    log_max, total, _ = _range_moments(transform, t1, t2, n_ctx, h)
    return log_max + float(np.log(total))


@shared_parameters(RANGE)
def expected_total_attention(transform: Transform, t1, t2, n_ctx=None, h=None) -> float:
    """``E[Z_{t1}^{t2}] = Σ_{t=t1}^{t2-1} E[e^{L_t}] = Σ exp(m_t + a_t²/2)`` (SI eq. 6, App. B).

    ``n_ctx`` (the number of keys the query sees) is needed when ``transform.depends_on``
    contains ``"context"`` (e.g. :class:`~sia_theory.transforms.LogN`), the head index ``h``
    when it contains ``"head"`` (e.g. ALiBi with one slope per head). Summed in log space; if
    the answer exceeds float64, ``ValueError`` (use :func:`expected_log_total_attention`).

    Parameters
    ----------
    {transform}
        Its ``log_moments`` give ``m_t + a_t²/2``.
    {t1, t2}
        At most ``2**32`` distances here, summed at about 25 ns a distance
        on one core (measured: 1e7 distances 0.27 s; 1e9 about 30 s; ``2**32`` about 2 minutes).
    {n_ctx, h}

    Returns
    -------
    float
        ``E[Z_{t1}^{t2}]``.

    Raises
    ------
    ValueError
        If ``transform`` is not a Transform, the range, ``n_ctx`` or ``h`` is out of bounds,
        a transform that needs ``n_ctx`` or ``h`` is not given it, the coefficients overflow,
        or the answer exceeds float64.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.special import digamma
    >>> from sia_theory import NoScale, ScaleInvariant, expected_total_attention
    >>> round(expected_total_attention(NoScale(), 0, 100), 6)  # 100·e^{1/2}: E[e^L] for L ~ N(0, 1)
    164.872127
    >>> si = ScaleInvariant(tau=10)  # E[e^{L_t}] = α/(t/τ + 1), summed: ατ[ψ(t2+τ) − ψ(t1+τ)]
    >>> exact = si.alpha * 10 * (digamma(20 + 10) - digamma(10 + 10))
    >>> bool(np.isclose(expected_total_attention(si, 10, 20), exact, rtol=1e-12))
    True
    """
    log_z = expected_log_total_attention(transform, t1, t2, n_ctx, h)
    if log_z > _LOG_MAX_FLOAT:
        raise ValueError(f"E[Z] overflows float64 for these arguments (log E[Z] = {log_z:.6g}); "
                         "use expected_log_total_attention")
    return float(np.exp(log_z))


@shared_parameters(RANGE)
def expected_negentropy(transform: Transform, t1, t2, n_ctx=None, h=None) -> float:
    r""":math:`E[N_{t_1}^{t_2}] = \sum_t E[e^{L_t} L_t] = \sum_t (m_t + a_t^2)\, e^{m_t + a_t^2/2}`
    (SI eq. 7), summed with the weights shifted by the largest; ``ValueError`` if it exceeds
    float64.

    Parameters
    ----------
    {transform, t1, t2, n_ctx, h}

    Returns
    -------
    float

    Raises
    ------
    ValueError
        As :func:`expected_total_attention`.

    Examples
    --------
    >>> from sia_theory import NoScale, expected_negentropy
    >>> round(expected_negentropy(NoScale(), 0, 100), 9)  # 100·E[L e^L] = 100·e^{1/2}, L ~ N(0, 1)
    164.87212707
    """
    log_max, _, inner = _range_moments(transform, t1, t2, n_ctx, h)
    with np.errstate(over="ignore"):
        value = np.exp(log_max) * inner if inner else 0.0
    return _finite("E[N]", value, f"log of the largest weight = {log_max:.6g}")


@shared_parameters(RANGE)
def plug_in_entropy(transform: Transform, t1, t2, n_ctx=None, h=None) -> float:
    """Law-of-large-numbers approximation ``log E[Z] − E[N]/E[Z]`` of ``E[H_{t1}^{t2}]``.

    Exact in the limit of a long range of light-tailed weights; for no transform it gives
    ``log(t2 − t1) − 1/2``. It is *not* accurate for the scale-invariant transform, whose
    weights are heavy-tailed at large ``t`` — that gap is what SI Fig. 2 is about. Computed in
    log space (``E[N]/E[Z]`` is a weighted mean of ``m_t + a_t²``), so it is finite whenever the
    coefficients are.

    Parameters
    ----------
    {transform, t1, t2, n_ctx, h}

    Returns
    -------
    float

    Raises
    ------
    ValueError
        As :func:`expected_log_total_attention`.

    Examples
    --------
    >>> from sia_theory import NoScale, plug_in_entropy
    >>> round(plug_in_entropy(NoScale(), 0, 100), 9)  # log(t2 − t1) − 1/2 = log 100 − 1/2
    4.105170186
    """
    log_max, total, tilted = _range_moments(transform, t1, t2, n_ctx, h)
    return float(log_max + np.log(total) - tilted / total)


def _power_law(transform) -> tuple[float, float, float]:
    """``(alpha, beta, tau)`` of a transform that satisfies SI eq. 15 exactly (its declared
    ``power_law``), else ``ValueError``."""
    if not isinstance(transform, Transform):
        raise ValueError(f"transform must be a sia_theory Transform, got {transform!r}")
    law = transform.power_law
    if law is None:
        raise ValueError("transform must satisfy SI eq. 15 exactly (declare power_law = "
                         f"(alpha, beta, tau), as ScaleInvariant does), got {transform!r}")
    return law


@shared_parameters(RANGE)
def scale_invariant_total_attention(transform: ScaleInvariant, t1, t2) -> float:
    r"""Exact :math:`\mathbb{E}[Z_{t_1}^{t_2}] = \alpha \tau [\psi(t_2+\tau) - \psi(t_1+\tau)]` for
    the SI transform (eq. 15a summed with the digamma telescoping identity of
    :func:`sia_theory.symbolic.si.exact_range_sum`).

    An independent route to :func:`expected_total_attention`: it never evaluates ``a_t, m_t``.
    Any transform that declares ``power_law = (alpha, beta, tau)`` is accepted.

    Parameters
    ----------
    {transform}
        It must declare ``power_law`` (e.g. :class:`~sia_theory.transforms.ScaleInvariant`).
    {t1, t2}

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If the transform declares no ``power_law``, the range is not ``0 <= t1 < t2``, or the
        answer exceeds float64.

    Examples
    --------
    >>> import math
    >>> from sia_theory import ScaleInvariant, expected_total_attention
    >>> from sia_theory import scale_invariant_total_attention as exact_z
    >>> si = ScaleInvariant(tau=10)
    >>> math.isclose(exact_z(si, 10, 20), expected_total_attention(si, 10, 20), rel_tol=1e-12)
    True
    """
    alpha, _, tau = _power_law(transform)
    t1, t2, _ = check_range(t1, t2)
    return _finite("E[Z]", alpha * generated.si_range_sum(t1, t2, tau), f"alpha = {alpha!r}")


@shared_parameters(RANGE)
def scale_invariant_negentropy(transform: ScaleInvariant, t1, t2) -> float:
    r"""Exact :math:`\mathbb{E}[N_{t_1}^{t_2}] = \beta \tau [\psi(t_2+\tau) - \psi(t_1+\tau)]` (eq.
    15b summed).

    Parameters
    ----------
    {transform}
        It must declare ``power_law`` (e.g. :class:`~sia_theory.transforms.ScaleInvariant`).
    {t1, t2}

    Returns
    -------
    float

    Raises
    ------
    ValueError
        As :func:`scale_invariant_total_attention`.

    Examples
    --------
    >>> import math
    >>> from sia_theory import ScaleInvariant, expected_negentropy, scale_invariant_negentropy
    >>> si = ScaleInvariant(tau=10)
    >>> math.isclose(scale_invariant_negentropy(si, 10, 20), expected_negentropy(si, 10, 20),
    ...              rel_tol=1e-12)
    True
    """
    _, beta, tau = _power_law(transform)
    t1, t2, _ = check_range(t1, t2)
    return _finite("E[N]", beta * generated.si_range_sum(t1, t2, tau), f"beta = {beta!r}")


@shared_parameters(RANGE)
def scale_invariant_limits(transform: ScaleInvariant, delta) -> tuple[float, float]:
    """``(lim E[Z_t^{tΔ}], lim E[N_t^{tΔ}])`` as ``t → ∞``: ``(ατ log Δ, βτ log Δ)`` (SI-4/5),
    evaluated from the symbolic squeeze limits of :func:`sia_theory.symbolic.si.range_sum_limits`
    (printed into :mod:`sia_theory.symbolic.generated`).

    Parameters
    ----------
    {transform}
        It must declare ``power_law`` (e.g. :class:`~sia_theory.transforms.ScaleInvariant`).
    delta : int
        The range ratio ``Δ >= 2``.

    Returns
    -------
    (float, float)

    Raises
    ------
    ValueError
        If the transform declares no ``power_law``, ``delta`` is not an integer >= 2, or a
        limit exceeds float64.

    Examples
    --------
    >>> from sia_theory import ScaleInvariant, scale_invariant_limits
    >>> [round(x, 6) for x in scale_invariant_limits(ScaleInvariant(tau=10), 2)]  # α = β = e^½
    [11.428065, 11.428065]
    """
    alpha, beta, tau = _power_law(transform)
    delta = float(check_int("delta", delta, lo=2))
    return (_finite("lim E[Z]", generated.si_total_attention_limit(alpha, tau, delta), "alpha"),
            _finite("lim E[N]", generated.si_negentropy_limit(beta, tau, delta), "beta"))


# --- octave sums and their convergence (SI Defs. 3.1–3.2) ---------------------------------

@shared_parameters(RANGE)
def octave_closed_forms(transform: Transform, t_values):
    """``E[Z_t^{2t}]``, ``E[N_t^{2t}]`` for each ``t`` of a transform that does not depend on the
    context (wrap others with :func:`at_context`).

    Parameters
    ----------
    {transform}
        Its coefficients must not depend on the context.
    t_values : iterable of int
        Octave starts.

    Returns
    -------
    pandas.DataFrame
        Columns ``t, t2, EZ, EN``.
    """
    import pandas as pd  # start-up: pandas (0.25 s), only for the table

    rows = [{"t": int(t), "t2": 2 * int(t), "EZ": expected_total_attention(transform, t, 2 * t),
             "EN": expected_negentropy(transform, t, 2 * t)} for t in t_values]
    return pd.DataFrame(rows)
