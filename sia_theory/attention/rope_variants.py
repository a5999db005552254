"""The other RoPE scalings transformers ships: linear, LongRoPE and proportional.

Each is a frozen callable ``encoding(x, positions)`` with the half-split pairing ``(k, k + D/2)``
of :func:`~sia_theory.attention.rope` and a ``frequencies(head_dim)`` method giving what
transformers calls ``inv_freq`` (float64 here; transformers computes float32, relative
differences of about 1e-7). The source is transformers' ``modeling_rope_utils.py``, read in two
versions: v4.4x (huggingface/transformers at commit ef46806472a6, the ``rope_scaling`` line) and
the v5 ``rope_parameters`` line (the version with ``proportional`` and Gemma-4 per-layer
parameters); where they differ the docstring says so.

* :class:`LinearRoPE` — ``_compute_linear_scaling_rope_parameters`` (kaiokendev 2023, position
  interpolation): ``inv_freq = base^(−2k/D)/factor``, attention factor 1.
* :class:`LongRoPE` — ``_compute_longrope_parameters`` (Ding et al. 2024, microsoft/LongRoPE;
  Phi-3): ``inv_freq = 1/(ext·base^(2k/D))`` with ``ext = long_factor`` once the forward call's
  ``seq_len = max(position_ids) + 1`` exceeds ``original_max_position_embeddings`` and
  ``short_factor`` otherwise (``longrope_frequency_update``); attention factor
  :func:`~sia_theory.zoo.models.longrope_attention_factor` on cos and sin (a zoo member's
  law: the zoo's ``longrope`` entry).
* :class:`ProportionalRoPE` — ``_compute_proportional_rope_parameters`` (v5 only): the first
  ``int(p·D//2)`` frequencies are RoPE's *of the full head*, ``base^(−2k/D)``, the rest 0, all
  divided by ``factor``. Unlike ``partial_rotary_factor`` elsewhere, the encoding keeps the full
  head dimension and the exponent's denominator is ``D``, not ``p·D``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._infra.validate import check_int, check_real
from .rotary import check_head_dim, check_positions, check_x, rope_frequencies, rotate

__all__ = ["LinearRoPE", "LongRoPE", "ProportionalRoPE"]


@dataclass(frozen=True)
class LinearRoPE:
    """Linear scaling (position interpolation, transformers ``rope_type="linear"``): RoPE's
    frequencies divided by ``factor``, i.e. positions divided by ``factor``.

    Parameters
    ----------
    factor : float
        ``> 0``.
    rope_theta : float
        The RoPE base, ``> 1``.

    Raises
    ------
    ValueError
        If a value is out of range.
    """

    factor: float
    rope_theta: float = 10000.0

    def __post_init__(self):
        object.__setattr__(self, "factor", check_real("factor", self.factor, lo=0, lo_open=True))
        object.__setattr__(self, "rope_theta",
                           check_real("rope_theta", self.rope_theta, lo=1, lo_open=True))

    def frequencies(self, head_dim) -> np.ndarray:
        """``base^(−2k/D)/factor``, shape ``(D/2,)``."""
        return rope_frequencies(head_dim, self.rope_theta) / self.factor

    def __call__(self, x, positions):
        x = check_x(x, 2)
        return rotate(x, positions, self.frequencies(x.shape[-1]))


def _factors(name, values):
    try:  # numbers only: strings, booleans and ragged lists are refused, not converted
        raw = np.asarray(values) if isinstance(values, list | tuple | np.ndarray) else None
    except (TypeError, ValueError):
        raw = None
    array = raw.astype(np.float64) if raw is not None and raw.dtype.kind in "iuf" else None
    if (array is None or array.ndim != 1 or array.size == 0 or not np.all(np.isfinite(array))
            or np.any(array <= 0)):
        raise ValueError(f"{name} must be a non-empty list of positive numbers (one per "
                         f"frequency, head_dim/2 of them), got {values!r}")
    array.setflags(write=False)
    return array


@dataclass(frozen=True, init=False)
class LongRoPE:
    """LongRoPE (transformers ``rope_type="longrope"``, module docstring): per-frequency
    rescale factors, ``short_factor`` up to ``original_max_position_embeddings`` and
    ``long_factor`` beyond. ``frequencies(D)`` is the frequencies at initialisation (short);
    ``frequencies(D, seq_len)`` those of a forward call whose last position is ``seq_len − 1``.
    A call rotates with the factors of ``max(positions) + 1``, as transformers' forward does.

    Parameters
    ----------
    short_factor, long_factor : sequence of float
        Positive factors, one per frequency (``D/2``), the two of one length.
    original_max_position_embeddings : int
        ``>= 1``: the length up to which ``short_factor`` applies.
    rope_theta : float
        The RoPE base, ``> 1``.

    Raises
    ------
    ValueError
        If a factor list is empty, not positive, or the two differ in length, or a value is
        out of range.
    """

    short_factor: tuple
    long_factor: tuple
    original_max_position_embeddings: int
    rope_theta: float = 10000.0
    _short: np.ndarray = field(init=False, repr=False, compare=False)
    _long: np.ndarray = field(init=False, repr=False, compare=False)

    def __init__(self, short_factor, long_factor, original_max_position_embeddings,
                 rope_theta=10000.0):
        short, long = _factors("short_factor", short_factor), _factors("long_factor", long_factor)
        if short.size != long.size:
            raise ValueError(f"short_factor and long_factor must have the same length (head_dim"
                             f"/2), got {short.size} and {long.size}")
        for key, value in (("short_factor", tuple(short.tolist())),
                           ("long_factor", tuple(long.tolist())),
                           ("original_max_position_embeddings",
                            check_int("original_max_position_embeddings",
                                      original_max_position_embeddings, lo=1)),
                           ("rope_theta", check_real("rope_theta", rope_theta, lo=1,
                                                     lo_open=True)),
                           ("_short", short), ("_long", long)):
            object.__setattr__(self, key, value)

    def frequencies(self, head_dim, seq_len=None) -> np.ndarray:
        """``1/(ext·base^(2k/D))``, ``(D/2,)``: ``ext`` the long factors when ``seq_len >
        original_max_position_embeddings``, else the short ones."""
        head_dim = check_head_dim(head_dim)
        if head_dim // 2 != self._short.size:
            raise ValueError(f"head_dim must be {2 * self._short.size} (twice the number of "
                             f"LongRoPE factors), got {head_dim}")
        long = seq_len is not None and check_int("seq_len", seq_len, lo=1) > \
            self.original_max_position_embeddings
        ext = self._long if long else self._short
        return 1.0 / (ext * self.rope_theta ** (np.arange(0, head_dim, 2) / head_dim))

    def __call__(self, x, positions):
        x, positions = check_x(x, 2), check_positions(positions)
        seq_len = int(positions.max()) + 1
        return rotate(x, positions, self.frequencies(x.shape[-1], seq_len))


@dataclass(frozen=True)
class ProportionalRoPE:
    """Proportional RoPE (transformers v5 ``rope_type="proportional"``, module docstring):
    ``int(partial_rotary_factor·D//2)`` rotating frequencies ``base^(−2k/D)``, zeros after,
    all divided by ``factor``.

    Parameters
    ----------
    rope_theta : float
        The RoPE base, ``> 1``.
    partial_rotary_factor : float
        Share of the frequencies that rotate, in ``[0, 1]``.
    factor : float
        ``> 0``.

    Raises
    ------
    ValueError
        If a value is out of range.
    """

    rope_theta: float = 10000.0
    partial_rotary_factor: float = 1.0
    factor: float = 1.0

    def __post_init__(self):
        object.__setattr__(self, "rope_theta",
                           check_real("rope_theta", self.rope_theta, lo=1, lo_open=True))
        object.__setattr__(self, "partial_rotary_factor",
                           check_real("partial_rotary_factor", self.partial_rotary_factor,
                                      lo=0, hi=1))
        object.__setattr__(self, "factor", check_real("factor", self.factor, lo=0, lo_open=True))

    def frequencies(self, head_dim) -> np.ndarray:
        """RoPE's ``base^(−2k/D)`` for ``k < int(p·D//2)``, 0 after, over ``factor``;
        ``(D/2,)``."""
        head_dim = check_head_dim(head_dim)
        n_rotating = int(self.partial_rotary_factor * head_dim // 2)
        theta = self.rope_theta ** (-np.arange(0, 2 * n_rotating, 2) / head_dim)  # (n_rot,)
        return np.concatenate([theta, np.zeros(head_dim // 2 - n_rotating)]) / self.factor

    def __call__(self, x, positions):
        x = check_x(x, 2)
        return rotate(x, positions, self.frequencies(x.shape[-1]))
