"""The exact route: ``E[H]``, ``E[log Z]``, ``E[N/Z]`` and ``E[Z_range/Z]`` for independent
Gaussian logits by Laplace/Frullani integrals, at a cost independent of the range (issue 10 §1).

Logits ``L_t = a_t X_t + m_t`` with ``X_t ~ N(0, 1)`` iid and ``(a_t, m_t)`` from the
transform. With ``Φ(s) = E[e^{−sZ}] = Π_t g_t(s)`` and ``g_t(s) = E[exp(−s e^{L_t})]``:

* ``E[log Z] = ∫₀^∞ (e^{−s} − Φ(s)) ds/s`` (Frullani: ``log z = ∫₀^∞ (e^{−s} − e^{−sz}) ds/s``);
* ``E[N/Z] = ∫₀^∞ E[N e^{−sZ}] ds = ∫₀^∞ Φ(s) Σ_t E[L_t e^{L_t} e^{−s e^{L_t}}]/g_t(s) ds``
  (``1/Z = ∫₀^∞ e^{−sZ} ds`` and independence);
* ``E[H] = E[log Z] − E[N/Z]`` (SI eq. 8);
* ``E[Z_range/Z] = ∫₀^∞ Φ_row(s) Σ_{t∈range} E[e^{L_t} e^{−s e^{L_t}}]/g_t(s) ds`` over the
  whole row ``[0, n_ctx)``.

The ``s`` integrals run in ``u = log s`` on composite Gauss–Legendre panels over an interval
chosen from the data: below ``u_lo = log(tol) − log max(E[Z], Σ E[|L| e^L], 1)`` both
integrands are under ``tol`` (``1 − Φ(s) ≤ s E[Z]``); above ``u_hi`` (found by scanning),
``Φ < tol`` and ``e^{−s} < tol``, and ``∫_{u_hi}^∞ e^{−e^u} du = E₁(e^{u_hi})`` is added.
``log Φ = Σ_t w_t log1p(−ε_t)`` over the nodes of :func:`distance_quadrature` (each factor from
:mod:`sia_theory.gaussian.laplace`). Every public function runs twice, at ``rtol`` and at a finer
level (``rtol/100`` on distances, twice the ``x`` panels, half the ``u`` panels), returns the
finer value and reports ``|fine − coarse| + truncation`` as its error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import exp1

from .._infra.validate import check_int, check_real
from ..transforms import Transform, declared_dependence
from .laplace import laplace_pieces, log_factor

__all__ = ["T_MAX", "check_long_range", "distance_quadrature", "ExactEntropy", "ExactMass",
           "range_log_laplace", "expected_entropy_exact", "expected_mass_exact"]

T_MAX = 10**32  # distances and context lengths up to 1e32 (so [t, tΔ) reaches t = 1e30)
_GL_ORDER = 8  # Gauss–Legendre nodes per geometric distance bin and per u panel
_U_WIDTH = 2.0  # u panel width at refine level 1
_CHUNK = 2**21  # (u nodes) x (distance nodes) evaluated at once, times ~420 x nodes


def check_long_range(t1, t2, n_ctx=None) -> tuple[int, int, int | None]:
    """:func:`~sia_theory.gaussian.closed_forms.check_range` for long ranges: integers (or integral
    floats such as ``1e30``) with ``0 <= t1 < t2 <= T_MAX`` (and ``t2 <= n_ctx``)."""
    n_ctx = None if n_ctx is None else check_int("n_ctx", n_ctx, lo=1, hi=T_MAX)
    t1 = check_int("t1", t1, lo=0, hi=T_MAX - 1)
    t2 = check_int("t2", t2, lo=t1 + 1, hi=T_MAX if n_ctx is None else n_ctx)
    return t1, t2, n_ctx


def _exact_below(rtol: float) -> int:
    """Distances below this are summed term by term: beyond it the corrected midpoint rule's
    next Euler–Maclaurin term, ``(7/5760) f'''``, is ``~7e-3/T⁴`` relative for ``f ~ 1/t``."""
    return max(16, math.ceil(rtol ** -0.25))


def distance_quadrature(t1, t2, *, rtol=1e-6) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights with ``Σ_i w_i f(t_i) ≈ Σ_{t=t1}^{t2−1} f(t)``, about
    ``T + 8·log₂(t2/T)`` of them for any ``t2`` (``T = max(16, rtol^{-1/4})``).

    Below ``T`` (and for ranges of under 64 distances) the nodes are the integers, weight 1.
    Above, Euler–Maclaurin: ``Σ_{t=A}^{B−1} f(t) = ∫_{A−½}^{B−½} f dt − (1/24)[f'(B−½) −
    f'(A−½)] + (7/5760)[f'''(B−½) − f'''(A−½)] − …``; the integral is split into geometric bins
    of ratio 2 (``√2`` when ``rtol < 1e-9``) with integer edges, each integrated by 8-node
    Gauss–Legendre in ``log t``, and the ``f'`` term is applied with the central differences
    ``f'(A−½) ≈ f(A) − f(A−1)`` (four extra nodes with weights ``±1/24``; interior bin edges
    cancel). Error: the ``f'''`` term, ``≤ 7e-3·f(A)/A³`` for ``f ~ 1/t`` (below ``1e-7``
    relative at ``A = 16``), plus the Gauss–Legendre error, ``< 1e-10`` relative for ``f``
    analytic in ``log t`` on the scale of a bin (checked against plain summation in
    ``tests/test_si_exact.py``). Each bin's weights are rescaled to its exact count and the
    correction weights sum to zero, so ``Σ w_i = t2 − t1`` to rounding (``f ≡ 1`` is exact).
    """
    t1, t2, _ = check_long_range(t1, t2)
    rtol = check_real("rtol", rtol, lo=1e-13, hi=0.1)
    start = max(t1, _exact_below(rtol))
    if t2 - start < 64:
        start = t2
    nodes = [np.arange(t1, min(start, t2), dtype=np.float64)]
    weights = [np.ones(nodes[0].size)]
    if start < t2:
        z, w = np.polynomial.legendre.leggauss(_GL_ORDER)
        ratio = 2.0 if rtol >= 1e-9 else math.sqrt(2.0)
        lo = start
        while lo < t2:
            hi = t2 if lo * ratio * ratio > t2 else max(lo + 1, int(lo * ratio))
            v0, v1 = math.log(lo - 0.5), math.log(hi - 0.5)
            v = 0.5 * (v1 - v0) * z + 0.5 * (v1 + v0)  # (order,)
            t = np.exp(v)
            wt = 0.5 * (v1 - v0) * w * t
            nodes.append(t)
            weights.append(wt * (float(hi - lo) / math.fsum(wt)))
            lo = hi
        nodes.append(np.array([start - 1, start, t2 - 1, t2], dtype=np.float64))
        weights.append(np.array([-1.0, 1.0, 1.0, -1.0]) / 24.0)
    return np.concatenate(nodes), np.concatenate(weights)


@dataclass(frozen=True)
class ExactEntropy:
    """``E[H] = E[log Z] − E[N/Z]`` of a range by the exact route, each with its numerical
    error (``|fine − coarse|`` plus the truncation tolerance; see :mod:`sia_theory.gaussian.exact`)."""

    value: float
    error: float
    log_z: float
    log_z_error: float
    n_over_z: float
    n_over_z_error: float


@dataclass(frozen=True)
class ExactMass:
    """``E[Z_range/Z_row]`` by the exact route with its numerical error."""

    value: float
    error: float


def _coefficients(transform, t, n_ctx, h):
    if not isinstance(transform, Transform):
        raise ValueError(f"transform must be a sia_theory Transform, got {transform!r}")
    deps = declared_dependence(transform)
    if h is not None and "head" in deps:
        h = check_int("h", h, lo=0, hi=None if transform.n_heads is None
                      else transform.n_heads - 1)
    if "context" in deps and n_ctx is None:
        raise ValueError(f"n_ctx is required for {transform!r} (its depends_on contains "
                         "'context')")
    return transform.coefficients(t, None if n_ctx is None else float(n_ctx), h)


class _Row:
    """Distance nodes of one row segment with their coefficients and weights."""

    def __init__(self, transform, t1, t2, n_ctx, h, rtol):
        self.t, self.w = distance_quadrature(t1, t2, rtol=rtol)
        self.a, self.m = _coefficients(transform, self.t, n_ctx, h)
        self.log_mean = self.m + 0.5 * self.a**2  # log E[e^L]
        self.tilt = self.m + self.a**2  # E[L e^L]/E[e^L]

    def log_bound(self) -> float:
        """``log max(E[Z], Σ E[|L| e^L] bound, 1)`` (sets the lower end of the u range)."""
        mag = np.abs(self.tilt) + self.a + 1.0
        terms = np.concatenate([self.log_mean, self.log_mean + np.log(mag)])
        weights = np.concatenate([self.w, self.w])
        top = float(np.max(terms))
        return max(0.0, top + math.log(abs(float(np.sum(weights * np.exp(terms - top)))) + 1e-300))


def _segment_sums(row: _Row, u: np.ndarray, refine: int, want_tilted: bool):
    """For u nodes (U,): Σ_t w log g_t, and, with ``want_tilted``, the per-node arrays
    (U, T) of log g, E-part and Q-part (see :mod:`sia_theory.gaussian.laplace`)."""
    step = max(1, _CHUNK // (row.t.size * 420 * refine))
    log_phi = np.empty(u.size)
    parts = []
    for i in range(0, u.size, step):
        uu = u[i:i + step, None]  # (U_c, 1)
        eps, e_t, q_t = laplace_pieces(row.a[None, :], row.m[None, :], uu, refine)  # (U_c, T)
        log_g = log_factor(eps)  # (U_c, T)
        log_phi[i:i + step] = log_g @ row.w
        if want_tilted:
            parts.append((log_g, e_t, q_t))
    if not want_tilted:
        return log_phi, None
    return log_phi, tuple(np.concatenate(p, axis=0) for p in zip(*parts, strict=True))


def _u_nodes(u_lo: float, u_hi: float, refine: int) -> tuple[np.ndarray, np.ndarray]:
    panels = max(1, math.ceil((u_hi - u_lo) * refine / _U_WIDTH))
    z, w = np.polynomial.legendre.leggauss(_GL_ORDER)
    edges = np.linspace(u_lo, u_hi, panels + 1)  # (P+1,)
    half = 0.5 * np.diff(edges)[:, None]  # (P, 1)
    nodes = (0.5 * (edges[:-1] + edges[1:])[:, None] + half * z).ravel()  # (P*order,)
    return nodes, (half * w).ravel()


def _u_range(rows: list[_Row], tol: float) -> tuple[float, float]:
    """``[u_lo, u_hi]`` outside which the integrands are below ``tol`` (see module doc)."""
    u_lo = math.log(tol) - max(r.log_bound() for r in rows)
    u_hi = max(math.log(-math.log(tol)) + 0.5, u_lo + 1.0)
    for _ in range(2000):
        log_phi = sum(_segment_sums(r, np.array([u_hi]), 1, False)[0][0] for r in rows)
        if log_phi < math.log(tol):
            return u_lo, u_hi
        u_hi += 2.0
    raise ValueError("Φ(s) = E[exp(-sZ)] does not fall below tol for log s up to "
                     f"{u_hi:g}: the logits' coefficients are out of the exact route's range")


def _integrals(rows: list[_Row], target: int | None, rtol: float, refine: int, tol: float):
    """(E[log Z], E[N/Z], E[Z_target/Z]) over the row segments ``rows`` at one refine level
    (``target`` indexes the segment whose mass is wanted, or ``None``)."""
    u_lo, u_hi = _u_range(rows, tol)
    u, wu = _u_nodes(u_lo, u_hi, refine)  # (U,) each
    sums = [_segment_sums(r, u, refine, True) for r in rows]
    log_phi = sum(s[0] for s in sums)  # (U,)
    one_minus_phi = -np.expm1(log_phi)
    log_z = float(np.sum(wu * (one_minus_phi + np.expm1(-np.exp(u))))) + float(exp1(np.exp(u_hi)))
    n_over_z, mass = 0.0, 0.0
    for k, (row, (_, (log_g, e_t, q_t))) in enumerate(zip(rows, sums, strict=True)):
        expo = u[:, None] + log_phi[:, None] - log_g + row.log_mean[None, :]  # (U, T)
        scale = np.exp(np.minimum(expo, 700.0)) * row.w[None, :]
        tilted = row.tilt[None, :] * e_t - (row.a**2)[None, :] * q_t  # (U, T)
        n_over_z += float(wu @ np.sum(scale * tilted, axis=1))
        if k == target:
            mass = float(wu @ np.sum(scale * e_t, axis=1))
    return log_z, n_over_z, mass


def _two_levels(rows_of, target, rtol):
    tol = 1e-3 * rtol
    coarse = _integrals(rows_of(rtol), target, rtol, 1, tol)
    fine = _integrals(rows_of(rtol / 100.0), target, rtol / 100.0, 2, tol / 100.0)
    errors = [abs(f - c) + tol for f, c in zip(fine, coarse, strict=True)]
    return fine, errors


def _check_rtol(rtol):
    return check_real("rtol", rtol, lo=1e-10, hi=1e-2)


def range_log_laplace(transform, t1, t2, log_s, n_ctx=None, h=None, *, rtol=1e-6):
    """``log Φ(s) = log E[exp(−s Z_{t1}^{t2})] = Σ_t log g_t(s)`` at ``s = e^{log_s}`` (array),
    summed over :func:`distance_quadrature` nodes; for callers that build their own ``s``
    integrals (e.g. a planted needle's mass ``∫ E[e^{L_n} e^{−s e^{L_n}}] Φ_rest(s) ds``)."""
    t1, t2, n_ctx = check_long_range(t1, t2, n_ctx)
    row = _Row(transform, t1, t2, n_ctx, h, _check_rtol(rtol))
    log_s = np.asarray(log_s, dtype=np.float64)
    return _segment_sums(row, log_s.ravel(), 1, False)[0].reshape(log_s.shape)


def expected_entropy_exact(transform, t1, t2, n_ctx=None, h=None, *, rtol=1e-6
                           ) -> ExactEntropy:
    """``E[H_{t1}^{t2}]``, ``E[log Z]`` and ``E[N/Z]`` of a range for Gaussian logits by the
    exact route (Frullani; module docstring), with numerical errors. Cost independent of
    ``t2 − t1`` (up to ``1e30``). ``n_ctx`` and ``h`` are passed to the transform's
    ``coefficients`` (required when its ``depends_on`` contains ``"context"``/``"head"``)."""
    t1, t2, n_ctx = check_long_range(t1, t2, n_ctx)
    rtol = _check_rtol(rtol)
    (log_z, n_over_z, _), (e_log_z, e_n, _) = _two_levels(
        lambda r: [_Row(transform, t1, t2, n_ctx, h, r)], None, rtol)
    return ExactEntropy(value=log_z - n_over_z, error=e_log_z + e_n, log_z=log_z,
                        log_z_error=e_log_z, n_over_z=n_over_z, n_over_z_error=e_n)


def expected_mass_exact(transform, t1, t2, n_ctx, h=None, *, rtol=1e-6) -> ExactMass:
    """``E[Z_{t1}^{t2} / Z_0^{n_ctx}]``: the expected share of a query's attention (it sees
    distances ``0 .. n_ctx−1``) that falls in ``[t1, t2)``, by the exact route with its error."""
    if n_ctx is None:
        raise ValueError("n_ctx must be given: the mass is relative to the row [0, n_ctx)")
    t1, t2, n_ctx = check_long_range(t1, t2, n_ctx)
    rtol = _check_rtol(rtol)
    pieces = [(lo, hi) for lo, hi in ((0, t1), (t1, t2), (t2, n_ctx)) if hi > lo]
    target = pieces.index((t1, t2))

    def rows_of(r):
        return [_Row(transform, lo, hi, n_ctx, h, r) for lo, hi in pieces]

    (_, _, mass), (_, _, e_mass) = _two_levels(rows_of, target, rtol)
    return ExactMass(value=mass, error=e_mass)
