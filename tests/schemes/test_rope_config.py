"""sia_theory.schemes.rope_config, exercised by its own name: transformers ``rope_parameters``
dicts to (position encoding, score mod), with LongRoPE's logit multiplier 1 + ln f / ln L."""

import math

import numpy as np
import pytest

from sia_theory.attention.positional import RoPE
from sia_theory.attention.rope_variants import LinearRoPE, LongRoPE
from sia_theory.schemes.rope_config import ROPE_TYPES, from_rope_parameters


def test_default_and_linear():
    assert from_rope_parameters({"rope_type": "default"}, rope_theta=5e5) == (RoPE(5e5), None)
    position, mod = from_rope_parameters({"type": "linear", "factor": 2}, rope_theta=1e4)
    assert position == LinearRoPE(2.0, 1e4) and mod is None


def test_longrope_logit_multiplier_is_the_squared_attention_factor():
    """Phi-3.5 style: f = 32, L = 4096: cos and sin get √(1 + ln 32/ln 4096), the logit
    1 + 5/12."""
    position, mod = from_rope_parameters(
        {"rope_type": "longrope", "short_factor": [1.0, 1.0], "long_factor": [2.0, 2.0],
         "original_max_position_embeddings": 4096, "factor": 32.0},
        rope_theta=1e4, max_position_embeddings=131072)
    assert isinstance(position, LongRoPE)
    a, m = mod.coefficients(np.array([0.0, 1e5]))
    assert a == pytest.approx(1 + math.log(32) / math.log(4096))
    assert a == pytest.approx(1 + 5 / 12)
    assert m == pytest.approx(0.0)


def test_every_rope_type_listed():
    assert set(ROPE_TYPES) == {"default", "linear", "dynamic", "yarn", "longrope", "llama3",
                               "proportional"}


def test_unknown_keys_and_types_refused():
    with pytest.raises(ValueError, match="factr"):
        from_rope_parameters({"rope_type": "linear", "factr": 2})
    with pytest.raises(ValueError, match="rope_type"):
        from_rope_parameters({"rope_type": "spiral"})
