"""The attention schemes the trainer knows, each built from library objects (SI §5, App. G).

A :class:`Scheme` is a position encoding of :mod:`sia_theory.attention.positional` and a logit
transform of :mod:`sia_theory.transforms` / :mod:`sia_theory.zoo`; nothing about a scheme is
written again for training. The JAX forward receives the transform's ``(a, m)`` tables and the
encoding's frequencies as arrays (:mod:`.tables`).

Registry :data:`SCHEMES` (SI Table 1, Fig. 5 and Fig. 8):

=============== ============================ ===========================================
name            position encoding            transform
=============== ============================ ===========================================
``rope``        ``RoPE(10000)``              ``NoScale()``
``p-rope``      ``PRoPESI()`` (SI App. G)    ``NoScale()``
``nope``        ``NoPE()``                   ``NoScale()``
``alibi``       ``NoPE()``                   ``ALiBi.standard(n_heads)``
``logn-p-rope`` ``PRoPESI()``                ``ZOO["logn"]`` = ``LogN(0.4)`` (SI Fig. 1)
``rope-ntk``    ``NTKRoPE(L, length)``       ``NoScale()`` (NTK only beyond ``L``)
``si-p-rope``   ``PRoPESI()``                ``ScaleInvariant(τ)``, τ = 10 by default
``si-rope``     ``RoPE(10000)``              ``ScaleInvariant(τ)``
``si-nope``     ``NoPE()``                   ``ScaleInvariant(τ)``
=============== ============================ ===========================================

A user's transform trains the same way: :func:`resolve_scheme` takes ``MODULE:OBJECT``,
``FILE.py:OBJECT`` or ``zoo:NAME`` (as ``sia-theory analyze`` does), with p-RoPE unless a
position is appended as ``@nope``, ``@rope``, ``@p-rope`` or ``@rope-ntk``. SI's LogN scale is
learned per layer; here it is the zoo's fixed ``s = 0.4`` (the value of SI Fig. 1's top row).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType

from .._infra.validate import check_int, check_real
from ..attention.positional import NoPE, NTKRoPE, PRoPESI, RoPE
from ..transforms import ALiBi, NoScale, ScaleInvariant, Transform
from ..zoo import ZOO

__all__ = ["Scheme", "SCHEMES", "POSITIONS", "ROPE_BASE", "SI_TAU", "resolve_scheme"]

ROPE_BASE = 10000.0  # SI App. G
"""RoPE's base (SI App. G); p-RoPE and RoPE + NTK start from it."""
SI_TAU = 10.0  # SI §5: τ = 10, chosen at 4k (App. H)
"""The default τ of the scale-invariant schemes (SI §5, chosen in App. H / Fig. 5)."""


def _nope(train_length, length):
    return NoPE()


def _rope(train_length, length):
    return RoPE(ROPE_BASE)


def _p_rope(train_length, length):
    return PRoPESI()


def _rope_ntk(train_length, length):
    # ntk_base leaves the base alone up to the training length (SI App. G)
    return NTKRoPE(train_length, length, ROPE_BASE)


POSITIONS: dict[str, Callable] = {"nope": _nope, "rope": _rope, "p-rope": _p_rope,
                                  "rope-ntk": _rope_ntk}
"""Position encodings by name: ``f(train_length, length)`` gives the encoding used for
sequences of ``length`` tokens by a model trained at ``train_length``."""


def _alibi(n_heads):
    return ALiBi.standard(n_heads)


