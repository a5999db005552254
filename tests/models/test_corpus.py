"""sia_theory.models.corpus, exercised by its own name, with a byte-level "tokenizer" written
here (one id per UTF-8 byte) so every length is known by hand."""

import numpy as np
import pytest

from sia_theory.models.corpus import (
    code_documents,
    code_source,
    filler_ids,
    passkey_key,
    prose_documents,
    prose_topics,
)


def _bytes(text):
    return list(text.encode("utf-8"))


def test_prose_documents_have_exact_lengths_and_real_text():
    docs = prose_documents(_bytes, 3000, 2)
    assert [d.ids.size for d in docs] == [3000, 3000]
    topics = dict(prose_topics())
    first = docs[0].parts[0]
    assert bytes(docs[0].ids[:50].astype(np.uint8)) == topics[first].encode()[:50]
    assert docs[0].parts[-1] < docs[1].parts[0]  # consecutive runs of sorted topics


def test_code_documents_and_source():
    source = code_source("json.decoder")
    assert "class JSONDecoder" in source
    docs = code_documents(_bytes, 500, 1)
    assert docs[0].ids.size == 500
    with pytest.raises(ValueError, match="module"):
        code_source("math")  # a compiled module: no source


def test_filler_and_passkey():
    """The filler is FILLER's bytes repeated: period len(FILLER) = 95 bytes."""
    text = (" The grass is green. The sky is blue. The sun is yellow. Here we go. There and "
            "back again.")
    f = filler_ids(_bytes, 1000)
    assert f.size == 1000 and filler_ids(_bytes, 0).size == 0
    assert bytes(f[:len(text)].astype(np.uint8)).decode() == text
    assert np.array_equal(f[:len(text)], f[len(text):2 * len(text)])
    keys = {passkey_key(0, trial) for trial in range(50)}
    assert all(10_000 <= k <= 99_999 for k in keys) and len(keys) > 40
    assert passkey_key(0, 3) == passkey_key(0, 3)
    with pytest.raises(ValueError, match="n_tokens"):
        prose_documents(_bytes, 1, 1)
