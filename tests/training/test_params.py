"""sia_theory.training.params, exercised by its own name: shapes and counts by hand, zero-started
output layers, the safetensors round trip and damaged files refused."""

import numpy as np
import pytest

from sia_theory.training.params import (
    check_parameters,
    from_safetensors,
    init_parameters,
    parameter_count,
    shapes_for,
    to_decoder_layout,
    to_safetensors,
)
from sia_theory.training.settings import TrainSettings

S = TrainSettings.quick()


def test_shapes_and_counts_by_hand():
    """d = 32, V = effective vocabulary, 2 layers: q, k, v, o (d × d), up (d × 4d), down
    (4d × d)."""
    shapes = shapes_for(S)
    v, d = S.effective_vocab, 32
    assert shapes["embedding"] == (v, d) and shapes["unembedding"] == (d, v)
    params = init_parameters(S, seed=0)
    per_layer = sum(int(np.prod(s[1:])) for s in shapes["layers"].values())
    assert parameter_count(params) == 2 * v * d + 2 * per_layer
    assert parameter_count(params, matmul_only=True) == v * d + 2 * per_layer
    assert not params["unembedding"].any() and not params["layers"]["w_o"].any()
    assert params["embedding"].std() == pytest.approx(1.0, abs=0.05)


def test_safetensors_round_trip_and_layout():
    params = init_parameters(S, seed=1)
    back, meta = from_safetensors(to_safetensors(params, {"scheme": "rope"}))
    assert meta == {"scheme": "rope"}
    assert np.array_equal(back["layers"]["w_q"], params["layers"]["w_q"])
    layout = to_decoder_layout(params)
    assert np.array_equal(layout["layers"][1]["w_q"], params["layers"]["w_q"][1])
    check_parameters(back, S)


def test_damaged_and_misshapen_refused():
    params = init_parameters(S, seed=2)
    data = to_safetensors(params)
    with pytest.raises(ValueError):
        from_safetensors(data[:20])
    bad = dict(params, embedding=params["embedding"][:, :16])
    with pytest.raises(ValueError, match="embedding"):
        check_parameters(bad, S)


def test_a_learned_score_scale_starts_at_one_and_is_checked():
    from sia_theory.training.params import check_parameters

    plain = init_parameters(S, 3)
    learned = init_parameters(S, 3, ("score_scale",))
    assert np.array_equal(learned["layers"]["score_scale"], np.ones(S.n_layers))
    for name in plain["layers"]:  # the same weights as without it
        assert np.array_equal(plain["layers"][name], learned["layers"][name])
    assert check_parameters(learned, S)["layers"]["score_scale"].shape == (S.n_layers,)
    learned["layers"]["score_scale"] = np.ones(S.n_layers + 1)
    with pytest.raises(ValueError, match="score_scale"):
        check_parameters(learned, S)
    assert parameter_count(init_parameters(S, 3, ("score_scale",))) == \
        parameter_count(plain) + S.n_layers
