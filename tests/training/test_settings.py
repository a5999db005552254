"""sia_theory.training.settings, exercised by its own name: the quick settings, derived lengths
and every bad value refused naming its parameter."""

import pytest

from sia_theory.training.settings import OPTIMIZERS, TOKENIZERS, TrainSettings, check_multiples


def test_quick_settings_and_derived_lengths():
    s = TrainSettings.quick()
    assert (s.train_length, s.n_layers, s.d_model, s.n_heads, s.steps) == (32, 2, 32, 2, 8)
    assert s.head_dim == 16
    assert s.max_length == 32 * max(s.eval_multiples)
    assert TOKENIZERS == ("bpe", "bytes") and OPTIMIZERS == ("muon", "adam")


def test_check_multiples():
    assert check_multiples("eval_multiples", [1, 4, 2]) == (1, 2, 4)


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"train_length": 3}, "train_length"), ({"eval_multiples": (2, 4)}, "eval_multiples"),
    ({"d_model": 30, "n_heads": 4}, "d_model"), ({"tokenizer": "chars"}, "tokenizer"),
    ({"optimizer": "sgd"}, "optimizer"), ({"steps": 0}, "steps")])
def test_bad_settings_named(kwargs, name):
    with pytest.raises(ValueError, match=name):
        TrainSettings(**kwargs)
