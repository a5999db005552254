"""sia_theory.gaussian._kernels (the numba range-sum kernels), exercised by its own name: one pass
of shifted sums against a plain numpy softmax, across block boundaries and with huge logits."""

import numpy as np
import pytest
from scipy.special import logsumexp, xlogy

from sia_theory.gaussian import _kernels
from sia_theory.gaussian.rng import normals

BOUNDS = np.array([0, 700, 1500], dtype=np.int64)  # two segments, each crossing BLOCK = 512
RANGES = [(0, 700), (0, 1500), (700, 1500)]
FIRST = np.array([0, 0, 1], dtype=np.int64)
STOP = np.array([1, 2, 2], dtype=np.int64)
REF = np.array([1, 1, 1], dtype=np.int64)  # every mass relative to [0, 1500)


def _numpy_stats(logits, t1, t2, ref=(0, 1500)):
    """(log Z, H, N, mass) of one row's range, SI eqs. 7–8, written out with numpy."""
    x = logits[t1:t2]
    log_z = logsumexp(x)
    p = np.exp(x - log_z)
    mass = np.exp(log_z - logsumexp(logits[ref[0]:ref[1]]))
    n = np.exp(log_z) * np.sum(p * x) if log_z < 700 else np.inf
    return log_z, -np.sum(xlogy(p, p)), n, mass


@pytest.mark.parametrize("scale", [1.0, 3000.0])
def test_given_rows_against_numpy(scale):
    """Logits of size 1e4 too: the shifted sums never exponentiate a positive number."""
    rng = np.random.default_rng(0)
    logits = scale * rng.standard_normal((3, 1500))
    z, n, h, mass, log_z = _kernels.given_rows(logits, BOUNDS, FIRST, STOP, REF)
    for i in range(3):
        for r, (t1, t2) in enumerate(RANGES):
            lz, hh, nn, mm = _numpy_stats(logits[i], t1, t2)
            assert log_z[i, r] == pytest.approx(lz, rel=1e-12)
            assert h[i, r] == pytest.approx(hh, rel=1e-9, abs=1e-9)
            assert mass[i, r] == pytest.approx(mm, rel=1e-9, abs=1e-300)
            if scale == 1.0:
                assert n[i, r] == pytest.approx(nn, rel=1e-9)
                assert z[i, r] == pytest.approx(np.exp(lz), rel=1e-12)


def test_simulate_rows_draws_the_rng_streams():
    """Row i is a_t·normals(seed, first_sample + i)[t] + m_t."""
    a = np.linspace(0.5, 2.0, 1500)
    m = -np.linspace(0.0, 3.0, 1500)
    seed, first = 7, 3
    _, _, h, _, log_z = _kernels.simulate_rows(a, m, BOUNDS, FIRST, STOP, REF, 2,
                                               np.uint64(seed), np.uint64(first))
    for i in range(2):
        logits = a * normals(seed, first + i, 1500) + m
        for r, (t1, t2) in enumerate(RANGES):
            lz, hh, _, _ = _numpy_stats(logits, t1, t2)
            assert log_z[i, r] == pytest.approx(lz, rel=1e-12)
            assert h[i, r] == pytest.approx(hh, rel=1e-9)
    assert _kernels.BLOCK == 512
