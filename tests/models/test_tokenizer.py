"""sia_theory.models.tokenizer, exercised by its own name: a five-token GPT-2 style vocabulary
written here, whose BPE encodings follow by hand from its one merge ("a b" → "ab")."""

import pytest

pytest.importorskip("tokenizers")

from sia_theory.models.tokenizer import CONTROL_TOKEN_TYPE, Tokenizer  # noqa: E402

META = {"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": "smollm",
        "tokenizer.ggml.tokens": ["<|end|>", "a", "b", "ab", "1"],
        "tokenizer.ggml.token_type": [CONTROL_TOKEN_TYPE, 1, 1, 1, 1],
        "tokenizer.ggml.merges": ["a b"], "tokenizer.ggml.bos_token_id": 0,
        "tokenizer.ggml.eos_token_id": 0}


def test_encodings_by_hand():
    tok = Tokenizer(META)
    assert tok.encode("abba") == [3, 2, 1]  # "ab" merged, then b, a
    assert tok.encode("ab<|end|>a") == [3, 0, 1]  # the control token is one id
    assert tok.encode("11") == [4, 4]  # digits split one per token
    assert tok.decode([3, 2, 1]) == "abba"
    assert tok.decode([3, 0], skip_special_tokens=True) == "ab"
    assert tok.encode_batch(["ab", "ba"]) == [[3], [2, 1]]
    assert (tok.token_to_id("ab"), tok.id_to_token(2)) == (3, "b")


def test_add_bos_and_bad_input():
    assert Tokenizer(dict(META, **{"tokenizer.ggml.add_bos_token": True})).encode("a") == [0, 1]
    tok = Tokenizer(META)
    with pytest.raises(ValueError, match="text"):
        tok.encode(b"ab")
    with pytest.raises(ValueError, match="ids"):
        tok.decode([5])
    with pytest.raises(ValueError, match="supported"):
        Tokenizer(dict(META, **{"tokenizer.ggml.pre": "llama3"}))
