"""Contradictory or out-of-range model configs: refused or warned by key, as transformers 5.24.0
does (``modeling_rope_utils.py``'s ``_validate_*_rope_parameters`` warn; its strict config
dataclasses and ``LlamaConfig.validate_architecture`` raise), through
:func:`~sia_theory.models.hf_config.from_hf_config` and
:func:`~sia_theory.schemes.from_rope_parameters`.

Where transformers raises (a value of the wrong type, a head count that does not divide the
width) this package raises a ``ValueError`` naming the key; where it only warns (an
``original_max_position_embeddings`` at or past ``max_position_embeddings``, a yarn ``factor``
that is not their ratio, a ``factor`` below 1) a ``UserWarning`` naming the key. Where
transformers accepts a value this package cannot read (``max_position_embeddings: 0``, a
``rope_theta`` given twice with different values, a llama3 ``low_freq_factor`` at or past its
``high_freq_factor``), the package refuses it naming the key rather than guess.
"""

import warnings
from pathlib import Path

import numpy as np
import pytest

from sia_theory.models.hf_config import from_hf_config
from sia_theory.schemes import from_rope_parameters

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hf_configs"
BASE = {"hidden_size": 4096, "num_attention_heads": 32}
LLAMA3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
          "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}
YARN = {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 4096}
LONGROPE = {"rope_type": "longrope", "short_factor": [1.0] * 64, "long_factor": [1.0] * 64,
            "original_max_position_embeddings": 4096}


def _config(**keys):
    return {**BASE, **keys}


# --- refused: ValueError naming the key ----------------------------------------------------

@pytest.mark.parametrize("config, match", [
    (_config(max_position_embeddings=0), r"max_position_embeddings must be an integer >= 1"),
    (_config(max_position_embeddings=0, rope_scaling=YARN),
     r"max_position_embeddings must be an integer >= 1"),
    (_config(max_position_embeddings=8192, original_max_position_embeddings=0,
             rope_scaling={"rope_type": "yarn", "factor": 4.0}),
     r"original_max_position_embeddings must be an integer >= 1"),
    (_config(max_position_embeddings=32768,
             rope_scaling={**YARN, "original_max_position_embeddings": 0}),
     r"original_max_position_embeddings must be an integer >= 1"),
    (_config(rope_theta=10000.0, rope_parameters={"rope_type": "default", "rope_theta": 5e5}),
     r"rope_theta is given twice"),
    (_config(rope_theta=10000.0, max_position_embeddings=131072,
             rope_scaling={**LLAMA3, "rope_theta": 5e5}), r"rope_theta is given twice"),
    (_config(rope_scaling="linear"), r"rope_scaling must be a dict"),
    (_config(rope_parameters=[1, 2]), r"rope_parameters must be a dict"),
    (_config(rope_parameters=3.0), r"rope_parameters must be a dict"),
    (_config(max_position_embeddings=131072, rope_scaling={**LLAMA3, "low_freq_factor": -1.0}),
     r"low_freq_factor must be a finite real number > 0"),
    (_config(max_position_embeddings=131072, rope_scaling={**LLAMA3, "low_freq_factor": "x"}),
     r"low_freq_factor must be a finite real number > 0"),
    (_config(max_position_embeddings=131072, rope_scaling={**LLAMA3, "high_freq_factor": "x"}),
     r"high_freq_factor must be a finite real number"),
    ({"hidden_size": 4097, "num_attention_heads": 32},
     r"hidden_size 4097 is not a multiple of num_attention_heads 32"),
    (_config(head_dim=0), r"head_dim must be an integer >= 1"),
    (_config(hidden_size="4096"), r"hidden_size must be an integer"),
    (_config(num_attention_heads=0), r"num_attention_heads must be an integer >= 1"),
    (_config(text_config="llama"), r"text_config must be a dict"),
    (_config(model_type=3), r"model_type must be a string"),
    # transformers warns and computes a shrinking NTK base; DynamicNTKRoPE takes factor >= 1
    (_config(max_position_embeddings=4096, rope_scaling={"rope_type": "dynamic",
                                                         "factor": 0.5}),
     r"factor must be a finite real number >= 1, got 0.5"),
], ids=["max-0", "max-0-yarn", "original-0-top", "original-0-dict", "theta-twice-v5",
        "theta-twice-v4", "rope-str", "rope-list", "rope-float", "llama3-low-negative",
        "llama3-low-str", "llama3-high-str", "width-not-multiple",
        "head-dim-0", "hidden-str", "heads-0", "text-config-str", "model-type-int",
        "dynamic-factor-below-1"])
def test_contradictions_are_refused_naming_the_key(config, match):
    with pytest.raises(ValueError, match=match):
        from_hf_config(config)


