"""The decoding state of a pretrained model: its KV cache plus how it was computed.

A :class:`ModelCache` holds the per-layer keys and values of the positions processed so far
(:class:`~sia_theory.attention.DecodingCache`, ``(1, Hkv, T, D)`` per layer), the ``score_mod``
and position encoding every later token must use too (a continuation with other ones would mix
two models), and the logits after the last processed token. ``fork()`` copies it so that
several suffixes can continue one shared prefix (the passkey experiment); ``truncate(n)``
rewinds it to its first ``n`` positions in place.
"""

from __future__ import annotations

import numpy as np

from .._infra.validate import check_int
from ..attention.cache import DecodingCache

__all__ = ["ModelCache"]


class ModelCache:
    """KV cache of a :class:`~sia_theory.models.LlamaModel` (see the module docstring).

    Parameters
    ----------
    kv : DecodingCache
        The per-layer keys and values.
    score_mod, position
        The model call's, fixed for the cache's life.
    dtype : numpy dtype
        The compute dtype.
    """

    def __init__(self, kv: DecodingCache, score_mod, position, dtype):
        self.kv, self.score_mod, self.position = kv, score_mod, position
        self.dtype = np.dtype(dtype)
        self.last_logits = None  # (vocab,) after the last processed token

    @property
    def length(self) -> int:
        """Positions processed so far."""
        return self.kv.length

    @property
    def nbytes(self) -> int:
        """Bytes of the keys and values held."""
        return self.kv.nbytes

    def fork(self) -> ModelCache:
        """An independent copy (same entries, score_mod, position and last logits)."""
        twin = ModelCache(self.kv.copy(), self.score_mod, self.position, self.dtype)
        twin.last_logits = None if self.last_logits is None else self.last_logits.copy()
        return twin

    def truncate(self, length) -> None:
        """Keep only the first ``length`` positions (the last logits are forgotten unless
        nothing is removed)."""
        length = check_int("length", length, lo=0, hi=self.length)
        if length < self.length:
            self.kv.truncate(length)
            self.last_logits = None
