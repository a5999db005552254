"""YaRN's interpolated RoPE (:mod:`sia_theory.attention.yarn`): plain RoPE at factor 1, the zoo
temperature as its attention factor, both parameter namings, and bad parameters named. Its
frequencies against the YaRN authors' code, transformers and the paper's text are tested with
the other scalings' references in test_rope_scaling.py."""

import math

import numpy as np
import pytest

from sia_theory.attention import RoPE, rope
from sia_theory.attention.yarn import YaRNRoPE
from sia_theory.zoo import YaRNTemperature


def test_yarn_at_scale_one_is_plain_rope():
    x = np.random.default_rng(4).standard_normal((3, 9, 64)).astype(np.float32)
    positions = np.arange(9) * 997
    for target in (8192, 4096):  # s = 1 and no extension (s clipped to 1)
        yarn = YaRNRoPE(8192, target, base=1e5)
        np.testing.assert_array_equal(yarn(x, positions), RoPE(base=1e5)(x, positions))
        np.testing.assert_array_equal(yarn(x, positions), rope(x, positions, 1e5))
        assert yarn.attention_factor() == YaRNTemperature(1.0)


def test_yarn_attention_factor_is_the_zoo_temperature_of_the_same_scale():
    yarn = YaRNRoPE(8192, 16384, base=1e5)
    assert yarn.scale == yarn.factor == 2.0 and yarn.target_length == 16384
    assert yarn.attention_factor() == YaRNTemperature(2.0)
    # (0.1 ln 2 + 1)^2 on the logit: the factor multiplies both q and k
    assert yarn.attention_factor().multiplier() == pytest.approx((0.1 * math.log(2) + 1) ** 2)


def test_yarn_takes_transformers_names_and_the_earlier_ones_alike():
    old = YaRNRoPE(4096, 16384, 5e5, 2.0, 16.0)
    new = YaRNRoPE(factor=4.0, original_max_position_embeddings=4096, rope_theta=5e5,
                   beta_slow=2.0, beta_fast=16.0)
    assert old == new and hash(old) == hash(new)
    assert (old.train_length, old.base, old.alpha, old.beta) == (4096, 5e5, 2.0, 16.0)


@pytest.mark.parametrize("kwargs, match", [
    (dict(train_length=0, target_length=8), "train_length"),
    (dict(train_length=8, target_length=8, alpha=2.0, beta=1.0), "beta"),
    (dict(train_length=8, target_length=8, base=1.0), "base"),
    (dict(original_max_position_embeddings=8, factor=0.5), "factor"),
    (dict(original_max_position_embeddings=8), "factor"),
    (dict(target_length=16), "train_length"),
    (dict(train_length=8, original_max_position_embeddings=8, factor=2), "two names"),
    (dict(train_length=8, factor=2, base=1e4, rope_theta=1e4), "base and rope_theta"),
    (dict(train_length=8, factor=2, ramp="linear"), "ramp"),
    (dict(train_length=8, factor=2, truncate="yes"), "truncate"),
    (dict(train_length=8, factor=2, beta_slow=0.0), "beta_slow"),  # log(L/(2π·0))
])
def test_yarn_rejects_bad_parameters_naming_them(kwargs, match):
    with pytest.raises(ValueError, match=match):
        YaRNRoPE(**kwargs)
