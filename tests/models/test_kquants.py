"""sia_theory.models.kquants, exercised by its own name: a Q4_K super-block built byte by byte
here (llama.cpp's block_q4_K: fp16 d, fp16 dmin, 12 bytes of 6-bit scales/mins, 128 bytes of
nibbles) dequantizes to d·scale·q − dmin·min."""

import numpy as np
import pytest

from sia_theory.models.kquants import BLOCK_BYTES, QK_K, dequantize_kquant


def _q4k_block(d, dmin, qs):
    """Every sub-block scale 1 and min 0 (bytes 0–3 = 1, 4–7 = 0, 8–11 = 0x01)."""
    scales = bytes([1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1])
    return (np.float16(d).tobytes() + np.float16(dmin).tobytes() + scales + bytes(qs))


def test_q4k_block_by_hand():
    """y = d·q: per 64 values, the low nibbles of 32 bytes, then their high nibbles."""
    rng = np.random.default_rng(0)
    qs = rng.integers(0, 256, size=128, dtype=np.uint8)
    raw = np.frombuffer(_q4k_block(0.5, 0.0, qs), dtype=np.uint8)
    assert raw.size == BLOCK_BYTES["Q4_K"]
    out = dequantize_kquant(raw, "Q4_K")
    assert out.shape == (QK_K,)
    expected = np.concatenate([np.concatenate([qs[32 * c:32 * c + 32] & 0xF,
                                               qs[32 * c:32 * c + 32] >> 4]) for c in range(4)])
    assert out == pytest.approx(0.5 * expected.astype(np.float32))


def test_bad_kind_and_size_named():
    with pytest.raises(ValueError, match="kind"):
        dequantize_kquant(np.zeros(144, np.uint8), "Q3_K")
    with pytest.raises(ValueError):
        dequantize_kquant(np.zeros(100, np.uint8), "Q4_K")
