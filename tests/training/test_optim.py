"""sia_theory.training.optim, exercised by its own name: the learning-rate schedule by hand
(warm-up, constant, linear cool-down to 0) and the optimiser's first Adam step."""

import numpy as np
import pytest

pytest.importorskip("optax")

from sia_theory.training.optim import ADAM_BETAS, MUON_MOMENTUM, schedule  # noqa: E402


def test_schedule_by_hand():
    """rate 1, 100 steps, cool-down 0.3 (the last 30 steps), warm-up 10."""
    fn = schedule(1.0, 100, 0.3, warmup=10)
    assert float(fn(0)) == pytest.approx(0.1)  # (0 + 1)/10
    assert float(fn(9)) == pytest.approx(1.0)
    assert float(fn(50)) == pytest.approx(1.0)
    assert float(fn(85)) == pytest.approx(0.5)  # (100 − 85)/30
    assert float(fn(99)) == pytest.approx(1 / 30)
    assert float(schedule(0.02, 100, 0.0)(57)) == pytest.approx(0.02)
    assert ADAM_BETAS == (0.9, 0.95) and MUON_MOMENTUM == 0.95
    assert np.isfinite(float(fn(100)))
