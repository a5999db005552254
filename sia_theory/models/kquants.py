"""Dequantizing llama.cpp's K-quants (``Q4_K``, ``Q5_K``, ``Q6_K``) to float32, in numpy.

Written from llama.cpp (ggml-org/llama.cpp at commit
``01243c587feceaa5d6a6c2305535ef2f549c48b8``): the block structs of ``ggml/src/ggml-common.h``
and the reference dequantizers ``dequantize_row_q4_K``, ``dequantize_row_q5_K`` and
``dequantize_row_q6_K`` (with ``get_scale_min_k4``) of ``ggml/src/ggml-quants.c``. A super-block
holds ``QK_K = 256`` weights; fp16 fields are little-endian.

* ``block_q4_K`` (144 bytes): ``d``, ``dmin`` (fp16), ``scales[12]``, ``qs[128]``. The 12 bytes
  pack 8 six-bit scales ``sc`` and 8 six-bit mins ``m`` (``get_scale_min_k4``: for ``j < 4``,
  ``sc = s[j] & 63``, ``m = s[j+4] & 63``; otherwise ``sc = (s[j+4] & 15) | (s[j-4] >> 6) << 4``,
  ``m = (s[j+4] >> 4) | (s[j] >> 6) << 4``). Chunk ``c`` of 32 bytes of ``qs`` holds sub-block
  ``2c`` in its low nibbles and ``2c+1`` in its high nibbles; weight ``= d·sc·q − dmin·m``.
* ``block_q5_K`` (176 bytes): ``d``, ``dmin``, ``scales[12]`` as above, ``qh[32]``, ``qs[128]``;
  the fifth bit of weight ``l`` of sub-block ``s`` is bit ``s`` of ``qh[l]`` (llama.cpp's masks
  ``u1 = 1 << 2c``, ``u2 = 2 << 2c``); weight ``= d·sc·(q + 16·bit) − dmin·m``.
* ``block_q6_K`` (210 bytes): ``ql[128]``, ``qh[64]``, ``scales[16]`` (int8), ``d`` (fp16). Half
  ``h`` (128 weights) uses ``ql[64h:64h+64]`` and ``qh[32h:32h+32]``; its quarter ``k`` at
  position ``l < 32`` takes the low (``k`` = 0, 1) or high (``k`` = 2, 3) nibble of
  ``ql[64h + 32(k mod 2) + l]`` and bits ``2k, 2k+1`` of ``qh[32h + l]`` as its top two bits;
  weight ``= d·scales[i // 16]·(q − 32)`` for the weight's index ``i`` in the block.

The products are taken in float32 in llama.cpp's order (``(d·sc)·q − dmin·m``), so the values
equal the C reference's exactly.
"""

from __future__ import annotations

import numpy as np

__all__ = ["QK_K", "BLOCK_BYTES", "KQUANT_TYPES", "dequantize_kquant"]

QK_K = 256
"""Weights per K-quant super-block."""
BLOCK_BYTES = {"Q4_K": 144, "Q5_K": 176, "Q6_K": 210}
"""Bytes per super-block of each K-quant type (``sizeof(block_qX_K)``)."""
KQUANT_TYPES = tuple(BLOCK_BYTES)
"""The K-quant types :func:`dequantize_kquant` reads."""


def _fp16(blocks: np.ndarray, start: int) -> np.ndarray:
    """The little-endian fp16 at byte ``start`` of each block, as float32 ``(n, 1)``."""
    return np.ascontiguousarray(blocks[:, start:start + 2]).view("<f2").astype(np.float32)


