"""sia_theory.training.needle_task, exercised by its own name: the list form of a prompt (SI's
``word: digits;`` answer) holds the needles in their order in the text, each answer segment
points at its needle's digits, and an evaluation set is seeded by (seed, context) alone."""

import numpy as np
import pytest

from sia_theory.training.needle_task import DIGITS, FORMS, NEEDLES, WORDS, needle_task
from sia_theory.training.settings import TrainSettings

S = TrainSettings(train_length=512, n_layers=1, d_model=16, n_heads=2, tokenizer="bytes",
                  batch_size=2, steps=1, eval_multiples=(1,), validation_documents=2,
                  max_train_documents=4)


@pytest.fixture(scope="module")
def task():
    return needle_task(S)


def test_the_task_constants_are_sis_task_in_miniature():
    assert FORMS == ("query", "list") and NEEDLES == 3 and DIGITS == 4
    assert len(set(WORDS)) == len(WORDS) >= NEEDLES


def test_list_form_answers_in_text_order_and_segments_point_at_the_digits(task):
    ex = task.example(np.random.default_rng(5), 512, form="list")
    decode = task.tokenizer.decode
    answer = decode(ex.window[1:][ex.mask == 1])
    expected = "; ".join(f"{w}: {k}" for w, k in zip(ex.words, ex.keys, strict=True)) + "."
    assert answer.strip() == expected.strip()
    for (start, digit_start, stop), key in zip(ex.segments, ex.keys, strict=True):
        assert start <= digit_start < stop <= ex.window.size
        assert decode(ex.window[digit_start:stop]).strip(" .;") == key
        assert len(key) == DIGITS and key.isdigit()


def test_evaluation_prompts_depend_on_seed_and_context_only(task):
    a = task.evaluation(seed=2, length=512, count=3)
    b = task.evaluation(seed=2, length=512, count=3)
    c = task.evaluation(seed=3, length=512, count=3)
    assert all(np.array_equal(x.window, y.window) for x, y in zip(a, b, strict=True))
    assert not all(np.array_equal(x.window, y.window) for x, y in zip(a, c, strict=True))
