"""Sharded token corpora from any text: a folder of ``uint16`` token shards, its BPE and a
manifest, read window by window through memory maps (the corpus is never loaded whole).

Input (:func:`text_documents`): a ``.txt`` file (one document), a ``.jsonl`` file (one
document per line: a JSON object whose ``text_field``, default ``"text"``, is a string) or a
Parquet file with a string column ``text_field`` (FineWeb's layout; read in row-group batches,
never whole), or a folder holding such files (searched recursively, in the sorted order of
their paths). A document is named ``text:<path>`` (``.txt``), ``text:<path>:<line>``
(``.jsonl``, lines from 1) or ``text:<path>:<row>`` (Parquet, rows from 0), ``<path>`` relative
to the folder; its kind (:func:`~.data.document_kind`) is the part before the first colon, so a
builder that declares kinds (:mod:`.registry_corpus`: ``prose:`` and ``code:``) gets the counts
and the validation per kind.

Split, as :func:`.data.split`: documents ordered by the SHA-256 of their name; the first
:data:`~.data.VALIDATION_POOL` of at least :data:`~.data.VALIDATION_MIN_CHARS` characters in
that order are held out (whole, in that order, in ``validation.bin``), every other document is
training data, in the order of the input, each followed by the separator token.

Tokenizer: a byte-level BPE (:func:`.data.train_bpe`, deterministic) trained on the training
documents taken in the split's order until they hold :data:`TOKENIZER_SAMPLE_CHARS` characters
(all of them for a smaller corpus): a bounded sample, pseudo-random by the hash, the same on
every build.

Folder (:func:`build_shards`): ``train-00000.bin``, ``train-00001.bin``, … (the training
stream, :data:`SHARD_TOKENS` tokens each, the last shorter; ``uint16`` for a vocabulary of at
most 65536), ``validation.bin``, ``tokenizer.json`` and ``manifest.json``: every source file
with its size and SHA-256, the tokenizer (kind, vocabulary, SHA-256, its sample), the token
counts (total, training, validation, per kind), every shard with its SHA-256, the held-out
documents and the package version. Every file is written to a temporary name and renamed; the
manifest last, after the old one was removed, so a crash never leaves a folder that looks
finished. Building into a folder whose manifest has the same recipe (the sources' checksums,
the vocabulary, the field) and whose files match their checksums reuses it.

Training (:func:`shard_data`, used by :func:`.data.corpus` when ``TrainSettings.corpus`` is
set): the windows of ``L + 1`` tokens at stride ``L`` of the stream, in the same fixed
permutation as the in-memory corpus (``rng_for(0, DATA_STUDY, L)``), read from the memory maps
(:class:`ShardStream`).
"""

from __future__ import annotations

import hashlib
import heapq
import json
import os
from array import array
from functools import lru_cache
from pathlib import Path

import numpy as np

from .._infra.fileset import file_sha256
from .._infra.io import atomic_path, write_text
from .data import (
    SEPARATOR,
    VALIDATION_MIN_CHARS,
    VALIDATION_POOL,
    TextTokenizer,
    document_kind,
    train_bpe,
)

__all__ = ["FORMAT", "MANIFEST", "TOKENIZER_FILE", "VALIDATION_FILE", "SHARD_TOKENS",
           "TOKENIZER_SAMPLE_CHARS", "TEXT_SUFFIXES", "text_documents", "source_files",
           "build_shards", "build_from_documents", "read_manifest", "verify_shards",
           "manifest_checksum", "ShardStream", "shard_data", "is_shard_folder"]

