"""sia_theory.training.trainer, exercised by its own name: a two-step run whose first training
loss is log V exactly (the output layer starts at zero, and the loss is taken before the update),
reproducible from its seed, validated at every length of the settings."""

import math

import numpy as np
import pytest

pytest.importorskip("jax")
pytest.importorskip("optax")

from sia_theory.training.settings import TrainSettings  # noqa: E402
from sia_theory.training.trainer import train  # noqa: E402

S = TrainSettings(train_length=16, n_layers=1, d_model=16, n_heads=2, tokenizer="bytes",
                  batch_size=2, steps=2, eval_multiples=(1, 2), eval_every=1,
                  validation_documents=2, max_train_documents=3)


@pytest.fixture(scope="module")
def run():
    return train("rope", S, seed=3)


def test_first_loss_is_log_v_and_curves_complete(run):
    assert run.train_losses.shape == (2,)
    assert run.train_losses[0] == pytest.approx(math.log(S.effective_vocab), rel=1e-6)
    assert set(run.validation) == {16, 32}
    assert [step for step, _ in run.validation_curve] == [1, 2]
    assert all(np.isfinite(v) for v in run.validation.values())


def test_same_seed_same_parameters(run):
    again = train("rope", S, seed=3)
    assert np.array_equal(again.parameters["layers"]["w_q"], run.parameters["layers"]["w_q"])
    assert np.array_equal(again.train_losses, run.train_losses)


def test_bad_scheme_named():
    with pytest.raises(ValueError, match="scheme"):
        train("si", S)
