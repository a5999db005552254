"""Decoding caches for :class:`~sia_theory.attention.Decoder`.

Two layouts (INA §3, "Cache"):

* ``"kv"`` — per-layer keys and values, ``n_layers × 2 × (B, H, T, Dh)``: the standard KV
  cache, and also InAttention's "projected" option (``W_K Y``, ``W_V Y`` per layer).
* ``"initial"`` — InAttention's shared cache of the RMS-normed initial embeddings ``Y``,
  ``(B, T, d_model)`` once for all layers; every layer re-projects ``K = W_K Y``, ``V = W_V Y``.

Storage grows by doubling unless a capacity is given up front, so appending one token is
amortised ``O(1)`` copies. What enters the cache is checked for finiteness once, on entry
(``O(new tokens)``), so that decoding steps can attend over it without re-reading it.
"""

from __future__ import annotations

import numpy as np

from .._infra.validate import check_int
from . import core

__all__ = ["DecodingCache"]


class _GrowingArray:
    """An array that grows along ``axis`` with amortised O(1) appends."""

    def __init__(self, axis, capacity):
        self.axis, self.capacity, self.length, self.data = axis, capacity, 0, None

    def append(self, block):
        n_new = block.shape[self.axis]
        if self.data is None:
            shape = list(block.shape)
            shape[self.axis] = max(self.capacity or 0, n_new)
            self.data = np.empty(shape, dtype=block.dtype)
        elif self.length + n_new > self.data.shape[self.axis]:
            shape = list(self.data.shape)
            shape[self.axis] = max(2 * shape[self.axis], self.length + n_new)
            grown = np.empty(shape, dtype=self.data.dtype)
            grown[self._slice(0, self.length)] = self.view()
            self.data = grown
        self.data[self._slice(self.length, self.length + n_new)] = block
        self.length += n_new

    def copy(self):
        twin = _GrowingArray(self.axis, self.capacity)
        if self.data is not None:
            twin.data, twin.length = self.view().copy(), self.length
        return twin

    def _slice(self, start, stop):
        index = [slice(None)] * self.data.ndim
        index[self.axis] = slice(start, stop)
        return tuple(index)

    def view(self):
        """The filled part of the buffer as a read-only view (the buffer stays writable)."""
        out = self.data[self._slice(0, self.length)]
        out.flags.writeable = False
        return out

    @property
    def nbytes(self):
        return 0 if self.data is None else self.view().nbytes

    @property
    def allocated_nbytes(self):
        return 0 if self.data is None else self.data.nbytes


class DecodingCache:
    """What a :class:`Decoder` keeps between decoding steps.

    ``length`` is the number of positions already processed; ``nbytes`` counts the stored
    entries (what the cache must hold), ``allocated_nbytes`` the buffers including spare room.

    Parameters
    ----------
    n_layers : int
        ``>= 1``.
    mode : str
        ``"kv"`` (keys and values per layer) or ``"initial"`` (the initial embeddings, for
        InAttention).
    capacity : int or None
        Positions to allocate up front (``>= 1``; default: grow as needed).

    Raises
    ------
    ValueError
        If ``mode`` is unknown or a count is out of range.
    """

    def __init__(self, n_layers, mode, capacity=None):
        if mode not in ("kv", "initial"):
            raise ValueError(f"mode must be 'kv' or 'initial', got {mode!r}")
        n_layers = check_int("n_layers", n_layers, lo=1)
        capacity = None if capacity is None else check_int("capacity", capacity, lo=1)
        self.mode, self.n_layers = mode, n_layers
        if mode == "kv":  # (B, H, T, Dh) per layer: grow along T (axis 2)
            self._keys = [_GrowingArray(2, capacity) for _ in range(n_layers)]
            self._values = [_GrowingArray(2, capacity) for _ in range(n_layers)]
        else:  # (B, T, d_model) once: grow along T (axis 1)
            self._initial = _GrowingArray(1, capacity)

    @property
    def length(self) -> int:
        """Tokens held (the sequence length the cache covers)."""
        return self._keys[-1].length if self.mode == "kv" else self._initial.length

    def append_kv(self, layer, keys, values):
        """Append one layer's new ``keys`` and ``values`` (checked finite once, here)."""
        core.require_finite("keys", keys)  # once, on entry
        core.require_finite("values", values)
        self._keys[layer].append(keys)
        self._values[layer].append(values)

    def keys(self, layer):
        """The keys of ``layer`` held so far, a read-only view."""
        return self._keys[layer].view()

    def values(self, layer):
        """The values of ``layer`` held so far, a read-only view."""
        return self._values[layer].view()

    def append_initial(self, initial):
        """Append new InAttention initial states ``Y`` (checked finite once, here)."""
        core.require_finite("initial", initial)  # once, on entry
        self._initial.append(initial)

    def initial(self):
        """The InAttention initial states ``Y`` held so far, a read-only view."""
        return self._initial.view()

    def copy(self) -> DecodingCache:
        """An independent cache holding the same entries (only the filled part is copied), so
        that several continuations can start from one shared prefix."""
        twin = DecodingCache.__new__(DecodingCache)
        twin.mode, twin.n_layers = self.mode, self.n_layers
        for name in ("_keys", "_values") if self.mode == "kv" else ():
            setattr(twin, name, [buffer.copy() for buffer in getattr(self, name)])
        if self.mode == "initial":
            twin._initial = self._initial.copy()
        return twin

    def truncate(self, length):
        """Forget every position from ``length`` on (used to undo a failed forward pass)."""
        length = check_int("length", length, lo=0)
        for buffer in self._buffers():
            buffer.length = min(buffer.length, length)

    def _buffers(self):
        return self._keys + self._values if self.mode == "kv" else [self._initial]

    @property
    def nbytes(self) -> int:
        """Bytes of the tokens held (what INA-1 counts)."""
        return sum(b.nbytes for b in self._buffers())

    @property
    def allocated_nbytes(self) -> int:
        """Bytes allocated, including the buffers' spare capacity."""
        return sum(b.allocated_nbytes for b in self._buffers())
