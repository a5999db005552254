"""sia_theory.models.gguf_file, exercised by its own name: SHA-256 against hashlib, and the model
file's size and checksum checks naming what is wrong."""

import hashlib

import pytest

from sia_theory.models.gguf_file import SUPPORTED_TYPES, check_model_file, file_sha256


def test_sha256_and_checks(tmp_path):
    path = tmp_path / "m.gguf"
    data = b"GGUF" + bytes(range(256)) * 40
    path.write_bytes(data)
    digest = hashlib.sha256(data).hexdigest()
    assert file_sha256(str(path)) == digest
    assert check_model_file(str(path), size=len(data), sha256=digest, install_hint="pip") == digest
    with pytest.raises(ValueError, match="truncated"):
        check_model_file(str(path), size=len(data) + 1, sha256=None, install_hint="pip")
    with pytest.raises(ValueError, match="wrong checksum"):
        check_model_file(str(path), size=None, sha256="0" * 64, install_hint="pip")
    with pytest.raises(ValueError, match="missing"):
        check_model_file(str(tmp_path / "none"), size=None, sha256=None, install_hint="pip")
    assert len(SUPPORTED_TYPES) >= 3
