"""sia_theory.training.evaluation, exercised by its own name: the validation loss of an untrained
model is log V exactly (its output layer starts at zero: a uniform prediction), and the logits
entry point refuses bad tokens."""

import math

import numpy as np
import pytest

pytest.importorskip("jax")

from sia_theory.training.evaluation import block_for, evaluate, logits  # noqa: E402
from sia_theory.training.params import init_parameters  # noqa: E402
from sia_theory.training.schemes import resolve_scheme  # noqa: E402
from sia_theory.training.settings import TrainSettings  # noqa: E402

S = TrainSettings(train_length=16, n_layers=1, d_model=16, n_heads=2, tokenizer="bytes",
                  batch_size=2, steps=2, eval_multiples=(1, 2), validation_documents=2,
                  max_train_documents=3)


def test_untrained_model_scores_log_vocabulary():
    params = init_parameters(S, seed=0)
    for length in (16, 32):
        assert evaluate(params, resolve_scheme("rope"), S, length) == pytest.approx(
            math.log(S.effective_vocab), rel=1e-6)
    out = logits(params, "si-rope", S, np.zeros((1, 8), np.int64))
    assert out.shape == (1, 8, S.effective_vocab) and not np.any(out)


def test_bad_input_named():
    params = init_parameters(S, seed=0)
    with pytest.raises(ValueError, match="length"):
        evaluate(params, resolve_scheme("rope"), S, 33)
    with pytest.raises(ValueError, match="tokens"):
        logits(params, "rope", S, np.zeros(8, np.int64))
    assert 32 % block_for(S, 1, 32) == 0
