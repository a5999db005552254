"""The trainer's view of the library's one scheme registry (:mod:`sia_theory.schemes`).

Every scheme of :data:`sia_theory.schemes.SCHEMES` trains: its position encoding gives the
rotation tables and its transform the ``(a, m)`` coefficient tables of the JAX forward
(:mod:`.tables`); nothing about a scheme is written again for training. The trainer needs one
thing more of a transform: its law must be in ``coefficients()`` (the affine ``a·S + m`` the
tables hold), not in an overridden ``score_mod`` — :func:`trainable_transform` says so before
any work. The registry's names that 0.3 re-exported here resolve with a deprecation warning
until 0.5 (import them from :mod:`sia_theory.schemes`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._deprecated import moved_names
from ..transforms import ScoreModTransform, Transform
from .settings import TrainSettings
from .tables import check_float32

if TYPE_CHECKING:
    from ..schemes import Scheme

__all__ = ["trainable_transform", "check_trainable"]

__getattr__ = moved_names(__name__)  # the registry's names of 0.3 (removed in 0.5)


def trainable_transform(scheme: Scheme, n_heads: int, train_length: int,
                        length: int) -> Transform:
    """``scheme``'s transform for a model of ``n_heads`` heads trained at ``train_length``,
    used at ``length``; ``ValueError`` if the transform overrides ``score_mod`` (the trainer
    builds its logits from ``coefficients(t, n_ctx, h)``)."""
    t = scheme.transform_for(n_heads, train_length, length)
    # a bare score_mod function (ScoreModTransform) has its affine law in coefficients() too
    if type(t).score_mod is not Transform.score_mod and not isinstance(t, ScoreModTransform):
        raise ValueError(f"transform: {t!r} overrides score_mod; the trainer builds its "
                         "logits from coefficients(t, n_ctx, h), so the transform must define "
                         "its law there (affine) and not in score_mod")
    return t


def check_trainable(scheme: Scheme, settings: TrainSettings) -> None:
    """``ValueError`` naming the scheme unless its transform can train a model of ``settings``
    and be validated at its longest length: its law in ``coefficients()``, and its coefficients
    finite in float32 at the training length and at ``settings.max_length``
    (:func:`.tables.check_float32`). A transform that raises, returns NaN, inf, complex or
    wrongly shaped values, or overflows float32, is refused here, before any store or
    compilation."""
    for length in (settings.train_length, settings.max_length):
        t = trainable_transform(scheme, settings.n_heads, settings.train_length, length)
        try:
            check_float32(t, settings.n_heads, length)
        except ValueError as err:
            raise ValueError(f"scheme {scheme.name!r}: {err}") from None
        except Exception as err:  # a user's transform can raise anything
            raise ValueError(f"scheme {scheme.name!r}: its transform raised {type(err).__name__}"
                             f": {err}") from None