@dataclass(frozen=True)
class Scheme:
    """A position encoding (a key of :data:`POSITIONS`) and a transform (a
    :class:`~sia_theory.transforms.Transform`, or a function of the head count returning one,
    as ``ALiBi.standard``)."""

    name: str
    position: str
    transform: Transform | Callable
    description: str = ""

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"scheme name must be a non-empty string, got {self.name!r}")
        if self.position not in POSITIONS:
            raise ValueError(f"position must be one of {', '.join(POSITIONS)}, got "
                             f"{self.position!r}")
        if not (isinstance(self.transform, Transform) or callable(self.transform)):
            raise ValueError(f"transform must be a Transform or a function of n_heads, got "
                             f"{self.transform!r}")

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

    def position_encoding(self, train_length: int, length: int):
        """The encoding for sequences of ``length`` tokens, trained at ``train_length``."""
        train_length = check_int("train_length", train_length, lo=1)
        length = check_int("length", length, lo=1)
        return POSITIONS[self.position](train_length, length)

    def transform_for(self, n_heads: int) -> Transform:
        """The transform for a model with ``n_heads`` heads."""
        n_heads = check_int("n_heads", n_heads, lo=1)
        t = self.transform if isinstance(self.transform, Transform) else self.transform(n_heads)
        if not isinstance(t, Transform):
            raise ValueError(f"scheme {self.name!r}: its transform function must return a "
                             f"Transform, got {t!r}")
        if type(t).score_mod is not Transform.score_mod:
            raise ValueError(f"transform: {t!r} overrides score_mod; the trainer builds its "
                             "logits from coefficients(t, n_ctx, h), so the transform must define "
                             "its law there (_affine) and not in score_mod")
        return t


def _entry(name, position, transform, description):
    return name, Scheme(name, position, transform, description)


SCHEMES = MappingProxyType(dict([
    _entry("rope", "rope", NoScale(), "RoPE, base 10000"),
    _entry("p-rope", "p-rope", NoScale(), "SI's p-RoPE (D/4 frequencies from 1 to 1/1024)"),
    _entry("nope", "nope", NoScale(), "no position encoding"),
    _entry("alibi", "nope", _alibi, "ALiBi, geometric slopes 2^(-8(h+1)/H)"),
    _entry("logn-p-rope", "p-rope", ZOO["logn"], "LogN / SSMax s = 0.4 with p-RoPE"),
    _entry("rope-ntk", "rope-ntk", NoScale(), "RoPE + NTK base scaling beyond the training "
           "length"),
    _entry("si-p-rope", "p-rope", ScaleInvariant(SI_TAU), "scale-invariant p-RoPE (SI eq. 16)"),
    _entry("si-rope", "rope", ScaleInvariant(SI_TAU), "scale-invariant attention with RoPE"),
    _entry("si-nope", "nope", ScaleInvariant(SI_TAU), "scale-invariant attention, no "
           "position encoding"),
]))
"""The trainer's schemes by name (module docstring)."""


def resolve_scheme(scheme, tau=None) -> Scheme:
    """A :class:`Scheme` from a registry name, a ``Scheme``, or a user's transform
    ``TARGET[@position]`` (``TARGET`` as ``sia-theory analyze`` takes it: ``MODULE:OBJECT``,
    ``FILE.py:OBJECT`` or ``zoo:NAME``; position p-RoPE by default), with ``τ = tau`` if given.
    ``ValueError`` naming ``scheme`` or ``tau`` otherwise."""
    if isinstance(scheme, Scheme):
        return scheme.with_tau(tau)
    if not isinstance(scheme, str) or not scheme:
        raise ValueError(f"scheme must be a name ({', '.join(SCHEMES)}) or MODULE:OBJECT, got "
                         f"{scheme!r}")
    if scheme in SCHEMES:
        return SCHEMES[scheme].with_tau(tau)
    if ":" not in scheme:
        raise ValueError(f"scheme must be one of {', '.join(SCHEMES)} or a transform "
                         f"MODULE:OBJECT[@position], got {scheme!r}")
    from ..targets import load_transform

    head, sep, tail = scheme.rpartition("@")
    if sep and ":" not in tail:  # TARGET@position ('@' inside a file path is not a position)
        if tail not in POSITIONS:
            raise ValueError(f"scheme: the position after '@' must be one of "
                             f"{', '.join(POSITIONS)}, got {tail!r} in {scheme!r}")
        target, position = head, tail
    else:
        target, position = scheme, "p-rope"
    try:
        transform, _ = load_transform(target)
    except ValueError as err:
        raise ValueError(f"scheme: {err}") from None
    return Scheme(scheme, position, transform, f"{target} with {position}").with_tau(tau)
