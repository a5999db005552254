"""sia_theory.models.weight_cache, exercised by its own name: contents stored and read back
bit for bit, the payload checksum recomputed here with hashlib, a damaged entry rebuilt."""

import hashlib
import warnings

import numpy as np
import pytest

pytest.importorskip("safetensors")

from sia_theory.models.gguf_file import GGUFContents  # noqa: E402
from sia_theory.models.weight_cache import (  # noqa: E402
    cache_path,
    default_cache_dir,
    load_cached,
    payload_sha256,
    store_cached,
)


def test_round_trip_and_checksum(tmp_path):
    tensors = {"b": np.arange(6, dtype=np.float32).reshape(2, 3), "a": np.ones(2, np.float32)}
    contents = GGUFContents({"general.name": "tiny", "llama.block_count": 2}, tensors)
    path = cache_path(str(tmp_path), "tiny", "f" * 64)
    assert path.endswith("tiny-ffffffffffffffff.safetensors")
    store_cached(path, contents, "f" * 64)
    back = load_cached(path, "f" * 64)
    assert back.metadata == contents.metadata
    assert all(np.array_equal(back.tensors[k], v) for k, v in tensors.items())
    digest = hashlib.sha256()
    for name in ("a", "b"):
        digest.update(f"{name}|{tensors[name].dtype.str}|{tensors[name].shape}|".encode())
        digest.update(tensors[name].tobytes())
    assert payload_sha256(tensors) == digest.hexdigest()


def test_entry_of_another_source_is_dropped(tmp_path):
    path = cache_path(str(tmp_path), "tiny", "a" * 64)
    store_cached(path, GGUFContents({}, {"w": np.zeros(3, np.float32)}), "a" * 64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert load_cached(path, "b" * 64) is None
    assert load_cached(str(tmp_path / "none.safetensors"), "a" * 64) is None


def test_default_cache_dir(monkeypatch):
    monkeypatch.setenv("SIA_THEORY_CACHE", "/x/y")
    assert default_cache_dir() == "/x/y"
    monkeypatch.delenv("SIA_THEORY_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", "/c")
    assert default_cache_dir() == "/c/sia-theory"
