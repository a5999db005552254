"""Position encodings and QK-norm for the attention reference (SI §4 and App. G).

* :func:`rope` — rotary position embedding (Su et al. 2024, RoFormer eq. 34) and p-RoPE, with
  :class:`RoPE` and :func:`rope_frequencies`: defined in :mod:`~sia_theory.attention.rotary`
  (the rotation the context-extension encodings build on) and importable from here.
* :func:`p_rope_si_frequencies` / :data:`P_ROPE_SI` — the p-RoPE of the SI experiments: half
  the frequencies with "an effective base of 1024" (SI App. G). Our reading, taken from the
  modded-nanogpt code the SI models are built on ("half-truncate RoPE", Jordan et al. 2024):
  the ``D/4`` rotating frequencies are ``(1/1024)^(j/(D/4−1))``, ``j = 0..D/4−1`` — geometric
  from 1 down to exactly 1/1024 — and the other ``D/4`` pairs have frequency 0. This is not
  ``rope(base=1024, fraction=0.5)``, whose lowest kept frequency would be ``1024^(−1/2)``.
* The context-extension encodings (NTK, dynamic NTK, YaRN) live in
  :mod:`~sia_theory.attention.rope_scaling`; their names still resolve here.
* :func:`rms_norm` — RMSNorm without a learned gain; QK-norm is RMSNorm of q and k over the head
  dimension (SI App. G; Henry et al. 2020).

The classes ``NoPE``, ``RoPE`` and ``PRoPESI`` are small frozen callables ``encoding(x,
positions)`` used to configure :class:`sia_theory.attention.DecoderConfig`. ``RoPE`` accepts
transformers' name ``rope_theta`` for its base. ``fraction`` is p-RoPE (the highest frequencies of
the full head rotate); it is not transformers' ``partial_rotary_factor``, which rotates the first
``p·D`` dimensions with frequencies ``base^(−2k/(p·D))`` and pairs ``(k, k + p·D/2)``.
Each also gives its frequencies, ``encoding.frequencies(D)`` (shape ``(D/2,)``, 0 for a pair that
does not rotate), which is what another implementation (the JAX trainer) rotates with.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

import numpy as np

from .._infra.validate import check_finite_array, check_real
from .rotary import RoPE, check_head_dim, check_x, rope, rope_frequencies, rotate

__all__ = ["rope", "rope_frequencies", "p_rope_si_frequencies", "p_rope_si", "rms_norm",
           "qk_norm", "NoPE", "RoPE", "PRoPESI", "P_ROPE_SI_BASE"]

# SI App. G: "an effective base of 1024 for the angular frequencies in p-RoPE".
P_ROPE_SI_BASE = 1024.0
"""SI App. G's effective base of the p-RoPE angular frequencies (1024)."""
# Names that moved to rope_scaling, resolved lazily for code written against 0.2.
_MOVED = frozenset({"ntk_base", "yarn_frequencies", "NTKRoPE", "YaRNRoPE", "YARN_ALPHA",
                    "YARN_BETA", "DynamicNTKRoPE", "dynamic_ntk_base"})


