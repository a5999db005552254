"""Training data: text that ships with Python, split by document, with a fixed order.

Documents, as text (:func:`texts`; read at run time through the standard library by
:mod:`sia_theory.models.corpus`, never copied into the repository):

* **prose**: the entries of ``pydoc_data.topics`` (sorted by key) joined by blank lines into
  consecutive documents of at least :data:`PROSE_CHARS` characters
  (:func:`~sia_theory.models.corpus.prose_runs`);
* **code**: every top-level pure-Python module of the standard library folder, one module per
  document (:func:`~sia_theory.models.corpus.stdlib_sources`).

Split (SI App. G keeps "the validation set identical across all runs"): documents are ordered
by the SHA-256 of their name, a fixed pseudo-random order; the first :data:`VALIDATION_POOL`
documents with at least :data:`VALIDATION_MIN_CHARS` characters are held out, every other
document is training data. Validation uses the first ``validation_documents`` of the pool that
hold ``max_length + 1`` tokens, prose and code alternating (the pool holds 2 prose and 14 code
documents; the first 4 in split order are all code, so without alternating "validation" would
mean code only), each cut to that: at every length ``E`` the same tokens ``1 … max_length`` are
scored, from windows of ``E + 1`` tokens (so only the context differs). The losses are reported
per kind (:func:`document_kind`) and pooled.

Training stream: the training documents in that order, each followed by the separator token,
cut into windows of ``L + 1`` tokens (stride ``L``), visited in one fixed permutation
(``rng_for(0, "training.data")``): the data order is the same for every scheme and seed, as in
SI. The tokenizer is a byte-level BPE trained with ``tokenizers`` on the training split
(deterministic), or raw UTF-8 bytes.

Any other text: ``TrainSettings(corpus=FOLDER)`` trains on a shard folder of
:mod:`.shards` (its BPE, its split, the same window order), read through memory maps.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from .._deprecated import moved_names
from .._infra.seeding import rng_for
from ..models.corpus import prose_runs, stdlib_sources

__all__ = ["PROSE_CHARS", "VALIDATION_POOL", "VALIDATION_MIN_CHARS", "SEPARATOR",
           "texts", "split", "document_kind", "TextTokenizer", "tokenizer", "Corpus", "corpus",
           "DATA_STUDY", "tokenized", "export_tokenized", "import_tokenized", "train_bpe",
           "settings_data", "settings_tokenizer"]

PROSE_CHARS = 32_000
"""Consecutive ``pydoc_data.topics`` entries are joined into one prose document until it holds at
least this many characters."""
VALIDATION_POOL = 16
"""Number of held-out documents: the first this many (in the split's order) of at least
:data:`VALIDATION_MIN_CHARS` characters; the validation set uses the first
``validation_documents`` of them."""
VALIDATION_MIN_CHARS = 16_000
"""A document is long enough to be held out for validation from this many characters on."""
SEPARATOR = "<|endoftext|>"
"""The special token put between training documents (id 256 for the byte tokenizer)."""
DATA_STUDY = "training.data"
"""Study name of the data order's random stream (``rng_for(0, DATA_STUDY, train_length)``):
the same windows in the same order for every scheme and seed."""


@lru_cache(maxsize=1)
def texts() -> tuple:
    """``((name, text), ...)`` of every prose and code document of the trainer's corpus, in the
    split's order (the SHA-256 of the name): ``prose:<first key>..<last key>`` and
    ``code:<module>`` (module docstring)."""
    docs = [(f"prose:{keys[0]}..{keys[-1]}", text) for keys, text in prose_runs(len, PROSE_CHARS)]
    docs += [(f"code:{name}", source) for name, source in stdlib_sources()]
    return tuple(sorted(docs, key=lambda d: hashlib.sha256(d[0].encode()).digest()))


def split(max_train_documents=None) -> tuple[tuple, tuple]:
    """``(train, validation_pool)``: see the module docstring."""
    pool, train = [], []
    for doc in texts():
        if len(pool) < VALIDATION_POOL and len(doc[1]) >= VALIDATION_MIN_CHARS:
            pool.append(doc)
        else:
            train.append(doc)
    if max_train_documents is not None:
        train = train[:max_train_documents]
    return tuple(train), tuple(pool)


class TextTokenizer:
    """``encode(text) -> int32 ids``, ``decode(ids) -> text``, ``vocab_size`` and
    ``separator`` (the id put between documents). ``kind`` is ``"bpe"`` or ``"bytes"``."""

    def __init__(self, kind: str, vocab_size: int, backend=None):
        self.kind, self.vocab_size, self.backend = kind, vocab_size, backend
        self.separator = 256 if backend is None else backend.token_to_id(SEPARATOR)

    def encode(self, text: str) -> np.ndarray:
        """The token ids of ``text`` (``int32``; bytes for the byte tokenizer)."""
        if self.backend is None:
            return np.frombuffer(text.encode("utf-8"), np.uint8).astype(np.int32)
        return np.asarray(self.backend.encode(text).ids, np.int32)

    def encode_many(self, texts) -> list:
        """:meth:`encode` of each of ``texts`` (batched by the BPE backend), as a list."""
        if self.backend is None:
            return [self.encode(t) for t in texts]
        return [np.asarray(e.ids, np.int32) for e in self.backend.encode_batch(list(texts))]

    def decode(self, ids) -> str:
        """The text of token ``ids`` (invalid UTF-8 replaced; the byte separator dropped)."""
        ids = [int(i) for i in ids]
        if self.backend is None:
            return bytes(i for i in ids if i < 256).decode("utf-8", errors="replace")
        return self.backend.decode(ids)

    def to_json(self) -> str | None:
        """The BPE as ``tokenizers`` JSON (``None`` for bytes)."""
        return None if self.backend is None else self.backend.to_str()


@lru_cache(maxsize=4)
def tokenizer(kind: str, vocab_size: int, max_train_documents=None) -> TextTokenizer:
    """The tokenizer of the training split: ``"bytes"`` (257 ids, 256 the separator), or a
    byte-level BPE of ``vocab_size`` ids (the separator is id 0) trained on it."""
    if kind == "bytes":
        return TextTokenizer("bytes", 257)
    train, _ = split(max_train_documents)
    return TextTokenizer("bpe", vocab_size, train_bpe([text for _, text in train], vocab_size))


def train_bpe(texts, vocab_size: int):
    """A byte-level BPE (a ``tokenizers.Tokenizer``) of ``vocab_size`` ids trained on the
    strings ``texts`` (deterministic: the same texts give the same merges); the separator
    :data:`SEPARATOR` is id 0."""
    # optional dependency: tokenizers (the train extra)
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=[SEPARATOR],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    backend.train_from_iterator(texts, trainer)
    return backend


_IMPORTED: dict = {}  # (kind, vocab_size, max_train_documents) -> the tokenized data


def tokenized(kind, vocab_size, max_train_documents):
    """``(tokenizer, stream, validation pool names, pool ids)``: imported
    (:func:`import_tokenized`) or made here."""
    held = _IMPORTED.get((kind, vocab_size, max_train_documents))
    return held if held is not None else _tokenize(kind, vocab_size, max_train_documents)


@lru_cache(maxsize=4)
def _tokenize(kind, vocab_size, max_train_documents):
    tok = tokenizer(kind, vocab_size, max_train_documents)
    train, pool = split(max_train_documents)
    ids = tok.encode_many([text for _, text in train])
    parts = [np.append(x, np.int32(tok.separator)) for x in ids]
    stream = np.concatenate(parts).astype(np.int32)  # (N,)
    stream.setflags(write=False)
    pool_ids = tuple(tok.encode_many([text for _, text in pool]))
    return tok, stream, tuple(name for name, _ in pool), pool_ids


def settings_data(settings):
    """``(tokenizer, stream, validation pool names, pool ids)`` of a
    :class:`~.settings.TrainSettings`: its shard folder's (``corpus``, :func:`.shards.
    shard_data`; ``stream`` read through memory maps) or the built-in corpus's
    (:func:`tokenized`)."""
    s = settings
    if getattr(s, "corpus", None) is not None:
        from .settings import corpus_folder
        from .shards import shard_data

        return shard_data(corpus_folder(s.corpus), s.corpus_checksum)
    return tokenized(s.tokenizer, s.vocab_size, s.max_train_documents)


def settings_tokenizer(settings) -> TextTokenizer:
    """The tokenizer of a :class:`~.settings.TrainSettings`: its shard folder's BPE, or
    :func:`tokenizer`'s."""
    s = settings
    if getattr(s, "corpus", None) is not None:
        return settings_data(s)[0]
    return tokenizer(s.tokenizer, s.vocab_size, s.max_train_documents)


def export_tokenized(settings, folder) -> Path:
    """Write the tokenized data of ``settings`` (a :class:`~.settings.TrainSettings`; its
    ``tokenizer``, ``vocab_size``, ``max_train_documents``) to ``folder/tokenized.npz`` (with
    the BPE as ``tokenizer.json``), so that another machine, whose Python has another standard
    library or ``tokenizers`` another version, trains on the same tokens
    (:func:`import_tokenized`). Returns the ``.npz`` path."""
    s = settings
    if getattr(s, "corpus", None) is not None:
        raise ValueError("settings: a shard corpus is its folder already (copy it; its "
                         "manifest pins every file)")
    tok, stream, names, pool_ids = tokenized(s.tokenizer, s.vocab_size, s.max_train_documents)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    if tok.backend is not None:
        (folder / "tokenizer.json").write_text(tok.to_json())
    path = folder / "tokenized.npz"
    np.savez_compressed(path, stream=stream, pool=np.concatenate(pool_ids),
                        pool_sizes=np.array([p.size for p in pool_ids], np.int64),
                        names=np.array(names), key=np.array([s.tokenizer, str(s.vocab_size),
                                                             str(s.max_train_documents)]))
    return path


def import_tokenized(folder) -> tuple:
    """Use the data that :func:`export_tokenized` wrote to ``folder`` for its settings' key
    from now on in this process (training, validation, needles); returns that key
    ``(tokenizer, vocab_size, max_train_documents)``."""
    folder = Path(folder)
    with np.load(folder / "tokenized.npz") as held:
        kind, vocab, max_docs = (str(x) for x in held["key"])
        key = (kind, int(vocab), None if max_docs == "None" else int(max_docs))
        stream = held["stream"].astype(np.int32)
        cuts = np.cumsum(held["pool_sizes"])[:-1]
        pool_ids = tuple(p.astype(np.int32) for p in np.split(held["pool"], cuts))
        names = tuple(str(n) for n in held["names"])
    if kind == "bytes":
        tok = TextTokenizer("bytes", 257)
    else:
        from tokenizers import Tokenizer  # optional dependency: tokenizers (the train extra)

        tok = TextTokenizer("bpe", key[1],
                            Tokenizer.from_str((folder / "tokenizer.json").read_text()))
    stream.setflags(write=False)
    _IMPORTED[key] = (tok, stream, names, pool_ids)
    return key


@dataclass(frozen=True)
class Corpus:
    """The data of one setting: ``tokenizer``, the training ``stream`` ``(N,)`` (an array, or
    for a shard folder a :class:`~.shards.ShardStream` reading its memory maps), the fixed
    window ``order``, ``validation`` ``(docs, max_length + 1)`` and the names of those
    documents."""

    tokenizer: TextTokenizer
    stream: np.ndarray  # (N,) int32, or a ShardStream
    train_length: int
    order: np.ndarray  # (windows,) int64
    validation: np.ndarray  # (docs, max_length + 1) int32
    validation_names: tuple

    def batch(self, step: int, batch_size: int) -> np.ndarray:
        """The windows of training step ``step``: ``(batch_size, L + 1)`` int32 token ids."""
        n = self.order.size
        picks = self.order[(step * batch_size + np.arange(batch_size)) % n]  # (B,)
        starts = picks * self.train_length  # (B,)
        return self.stream[starts[:, None] + np.arange(self.train_length + 1)]  # (B, L+1)

    def validation_windows(self, length: int) -> np.ndarray:
        """Validation windows of ``length + 1`` tokens scoring tokens ``1 … k·length`` of each
        document (``k = max_length // length``): ``(docs·k, length + 1)``."""
        docs, total = self.validation.shape
        k = (total - 1) // length
        idx = np.arange(k)[:, None] * length + np.arange(length + 1)  # (k, length+1)
        return self.validation[:, idx].reshape(docs * k, length + 1)


def document_kind(name: str) -> str:
    """``"prose"`` or ``"code"``: the kind of a document named by :func:`texts` (of a shard
    folder's document: the part of its name before the first colon, e.g. ``"text"``)."""
    return name.split(":", 1)[0]


def _alternate_kinds(documents: list) -> list:
    """``documents`` ``[(name, ids), ...]`` reordered so that the kinds alternate (prose, code,
    prose, …; each kind in its split order, the rest of the longer kind at the end): the first
    ``validation_documents`` then hold both kinds whenever the pool does."""
    by_kind = {"prose": [], "code": []}
    for doc in documents:
        by_kind.setdefault(document_kind(doc[0]), []).append(doc)
    queues = [list(v) for v in by_kind.values() if v]
    out = []
    while any(queues):
        for queue in queues:
            if queue:
                out.append(queue.pop(0))
    return out


def corpus(settings) -> Corpus:
    """The :class:`Corpus` of a :class:`~.settings.TrainSettings`; ``ValueError`` naming
    ``train_length`` if the data cannot fill a batch or the validation documents are shorter
    than ``max_length + 1`` tokens."""
    s = settings
    tok, stream, names, pool_ids = settings_data(s)
    need = s.max_length + 1
    chosen = _alternate_kinds([(n, ids) for n, ids in zip(names, pool_ids)
                               if ids.size >= need])
    if len(chosen) < s.validation_documents:
        longest = max((ids.size for ids in pool_ids), default=0)
        raise ValueError(f"train_length: validation at train_length × "
                         f"{max(s.eval_multiples)} needs {s.validation_documents} held-out "
                         f"documents of {need} tokens; only {len(chosen)} have that many "
                         f"(the longest has {longest}): lower train_length, eval_multiples or "
                         f"validation_documents")
    chosen = chosen[:s.validation_documents]
    n_windows = (stream.size - 1) // s.train_length
    if n_windows < s.batch_size:
        raise ValueError(f"train_length: the training split holds {stream.size} tokens, "
                         f"fewer than one batch of {s.batch_size} windows of {s.train_length}")
    order = rng_for(0, DATA_STUDY, s.train_length).permutation(n_windows)  # (windows,)
    validation = np.stack([ids[:need] for _, ids in chosen])  # (docs, need)
    return Corpus(tok, stream, s.train_length, order, validation,
                  tuple(n for n, _ in chosen))


__getattr__ = moved_names(__name__)  # documents() is texts() (removed in 0.5)
