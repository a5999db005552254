"""sia_theory.export.torch_flex, exercised by its own name (torch is optional: skipped without
it): the FlexAttention score mod against SI eq. 16, and the per-query statistics against a
softmax written out with numpy."""

import math

import numpy as np
import pytest

from sia_theory import ScaleInvariant
from sia_theory.export.torch_flex import flex_query_stats, flex_score_mod

torch = pytest.importorskip("torch")


def _si_logits(s, n):
    t = np.arange(n)[:, None] - np.arange(n)[None, :]
    a2 = 1 + 2 * np.log1p(np.maximum(t, 0) / 10)
    return np.where(t >= 0, np.sqrt(a2) * s + 1 - a2, -np.inf)


def test_score_mod_is_si_eq_16():
    mod = flex_score_mod(ScaleInvariant(tau=10.0), 64, dtype=torch.float64)
    got = mod(torch.tensor(2.0, dtype=torch.float64), torch.tensor(0), torch.tensor(0),
              torch.tensor(30), torch.tensor(10))
    a2 = 1 + 2 * math.log(3.0)
    assert float(got) == pytest.approx(2 * math.sqrt(a2) + 1 - a2, rel=1e-12)


def test_query_stats_against_numpy():
    rng = np.random.default_rng(0)
    q, k = (rng.standard_normal((1, 1, 9, 4)) for _ in range(2))
    logits = _si_logits(q[0, 0] @ k[0, 0].T / 2.0, 9)
    m = logits.max(-1)
    lse = m + np.log(np.exp(logits - m[:, None]).sum(-1))
    p = np.exp(logits - lse[:, None])
    entropy = -np.sum(np.where(p > 0, p * np.log(np.where(p > 0, p, 1)), 0), axis=-1)
    stats = flex_query_stats(torch.tensor(q), torch.tensor(k), torch.tensor(lse[None, None]),
                             flex_score_mod(ScaleInvariant(tau=10.0), 9, dtype=torch.float64))
    assert stats.entropy.numpy()[0, 0] == pytest.approx(entropy, abs=1e-12)
    assert stats.max_weight.numpy()[0, 0] == pytest.approx(p.max(-1), rel=1e-12)


def test_bad_input_named():
    with pytest.raises(ValueError, match="block"):
        flex_query_stats(torch.zeros(1, 1, 2, 2), torch.zeros(1, 1, 2, 2), torch.zeros(1, 1, 2),
                         block=0)
    with pytest.raises(ValueError, match="max_len"):
        flex_score_mod(ScaleInvariant(), 0)
