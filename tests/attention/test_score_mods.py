"""sia_theory.attention.score_mods, exercised by its own name: ScoreModifier's masked logits for
a distance transform (SI eq. 16 written out here), a context transform and a callable."""

import math

import numpy as np
import pytest

from sia_theory import LogN, ScaleInvariant
from sia_theory.attention.score_mods import ScoreModifier


def _mod(score_mod, n=6, offset=0):
    return ScoreModifier(score_mod, n_batch=1, n_heads=1, n_queries=n, n_keys=n, offset=offset,
                         causal=True)


def test_si_logits_with_causal_mask():
    """a_t² = 1 + 2 log(1 + t/τ), m_t = 1 − a_t², t = q_idx − kv_idx; −inf above the diagonal."""
    s = np.random.default_rng(0).standard_normal((1, 1, 6, 6))
    got = _mod(ScaleInvariant(tau=2.0)).logits(s.copy(), 0, 6, 0, 6)
    t = np.arange(6)[:, None] - np.arange(6)[None, :]
    a2 = 1 + 2 * np.log1p(np.maximum(t, 0) / 2.0)
    expected = np.where(t >= 0, np.sqrt(a2) * s[0, 0] + 1 - a2, -np.inf)
    assert np.array_equal(np.isinf(got[0, 0]), np.isinf(expected))
    assert got[0, 0][t >= 0] == pytest.approx(expected[t >= 0], rel=1e-12)


def test_logn_scales_each_row_by_log_of_its_keys():
    """LogN(s): L = s·log(n)·S with n = q_idx + 1 the keys the query sees."""
    s = np.ones((1, 1, 6, 6))
    got = _mod(LogN(s=0.4), offset=0).logits(s, 0, 6, 0, 6)
    for row in range(1, 6):
        assert got[0, 0, row, 0] == pytest.approx(0.4 * math.log(row + 1))


def test_callable_score_mod():
    s = np.zeros((1, 1, 4, 4))
    got = _mod(lambda score, b, h, q, kv: score + (q - kv), n=4).logits(s, 0, 4, 0, 4)
    assert got[0, 0, 3, 1] == 2.0 and got[0, 0, 1, 3] == -np.inf


def test_bad_score_mod_named():
    with pytest.raises(ValueError, match="score_mod"):
        _mod(3.0)