@pytest.mark.parametrize("params, kwargs, match", [
    ({**YARN, "original_max_position_embeddings": 0}, {"max_position_embeddings": 100},
     r"original_max_position_embeddings must be an integer >= 1"),
    ({**LLAMA3, "original_max_position_embeddings": -8}, {},
     r"original_max_position_embeddings must be an integer >= 1"),
    ({**LLAMA3, "low_freq_factor": 0.0}, {}, r"low_freq_factor must be a finite real number > 0"),
    ({**LLAMA3, "high_freq_factor": -1.0}, {},
     r"high_freq_factor must be a finite real number > 0"),
    ({"rope_type": "default", "rope_theta": 5e5}, {"rope_theta": 1e4}, r"rope_theta is given "
     r"twice"),
    ("linear", {}, r"rope_parameters must be a dict"),
    ({"rope_type": "dynamic", "factor": 2.0}, {"max_position_embeddings": 0},
     r"max_position_embeddings must be an integer >= 1"),
], ids=["original-0", "original-negative", "low-0", "high-negative", "theta-twice",
        "not-a-dict", "max-0"])
def test_rope_parameters_contradictions_are_refused_naming_the_key(params, kwargs, match):
    with pytest.raises(ValueError, match=match):
        from_rope_parameters(params, **kwargs)


# --- warned: UserWarning naming the key, as transformers' logger.warning --------------------

@pytest.mark.parametrize("config, match", [
    (_config(max_position_embeddings=8192, rope_scaling={**LLAMA3,
                                                         "original_max_position_embeddings":
                                                         131072}),
     r"original_max_position_embeddings 131072 must be less than max_position_embeddings 8192"),
    (_config(max_position_embeddings=8192, rope_scaling=LLAMA3),  # equal: transformers warns
     r"original_max_position_embeddings 8192 must be less than max_position_embeddings 8192"),
    (_config(max_position_embeddings=2048, rope_scaling=YARN),
     r"factor 8.0 does not match max_position_embeddings / original_max_position_embeddings"),
    (_config(max_position_embeddings=65536, rope_scaling={**YARN, "factor": 4.0}),
     r"factor 4.0 does not match max_position_embeddings / original_max_position_embeddings"),
    (_config(max_position_embeddings=2048, rope_scaling=LONGROPE),
     r"original_max_position_embeddings 4096 is larger than max_position_embeddings 2048"),
    (_config(max_position_embeddings=2048, original_max_position_embeddings=4096,
             rope_scaling={k: v for k, v in LONGROPE.items()
                           if k != "original_max_position_embeddings"}),
     r"original_max_position_embeddings 4096 is larger than max_position_embeddings 2048"),
    (_config(rope_scaling={"rope_type": "linear", "factor": 0.5}),
     r"factor must be >= 1 \(transformers warns\), got 0.5"),
    (_config(max_position_embeddings=131072, rope_scaling={**LLAMA3, "low_freq_factor": 5.0}),
     r"high_freq_factor must be greater than low_freq_factor, got high_freq_factor 4 and "
     r"low_freq_factor 5"),
], ids=["llama3-original-past-max", "llama3-original-equals-max", "yarn-original-past-max",
        "yarn-factor-mismatch", "longrope-original-past-max", "longrope-top-level-original",
        "linear-factor-below-1", "llama3-low-over-high"])
def test_contradictions_transformers_warns_about_are_warned_naming_the_key(config, match):
    with pytest.warns(UserWarning, match=match):
        from_hf_config(config)


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.json")), ids=lambda p: p.stem)
def test_published_configs_neither_warn_nor_fail(path):
    """Negative control: the shipped configs hold none of these contradictions."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from_hf_config(path)


def test_consistent_values_given_twice_are_accepted():
    """rope_theta at the top and in the dict with the same value (as some v5 configs write it)
    is not a contradiction; a yarn factor equal to the ratio, or an original length equal to
    max_position_embeddings (transformers' implicit factor 1), is not warned about."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = from_hf_config(_config(rope_theta=5e5, rope_parameters={"rope_type": "default",
                                                                    "rope_theta": 5e5}))
        assert s.position.base == 5e5
        from_hf_config(_config(max_position_embeddings=32768, rope_scaling=YARN))
        from_hf_config(_config(max_position_embeddings=4096, rope_scaling=YARN))


@pytest.mark.parametrize("low, high", [(5.0, 4.0), (1.0, 1.0), (2.0, 0.5)])
def test_llama3_factors_out_of_order_are_warned_and_read_as_transformers_computes(low, high):
    """transformers warns for high_freq_factor <= low_freq_factor and computes a step (no
    medium band) at wavelength original / low_freq_factor: the same frequencies here (before,
    low > high was refused as a bad ``beta_fast``)."""
    pytest.importorskip("torch")
    tf = pytest.importorskip("transformers")
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    rope = {**LLAMA3, "rope_theta": 5e5, "low_freq_factor": low, "high_freq_factor": high}
    config = {"head_dim": 128, "hidden_size": 4096, "num_attention_heads": 32,
              "max_position_embeddings": 131072}
    with pytest.warns(UserWarning, match=r"high_freq_factor must be greater than "
                      r"low_freq_factor"):
        got = from_hf_config({**config, "rope_parameters": rope}).inv_freq
    inv_freq, _ = ROPE_INIT_FUNCTIONS["llama3"](tf.LlamaConfig(**config, rope_parameters=rope),
                                                 "cpu")
    np.testing.assert_allclose(got, inv_freq.double().numpy(), rtol=1e-6)  # float32 there
