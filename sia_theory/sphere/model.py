"""Bounded scores on the sphere: a fixed query, ``n`` iid keys, scores ``β·cos`` (Bruno, Chen,
Lin, Polyanskiy, Rigollet, arXiv 2605.08505; only the abstract is public).

**The distance law.** Query ``q`` and key ``x`` on ``S^{d−1}`` at chordal distance ``r``:
``r² = |q − x|² = 2(1 − cos)``, so the score gap from the best possible key is
``u = 1 − cos = r²/2``. For uniform keys ``(1 + cos)/2 ~ Beta((d−1)/2, (d−1)/2)`` (the density
of ``cos`` is ``∝ (1 − t²)^{(d−3)/2}``), so ``B = u/2 ~ Beta((d−1)/2, (d−1)/2)``: one Beta draw
per key is an exact sample of its score, whatever ``d`` (:func:`sample_cosines`; the d-vector
path :func:`sample_cosines_by_vectors` is the slow obvious reference). :class:`DistanceLaw`
generalises it to ``B ~ Beta(k/2, b)``: then ``P(r ≤ ρ) = P(B ≤ ρ²/4) ~ c ρ^k`` with
``c = 4^{−k/2}/((k/2)·B(k/2, b))`` — the *local exponent* ``k`` of the distance law near 0
(``k = d − 1`` for uniform keys, ``b = (d−1)/2``).

**The critical scale.** ``P(u ≤ x) = F(x) ~ C x^{k/2}`` with ``C = c·2^{k/2}``. The rescaled
gaps ``v_j = (Cn)^{2/k} u_j`` have ``E #{v_j ≤ v} = n F(v (Cn)^{−2/k}) → v^{k/2}``: the point
process ``{v_j}`` converges to a Poisson process on ``[0, ∞)`` with intensity
``(k/2) v^{k/2 − 1} dv``, i.e. ``v_(i) = Γ_i^{2/k}`` with ``Γ_i`` the arrival times of a
unit-rate Poisson process. The weights are ``p_j ∝ e^{β cos_j} ∝ e^{−β u_j}``; with
``β = λ β*_n`` and

    β*_n = (C n)^{2/k}   (∝ n^{2/k} = n^{2/(d−1)} for uniform keys)

(:meth:`DistanceLaw.critical_beta`) they converge to ``p_i = e^{−λ Γ_i^{2/k}}/Σ_l e^{−λ Γ_l^{2/k}}``
(the sum converges a.s.): a finite set of nearest keys keeps the mass (critical). ``λ → 0``
(``β ≪ β*_n``): the mass spreads over ``~λ^{−k/2}`` keys, a local average around ``q``
(sub-critical); ``λ → ∞``: all mass on the nearest key (super-critical). Because ``β·u`` only
sees ``u ~ n^{−2/k}``, only the local exponent matters, not the global shape ``b``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from .._infra.memory import check_memory
from .._infra.validate import check_finite_array, check_int, check_real
from ..cas.tokens import check_rng, normalise_rows
from ..sphere.gaps import top_scores

__all__ = ["DistanceLaw", "critical_beta", "sample_cosines", "sample_cosines_by_vectors",
           "top_cosines", "order_parameters", "ORDER_PARAMETERS", "check_dimension"]

ORDER_PARAMETERS = ("top_mass", "share_count", "entropy")
"""Per-row order parameters: the nearest key's weight, the fewest keys holding a given share
of the mass (½ unless said), the entropy (nats)."""
K_MAX = 1e4  # local exponents beyond this have no mass near 0 at any float64 distance


def check_dimension(d) -> int:
    """``d`` as an int in ``[2, 10001]`` (the ambient dimension of ``S^{d−1}``; local exponent
    ``d − 1 <= 10⁴``).

    Parameters
    ----------
    d : int

    Returns
    -------
    int

    Raises
    ------
    ValueError
        If ``d`` is not an integer in ``[2, 10001]``.
    """
    return check_int("d", d, lo=2, hi=int(K_MAX) + 1)


def critical_beta(k, c, n) -> float:
    r"""The critical scale :math:`\beta^*_n = (C n)^{2/k}` with :math:`C = c\,2^{k/2}` for any
    distance law :math:`P(r \le \rho) \sim c\,\rho^k` near 0 (module docstring), Beta-shaped or
    not.

    Parameters
    ----------
    k : float
        The local exponent, in ``(0, K_MAX]``.
    c : float
        The constant, > 0.
    n : float
        The number of keys, >= 2.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If an argument is out of range.

    Examples
    --------
    >>> round(critical_beta(1.0, 1 / math.pi, 128), 2)  # uniform keys on S^1: (√2·128/π)²
    3320.09
    """
    k = check_real("k", k, 0.0, K_MAX, lo_open=True)
    c = check_real("c", c, 0.0, lo_open=True)
    n = check_real("n", n, 2.0)
    return _critical_beta(k, math.log(c), n, c)


def _critical_beta(k: float, log_c: float, n: float, c: float | None = None) -> float:
    """:func:`critical_beta` from ``log c`` (and ``c`` where it is a float64); ``C = c·2^{k/2}``
    is formed only while ``c``, ``2^{k/2}`` and ``C`` are float64 numbers, else in logs."""
    log_big_c = log_c + k / 2 * math.log(2)
    if -700 < log_c and k / 2 < 1000 and -700 < log_big_c < 700:  # c, 2^{k/2} and C in float64
        log_big_c = math.log((math.exp(log_c) if c is None else c) * 2 ** (k / 2))
    beta = 2 / k * (log_big_c + math.log(n))
    if beta > 709:
        raise ValueError(f"n must keep β*_n = (C n)^(2/k) within float64 for k = {k!r}, got n = "
                         f"{n!r} (log β*_n = {beta:.4g})")
    return math.exp(beta)


@dataclass(frozen=True)
class DistanceLaw:
    """The query–key distance law: ``(1 − cos)/2 ~ Beta(k/2, b)``, local exponent ``k`` of
    ``P(r ≤ ρ) ~ c ρ^k`` (module docstring). ``k`` must be finite and positive (``k = inf``: no
    mass near 0, ``ValueError``); ``b > 0``.

    Parameters
    ----------
    k : float
        The local exponent, in ``(0, K_MAX]``.
    b : float
        The second Beta parameter, > 0.

    Raises
    ------
    ValueError
        If ``k`` or ``b`` is not a finite real number in its range.

    Examples
    --------
    >>> law = DistanceLaw.uniform(4)
    >>> law.k, law.b
    (3.0, 1.5)
    >>> round(law.critical_beta(10**6) / law.critical_beta(10**3), 6) == round(1e3 ** (2 / 3), 6)
    True
    """

    k: float
    b: float

    def __post_init__(self):
        object.__setattr__(self, "k", check_real("k", self.k, 0.0, K_MAX, lo_open=True))
        object.__setattr__(self, "b", check_real("b", self.b, 0.0, lo_open=True))

    @classmethod
    def uniform(cls, d) -> DistanceLaw:
        """Uniform keys on ``S^{d−1}``: ``k = d − 1``, ``b = (d − 1)/2``."""
        d = check_dimension(d)
        return cls(d - 1.0, (d - 1) / 2)

    @property
    def log_c(self) -> float:
        """``log c`` (finite for every ``k`` and ``b`` in range, where ``c`` may not be)."""
        a = self.k / 2
        return -a * math.log(4) - math.log(a) - float(special.betaln(a, self.b))

    @property
    def c(self) -> float:
        """``c`` of ``P(r ≤ ρ) ~ c ρ^k`` (chordal distance ``r``); ``ValueError`` where it is
        beyond float64 (large ``k`` and ``b``: :meth:`critical_beta` still works)."""
        if self.log_c > 709:
            raise ValueError(f"k and b must keep c = exp({self.log_c:.4g}) within float64, got "
                             f"k = {self.k!r}, b = {self.b!r}")
        return math.exp(self.log_c)

    @property
    def C(self) -> float:  # noqa: N802 (the module docstring's constant)
        """``C`` of ``P(1 − cos ≤ x) ~ C x^{k/2}``: ``c·2^{k/2}``."""
        return self.c * 2 ** (self.k / 2)

    def critical_beta(self, n) -> float:
        """``β*_n = (C n)^{2/k}``: at ``β = λ β*_n`` the weights converge to the Poisson limit."""
        return _critical_beta(self.k, self.log_c, check_real("n", n, 2.0))

    def gap_isf(self, p) -> np.ndarray:
        """The score ``cos`` whose survival probability is ``p`` (``1 − 2·I⁻¹_p(k/2, b)``)."""
        return 1.0 - 2.0 * special.betaincinv(self.k / 2, self.b, p)


def _rows(n, rows) -> tuple[int, int]:
    return check_int("n", n, lo=2), check_int("rows", rows, lo=1)


def sample_cosines(law: DistanceLaw, n, rows, rng) -> np.ndarray:
    """Exact draws of ``cos(q, x_j)`` (module docstring): ``1 − 2·Beta(k/2, b)``.

    Parameters
    ----------
    law : DistanceLaw
    n : int
        Keys per row, ``>= 2``.
    rows : int
        ``>= 1``.
    rng : numpy.random.Generator

    Returns
    -------
    numpy.ndarray
        ``(rows, n)``.

    Raises
    ------
    ValueError
        If a count is out of range, the draws would not fit in memory, or ``rng`` is not a
        Generator.
    """
    n, rows = _rows(n, rows)
    check_memory("n", n, 16 * n)
    check_memory("rows", rows, 16 * n * rows)
    return 1.0 - 2.0 * check_rng(rng).beta(law.k / 2, law.b, size=(rows, n))


def sample_cosines_by_vectors(d, n, rows, rng) -> np.ndarray:
    """The slow obvious path for uniform keys: ``n`` normalised Gaussian vectors in ``R^d``
    against the query ``e_1`` (memory ``rows·n·d`` floats).

    Parameters
    ----------
    d : int
        As for :func:`check_dimension`.
    n, rows, rng
        As for :func:`sample_cosines`.

    Returns
    -------
    numpy.ndarray
        ``(rows, n)``.

    Raises
    ------
    ValueError
        As :func:`sample_cosines`, or for ``d`` out of range.
    """
    d = check_dimension(d)
    n, rows = _rows(n, rows)
    check_memory("n", n, 8 * n * (2 * d + rows))
    rng = check_rng(rng)
    out = np.empty((rows, n))
    for i in range(rows):
        keys, _ = normalise_rows(rng.standard_normal((n, d)))  # (n, d)
        out[i] = keys[:, 0]
    return out


def top_cosines(law: DistanceLaw, n, top_k, rows, rng) -> np.ndarray:
    """The exact ``top_k`` largest cosines of ``n`` keys
    (:func:`~sia_theory.sphere.gaps.top_scores`), any ``n`` up to ``2^62``.

    Parameters
    ----------
    law : DistanceLaw
    n : int
        Keys per row, ``>= 2``.
    top_k, rows : int
        ``>= 1``.
    rng : numpy.random.Generator

    Returns
    -------
    numpy.ndarray
        ``(rows, min(top_k, n))``, decreasing along each row.

    Raises
    ------
    ValueError
        If a count is out of range or ``rng`` is not a Generator.
    """
    n, rows = _rows(n, rows)
    return top_scores(law.gap_isf, n, top_k, rows, check_rng(rng))


def order_parameters(logits: np.ndarray, share: float = 0.5) -> dict:
    """The order parameters of ``softmax(row)`` for each row of ``logits``.

    Parameters
    ----------
    logits : numpy.ndarray
        ``(rows, n)``, finite.
    share : float
        In ``(0, 1)``.

    Returns
    -------
    dict
        ``top_mass`` (the largest weight), ``share_count`` (the fewest keys whose weights sum
        to at least ``share``) and ``entropy``, each an array ``(rows,)``.

    Raises
    ------
    ValueError
        If ``logits`` is not a finite 2-d array or ``share`` is outside ``(0, 1)``.

    Examples
    --------
    >>> import numpy as np
    >>> out = order_parameters(np.zeros((1, 4)))  # uniform over 4 keys
    >>> float(out["top_mass"][0]), float(out["share_count"][0]), round(float(out["entropy"][0]), 6)
    (0.25, 2.0, 1.386294)
    """
    logits = check_finite_array("logits", logits, ndim=2, dtype=np.float64, min_size=1)
    share = check_real("share", share, 0.0, 1.0, lo_open=True, hi_open=True)
    z = logits - logits.max(axis=1, keepdims=True)  # (rows, n)
    w = np.exp(z)
    total = w.sum(axis=1, keepdims=True)
    p = w / total
    entropy = np.log(total[:, 0]) - np.einsum("ij,ij->i", p, z)
    ranked = -np.sort(-p, axis=1)
    count = np.argmax(np.cumsum(ranked, axis=1) >= share, axis=1) + 1
    return {"top_mass": ranked[:, 0], "share_count": count.astype(np.float64),
            "entropy": entropy}
