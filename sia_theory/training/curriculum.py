"""A copy curriculum: pretraining windows that repeat a span of themselves, so that a model small
enough for the CPU budget learns to retrieve from its context (the premise of SI Table 2's needle
test, which plain pretraining on 1 M tokens does not meet on the CPU: no model copies from
context there).

:func:`repeat_spans` rewrites a fixed fraction of a batch's windows: in each chosen window of
``L + 1`` tokens a span of ``span = max(1, round(span_fraction · L))`` (default
:data:`SPAN_FRACTION`; at most half the window) uniformly random token
ids (never the separator) is written at a position of the first half and again at a position
of the second half (positions drawn per window). Only retrieval predicts the second copy: the
text around it says nothing about random ids (the copy task of the small-model studies of
induction heads and associative recall). A pilot with spans copied from the window's own text
instead (SI + p-RoPE, full settings, the registry corpus, a quarter of the windows) taught no
copying at all: its copy drop on random tokens stayed at −0.02 nats, as without a curriculum.
Every other window is unchanged, and the validation documents are never rewritten, so the
losses of a run with a curriculum are the same quantity as without one. The draws come from
``rng_for(0, "training.curriculum", step)``: the same windows are rewritten the same way for
every scheme and seed (bit-identical), as the data order is.

The curriculum is a setting of the run (``TrainSettings.copy_fraction``), part of its store key;
the docs report the Table 1 runs with it beside the plain ones, so nobody mistakes the
curriculum's effect for the scheme's.
"""

from __future__ import annotations

import numpy as np

from .._infra.seeding import rng_for

__all__ = ["SPAN_FRACTION", "CURRICULUM_STUDY", "repeat_spans"]

SPAN_FRACTION = 0.125
"""The default length of the repeated span as a fraction of the training length ``L``
(``TrainSettings.copy_span``)."""
CURRICULUM_STUDY = "training.curriculum"
"""Study name of the curriculum's random stream."""


def repeat_spans(windows: np.ndarray, fraction: float, step: int, vocab_size: int,
                 separator: int, span_fraction: float = SPAN_FRACTION) -> np.ndarray:
    """``windows`` ``(B, L + 1)`` with a fraction ``fraction`` of them (``round(fraction · B)``,
    chosen per ``step``) each holding one span of random ids from ``[0, vocab_size)`` other
    than ``separator`` twice, once in each half (module docstring), the span
    ``span_fraction`` of ``L`` long (in ``(0, 0.5]``); a new array (the input is not modified).

    Examples
    --------
    >>> w = np.arange(2 * 17).reshape(2, 17)
    >>> out = repeat_spans(w, 0.5, step=0, vocab_size=300, separator=0)
    >>> int((out != w).any(axis=1).sum())  # one window of two rewritten
    1
    """
    w = np.asarray(windows)
    if w.ndim != 2 or w.shape[1] < 5:
        raise ValueError(f"windows must be (batch, L + 1) with L >= 4, got shape {w.shape}")
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"fraction must be in [0, 1], got {fraction!r}")
    if not 0.0 < span_fraction <= 0.5:
        raise ValueError(f"span_fraction must be in (0, 0.5], got {span_fraction!r}")
    if not isinstance(vocab_size, int | np.integer) or vocab_size < 3:
        raise ValueError(f"vocab_size must be an integer >= 3, got {vocab_size!r}")
    out = w.copy()
    batch, width = w.shape
    count = int(round(fraction * batch))
    if count == 0:
        return out
    length = width - 1
    span = min(width // 2, max(1, int(round(span_fraction * length))))
    half = width // 2
    rng = rng_for(0, CURRICULUM_STUDY, int(step))
    chosen = rng.choice(batch, size=count, replace=False)
    sources = rng.integers(0, max(1, half - span + 1), size=count)
    targets = rng.integers(half, width - span + 1, size=count)
    ids = rng.integers(0, vocab_size - 1, size=(count, span))  # (count, span)
    ids = ids + (ids >= separator)  # skip the separator's id
    for row, a, b, span_ids in zip(chosen, sources, targets, ids):
        out[row, a:a + span] = span_ids
        out[row, b:b + span] = span_ids
    return out