FORMAT = 1
"""Format of a shard folder's manifest (a folder of another format is refused)."""
MANIFEST = "manifest.json"
"""The manifest's file name in a shard folder (written last)."""
TOKENIZER_FILE = "tokenizer.json"
"""The BPE's file name in a shard folder (``tokenizers`` JSON)."""
VALIDATION_FILE = "validation.bin"
"""The held-out documents' tokens, one after the other (offsets in the manifest)."""
SHARD_TOKENS = 2**24
"""Tokens per training shard (the last one holds the rest): 32 MiB as ``uint16``."""
TOKENIZER_SAMPLE_CHARS = 2**25
"""The BPE is trained on the training documents taken in the split's order until they hold
this many characters (about 33.5 M; all of them for a smaller corpus)."""
TEXT_SUFFIXES = (".txt", ".jsonl", ".parquet")
"""File types :func:`text_documents` reads (others in a folder are ignored)."""
BATCH_CHARS = 2**22
"""Characters tokenized per batch (the BPE encodes a batch in parallel)."""
PARQUET_BATCH_ROWS = 1024
"""Rows per Parquet read (within one row group at a time)."""


def source_files(source) -> tuple[Path, list]:
    """``(root, files)``: the text files of ``source`` (a file, or a folder searched recursively
    for :data:`TEXT_SUFFIXES`, sorted by their path relative to it) and the folder their names
    are relative to.

    Parameters
    ----------
    source : str or os.PathLike
        A ``.txt``, ``.jsonl`` or ``.parquet`` file, or a folder holding some.

    Returns
    -------
    tuple
        ``(root, [path, ...])``.

    Raises
    ------
    ValueError
        Naming ``source`` if it does not exist, is a file of another type, or is a folder
        without such files.
    """
    path = Path(os.fspath(source))
    if path.is_file():
        if path.suffix.lower() not in TEXT_SUFFIXES:
            raise ValueError(f"source must be a {', '.join(TEXT_SUFFIXES)} file or a folder of "
                             f"them, got {str(path)!r}")
        return path.parent, [path]
    if not path.is_dir():
        raise ValueError(f"source must be an existing file or folder, got {str(path)!r}")
    files = sorted((p for p in path.rglob("*")
                    if p.is_file() and p.suffix.lower() in TEXT_SUFFIXES
                    and not any(part.startswith(".") for part in p.relative_to(path).parts)),
                   key=lambda p: p.relative_to(path).as_posix())
    if not files:
        raise ValueError(f"source: folder {str(path)!r} holds no {', '.join(TEXT_SUFFIXES)} "
                         f"files")
    return path, files


def _check_text_field(text_field) -> str:
    if not isinstance(text_field, str) or not text_field:
        raise ValueError(f"text_field must be a non-empty string (the field or column holding "
                         f"the text), got {text_field!r}")
    return text_field


def _parquet_column(path: Path, text_field: str):
    """The ``pyarrow.parquet.ParquetFile`` of ``path``, checked to hold a string column
    ``text_field`` (``ValueError`` naming it otherwise)."""
    import pyarrow as pa  # optional dependency: pyarrow (the train extra)
    import pyarrow.parquet as pq

    try:
        handle = pq.ParquetFile(path)
    except (OSError, pa.ArrowException) as err:
        raise ValueError(f"source: {str(path)!r} is not a readable Parquet file: {err}") from None
    schema = handle.schema_arrow
    if text_field not in schema.names:
        raise ValueError(f"text_field: {str(path)!r} has no column {text_field!r} (columns: "
                         f"{', '.join(schema.names)})")
    kind = schema.field(text_field).type
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
        raise ValueError(f"text_field: column {text_field!r} of {str(path)!r} holds {kind}, "
                         f"not strings")
    return handle


