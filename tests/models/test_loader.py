"""sia_theory.models.loader, exercised by its own name: a Hugging Face folder written here loads
in float32 and float64 with the same logits (to float32 rounding); the registry and the dtype
check."""


import numpy as np
import pytest

from sia_theory.models.loader import MODELS, load_hf_folder


def test_float32_and_float64_agree(tmp_path, tiny_folder):
    folder = tiny_folder(tmp_path / "tiny", seed=2)
    m32, tokenizer = load_hf_folder(folder, np.float32)
    m64, _ = load_hf_folder(folder, np.float64)
    ids = np.array([1, 2, 3, 4, 5])
    assert tokenizer is None
    assert m32.logits(ids) == pytest.approx(m64.logits(ids), abs=1e-5)
    assert m64.load_info["source"] == str(folder)


def test_registry_and_bad_dtype(tmp_path):
    spec = MODELS["smollm2-135m"]
    assert spec.size == 98362432 and len(spec.sha256) == 64
    with pytest.raises(ValueError, match="dtype"):
        load_hf_folder(tmp_path, np.float16)
    with pytest.raises(ValueError, match="dtype"):
        load_hf_folder(tmp_path, None)
