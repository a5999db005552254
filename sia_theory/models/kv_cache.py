"""The decoding state of a pretrained model: its KV cache plus how it was computed.

A :class:`ModelCache` holds the per-layer keys and values of the positions processed so far
(:class:`~sia_theory.attention.DecodingCache`, ``(1, Hkv, T, D)`` per layer), each layer's
position encoding and ``score_mod`` that every later token must use too (a continuation with
other ones would mix two models), and the logits after the last processed token. ``fork()``
copies it so that several suffixes can continue one shared prefix (the passkey experiment);
``truncate(n)`` rewinds it to its first ``n`` positions in place.
"""

from __future__ import annotations

import numpy as np

from .._infra.validate import check_int
from ..attention.cache import DecodingCache
from ..attention.layer_mod import layer_score_mod

__all__ = ["ModelCache"]


class ModelCache:
    """KV cache of a :class:`~sia_theory.models.LlamaModel` (see the module docstring).

    Setting ``score_mod`` or ``position`` sets it in every layer (the layers' soft caps and
    windows stay); reading it gives the value the layers share.

    Parameters
    ----------
    kv : DecodingCache
        The per-layer keys and values.
    score_mod, position
        What every layer runs (used when ``layers`` is ``None``).
    dtype : numpy dtype
        The compute dtype.
    layers : sequence of (position, score_mod) pairs, optional
        Each layer's position encoding and logit law (the model's per-layer defaults with the
        call's arguments applied); ``None``: ``(position, score_mod)`` in every layer.
    structure : sequence of (softcap, window) pairs, optional
        Each layer's attention soft cap and sliding window (the architecture's), composed after
        its logit law (:func:`~sia_theory.attention.layer_score_mod`); ``None``: none.

    Raises
    ------
    ValueError
        For ``layers`` or ``structure`` that is not one pair per layer of ``kv``; on reading
        ``score_mod`` or ``position`` when the layers run different ones.
    """

    def __init__(self, kv: DecodingCache, score_mod, position, dtype, layers=None,
                 structure=None):
        self.kv = kv
        self.dtype = np.dtype(dtype)
        n = kv.n_layers
        if layers is None:
            layers = [(position, score_mod)] * n
        if structure is None:
            structure = [(None, None)] * n
        layers, structure = tuple(map(tuple, layers)), tuple(map(tuple, structure))
        for name, pairs in (("layers", layers), ("structure", structure)):
            if len(pairs) != n or any(len(pair) != 2 for pair in pairs):
                raise ValueError(f"{name} must hold {n} pairs, one per layer of the cache")
        self._positions = tuple(p for p, _ in layers)
        self._laws = tuple(m for _, m in layers)
        self.structure = structure
        self.last_logits = None  # (vocab,) after the last processed token

    def layer(self, i) -> tuple:
        """``(position, score_mod)`` layer ``i`` runs: its encoding and its logit law with the
        layer's soft cap and sliding window composed in."""
        softcap, window = self.structure[i]
        return self._positions[i], layer_score_mod(self._laws[i], softcap=softcap,
                                                    window=window)

    @property
    def score_mod(self):
        """The logit law every layer runs (before its soft cap and window)."""
        return _shared("score_mod", self._laws)

    @score_mod.setter
    def score_mod(self, score_mod):
        """Every layer runs ``score_mod`` from now on (``None``: ``q·k/√D`` as is; unlike
        ``model.new_cache(score_mod=None)``, which takes each layer's default law)."""
        self._laws = (score_mod,) * len(self._laws)

    @property
    def position(self):
        """The position encoding every layer runs."""
        return _shared("position", self._positions)

    @position.setter
    def position(self, position):
        self._positions = (position,) * len(self._positions)

    @property
    def length(self) -> int:
        """Positions processed so far."""
        return self.kv.length

    @property
    def nbytes(self) -> int:
        """Bytes of the keys and values held."""
        return self.kv.nbytes

    def fork(self) -> ModelCache:
        """An independent copy (same entries, layers, score_mod, position and last logits)."""
        twin = ModelCache(self.kv.copy(), None, None, self.dtype,
                          zip(self._positions, self._laws), self.structure)
        twin.last_logits = None if self.last_logits is None else self.last_logits.copy()
        return twin

    def truncate(self, length) -> None:
        """Keep only the first ``length`` positions (the last logits are forgotten unless
        nothing is removed)."""
        length = check_int("length", length, lo=0, hi=self.length)
        if length < self.length:
            self.kv.truncate(length)
            self.last_logits = None


def same(a, b) -> bool:
    """``a`` and ``b`` are one value (identical, or equal as plain values; a comparison that
    does not give one boolean counts as different)."""
    if a is b:
        return True
    try:
        return bool(type(a) is type(b) and a == b)
    except (ValueError, TypeError):
        return False


def _shared(name, values):
    if not all(same(v, values[0]) for v in values[1:]):
        raise ValueError(f"the cache's layers run different values of {name}: read "
                         f"cache.layer(i)")
    return values[0]
