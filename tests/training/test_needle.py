"""sia_theory.training.needle, exercised by its own name: a needle prompt decoded back to text
holds each needle sentence and the question, and its loss mask marks exactly the answer's
digits and full stops."""

import numpy as np
import pytest

from sia_theory.training.needle import NEEDLES, NeedleTask
from sia_theory.training.settings import TrainSettings

S = TrainSettings(train_length=512, n_layers=1, d_model=16, n_heads=2, tokenizer="bytes",
                  batch_size=2, steps=1, eval_multiples=(1,), validation_documents=2,
                  max_train_documents=4)


@pytest.fixture(scope="module")
def task():
    return NeedleTask(S)


def test_prompt_holds_needles_and_answer(task):
    ex = task.example(np.random.default_rng(0), 512)
    assert ex.window.size == 513
    text = task.tokenizer.decode(ex.window)
    for word, key in zip(ex.words, ex.keys, strict=True):
        assert f" The special magic {word} number is {key}." in text
    assert "What are the special magic numbers?" in text
    assert len(ex.starts) == NEEDLES and list(ex.starts) == sorted(ex.starts)
    answered = task.tokenizer.decode(ex.window[1:][ex.mask == 1])
    assert sorted(answered.replace(".", " ").split()) == sorted(ex.keys)


def test_batches_are_seeded_and_short_prompts_refused(task):
    w1, m1 = task.batch(seed=3, step=0, batch_size=2, length=512)
    w2, _ = task.batch(seed=3, step=0, batch_size=2, length=512)
    assert w1.shape == (2, 513) and m1.shape == (2, 512) and np.array_equal(w1, w2)
    with pytest.raises(ValueError, match="train_length"):
        task.example(np.random.default_rng(0), 40)
    with pytest.raises(ValueError, match="form"):
        task.example(np.random.default_rng(0), 512, form="essay")
