"""sia_theory.training.data, exercised by its own name: the byte tokenizer by hand, the document
split, and training windows read from the stream at the stated offsets."""

import numpy as np
import pytest

from sia_theory.training.data import (
    SEPARATOR,
    TextTokenizer,
    corpus,
    split,
    texts,
    tokenizer,
)
from sia_theory.training.settings import TrainSettings


def test_byte_tokenizer_by_hand():
    tok = TextTokenizer("bytes", 257)
    assert tok.encode("é!").tolist() == [0xC3, 0xA9, 0x21]
    assert tok.decode([0xC3, 0xA9, 256, 0x21]) == "é!"  # the separator 256 is dropped
    assert tok.separator == 256 and tok.to_json() is None
    assert tokenizer("bytes", 257).vocab_size == 257


def test_split_is_disjoint_and_covers_documents():
    train, validation = split()
    assert not set(train) & set(validation)
    assert len(train) + len(validation) <= len(texts())
    assert SEPARATOR == "<|endoftext|>"


def test_windows_follow_the_stream():
    s = TrainSettings(train_length=16, n_layers=1, d_model=16, n_heads=1, tokenizer="bytes",
                      batch_size=3, steps=2, eval_multiples=(1, 2), validation_documents=2,
                      max_train_documents=3)
    data = corpus(s)
    batch = data.batch(1, 3)
    assert batch.shape == (3, 17)
    starts = data.order[[3, 4, 5]] * 16
    assert np.array_equal(batch, data.stream[starts[:, None] + np.arange(17)])
    windows = data.validation_windows(16)
    assert windows.shape == (2 * 2, 17)
    assert np.array_equal(windows[1], data.validation[0, 16:33])
    with pytest.raises(ValueError, match="train_length"):
        corpus(TrainSettings(train_length=2**16, tokenizer="bytes", eval_multiples=(1, 2),
                             max_train_documents=2))


@pytest.mark.slow  # a few seconds; make test-all and CI run it
def test_validation_alternates_prose_and_code():
    """The held-out pool's first documents in split order are all code; the validation set takes
    prose and code in turn, so both kinds are validated (full settings: 2 and 2)."""
    from sia_theory.training.data import corpus, document_kind, split
    from sia_theory.training.settings import TrainSettings

    _, pool = split()
    assert [document_kind(n) for n, _ in pool[:4]] == ["code"] * 4
    names = corpus(TrainSettings.full()).validation_names
    assert [document_kind(n) for n in names] == ["prose", "code", "prose", "code"]
    assert document_kind("prose:a..b") == "prose" and document_kind("code:ast") == "code"
