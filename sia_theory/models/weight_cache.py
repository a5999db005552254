"""The float32 weight cache: dequantize a GGUF file once, then load its tensors in a fraction of
a second.

A cache entry is one ``safetensors`` file named after the model and the SHA-256 of its source
file, in a user cache directory (never inside the repository):
``$SIA_THEORY_CACHE`` if set, else ``$XDG_CACHE_HOME/sia-theory``, else
``~/.cache/sia-theory``; ``cache_dir`` overrides all of them. Its metadata records the source
SHA-256, the GGUF metadata (JSON) and a SHA-256 of the tensor payload, so a cache file that
was damaged after it was written is detected on load, reported, deleted and rebuilt.

Writes are atomic: the tensors go to a temporary file in the same directory, which is renamed
into place only when complete, so an interrupted or failed build leaves no partial entry (a
stale temporary file of a killed build is removed by a later build).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
import warnings

import numpy as np

from .gguf_file import GGUFContents

__all__ = ["default_cache_dir", "cache_path", "load_cached", "store_cached", "payload_sha256"]

_FORMAT = "sia-theory-weights-1"
_TMP_PREFIX = ".partial-"
_STALE_SECONDS = 600.0


def default_cache_dir() -> str:
    """``$SIA_THEORY_CACHE``, else ``$XDG_CACHE_HOME/sia-theory``, else ``~/.cache/sia-theory``."""
    explicit = os.environ.get("SIA_THEORY_CACHE", "").strip()
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or os.path.join(
        os.path.expanduser("~"), ".cache")
    return os.path.join(base, "sia-theory")


def cache_path(cache_dir: str, model_name: str, source_sha256: str) -> str:
    """Where the cache entry of ``model_name`` built from a source with this SHA-256 lives."""
    return os.path.join(cache_dir, f"{model_name}-{source_sha256[:16]}.safetensors")


def payload_sha256(tensors: dict) -> str:
    """SHA-256 over the tensors in name order: each name, dtype, shape and raw bytes."""
    digest = hashlib.sha256()
    for name in sorted(tensors):
        array = np.ascontiguousarray(tensors[name])
        digest.update(f"{name}|{array.dtype.str}|{array.shape}|".encode())
        digest.update(memoryview(array).cast("B"))
    return digest.hexdigest()


def load_cached(path: str, source_sha256: str) -> GGUFContents | None:
    """The cached contents at ``path``, or ``None`` if there is no entry. A damaged entry (does
    not parse, wrong format, other source, payload checksum mismatch) is reported with a
    warning, deleted, and ``None`` is returned so that the caller rebuilds it."""
    if not os.path.isfile(path):
        return None
    from safetensors import safe_open  # optional dependency: safetensors (the model extra)
    from safetensors.numpy import load_file

    try:
        with safe_open(path, framework="numpy") as fh:
            meta = fh.metadata() or {}
        tensors = load_file(path)
        problem = None
        if meta.get("format") != _FORMAT:
            problem = f"format {meta.get('format')!r}, expected {_FORMAT!r}"
        elif meta.get("source_sha256") != source_sha256:
            problem = "built from another source file (source checksum differs)"
        elif payload_sha256(tensors) != meta.get("payload_sha256"):
            problem = "the tensor checksum does not match (the file was damaged)"
        else:
            return GGUFContents(json.loads(meta["gguf_metadata"]), tensors)
    except Exception as err:  # safetensors raises its own SafetensorError, OSError, ...
        problem = f"unreadable ({type(err).__name__}: {err})"
    warnings.warn(f"the weight cache {path} is corrupt: {problem}; deleting it and rebuilding "
                  "it from the model file", RuntimeWarning, stacklevel=3)
    os.remove(path)
    return None


def _remove_stale_partials(cache_dir):
    """Remove temporary files of builds killed long ago (a build takes seconds; a younger one
    may belong to another process building the same entry right now)."""
    now = time.time()
    for name in os.listdir(cache_dir):
        path = os.path.join(cache_dir, name)
        try:
            if name.startswith(_TMP_PREFIX) and now - os.path.getmtime(path) > _STALE_SECONDS:
                os.remove(path)
        except OSError:
            pass  # removed by another process meanwhile


def store_cached(path: str, contents: GGUFContents, source_sha256: str) -> None:
    """Write ``contents`` to ``path`` atomically (temporary file, then ``os.replace``)."""
    from safetensors.numpy import save_file  # optional dependency: safetensors (the model extra)

    cache_dir = os.path.dirname(path)
    os.makedirs(cache_dir, exist_ok=True)
    _remove_stale_partials(cache_dir)
    metadata = {"format": _FORMAT, "source_sha256": source_sha256,
                "payload_sha256": payload_sha256(contents.tensors),
                "gguf_metadata": json.dumps(contents.metadata)}
    fd, tmp = tempfile.mkstemp(prefix=_TMP_PREFIX, suffix=".safetensors", dir=cache_dir)
    os.close(fd)
    try:
        save_file(contents.tensors, tmp, metadata=metadata)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
