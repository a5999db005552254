"""sia_theory.attention._softmax (the numba kernels), exercised by its own name: accumulate,
tilt_block and finish against the online-softmax recurrences written out with numpy."""

import numpy as np
import pytest

from sia_theory.attention import _softmax
from sia_theory.attention._softmax import FINISHED, MASKED_ROW, accumulate, finish, tilt_block


def test_accumulate_rescales_then_adds():
    rng = np.random.default_rng(0)
    acc = rng.standard_normal((2, 3, 4))
    rescale = rng.random((2, 3))
    weighted = rng.standard_normal((2, 3, 4))
    expected = acc * rescale[..., None] + weighted
    accumulate(acc, rescale, weighted)
    assert acc == pytest.approx(expected, rel=1e-14)


def test_tilt_block_two_blocks_give_the_row_sum():
    """Y = Σ_j e^{L_j − M}(L_j − M) over two blocks equals the one-shot value."""
    row = np.array([0.5, -1.0, 2.0, 1.5, -0.3, 3.0])
    first, second = row[:3], row[3:]
    m1, m2 = first.max(), row.max()
    z1 = np.exp(first - m1).sum()
    tilted = np.array([[np.sum(np.exp(first - m1) * (first - m1))]])
    weights = np.exp(second - m2)[None, None, :]
    tilt_block(weights, np.array([[m1]]), np.array([[z1]]), np.array([[m2]]),
               np.array([[np.exp(m1 - m2)]]), tilted)
    assert tilted[0, 0] == pytest.approx(np.sum(np.exp(row - m2) * (row - m2)), rel=1e-12)


def test_finish_normalises_and_flags_masked_rows():
    acc = np.array([[[2.0, 4.0], [0.0, 0.0]]])  # (S=1, R=2, Dv=2)
    total = np.array([[2.0, 0.0]])
    row_max = np.array([[1.0, 0.0]])
    out, lse = np.empty((1, 1, 2, 2)), np.empty((1, 1, 2))
    assert finish(acc, total, row_max, False, out, lse) == MASKED_ROW
    assert finish(acc, total, row_max, True, out, lse) == FINISHED
    assert out[0, 0] == pytest.approx(np.array([[1.0, 2.0], [0.0, 0.0]]))
    assert lse[0, 0, 0] == pytest.approx(np.log(2.0) + 1.0) and lse[0, 0, 1] == -np.inf
    assert _softmax.REFINE_NATS == 2.0
