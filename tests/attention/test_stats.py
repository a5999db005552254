"""sia_theory.attention.stats, exercised by its own name: (lse, entropy, max weight) from the
streaming sums Z = Σ e^{L−M}, Y = Σ e^{L−M}(L − M) against a direct softmax."""

import numpy as np
import pytest

from sia_theory.attention.stats import QueryStats, stats_from_sums


def test_against_direct_softmax():
    logits = np.array([[0.3, -1.0, 2.0, 0.0], [5.0, 5.0, 5.0, 5.0]])
    m = logits.max(axis=1)
    e = np.exp(logits - m[:, None])
    lse, entropy, max_weight = stats_from_sums(e.sum(1), (e * (logits - m[:, None])).sum(1), m)
    p = np.exp(logits - np.log(np.exp(logits).sum(axis=1, keepdims=True)))
    assert lse == pytest.approx(np.log(np.exp(logits).sum(axis=1)))
    assert entropy == pytest.approx(-(p * np.log(p)).sum(axis=1))
    assert entropy[1] == pytest.approx(np.log(4))
    assert max_weight == pytest.approx(p.max(axis=1))


def test_row_without_keys_and_named_fields():
    lse, entropy, max_weight = stats_from_sums(np.array([0.0]), np.array([0.0]),
                                               np.array([-np.inf]))
    assert lse[0] == -np.inf and max_weight[0] == np.inf
    stats = QueryStats(1.0, 2.0, 3.0)
    assert (stats.lse, stats.entropy, stats.max_weight) == (1.0, 2.0, 3.0)
