"""The SmolLM2 tokenizer built from the GGUF vocabulary: round trips on real text (Python's own
documentation, source code, unicode), the "smollm" pre-tokenizer against an independent
re-implementation of llama.cpp's split, digits one per token, and the control tokens."""

import inspect
import pydoc_data.topics
import re
import textwrap

import pytest

from sia_theory.models import load_contents
from sia_theory.models.tokenizer import Tokenizer

UNICODE = "naïve café — 東京タワー, Ελληνικά, emoji 😀🧪, math ∑ x² ≤ ∞\ttab\r\nend  "


@pytest.fixture(scope="module")
def metadata():
    return load_contents("smollm2-135m")[0].metadata


@pytest.fixture(scope="module")
def tokenizer(metadata):
    return Tokenizer(metadata)


def _texts():
    topics = pydoc_data.topics.topics
    return {"language reference": topics["naming"] + topics["exceptions"],
            "source code": inspect.getsource(textwrap) + inspect.getsource(re),
            "unicode": UNICODE}


@pytest.mark.parametrize("kind", ["language reference", "source code", "unicode"])
def test_round_trips_on_real_text(tokenizer, kind):
    text = _texts()[kind]
    ids = tokenizer.encode(text)
    assert tokenizer.decode(ids) == text
    assert tokenizer.encode(tokenizer.decode(ids)) == ids  # stable
    assert len(ids) < len(text.encode()) / (1.5 if kind != "unicode" else 0.5)  # it compresses


def test_known_words_are_single_tokens_and_no_bos_is_added(tokenizer):
    ids = tokenizer.encode("The capital of France is")
    assert [tokenizer.id_to_token(i) for i in ids] == ["The", "Ġcapital", "Ġof", "ĠFrance",
                                                       "Ġis"]
    assert tokenizer.decode([tokenizer.token_to_id("ĠParis")]) == " Paris"


def test_digits_are_split_one_per_token(tokenizer):
    ids = tokenizer.encode("In 2024, 31415 people")
    pieces = [tokenizer.id_to_token(i) for i in ids]
    assert pieces == ["In", "Ġ", "2", "0", "2", "4", ",", "Ġ", "3", "1", "4", "1", "5",
                      "Ġpeople"]


def _bytes_to_unicode():
    """GPT-2's byte -> printable character table (Radford et al. 2019, encoder.py)."""
    keep = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
            + list(range(ord("®"), ord("ÿ") + 1)))
    table, extra = {}, 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


# llama.cpp's "smollm" split: \p{N} alone, then GPT-2's pattern. With stdlib re: letters are
# [^\W\d_], numbers \d (the same as \p{L}, \p{N} on text without exotic numerals).
_LETTER, _OTHER = r"[^\W\d_]", r"(?:[^\s\w]|_)"
_GPT2 = re.compile(rf"'s|'t|'re|'ve|'m|'ll|'d| ?{_LETTER}+| ?\d+| ?{_OTHER}+|\s+(?!\S)|\s+")


def _independent_encode(metadata, text):
    from tokenizers import models

    tokens = metadata["tokenizer.ggml.tokens"]
    bpe = models.BPE(vocab={t: i for i, t in enumerate(tokens)},
                     merges=[tuple(m.split(" ", 1)) for m in metadata["tokenizer.ggml.merges"]])
    table = _bytes_to_unicode()
    ids = []
    for chunk in re.split(r"(\d)", text):  # digits isolated first
        for piece in _GPT2.findall(chunk):
            mapped = "".join(table[b] for b in piece.encode())
            ids.extend(token.id for token in bpe.tokenize(mapped))
    return ids


@pytest.mark.parametrize("kind", ["language reference", "source code"])
def test_pre_tokenizer_matches_llama_cpp_split(tokenizer, metadata, kind):
    text = _texts()[kind][:20000]
    assert tokenizer.encode(text) == _independent_encode(metadata, text)


def test_control_tokens_are_single_ids(tokenizer):
    ids = tokenizer.encode("<|im_start|>user\nHi<|im_end|>\n<|endoftext|>")
    assert ids[0] == tokenizer.bos_id == 1
    assert tokenizer.eos_id == 2 and ids[-1] == tokenizer.special_tokens["<|endoftext|>"] == 0
    assert 2 in ids
    assert tokenizer.decode(ids, skip_special_tokens=True) == "user\nHi\n"


def test_bad_input_is_refused(tokenizer):
    with pytest.raises(ValueError, match="text must be a str"):
        tokenizer.encode(b"bytes")
    with pytest.raises(ValueError, match=r"ids must lie in \[0, vocab_size - 1 = 49151\]"):
        tokenizer.decode([5, 49152])
