"""Per-query statistics of an attention softmax: log-sum-exp, entropy, largest weight.

For one query row with logits ``L_j`` (after ``score_mod`` and the mask) the streaming kernel
keeps, against its running maximum ``M``, the sum ``Z = Σ_j e^{L_j − M}`` and the tilted sum
``Y = Σ_j e^{L_j − M} (L_j − M)`` (rescaled with ``Z`` when ``M`` grows). Then, with
``p_j = e^{L_j − M} / Z``,

* ``lse = M + log Z``,
* ``entropy = −Σ_j p_j log p_j = log Z − Y / Z`` (nats), and
* ``max_weight = max_j p_j = e^{M − M} / Z = 1 / Z``,

so the three come out of the same single pass over the scores as the output.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["QueryStats", "stats_from_sums"]


class QueryStats(NamedTuple):
    """Per-query statistics, each shaped ``(B, H, Tq)``.

    Attributes
    ----------
    lse : numpy.ndarray
        Natural log-sum-exp of the modified, masked logits.
    entropy : numpy.ndarray
        ``−Σ p log p`` of the attention weights (nats).
    max_weight : numpy.ndarray
        The largest attention weight of the row.
    """

    lse: object  # natural log-sum-exp of the modified, masked logits
    entropy: object  # −Σ p log p of the attention weights (nats)
    max_weight: object  # the largest attention weight of the row


def stats_from_sums(total, tilted, row_max):
    """``(lse, entropy, max_weight)`` from the streaming sums ``Z`` (``total``), ``Y``
    (``tilted``) and the row maximum ``M`` (module docstring), elementwise; float64 arrays."""
    total = np.asarray(total, np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):  # Z = 0: a row that sees no key
        log_total = np.log(total)
        return (row_max + log_total, log_total - np.asarray(tilted) / total, 1.0 / total)
