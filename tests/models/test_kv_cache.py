"""sia_theory.models.kv_cache, exercised by its own name: a model cache forks into independent
copies and truncates to a prefix."""

import numpy as np
import pytest

from sia_theory.attention.cache import DecodingCache
from sia_theory.models.kv_cache import ModelCache


def _cache(length=4):
    kv = DecodingCache(1, "kv")
    kv.append_kv(0, np.ones((1, 1, length, 2)), np.zeros((1, 1, length, 2)))
    cache = ModelCache(kv, None, None, np.float32)
    cache.last_logits = np.arange(3.0)
    return cache


def test_fork_truncate_and_bytes():
    cache = _cache()
    twin = cache.fork()
    assert cache.nbytes == 2 * 4 * 2 * 8  # keys and values, 4 positions × 2 float64
    cache.truncate(2)
    assert (cache.length, twin.length) == (2, 4)
    assert cache.last_logits is None and np.array_equal(twin.last_logits, [0.0, 1.0, 2.0])
    twin.truncate(4)  # nothing removed: the last logits stay
    assert twin.last_logits is not None
    with pytest.raises(ValueError, match="length"):
        twin.truncate(5)