def text_documents(source, text_field: str = "text"):
    """``(name, text)`` of every non-empty document of ``source``, in its order (module
    docstring), streamed.

    Parameters
    ----------
    source : str or os.PathLike
        See :func:`source_files`.
    text_field : str
        The JSON field of a ``.jsonl`` line, the column of a Parquet file.

    Yields
    ------
    tuple
        ``(name, text)``.

    Raises
    ------
    ValueError
        Naming ``source`` (see :func:`source_files`; a line that is not a JSON object) or
        ``text_field`` (a line or a Parquet file without it, or not a string there).
    """
    text_field = _check_text_field(text_field)
    root, files = source_files(source)
    for path in files:
        rel = path.relative_to(root).as_posix()
        suffix = path.suffix.lower()
        if suffix == ".txt":
            text = path.read_text(encoding="utf-8", errors="replace")
            if text.strip():
                yield f"text:{rel}", text
        elif suffix == ".jsonl":
            with open(path, encoding="utf-8", errors="replace") as f:
                for line_no, line in enumerate(f, start=1):
                    if not line.strip():
                        continue
                    try:
                        record = json.loads(line)
                    except ValueError as err:
                        raise ValueError(f"source: {rel}:{line_no} is not JSON: {err}") from None
                    if not isinstance(record, dict):
                        raise ValueError(f"source: {rel}:{line_no} is not a JSON object")
                    if text_field not in record:
                        raise ValueError(f"text_field: {rel}:{line_no} has no field "
                                         f"{text_field!r} (fields: {', '.join(record)})")
                    text = record[text_field]
                    if not isinstance(text, str):
                        raise ValueError(f"text_field: {rel}:{line_no}: {text_field!r} holds "
                                         f"{type(text).__name__}, not a string")
                    if text.strip():
                        yield f"text:{rel}:{line_no}", text
        else:
            handle = _parquet_column(path, text_field)
            row = 0
            for group in range(handle.num_row_groups):
                for batch in handle.iter_batches(batch_size=PARQUET_BATCH_ROWS,
                                                 row_groups=[group], columns=[text_field]):
                    for text in batch.column(0).to_pylist():
                        if text is not None and text.strip():
                            yield f"text:{rel}:{row}", text
                        row += 1


def _describe_sources(root: Path, files: list) -> list:
    return [{"path": p.relative_to(root).as_posix(), "bytes": p.stat().st_size,
             "sha256": file_sha256(p)} for p in files]


def build_shards(source, out, *, vocab_size: int = 2048, text_field: str = "text",
                 progress=None) -> dict:
    """Tokenize ``source`` into the shard folder ``out`` (module docstring); reuse ``out`` if
    it holds this build already.

    Parameters
    ----------
    source : str or os.PathLike
        Text files (see :func:`source_files`).
    out : str or os.PathLike
        The shard folder (created if missing).
    vocab_size : int
        BPE vocabulary, ``258 … 65536``.
    text_field : str
        The field of ``.jsonl`` lines and the column of Parquet files holding the text.
    progress : callable, optional
        ``progress(message)``, called at each stage.

    Returns
    -------
    dict
        The manifest.

    Raises
    ------
    ValueError
        Naming ``source``, ``text_field``, ``vocab_size`` or ``out`` for bad input, before
        anything is written (every document is read once before the first write).
    """
    text_field = _check_text_field(text_field)
    root, files = source_files(source)
    sources = _describe_sources(root, files)
    recipe = {"sources": sources, "text_field": text_field}
    return build_from_documents(lambda: text_documents(source, text_field), out,
                                vocab_size=vocab_size, recipe=recipe, progress=progress)


def _check_vocab(vocab_size) -> int:
    from .._infra.validate import check_int

    return check_int("vocab_size", vocab_size, lo=258, hi=2**16)


def _check_out(out) -> Path:
    path = Path(os.fspath(out))
    if path.exists() and not path.is_dir():
        raise ValueError(f"out must be a folder (new or a shard folder), got the file "
                         f"{str(path)!r}")
    return path


def _survey(documents):
    """One pass over ``documents``: ``(count, hashes, chars, pool)``; ``hashes`` the first 8
    bytes of each name's SHA-256 as ``uint64`` (the split's order), ``chars`` each length,
    ``pool`` the indices of the held-out documents in the split's order."""
    # compact columns (8 bytes a document), not lists of Python ints: millions of documents
    hashes, chars, heap = array("Q"), array("q"), []  # heap: (-digest, -index) of the pool
    count = 0
    for index, (name, text) in enumerate(documents):
        digest = hashlib.sha256(name.encode()).digest()
        hashes.append(int.from_bytes(digest[:8], "big"))
        chars.append(len(text))
        if len(text) >= VALIDATION_MIN_CHARS:
            item = (-int.from_bytes(digest, "big"), -index)
            if len(heap) < VALIDATION_POOL:
                heapq.heappush(heap, item)
            elif item > heap[0]:
                heapq.heapreplace(heap, item)
        count = index + 1
    pool = [-i for _, i in sorted(heap, reverse=True)]  # ascending digest
    return (count, np.frombuffer(hashes, np.uint64), np.frombuffer(chars, np.int64), pool)


