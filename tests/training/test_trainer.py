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


def test_a_run_records_the_environment_that_trained_it(run, tmp_path):
    """The environment is the training process's own, as JAX and os.environ give it in this
    process, and it is stored with the run (save/load and the safetensors record)."""
    import os

    import jax
    import jaxlib
    import optax

    import sia_theory
    from sia_theory.training.run import TrainedRun

    env = run.environment
    devices = jax.devices()
    assert env["sia-theory"] == sia_theory.__version__
    assert (env["jax"], env["jaxlib"], env["optax"]) == (jax.__version__, jaxlib.__version__,
                                                         optax.__version__)
    assert env["device_kind"] == devices[0].device_kind and env["device_count"] == len(devices)
    assert env["backend"] == jax.default_backend()
    assert env["xla_flags"] == os.environ.get("XLA_FLAGS", "")
    assert env["jax_enable_x64"] == str(jax.config.jax_enable_x64)
    precision = jax.config.jax_default_matmul_precision
    assert env["jax_default_matmul_precision"] == (None if precision is None else str(precision))
    assert run.record()["environment"] == env
    run.save(tmp_path / "run")
    assert TrainedRun.load(tmp_path / "run").environment == env
