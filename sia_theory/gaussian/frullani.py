"""The one integrator of ``E[log Z]``, ``E[N/Z]`` and attention masses for independent Gaussian
logits: Laplace/Frullani integrals at a cost independent of the number of keys.

Logits ``L_t = a_t X_t + m_t`` with ``X_t ~ N(0, 1)`` iid and ``(a_t, m_t)`` from a transform.
With ``Φ(s) = E[e^{−sZ}] = Π_t g_t(s)``, ``g_t(s) = E[exp(−s e^{L_t})]`` and ``u = log s``:

* ``E[log Z] = ∫ (e^{−e^u} − Φ(e^u)) du`` (Frullani: ``log z = ∫₀^∞ (e^{−s} − e^{−sz}) ds/s``);
* ``E[N/Z] = ∫ Φ(e^u) Σ_t E[L_t e^{L_t} e^{−s e^{L_t}}]/g_t(s) e^u du`` (``1/Z = ∫₀^∞ e^{−sZ} ds``
  and independence);
* ``E[Z_range/Z] = ∫ Φ(e^u) Σ_{t∈range} E[e^{L_t} e^{−s e^{L_t}}]/g_t(s) e^u du`` over a row;
* ``E[e^ℓ/(e^ℓ + Z')] = ∫ q(u + ℓ) Φ'(e^u) du`` for a key of fixed logit ``ℓ`` beside the others
  (``q(y) = e^{y − e^y}``, the Gumbel density): the needle's mass;
* the same with one key's factor divided out, ``Φ' = Φ/g_own`` (the needle's rest).

Sums over distances run on :func:`~sia_theory.gaussian.quadrature.distance_quadrature` (one node
of weight ``t2 − t1`` for a transform whose ``depends_on`` has no ``"distance"``), each factor
comes from :mod:`sia_theory.gaussian.laplace`, and the ``u`` integrals run on composite
Gauss–Legendre panels of fixed width on ``[u_lo, u_hi]``: below
``u_lo = log(tol) − log max(E[Z], Σ E[|L| e^L], 1)`` the integrands are under ``tol``
(``1 − Φ(s) ≤ s E[Z]``), and ``u_hi`` is where ``Φ`` (with any key divided out) has fallen below
``tol``; the tails are closed analytically (``∫_{u_hi}^∞ e^{−e^u} du = E₁(e^{u_hi})``, and
``∫_{−∞}^{u_lo} q(u + ℓ) du = 1 − exp(−e^{u_lo + ℓ})``).

Every integral is computed at two levels, ``rtol`` and a finer one (``rtol/100`` on distances,
twice the ``x`` panels, half the ``u`` panel width): the value is the finer one, the error
``|fine − coarse|`` plus the truncation tolerance, returned as an
:class:`~sia_theory.gaussian.estimate.Estimate` of kind ``"exact"``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import exp1

from .._infra.validate import check_finite_array, check_int, check_real
from ..transforms import Transform, declared_dependence
from .estimate import Estimate
from .laplace import EXPECTATION_NODES, laplace_log_factor, laplace_pieces, log_factor
from .quadrature import GL_ORDER, check_long_range, distance_quadrature, gauss_legendre_panels

__all__ = ["RowNodes", "row_nodes", "LaplaceIntegral", "check_rtol", "TOL_PER_RTOL"]

TOL_PER_RTOL = 1e-3  # truncation tolerance of the u integrals, relative to rtol
"""Truncation tolerance of the ``u`` integrals, relative to ``rtol``."""
_U_WIDTH = 2.0  # u panel width at refine level 1 (halved at level 2)
_CHUNK = 2**21  # (u nodes) x (distance nodes) x (x nodes) evaluated at once
_MAX_PANELS = 4000  # u panels before Φ is declared out of range


def check_rtol(rtol) -> float:
    """``rtol`` as a float in ``[1e-10, 1e-2]``.

    Parameters
    ----------
    rtol : float

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Naming ``rtol``, if it is outside that range.
    """
    return check_real("rtol", rtol, lo=1e-10, hi=1e-2)


@dataclass(frozen=True)
class RowNodes:
    r"""Distance nodes with weights (:math:`\sum_i w_i f(t_i) \approx \sum_t f(t)` over a segment)
    and the coefficients of the logits there.

    Parameters
    ----------
    t, w : numpy.ndarray
        The nodes and weights, ``(T,)``.
    a, m : numpy.ndarray
        The coefficients at the nodes, ``(T,)``.
    """

    t: np.ndarray
    w: np.ndarray
    a: np.ndarray
    m: np.ndarray

    @property
    def log_mean(self) -> np.ndarray:
        """``log E[e^L] = m + a²/2`` per node."""
        return self.m + 0.5 * self.a**2

    @property
    def tilt(self) -> np.ndarray:
        """``E[L e^L]/E[e^L] = m + a²`` per node."""
        return self.m + self.a**2

    def log_bound(self) -> float:
        """``log max(E[Z], Σ E[|L| e^L] bound, 1)``: sets the lower end of the ``u`` range."""
        mag = np.abs(self.tilt) + self.a + 1.0
        terms = np.concatenate([self.log_mean, self.log_mean + np.log(mag)])
        weights = np.concatenate([self.w, self.w])
        top = float(np.max(terms))
        return max(0.0, top + math.log(abs(float(np.sum(weights * np.exp(terms - top))))
                                       + 1e-300))


def row_nodes(transform, t1, t2, n_ctx=None, h=None, *, rtol=1e-6) -> RowNodes:
    """The nodes of the segment ``[t1, t2)`` of a query's row (it sees ``n_ctx`` keys): the
    distance quadrature, or one node of weight ``t2 − t1`` when the transform declares no
    dependence on the distance (then every distance has the same coefficients).

    Parameters
    ----------
    transform : Transform
    t1, t2 : int
        ``0 <= t1 < t2`` (integral floats up to 1e30 accepted).
    n_ctx : int, optional
        Required by a context-dependent transform; ``t2 <= n_ctx``.
    h : int, optional
        The head, for a head-dependent transform.
    rtol : float
        Relative tolerance of the distance quadrature.

    Returns
    -------
    RowNodes

    Raises
    ------
    ValueError
        If the transform is not a Transform, the range or head is out of range, or a
        context-dependent transform has no ``n_ctx``.
    """
    if not isinstance(transform, Transform):
        raise ValueError(f"transform must be a sia_theory Transform, got {transform!r}")
    t1, t2, n_ctx = check_long_range(t1, t2, n_ctx)
    deps = declared_dependence(transform)
    if h is not None and "head" in deps:
        h = check_int("h", h, lo=0, hi=None if transform.n_heads is None
                      else transform.n_heads - 1)
    if "context" in deps and n_ctx is None:
        raise ValueError(f"n_ctx is required for {transform!r} (its depends_on contains "
                         "'context')")
    if "distance" in deps and not transform.smooth_in_distance:
        raise ValueError(f"transform {transform!r} oscillates in the distance "
                         "(smooth_in_distance = False): the exact route's distance quadrature "
                         "cannot sum it; use the exact range sums or the Monte Carlo")
    if "distance" in deps:
        t, w = distance_quadrature(t1, t2, rtol=rtol)
    else:
        t, w = np.array([float(t1)]), np.array([float(t2 - t1)])
    a, m = transform.coefficients(t, None if n_ctx is None else float(n_ctx), h)
    return RowNodes(t, w, a, m)


def _log_factors(row: RowNodes, u: np.ndarray, refine: int) -> np.ndarray:
    """``log g_t(e^u)`` for each ``u`` and distance node: ``(U, T)``."""
    out = np.empty((u.size, row.t.size))
    step = max(1, _CHUNK // (row.t.size * EXPECTATION_NODES * refine))
    for i in range(0, u.size, step):
        eps, _, _ = laplace_pieces(row.a[None, :], row.m[None, :], u[i:i + step, None], refine,
                                   kinds="F")  # (U_c, T)
        out[i:i + step] = log_factor(eps)
    return out


class _Level:
    """One refinement level: ``u`` nodes on panels of width ``_U_WIDTH/refine`` from ``u_lo``
    (extended upwards on demand) and ``log Φ`` there."""

    def __init__(self, rows: list[RowNodes], refine: int, tol: float):
        self.rows, self.refine, self.tol = rows, refine, tol
        self.width = _U_WIDTH / refine
        self.u_lo = math.log(tol) - max(r.log_bound() for r in rows)
        self.u = np.empty(0)
        self.wu = np.empty(0)
        self.log_phi = np.empty(0)
        self.log_g = [np.empty((0, r.t.size)) for r in rows]  # per row (U, T)
        self._tilted = None
        start = max(math.log(-math.log(tol)) + 0.5, self.u_lo + 1.0)
        self._extend(math.ceil((start - self.u_lo) / self.width))
        self.reach(self.log_phi)

    @property
    def u_hi(self) -> float:
        return self.u_lo + self.width * (self.u.size // GL_ORDER)

    def _extend(self, panels: int) -> None:
        done = self.u.size // GL_ORDER
        if done + panels > _MAX_PANELS:
            raise ValueError("Φ(s) = E[exp(-sZ)] does not fall below tol for log s up to "
                             f"{self.u_lo + self.width * (done + panels):g}: the logits' "
                             "coefficients are out of the exact route's range")
        edges = self.u_lo + self.width * np.arange(done, done + panels + 1)
        u, wu = gauss_legendre_panels(edges)
        new = [_log_factors(r, u, self.refine) for r in self.rows]  # per row (U_new, T)
        self.u = np.concatenate([self.u, u])
        self.wu = np.concatenate([self.wu, wu])
        self.log_g = [np.concatenate([old, g]) for old, g in zip(self.log_g, new, strict=True)]
        self.log_phi = np.concatenate([self.log_phi, sum(g @ r.w for g, r in zip(
            new, self.rows, strict=True))])
        self._tilted = None

    def reach(self, log_phi_of) -> None:
        """Extend the nodes until ``log_phi_of`` (``log Φ`` or a rest of it, a function of this
        level's arrays or an array) is below ``log tol`` at the last node and ``e^{−e^u}`` too."""
        while True:
            value = log_phi_of() if callable(log_phi_of) else log_phi_of
            if value[-1] < math.log(self.tol) and self.u[-1] > math.log(-math.log(self.tol)):
                return
            self._extend(max(1, (self.u.size // GL_ORDER) // 4))
            log_phi_of = log_phi_of if callable(log_phi_of) else self.log_phi

    def own_log_factor(self, a: float, m: float) -> np.ndarray:
        """``log g(e^u)`` of one key with coefficients ``(a, m)`` at the nodes."""
        return laplace_log_factor(a, m, self.u, refine=self.refine)

    def tilted(self):
        """Per row ``(log g, E-part, Q-part)``, each ``(U, T)`` (see :mod:`.laplace`)."""
        if self._tilted is None:
            self._tilted = []
            for row, log_g in zip(self.rows, self.log_g, strict=True):
                _, e_t, q_t = laplace_pieces(row.a[None, :], row.m[None, :], self.u[:, None],
                                             self.refine, kinds="EQ")
                self._tilted.append((log_g, e_t, q_t))
        return self._tilted

    def log_z(self, log_rest: np.ndarray) -> float:
        """``E[log Z']`` for ``log Φ' = log_rest`` at the nodes (Frullani)."""
        inside = -np.expm1(log_rest) + np.expm1(-np.exp(self.u))  # (U,)
        return float(self.wu @ inside) + float(exp1(math.exp(self.u_hi)))

    def _scaled(self, k: int, log_g: np.ndarray) -> np.ndarray:
        row = self.rows[k]
        expo = self.u[:, None] + self.log_phi[:, None] - log_g + row.log_mean[None, :]  # (U, T)
        return np.exp(np.minimum(expo, 700.0)) * row.w[None, :]

    def n_over_z(self) -> float:
        total = 0.0
        for k, (log_g, e_t, q_t) in enumerate(self.tilted()):
            row = self.rows[k]
            tilted = row.tilt[None, :] * e_t - (row.a**2)[None, :] * q_t  # (U, T)
            total += float(self.wu @ np.sum(self._scaled(k, log_g) * tilted, axis=1))
        return total

    def mass(self, k: int) -> float:
        log_g, e_t, _ = self.tilted()[k]
        return float(self.wu @ np.sum(self._scaled(k, log_g) * e_t, axis=1))

    def point_mass(self, levels: np.ndarray, log_rest: np.ndarray) -> np.ndarray:
        """``E[e^ℓ/(e^ℓ + Z')]`` for each fixed logit ``ℓ`` in ``levels`` (L,)."""
        below = -np.expm1(-np.exp(np.minimum(self.u_lo + levels, 700.0)))  # (L,)
        y = np.minimum(self.u[None, :] + levels[:, None], 700.0)  # (L, U)
        weight = self.wu * np.exp(np.minimum(log_rest, 0.0))  # (U,)
        return below + np.exp(y - np.exp(y)) @ weight


class LaplaceIntegral:
    """The integrals of one row at two refinement levels; each method returns the finer value with
    the error ``|fine − coarse| + tol`` (see the module docstring).

    Parameters
    ----------
    transform : Transform
    segments : sequence of (int, int)
        At least one range ``[t1, t2)`` of the row.
    n_ctx : int, optional
        Keys the query sees (required by a context-dependent transform).
    h : int, optional
        The head, for a head-dependent transform.
    rtol : float
        In ``[1e-10, 1e-2]``.

    Raises
    ------
    ValueError
        If ``rtol`` or a segment is out of range, or ``segments`` is empty.

    Examples
    --------
    >>> from sia_theory import NoScale
    >>> from sia_theory.gaussian.frullani import LaplaceIntegral
    >>> row = LaplaceIntegral(NoScale(), [(0, 1000)])
    >>> est = row.log_z()  # E[log Σ e^X] for 1000 standard normals ≈ log 1000 + 1/2
    >>> est.kind, abs(est.value - 7.4068) < 1e-3, est.error < 1e-6
    ('exact', True, True)
    """

    def __init__(self, transform, segments, n_ctx=None, h=None, *, rtol=1e-6):
        rtol = check_rtol(rtol)
        segments = [check_long_range(t1, t2, n_ctx)[:2] for t1, t2 in segments]
        if not segments:
            raise ValueError("segments must hold at least one range (t1, t2)")
        self.transform, self.segments, self.n_ctx, self.h = transform, segments, n_ctx, h
        self.tol = TOL_PER_RTOL * rtol
        self.levels = [
            _Level([row_nodes(transform, t1, t2, n_ctx, h, rtol=r) for t1, t2 in segments],
                   refine, tol)
            for r, refine, tol in ((rtol, 1, self.tol), (rtol / 100.0, 2, self.tol / 100.0))]

    def _estimate(self, values) -> Estimate:
        coarse, fine = values
        return Estimate(fine, abs(fine - coarse) + self.tol, "exact")

    def _rests(self, own):
        """Per level, ``log Φ`` with the key ``own = (a, m)`` divided out (or ``log Φ``),
        after extending each level until that rest falls below ``tol``."""
        rests = []
        for level in self.levels:
            if own is None:
                rests.append(level.log_phi)
                continue

            def rest(level=level):
                return level.log_phi - level.own_log_factor(*own)

            level.reach(rest)
            rests.append(rest())
        return rests

    def log_z(self, own=None) -> Estimate:
        """``E[log Z]`` of the row, or of the row without one key of coefficients
        ``own = (a, m)`` (``Z' = Z − e^{L_own}``)."""
        return self._estimate([lv.log_z(r) for lv, r in zip(self.levels, self._rests(own),
                                                             strict=True)])

    def n_over_z(self) -> Estimate:
        """``E[N/Z]`` of the row (``N = Σ L e^L``)."""
        return self._estimate([lv.n_over_z() for lv in self.levels])

    def mass(self, segment: int) -> Estimate:
        """``E[Z_segment / Z]``: the expected share of the row's attention in one segment."""
        segment = check_int("segment", segment, lo=0, hi=len(self.segments) - 1)
        return self._estimate([lv.mass(segment) for lv in self.levels])

    def point_mass(self, levels, own=None) -> tuple[np.ndarray, np.ndarray]:
        """``(values, errors)`` of ``E[e^ℓ/(e^ℓ + Z')]`` for each fixed logit ``ℓ``, with ``Z'``
        the row without the key ``own = (a, m)`` (or the whole row)."""
        levels = check_finite_array("levels", levels, dtype=np.float64)
        flat = levels.ravel()
        coarse, fine = [lv.point_mass(flat, r) for lv, r in zip(self.levels, self._rests(own),
                                                                 strict=True)]
        error = np.abs(fine - coarse) + self.tol
        return fine.reshape(levels.shape), error.reshape(levels.shape)

    def log_laplace(self, log_s, level: int = 0) -> np.ndarray:
        """``log Φ(e^{log_s})`` of the row at any points (on ``level``'s distance nodes)."""
        log_s = check_finite_array("log_s", log_s, dtype=np.float64)
        lv = self.levels[check_int("level", level, lo=0, hi=1)]
        flat = log_s.ravel()
        return sum(_log_factors(r, flat, lv.refine) @ r.w for r in lv.rows).reshape(log_s.shape)
