"""sia_theory.attention.partials, exercised by its own name: chunk results written out here with
a plain numpy softmax (not the library's attention) merge into the softmax over all keys."""

import numpy as np
import pytest

from sia_theory.attention.partials import merge_partials


def _chunk(scores, values):
    """``(out, lse)`` of one chunk: ``softmax(scores) @ values`` and ``log Σ e^scores`` per row;
    a row with every score ``−inf`` sees no key (``out = 0``, ``lse = −inf``)."""
    top = scores.max(axis=-1, keepdims=True)  # (B, H, Tq, 1)
    safe = np.where(np.isfinite(top), top, 0.0)
    w = np.exp(scores - safe)  # (B, H, Tq, Tk)
    total = w.sum(axis=-1, keepdims=True)
    out = np.divide(w @ values, total, out=np.zeros(scores.shape[:3] + values.shape[-1:]),
                    where=total > 0)
    with np.errstate(divide="ignore"):
        return out, (safe + np.log(total))[..., 0]


def test_chunks_merge_into_the_softmax_over_every_key():
    rng = np.random.default_rng(7)
    scores = 3 * rng.standard_normal((2, 3, 5, 11))  # (B, H, Tq, Tk)
    values = rng.standard_normal((2, 3, 11, 4))  # (B, H, Tk, D)
    scores[0, 0, 1, :6] = -np.inf  # one query sees no key of the first chunk
    want_out, want_lse = _chunk(scores, values)
    parts = [_chunk(scores[..., c], values[..., c, :]) for c in (slice(0, 6), slice(6, 9),
                                                                  slice(9, 11))]
    assert parts[0][1][0, 0, 1] == -np.inf
    out, lse = merge_partials(parts)
    np.testing.assert_allclose(out, want_out, rtol=0, atol=1e-13)
    np.testing.assert_allclose(lse, want_lse, rtol=0, atol=1e-13)
    single_out, single_lse = merge_partials([parts[1]])
    np.testing.assert_allclose(single_out, parts[1][0], rtol=0, atol=1e-15)
    np.testing.assert_array_equal(single_lse, parts[1][1])


@pytest.mark.parametrize("parts, match", [
    ([], "at least one"),
    ([(1, 2)], r"parts\[0\]"),
    ([(np.zeros((1, 1, 2, 3)), np.zeros((1, 1, 2)).astype(int))], "float arrays"),
    ([(np.full((1, 1, 2, 3), np.nan), np.zeros((1, 1, 2)))], "finite"),
    ([(np.zeros((1, 1, 2, 3)), np.full((1, 1, 2), np.inf))], r"\+inf"),
    ([(np.zeros((1, 1, 2, 3)), np.full((1, 1, 2), -np.inf))], "fully masked"),
])
def test_malformed_parts_are_refused(parts, match):
    with pytest.raises(ValueError, match=match):
        merge_partials(parts)
