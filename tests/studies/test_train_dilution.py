"""The octave study of the trained heads (sia_theory/studies/train_dilution.py) on synthetic
score arrays (no training): the measured columns against octave_stats of the logits written
out here, invariance of everything to a constant added to a row's scores (the softmax's own
invariance; pooling the rows must not break it), seeding, and the summary's dilution and MAE
against a hand computation."""

import numpy as np
import pandas as pd
import pytest

from sia_theory.studies.train_dilution import head_octaves, octave_summary
from sia_theory.training.octaves import octave_stats
from sia_theory.transforms import ALiBi

L, LONG, ROWS = 32, 128, 3


def _scores(offsets=(0.0, 0.0, 0.0), seed=0):
    """One layer, one window, two heads: bounded scores (uniform on [−1, 1] times 4) for the
    rows ending at L and at 16L·(LONG/L), row r shifted by offsets[r]."""
    rng = np.random.default_rng(seed)
    out = {}
    for n in (L, LONG):
        s = 4 * rng.uniform(-1, 1, (1, 2, ROWS, n))
        out[n] = [s + np.asarray(offsets)[None, None, :, None]]
    return out


ROWS_AT = {L: np.arange(L - ROWS, L), LONG: np.arange(LONG - ROWS, LONG)}


def test_measured_columns_are_octave_stats_of_the_transformed_rows():
    transform = ALiBi.standard(2)
    scores = _scores()
    frame = head_octaves(scores, ROWS_AT, transform, seed=1)
    for n in (L, LONG):
        for h in (0, 1):
            stats = []
            for r, i in enumerate(ROWS_AT[n]):
                t = np.arange(i + 1, dtype=float)
                slope = 2.0 ** (-8 * (h + 1) / 2)  # ALiBi's geometric slopes for 2 heads
                logits = scores[n][0][0, h, r, i::-1] - slope * t
                stats.append(octave_stats(logits))
            got = frame[(frame["context"] == n) & (frame["head"] == h)]
            np.testing.assert_allclose(got["share_measured"], np.mean([s for _, s in stats], 0),
                                       rtol=1e-10)
            np.testing.assert_allclose(got["entropy_measured"],
                                       np.mean([e for e, _ in stats], 0), rtol=1e-10)


def test_a_constant_per_row_changes_nothing_and_the_seed_reproduces():
    transform = ALiBi.standard(2)
    base = head_octaves(_scores(), ROWS_AT, transform, seed=1)
    shifted = head_octaves(_scores(offsets=(0.0, 3.0, -5.0)), ROWS_AT, transform, seed=1)
    pd.testing.assert_frame_equal(base, shifted, rtol=1e-9, atol=1e-12)
    other = head_octaves(_scores(), ROWS_AT, transform, seed=2)
    assert not np.allclose(base["entropy_tail"], other["entropy_tail"])


def test_summary_dilution_and_error_by_hand():
    frame = head_octaves(_scores(), ROWS_AT, ALiBi.standard(2), seed=1).assign(scheme="x")
    summary = octave_summary(frame).iloc[0]
    far = frame.loc[frame.groupby(["head", "context"])["octave"].idxmax()]
    change = [far[(far["head"] == h) & (far["context"] == LONG)]["share_tail"].iloc[0]
              - far[(far["head"] == h) & (far["context"] == L)]["share_tail"].iloc[0]
              for h in (0, 1)]
    assert summary["dilution_tail"] == pytest.approx(np.median(change))
    wide = frame[(frame["keys"] >= 8) & (frame["context"] == LONG)]
    assert summary["mae_tail_16L"] == pytest.approx(
        np.mean(np.abs(wide["entropy_tail"] - wide["entropy_measured"])))
