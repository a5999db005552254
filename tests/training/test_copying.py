"""sia_theory.training.copying, exercised by its own name: the copy sequences repeat themselves,
and an untrained model (uniform prediction) scores log V on both copies (drop 0)."""

import math

import numpy as np
import pytest

pytest.importorskip("jax")

from sia_theory.training.copying import copy_sequences, copy_test  # noqa: E402
from sia_theory.training.params import init_parameters  # noqa: E402
from sia_theory.training.run import TrainedRun  # noqa: E402
from sia_theory.training.settings import TrainSettings  # noqa: E402

S = TrainSettings(train_length=16, n_layers=1, d_model=16, n_heads=2, tokenizer="bytes",
                  batch_size=2, steps=1, eval_multiples=(1,), validation_documents=2,
                  max_train_documents=3)


def test_sequences_repeat_and_avoid_the_separator():
    seqs = copy_sequences(S, 8, 5, seed=1)
    for kind in ("random", "text"):
        x = seqs[kind]
        assert x.shape == (5, 16) and np.array_equal(x[:, :8], x[:, 8:])
    assert not np.any(seqs["random"] == 256)  # the byte tokenizer's separator
    assert np.array_equal(copy_sequences(S, 8, 5, seed=1)["text"], seqs["text"])


def test_untrained_copy_test_is_log_v_without_drop():
    run = TrainedRun(scheme="rope", tau=None, seed=0, settings=S,
                     parameters=init_parameters(S, seed=0), train_losses=np.zeros(1),
                     validation_curve=((1, 0.0),))
    out = copy_test(run, half=8, sequences=4)
    for kind in ("random", "text"):
        assert out[f"{kind}_first"] == pytest.approx(math.log(S.effective_vocab), rel=1e-6)
        assert out[f"{kind}_drop"] == pytest.approx(0.0, abs=1e-5)
    with pytest.raises(ValueError, match="half"):
        copy_test(run, half=9)


def _run(scheme="rope", parameters=None, settings=S):
    return TrainedRun(scheme=scheme, tau=None, seed=0, settings=settings,
                      parameters=init_parameters(settings, seed=0) if parameters is None
                      else parameters, train_losses=np.zeros(1), validation_curve=((1, 0.0),))


@pytest.mark.parametrize("run", [None, "rope", {"settings": S}, 3],
                         ids=["none", "scheme-name", "dict", "int"])
def test_a_run_that_is_not_a_trained_run_is_refused(run):
    """Before: AttributeError ('str' object has no attribute 'settings')."""
    with pytest.raises(ValueError, match=r"run must be a TrainedRun, got"):
        copy_test(run, half=8, sequences=1)


def _changed(key, value):
    params = init_parameters(S, seed=0)
    if key.startswith("layers."):
        params["layers"][key[7:]] = value
    else:
        params[key] = value
    return params


@pytest.mark.parametrize("parameters, match", [
    ({}, r"parameters must be a dict with 'embedding', 'unembedding' and 'layers'"),
    ([1, 2], r"parameters must be a dict with 'embedding', 'unembedding' and 'layers'"),
    ({"embedding": np.zeros((257, 16)), "layers": {}},
     r"parameters: unembedding must have shape \(16, 257\)"),
    (_changed("layers.w_q", np.zeros((1, 16, 8), np.float32)),
     r"parameters: layers\.w_q must have shape \(1, 16, 16\)"),
    (_changed("embedding", np.zeros((10, 16), np.float32)),
     r"parameters: embedding must have shape \(257, 16\)"),
    (_changed("unembedding", np.full((16, 257), np.nan, np.float32)),
     r"parameters: unembedding must hold finite numbers only"),
    (_changed("layers.w_extra", np.zeros((1, 16, 16), np.float32)),
     r"parameters: unknown entries w_extra"),
    (_changed("layers.score_scale", np.ones(1, np.float32)),
     r"parameters: layers\.score_scale is learned only by a scheme that declares it"),
], ids=["empty", "list", "missing-unembedding", "w_q-shape", "embedding-shape", "nan",
        "unknown-layer-key", "score-scale-not-learned"])
def test_parameters_are_checked_against_the_runs_model(parameters, match):
    """Before: KeyError 'layers', a JAX shape error, or NaN losses returned."""
    with pytest.raises(ValueError, match=match):
        copy_test(_run(), half=8, sequences=1, parameters=parameters)


def test_a_learned_scale_must_be_in_the_parameters_of_a_scheme_that_learns_it():
    """The weights of a run whose scheme learns score_scale, without it, are not that model's
    (before: scored silently with the scale 1)."""
    run = _run("logn-p-rope-learned", init_parameters(S, seed=0, learned=("score_scale",)))
    with pytest.raises(ValueError, match=r"parameters: layers\.score_scale is learned by "
                       r"scheme 'logn-p-rope-learned'"):
        copy_test(run, half=8, sequences=1, parameters=init_parameters(S, seed=0))
    assert set(copy_test(run, half=8, sequences=1)) >= {"random_drop", "text_drop"}


def test_the_runs_own_parameters_are_checked_naming_run_parameters():
    """A run built by hand whose parameters do not fit its settings (before: a JAX shape
    error)."""
    other = TrainSettings(**{**S.to_dict(), "d_model": 32})
    with pytest.raises(ValueError, match=r"run\.parameters: embedding must have shape "
                       r"\(257, 16\)"):
        copy_test(_run(parameters=init_parameters(other, seed=0)), half=8, sequences=1)
