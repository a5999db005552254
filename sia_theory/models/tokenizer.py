"""The tokenizer of a GGUF "gpt2"-type vocabulary, built with the ``tokenizers`` library.

The GGUF file carries the byte-level BPE vocabulary (``tokenizer.ggml.tokens``, GPT-2's
byte-to-unicode alphabet, ``Ġ`` for a space), its merges in rank order, the token types
(3 = control) and the pre-tokenizer name. For ``pre = "smollm"`` llama.cpp
(``llama-vocab.cpp``, shared with starcoder/refact) splits the text first by ``\\p{N}`` (every
digit its own piece) and then by GPT-2's regex; in ``tokenizers`` that is
``Sequence([Digits(individual_digits=True), ByteLevel(add_prefix_space=False)])``, with the
byte-level decoder. No BOS token is added (``add_bos_token = false``). Control tokens
(``<|endoftext|>``, ``<|im_start|>``, ``<|im_end|>``, ...) are special tokens: written in the
text, they encode to their single id.
"""

from __future__ import annotations

__all__ = ["Tokenizer", "CONTROL_TOKEN_TYPE", "SUPPORTED_PRE_TOKENIZERS"]

CONTROL_TOKEN_TYPE = 3
"""GGUF's token type of control tokens."""
SUPPORTED_PRE_TOKENIZERS = ("smollm",)
"""The GGUF pre-tokenizers the tokenizer reproduces."""


class Tokenizer:
    """Byte-level BPE tokenizer of a GGUF vocabulary (see the module docstring).

    ``encode(text) -> list[int]``, ``decode(ids) -> str``; ``bos_id``, ``eos_id``,
    ``vocab_size``, ``special_tokens`` (control token text -> id) and ``token_to_id``.

    Parameters
    ----------
    metadata : dict
        The GGUF file's metadata (``tokenizer.ggml.*``).

    Raises
    ------
    ValueError
        If the tokenizer is not the byte-level BPE this class implements.
    """

    def __init__(self, metadata: dict):
        # optional dependency: tokenizers (the model extra)
        from tokenizers import AddedToken, decoders, models, pre_tokenizers
        from tokenizers import Tokenizer as HFTokenizer

        kind = metadata.get("tokenizer.ggml.model")
        pre = metadata.get("tokenizer.ggml.pre")
        if kind != "gpt2" or pre not in SUPPORTED_PRE_TOKENIZERS:
            raise ValueError(f"the model file's tokenizer is model={kind!r}, pre={pre!r}; "
                             f"supported: model='gpt2' with pre in {SUPPORTED_PRE_TOKENIZERS}")
        tokens = list(metadata["tokenizer.ggml.tokens"])
        types = list(metadata["tokenizer.ggml.token_type"])
        merges = [tuple(m.split(" ", 1)) for m in metadata["tokenizer.ggml.merges"]]
        vocab = {token: i for i, token in enumerate(tokens)}
        self._hf = HFTokenizer(models.BPE(vocab=vocab, merges=merges, fuse_unk=False,
                                          byte_fallback=False))
        self._hf.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
        self._hf.decoder = decoders.ByteLevel()
        self.special_tokens = {token: i for i, (token, kind) in enumerate(zip(tokens, types))
                               if kind == CONTROL_TOKEN_TYPE}
        self._hf.add_special_tokens([AddedToken(t, special=True, normalized=False)
                                     for t in self.special_tokens])
        self.vocab_size = len(tokens)
        self.bos_id = int(metadata["tokenizer.ggml.bos_token_id"])
        self.eos_id = int(metadata["tokenizer.ggml.eos_token_id"])
        self.add_bos = bool(metadata.get("tokenizer.ggml.add_bos_token", False))
        self._tokens = tokens

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` (control tokens written in it become their ids; a BOS token is
        prepended only if the file asks for it)."""
        if not isinstance(text, str):
            raise ValueError(f"text must be a str, got {type(text).__name__}")
        ids = self._hf.encode(text, add_special_tokens=False).ids
        return [self.bos_id, *ids] if self.add_bos else list(ids)

    def encode_batch(self, texts) -> list[list[int]]:
        """``[encode(t) for t in texts]``, using the library's parallel batch encoder."""
        texts = list(texts)
        if not all(isinstance(t, str) for t in texts):
            raise ValueError("texts must be an iterable of str")
        encoded = self._hf.encode_batch(texts, add_special_tokens=False)
        return [([self.bos_id] if self.add_bos else []) + list(e.ids) for e in encoded]

    def decode(self, ids, skip_special_tokens: bool = False) -> str:
        """Text of token ``ids`` (control tokens kept unless ``skip_special_tokens``)."""
        ids = [int(i) for i in ids]
        if any(i < 0 or i >= self.vocab_size for i in ids):
            raise ValueError(f"ids must lie in [0, vocab_size - 1 = {self.vocab_size - 1}]")
        return self._hf.decode(ids, skip_special_tokens=skip_special_tokens)

    def token_to_id(self, token: str) -> int | None:
        """Id of the vocabulary entry ``token`` (byte-level alphabet), or ``None``."""
        return self._hf.token_to_id(token)

    def id_to_token(self, index: int) -> str:
        """The vocabulary entry of ``index`` (byte-level alphabet, e.g. ``"ĠParis"``)."""
        return self._tokens[int(index)]
