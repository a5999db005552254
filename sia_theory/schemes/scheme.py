"""The :class:`Scheme` type: one position encoding plus one logit transform, under one name.

A :class:`Scheme` holds a position encoding (a key of :data:`POSITIONS`, built for a training
length and a target length, or an encoding object a model's config fixes) and a transform (a
:class:`~sia_theory.transforms.Transform`, or a rule that builds one from the head count, the
training length and the target length); :meth:`Scheme.at` binds it to one length as a
:class:`BoundScheme`. The registry of named schemes (:data:`~sia_theory.schemes.SCHEMES`) and
the resolution of a user's transform (:func:`~sia_theory.schemes.resolve_scheme`) are
:mod:`sia_theory.schemes.registry`; :mod:`sia_theory.schemes` re-exports every name of both.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from .._infra.validate import check_int, check_real
from ..attention.positional import NoPE, PRoPESI, RoPE
from ..attention.rope_scaling import NTKRoPE, YaRNRoPE
from ..transforms import NoScale, Transform

__all__ = ["Scheme", "BoundScheme", "POSITIONS", "ROPE_BASE", "LEARNED"]

ROPE_BASE = 10000.0  # SI App. G
"""RoPE's base (SI App. G); p-RoPE and RoPE + NTK start from it unless a model says otherwise."""
LEARNED = ("score_scale",)
"""Parameters a scheme may ask the model to learn beside its weights: ``score_scale``, one
multiplier of the score ``S`` per layer (from 1), i.e. a learned inverse temperature."""


def _nope(train_length, length, base=ROPE_BASE):
    return NoPE()


def _rope(train_length, length, base=ROPE_BASE):
    return RoPE(base)


def _p_rope(train_length, length, base=ROPE_BASE):
    return PRoPESI()


def _rope_ntk(train_length, length, base=ROPE_BASE):
    # ntk_base leaves the base alone up to the training length (SI App. G)
    return NTKRoPE(train_length, length, base)


def _yarn(train_length, length, base=ROPE_BASE):
    return YaRNRoPE(train_length, length, base)


POSITIONS: dict[str, Callable] = {"nope": _nope, "rope": _rope, "p-rope": _p_rope,
                                  "rope-ntk": _rope_ntk, "yarn": _yarn}
"""Position encodings by name: ``f(train_length, length, base=ROPE_BASE)`` gives the encoding used
for sequences of ``length`` tokens by a model trained at ``train_length``."""

_CONTEXT = ("n_heads", "train_length", "length")


def _rule_arguments(rule) -> tuple[str, ...] | None:
    """The context names a transform rule takes by keyword, or ``None`` for a function of the
    head count alone (one positional parameter of another name, as ``ALiBi.standard``)."""
    try:
        params = inspect.signature(rule).parameters
    except (TypeError, ValueError):
        return None
    if params and all(p in _CONTEXT for p in params):
        return tuple(params)
    return None


class BoundScheme(NamedTuple):
    """A scheme at one length: its ``position`` encoding object and its ``score_mod`` (a
    :class:`~sia_theory.transforms.Transform`, ``None`` where the scheme has no transform);
    ``rule`` is the scheme's description."""

    name: str
    position: object
    score_mod: Transform | None
    rule: str


