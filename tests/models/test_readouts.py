"""sia_theory.models.readouts, exercised by its own name on a random checkpoint written here:
token losses are the log-softmax of the logits, greedy generation is the argmax chain, and the
row blocks cover the rows once."""


import numpy as np
import pytest
from scipy.special import log_softmax

from sia_theory.models.loader import load_hf_folder
from sia_theory.models.readouts import row_blocks, run_rows


@pytest.fixture(scope="module")
def model(tmp_path_factory, tiny_folder):
    return load_hf_folder(tiny_folder(tmp_path_factory.mktemp("tiny"), seed=1), np.float64)[0]


def test_token_losses_are_log_softmax(model):
    ids = np.array([2, 5, 9, 9, 1, 17])
    lp = log_softmax(model.logits(ids), axis=-1)
    expected = -lp[np.arange(5), ids[1:]]
    assert model.token_losses(ids) == pytest.approx(expected, abs=1e-12)


def test_generate_is_the_argmax_chain(model):
    ids = [4, 8, 15]
    out = model.generate(ids, 4)
    seq = list(ids)
    for _ in range(4):
        seq.append(int(np.argmax(model.logits(np.array(seq))[-1])))
    assert out == seq[3:]


def test_row_blocks_and_run_rows():
    assert row_blocks(10, 4) == [slice(0, 4), slice(4, 8), slice(8, 10)]
    seen = np.zeros(10, int)

    def mark(rows):
        seen[rows] += 1

    run_rows(mark, row_blocks(10, 3))
    assert np.all(seen == 1)


def test_bad_input_named(model):
    with pytest.raises(ValueError, match="max_new_tokens"):
        model.generate([1], 0)
    with pytest.raises(ValueError, match="at least 2 tokens"):
        model.token_losses([1])