def _sample(hashes, chars, pool, cap: int) -> set:
    """Indices of the tokenizer's sample: training documents in the split's order until they
    hold ``cap`` characters (the document that crosses it included)."""
    train = np.ones(hashes.size, bool)
    train[pool] = False
    order = np.flatnonzero(train)
    order = order[np.lexsort((order, hashes[order]))]  # by hash, ties by position
    total = np.cumsum(chars[order])
    keep = int(np.searchsorted(total, cap, side="left")) + 1
    return set(order[:keep].tolist())


class _ShardWriter:
    """Appends token ids to ``train-XXXXX.bin`` shards of :data:`SHARD_TOKENS` each."""

    def __init__(self, folder: Path, dtype, shard_tokens: int):
        self.folder, self.dtype, self.size = folder, dtype, shard_tokens
        self.buffer = np.empty(shard_tokens, dtype)
        self.fill = 0
        self.shards = []

    def append(self, ids: np.ndarray) -> None:
        while ids.size:
            take = min(ids.size, self.size - self.fill)
            self.buffer[self.fill:self.fill + take] = ids[:take]
            self.fill += take
            ids = ids[take:]
            if self.fill == self.size:
                self.flush()

    def flush(self) -> None:
        if not self.fill:
            return
        name = f"train-{len(self.shards):05d}.bin"
        data = self.buffer[:self.fill].tobytes()
        with atomic_path(self.folder / name) as tmp:
            tmp.write_bytes(data)
        self.shards.append({"file": name, "tokens": self.fill,
                            "sha256": hashlib.sha256(data).hexdigest()})
        self.fill = 0


