"""Reading a GGUF model file: locating it, checking it, and dequantizing its tensors.

GGUF is llama.cpp's single-file format (metadata key/values, then tensors). The reading and the
dequantization are the ``gguf`` package's own (``gguf.GGUFReader``, ``gguf.quants.dequantize``,
numpy routines); this module adds the checks a user needs: the file exists, has the expected
size and SHA-256, parses, and holds only quantisation types we accept. Every failure is one
``ValueError`` naming the cause and the fix.

The K-quants ``Q4_K``, ``Q5_K`` and ``Q6_K`` (256 weights per super-block) are dequantized by
:mod:`.kquants`, written from llama.cpp's reference; the other types by ``gguf.quants``.

Block formats of the other types we accept (llama.cpp ``ggml-common.h``; 32 weights per block):
``Q4_1`` = fp16 scale ``d``, fp16 minimum ``m``, 16 bytes of nibbles (weight ``j`` is the low
nibble of byte ``j`` for ``j < 16``, the high nibble of byte ``j − 16`` otherwise), value
``d·q + m``; ``Q8_0`` = fp16 ``d``, 32 int8 ``q``, value ``d·q``. ``F32``/``F16`` are plain.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from dataclasses import dataclass

import numpy as np

from .kquants import KQUANT_TYPES, dequantize_kquant

__all__ = ["SUPPORTED_TYPES", "GGUFContents", "locate_packaged_file", "file_sha256",
           "check_model_file", "read_gguf"]

SUPPORTED_TYPES = ("F32", "F16", "Q8_0", "Q4_1", *KQUANT_TYPES)
"""The GGUF tensor types the loader dequantizes (anything else is refused by name)."""
_HASH_CHUNK = 1 << 22


@dataclass(frozen=True)
class GGUFContents:
    """What a GGUF file holds: its metadata (scalars, strings and lists as Python values) and
    its tensors dequantized to float32, numpy row-major (``(rows, cols)`` = GGUF ``ne[1], ne[0]``,
    so a linear layer is ``x @ W.T``)."""

    metadata: dict
    tensors: dict


def locate_packaged_file(package: str, filename: str, install_hint: str) -> str:
    """Path of ``filename`` inside the installed ``package``, found with
    ``importlib.util.find_spec`` (the package is never imported)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ValueError(f"the model file is missing: the package {package!r} is not "
                         f"installed; fix: {install_hint}")
    path = os.path.join(list(spec.submodule_search_locations)[0], filename)
    if not os.path.isfile(path):
        raise ValueError(f"the model file is missing: {path} does not exist although "
                         f"{package!r} is installed; fix: {install_hint} --force-reinstall")
    return path


def file_sha256(path: str) -> str:
    """Hex SHA-256 of the file at ``path``."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_HASH_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def check_model_file(path: str, *, size: int | None, sha256: str | None,
                     install_hint: str) -> str:
    """Check that ``path`` exists with the expected size and SHA-256; return its SHA-256.

    A short file is reported as truncated (an interrupted download or copy), a file of the
    right size with other bytes as a checksum mismatch (corruption or another version)."""
    if not os.path.isfile(path):
        raise ValueError(f"the model file is missing: {path} does not exist; fix: "
                         f"{install_hint}")
    actual_size = os.path.getsize(path)
    if size is not None and actual_size != size:
        raise ValueError(f"the model file {path} is corrupt or truncated: {actual_size} bytes, "
                         f"expected {size}; fix: {install_hint} --force-reinstall")
    digest = file_sha256(path)
    if sha256 is not None and digest != sha256:
        raise ValueError(f"the model file {path} has the wrong checksum: SHA-256 {digest}, "
                         f"expected {sha256} (corrupt or another version); fix: "
                         f"{install_hint} --force-reinstall")
    return digest


def _field_value(field):
    """A GGUF metadata field as a Python value (``gguf.ReaderField.contents``)."""
    return field.contents()


def read_gguf(path: str, install_hint: str = "", validate=None) -> GGUFContents:
    """Parse the GGUF file at ``path`` and dequantize every tensor to float32.

    Parameters
    ----------
    path : str
        The GGUF file.
    install_hint : str
        Appended to the error for a missing file (how to install it).
    validate : callable, optional
        ``validate(metadata, shapes)``, called with the metadata and the tensors' numpy shapes
        (name -> ``(rows, cols)``) before any tensor is dequantized, to refuse a file early (it
        raises ``ValueError``).

    Returns
    -------
    GGUFContents
        The metadata and the float32 tensors.

    Raises
    ------
    ValueError
        If the file does not parse as GGUF, ``validate`` refuses it, it holds a tensor whose
        quantisation type is not in :data:`SUPPORTED_TYPES` (checked for every tensor before any
        is dequantized), or a tensor dequantizes to a NaN or an infinity (named).
    """
    import gguf  # optional dependency: gguf (the model extra)

    fix = f"; fix: {install_hint} --force-reinstall" if install_hint else ""
    try:
        reader = gguf.GGUFReader(path)
    except Exception as err:  # the reader raises ValueError, struct.error, IndexError, ...
        raise ValueError(f"the model file {path} is corrupt: not a readable GGUF file "
                         f"({type(err).__name__}: {err}){fix}") from None
    unsupported = sorted({(t.name, t.tensor_type.name) for t in reader.tensors
                          if t.tensor_type.name not in SUPPORTED_TYPES})
    if unsupported:
        name, kind = unsupported[0]
        raise ValueError(f"the model file {path} holds tensors of an unsupported quantisation "
                         f"type: {name!r} is {kind} ({len(unsupported)} such tensors); "
                         f"supported: {', '.join(SUPPORTED_TYPES)}")
    metadata = {name: _field_value(field) for name, field in reader.fields.items()
                if not name.startswith("GGUF.")}
    shapes = {t.name: tuple(int(n) for n in reversed(t.shape)) for t in reader.tensors}
    if validate is not None:
        validate(metadata, shapes)
    tensors = {}
    for tensor in reader.tensors:
        kind = tensor.tensor_type.name
        values = (dequantize_kquant(tensor.data, kind) if kind in KQUANT_TYPES
                  else gguf.quants.dequantize(tensor.data, tensor.tensor_type))
        # numpy order: (ne1, ne0)
        values = np.ascontiguousarray(values, np.float32).reshape(shapes[tensor.name])
        finite = np.isfinite(values)
        if not finite.all():
            raise ValueError(f"the model file {path}: tensor {tensor.name!r} holds "
                             f"{values.size - int(np.count_nonzero(finite))} non-finite values "
                             "(NaN or infinity); a model's weights must be finite")
        tensors[tensor.name] = values
    return GGUFContents(metadata, tensors)