@dataclass(frozen=True)
class Scheme:
    """A length scheme (:mod:`sia_theory.schemes`): ``name``, ``position`` (a key of
    :data:`POSITIONS`, or an encoding object where a model's config fixes it:
    :func:`sia_theory.from_hf_config`), ``transform`` (a Transform, or a rule
    ``f(n_heads=…, train_length=…, length=…)`` returning one; a function of one other parameter
    is called with the head count), ``description``, ``source`` (the paper or implementation it
    follows) and ``extension`` (how it extends beyond the training length).

    Parameters
    ----------
    name : str
        The scheme's name, non-empty.
    position : str or callable
        A key of :data:`POSITIONS`, or an encoding object ``encoding(x, positions)``.
    transform : Transform or callable
        The logit transform, or a rule returning one.
    description, source, extension : str, optional
        What it is, what it follows and how it extends beyond the training length.
    learned : tuple of str, optional
        Parameters a trained model learns for this scheme beside its weights (names of
        :data:`LEARNED`; default none).

    Raises
    ------
    ValueError
        If ``name`` is empty or not a string, ``position`` is neither a key of
        :data:`POSITIONS` nor callable, ``transform`` is neither a Transform nor callable, or
        ``learned`` names a parameter not in :data:`LEARNED`.

    Examples
    --------
    >>> from sia_theory.schemes import SCHEMES
    >>> s = SCHEMES["si-p-rope"]
    >>> s.tau, s.with_tau(1.0).tau
    (10.0, 1.0)
    >>> from sia_theory import LogN, Scheme
    >>> mine = Scheme("my-logn", "p-rope", LogN(0.3))
    >>> mine.takes_tau, mine.position_encoding(128, 512)  # LogN has no τ; p-RoPE as in SI App. G
    (False, PRoPESI())
    """

    name: str
    position: str
    transform: Transform | Callable
    description: str = ""
    source: str = ""
    extension: str = ""
    learned: tuple = ()

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"scheme name must be a non-empty string, got {self.name!r}")
        fixed = not isinstance(self.position, str) and callable(self.position)
        if not fixed and self.position not in POSITIONS:
            raise ValueError(f"position must be one of {', '.join(POSITIONS)} or an encoding "
                             f"object encoding(x, positions), got {self.position!r}")
        if not (isinstance(self.transform, Transform) or callable(self.transform)):
            raise ValueError(f"transform must be a Transform or a function of n_heads, got "
                             f"{self.transform!r}")
        learned = (self.learned,) if isinstance(self.learned, str) else self.learned
        try:
            learned = tuple(learned)
        except TypeError:
            learned = (learned,)
        unknown = [k for k in learned if k not in LEARNED]
        if unknown or len(set(learned)) != len(learned):
            raise ValueError(f"learned must be distinct names of {', '.join(LEARNED)}, got "
                             f"{self.learned!r}")
        object.__setattr__(self, "learned", learned)

    @property
    def takes_tau(self) -> bool:
        """Whether the transform has a ``tau`` (the SI schemes, or a user's dataclass)."""
        t = self.transform
        return (isinstance(t, Transform) and dataclasses.is_dataclass(t)
                and "tau" in {f.name for f in dataclasses.fields(t)})

    @property
    def tau(self) -> float | None:
        """The transform's τ for schemes that take one (``si-*``), else ``None``."""
        return float(self.transform.tau) if self.takes_tau else None

    def with_tau(self, tau) -> Scheme:
        """This scheme with ``τ = tau`` (``None``: unchanged); ``ValueError`` if it has no τ or
        ``tau`` is not a positive number."""
        if tau is None:
            return self
        tau = check_real("tau", tau, lo=0, lo_open=True, hi=1e9)
        if not self.takes_tau:
            raise ValueError(f"tau: scheme {self.name!r} has no τ (the si-* schemes and "
                             f"transforms with a tau field take one), got tau={tau!r}")
        return dataclasses.replace(self, transform=dataclasses.replace(self.transform, tau=tau))

    def position_encoding(self, train_length: int, length: int, base: float = ROPE_BASE):
        """The encoding for sequences of ``length`` tokens, trained at ``train_length``, with
        RoPE base ``base`` (a scheme whose ``position`` is an encoding object, as a model's
        config fixes it, returns that object)."""
        train_length = check_int("train_length", train_length, lo=1)
        length = check_int("length", length, lo=1)
        base = check_real("base", base, lo=1, lo_open=True, hi=1e12)
        if not isinstance(self.position, str):
            return self.position
        return POSITIONS[self.position](train_length, length, base)

    def transform_for(self, n_heads: int = 1, train_length: int | None = None,
                      length: int | None = None) -> Transform:
        """The transform for a model with ``n_heads`` heads trained at ``train_length`` and
        used at ``length`` (the last two are needed only by rules that depend on them)."""
        n_heads = check_int("n_heads", n_heads, lo=1)
        t = self.transform
        if not isinstance(t, Transform):
            names = _rule_arguments(t)
            context = {"n_heads": n_heads, "train_length": train_length, "length": length}
            if names is None:
                t = t(n_heads)
            else:
                missing = [k for k in names if context[k] is None]
                if missing:
                    raise ValueError(f"scheme {self.name!r}: its transform depends on "
                                     f"{' and '.join(missing)}; pass them to transform_for")
                t = t(**{k: context[k] for k in names})
        if not isinstance(t, Transform):
            raise ValueError(f"scheme {self.name!r}: its transform function must return a "
                             f"Transform, got {t!r}")
        return t

    def at(self, length: int, train_length: int, base: float = ROPE_BASE,
           n_heads: int = 1) -> BoundScheme:
        """The scheme at ``length`` tokens for a model trained at ``train_length``: its encoding
        and transform objects (``score_mod`` ``None`` where the transform is ``NoScale``)."""
        mod = self.transform_for(n_heads, train_length, length)
        return BoundScheme(self.name, self.position_encoding(train_length, length, base),
                           None if isinstance(mod, NoScale) else mod, self.description)
