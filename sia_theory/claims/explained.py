"""Earlier DIVERGES rows that a published 2026 result now explains: the sentence the row's
decision function adds to its detail, with the citation (THEORY.md §8).

Only the abstracts of both papers are public; each sentence quotes what the abstract states
and says what is derived here. Rows the 2026 results do not explain get no sentence: EXT-5
(LogN's entropy turns over where ``s log N`` meets the finite-``N`` location ``a_N`` of the
maximum, 15 % below ``√(2 log N)``: the gap-counting scale of arXiv 2605.12697 is a scale up to
constants, and a constant factor is all that separates the two) and CAS-8 (the super-critical
drift across layers; arXiv 2605.08505's backward heat equation is the sub-critical layer with
``V = I``).
"""

from __future__ import annotations

import math

from sia_theory.cas.tokens import token_distance_constant
from sia_theory.sphere.model import DistanceLaw, critical_beta

from .sphere import BANDS

__all__ = ["BRUNO_2026", "HAYASE_2026", "low_d_exponent", "sub_critical_average", "NEAR_LAW"]

BRUNO_2026 = ("Bruno, Chen, Lin, Polyanskiy, Rigollet, 'Scaling Limits of Long-Context "
              "Transformers', arXiv 2605.08505 (2026; abstract only)")
"""The citation of the sphere result."""
HAYASE_2026 = ("Hayase, Karakida, 'A Unified Framework for Critical Scaling of Inverse "
               "Temperature in Self-Attention', arXiv 2605.12697 (2026; abstract only)")
"""The citation of the gap-counting result."""
NEAR_LAW = 0.05  # EXT-4: the neighbouring laws n^{(1 ± 0.05)·2/(d−1)} the interval must refuse
"""EXT-4: :func:`low_d_exponent` cites the law only if the 95 % interval of the low-``d``
exponent holds ``2/(d − 1)`` and excludes ``(1 ± NEAR_LAW)·2/(d − 1)``."""


def low_d_exponent(d: int, p: float, ci_low: float, ci_high: float) -> str:
    """EXT-4's sentence for its low-``d`` class.

    The gate: ``2/(d − 1)`` inside the 95 % interval of the measured exponent and the laws
    :data:`NEAR_LAW` (5 %) either side of it outside, at ``d = 2``. There the law has no
    finite-``n`` drift to allow for: at ``β = λβ*_n`` the weights converge to a scale-free
    Poisson limit (:mod:`sia_theory.sphere.model`), so ``β₅₀/n^{2/(d−1)}`` is the same at every
    ``n`` up to corrections of the order of the nearest key's chordal distance squared
    (``~n^{−2/(d−1)}``: ``1e-5`` at ``d = 2, n = 256``, but about 0.2 at ``d = 8``, whose
    cosine-conditioned exponent 0.308 [0.300, 0.317] is 8 % above 2/7, so the gate is not applied
    there); the ``d = 2`` interval is the draws' scatter alone. EXT-4 passes the
    exponent given each draw's realised mean cosine (``summarize_universality``'s
    ``power_given_cosine``), which removes the scatter of the shared ``z_0``.

    Parameters
    ----------
    d : int
        The token dimension (keys on ``S^{d−1}``), ``>= 2``.
    p, ci_low, ci_high : float
        The measured exponent of ``β₅₀ ∝ n^p`` and its 95 % interval.

    Returns
    -------
    str
        The sentence citing :data:`BRUNO_2026`, or ``""`` if the interval misses ``2/(d − 1)`` or
        holds a law 5 % off it (then the measurement does not single out the published law).

    Examples
    --------
    >>> "2605.08505" in low_d_exponent(2, 2.00, 1.97, 2.03), low_d_exponent(2, 1.0, 0.9, 1.1)
    (True, '')
    >>> low_d_exponent(2, 2.05, 1.89, 2.20)  # holds 2.1 and 1.9 as well as 2
    ''
    """
    if isinstance(d, bool) or not isinstance(d, int) or d < 2:
        raise ValueError(f"d must be an integer >= 2 (keys on S^(d-1) with d - 1 >= 1), got {d!r}")
    law = 2 / (d - 1)
    near = ((1 - NEAR_LAW) * law, (1 + NEAR_LAW) * law)
    if not (ci_low <= law <= ci_high and near[0] < ci_low and ci_high < near[1]):
        return ""
    return (f"Consistent with {BRUNO_2026}: the abstract states that the critical inverse "
            "temperature is set by the local exponent of the query–key distance law near 0, "
            f"β*_n ≍ n^{{2/(d−1)}} for keys uniform on S^{{d−1}}. CAS's d = {d} tokens, "
            f"normalised, lie on S^{d - 1} with a positive density near every query (local "
            f"exponent d − 1 = {d - 1}; the density sets the constant, not the exponent), so "
            f"low d is not O(1) but β₅₀ ∝ n^{law:.3g}: measured n^{p:.3f} "
            f"[{ci_low:.3f}, {ci_high:.3f}] given each draw's realised mean cosine, which excludes "
            f"n^{near[0]:.3g} and n^{near[1]:.3g} ({NEAR_LAW:.0%} off; figure ext_phase_plane; "
            "claims SPH-1, SPH-2).")


