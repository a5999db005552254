"""sia_theory.attention.cache, exercised by its own name: the decoding cache grows, copies,
truncates and counts bytes as stated."""

import numpy as np
import pytest

from sia_theory.attention.cache import DecodingCache


def test_kv_cache_appends_along_positions():
    cache = DecodingCache(2, "kv", capacity=2)
    k1, v1 = np.ones((1, 2, 3, 4)), np.zeros((1, 2, 3, 4))
    for layer in range(2):
        cache.append_kv(layer, k1, v1)
        cache.append_kv(layer, 2 * k1, v1)
    assert cache.length == 6
    assert cache.keys(0).shape == (1, 2, 6, 4)
    assert np.array_equal(cache.keys(1)[:, :, 3:], 2 * k1)
    assert cache.nbytes == 2 * 2 * 6 * 8 * 8  # layers × (keys, values) × 1·2·6·4 float64
    assert cache.allocated_nbytes >= cache.nbytes


def test_views_are_read_only_and_appending_still_works():
    cache = DecodingCache(1, "kv")
    cache.append_kv(0, np.ones((1, 1, 2, 2)), np.ones((1, 1, 2, 2)))
    for view in (cache.keys(0), cache.values(0)):
        with pytest.raises(ValueError, match="read-only"):
            view[0, 0, 0, 0] = 5.0
    cache.append_kv(0, np.full((1, 1, 1, 2), 2.0), np.full((1, 1, 1, 2), 3.0))
    assert cache.keys(0).shape == (1, 1, 3, 2) and cache.keys(0)[0, 0, 2, 0] == 2.0
    assert cache.values(0)[0, 0, :, 0].tolist() == [1.0, 1.0, 3.0]
    initial = DecodingCache(1, "initial")
    initial.append_initial(np.arange(6.0).reshape(1, 3, 2))
    with pytest.raises(ValueError, match="read-only"):
        initial.initial()[0, 0, 0] = 1.0


def test_copy_is_independent_and_truncate_forgets():
    cache = DecodingCache(1, "initial")
    cache.append_initial(np.arange(6.0).reshape(1, 3, 2))
    twin = cache.copy()
    cache.truncate(1)
    assert cache.length == 1 and twin.length == 3
    assert np.array_equal(twin.initial()[0, 2], [4.0, 5.0])


def test_bad_input_named():
    with pytest.raises(ValueError, match="mode"):
        DecodingCache(1, "paged")
    with pytest.raises(ValueError, match="n_layers"):
        DecodingCache(0, "kv")
    with pytest.raises(ValueError, match="keys"):
        DecodingCache(1, "kv").append_kv(0, np.full((1, 1, 1, 2), np.nan), np.zeros((1, 1, 1, 2)))
