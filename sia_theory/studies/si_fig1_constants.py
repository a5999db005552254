"""SI Fig. 1's constants, written once: the three transforms (no scaling, LogN with ``s = 0.4``,
the scale-invariant transform with ``τ = 10``), the attention on the ``100`` most recent tokens
and the decades of distances whose range entropies it shows.

The transforms are those of the schemes :data:`FIG1_SCHEMES` (p-RoPE with each of them,
:data:`sia_theory.schemes.SCHEMES`: ``s`` is the zoo's ``LogN``, :data:`ZOO["logn"]
<sia_theory.zoo.ZOO>`, ``τ`` is :data:`sia_theory.schemes.SI_TAU`), so the Gaussian top row
(:mod:`.si_fig1_gaussian`, claim SI-9) and the trained models' bottom row
(:mod:`.train_attention_stats`, claim TRAIN-5) compare the same three transforms.

Examples
--------
>>> [label for label, _ in FIG1_TRANSFORMS]
['No scale', 'LogN (s = 0.4)', 'Scale-invariant (τ = 10)']
>>> FIG1_RANGES
((10, 100), (100, 1000), (1000, 10000), (10000, 100000))
"""

from __future__ import annotations

from ..schemes import SCHEMES

__all__ = ["FIG1_SCHEMES", "FIG1_TRANSFORMS", "FIG1_LABELS", "FIG1_RECENT", "FIG1_N_MAX",
           "FIG1_RANGES", "fig1_ranges"]

FIG1_SCHEMES = ("p-rope", "logn-p-rope", "si-p-rope")
"""No scaling, LogN and SI, all with p-RoPE (SI Fig. 1, bottom row)."""
FIG1_RECENT = 100
"""The attention on this many most recent tokens (SI Fig. 1)."""
FIG1_N_MAX = 10**5
"""The largest context of the Gaussian top row."""


def _labelled():
    none, logn, si = (SCHEMES[name].transform for name in FIG1_SCHEMES)
    return (("No scale", none), (f"LogN (s = {logn.s:g})", logn),
            (f"Scale-invariant (τ = {si.tau:g})", si))


FIG1_TRANSFORMS = _labelled()
"""``(label, transform)`` of the three transforms, in the figure's order: the transforms of
:data:`FIG1_SCHEMES`."""
FIG1_LABELS = tuple(label for label, _ in FIG1_TRANSFORMS)
"""The labels of :data:`FIG1_TRANSFORMS` (the ``transform`` column of the top row's sweep)."""


def fig1_ranges(max_length: int) -> tuple:
    """Distance ranges ``[t1, t2)`` for the range entropies: SI Fig. 1's decades from 10 on,
    the last one cut at ``max_length`` (ranges shorter than 10 tokens are left out).

    >>> fig1_ranges(4096)
    ((10, 100), (100, 1000), (1000, 4096))
    """
    out, t1 = [], 10
    while t1 < max_length:
        t2 = min(10 * t1, max_length)
        if t2 - t1 >= 10:
            out.append((t1, t2))
        t1 *= 10
    return tuple(out)


FIG1_RANGES = fig1_ranges(FIG1_N_MAX)
"""The decades of the Gaussian top row, ``[10, 100)`` … ``[10⁴, 10⁵)``."""
