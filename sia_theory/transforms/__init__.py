r"""Attention-logit transforms: one object per scheme, used by every part of the package.

A transform maps a raw score :math:`S` at distance ``t = q_idx - kv_idx`` for a query that sees
``n = q_idx + 1`` keys to the logit :math:`L = a(t, n)\,S + m(t, n)`. Each transform exposes

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

Both routes go through one law, ``affine(t, n, h)``, so they cannot drift apart.

The package's modules, every name importable from here:

* :mod:`~sia_theory.transforms.base` — the protocol :class:`Transform`, its declared dependence
  (:data:`DEPENDENCES`, :func:`declared_dependence`, :func:`describe`) and the adapters that fix
  one argument (:class:`FixedContext`, :func:`at_context`, :class:`AtHead`, :func:`at_head`);
* :mod:`~sia_theory.transforms.standard` — the papers' transforms (:class:`NoScale`,
  :class:`LogN`, :class:`ScaleInvariant`, :class:`ScaleInvariantFamily`, :class:`ALiBi`);
* :mod:`~sia_theory.transforms.score_mod` — a bare FlexAttention ``score_mod`` read as a
  transform (:class:`ScoreModTransform`);
* :mod:`~sia_theory.transforms.tables` — a transform as the per-position coefficient tables the
  trainer and the exports read (:func:`~sia_theory.transforms.tables.coefficient_tables`).

The published rules of shipped models are the zoo (:mod:`sia_theory.zoo`), one floor up.
"""

from .base import (
    DEPENDENCES,
    AtHead,
    FixedContext,
    Transform,
    TransformNotDefined,
    at_context,
    at_head,
    declared_dependence,
    describe,
)
from .score_mod import ScoreModTransform, as_transform
from .standard import ALiBi, LogN, NoScale, ScaleInvariant, ScaleInvariantFamily

__all__ = ["DEPENDENCES", "Transform", "NoScale", "LogN", "ScaleInvariant",
           "ScaleInvariantFamily", "ALiBi", "FixedContext", "at_context", "AtHead", "at_head",
           "declared_dependence", "describe", "TransformNotDefined", "ScoreModTransform",
           "as_transform"]
