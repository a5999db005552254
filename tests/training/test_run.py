"""sia_theory.training.run, exercised by its own name on a run assembled by hand (no training):
its curves table, counts, save/load round trip and its numpy decoder."""

import numpy as np
import pytest

from sia_theory.training.params import init_parameters, parameter_count
from sia_theory.training.run import CURVE_COLUMNS, TrainedRun
from sia_theory.training.settings import TrainSettings

S = TrainSettings(train_length=16, n_layers=1, d_model=16, n_heads=2, tokenizer="bytes",
                  batch_size=2, steps=3, eval_multiples=(1, 2), validation_documents=2,
                  max_train_documents=3, eval_every=1)


def _run():
    return TrainedRun(scheme="rope", tau=None, seed=5, settings=S,
                      parameters=init_parameters(S, seed=5),
                      train_losses=np.array([5.0, 4.5, 4.0]),
                      validation_curve=((1, 4.8), (2, 4.4), (3, 4.1)),
                      validation={16: 4.1, 32: 4.3})


def test_curves_and_counts_by_hand():
    run = _run()
    curves = run.curves()
    assert tuple(curves.columns) == CURVE_COLUMNS
    assert curves[curves["split"] == "train"]["loss"].tolist() == [5.0, 4.5, 4.0]
    valid = curves[curves["split"] == "validation"]
    assert list(zip(valid["step"], valid["length"], valid["loss"], strict=True)) == [
        (1, 16, 4.8), (2, 16, 4.4), (3, 16, 4.1), (3, 32, 4.3)]
    assert run.tokens_trained == 3 * 2 * 16
    assert run.parameter_count == parameter_count(run.parameters)
    assert run.validation_loss(32) == 4.3


def test_save_load_round_trip(tmp_path):
    run = _run()
    run.save(tmp_path / "run")
    back = TrainedRun.load(tmp_path / "run")
    assert (back.scheme, back.seed, back.settings) == ("rope", 5, S)
    assert np.array_equal(back.train_losses, run.train_losses)
    assert back.validation_curve == run.validation_curve and back.validation == run.validation
    assert np.array_equal(back.parameters["layers"]["w_q"], run.parameters["layers"]["w_q"])
    with pytest.raises(ValueError, match="folder"):
        TrainedRun.load(tmp_path / "none")


def test_decoder_of_an_untrained_run_is_uniform():
    """The output layer starts at zero: every logit 0."""
    logits = _run().decoder().forward(np.array([[1, 2, 3]]))
    assert logits.shape == (1, 3, S.effective_vocab) and not np.any(logits)


def test_checkpoints_round_trip_through_the_curves():
    """A run with checkpoints writes every (step, length, kind) into its curves and reads them
    back; the curve at L and the final validation come from the pooled rows."""
    points = ((1, 16, "all", 4.8), (1, 16, "code", 4.9), (1, 16, "prose", 4.7),
              (1, 32, "all", 4.9), (1, 32, "code", 5.0), (1, 32, "prose", 4.8),
              (3, 16, "all", 4.1), (3, 16, "code", 4.2), (3, 16, "prose", 4.0),
              (3, 32, "all", 4.3), (3, 32, "code", 4.4), (3, 32, "prose", 4.2))
    run = TrainedRun(scheme="rope", tau=None, seed=5, settings=S,
                     parameters=init_parameters(S, seed=5),
                     train_losses=np.array([5.0, 4.5, 4.0]),
                     validation_curve=((1, 4.8), (3, 4.1)), validation={16: 4.1, 32: 4.3},
                     checkpoints=points)
    curves = run.curves()
    assert set(curves["split"]) == {"train", "validation", "validation:code",
                                    "validation:prose"}
    back = TrainedRun.from_stored(curves, run.parameters_bytes())
    assert back.checkpoints == points
    assert back.validation_curve == ((1, 4.8), (3, 4.1)) and back.validation == run.validation
    frame = back.checkpoint_frame()
    assert frame["multiple"].tolist() == [1, 1, 1, 2, 2, 2] * 2
    assert frame[(frame["kind"] == "prose") & (frame["step"] == 3)]["loss"].tolist() == [4.0, 4.2]


def test_a_run_stored_without_checkpoints_reads_back_without_them():
    run = _run()
    back = TrainedRun.from_stored(run.curves(), run.parameters_bytes())
    assert back.checkpoints == () and back.validation_curve == run.validation_curve


def test_a_run_stored_before_environments_were_recorded_still_loads():
    """Parameters whose record has no ``environment`` (runs stored by 0.4.0 and before) load,
    their environment "not recorded"; a run assembled by hand has none either."""
    import json

    from safetensors.numpy import load, save

    from sia_theory.training._jax import NOT_RECORDED
    from sia_theory.training.run import distinct_environments

    run = _run()
    record = run.record()
    del record["environment"]
    old = save(load(run.parameters_bytes()),
               metadata={k: json.dumps(v) for k, v in record.items()})
    back = TrainedRun.from_stored(run.curves(), old)
    assert back.environment == NOT_RECORDED == "not recorded" == run.environment
    assert back.validation == run.validation
    env = {"jax": "x"}
    assert distinct_environments({1: back, 2: run}) == [{"environment": NOT_RECORDED,
                                                         "runs": 2}]
    assert distinct_environments([env, NOT_RECORDED, dict(env)]) == [
        {"environment": env, "runs": 2}, {"environment": NOT_RECORDED, "runs": 1}]
