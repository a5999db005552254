"""sia_theory.zoo.members, by its own name: the multiplier base (a member defined on it gets
``a = multiplier(n)``, ``m = 0`` at every distance and checks ``n_ctx``), and each member's law
written out here from its source (THEORY.md §5): Qwen-1 ``max(1, log n / log L)``, Llama-4
``1 + β·log(floor(n/F) + 1)``, CAS ``γ·log n/√d``, a constant temperature."""

import math

import numpy as np
import pytest

from sia_theory.transforms import LogN
from sia_theory.zoo.members import (
    CriticalScaling,
    Llama4Temperature,
    Multiplier,
    QwenLogN,
    SSMax,
    Temperature,
)


class SquareRootLength(Multiplier):
    """A member defined outside the zoo: multiplier √n."""

    depends_on = frozenset({"context"})

    def _multiplier(self, n):
        return np.sqrt(n)


def test_a_member_on_the_base_is_a_pure_multiplier():
    t, n = np.array([0.0, 3.0, 9.0]), np.array([16.0, 16.0, 100.0])
    a, m = SquareRootLength().coefficients(t, n)
    np.testing.assert_array_equal(a, [4.0, 4.0, 10.0])
    np.testing.assert_array_equal(m, 0.0)
    with pytest.raises(ValueError, match="n_ctx is required"):
        SquareRootLength().multiplier()
    with pytest.raises(ValueError, match=r"^n_ctx\b"):
        SquareRootLength().multiplier(0)


def test_each_member_follows_its_law_written_out():
    n = np.array([1.0, 7.0, 8.0, 9.0, 100.0, 4096.0])
    np.testing.assert_allclose(QwenLogN(8).multiplier(n),
                               [max(1.0, math.log(x) / math.log(8)) for x in n], rtol=1e-15)
    np.testing.assert_allclose(Llama4Temperature(8, 0.5).multiplier(n),
                               [1 + 0.5 * math.log(math.floor(x / 8) + 1) for x in n],
                               rtol=1e-15)
    np.testing.assert_allclose(CriticalScaling(1.25, head_dim=16).multiplier(n),
                               [1.25 * math.log(x) / 4.0 for x in n], rtol=1e-15, atol=0)
    assert float(Temperature(0.7).multiplier()) == 0.7
    assert SSMax is LogN
