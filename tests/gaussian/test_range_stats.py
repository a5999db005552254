"""Range statistics of given logits (sia_theory.gaussian.range_stats): the numba kernel against
SI eq. 6–8 written out directly, the one-token case, the summary's mean ± standard error, and
validation. The Monte Carlo that feeds these statistics is tested in test_montecarlo.py."""

import math

import numpy as np
import pytest

from sia_theory.gaussian.range_stats import (
    check_range_pairs,
    range_statistics,
    range_statistics_reference,
    summarize,
)


def test_range_statistics_matches_direct_formulas():
    logits = np.random.default_rng(3).normal(scale=4.0, size=(7, 1100))  # (rows, n)
    ranges = [(0, 1100), (0, 1), (5, 600), (512, 1024), (1099, 1100), (200, 201)]
    fast = range_statistics(logits, ranges)
    slow = range_statistics_reference(logits, ranges)
    for name in ("Z", "N", "mass", "log_Z"):
        np.testing.assert_allclose(getattr(fast, name), getattr(slow, name), rtol=1e-12,
                                   err_msg=name)
    np.testing.assert_allclose(fast.H, slow.H, rtol=1e-12, atol=1e-13)
    assert fast.H.shape == (7, len(ranges))


def test_range_statistics_handles_one_token_rows():
    stats = range_statistics([[2.5], [-7.0]], [(0, 1)])
    np.testing.assert_allclose(stats.Z[:, 0], np.exp([2.5, -7.0]), rtol=1e-15)
    np.testing.assert_allclose(stats.N[:, 0], np.exp([2.5, -7.0]) * [2.5, -7.0], rtol=1e-15)
    np.testing.assert_array_equal(stats.H, 0.0)
    np.testing.assert_array_equal(stats.mass, 1.0)


@pytest.mark.parametrize(("logits", "ranges", "name"), [
    (np.zeros(5), [(0, 2)], "logits"),
    (np.array([[0.0, np.nan]]), [(0, 2)], "logits"),
    (np.array([[0.0, np.inf]]), [(0, 2)], "logits"),
    (np.zeros((2, 0)), [(0, 1)], "logits"),
    (np.zeros((2, 4)), [(0, 5)], "ranges"),
    (np.zeros((2, 4)), [(2, 1)], "ranges"),
])
def test_range_statistics_validation_errors_name_the_parameter(logits, ranges, name):
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        range_statistics(logits, ranges)


def test_summarize_rejects_mismatched_input():
    stats = range_statistics(np.zeros((3, 4)), [(0, 2), (2, 4)])
    with pytest.raises(ValueError, match=r"^stats\b"):
        summarize({"Z": stats.Z}, [(0, 2), (2, 4)])
    with pytest.raises(ValueError, match=r"^ranges\b"):
        summarize(stats, [(0, 2)])
    table = summarize(stats, [(0, 2), (2, 4)])
    np.testing.assert_allclose(table.mass_mean, [0.5, 0.5], rtol=1e-15)
    np.testing.assert_allclose(table.H_mean, [math.log(2)] * 2, rtol=1e-15)
    assert (table.samples == 3).all()


def test_summarize_rejects_malformed_ranges():
    stats = range_statistics(np.zeros((3, 8)), [(0, 2), (2, 4)])
    for bad in ([[0, 2, 2, 4]], [(7, 1), (0, 2)]):
        with pytest.raises(ValueError, match="^ranges must be"):
            summarize(stats, bad)


def test_check_range_pairs_names_the_offending_pair():
    assert check_range_pairs([], 5, allow_empty=True).shape == (0, 2)
    with pytest.raises(ValueError, match=r"^ranges must contain"):
        check_range_pairs([], 5)
    with pytest.raises(ValueError, match=r"^ranges\[1\] = \(3, 9\)"):
        check_range_pairs([(0, 2), (3, 9)], 5)
