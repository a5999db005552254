"""sia_theory.training.tables, exercised by its own name: rotation tables cos(pθ), sin(pθ) of
RoPE's θ_k = base^{−2k/D}, and float32 overflow refused."""

import numpy as np
import pytest

from sia_theory import Transform
from sia_theory.attention import NoPE, RoPE
from sia_theory.training.tables import check_float32, rotation_tables


def test_rope_rotation_tables_by_hand():
    cos, sin = rotation_tables(RoPE(100.0), 4, 5)  # θ = (1, 1/10)
    p = np.arange(5.0)[:, None]
    theta = np.array([1.0, 0.1])
    assert cos.dtype == np.float32 and cos.shape == (5, 2)
    assert cos == pytest.approx(np.cos(p * theta), abs=1e-7)
    assert sin == pytest.approx(np.sin(p * theta), abs=1e-7)
    cos0, sin0 = rotation_tables(NoPE(), 4, 3)
    assert np.all(cos0 == 1) and np.all(sin0 == 0)


def test_float32_overflow_named():
    class Big(Transform):
        depends_on = frozenset({"distance"})

        def affine(self, t, n, h):
            return np.where(t > 1, 1e39, 1.0), np.zeros_like(t)

    with pytest.raises(ValueError, match="distance 2"):
        check_float32(Big(), 1, 4)
    check_float32(Big(), 1, 2)
