"""llama.cpp's K-quants (Q4_K, Q5_K, Q6_K) and ``load_pretrained(path)`` of a LLaMA GGUF file.

The references are written here, independently of ``sia_theory.models.kquants``, from llama.cpp
(ggml-org/llama.cpp at 01243c587feceaa5d6a6c2305535ef2f549c48b8): the per-block loops of
``dequantize_row_q4_K`` / ``_q5_K`` / ``_q6_K`` with ``get_scale_min_k4`` (``ggml-quants.c``),
transcribed with float32 scalars; and the packing of ``quantize_row_q4_K_ref`` / ``_q5_K_ref`` /
``_q6_K_ref``, used to build blocks from hand-chosen scales and quants whose values are known.
The ``gguf`` package's own numpy dequantizer is a second, outside reference. The GGUF files are
tiny LLaMA models the tests write with ``gguf.GGUFWriter``.
"""

import os

import gguf
import numpy as np
import pytest

from sia_theory.models import LlamaConfig, LlamaModel, load_pretrained
from sia_theory.models import gguf_file as gguf_file_module
from sia_theory.models.gguf_llama import llama_tensor_shapes
from sia_theory.models.kquants import BLOCK_BYTES, dequantize_kquant

F32 = np.float32
TYPES = gguf.GGMLQuantizationType


# ---- the C reference, one block at a time ---------------------------------------------------
def _half(block, at):
    return F32(np.frombuffer(bytes(block[at:at + 2]), "<f2")[0])


def _scale_min_k4(j, q):
    if j < 4:
        return q[j] & 63, q[j + 4] & 63
    return (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4), (q[j + 4] >> 4) | ((q[j - 0] >> 6) << 4)


def c_q4_k(block):
    d, dmin, scales, q = _half(block, 0), _half(block, 2), block[4:16].tolist(), block[16:].tolist()
    y, is_ = [], 0
    for _ in range(0, 256, 64):
        sc, m = _scale_min_k4(is_ + 0, scales)
        d1, m1 = d * F32(sc), dmin * F32(m)
        sc, m = _scale_min_k4(is_ + 1, scales)
        d2, m2 = d * F32(sc), dmin * F32(m)
        y += [d1 * F32(q[l] & 0xF) - m1 for l in range(32)]
        y += [d2 * F32(q[l] >> 4) - m2 for l in range(32)]
        q, is_ = q[32:], is_ + 2
    return y


def c_q5_k(block):
    d, dmin, scales = _half(block, 0), _half(block, 2), block[4:16].tolist()
    qh, ql = block[16:48].tolist(), block[48:].tolist()
    y, is_, u1, u2 = [], 0, 1, 2
    for _ in range(0, 256, 64):
        sc, m = _scale_min_k4(is_ + 0, scales)
        d1, m1 = d * F32(sc), dmin * F32(m)
        sc, m = _scale_min_k4(is_ + 1, scales)
        d2, m2 = d * F32(sc), dmin * F32(m)
        y += [d1 * F32((ql[l] & 0xF) + (16 if qh[l] & u1 else 0)) - m1 for l in range(32)]
        y += [d2 * F32((ql[l] >> 4) + (16 if qh[l] & u2 else 0)) - m2 for l in range(32)]
        ql, is_, u1, u2 = ql[32:], is_ + 2, u1 << 2, u2 << 2
    return y


