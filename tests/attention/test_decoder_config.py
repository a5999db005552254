"""sia_theory.attention.decoder_config, exercised by its own name: the weight shapes a
configuration implies, and bad configurations refused naming the field."""

import pytest

from sia_theory import ALiBi, ScaleInvariant
from sia_theory.attention.decoder_config import DecoderConfig, parameter_shapes
from sia_theory.attention.positional import PRoPESI

CONFIG = DecoderConfig(vocab_size=32, d_model=16, n_heads=2, n_layers=2,
                       transform=ScaleInvariant(tau=4.0), seed=3)


def test_parameter_shapes():
    """``x @ w`` weights: ``(fan_in, fan_out)``, the MLP 4·d_model wide by default."""
    assert CONFIG.head_dim == 8 and CONFIG.hidden == 64 and CONFIG.cache_mode == "kv"
    assert parameter_shapes(CONFIG) == {
        "embedding": (32, 16), "unembedding": (16, 32), "w_q": (16, 16), "w_k": (16, 16),
        "w_v": (16, 16), "w_o": (16, 16), "w_up": (16, 64), "w_down": (64, 16)}
    narrow = DecoderConfig(vocab_size=5, d_model=8, n_heads=1, n_layers=1, mlp_hidden=3)
    assert parameter_shapes(narrow)["w_up"] == (8, 3) and narrow.hidden == 3
    assert DecoderConfig(inattention=True).cache_mode == "initial"
    assert DecoderConfig(inattention=True, inattention_cache="projected").cache_mode == "kv"


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"d_model": 15}, "d_model"), ({"dtype": "float16"}, "dtype"),
    ({"inattention_cache": "disk"}, "inattention_cache"), ({"n_layers": 0}, "n_layers"),
    ({"d_model": 12, "n_heads": 2, "position": PRoPESI()}, "head dimension"),  # 6: not 4k
    ({"position": "rope"}, "position"), ({"qk_norm": 1}, "qk_norm"),
    ({"n_heads": 4, "transform": ALiBi(slope=(0.5, 0.25))}, "supports 2 heads")])
def test_bad_config_named(kwargs, name):
    with pytest.raises(ValueError, match=name):
        DecoderConfig(**kwargs)