def build_from_documents(documents, out, *, vocab_size: int = 2048, recipe: dict,
                         extra: dict | None = None, group_of=None, progress=None,
                         shard_tokens: int = SHARD_TOKENS,
                         sample_chars: int = TOKENIZER_SAMPLE_CHARS) -> dict:
    """The builder behind :func:`build_shards`: ``documents()`` returns a fresh iterator of
    ``(name, text)`` (called three times: survey, tokenizer sample, tokens), ``recipe`` what
    pins the input (JSON; with the vocabulary and the sizes, the key of the reuse check).

    Parameters
    ----------
    documents : callable
        ``documents() -> iterator of (name, text)``, the same documents every call.
    out : str or os.PathLike
        The shard folder.
    vocab_size : int
        BPE vocabulary, ``258 … 65536``.
    recipe : dict
        JSON-able description of the input (the sources' checksums).
    extra : dict or callable, optional
        Written into the manifest as ``extra`` (e.g. the registry corpus's package table); a
        callable is called with the manifest and returns it.
    group_of : callable, optional
        ``group_of(name) -> str``: token counts per group and kind are written into the
        manifest's ``tokens.by_group``.
    progress : callable, optional
        ``progress(message)`` at each stage.
    shard_tokens : int
        Tokens per training shard.
    sample_chars : int
        Characters of the tokenizer's sample.

    Returns
    -------
    dict
        The manifest.

    Raises
    ------
    ValueError
        Naming ``vocab_size``, ``out`` or ``source`` (no document), before anything is written.
    """
    say = progress or (lambda message: None)
    vocab_size = _check_vocab(vocab_size)
    out = _check_out(out)
    dtype = np.dtype(np.uint16 if vocab_size <= 2**16 else np.uint32)
    full_recipe = {"format": FORMAT, "vocab_size": vocab_size, "shard_tokens": shard_tokens,
                   "sample_chars": sample_chars, "dtype": dtype.name, **recipe}
    held = _reusable(out, full_recipe)
    if held is not None:
        say(f"reusing {out} (same recipe, every file matches its checksum)")
        return held

    say("surveying the documents")
    count, hashes, chars, pool = _survey(documents())
    if count == 0:
        raise ValueError("source holds no document with text")
    sample = _sample(hashes, chars, pool, sample_chars)
    say(f"{count} documents, {int(chars.sum())} characters; training the BPE on "
        f"{len(sample)} documents")
    texts = (text for i, (_, text) in enumerate(documents()) if i in sample)
    backend = train_bpe(texts, vocab_size)
    tok = TextTokenizer("bpe", vocab_size, backend)
    tokenizer_json = tok.to_json()

    out.mkdir(parents=True, exist_ok=True)
    (out / MANIFEST).unlink(missing_ok=True)  # the folder is not finished from here on
    write_text(out / TOKENIZER_FILE, tokenizer_json)
    writer = _ShardWriter(out, dtype, shard_tokens)
    pool_rank = {index: rank for rank, index in enumerate(pool)}
    pool_docs = [None] * len(pool)
    counts: dict = {}
    groups: dict = {}

    def count_tokens(name, split, n):
        kind = document_kind(name)
        entry = counts.setdefault(kind, {"documents": 0, "train": 0, "validation": 0})
        entry["documents"] += 1
        entry[split] += n
        if group_of is not None:
            per = groups.setdefault(group_of(name), {})
            per[kind] = per.get(kind, 0) + n

    def encode(batch):
        for (index, name), ids in zip(batch[0], tok.encode_many(batch[1])):
            if index in pool_rank:
                pool_docs[pool_rank[index]] = (name, ids)
                count_tokens(name, "validation", ids.size)
            else:
                writer.append(np.append(ids, np.int32(tok.separator)).astype(dtype))
                count_tokens(name, "train", ids.size + 1)

    say("tokenizing")
    batch, size = ([], []), 0
    for index, (name, text) in enumerate(documents()):
        batch[0].append((index, name))
        batch[1].append(text)
        size += len(text)
        if size >= BATCH_CHARS:
            encode(batch)
            batch, size = ([], []), 0
    encode(batch)
    writer.flush()
    for stale in out.glob("train-*.bin"):
        if stale.name not in {s["file"] for s in writer.shards}:
            stale.unlink()

    validation_ids = (np.concatenate([ids for _, ids in pool_docs]).astype(dtype)
                      if pool_docs else np.empty(0, dtype))
    data = validation_ids.tobytes()
    with atomic_path(out / VALIDATION_FILE) as tmp:
        tmp.write_bytes(data)
    offsets = np.concatenate([[0], np.cumsum([ids.size for _, ids in pool_docs])]).tolist()
    train_tokens = sum(s["tokens"] for s in writer.shards)
    manifest = {
        "format": FORMAT,
        "created_by": _versions(),
        "recipe": full_recipe,
        "tokenizer": {"kind": "bpe", "vocab_size": vocab_size, "file": TOKENIZER_FILE,
                      "separator": SEPARATOR, "separator_id": tok.separator,
                      "sha256": hashlib.sha256(tokenizer_json.encode()).hexdigest(),
                      "sample_documents": len(sample),
                      "sample_chars": int(chars[sorted(sample)].sum())},
        "split": {"order": "sha256 of the document name", "pool": VALIDATION_POOL,
                  "min_chars": VALIDATION_MIN_CHARS},
        "documents": {"total": count, "train": count - len(pool), "validation": len(pool)},
        "tokens": {"total": train_tokens + len(validation_ids), "train": train_tokens,
                   "validation": len(validation_ids),
                   "by_kind": {k: counts[k] for k in sorted(counts)}},
        "dtype": dtype.name,
        "train_shards": writer.shards,
        "validation": {"file": VALIDATION_FILE, "tokens": len(validation_ids),
                       "sha256": hashlib.sha256(data).hexdigest(),
                       "documents": [{"name": name, "offset": offsets[i],
                                      "tokens": ids.size}
                                     for i, (name, ids) in enumerate(pool_docs)]},
    }
    if group_of is not None:
        manifest["tokens"]["by_group"] = {g: {k: v for k, v in sorted(groups[g].items())}
                                          for g in sorted(groups)}
    if extra is not None:
        manifest["extra"] = extra(manifest) if callable(extra) else extra
    write_text(out / MANIFEST, json.dumps(manifest, indent=1) + "\n")
    say(f"wrote {out}: {manifest['tokens']['total']} tokens in {len(writer.shards)} shards")
    return manifest


