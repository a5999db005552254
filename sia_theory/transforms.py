"""Attention-logit transforms: one object per scheme, used by every part of the package.

A transform maps a raw score ``S`` at distance ``t = q_idx - kv_idx`` for a query that sees
``n = q_idx + 1`` keys to the logit ``L = a(t, n) S + m(t, n)``. Each transform exposes

* ``coefficients(t, n_ctx, h)`` → ``(a, m)`` as numpy arrays (the closed forms and the Monte
  Carlo use these),
* ``score_mod(score, b, h, q_idx, kv_idx)`` with PyTorch FlexAttention's signature, evaluated
  elementwise on broadcast numpy index grids (the attention reference uses this), and
* ``depends_on``, its declared dependence as data: a frozenset drawn from ``"distance"``,
  ``"context"`` (the context length ``n``) and ``"head"``. Attention, the Monte Carlo and the
  closed forms consult it instead of the transform's class: without ``"context"`` attention
  precomputes one coefficient table per distance (per head with ``"head"``); with ``"context"``
  only, one multiplier per query row; with both, it evaluates ``score_mod`` on every score.
  The base class declares all three (the safe default). A transform depending on the head
  states how many heads it supports in ``n_heads`` (``None``: any number).

Both routes go through ``_affine``, so they cannot drift apart.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from ._infra.memory import check_memory
from ._infra.validate import check_finite_array, check_int, check_real
from .symbolic import generated

__all__ = ["DEPENDENCES", "Transform", "NoScale", "LogN", "ScaleInvariant",
           "ScaleInvariantFamily", "ALiBi", "FixedContext", "at_context", "AtHead", "at_head",
           "declared_dependence", "describe",
           "TransformNotDefined"]

DEPENDENCES = frozenset({"distance", "context", "head"})
"""What a transform's coefficients may depend on: ``"distance"``, ``"context"`` (the context
length), ``"head"``."""


class TransformNotDefined(ValueError, NotImplementedError):
    """A :class:`Transform` subclass that does not define its coefficients: bad input to every
    entry point (a ``ValueError``, as the package's other bad input) and, for code written
    against 0.2, still a ``NotImplementedError``."""


def declared_dependence(transform) -> frozenset:
    """``transform.depends_on`` checked to be a subset of :data:`DEPENDENCES`."""
    deps = getattr(transform, "depends_on", None)
    if not isinstance(deps, frozenset | set) or not deps <= DEPENDENCES:
        raise ValueError(f"depends_on of {transform!r} must be a frozenset drawn from "
                         f"{sorted(DEPENDENCES)}, got {deps!r}")
    return frozenset(deps)


def describe(transform) -> str:
    """A name for ``transform`` in messages: its repr, or its class name when the repr is
    Python's default ``<... object at 0x...>`` (a user's class without a repr)."""
    text = repr(transform)
    if text.startswith("<") and " object at 0x" in text:
        return type(transform).__name__
    return text


class Transform:
    """Base class: subclasses implement ``_affine(t, n, h) -> (a, m)`` on float arrays.

    Subclasses declare what their coefficients depend on in ``depends_on`` (a class attribute
    or a property). The declaration is a promise the fast paths rely on: without ``"context"``
    attention calls ``coefficients`` without ``n_ctx`` and ``context_length_sweep`` runs one
    simulation for every context length; without ``"head"`` attention builds one table for all
    heads (``h=None``). The default, all of ``distance``, ``context`` and ``head``, is the safe
    one: it costs speed (``score_mod`` on every score), never correctness. ``n_heads`` is the
    number of heads a head-dependent transform supports (``None``: any). ``power_law`` is
    ``(alpha, beta, tau)`` when the transform satisfies SI eq. 15 exactly for Gaussian base
    logits (``E[e^{L_t}] = α/(t/τ+1)``, ``E[L_t e^{L_t}] = β/(t/τ+1)``), which gives the exact
    digamma range sums of :mod:`sia_theory.gaussian.closed_forms`; ``None`` otherwise.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> import numpy as np
    >>> from sia_theory import Transform
    >>> @dataclass(frozen=True)
    ... class LogBias(Transform):
    ...     # L_t = S_t − c·log(1 + t)
    ...     c: float = 1.0
    ...     depends_on = frozenset({"distance"})
    ...     def _affine(self, t, n, h):
    ...         return np.ones_like(t), -self.c * np.log1p(t)
    >>> a, m = LogBias(0.5).coefficients(np.array([1.0, 3.0]))
    >>> a.tolist(), np.round(m, 6).tolist()  # m_t = −c·log(1 + t): −½ log 2, −½ log 4
    ([1.0, 1.0], [-0.346574, -0.693147])
    >>> # score_mod at q_idx = 4, kv_idx = 1 (t = 3): S + m_3 = 2 − log 2
    >>> round(float(LogBias(0.5).score_mod(np.array(2.0), 0, 0, np.array(4), np.array(1))), 6)
    1.306853
    """

    depends_on: frozenset = DEPENDENCES
    n_heads: int | None = None
    power_law: tuple[float, float, float] | None = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "distance_only" in vars(cls):  # the flag this attribute replaced (0.1.x)
            warnings.warn(f"{cls.__name__}.distance_only is ignored: declare depends_on = "
                          "frozenset({'distance'}) (or with 'head') instead", FutureWarning,
                          stacklevel=2)

    def _affine(self, t: np.ndarray, n: np.ndarray | None, h) -> tuple[np.ndarray, np.ndarray]:
        raise TransformNotDefined(
            f"{type(self).__name__} does not define its coefficients: a Transform subclass must "
            "implement _affine(self, t, n, h) -> (a, m), the affine coefficients of the logit "
            "L = a*S + m as float arrays broadcastable to t (t: distances >= 0; n: number of "
            "keys the query sees, or None; h: head index, or None), and declare depends_on")

    def log_moments(self, t, n_ctx=None, h=None) -> tuple[np.ndarray, np.ndarray]:
        """``(log E[e^{L_t}], E[L_t e^{L_t}] / E[e^{L_t}])`` for Gaussian base logits, i.e.
        ``(m + a²/2, m + a²)`` (SI App. B), each shaped like ``t``.

        The closed forms work in log space from these. The default computes them from
        :meth:`coefficients`; a transform whose ``a²`` and ``m`` nearly cancel (the SI transform
        with a tiny ``alpha``, where ``a_t² ≈ 2β/α`` and ``m_t ≈ −β/α``) overrides it with the
        simplified expressions, which stay accurate.
        """
        a, m = self.coefficients(t, n_ctx, h)
        a2 = a * a
        return (generated.lognormal_log_weight_mean(a2, m),
                generated.lognormal_tilted_mean(a2, m))

    def coefficients(self, t, n_ctx=None, h=None) -> tuple[np.ndarray, np.ndarray]:
        """Per-distance affine coefficients ``(a_t, m_t)`` broadcast to the shape of ``t``.

        ``t`` are distances ``>= 0``; ``n_ctx`` is the number of keys the query sees (needed by
        transforms whose ``depends_on`` contains ``"context"``, such as :class:`LogN`); ``h``
        selects the head for transforms whose ``depends_on`` contains ``"head"``, such as
        :class:`ALiBi` with several slopes.
        """
        t = check_finite_array("t", t, dtype=np.float64, lo=0)
        n = None if n_ctx is None else check_finite_array("n_ctx", n_ctx, dtype=np.float64, lo=1)
        name = describe(self)
        where = (f"for t in [{t.min() if t.size else 0:g}, {t.max() if t.size else 0:g}]"
                 + ("" if n is None else f", n_ctx {n.max() if n.size else 0:g}")
                 + ("" if h is None else f", head {h}"))
        a, m = self._call_affine(t, n, h)
        if not (np.all(np.isfinite(a)) and np.all(np.isfinite(m))):
            raise ValueError(f"{name} gives non-finite coefficients (a, m) {where}: its "
                             "parameters overflow float64 there")
        grid = t.shape if n is None else np.broadcast_shapes(t.shape, n.shape)
        try:
            shape = np.broadcast_shapes(np.shape(a), np.shape(m), t.shape)
        except ValueError:
            shape = None
        if shape not in (t.shape, grid):  # the shape of t, or of t with n_ctx
            hint = ("; it declares that it depends on the head and was called without a head "
                    "index: pass one (h, or analyze's head)"
                    if h is None and "head" in declared_dependence(self) else "")
            raise ValueError(f"{name} returns coefficients of shapes a {np.shape(a)}, m "
                             f"{np.shape(m)} {where}: _affine must return arrays that broadcast "
                             f"to the shape of t (with n_ctx), {grid}{hint}")
        return np.broadcast_to(a, shape).copy(), np.broadcast_to(m, shape).copy()

    def _call_affine(self, t, n, h):
        """``_affine(t, n, h)`` as two real float arrays; a failure inside it (a user's
        transform can raise anything) or complex or non-numeric coefficients are one
        ``ValueError`` naming the transform."""
        try:
            with np.errstate(over="ignore", invalid="ignore"):
                a, m = self._affine(t, n, h)
        except TransformNotDefined:
            raise
        except Exception as err:
            name = describe(self)
            cause = str(err) if type(err) is ValueError else f"{type(err).__name__}: {err}"
            if "head" in declared_dependence(self) and h is None:
                raise ValueError(f"{name} depends on the head and was called without a head "
                                 f"index h ({cause}); pass one (analyze(head=...), "
                                 f"sia-theory analyze --head), or set n_heads") from err
            if isinstance(err, ValueError) and (name in cause or type(self).__module__
                                                .startswith("sia_theory.")):
                raise  # the package's own bad-input errors, or one that names the transform
            raise ValueError(f"{name} failed computing its coefficients ({cause})") from err
        a, m = np.asarray(a), np.asarray(m)
        for label, x in (("a", a), ("m", m)):
            if x.dtype.kind == "c":
                raise ValueError(f"{describe(self)} returns complex coefficient {label} (dtype "
                                 f"{x.dtype}): a logit's coefficients must be real")
            if x.dtype.kind not in "fiub":
                raise ValueError(f"{describe(self)} must return real numbers as coefficient "
                                 f"{label}, "
                                 f"got dtype {x.dtype}")
        return a.astype(np.float64, copy=False), m.astype(np.float64, copy=False)

    def apply(self, score, t, n_ctx=None, h=None):
        """``a(t, n) * score + m(t, n)``."""
        score = check_finite_array("score", score)
        a, m = self.coefficients(t, n_ctx, h)
        return a * score + m

    def score_mod(self, score, b, h, q_idx, kv_idx):
        """FlexAttention-style score modification on broadcast numpy arrays.

        Causal convention: ``t = q_idx - kv_idx`` and ``n = q_idx + 1``. Keys after the query
        (only reachable without a causal mask) are given the coefficients of distance ``|t|``.
        """
        if np.asarray(score).dtype.kind not in "fiu":  # dtype only: the scores are the big array
            raise ValueError(f"score must be a real array, got dtype {np.asarray(score).dtype}")
        q_idx = check_finite_array("q_idx", q_idx, dtype=np.float64, lo=0)
        kv_idx = check_finite_array("kv_idx", kv_idx, dtype=np.float64, lo=0)
        t = np.abs(q_idx - kv_idx)
        a, m = self._call_affine(t, q_idx + 1.0, h)
        return a * score + m


@dataclass(frozen=True)
class NoScale(Transform):
    """Standard attention: ``L = S`` (the baseline of SI Fig. 1 and Fig. 6)."""

    depends_on = frozenset()

    def _affine(self, t, n, h):
        return np.ones_like(t), np.zeros_like(t)


@dataclass(frozen=True)
class LogN(Transform):
    """LogN / SSMax: ``L = s·log(n)·S`` with ``n`` the number of keys the query sees (SI Fig. 1;
    Nakanishi 2025). Position-agnostic: every distance gets the same multiplier.

    Examples
    --------
    >>> import numpy as np
    >>> from sia_theory import LogN
    >>> a, m = LogN(0.4).coefficients(np.array([0, 5, 999]), 1000)
    >>> np.round(a, 6).tolist(), m.tolist()  # s·log n = 0.4·log 1000 at every distance, no offset
    ([2.763102, 2.763102, 2.763102], [0.0, 0.0, 0.0])
    """

    depends_on = frozenset({"context"})

    s: float = 0.4

    def __post_init__(self):
        object.__setattr__(self, "s", check_real("s", self.s, lo=0, lo_open=True))

    def _affine(self, t, n, h):
        if n is None:
            raise ValueError("n_ctx is required for LogN (the multiplier is s*log(n_ctx))")
        return self.s * np.log(n) * np.ones_like(t), np.zeros_like(t)


@dataclass(frozen=True)
class ScaleInvariant(Transform):
    """Scale-invariant attention, SI eq. 16: ``a_t² = 2[log(t/τ+1) − log α + β/α]``,
    ``m_t = −a_t² + β/α``; the defaults ``α = β = e^{1/2}`` are the boundary-condition solution
    (``a_0 = 1, m_0 = 0``). The formula, the validity condition ``β ≥ α log α`` and the default
    ``α, β`` are not written out here: they come from :mod:`sia_theory.symbolic.generated`, printed
    from the sympy solution of :func:`sia_theory.symbolic.si.solve_coefficients`.

    Examples
    --------
    >>> import numpy as np
    >>> from sia_theory import ScaleInvariant
    >>> si = ScaleInvariant(tau=10)
    >>> a, m = si.coefficients(np.array([0.0, 10.0, 1e6]))
    >>> np.round(a**2, 6).tolist()  # 1 + 2 log(1 + t/τ): 1, 1 + 2 log 2, 1 + 2 log(1e5 + 1)
    [1.0, 2.386294, 24.025871]
    >>> bool(np.allclose(m + a**2, si.beta / si.alpha))  # the coefficient identity m_t + a_t² = β/α
    True
    >>> round(si.alpha, 6) == round(si.beta, 6) == round(float(np.exp(0.5)), 6)  # α = β = e^{1/2}
    True
    """

    depends_on = frozenset({"distance"})

    tau: float = 10.0
    alpha: float = generated.SI_BOUNDARY_ALPHA
    beta: float = generated.SI_BOUNDARY_BETA

    def __post_init__(self):
        tau = check_real("tau", self.tau, lo=0, lo_open=True)
        alpha = check_real("alpha", self.alpha, lo=0, lo_open=True)
        beta = check_real("beta", self.beta, lo=0, lo_open=True)
        if not generated.si_is_valid(alpha, beta):
            raise ValueError(
                f"beta must satisfy {generated.SI_VALIDITY_CONDITION} (SI eq. 16 validity: "
                f"a_t^2 >= 0; the bound is {generated.si_beta_min(alpha):.6g} for "
                f"alpha={alpha!r}), got beta={beta!r}")
        with np.errstate(over="ignore"):
            a2_0 = generated.si_a2(0.0, tau, alpha, beta)
        if not np.isfinite(a2_0):  # a_t² − a_0² = 2 log(t/τ + 1) < 2·710 for every float t
            raise ValueError(f"alpha and beta must give finite coefficients (a_t^2 = 2[log(t/tau"
                             f"+1) - log alpha + beta/alpha] overflows float64), got alpha="
                             f"{alpha!r}, beta={beta!r}, tau={tau!r}")
        object.__setattr__(self, "tau", tau)
        object.__setattr__(self, "alpha", alpha)
        object.__setattr__(self, "beta", beta)

    @property
    def power_law(self) -> tuple[float, float, float]:
        """``(alpha, beta, tau)``: the transform satisfies SI eq. 15 exactly (its definition)."""
        return self.alpha, self.beta, self.tau

    def log_moments(self, t, n_ctx=None, h=None) -> tuple[np.ndarray, np.ndarray]:
        """``(log α − log(t/τ + 1), β/α)``: SI eq. 15 itself, from the simplified sympy
        expressions of :mod:`sia_theory.symbolic.generated` (no cancellation of ``a²`` against
        ``m``, so exact for any valid ``α, β``)."""
        t = check_finite_array("t", t, dtype=np.float64, lo=0)
        if n_ctx is not None:
            check_finite_array("n_ctx", n_ctx, dtype=np.float64, lo=1)
        log_w = generated.si_log_weight_mean(t, self.tau, self.alpha, self.beta)
        tilt = generated.si_tilted_logit_mean(t, self.tau, self.alpha, self.beta)
        return (np.broadcast_to(log_w, t.shape).astype(np.float64),
                np.broadcast_to(tilt, t.shape).astype(np.float64))

    def _affine(self, t, n, h):
        a2 = generated.si_a2(t, self.tau, self.alpha, self.beta)
        # Rounding can leave a2 a few ulps below 0 when beta == alpha*log(alpha) exactly.
        return np.sqrt(np.maximum(a2, 0.0)), generated.si_m(t, self.tau, self.alpha, self.beta)


@dataclass(frozen=True)
class ScaleInvariantFamily(Transform):
    """The family around the SI transform (THEORY.md §6, claims EXT-1 … EXT-3):
    ``a_t² = 1 + 2c·log(1 + t/τ)`` with ``m_t`` chosen so that ``E[Ã_t] = E[e^{L_t}] =
    α/(t/τ + 1)`` for every ``c`` (scale-invariant total attention, SI eq. 15a), i.e. ``m_t = log
    α − log(1 + t/τ) − a_t²/2``. ``c = 1``, ``α = e^{1/2}`` is :class:`ScaleInvariant` (SI-2:
    ``m_t = −2 log(1 + t/τ)``). Then ``E[L_t e^{L_t}] = (log α + ½ + (c − 1)·log(1 + t/τ))·α/(t/τ
    + 1)``: SI eq. 15b (a constant ``β``) holds only at ``c = 1``, which is the only member
    declaring a ``power_law``. ``c < 1`` spreads a scale range like a liquid REM, ``c > 1``
    freezes it (docs/criticality.md §2)."""

    depends_on = frozenset({"distance"})

    c: float = 1.0
    tau: float = 10.0
    alpha: float = generated.SI_BOUNDARY_ALPHA

    def __post_init__(self):
        object.__setattr__(self, "c", check_real("c", self.c, lo=0, lo_open=True))
        object.__setattr__(self, "tau", check_real("tau", self.tau, lo=0, lo_open=True))
        object.__setattr__(self, "alpha", check_real("alpha", self.alpha, lo=0, lo_open=True))

    @property
    def power_law(self) -> tuple[float, float, float] | None:
        """``(α, α(log α + ½), τ)`` at ``c = 1`` (SI eq. 15 with ``β = α(log α + ½)``), else
        ``None`` (``E[L e^L]·(t/τ + 1)`` grows like ``(c − 1) log t``)."""
        if self.c != 1.0:
            return None
        return self.alpha, self.alpha * (np.log(self.alpha) + 0.5), self.tau

    def log_moments(self, t, n_ctx=None, h=None) -> tuple[np.ndarray, np.ndarray]:
        """``(log α − log(1 + t/τ), log α + ½ + (c − 1)·log(1 + t/τ))``, written without the
        cancellation of ``m_t`` against ``a_t²``."""
        t = check_finite_array("t", t, dtype=np.float64, lo=0)
        if n_ctx is not None:
            check_finite_array("n_ctx", n_ctx, dtype=np.float64, lo=1)
        ell = np.log1p(t / self.tau)
        log_alpha = np.log(self.alpha)
        return log_alpha - ell, log_alpha + 0.5 + (self.c - 1.0) * ell

    def _affine(self, t, n, h):
        ell = np.log1p(t / self.tau)
        a2 = 1.0 + 2.0 * self.c * ell
        return np.sqrt(a2), np.log(self.alpha) - ell - 0.5 * a2


@dataclass(frozen=True)
class ALiBi(Transform):
    """ALiBi (Press et al. 2022): ``L = S − slope·t``, one slope or one per head.

    ``ALiBi.standard(H)`` gives the geometric slopes ``2^(−8(h+1)/H)`` of the paper. It depends
    on the distance, and on the head when it has several slopes (then ``n_heads`` is their
    number and attention requires that many heads).
    """

    slope: float | tuple = 1.0
    slopes: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        raw = np.atleast_1d(np.asarray(self.slope, dtype=object))
        if raw.ndim != 1 or raw.size == 0:
            raise ValueError("slope must be a number or a 1-D sequence of numbers (one per head)")
        slopes = np.array([check_real("slope", s, lo=0) for s in raw], dtype=np.float64)
        slopes.setflags(write=False)
        object.__setattr__(self, "slope", float(slopes[0]) if np.ndim(self.slope) == 0
                           else tuple(slopes.tolist()))
        object.__setattr__(self, "slopes", slopes)

    @property
    def depends_on(self) -> frozenset:
        """``{"distance"}`` for one slope, ``{"distance", "head"}`` for one slope per head."""
        return frozenset({"distance", "head"} if self.slopes.size > 1 else {"distance"})

    @classmethod
    def standard(cls, n_heads: int) -> ALiBi:
        """ALiBi's standard slopes for ``n_heads`` heads: ``2^(−8(h+1)/n_heads)``."""
        n_heads = check_int("n_heads", n_heads, lo=1)
        check_memory("n_heads", n_heads, 128 * n_heads)  # a tuple and an array of slopes
        return cls(tuple(2.0 ** (-8.0 * (h + 1) / n_heads) for h in range(n_heads)))

    @property
    def n_heads(self) -> int:
        """The number of slopes (heads)."""
        return self.slopes.size

    def _slope_for(self, h):
        if self.slopes.size == 1:
            return self.slopes[0]
        if h is None:
            raise ValueError("h is required for an ALiBi with one slope per head")
        h = np.asarray(h)
        if h.dtype.kind not in "iu" or np.any((h < 0) | (h >= self.slopes.size)):
            raise ValueError(f"h must be an integer head index in [0, {self.slopes.size - 1}]")
        return self.slopes[h]

    def _affine(self, t, n, h):
        return np.ones_like(t), -self._slope_for(h) * t


