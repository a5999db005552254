"""sia_theory.zoo.yarn, by its own name: ``get_mscale`` (transformers
``_compute_yarn_parameters``: ``0.1·mscale·ln s + 1`` for ``s > 1``, else 1) written out here,
the fixed member's ``(0.1 ln s + 1)²`` on the logit (YaRN scales cos and sin, so q and k), and
the dynamic member as the fixed one at ``s = max(1, n/L)`` (Peng et al. 2023, §3.3)."""

import math

import numpy as np
import pytest

from sia_theory.zoo.yarn import DynamicYaRNTemperature, YaRNTemperature, yarn_mscale


def test_mscale_is_get_mscale():
    scales = [0.5, 1.0, 1.5, 4.0, 1e3]
    want = [1.0 if s <= 1 else 0.1 * 2.0 * math.log(s) + 1.0 for s in scales]
    np.testing.assert_allclose(yarn_mscale(scales, mscale=2.0), want, rtol=1e-15)


@pytest.mark.parametrize("scale", [0.5, 2.0, 32.0])
def test_fixed_member_squares_the_factor(scale):
    factor = 1.0 if scale <= 1 else 0.1 * math.log(scale) + 1.0
    assert float(YaRNTemperature(scale).multiplier()) == pytest.approx(factor**2, rel=1e-15)


def test_dynamic_member_is_the_fixed_one_at_the_current_length():
    train_len = 64
    for n in (1, 63, 64, 65, 1000, 10**6):
        fixed = YaRNTemperature(max(1.0, n / train_len)).multiplier()
        assert float(DynamicYaRNTemperature(train_len).multiplier(n)) == pytest.approx(
            float(fixed), rel=1e-14)
