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