def _scales_mins(packed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The 8 six-bit scales and mins ``(n, 8)`` of ``scales[12]`` (``get_scale_min_k4``)."""
    low, high = packed[:, 0:4], packed[:, 8:12]  # s[j], s[j + 4] for j >= 4
    mid = packed[:, 4:8]
    sc = np.concatenate([low & 63, (high & 0x0F) | ((low >> 6) << 4)], axis=1)
    m = np.concatenate([mid & 63, (high >> 4) | ((mid >> 6) << 4)], axis=1)
    return sc.astype(np.float32), m.astype(np.float32)


def _nibbles(qs: np.ndarray) -> np.ndarray:
    """``qs (n, 128)`` as 8 sub-blocks ``(n, 8, 32)``: chunk ``c``'s low nibbles, then its high."""
    chunks = qs.reshape(-1, 4, 1, 32)
    return np.concatenate([chunks & 0x0F, chunks >> 4], axis=2).reshape(-1, 8, 32)


def _q4_k(blocks: np.ndarray) -> np.ndarray:
    d, dmin = _fp16(blocks, 0), _fp16(blocks, 2)
    sc, m = _scales_mins(blocks[:, 4:16])
    q = _nibbles(blocks[:, 16:144]).astype(np.float32)
    return (d * sc)[:, :, None] * q - (dmin * m)[:, :, None]


def _q5_k(blocks: np.ndarray) -> np.ndarray:
    d, dmin = _fp16(blocks, 0), _fp16(blocks, 2)
    sc, m = _scales_mins(blocks[:, 4:16])
    qh = blocks[:, 16:48]
    fifth = (qh[:, None, :] >> np.arange(8, dtype=np.uint8)[None, :, None]) & 1  # (n, 8, 32)
    q = (_nibbles(blocks[:, 48:176]) + 16 * fifth).astype(np.float32)
    return (d * sc)[:, :, None] * q - (dmin * m)[:, :, None]


def _q6_k(blocks: np.ndarray) -> np.ndarray:
    ql = blocks[:, 0:128].reshape(-1, 2, 2, 32)  # (half h, ql[64h:64h+32] or [64h+32:64h+64], l)
    qh = blocks[:, 128:192].reshape(-1, 2, 1, 32)
    low = np.concatenate([ql & 0x0F, ql >> 4], axis=2)  # quarters k = 0, 1, 2, 3
    high = (qh >> (2 * np.arange(4, dtype=np.uint8))[None, None, :, None]) & 3
    q = ((low | (high << 4)).astype(np.int16) - 32).astype(np.float32).reshape(-1, 16, 16)
    scales = np.ascontiguousarray(blocks[:, 192:208]).view(np.int8).astype(np.float32)
    return (_fp16(blocks, 208) * scales)[:, :, None] * q


_DECODERS = {"Q4_K": _q4_k, "Q5_K": _q5_k, "Q6_K": _q6_k}


def dequantize_kquant(raw, kind: str) -> np.ndarray:
    """Float32 weights of K-quant blocks.

    Parameters
    ----------
    raw : array_like of uint8
        The blocks' bytes, any shape whose last axis is a whole number of blocks (a GGUF
        tensor's rows as ``gguf.GGUFReader`` gives them: ``(rows, bytes per row)``).
    kind : str
        ``"Q4_K"``, ``"Q5_K"`` or ``"Q6_K"``.

    Returns
    -------
    numpy.ndarray
        float32 of shape ``raw.shape[:-1] + (blocks per row · 256,)``.

    Raises
    ------
    ValueError
        For another ``kind``, a dtype other than uint8, or a last axis that is not a whole
        number of blocks.

    Examples
    --------
    >>> block = np.zeros(144, np.uint8); block[0:2] = np.array([0.5], "<f2").view(np.uint8)
    >>> block[4:6] = [3, 1]  # sub-blocks 0 and 1: scales 3 and 1 (mins 0)
    >>> block[16] = 0x21  # weight 0 of sub-block 0: q = 1; of sub-block 1: q = 2
    >>> w = dequantize_kquant(block, "Q4_K")
    >>> float(w[0]), float(w[32]), float(w[1]), w.shape
    (1.5, 1.0, 0.0, (256,))
    """
    if kind not in _DECODERS:
        raise ValueError(f"kind must be one of {', '.join(KQUANT_TYPES)}, got {kind!r}")
    raw = np.asarray(raw)
    size = BLOCK_BYTES[kind]
    if raw.dtype != np.uint8 or raw.ndim == 0 or raw.shape[-1] % size:
        raise ValueError(f"raw must be uint8 bytes whose last axis is a multiple of {size} "
                         f"(one {kind} block), got dtype {raw.dtype} and shape {raw.shape}")
    blocks = np.ascontiguousarray(raw).reshape(-1, size)
    values = _DECODERS[kind](blocks).astype(np.float32, copy=False)
    return values.reshape(*raw.shape[:-1], raw.shape[-1] // size * QK_K)
