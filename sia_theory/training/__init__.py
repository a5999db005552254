"""Training small decoders with the schemes of SI §5 (JAX on CPU, optax), in miniature.

``train(scheme, settings, seed=...)`` returns a :class:`TrainedRun` (numpy parameters, loss
curves, ``validation_loss(length)``, ``decoder(length)`` for the numpy reference). Schemes are
library objects (:data:`SCHEMES`); settings are :class:`TrainSettings` (``quick()``,
``full()``). JAX and optax come from the ``train`` extra (``pip install 'sia-theory[train]'``):
this package imports without them, and ``train`` raises ``ImportError`` naming the extra.

Beyond a run: :mod:`.needle` fine-tunes a run on the multi-needle retrieval task of
:mod:`.needle_task` (SI Table 2) and scores it; :mod:`.copying` is the copy test (can a run copy
from its own context). The other modules are the trainer's parts.
"""

import importlib

from ..schemes import POSITIONS, SCHEMES, Scheme, resolve_scheme
from .run import TrainedRun
from .settings import TrainSettings

__all__ = ["train", "evaluate", "TrainedRun", "TrainSettings", "SCHEMES", "POSITIONS",
           "Scheme", "resolve_scheme"]

_LAZY = {"train": ".trainer", "evaluate": ".trainer"}  # these import JAX


def __getattr__(name):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
