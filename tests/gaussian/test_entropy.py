"""sia_theory.gaussian.entropy, exercised by its own name: seeded entropy-in-range sampling
against a plain numpy softmax entropy, and the growth-law fit on exact lines."""

import math

import numpy as np
import pandas as pd
import pytest

from sia_theory import LogN, NoScale
from sia_theory.gaussian.entropy import (
    entropy_in_range_samples,
    entropy_in_range_scaling,
    entropy_table,
    fit_growth_laws,
)


def _brute_entropy(keys, samples, seed):
    """Softmax entropy of `keys` iid N(0, 1) logits, plain numpy."""
    x = np.random.default_rng(seed).standard_normal((samples, keys))
    p = np.exp(x - x.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    return -(p * np.log(p)).sum(axis=1)


def test_standard_attention_entropy_matches_brute_force():
    """NoScale, [8, 16) holds 8 iid N(0, 1) logits: the mean within 4 combined standard errors
    of a numpy brute force with its own generator."""
    table = entropy_in_range_scaling(NoScale(), [8], [2], samples=4000, seed=3)
    row = table.iloc[0]
    assert (row["t1"], row["t2"], row["samples"]) == (8, 16, 4000)
    ref = _brute_entropy(8, 20_000, 0)
    se = math.hypot(row["H_se"], ref.std(ddof=1) / math.sqrt(ref.size))
    assert abs(row["H_mean"] - ref.mean()) < 4 * se


def test_samples_shape_and_table_agree():
    table, h = entropy_in_range_samples(NoScale(), [4, 8], [2, 3], samples=50, seed=1)
    assert h.shape == (50, 2, 2)
    assert table["H_mean"].to_numpy() == pytest.approx(h.mean(axis=0).ravel())
    again = entropy_table(NoScale(), [4, 8], [2, 3], h)
    pd.testing.assert_frame_equal(table, again)


def test_fit_growth_laws_on_exact_lines():
    t = np.array([10.0, 100.0, 1e4, 1e8])
    table = pd.DataFrame({"delta": 2, "t": t, "H_mean": 0.5 * np.log(t) + 1.0})
    fits = fit_growth_laws(table).set_index("law")
    assert fits.loc["log t", "slope"] == pytest.approx(0.5)
    assert fits.loc["log t", "intercept"] == pytest.approx(1.0)
    assert fits.loc["log t", "r2"] == pytest.approx(1.0)
    assert fits.loc["sqrt(log t)", "r2"] < 1.0


def test_bad_input_named():
    with pytest.raises(ValueError, match="transform"):
        entropy_in_range_scaling(LogN(), [4], [2], samples=10)
    with pytest.raises(ValueError, match="deltas"):
        entropy_in_range_scaling(NoScale(), [4], [1], samples=10)
    with pytest.raises(ValueError, match="t_values"):
        entropy_in_range_scaling(NoScale(), "4", [2], samples=10)
    with pytest.raises(ValueError, match="samples"):
        entropy_in_range_scaling(NoScale(), [4], [2], samples=1)
    with pytest.raises(ValueError, match="at least 3 distinct t"):
        fit_growth_laws(pd.DataFrame({"delta": 2, "t": [1.0, 2.0], "H_mean": [0.0, 1.0]}))