def __getattr__(name):
    if name in _MOVED:
        return getattr(importlib.import_module(".rope_scaling", __package__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def p_rope_si_frequencies(head_dim) -> np.ndarray:
    """SI's p-RoPE frequencies (App. G, modded-nanogpt "half-truncate RoPE"): ``D/4`` frequencies
    geometric from 1 to ``1/1024`` inclusive, then ``D/4`` zeros.

    Parameters
    ----------
    head_dim : int
        ``D``, a multiple of 4.

    Returns
    -------
    numpy.ndarray
        ``(D/2,)``.

    Raises
    ------
    ValueError
        If ``head_dim`` is not a positive multiple of 4.

    Examples
    --------
    >>> p_rope_si_frequencies(8).tolist()
    [1.0, 0.0009765625, 0.0, 0.0]
    """
    head_dim = check_head_dim(head_dim, multiple=4)
    n_rotating = head_dim // 4
    if n_rotating == 1:
        rotating = np.ones(1)
    else:
        rotating = (1.0 / P_ROPE_SI_BASE) ** np.linspace(0.0, 1.0, n_rotating)  # (D/4,)
    return np.concatenate([rotating, np.zeros(head_dim // 2 - n_rotating)])


def p_rope_si(x, positions):
    """p-RoPE exactly as in the SI experiments (App. G): see :func:`p_rope_si_frequencies`.

    Parameters
    ----------
    x : numpy.ndarray
        Queries or keys ``(..., T, D)``, float32 or float64, finite, ``D`` a multiple of 4.
    positions : array_like
        ``(T,)`` finite positions.

    Returns
    -------
    numpy.ndarray
        ``x`` rotated, same shape and dtype.

    Raises
    ------
    ValueError
        If ``x`` or ``positions`` is malformed.
    """
    x = check_x(x, 4)
    return rotate(x, positions, p_rope_si_frequencies(x.shape[-1]))


def rms_norm(x, eps=None):
    """RMSNorm without a gain, over the last axis: ``x / sqrt(mean(x²) + eps)`` (Zhang & Sennrich
    2019), computed without overflow or underflow.

    Parameters
    ----------
    x : array_like
        Finite, at least one axis; integers are normalised in float64.
    eps : float, optional
        ``>= 0``; default the dtype's machine epsilon, as ``torch.nn.functional.rms_norm``.

    Returns
    -------
    numpy.ndarray
        Same shape as ``x``.

    Raises
    ------
    ValueError
        If ``x`` is not finite or has no entries on its last axis, or ``eps < 0``.

    Examples
    --------
    >>> rms_norm([3.0, 4.0], eps=0.0).round(6).tolist()  # rms = sqrt(12.5)
    [0.848528, 1.131371]
    """
    x = check_finite_array("x", x)
    if x.ndim < 1 or x.shape[-1] == 0:
        raise ValueError(f"x must have at least one axis with entries to normalise over (the "
                         f"last), got shape {x.shape}")
    if x.dtype.kind != "f":  # integers: normalise in float64 (an int mean square would overflow)
        x = x.astype(np.float64)
    eps = np.finfo(x.dtype).eps if eps is None else check_real("eps", eps, lo=0)
    # rms(x) = scale·sqrt(mean((x/scale)²)) with scale the row's largest magnitude, so neither
    # a row of 1e200 overflows nor a row of 1e-200 underflows; sqrt(rms² + eps) is a hypot.
    scale = np.max(np.abs(x), axis=-1, keepdims=True)  # (..., 1)
    safe = np.where(scale > 0, scale, 1.0)
    rms = safe * np.sqrt(np.mean(np.square(x / safe), axis=-1, keepdims=True))  # (..., 1)
    denominator = np.hypot(rms, np.sqrt(eps))
    # A zero row with eps = 0 has no direction: it stays zero (not 0/0).
    return x / np.where(denominator > 0, denominator, 1.0)


def qk_norm(q, k, eps=None):
    """QK-norm (SI App. G; Henry et al. 2020): RMSNorm of q and k over the head dimension.

    Parameters
    ----------
    q, k : array_like
        Queries and keys, as for :func:`rms_norm`.
    eps : float, optional
        As for :func:`rms_norm`.

    Returns
    -------
    tuple of numpy.ndarray
        ``(rms_norm(q, eps), rms_norm(k, eps))``.

    Raises
    ------
    ValueError
        As :func:`rms_norm`.
    """
    return rms_norm(q, eps), rms_norm(k, eps)


@dataclass(frozen=True)
class NoPE:
    """No position encoding: ``x`` is returned unchanged (Kazemnejad et al. 2023)."""

    def frequencies(self, head_dim) -> np.ndarray:
        """All ``D/2`` frequencies are 0 (no pair rotates), shape ``(D/2,)``."""
        return np.zeros(check_head_dim(head_dim) // 2)

    def __call__(self, x, positions):
        return x


@dataclass(frozen=True)
class PRoPESI:
    """The p-RoPE of SI's experiments: half the frequencies, effective base 1024 (App. G)."""

    def frequencies(self, head_dim) -> np.ndarray:
        """:func:`p_rope_si_frequencies`, shape ``(D/2,)``."""
        return p_rope_si_frequencies(head_dim)

    def __call__(self, x, positions):
        return p_rope_si(x, positions)
