"""Length schemes: one position encoding plus one logit transform, under one name.

A :class:`Scheme` (defined in :mod:`sia_theory.schemes.scheme`, with :class:`BoundScheme`,
:data:`POSITIONS`, :data:`ROPE_BASE` and :data:`LEARNED`, all importable from here) is the
library's one notion of "how a model handles positions and context length": a position encoding (a
key of :data:`POSITIONS`, built for a training length and a target length) and a transform (a
:class:`~sia_theory.transforms.Transform`, or a rule that builds one from the head count, the
training length and the target length). The models, the trainer, the studies, the command line and
the docs all take their schemes from the one registry :data:`SCHEMES`; a user's transform becomes a
scheme through :func:`resolve_scheme`, once, at the boundary.

| name | position encoding | transform |
|---|---|---|
| ``rope`` | ``RoPE(base)`` | none |
| ``p-rope`` | ``PRoPESI()`` (SI App. G) | none |
| ``nope`` | ``NoPE()`` | none |
| ``alibi`` | ``NoPE()`` | ``ALiBi.standard(n_heads)`` |
| ``logn-p-rope`` | ``PRoPESI()`` | ``ZOO["logn"]`` = ``LogN(0.4)`` (SI Fig. 1) |
| ``logn-p-rope-learned`` | ``PRoPESI()`` | ``LogN(0.4)`` × a learned scale per layer (SI App. G) |
| ``rope-ntk`` | ``NTKRoPE(L, n, base)`` | none (NTK only beyond ``L``) |
| ``yarn`` | ``YaRNRoPE(L, n, base)`` | ``YaRNTemperature(n/L)`` |
| ``qwen-logn`` | ``RoPE(base)`` | ``QwenLogN(L)`` |
| ``llama4`` | ``RoPE(base)`` | ``Llama4Temperature(L, 0.1)`` |
| ``si-p-rope`` | ``PRoPESI()`` | ``ScaleInvariant(τ)``, τ = 10 |
| ``si-rope`` | ``RoPE(base)`` | ``ScaleInvariant(τ)``, τ = 10 |
| ``si-nope`` | ``NoPE()`` | ``ScaleInvariant(τ)``, τ = 10 |
| ``si-rope-posthoc`` | ``RoPE(base)`` | ``ScaleInvariant(si_tau(L))`` (post hoc) |

A scheme may also declare parameters the model learns beside its weights (:data:`LEARNED`):
``learned=("score_scale",)`` gives every layer one learned multiplier ``λ_l`` of the score ``S``
(from 1, trained with Adam at the output layer's rate, as SI App. G trains its "LogN scalings"),
so ``logn-p-rope-learned`` has logits ``0.4·λ_l·log n·S``: LogN with ``s_l = 0.4·λ_l`` learned per
layer.

``L`` is the training length, ``n`` the length the scheme is used at, ``base`` RoPE's base
(10000 unless the model's config says otherwise). The names of 0.3 that spelled the same idea
twice still resolve, with a :class:`DeprecationWarning` naming the new one (:data:`ALIASES`:
``ntk`` is ``rope-ntk``, ``scale-invariant`` is ``si-rope-posthoc``; removed in 0.5).

The package's modules: :mod:`~sia_theory.schemes.scheme` (the type),
:mod:`~sia_theory.schemes.registry` (the registry and the resolution),
:mod:`~sia_theory.schemes.rope_config` (a config's ``rope_parameters`` as an encoding and a
score mod, :func:`from_rope_parameters`) and :mod:`~sia_theory.schemes.targets` (a transform
named on a command line, :func:`load_transform`).
"""

from .registry import (
    ALIASES,
    SCHEMES,
    SI_EPSILON,
    SI_TAU,
    get_scheme,
    resolve_scheme,
    scheme_names,
    si_tau,
)
from .rope_config import ROPE_TYPES, from_rope_parameters
from .scheme import LEARNED, POSITIONS, ROPE_BASE, BoundScheme, Scheme
from .targets import TargetError, load_transform

__all__ = ["Scheme", "BoundScheme", "SCHEMES", "ALIASES", "POSITIONS", "ROPE_BASE", "SI_TAU",
           "SI_EPSILON", "LEARNED", "si_tau", "get_scheme", "resolve_scheme", "scheme_names",
           "from_rope_parameters", "ROPE_TYPES", "load_transform", "TargetError"]
