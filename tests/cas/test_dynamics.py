"""sia_theory.cas.dynamics, exercised by its own name: the crossing finder on hand-made inputs,
and the one-layer names it re-exports from :mod:`sia_theory.cas.layer` (tested in
test_layer.py)."""

import math

import pytest

from sia_theory.cas import layer
from sia_theory.cas.dynamics import (
    attention_statistics,
    attention_step,
    crossing_point,
    softmax_from_gram,
)


def test_crossing_point_log_interpolation():
    """y falls through ½ between x = 10 and 1000: at the log-midpoint 100."""
    assert crossing_point([1.0, 10.0, 1000.0], [1.0, 0.75, 0.25], 0.5) == pytest.approx(100.0)
    assert math.isnan(crossing_point([1.0, 2.0], [1.0, 0.9], 0.5))


def test_bad_input_named():
    with pytest.raises(ValueError, match="y must have the length"):
        crossing_point([1.0, 2.0], [1.0], 0.5)


def test_the_one_layer_names_are_the_layer_modules():
    assert (attention_step, softmax_from_gram, attention_statistics) == (
        layer.attention_step, layer.softmax_from_gram, layer.attention_statistics)