@dataclass(frozen=True)
class FixedContext(Transform):
    """``transform`` with its context length frozen at ``n_ctx``: ``(a, m)(t) = transform's
    (a, m)(t, n_ctx)`` for every ``t`` (also ``t >= n_ctx``: the query's profile extended)."""

    transform: Transform
    n_ctx: int

    def __post_init__(self):
        if not isinstance(self.transform, Transform):
            raise ValueError(f"transform must be a sia_theory Transform, got {self.transform!r}")
        object.__setattr__(self, "n_ctx", check_int("n_ctx", self.n_ctx, lo=1))

    @property
    def depends_on(self) -> frozenset:
        """The wrapped transform's dependence without ``"context"``."""
        return declared_dependence(self.transform) - {"context"}

    @property
    def n_heads(self):
        """The wrapped transform's ``n_heads``."""
        return self.transform.n_heads

    def _affine(self, t, n, h):
        return self.transform.coefficients(t, self.n_ctx, h)


def at_context(transform: Transform, n_ctx: int) -> Transform:
    """``transform`` itself if its coefficients do not depend on the context, else
    :class:`FixedContext` at ``n_ctx``."""
    if "context" in declared_dependence(transform):
        return FixedContext(transform, n_ctx)
    return transform


@dataclass(frozen=True)
class AtHead(Transform):
    """``transform`` read at one head ``h``: ``(a, m)(t, n) = transform's (a, m)(t, n, h)``,
    a transform that no longer depends on the head (the per-head analyses)."""

    transform: Transform
    h: int

    def __post_init__(self):
        if not isinstance(self.transform, Transform):
            raise ValueError(f"transform must be a sia_theory Transform, got {self.transform!r}")
        n_heads = self.transform.n_heads
        object.__setattr__(self, "h", check_int("h", self.h, lo=0,
                                                hi=None if n_heads is None else n_heads - 1))

    @property
    def depends_on(self) -> frozenset:
        """The wrapped transform's dependence without ``"head"``."""
        return declared_dependence(self.transform) - {"head"}

    @property
    def n_heads(self):
        """1: one head."""
        return 1

    def _affine(self, t, n, h):
        return self.transform.coefficients(t, n, self.h)


def at_head(transform: Transform, h: int | None) -> Transform:
    """``transform`` at head ``h`` (:class:`AtHead`) when its coefficients depend on the head;
    ``transform`` itself when they do not. ``h=None`` is allowed only for a transform that does
    not say it has several heads (``n_heads`` None or 1); otherwise one ``ValueError`` asking
    for the head."""
    if "head" not in declared_dependence(transform):
        return transform
    if h is None:
        if transform.n_heads is not None and transform.n_heads > 1:
            raise ValueError(f"{describe(transform)} has {transform.n_heads} heads with their "
                             f"own coefficients: pass a head index in "
                             f"[0, {transform.n_heads - 1}] (analyze(head=...), "
                             f"sia-theory analyze --head)")
        return transform
    return AtHead(transform, h)
