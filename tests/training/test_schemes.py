"""sia_theory.training.schemes, exercised by its own name: the trainer's schemes give SI eq. 16's
coefficients, and a transform the trainer cannot use is refused naming the scheme."""

import math

import numpy as np
import pytest

from sia_theory.schemes import ROPE_BASE, SCHEMES, SI_TAU, resolve_scheme
from sia_theory.training.schemes import check_trainable, trainable_transform
from sia_theory.training.settings import TrainSettings


def test_si_scheme_transform_is_eq_16():
    t = trainable_transform(resolve_scheme("si-rope"), 2, 32, 32)
    a, m = t.coefficients(np.array([0.0, SI_TAU]))
    assert a * a == pytest.approx([1.0, 1 + 2 * math.log(2)])
    assert m == pytest.approx(1 - a * a)
    assert ROPE_BASE == 10000.0 and {"rope", "si-rope", "nope"} <= set(SCHEMES)


def test_every_registered_scheme_trains_at_quick_settings():
    for name in SCHEMES:
        check_trainable(resolve_scheme(name), TrainSettings.quick())


def test_a_scheme_declares_what_it_learns_as_data():
    from sia_theory.schemes import LEARNED, SCHEMES, Scheme
    from sia_theory.transforms import NoScale

    assert SCHEMES["logn-p-rope-learned"].learned == ("score_scale",) == LEARNED
    assert SCHEMES["logn-p-rope"].learned == ()
    assert SCHEMES["logn-p-rope-learned"].transform == SCHEMES["logn-p-rope"].transform
    with pytest.raises(ValueError, match="learned"):
        Scheme("x", "rope", NoScale(), learned=("temperature",))
    with pytest.raises(ValueError, match="learned"):
        Scheme("x", "rope", NoScale(), learned=("score_scale", "score_scale"))
