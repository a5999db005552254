"""sia_theory.training.model, exercised by its own name: the JAX decoder against the numpy
reference Decoder with the same (random, non-zero) parameters, and its cross-entropy written out
here."""

import numpy as np
import pytest

pytest.importorskip("jax")

from sia_theory.attention import Decoder, DecoderConfig  # noqa: E402
from sia_theory.schemes import resolve_scheme  # noqa: E402
from sia_theory.training.evaluation import scheme_arrays  # noqa: E402
from sia_theory.training.model import forward, rms_norm, token_losses  # noqa: E402
from sia_theory.training.params import init_parameters, to_decoder_layout  # noqa: E402
from sia_theory.training.settings import TrainSettings  # noqa: E402

S = TrainSettings(train_length=16, n_layers=2, d_model=16, n_heads=2, tokenizer="bytes",
                  batch_size=2, steps=2, eval_multiples=(1,), validation_documents=1)


def _params():
    params = init_parameters(S, seed=0)
    rng = np.random.default_rng(1)  # the zero-started output layers made non-zero
    params["unembedding"] = (rng.standard_normal(params["unembedding"].shape) / 4).astype(
        np.float32)
    for name in ("w_o", "w_down"):
        w = params["layers"][name]
        params["layers"][name] = (rng.standard_normal(w.shape) / np.sqrt(w.shape[1])).astype(
            np.float32)
    return params


@pytest.mark.parametrize("scheme", ["rope", "si-rope"])
def test_forward_matches_numpy_reference(scheme):
    params, sch = _params(), resolve_scheme(scheme)
    tokens = np.random.default_rng(2).integers(0, S.effective_vocab, size=(2, 16))
    tables, rotation = scheme_arrays(sch, S, 16)
    got = np.asarray(forward(params, tokens, tables, rotation, n_heads=2))
    config = DecoderConfig(vocab_size=S.effective_vocab, d_model=16, n_heads=2, n_layers=2,
                           mlp_hidden=64, position=sch.position_encoding(16, 16),
                           transform=sch.transform_for(2, 16, 16), dtype="float32")
    ref = Decoder.from_parameters(config, to_decoder_layout(params)).forward(tokens)
    assert got == pytest.approx(ref, abs=1e-4)
    windows = np.concatenate([tokens, tokens[:, :1]], axis=1)
    losses = np.asarray(token_losses(params, windows, tables, rotation, n_heads=2))
    lse = np.log(np.exp(got.astype(np.float64)).sum(-1))
    picked = np.take_along_axis(got, windows[:, 1:, None], axis=-1)[..., 0]
    assert losses == pytest.approx(lse - picked, abs=1e-4)


def test_rms_norm_by_hand():
    x = np.array([[3.0, 4.0]], np.float32)
    assert np.asarray(rms_norm(x)) == pytest.approx(x / np.sqrt(12.5), rel=1e-6)
