"""sia_theory.models.runs, exercised by its own name (without loading the pretrained model): the
identity prefix of score mods and the position fingerprints."""

import numpy as np

from sia_theory import LogN, ScaleInvariant
from sia_theory.attention import RoPE
from sia_theory.models.runs import identical_prefix, position_signature


def test_identical_prefix():
    """None: all positions; SI: a_0 = 1, m_0 = 0, so only query 0; LogN(s): a = s log n is 0 at
    n = 1, so none."""
    assert identical_prefix(None, 10) == 10
    assert identical_prefix(ScaleInvariant(tau=10.0), 10) == 1
    assert identical_prefix(LogN(s=0.4), 10) == 0


def test_position_signature():
    assert position_signature(RoPE(1e4), 8) == position_signature(RoPE(1e4), 8)
    assert position_signature(RoPE(1e4), 8) != position_signature(RoPE(500.0), 8)
    probe = np.linspace(-1.0, 1.0, 32).reshape(1, 4, 8)
    assert position_signature(lambda x, p: x, 8) == probe.tobytes()
