"""The scheme registry: :data:`SCHEMES` (every named scheme, one definition each),
:data:`ALIASES` (deprecated names), :func:`get_scheme`, :func:`resolve_scheme` (a user's
transform becomes a scheme once, at the boundary) and the defaults of the scale-invariant
schemes (:data:`SI_TAU`, :func:`si_tau`)."""

from __future__ import annotations

import math
from types import MappingProxyType

from .._deprecated import deprecated
from ..transforms import ALiBi, NoScale, ScaleInvariant
from ..zoo import ZOO, Llama4Temperature, QwenLogN, YaRNTemperature
from .scheme import POSITIONS, Scheme
from .targets import load_transform

__all__ = ["SCHEMES", "ALIASES", "SI_TAU", "SI_EPSILON", "si_tau", "get_scheme",
           "resolve_scheme", "scheme_names"]

SI_TAU = 10.0  # SI §5: τ = 10, chosen at 4k (App. H)
"""The default τ of the scale-invariant schemes (SI §5, chosen in App. H / Fig. 5)."""
SI_EPSILON = 0.1
"""The post-hoc SI transform's tolerance inside the training context: ``a_t <= 1 + SI_EPSILON``
there (sets τ, :func:`si_tau`)."""


def si_tau(train_length: int = 8192, epsilon: float = SI_EPSILON) -> float:
    """τ of the post-hoc scale-invariant transform: the smallest τ with ``a_t <= 1 + ε`` for
    every ``t`` inside the training context. ``a_t² = 1 + 2 log(1 + t/τ)`` (SI eq. 16 with
    α = β = e^½) gives ``τ = L/(exp(((1 + ε)² − 1)/2) − 1)``, so a model that never saw a
    transform is left within ε of its trained logits where it was trained and the transform
    grows only beyond (τ ≈ 9.03·L for ε = 0.1)."""
    return train_length / math.expm1(((1.0 + epsilon) ** 2 - 1.0) / 2.0)


def _alibi(n_heads):
    return ALiBi.standard(n_heads)


def _yarn_temperature(*, train_length, length):
    return YaRNTemperature(max(1.0, length / train_length))


def _qwen_logn(*, train_length):
    return QwenLogN(train_length)


def _llama4(*, train_length):
    return Llama4Temperature(float(train_length), 0.1)


def _si_posthoc(*, train_length):
    return ScaleInvariant(si_tau(train_length))


_SI_APP_G = "SI App. G"
_REGISTRY = (
    Scheme("rope", "rope", NoScale(), "RoPE as trained", "Su et al. 2024 (RoFormer eq. 34)",
           "none: positions beyond the training length are unseen rotations"),
    Scheme("p-rope", "p-rope", NoScale(), "SI's p-RoPE (D/4 frequencies from 1 to 1/1024)",
           _SI_APP_G, "none"),
    Scheme("nope", "nope", NoScale(), "no position encoding", "SI §5", "none"),
    Scheme("alibi", "nope", _alibi, "ALiBi, geometric slopes 2^(-8(h+1)/H)",
           "Press et al. 2022", "a linear distance penalty at every length"),
    Scheme("logn-p-rope", "p-rope", ZOO["logn"], "LogN / SSMax s = 0.4 with p-RoPE",
           "SI Fig. 1 (a fixed s; logn-p-rope-learned learns it per layer as SI App. G)",
           "logits x s log n"),
    Scheme("logn-p-rope-learned", "p-rope", ZOO["logn"], "LogN / SSMax with p-RoPE, its scale "
           "learned per layer: s_l = 0.4 lambda_l, lambda_l from 1",
           "SI App. G (the LogN scalings trained with Adam)", "logits x s_l log n",
           learned=("score_scale",)),
    Scheme("rope-ntk", "rope-ntk", NoScale(), "RoPE + NTK base scaling beyond the training "
           "length", "NTK-aware scaling (bloc97 2023); SI App. G",
           "base x s^(d/(d-2)), s = max(1, n/L)"),
    Scheme("yarn", "yarn", _yarn_temperature,
           "YaRN as transformers and the authors' code (ramp linear in the dimension index, "
           "beta_fast=32, beta_slow=1), logits x (0.1 ln s + 1)^2",
           "Peng et al. 2023; transformers modeling_rope_utils._compute_yarn_parameters",
           "frequencies interpolated by s = max(1, n/L), temperature (0.1 ln s + 1)^2"),
    Scheme("qwen-logn", "rope", _qwen_logn, "logits x max(1, log n / log L)",
           "Qwen-1 modeling_qwen.py use_logn_attn", "query x log n / log L beyond L"),
    Scheme("llama4", "rope", _llama4, "logits x (0.1 log(floor(n/L) + 1) + 1)",
           "transformers models/llama4/modeling_llama4.py", "a staircase in floor(n/L)"),
    Scheme("si-p-rope", "p-rope", ScaleInvariant(SI_TAU), "scale-invariant p-RoPE (SI eq. 16)",
           "SI §5, eq. 16", "a_t, m_t of SI eq. 16 at every length"),
    Scheme("si-rope", "rope", ScaleInvariant(SI_TAU), "scale-invariant attention with RoPE",
           "SI App. I.3", "a_t, m_t of SI eq. 16 at every length"),
    Scheme("si-nope", "nope", ScaleInvariant(SI_TAU), "scale-invariant attention, no position "
           "encoding", "SI App. I.3", "a_t, m_t of SI eq. 16 at every length"),
    Scheme("si-rope-posthoc", "rope", _si_posthoc,
           "SI eq. 16 applied post hoc, tau = L/(exp(0.105) - 1) (a_t <= 1.1 inside L)",
           "SI eq. 16 with tau from si_tau(L)", "the identity to within 10 % inside L"),
)