def _versions() -> dict:
    """The versions of the package and of ``tokenizers`` (the manifest's ``created_by``)."""
    import tokenizers

    from .. import __version__

    return {"sia-theory": __version__, "tokenizers": tokenizers.__version__}


def _reusable(out: Path, recipe: dict) -> dict | None:
    """The manifest of ``out`` if it was built from ``recipe`` and every file matches."""
    try:
        manifest = read_manifest(out)
        verify_shards(out, manifest)
    except ValueError:
        return None
    return manifest if manifest.get("recipe") == recipe else None


def read_manifest(folder, name: str = "corpus") -> dict:
    """The manifest of the shard folder ``folder``, checked: its format, and every file it
    lists present with the size its token count gives, the tokenizer's checksum (the shards'
    checksums: :func:`verify_shards`).

    Parameters
    ----------
    folder : str or os.PathLike
        A shard folder of :func:`build_shards`.
    name : str
        The parameter named in the error message.

    Returns
    -------
    dict

    Raises
    ------
    ValueError
        Naming ``name`` if the folder has no valid manifest or a file is missing or of the
        wrong size (a build that did not finish).
    """
    path = Path(os.fspath(folder))
    where = f"{name}: {str(path)!r}"
    try:
        manifest = json.loads((path / MANIFEST).read_text())
    except FileNotFoundError:
        raise ValueError(f"{where} is not a shard folder (no {MANIFEST}; build one with "
                         f"'sia-theory corpus build')") from None
    except (OSError, ValueError) as err:
        raise ValueError(f"{where} has an unreadable {MANIFEST}: {err}") from None
    try:
        if manifest["format"] != FORMAT:
            raise ValueError(f"{where} is a shard folder of format {manifest['format']!r}, "
                             f"not {FORMAT}; build it again")
        itemsize = np.dtype(manifest["dtype"]).itemsize
        files = [(s["file"], s["tokens"]) for s in manifest["train_shards"]]
        files.append((manifest["validation"]["file"], manifest["validation"]["tokens"]))
        tok = manifest["tokenizer"]
        vocab = int(tok["vocab_size"])
        tok_sha = tok["sha256"]
    except (KeyError, TypeError) as err:
        raise ValueError(f"{where} has an incomplete {MANIFEST} (missing {err})") from None
    for file, tokens in files:
        try:
            size = (path / file).stat().st_size
        except OSError:
            raise ValueError(f"{where}: {file} is missing; build the folder again") from None
        if size != tokens * itemsize:
            raise ValueError(f"{where}: {file} holds {size} bytes, not {tokens * itemsize}; "
                             f"build the folder again")
    try:
        held = hashlib.sha256((path / TOKENIZER_FILE).read_bytes()).hexdigest()
    except OSError:
        raise ValueError(f"{where}: {TOKENIZER_FILE} is missing; build the folder "
                         f"again") from None
    if held != tok_sha or not 258 <= vocab <= 2**16:
        raise ValueError(f"{where}: {TOKENIZER_FILE} does not match the manifest; build the "
                         f"folder again")
    return manifest


