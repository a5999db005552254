r"""Per-distance Laplace factors of a lognormal weight, the primitives of the exact route.

For one logit ``L = a X + m`` with ``X ~ N(0, 1)`` and a Laplace variable ``s = e^u``:

* ``g(s) = E[exp(−s e^L)]`` (the factor of ``Φ(s) = E[e^{−sZ}] = Π_t g_t(s)``), returned as
  :math:`\log g = \log(1-\varepsilon)` with :math:`\varepsilon = \mathbb{E}[1 - \exp(-s e^L)]`
  computed directly, so ``ε`` keeps its relative accuracy down to ``1e-35`` and below (a range of
  ``1e30`` distances sums such ``ε``);
* the tilted expectations ``E[e^L e^{−s e^L}]`` and ``E[L e^L e^{−s e^L}]`` (the numerators of
  ``E[Z_range/Z]`` and ``E[N/Z]``), from the Gaussian tilt ``E[e^{aX} h(X)] = e^{a²/2} E[h(X+a)]``
  and Stein's identity ``E[X h(X)] = E[h'(X)]``:
  ``E[e^L e^{−s e^L}] = e^{m+a²/2}·E[e^{−e^{Y'}}]``,
  ``E[L e^L e^{−s e^L}] = e^{m+a²/2}·((m+a²) E[e^{−e^{Y'}}] − a² E[e^{Y'−e^{Y'}}])`` with
  ``Y' = u + m + a² + aX``.

Each expectation is ``E[k(μ + aX)]`` for a smoothed step ``k`` of width 1 in ``y = μ + ax``,
i.e. of width ``1/a`` in ``x`` at ``x* = −μ/a`` (``a`` reaches ~12 for the SI transform at
``t = 1e30`` and ~28 for LogN there). Plain Gauss–Hermite does not resolve such a step; here the
``x`` line is split at ``x*`` and each side is integrated with composite Gauss–Legendre panels:
a *near* zone of ``12/max(a, 1)`` next to ``x*`` (the step, 12 units of ``y``) and a *far* zone
of unit-scale panels. The integrands are log-concave in ``x`` (``log k`` is concave and
``log φ`` has curvature −1), so each side only needs ±10 around the peak of its own integrand:
``k(y) ≈ e^y`` below the step moves that peak to ``x = a`` (the tilt), ``k ≈ 1`` to ``x = 0``.
Truncating at 10 standard deviations from the peak loses a relative ``e^{−50}``.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from .._infra.validate import check_finite_array
from .quadrature import GL_ORDER, unit_panels

__all__ = ["laplace_log_factor", "laplace_tilted", "laplace_pieces", "step_expectation",
           "step_expectation_reference", "log_factor", "EXPECTATION_NODES", "DEFAULT_REFINE"]

_HALF = 10.0  # each side spans its integrand's peak ± 10 (a relative e^-50 is left out)
_NEAR_Y = 12.0  # the step zone: 12 units of y next to x* (then k is e^y(1 + O(e^y)) or 1)
_NEAR_PANELS = 6
_FAR_PANELS = 8
EXPECTATION_NODES = 3 * (_NEAR_PANELS + _FAR_PANELS) * GL_ORDER
"""``x`` nodes behind one expectation of :func:`step_expectation` at refine level 1 (at most
three zones of near and far panels): the work per point that callers size their chunks by."""
DEFAULT_REFINE = 2
"""The refine level of :func:`laplace_log_factor` and :func:`laplace_tilted` by default. Measured
against the defining integral in mpmath (two rules, 20 and 26 digits, agreeing to 1e-20) on 20
points ``a = 0 … 28``, ``ε = 1.8e-35 … 1 − 1.9e-9`` (and ``ε = 3.4e-63`` at ``a = 28``), ``ε``'s
largest relative error is 1.7e-8 at refine 1 (5.8e-10 at ``a = 1``, ``μ = 2``; 4.0e-10 and 3.1e-10
at ``a = 20, 28``) and 5.3e-12 at refine 2 (8e-13 without the ``1e-63`` point)
(tests/gaussian/test_laplace_accuracy.py). The exact route passes its own levels 1 and 2 and
takes its error from their difference."""
_X_CLIP = 1e6  # |x*| beyond this is as good as infinite (a -> 0 leaves x* = -mu/a unbounded)
_LOG_SQRT_2PI = 0.5 * np.log(2.0 * np.pi)


def _side(edge, length, near, direction, refine):
    """Nodes ``x`` and weights on ``[edge, edge + direction·length]``: ``near`` next to the edge
    in fine panels, the rest in unit-scale panels. Inputs shaped (...,), outputs (..., K)."""
    zn, wn = unit_panels(_NEAR_PANELS * refine)
    zf, wf = unit_panels(_FAR_PANELS * refine)
    far = length - near  # (...,)
    e, n, f = edge[..., None], near[..., None], far[..., None]
    x = np.concatenate([e + direction * n * zn, e + direction * (n + f * zf)], axis=-1)
    w = np.concatenate([n * wn + 0.0 * e, f * wf + 0.0 * e], axis=-1)
    return x, w


def _step_zone(kind: str, a, x_star, lo_r):
    """Length of the step zone ``[x*, min(x* + NEAR_Y/max(a, 1), lo_r)]`` of ``E`` and ``Q`` that
    the right-hand window ``[lo_r, hi_r]`` (``lo_r = max(x*, -HALF)``) leaves out; 0 for ``F``
    (whose right-hand mass is the Gaussian bulk, inside the window)."""
    if kind == "F":
        return np.zeros_like(a)
    return np.maximum(np.minimum(x_star + _NEAR_Y / np.maximum(a, 1.0), lo_r) - x_star, 0.0)


def _kernel(kind: str, y: np.ndarray) -> np.ndarray:
    """The three smoothed steps: F = 1 − exp(−e^y), E = exp(−e^y), Q = exp(y − e^y)."""
    with np.errstate(over="ignore"):
        ey = np.exp(y)
        if kind == "F":
            return -np.expm1(-ey)
        if kind == "E":
            return np.exp(-ey)
        return np.exp(y - ey)


def step_expectation_reference(kind: str, a, mu, refine: int = 1) -> np.ndarray:
    """The plain numpy version of :func:`step_expectation` (same nodes), its test oracle.

    Parameters
    ----------
    kind : str
        ``"F"`` (``1 − exp(−e^y)``, relative accuracy in its tails), ``"E"`` (``exp(−e^y)``) or
        ``"Q"`` (``exp(y − e^y)``, the Gumbel density).
    a : array_like
        ``>= 0``.
    mu : array_like
        Broadcasting with ``a``.
    refine : int
        Multiplies the panel counts (the error estimate of the exact route compares
        ``refine = 1`` with 2).

    Returns
    -------
    numpy.ndarray
        ``E[k(μ + aX)]``, ``X ~ N(0,1)``.
    """
    a, mu = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(mu, dtype=np.float64))
    with np.errstate(divide="ignore", invalid="ignore"):
        x_star = np.where(a > 0, -mu / np.where(a > 0, a, 1.0), np.sign(-mu) * _X_CLIP)
    x_star = np.clip(np.nan_to_num(x_star), -_X_CLIP, _X_CLIP)  # (...,)
    # Left of x* the kernel is ~e^y for F and Q (peak of φ·k at x = a), ~1 for E (peak at 0).
    centre = np.zeros_like(a) if kind == "E" else a
    lo = np.minimum(x_star, centre) - _HALF
    hi = np.minimum(x_star, centre + _HALF)
    near = np.minimum(_NEAR_Y / np.maximum(a, 1.0), hi - lo)
    x_l, w_l = _side(hi, hi - lo, near, -1.0, refine)  # (..., K): the step sits at hi
    # Right of x*: F ~ 1 (peak at 0); E and Q fall off double-exponentially within the near zone.
    lo_r = np.maximum(x_star, -_HALF)
    hi_r = np.maximum(x_star, 0.0) + _HALF
    near_r = np.minimum(_NEAR_Y / np.maximum(a, 1.0), hi_r - lo_r)
    x_r, w_r = _side(lo_r, hi_r - lo_r, near_r, 1.0, refine)  # (..., K)
    # E and Q fall from their step value to ~0 within NEAR_Y/a right of x*: when x* < -HALF that
    # zone lies left of lo_r and holds almost all of their mass (φ grows towards 0 across it).
    step_len = _step_zone(kind, a, x_star, lo_r)
    x_s, w_s = _side(x_star, step_len, step_len, 1.0, refine)  # (..., K)
    total = np.zeros(a.shape)
    for x, w in ((x_l, w_l), (x_r, w_r), (x_s, w_s)):
        y = mu[..., None] + a[..., None] * x  # (..., K)
        log_phi = -0.5 * x * x - _LOG_SQRT_2PI
        total += np.sum(w * np.exp(log_phi) * _kernel(kind, y), axis=-1)
    return total


def log_factor(eps: np.ndarray) -> np.ndarray:
    r""":math:`\log g = \log(1-\varepsilon)`, floored at −690: a factor that small (``ε`` rounds to
    1 below ``g ≈ 1e-16``) makes every product it enters negligible, and the floor keeps ``Φ/g_t``
    finite (the same floored value is in ``Φ``).

    Parameters
    ----------
    eps : numpy.ndarray
        ``ε`` in ``[0, 1]``.

    Returns
    -------
    numpy.ndarray
    """
    with np.errstate(divide="ignore"):
        return np.maximum(np.log1p(-np.minimum(eps, 1.0)), -690.0)


def _checked(a, m, log_s):
    a = check_finite_array("a", a, dtype=np.float64, lo=0)
    m = check_finite_array("m", m, dtype=np.float64)
    log_s = check_finite_array("log_s", log_s, dtype=np.float64)
    return np.broadcast_arrays(a, m, log_s)


def laplace_pieces(a, m, log_s, refine: int = 1, kinds: str = "FEQ"):
    r"""``(ε, E[e^{−e^{Y'}}], E[e^{Y'−e^{Y'}}])`` unvalidated, for the integrator's inner loop:
    :math:`\varepsilon = \mathbb{E}[1 - \exp(-s e^L)]`, :math:`Y' = \log s + m + a^2 + aX` (see the
    module docstring).

    Parameters
    ----------
    a, m : array_like
        The logit's coefficients (``a >= 0``).
    log_s : array_like
        ``log s``, broadcasting with them.
    refine : int
        Multiplies the panel counts.
    kinds : str
        The pieces to compute, of ``"F"``, ``"E"``, ``"Q"``.

    Returns
    -------
    tuple
        The three pieces; those not named in ``kinds`` are ``None``.
    """
    mu = log_s + m
    eps = step_expectation("F", a, mu, refine) if "F" in kinds else None
    mu_t = mu + a * a
    e_t = step_expectation("E", a, mu_t, refine) if "E" in kinds else None
    q_t = step_expectation("Q", a, mu_t, refine) if "Q" in kinds else None
    return eps, e_t, q_t


def laplace_log_factor(a, m, log_s, *, refine: int = DEFAULT_REFINE) -> np.ndarray:
    r""":math:`\log g = \log \mathbb{E}[\exp(-s e^L)]` for ``L = aX + m``, ``X ~ N(0,1)``,
    :math:`s = e^{\texttt{log\_s}}` (arrays broadcast; ``a >= 0``). Computed as ``log1p(−ε)`` with
    :math:`\varepsilon = \mathbb{E}[1 - \exp(-s e^L)]` integrated directly (relative accuracy better
    than 1e-11 at the default ``refine``, :data:`DEFAULT_REFINE`, even for ``ε ~ 1e-35``; ``log g``
    then carries an absolute error of about ``1e-16/g`` from ``ε`` rounded near 1), floored at
    ``log g >= −690`` (a factor below ``e^{−690}`` makes any product it enters negligible).
    ``log_s`` rather than ``s`` because the relevant ``s ~ 1/Z`` can be ``e^{−400}``.

    Parameters
    ----------
    a : array_like of float
        Multipliers, finite and ``>= 0``.
    m : array_like of float
        Biases, finite.
    log_s : array_like of float
        ``log s``, finite.
    refine : int
        Multiplies the quadrature's panel counts (default :data:`DEFAULT_REFINE` = 2: ``ε`` within
        1e-11 relative; 1: within 2e-8, 6e-10 where ``ε > 1e-40``, at half the cost).

    Returns
    -------
    numpy.ndarray
        ``log g``, float64, the broadcast shape of ``a``, ``m``, ``log_s``.

    Raises
    ------
    ValueError
        If an ``a`` is negative or a value is not finite.

    Examples
    --------
    >>> import math
    >>> from sia_theory import laplace_log_factor
    >>> float(laplace_log_factor(0.0, 0.0, 0.0).round(9))  # a = 0: log e^{−s e^m} = −1
    -1.0
    >>> (laplace_log_factor([0.5, 1.0], 0.0, -20.0) * 1e9).round(6)  # ≈ −1e9·e^{−20 + a²/2}
    array([-2.335593, -3.398268])
    >>> [round(-1e9 * math.exp(-20 + a * a / 2), 6) for a in (0.5, 1.0)]
    [-2.335593, -3.398268]
    """
    a, m, log_s = _checked(a, m, log_s)
    return log_factor(step_expectation("F", a, log_s + m, refine))


def laplace_tilted(a, m, log_s, *, refine: int = DEFAULT_REFINE
                   ) -> tuple[np.ndarray, np.ndarray]:
    r"""``(E[e^L e^{−s e^L}], E[L e^L e^{−s e^L}])`` for ``L = aX + m`` (arrays broadcast).

    .. math::

        \mathbb{E}[e^{L_n}/(e^{L_n} + Z')] = \int_0^\infty \mathbb{E}[e^{L_n} e^{-s e^{L_n}}]\,
        \mathbb{E}[e^{-sZ'}]\, ds

    for an independent ``Z'``: these are the per-token numerators of every mass and ``N/Z`` integral
    of :mod:`sia_theory.gaussian.exact`. Both overflow float64 only where ``e^{m + a²/2}`` does.

    Parameters
    ----------
    a, m, log_s, refine
        As for :func:`laplace_log_factor`.

    Returns
    -------
    tuple of numpy.ndarray
        The two expectations, float64, each the broadcast shape of ``a``, ``m``, ``log_s``.

    Raises
    ------
    ValueError
        As :func:`laplace_log_factor`.

    Examples
    --------
    >>> import math
    >>> from sia_theory import laplace_tilted
    >>> e, q = laplace_tilted(0.0, 0.5, math.log(2.0))  # a = 0: e^m e^{−s e^m}, m·(the same)
    >>> round(float(e), 10), round(float(q), 10), round(math.exp(0.5 - 2 * math.exp(0.5)), 10)
    (0.0609657809, 0.0304828904, 0.0609657809)
    """
    a, m, log_s = _checked(a, m, log_s)
    _, e_t, q_t = laplace_pieces(a, m, log_s, refine)
    scale = np.exp(m + 0.5 * a * a)
    return scale * e_t, scale * ((m + a * a) * e_t - a * a * q_t)


_KINDS = {"F": 0, "E": 1, "Q": 2}


@numba.njit(cache=True)
def _side_sum(kind, a, mu, edge, length, near, direction, zn, wn, zf, wf):
    total = 0.0
    far = length - near
    for i in range(zn.size + zf.size):
        if i < zn.size:
            x = edge + direction * near * zn[i]
            w = near * wn[i]
        else:
            x = edge + direction * (near + far * zf[i - zn.size])
            w = far * wf[i - zn.size]
        y = mu + a * x
        log_phi = -0.5 * x * x - 0.9189385332046728  # log φ(x)
        if kind == 0:  # F = 1 − exp(−e^y)
            k = -math.expm1(-math.exp(y)) if y < 700.0 else 1.0
            total += w * math.exp(log_phi) * k
        elif kind == 1:  # E = exp(−e^y)
            if y < 7.0:
                total += w * math.exp(log_phi - math.exp(y))
        elif y < 7.0:  # Q = exp(y − e^y)
            total += w * math.exp(log_phi + y - math.exp(y))
    return total


@numba.njit(cache=True)
def _step_kernel(kind, a, mu, zn, wn, zf, wf, half, near_y, x_clip, out):
    for p in range(a.size):
        ap, mp = a[p], mu[p]
        if ap > 0.0:
            xs = min(max(-mp / ap, -x_clip), x_clip)
        else:
            xs = x_clip if mp < 0.0 else -x_clip
        centre = 0.0 if kind == 1 else ap
        lo = min(xs, centre) - half
        hi = min(xs, centre + half)
        near = min(near_y / max(ap, 1.0), hi - lo)
        left = _side_sum(kind, ap, mp, hi, hi - lo, near, -1.0, zn, wn, zf, wf)
        lo_r = max(xs, -half)
        hi_r = max(xs, 0.0) + half
        near_r = min(near_y / max(ap, 1.0), hi_r - lo_r)
        right = _side_sum(kind, ap, mp, lo_r, hi_r - lo_r, near_r, 1.0, zn, wn, zf, wf)
        step = 0.0  # E and Q: the step zone left of lo_r (see _step_zone)
        if kind != 0:
            step_len = max(min(xs + near_y / max(ap, 1.0), lo_r) - xs, 0.0)
            if step_len > 0.0:
                step = _side_sum(kind, ap, mp, xs, step_len, step_len, 1.0, zn, wn, zf, wf)
        out[p] = left + right + step


def step_expectation(kind: str, a, mu, refine: int = 1) -> np.ndarray:
    """``E[k(μ + aX)]``, ``X ~ N(0,1)``: the numba version of :func:`step_expectation_reference`
    (same nodes; ``E`` and ``Q`` skip the nodes with ``y > 7``, where they are below
    ``e^{−1000}``).

    Parameters
    ----------
    kind, a, mu, refine
        As for :func:`step_expectation_reference`.

    Returns
    -------
    numpy.ndarray
    """
    a, mu = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(mu, dtype=np.float64))
    zn, wn = unit_panels(_NEAR_PANELS * refine)
    zf, wf = unit_panels(_FAR_PANELS * refine)
    out = np.empty(a.size)
    _step_kernel(_KINDS[kind], np.ascontiguousarray(a).ravel(), np.ascontiguousarray(mu).ravel(),
                 zn, wn, zf, wf, _HALF, _NEAR_Y, _X_CLIP, out)
    return out.reshape(a.shape)
