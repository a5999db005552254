"""Combining attention over disjoint key chunks exactly through their log-sum-exps (split-KV
decoding): the ``(out, lse)`` pairs of :func:`~sia_theory.attention.core.attention_partial` merge
into the attention over the union of the chunks. Numpy only; :mod:`sia_theory.attention.core`
re-exports :func:`merge_partials`.
"""

from __future__ import annotations

import numpy as np

__all__ = ["merge_partials"]


def merge_partials(parts):
    r"""Combine ``(out, lse)`` pairs of :func:`attention_partial` over disjoint key chunks into
    the attention over their union: :math:`\mathrm{lse} = \log \sum_c e^{\mathrm{lse}_c}`,
    :math:`\mathrm{out} = \sum_c e^{\mathrm{lse}_c - \mathrm{lse}}\, \mathrm{out}_c`.

    Parameters
    ----------
    parts : iterable of (numpy.ndarray, numpy.ndarray)
        ``(out, lse)`` pairs of float arrays shaped ``(B, H, Tq, D)`` and ``(B, H, Tq)``, one
        shape for all.

    Returns
    -------
    out, lse : numpy.ndarray
        The attention output and log-sum-exp over every chunk's keys.

    Raises
    ------
    ValueError
        If ``parts`` is empty or malformed, holds NaN (or ``+inf`` in ``lse``), or some query
        sees no key in any chunk.
    """
    parts = list(parts)
    if not parts:
        raise ValueError("parts must contain at least one (out, lse) pair")
    for i, part in enumerate(parts):
        if (not isinstance(part, tuple | list) or len(part) != 2
                or not all(isinstance(x, np.ndarray) for x in part)
                or part[0].ndim != 4 or part[1].shape != part[0].shape[:3]
                or part[0].shape != parts[0][0].shape):
            raise ValueError(f"parts[{i}] must be an (out, lse) pair of arrays shaped "
                             "(B, H, Tq, D) and (B, H, Tq), like every other part")
    for i, (out, lse) in enumerate(parts):
        if out.dtype.kind != "f" or lse.dtype.kind != "f":
            raise ValueError(f"parts[{i}] must hold float arrays, got {out.dtype} and {lse.dtype}")
        if not np.all(np.isfinite(out)):
            raise ValueError(f"parts[{i}] output must contain only finite numbers")
        if np.any(np.isnan(lse) | (lse == np.inf)):
            raise ValueError(f"parts[{i}] lse must be finite, or -inf for a query that sees no "
                             "key in that chunk; got NaN or +inf")
    lses = np.stack([lse for _, lse in parts])  # (C, B, H, Tq)
    top = lses.max(axis=0)  # (B, H, Tq)
    if not np.all(np.isfinite(top)):
        raise ValueError("a query row is fully masked in every part; its softmax is undefined")
    weights = np.exp(lses - top)  # (C, B, H, Tq); exp(-inf) = 0 for empty chunks
    total = weights.sum(axis=0)
    out = sum(w[..., None] * o for w, (o, _) in zip(weights, parts, strict=True))
    out /= total[..., None]
    return out, top + np.log(total)
