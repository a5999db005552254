"""Attention by distance octave (sia_theory/training/octaves.py): the measured statistics
against a loop written out here, the bootstrap REM against an independent brute-force Monte
Carlo of a synthetic bounded head, seeded reproducibility and bad input."""

import math

import numpy as np
import pytest

from sia_theory.training.octaves import octave_edges, octave_stats, predict_octaves


def _octaves_by_loop(n_keys):
    """Octave 0: distances {0, 1}; octave j >= 1: [2^j, 2^(j+1)) cut at n_keys - 1."""
    groups, j = [[0, 1]], 1
    while 2 ** j < n_keys:
        groups.append(list(range(2 ** j, min(2 ** (j + 1), n_keys))))
        j += 1
    return groups


def _stats_by_loop(logits):
    """Softmax over the row, then per octave the share and the entropy of the softmax restricted
    to the octave over log of its key count: plain Python."""
    top = max(logits)
    z = sum(math.exp(x - top) for x in logits)
    entropy, share = [], []
    for group in _octaves_by_loop(len(logits)):
        p = [math.exp(logits[t] - top) / z for t in group]
        s = sum(p)
        share.append(s)
        h = -sum(q / s * math.log(q / s) for q in p if q > 0)
        entropy.append(h / math.log(len(group)) if len(group) > 1 else math.nan)
    return np.array(entropy), np.array(share)


@pytest.mark.parametrize("n_keys", [2, 3, 8, 9, 37, 64])
def test_octave_stats_match_the_loop(n_keys):
    rng = np.random.default_rng(n_keys)
    logits = rng.normal(0, 2, n_keys) - 0.05 * np.arange(n_keys)
    entropy, share = octave_stats(logits)
    want_entropy, want_share = _stats_by_loop(list(logits))
    assert octave_edges(n_keys).tolist() == [g[0] for g in _octaves_by_loop(n_keys)] + [n_keys]
    np.testing.assert_allclose(share, want_share, rtol=1e-12)
    np.testing.assert_allclose(entropy, want_entropy, rtol=1e-10)


def test_octave_stats_survive_an_alibi_bias_that_underflows_the_row():
    """A bias of −3 per distance over 4096 keys: the far octaves' shares are 0 but their
    within-octave entropy is still exact (the octave's own softmax of a linear ramp); octave 0's
    share is (1 + e^-3)(1 − e^-3) = 1 − e^-6 (the geometric series)."""
    t = np.arange(4096.0)
    entropy, share = octave_stats(-3.0 * t)
    assert share[-1] == 0.0 and share[0] == pytest.approx(1 - math.exp(-6), rel=1e-12)
    p = np.exp(-3.0 * np.arange(2048))
    p /= p.sum()
    assert entropy[-1] == pytest.approx(-(p[p > 0] * np.log(p[p > 0])).sum() / math.log(2048))


def test_distances_past_the_samples_draw_from_the_last_one():
    """Samples {0} for octave 0 and {5} beyond: every draw is the same row, whose shares are
    2·e^0, 2·e^5, 4·e^5 over their sum, its entropies 1 (equal logits per octave), s.e. 0."""
    out = predict_octaves([np.zeros(4), np.full(3, 5.0)], np.ones(8), np.zeros(8), draws=3)
    weights = np.array([2.0, 2 * math.exp(5), 4 * math.exp(5)])
    np.testing.assert_allclose(out["share"], weights / weights.sum(), rtol=1e-12)
    np.testing.assert_allclose(out["entropy"], 1.0, rtol=1e-12)
    assert np.all(out["share_se"] == 0)


def _brute_force(values, a, m, n_rows, rng):
    """Rows of i.i.d. scores drawn uniformly from ``values``, one key at a time (a loop, not
    the code under test), their octave statistics by :func:`_stats_by_loop`."""
    entropies, shares = [], []
    for _ in range(n_rows):
        scores = [values[rng.integers(len(values))] for _ in range(len(a))]
        e, s = _stats_by_loop([a[t] * scores[t] + m[t] for t in range(len(a))])
        entropies.append(e)
        shares.append(s)
    return np.array(entropies), np.array(shares)


