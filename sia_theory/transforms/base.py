"""The transform protocol: :class:`Transform` (the two routes, ``coefficients`` and
``score_mod``, both through one law, :meth:`Transform.affine`), its declared dependence as
data, and the adapters that fix one of its arguments (:class:`FixedContext`, :class:`AtHead`).
The concrete transforms are :mod:`sia_theory.transforms.standard`; :mod:`sia_theory.transforms`
re-exports every name of both."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from .._deprecated import deprecated
from .._infra.validate import check_finite_array, check_int
from ..symbolic import generated

__all__ = ["DEPENDENCES", "Transform", "FixedContext", "at_context", "AtHead", "at_head",
           "declared_dependence", "describe", "TransformNotDefined"]

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


def _old_name_of(law):
    """``law`` (a class's own ``affine``) under 0.3's name ``_affine``, warning when called: so
    0.3 code that calls ``transform._affine(...)`` or ``super()._affine(...)`` still reaches
    this class's law (until 0.5)."""

    def _affine(self, t, n, h):
        deprecated(f"calling {type(self).__name__}._affine", "affine(t, n, h)")
        return law(self, t, n, h)

    return _affine


class Transform:
    r"""Base class: a subclass defines its law in :meth:`affine` (``affine(t, n, h) -> (a, m)``
    on float arrays), the one method a user's transform overrides; ``coefficients`` and
    ``score_mod`` both go through it, so the routes cannot drift apart. (0.3 called it
    ``_affine``; a subclass that still defines ``_affine`` works until 0.5, with a deprecation
    warning.)

    Subclasses declare what their coefficients depend on in ``depends_on`` (a class attribute
    or a property). The declaration is a promise the fast paths rely on: without ``"context"``
    attention calls ``coefficients`` without ``n_ctx`` and ``context_length_sweep`` runs one
    simulation for every context length; without ``"head"`` attention builds one table for all
    heads (``h=None``). The default, all of ``distance``, ``context`` and ``head``, is the safe
    one: it costs speed (``score_mod`` on every score), never correctness. ``n_heads`` is the
    number of heads a head-dependent transform supports (``None``: any). ``power_law`` is
    ``(alpha, beta, tau)`` when the transform satisfies SI eq. 15 exactly for Gaussian base
    logits (:math:`\mathbb{E}[e^{L_t}] = \alpha/(t/\tau+1)`,
    :math:`\mathbb{E}[L_t e^{L_t}] = \beta/(t/\tau+1)`), which gives the exact digamma range sums of
    :mod:`sia_theory.gaussian.closed_forms`; ``None`` otherwise.
    ``smooth_in_distance`` is ``False`` for coefficients that oscillate in the distance (a
    sinusoidal bias): the long-range distance quadrature of the exact routes, which assumes
    coefficients smooth in ``log t``, then refuses the transform (the exact sums, the Monte
    Carlo and attention are unaffected).

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
    ...     def affine(self, t, n, h):
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
    smooth_in_distance: bool = True

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "distance_only" in vars(cls):  # the flag this attribute replaced (0.1.x)
            warnings.warn(f"{cls.__name__}.distance_only is ignored: declare depends_on = "
                          "frozenset({'distance'}) (or with 'head') instead", FutureWarning,
                          stacklevel=2)
        if "_affine" in vars(cls) and "affine" not in vars(cls):  # the law's name in 0.3
            deprecated(f"defining {cls.__qualname__}._affine", f"{cls.__qualname__}.affine, "
                       "the public name of a transform's law", frames=1)
            cls.affine = cls._affine
        elif "affine" in vars(cls) and "_affine" not in vars(cls):
            cls._affine = _old_name_of(vars(cls)["affine"])  # callers of 0.3's name

    def affine(self, t: np.ndarray, n: np.ndarray | None, h) -> tuple[np.ndarray, np.ndarray]:
        """The transform's law: the coefficients ``(a, m)`` of the logit ``L = a·S + m``.

        The one method a subclass overrides. :meth:`coefficients` (the closed forms, the Monte
        Carlo, the tables of the trainer and the exports) and :meth:`score_mod` (the attention
        reference) both call it, after checking its arguments, and check what it returns.

        Parameters
        ----------
        t : numpy.ndarray
            Distances ``q_idx − kv_idx >= 0``, float64.
        n : numpy.ndarray or None
            The number of keys the query sees, ``q_idx + 1`` (float64, broadcastable to
            ``t``), or ``None`` when the caller has no context length (a transform whose
            ``depends_on`` lacks ``"context"`` ignores it).
        h : int, numpy.ndarray or None
            The head index (a transform whose ``depends_on`` lacks ``"head"`` ignores it).

        Returns
        -------
        tuple of numpy.ndarray
            ``(a, m)``, real, broadcastable to the shape of ``t`` (and ``n``).

        Raises
        ------
        TransformNotDefined
            On the base class: a subclass must define its law.
        """
        raise TransformNotDefined(
            f"{type(self).__name__} does not define its coefficients: a Transform subclass must "
            "implement affine(self, t, n, h) -> (a, m), the affine coefficients of the logit "
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
                             f"{np.shape(m)} {where}: affine must return arrays that broadcast "
                             f"to the shape of t (with n_ctx), {grid}{hint}")
        return np.broadcast_to(a, shape).copy(), np.broadcast_to(m, shape).copy()

    def _call_affine(self, t, n, h):
        """``affine(t, n, h)`` as two real float arrays; a failure inside it (a user's
        transform can raise anything) or complex or non-numeric coefficients are one
        ``ValueError`` naming the transform."""
        try:
            with np.errstate(over="ignore", invalid="ignore"):
                a, m = self.affine(t, n, h)
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


Transform._affine = _old_name_of(Transform.affine)  # 0.3's name, for callers


@dataclass(frozen=True)
class FixedContext(Transform):
    """``transform`` with its context length frozen at ``n_ctx``: ``(a, m)(t) = transform's
    (a, m)(t, n_ctx)`` for every ``t`` (also ``t >= n_ctx``: the query's profile extended).

    Parameters
    ----------
    transform : Transform
        The transform to freeze.
    n_ctx : int
        The context length, >= 1.

    Raises
    ------
    ValueError
        If ``transform`` is not a Transform or ``n_ctx`` is not an integer >= 1.

    Examples
    --------
    >>> import numpy as np
    >>> from sia_theory import FixedContext, LogN
    >>> frozen = FixedContext(LogN(0.4), 1000)
    >>> a, m = frozen.coefficients(np.array([0, 5000]))  # no n_ctx needed any more
    >>> np.round(a, 6).tolist(), sorted(frozen.depends_on)  # 0.4·log 1000 at every distance
    ([2.763102, 2.763102], [])
    """

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

    def affine(self, t, n, h):
        """The wrapped transform's coefficients at the fixed context length."""
        return self.transform.coefficients(t, self.n_ctx, h)


def at_context(transform: Transform, n_ctx: int) -> Transform:
    """``transform`` itself if its coefficients do not depend on the context, else
    :class:`FixedContext` at ``n_ctx``.

    Parameters
    ----------
    transform : Transform
        The transform.
    n_ctx : int
        The context length, >= 1.

    Returns
    -------
    Transform

    Raises
    ------
    ValueError
        From :class:`FixedContext`, for a bad ``n_ctx`` of a transform that depends on the
        context (it is not looked at otherwise).

    Examples
    --------
    >>> from sia_theory import FixedContext, LogN, ScaleInvariant, at_context
    >>> at_context(LogN(0.4), 1000) == FixedContext(LogN(0.4), 1000)
    True
    >>> si = ScaleInvariant(10.0)
    >>> at_context(si, 1000) is si  # no context dependence: unchanged
    True
    """
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

    def affine(self, t, n, h):
        """The wrapped transform's coefficients at the fixed head."""
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
