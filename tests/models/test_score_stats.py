"""sia_theory.models.score_stats, exercised by its own name: moments against scipy.stats, the
range entropy and mass against a softmax written out here, and the measured-Gaussian transform."""

import numpy as np
import pytest
from scipy import stats

from sia_theory.models.score_stats import (
    MeasuredGaussian,
    detrend,
    gaussian_verdict,
    neighbour_correlation,
    range_entropy,
    range_mass,
    row_moments,
)


def test_moments_match_scipy():
    x = np.random.default_rng(0).gamma(2.0, size=(3, 500))
    m = row_moments(x)
    assert m["skew"] == pytest.approx(stats.skew(x, axis=-1))
    assert m["excess_kurtosis"] == pytest.approx(stats.kurtosis(x, axis=-1))
    assert m["var"] == pytest.approx(x.var(axis=-1))


def test_neighbour_correlation_and_detrend():
    assert neighbour_correlation(np.arange(10.0))[()] == pytest.approx(1.0)
    assert detrend(np.arange(10.0), window=3) == pytest.approx(np.zeros(8))
    with pytest.raises(ValueError, match="window"):
        detrend(np.arange(10.0), window=4)


def test_range_entropy_and_mass_against_softmax():
    """Query at position 5 with scores s; the range [1, 3) holds keys 4 and 3."""
    s = np.array([[0.1, -0.4, 0.9, 0.3, 1.2, -0.7]])
    block = s[0, [4, 3]]
    p = np.exp(block) / np.exp(block).sum()
    assert range_entropy(s, [5], 1, 3)[0] == pytest.approx(-np.sum(p * np.log(p)))
    assert range_mass(s, [5], 1, 3)[0] == pytest.approx(np.exp(block).sum() / np.exp(s).sum())
    with pytest.raises(ValueError, match="query_positions"):
        range_entropy(s, [1], 1, 3)


def test_verdict_and_measured_transform():
    v = gaussian_verdict(0.0, 0.0, 0.0)
    assert bool(v["gaussian"]) and v["violation"] == 0.0
    t = MeasuredGaussian(edges=(0, 10, 100), sigma=(1.0, 2.0), mean=(0.0, -1.0))
    a, m = t.coefficients(np.array([0.0, 9.0, 10.0, 500.0]))
    assert a.tolist() == [1.0, 1.0, 2.0, 2.0] and m.tolist() == [0.0, 0.0, -1.0, -1.0]
    with pytest.raises(ValueError, match="edges"):
        MeasuredGaussian(edges=(1, 10), sigma=(1.0,), mean=(0.0,))