SCHEMES = MappingProxyType({s.name: s for s in _REGISTRY})
"""Every scheme by its one name (module docstring)."""
ALIASES = MappingProxyType({"ntk": "rope-ntk", "scale-invariant": "si-rope-posthoc"})
"""Names of 0.3 for schemes that now have one name (deprecated; they resolve with a warning)."""


def scheme_names() -> tuple[str, ...]:
    """The registry's names in table order."""
    return tuple(SCHEMES)


def get_scheme(name: str) -> Scheme:
    """The registered scheme ``name`` (an old name of :data:`ALIASES` resolves with a
    deprecation warning); ``ValueError`` naming ``scheme`` otherwise."""
    if name in SCHEMES:
        return SCHEMES[name]
    if name in ALIASES:
        new = ALIASES[name]
        deprecated(f"scheme name {name!r}", repr(new))
        return SCHEMES[new]
    raise ValueError(f"scheme must be one of {', '.join(SCHEMES)} or a transform "
                     f"MODULE:OBJECT[@position], got {name!r}")


def _user_scheme(text: str) -> Scheme:
    head, sep, tail = text.rpartition("@")
    if sep and ":" not in tail:  # TARGET@position ('@' inside a file path is not a position)
        if tail not in POSITIONS:
            raise ValueError(f"scheme: the position after '@' must be one of "
                             f"{', '.join(POSITIONS)}, got {tail!r} in {text!r}")
        target, position = head, tail
    else:
        target, position = text, "p-rope"
    try:
        transform, _ = load_transform(target)
    except ValueError as err:
        raise ValueError(f"scheme: {err}") from None
    return Scheme(text, position, transform, f"{target} with {position}", "user transform")


def resolve_scheme(scheme, tau=None) -> Scheme:
    """A :class:`Scheme` from a registry name, a ``Scheme``, or a user's transform
    ``TARGET[@position]`` (``TARGET`` as ``sia-theory analyze`` takes it: ``MODULE:OBJECT``,
    ``FILE.py:OBJECT`` or ``zoo:NAME``; position p-RoPE by default), with ``τ = tau`` if given.
    A user's file is executed here, once: resolve at the boundary and pass the object on.

    Parameters
    ----------
    scheme : str or Scheme
        A name of :data:`SCHEMES` (or an old one of :data:`ALIASES`, with a
        deprecation warning), a ``Scheme``, or ``TARGET[@position]``.
    tau : float, optional
        The τ of the scheme's transform, in ``(0, 1e9]`` (None: unchanged).

    Returns
    -------
    Scheme

    Raises
    ------
    ValueError
        Naming ``scheme`` for an unknown name, an empty or non-string value or a target that
        cannot be loaded; naming ``tau`` for a scheme without τ or a τ out of range.

    Examples
    --------
    >>> resolve_scheme("si-p-rope", tau=1.0).transform.tau
    1.0
    >>> s = resolve_scheme("zoo:logn")  # a zoo member on p-RoPE
    >>> s.position, s.transform
    ('p-rope', LogN(s=0.4))
    """
    if isinstance(scheme, Scheme):
        return scheme.with_tau(tau)
    if not isinstance(scheme, str) or not scheme:
        raise ValueError(f"scheme must be a name ({', '.join(SCHEMES)}) or MODULE:OBJECT, got "
                         f"{scheme!r}")
    if scheme in SCHEMES or scheme in ALIASES or ":" not in scheme:
        return get_scheme(scheme).with_tau(tau)
    return _user_scheme(scheme).with_tau(tau)