def test_the_bootstrap_matches_a_brute_force_monte_carlo_of_a_bounded_head():
    """A head whose raw scores are bounded (uniform on 25 points of [−1, 1], as QK-norm bounds
    cosines), with a LogN-like gain 2 and an ALiBi-like bias −0.02 t, over 96 keys: the bootstrap's
    octave entropies and shares agree with 1500 brute-force rows within 4 combined s.e."""
    values = np.linspace(-1, 1, 25)
    n = 96
    a, m = np.full(n, 2.0), -0.02 * np.arange(n)
    got = predict_octaves([values], a, m, draws=600, seed=3)
    e, s = _brute_force(list(values), list(a), list(m), 1500, np.random.default_rng(11))
    for key, sample in (("entropy", e), ("share", s)):
        want, se = sample.mean(axis=0), sample.std(axis=0, ddof=1) / math.sqrt(len(sample))
        z = np.abs(got[key] - want) / np.hypot(se, got[f"{key}_se"])
        assert np.all(z < 4), (key, z)
        assert np.all(got[f"{key}_se"] < 0.02)  # the test has power


def test_the_gaussian_rem_uses_the_samples_mean_and_sigma():
    """Gaussian scores with the sample's mean 0 and σ 1 at gain 3 on 64 keys: the mean of
    e^{3S} is e^{4.5}; each octave's share by brute force from the same normal law."""
    values = np.array([-1.0, 1.0])  # mean 0, σ 1 (population)
    a, m = np.full(64, 3.0), np.zeros(64)
    got = predict_octaves([values], a, m, draws=800, seed=5, kind="gaussian")
    rng = np.random.default_rng(17)
    w = np.exp(3.0 * rng.normal(0, 1, (4000, 64)))
    want = np.stack([w[:, lo:hi].sum(axis=1) for lo, hi in
                     zip(octave_edges(64)[:-1], octave_edges(64)[1:])], axis=1) / w.sum(
        axis=1, keepdims=True)
    se = want.std(axis=0, ddof=1) / math.sqrt(len(want))
    z = np.abs(got["share"] - want.mean(axis=0)) / np.hypot(se, got["share_se"])
    assert np.all(z < 4), z


def test_seeded_draws_are_reproducible_and_the_seed_matters():
    values = np.random.default_rng(0).uniform(-1, 1, 50)
    a, m = np.full(40, 4.0), np.zeros(40)
    one = predict_octaves([values], a, m, draws=4, seed=9)
    again = predict_octaves([values], a, m, draws=4, seed=9)
    other = predict_octaves([values], a, m, draws=4, seed=10)
    for key in one:
        np.testing.assert_array_equal(one[key], again[key])
    assert not np.array_equal(one["entropy"], other["entropy"])


@pytest.mark.parametrize("kwargs, name", [
    ({"samples": []}, "samples"),
    ({"samples": [np.array([np.nan])]}, "samples"),
    ({"a": np.ones(5)}, "a and m"),
    ({"a": np.ones(1), "m": np.zeros(1)}, "a and m"),
    ({"draws": 1}, "draws"),
    ({"seed": -1}, "seed"),
    ({"kind": "normal"}, "kind"),
])
def test_bad_input_names_the_parameter(kwargs, name):
    args = {"samples": [np.zeros(3)], "a": np.ones(8), "m": np.zeros(8)} | kwargs
    samples, a, m = args.pop("samples"), args.pop("a"), args.pop("m")
    with pytest.raises(ValueError, match=name):
        predict_octaves(samples, a, m, **args)


@pytest.mark.parametrize("logits", [[1.0], [[np.inf, 0.0]], 3.0])
def test_octave_stats_bad_input(logits):
    with pytest.raises(ValueError, match="logits"):
        octave_stats(logits)


def test_octave_edges_bad_input():
    with pytest.raises(ValueError, match="n_keys"):
        octave_edges(1)