def verify_shards(folder, manifest: dict | None = None, name: str = "corpus") -> dict:
    """:func:`read_manifest`, and the SHA-256 of every shard checked against it (reads the
    whole folder once); ``ValueError`` naming ``name`` on a mismatch. Returns the manifest."""
    path = Path(os.fspath(folder))
    manifest = read_manifest(path, name) if manifest is None else manifest
    entries = [*manifest["train_shards"], manifest["validation"]]
    for entry in entries:
        if file_sha256(path / entry["file"]) != entry["sha256"]:
            raise ValueError(f"{name}: {str(path)!r}: {entry['file']} does not match its "
                             f"checksum; build the folder again")
    return manifest


def manifest_checksum(manifest: dict) -> str:
    """SHA-256 of the manifest's content, without ``created_by`` (the versions of the package
    and of ``tokenizers``): what
    pins a corpus in a store's key (the same data from another version, the same checksum)."""
    data = {k: v for k, v in manifest.items() if k != "created_by"}
    return hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":"))
                          .encode()).hexdigest()


def is_shard_folder(path) -> bool:
    """Whether ``path`` is a folder holding a shard manifest (valid or not)."""
    path = Path(os.fspath(path))
    return path.is_dir() and (path / MANIFEST).is_file()


class ShardStream:
    """The training stream of a shard folder, as one read-only array of ``size`` tokens:
    ``stream[idx]`` for an integer array or a slice gives ``int32`` ids, read from the memory
    maps of the shards (a window that crosses a shard boundary included)."""

    def __init__(self, folder, manifest: dict):
        folder = Path(os.fspath(folder))
        dtype = np.dtype(manifest["dtype"])
        self.maps = [np.memmap(folder / s["file"], dtype=dtype, mode="r")
                     for s in manifest["train_shards"]]
        self.shard_tokens = int(manifest["recipe"]["shard_tokens"])
        self.size = sum(m.size for m in self.maps)
        self.shape = (self.size,)
        self.ndim = 1
        self.dtype = np.dtype(np.int32)

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, index):
        if isinstance(index, slice):
            return self[np.arange(self.size)[index]]
        idx = np.asarray(index)
        if idx.dtype.kind not in "iu":
            raise IndexError("a ShardStream is indexed by integers or a slice")
        if idx.ndim == 0:
            return self[idx[None]][0]
        idx = np.where(idx < 0, idx + self.size, idx)
        if idx.size and (idx.min() < 0 or idx.max() >= self.size):
            raise IndexError(f"index out of range for a stream of {self.size} tokens")
        shard, offset = np.divmod(idx, self.shard_tokens)
        out = np.empty(idx.shape, np.int32)
        for k in np.unique(shard):
            where = shard == k
            out[where] = self.maps[int(k)][offset[where]]
        return out


@lru_cache(maxsize=4)
def _load(folder: str, checksum: str):
    from tokenizers import Tokenizer  # optional dependency: tokenizers (the train extra)

    path = Path(folder)
    manifest = read_manifest(path)
    if manifest_checksum(manifest) != checksum:
        raise ValueError(f"corpus: {folder!r} changed since these settings were made; make "
                         f"them again")
    backend = Tokenizer.from_str((path / TOKENIZER_FILE).read_text())
    tok = TextTokenizer("bpe", int(manifest["tokenizer"]["vocab_size"]), backend)
    dtype = np.dtype(manifest["dtype"])
    held = np.fromfile(path / VALIDATION_FILE, dtype=dtype).astype(np.int32)
    docs = manifest["validation"]["documents"]
    pool_ids = []
    for d in docs:
        ids = held[d["offset"]:d["offset"] + d["tokens"]].copy()
        ids.setflags(write=False)
        pool_ids.append(ids)
    return (tok, ShardStream(path, manifest), tuple(d["name"] for d in docs), tuple(pool_ids))


def shard_data(folder, checksum: str):
    """``(tokenizer, stream, validation pool names, pool ids)`` of a shard folder, as
    :func:`.data.tokenized` gives them for the built-in corpus (``stream`` a
    :class:`ShardStream`); ``checksum`` (:func:`manifest_checksum`) must be the folder's
    (``ValueError`` naming ``corpus`` otherwise)."""
    return _load(str(Path(os.fspath(folder)).resolve()), checksum)