def c_q6_k(block):
    d = _half(block, 208)
    ql, qh = block[0:128].tolist(), block[128:192].tolist()
    sc = np.frombuffer(bytes(block[192:208]), np.int8).tolist()
    y = [None] * 256
    for n in range(0, 256, 128):
        for l in range(32):
            is_ = l // 16
            q1 = ((ql[l + 0] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32
            q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32
            q3 = ((ql[l + 0] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32
            q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32
            y[n + l + 0] = d * F32(sc[is_ + 0]) * F32(q1)
            y[n + l + 32] = d * F32(sc[is_ + 2]) * F32(q2)
            y[n + l + 64] = d * F32(sc[is_ + 4]) * F32(q3)
            y[n + l + 96] = d * F32(sc[is_ + 6]) * F32(q4)
        ql, qh, sc = ql[64:], qh[32:], sc[8:]
    return y


C_REFERENCE = {"Q4_K": c_q4_k, "Q5_K": c_q5_k, "Q6_K": c_q6_k}
FP16_AT = {"Q4_K": (0, 2), "Q5_K": (0, 2), "Q6_K": (208,)}


def random_blocks(kind, n, seed):
    """``n`` random blocks of ``kind`` with finite fp16 scales (the rest random bytes)."""
    rng = np.random.default_rng(seed)
    blocks = rng.integers(0, 256, (n, BLOCK_BYTES[kind]), dtype=np.uint8)
    for at in FP16_AT[kind]:
        half = (rng.uniform(-0.05, 0.05, n)).astype("<f2")
        blocks[:, at:at + 2] = half.view(np.uint8).reshape(n, 2)
    return blocks


@pytest.mark.parametrize("kind", sorted(BLOCK_BYTES))
def test_dequantization_equals_the_c_reference_loop_exactly(kind):
    blocks = random_blocks(kind, 6, seed=11)
    got = dequantize_kquant(blocks.reshape(2, -1), kind)  # two rows of three blocks
    expected = np.array([v for b in blocks for v in C_REFERENCE[kind](b)], F32).reshape(2, -1)
    assert got.dtype == F32 and got.shape == (2, 768)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("kind", sorted(BLOCK_BYTES))
def test_dequantization_equals_the_gguf_package(kind):
    blocks = random_blocks(kind, 64, seed=12)
    expected = gguf.quants.dequantize(blocks, getattr(TYPES, kind))
    np.testing.assert_array_equal(dequantize_kquant(blocks, kind), expected)


# ---- packing hand-chosen blocks (quantize_row_qX_K_ref's layout) ----------------------------
def _fp16_bytes(values):
    return np.asarray(values, "<f2").view(np.uint8).reshape(-1, 2)


def _pack_scales_mins(sc, m):
    s = np.zeros((len(sc), 12), np.int64)
    for j in range(8):
        if j < 4:
            s[:, j], s[:, j + 4] = sc[:, j], m[:, j]
        else:
            s[:, j + 4] = (sc[:, j] & 0xF) | ((m[:, j] & 0xF) << 4)
            s[:, j - 4] |= (sc[:, j] >> 4) << 6
            s[:, j - 0] |= (m[:, j] >> 4) << 6
    return s


def pack_q4_k(d, dmin, sc, m, q):
    """Blocks of weights ``d·sc[s]·q − dmin·m[s]`` (``q`` in 0..15, ``sc``/``m`` in 0..63)."""
    qs = np.zeros((len(d), 128), np.int64)
    for j in range(0, 256, 64):
        for l in range(32):
            qs[:, j // 2 + l] = q[:, j + l] | (q[:, j + l + 32] << 4)
    return np.concatenate([_fp16_bytes(d), _fp16_bytes(dmin), _pack_scales_mins(sc, m), qs],
                          axis=1).astype(np.uint8)


def pack_q5_k(d, dmin, sc, m, q):
    """As :func:`pack_q4_k` with ``q`` in 0..31 (the fifth bit in ``qh``)."""
    qh, ql = np.zeros((len(d), 32), np.int64), np.zeros((len(d), 128), np.int64)
    m1, m2 = 1, 2
    for n in range(0, 256, 64):
        for j in range(32):
            l1, l2 = q[:, n + j].copy(), q[:, n + j + 32].copy()
            qh[:, j] |= np.where(l1 > 15, m1, 0) | np.where(l2 > 15, m2, 0)
            ql[:, n // 2 + j] = (l1 & 15) | ((l2 & 15) << 4)
        m1, m2 = m1 << 2, m2 << 2
    return np.concatenate([_fp16_bytes(d), _fp16_bytes(dmin), _pack_scales_mins(sc, m), qh, ql],
                          axis=1).astype(np.uint8)


def pack_q6_k(d, sc, q):
    """Blocks of weights ``d·sc[i // 16]·q[i]`` (``q`` in −32..31, ``sc`` int8)."""
    L = q + 32
    ql, qh = np.zeros((len(d), 128), np.int64), np.zeros((len(d), 64), np.int64)
    for j in range(0, 256, 128):
        for l in range(32):
            ql[:, j // 2 + l] = (L[:, j + l] & 0xF) | ((L[:, j + l + 64] & 0xF) << 4)
            ql[:, j // 2 + l + 32] = (L[:, j + l + 32] & 0xF) | ((L[:, j + l + 96] & 0xF) << 4)
            qh[:, j // 4 + l] = ((L[:, j + l] >> 4) | ((L[:, j + l + 32] >> 4) << 2)
                                 | ((L[:, j + l + 64] >> 4) << 4) | ((L[:, j + l + 96] >> 4) << 6))
    return np.concatenate([ql, qh, sc.astype(np.int8).view(np.uint8), _fp16_bytes(d)],
                          axis=1).astype(np.uint8)


def hand_blocks(kind, n, rng, scale=1.0):
    """``(blocks, values)``: ``n`` blocks packed from random fields, and their weights computed
    from the fields in float64 (exact: fp16 × small integers), rounded once to float32."""
    d = (scale * rng.uniform(1e-4, 3e-4, n)).astype(np.float16)
    if kind == "Q6_K":
        sc, q = rng.integers(-128, 128, (n, 16)), rng.integers(-32, 32, (n, 256))
        values = d.astype(float)[:, None] * np.repeat(sc, 16, axis=1) * q
        return pack_q6_k(d, sc, q), values.astype(F32)
    top = 16 if kind == "Q4_K" else 32
    dmin = (d.astype(float) * rng.uniform(4, 8, n)).astype(np.float16)
    sc, m, q = rng.integers(0, 64, (n, 8)), rng.integers(0, 64, (n, 8)), rng.integers(0, top,
                                                                                       (n, 256))
    values = (d.astype(float)[:, None] * np.repeat(sc, 32, axis=1) * q
              - dmin.astype(float)[:, None] * np.repeat(m, 32, axis=1))
    pack = pack_q4_k if kind == "Q4_K" else pack_q5_k
    return pack(d, dmin, sc, m, q), values.astype(F32)


@pytest.mark.parametrize("kind", sorted(BLOCK_BYTES))
def test_hand_built_blocks_give_their_values(kind):
    blocks, values = hand_blocks(kind, 8, np.random.default_rng(13))
    np.testing.assert_array_equal(dequantize_kquant(blocks, kind), values.reshape(-1, 256))
    if kind == "Q4_K":  # a negative control: the high sub-blocks' 6-bit packing matters
        wrong = blocks.copy()
        wrong[:, 4:8] &= 63  # drop the high bits of scales 4..7
        assert not np.array_equal(dequantize_kquant(wrong, kind), values.reshape(-1, 256))


def test_one_q4_k_block_by_hand():
    """Sub-block 5 (a high one): scale 37 = 0b100101, min 50 = 0b110010, split across bytes."""
    sc, m = np.zeros((1, 8), np.int64), np.zeros((1, 8), np.int64)
    sc[0, 5], m[0, 5] = 37, 50
    q = np.zeros((1, 256), np.int64)
    q[0, 160:192] = np.arange(32) % 16
    block = pack_q4_k(np.array([0.25]), np.array([0.125]), sc, m, q)
    assert block[0, 4 + 9] == (37 & 15) | ((50 & 15) << 4) and block[0, 4 + 1] >> 6 == 37 >> 4
    w = dequantize_kquant(block[0], "Q4_K")
    np.testing.assert_array_equal(w[160:192], 0.25 * 37 * (np.arange(32) % 16) - 0.125 * 50)
    assert not w[:160].any() and not w[192:].any()


@pytest.mark.parametrize("raw, kind, match", [
    (np.zeros(144, np.uint8), "Q3_K", "kind must be one of Q4_K, Q5_K, Q6_K"),
    (np.zeros(143, np.uint8), "Q4_K", "multiple of 144"),
    (np.zeros(210, np.int16), "Q6_K", "uint8"),
])
def test_bad_blocks_are_refused(raw, kind, match):
    with pytest.raises(ValueError, match=match):
        dequantize_kquant(raw, kind)


# ---- a tiny LLaMA GGUF file, written here -------------------------------------------------
CONFIG = LlamaConfig(n_layers=2, d_model=256, n_heads=4, n_kv_heads=2, ffn=256, rope_base=500.0,
                     rms_eps=float(F32(1e-5)), context_length=128,
                     vocab_size=64)
TOKENS = ([chr(c) for c in range(ord("a"), ord("z") + 1)] + [chr(c) for c in range(65, 91)]
          + ["Ġ"] + [str(i) for i in range(9)] + ["ab", "<|endoftext|>"])
KINDS = {"attn_q": "Q4_K", "attn_k": "Q4_K", "attn_v": "Q6_K", "attn_output": "Q5_K",
         "ffn_gate": "Q4_K", "ffn_up": "Q4_K", "ffn_down": "Q6_K", "token_embd": "Q6_K",
         "output": "Q6_K"}


def tiny_tensors(seed=0):
    """name -> ``(kind, raw, float32 values)``: K-quant matrices, float32 norms."""
    rng = np.random.default_rng(seed)
    shapes = llama_tensor_shapes(CONFIG) | {"output.weight": (64, 256)}
    out = {}
    for name, shape in shapes.items():
        if len(shape) == 1:
            values = (1 + 0.1 * rng.standard_normal(shape)).astype(F32)
            out[name] = ("F32", values, values)
            continue
        kind = KINDS[name.split(".")[-2]]
        rows, cols = shape
        blocks, values = hand_blocks(kind, rows * cols // 256, rng, scale=8.0)
        out[name] = (kind, blocks.reshape(rows, -1), values.reshape(rows, cols))
    return out


def write_tiny(path, tensors, arch="llama", extra=None, tokenizer="gpt2"):
    writer = gguf.GGUFWriter(str(path), arch)
    c = CONFIG
    writer.add_block_count(c.n_layers)
    writer.add_embedding_length(c.d_model)
    writer.add_head_count(c.n_heads)
    writer.add_head_count_kv(c.n_kv_heads)
    writer.add_feed_forward_length(c.ffn)
    writer.add_rope_freq_base(c.rope_base)
    writer.add_layer_norm_rms_eps(c.rms_eps)
    writer.add_context_length(c.context_length)
    writer.add_tokenizer_model(tokenizer)
    writer.add_tokenizer_pre("smollm")
    writer.add_token_list(TOKENS)
    writer.add_token_types([1] * 63 + [3])
    writer.add_token_merges(["a b"])
    writer.add_bos_token_id(63)
    writer.add_eos_token_id(63)
    for add in extra or ():
        add(writer)
    for name, (kind, raw, _) in tensors.items():
        if kind == "F32":
            writer.add_tensor(name, raw)
        else:
            writer.add_tensor(name, raw, raw_dtype=getattr(TYPES, kind))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return str(path)


@pytest.fixture(scope="module")
def tiny():
    return tiny_tensors()


IDS = [3, 17, 52, 0, 63, 40, 9, 61, 25, 12, 33, 7]


def test_a_k_quant_gguf_loads_by_path_and_runs_as_its_float_weights(tmp_path, tiny):
    path = write_tiny(tmp_path / "tiny-Q4_K_M.gguf", tiny)
    model, tokenizer = load_pretrained(path)
    assert model.config == CONFIG and model.load_info["source"] == path
    assert model.load_info["cache"] is None and os.listdir(tmp_path) == ["tiny-Q4_K_M.gguf"]
    np.testing.assert_array_equal(model.output_weight, tiny["output.weight"][2])  # untied head
    reference = LlamaModel(CONFIG, {name: values for name, (_, _, values) in tiny.items()})
    expected = reference.logits(IDS)
    np.testing.assert_array_equal(model.logits(IDS), expected)
    assert np.all(np.isfinite(expected)) and expected.std() > 0.1
    assert tokenizer.encode("ab ba") == [62, 52, 1, 0] and tokenizer.decode([62, 52, 1]) == "ab b"
    model64, _ = load_pretrained(tmp_path / "tiny-Q4_K_M.gguf", dtype=np.float64)  # PathLike
    scale = np.abs(expected).max()  # float32 vs float64 work: within float32 rounding
    np.testing.assert_allclose(model64.logits(IDS), expected, rtol=0, atol=2e-5 * scale)


def test_a_wrong_packing_would_change_the_model(tmp_path, tiny):
    """Negative control: the same file with one Q6_K tensor's halves swapped loads to other
    logits, so the equality above is not vacuous."""
    kind, raw, values = tiny["blk.0.attn_v.weight"]
    order = [*range(64, 128), *range(64), *range(128, 210)]  # ql's two halves swapped
    swapped = raw.reshape(raw.shape[0], -1, 210)[:, :, order]
    path = write_tiny(tmp_path / "swapped.gguf",
                      tiny | {"blk.0.attn_v.weight": (kind, swapped.reshape(raw.shape), values)})
    reference = LlamaModel(CONFIG, {name: v for name, (_, _, v) in tiny.items()})
    assert np.max(np.abs(load_pretrained(path)[0].logits(IDS) - reference.logits(IDS))) > 1e-3


def test_the_dequantization_guard_would_see_a_load(tmp_path, tiny, no_dequantization):
    """The guard of the refusal tests fires on a valid file (so their passing means the file
    was refused before any tensor was dequantized)."""
    with pytest.raises(AssertionError, match="dequantized before"):
        load_pretrained(write_tiny(tmp_path / "valid.gguf", tiny))


def test_an_unsupported_tokenizer_loads_the_model_without_one(tmp_path, tiny):
    path = write_tiny(tmp_path / "spm.gguf", tiny, tokenizer="llama")
    with pytest.warns(RuntimeWarning, match="tokenizer of .*spm.gguf is not supported"):
        model, tokenizer = load_pretrained(path)
    assert tokenizer is None and model.logits(IDS).shape == (len(IDS), 64)


@pytest.fixture
def no_dequantization(monkeypatch):
    """Any dequantization fails the test: the refusals must come before it."""
    def forbidden(*args, **kwargs):
        raise AssertionError("a tensor was dequantized before the file was refused")

    monkeypatch.setattr(gguf_file_module, "dequantize_kquant", forbidden)
    monkeypatch.setattr(gguf.quants, "dequantize", forbidden)


def _without(tiny, name):
    return {k: v for k, v in tiny.items() if k != name}


@pytest.mark.parametrize("case, match", [
    ("missing", "missing.gguf does not exist"),
    ("not gguf", "not-gguf.gguf is not a GGUF file: it starts with b'PK"),
    ("architecture", "architecture.gguf has architecture 'phi2', which the model does not "
                     r"implement \(it lacks Phi-2's .*\); supported: 'llama', 'qwen2', 'qwen3', "
                     "'phi3'"),
    ("rope scaling", "rope-scaling.gguf sets llama.rope.scaling.type='linear'"),
    ("experts", "experts.gguf sets llama.expert_count=8"),
    ("rope_freqs", r"rope_freqs.gguf has tensor 'rope_freqs.weight' of shape \(16,\), "
                   r"expected \(32,\)"),
    ("missing tensor", r"missing-tensor.gguf does not hold .* missing \['blk.1.ffn_down.weight'\]"),
    ("misshapen", "misshapen.gguf has tensor 'blk.0.attn_k.weight' of shape \\(256, 256\\)"),
    ("quantisation", "quantisation.gguf holds tensors of an unsupported quantisation type: "
                     "'blk.0.attn_k.weight' is Q5_0"),
])
def test_bad_files_are_refused_naming_the_path_before_any_dequantization(
        tmp_path, tiny, no_dequantization, case, match):
    k_q = tiny["blk.0.attn_q.weight"]
    files = {
        "architecture": lambda p: write_tiny(p, tiny, arch="phi2"),
        "rope scaling": lambda p: write_tiny(p, tiny, extra=[
            lambda w: w.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)]),
        "experts": lambda p: write_tiny(p, tiny, extra=[lambda w: w.add_expert_count(8)]),
        "rope_freqs": lambda p: write_tiny(p, tiny | {"rope_freqs.weight": (  # D/2 = 32
            "F32", np.ones(16, F32), None)}),
        "missing tensor": lambda p: write_tiny(p, _without(tiny, "blk.1.ffn_down.weight")),
        "misshapen": lambda p: write_tiny(p, tiny | {"blk.0.attn_k.weight": k_q}),
        "quantisation": lambda p: write_tiny(p, tiny | {"blk.0.attn_k.weight": (
            "Q5_0", np.zeros((128, 8 * 22), np.uint8), None)}),
    }
    path = tmp_path / (case.replace(" ", "-") + ".gguf")
    if case == "missing":
        path = tmp_path / "missing.gguf"
    elif case == "not gguf":
        path = tmp_path / "not-gguf.gguf"
        path.write_bytes(b"PK\x03\x04" + bytes(100))
    else:
        files[case](path)
    with pytest.raises(ValueError, match=match):
        load_pretrained(path)
