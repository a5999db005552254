"""sia_theory.attention.model, exercised by its own name: the decoder's cached decoding against
the obvious slow path (a full forward pass over the whole prefix at every step)."""

from dataclasses import replace

import numpy as np
import pytest

from sia_theory import ScaleInvariant
from sia_theory.attention.model import Decoder, DecoderConfig

CONFIG = DecoderConfig(vocab_size=32, d_model=16, n_heads=2, n_layers=2,
                       transform=ScaleInvariant(tau=4.0), seed=3)


@pytest.mark.parametrize("inattention", [False, True])
def test_cached_decoding_matches_full_forward(inattention):
    model = Decoder(replace(CONFIG, inattention=inattention))
    tokens = np.random.default_rng(0).integers(0, 32, size=(2, 12))
    full = model.forward(tokens)
    assert full.shape == (2, 12, 32)
    cache = model.new_cache()
    prefill = model.forward(tokens[:, :5], cache)
    assert prefill == pytest.approx(full[:, :5], abs=1e-12)
    for t in range(5, 12):
        assert model.decode_step(tokens[:, t], cache) == pytest.approx(full[:, t], abs=1e-12)
    assert cache.length == 12


def test_causality_a_later_token_does_not_change_earlier_logits():
    model = Decoder(CONFIG)
    tokens = np.array([[1, 2, 3, 4, 5]])
    other = np.array([[1, 2, 3, 4, 30]])
    assert model.forward(tokens)[:, :4] == pytest.approx(model.forward(other)[:, :4], abs=0)