def sub_critical_average(d: int, beta50_by_n: dict, rho: float) -> str:
    """CAS-5's sentence for its low-``d`` panel, whose output-cosine midpoint stays O(1), when
    the numbers put it in the sub-critical regime.

    The gate holds ``β₅₀`` against ``β*_n`` of the tokens' own distance law: local exponent
    ``k = d − 1`` and the constant ``c`` of CAS's near-simplex tokens at nominal cosine ``ρ``
    (:func:`~sia_theory.cas.tokens.token_distance_constant`; ``0.703`` at ``d = 2, ρ = ½``
    against ``1/π`` for uniform keys on the circle), ``β*_n = (c 2^{k/2} n)^{2/k}``.

    Parameters
    ----------
    d : int
        The token dimension, in ``[2, 16]``.
    beta50_by_n : dict
        ``n -> median β₅₀`` (non-finite values ignored, at least one finite).
    rho : float
        The panel's nominal cosine, in ``(0, 0.95]``.

    Returns
    -------
    str
        The sentence citing :data:`BRUNO_2026`, with the tokens' ``β*_n`` and the largest
        ``β₅₀/β*_n``; ``""`` when that ratio exceeds SPH-3's sub-critical band
        (``β = 0.01·β*_n``, where the nearest key holds at most 5 % of the mass): then the
        published sub-critical result does not explain the row.

    Raises
    ------
    ValueError
        If ``d`` or ``rho`` is out of range or ``beta50_by_n`` holds no finite value.

    Examples
    --------
    >>> "β₅₀/β*_n ≤ 0.00017" in sub_critical_average(2, {128: 2.72, 512: 2.72}, 0.5)
    True
    >>> sub_critical_average(2, {128: 2.72, 512: 8000.0}, 0.5)  # 0.03·β*_n: above the band
    ''
    """
    if isinstance(d, bool) or not isinstance(d, int) or d < 2:
        raise ValueError(f"d must be an integer >= 2 (keys on S^(d-1) with d - 1 >= 1), got {d!r}")
    finite = {n: b for n, b in (beta50_by_n or {}).items() if math.isfinite(b)}
    if not finite:
        raise ValueError(f"beta50_by_n must hold at least one finite β₅₀, got {beta50_by_n!r}")
    k, c = d - 1, token_distance_constant(d, rho)
    worst = max(b / critical_beta(k, c, n) for n, b in finite.items())
    if worst > BANDS["sub-critical"]:
        return ""
    lo, hi = min(finite), max(finite)
    ratio = (f" Here the tokens' own distance law (ρ = {rho:g}) has local exponent {k} and "
             f"P(r ≤ x) ~ {c:.3g}·x^{k} (uniform keys: {DistanceLaw.uniform(d).c:.3g}), "
             f"so β*_n = {critical_beta(k, c, lo):.3g} … {critical_beta(k, c, hi):.3g} for "
             f"n = {lo} … {hi} and β₅₀/β*_n ≤ {worst:.2g}, below SPH-3's sub-critical band "
             f"({BANDS['sub-critical']:g}·β*_n).")
    return (f"Consistent with {BRUNO_2026}: the abstract states β*_n ≍ n^{{2/(d−1)}} "
            f"(n^{2 / (d - 1):g} for d = {d}) and that below it the attention output reduces to "
            "a local average around the query with an explicit deterministic bias and Gaussian "
            "fluctuations. "
            "The O(1) midpoint lies deep in that sub-critical regime: with weights "
            "∝ e^{β cos θ} ≈ e^{β} e^{−βθ²/2} each output averages its keys over an angle "
            "∝ β^{−1/2} whatever n (derived here), so the outputs' mean cosine reaches its "
            f"level at a β that does not grow with n.{ratio} The d = {d} panel is the "
            "sub-critical local "
            "average, not a smoothed version of the transition (figure ext_phase_plane).")
