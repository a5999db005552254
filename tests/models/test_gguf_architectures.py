"""``load_pretrained(path.gguf)`` of Llama 3 (``rope_freqs``), Qwen2 and Qwen3 GGUF files, held
against transformers' own forward of the checkpoint they were converted from.

Each test makes a tiny random transformers model, saves it (float32 safetensors), and writes the
GGUF file itself with the ``gguf`` package's ``GGUFWriter`` as llama.cpp's
``convert_hf_to_gguf.py`` does (ggml-org/llama.cpp, read at commit 0024aa74): the metadata of
``TextModel.set_gguf_parameters`` (block count, context length, widths, head counts,
``rope_parameters["rope_theta"]`` as the base, RMSNorm epsilon, ``head_dim`` as key and value
length) and, for ``LlamaModel``, the vocabulary size and ``head_dim`` as the rotary dimension;
the tensor names of ``gguf.TensorNameMap``; for ``LlamaModel`` only (``undo_permute``) the rows of
``q_proj``/``k_proj`` permuted by ``LlamaModel.permute``; and for a ``rope_type = "llama3"``
config the factors of ``LlamaModel.generate_extra_tensors`` as ``rope_freqs.weight``, written
out again below (:func:`llama3_rope_factors`). ``Qwen2Model``/``Qwen3Model`` permute nothing: llama
.cpp runs them with NEOX rope (``llama_model_rope_type`` in ``src/llama-model.cpp``).

The error is ``max |Δ logit| / max |logit|`` against transformers' float64 eager forward, held
to ``RTOL = 1e-5``; transformers computes RoPE's angles, RMSNorm and the softmax in float32 even
in a float64 model (``test_hf_architectures.py``), which is the floor of the measured errors.
"""

import dataclasses
import math

import numpy as np
import pytest

from sia_theory.attention import RoPE
from sia_theory.attention.rope_variants import LongRoPE
from sia_theory.models import gguf_llama as gguf_llama_module
from sia_theory.models import load_pretrained
from tests.models.transformers_reference import TINY as SHARED_TINY
from tests.models.transformers_reference import (
    load_without_tokenizer,
    reference,
    relative_error,
    saved_random_model,
)

gguf = pytest.importorskip("gguf")
torch = pytest.importorskip("torch", reason="torch (the model extra) is needed for the "
                            "transformers reference")
transformers = pytest.importorskip("transformers", reason="transformers (pinned in the test "
                                   "extra) is the reference forward")
load_file = pytest.importorskip("safetensors.numpy").load_file

RTOL = 1e-5
TINY = {**SHARED_TINY, "max_position_embeddings": 256}
# Llama 3.x's scaling with original context 8192 (what the converter reads: below); a high
# frequency factor of 32 puts 9 of the 16 frequencies of head_dim 32 (base 1e4) under the
# scaling, so a context of 160 tokens turns them by up to 2.8 rad less than unscaled RoPE.
LLAMA3 = {"rope_type": "llama3", "rope_theta": 10000.0, "factor": 8.0, "low_freq_factor": 1.0,
          "high_freq_factor": 32.0, "original_max_position_embeddings": 8192}
CASES = {  # GGUF architecture -> (config class, model class, what it adds to TINY)
    "llama3": ("LlamaConfig", "LlamaForCausalLM",
               {"head_dim": 32, "rope_parameters": LLAMA3, "max_position_embeddings": 65536}),
    "qwen2": ("Qwen2Config", "Qwen2ForCausalLM", {}),
    "qwen3": ("Qwen3Config", "Qwen3ForCausalLM", {"head_dim": 32}),  # 4·32 ≠ hidden 64
}
IDS = [int(i) for i in np.random.default_rng(1).integers(0, 128, 16)]
LONG_IDS = [int(i) for i in np.random.default_rng(2).integers(0, 128, 160)]


def checkpoint(folder, kind, seed=0, tie=False):
    """A random ``kind`` model saved by transformers into ``folder`` (float32 safetensors);
    returns the float64 eager model, the reference."""
    config_cls, model_cls, extra = CASES[kind]
    config = getattr(transformers, config_cls)(**{**TINY, **extra, "tie_word_embeddings": tie})
    return saved_random_model(folder, config, getattr(transformers, model_cls), seed)


def llama3_rope_factors(hparams):
    """convert_hf_to_gguf.py, ``LlamaModel.generate_extra_tensors`` (float32, as its torch
    tensors): ``freqs = 1/base^(arange(0, D, 2)/D)``; per frequency the wavelength ``2π/freq``
    gives factor 1 below ``old/high_freq_factor``, ``factor`` above ``old/low_freq_factor``, and
    ``1/((1 − s)/factor + s)`` between, ``s = (old/wavelength − low)/(high − low)``. The converter
    takes ``old`` from the config's top level, ``hparams.get("original_max_position_embeddings",
    8192)``: transformers v5 keeps that key inside ``rope_parameters``, so 8192 (Llama 3.x's own
    value) is what it uses."""
    rope = hparams["rope_parameters"]
    base, dim = rope["rope_theta"], hparams["head_dim"]
    factor, low, high = rope["factor"], rope["low_freq_factor"], rope["high_freq_factor"]
    old = hparams.get("original_max_position_embeddings", 8192)
    freqs = np.float32(1.0) / np.float32(base) ** (np.arange(0, dim, 2, dtype=np.float32)
                                                   / np.float32(dim))
    out = []
    for freq in freqs:
        wavelen = np.float32(2 * math.pi) / freq
        if wavelen < old / high:
            out.append(1.0)
        elif wavelen > old / low:
            out.append(factor)
        else:
            smooth = (np.float32(old) / wavelen - np.float32(low)) / np.float32(high - low)
            out.append(np.float32(1) / ((np.float32(1) - smooth) / np.float32(factor) + smooth))
    return np.array(out, np.float32)


def permute(weights, n_head, n_head_kv):
    """convert_hf_to_gguf.py, ``LlamaModel.permute``."""
    if n_head_kv is not None and n_head != n_head_kv:
        n_head = n_head_kv
    return (weights.reshape(n_head, 2, weights.shape[0] // n_head // 2, *weights.shape[1:])
            .swapaxes(1, 2).reshape(weights.shape))


def write_gguf(folder, arch, path, change_meta=None, extra_tensors=None):
    """The GGUF file llama.cpp's converter writes for the checkpoint in ``folder`` (module
    docstring), with ``--outtype f32``; ``change_meta`` adds to the writer, ``extra_tensors``
    adds tensors, to make files the loader must refuse."""
    hparams = transformers.AutoConfig.from_pretrained(folder).to_dict()  # ModelBase.load_hparams
    weights = load_file(str(folder / "model.safetensors"))
    blocks = hparams["num_hidden_layers"]
    model_arch = {v: k for k, v in gguf.MODEL_ARCH_NAMES.items()}[arch]
    names = gguf.get_tensor_name_map(model_arch, blocks)
    writer = gguf.GGUFWriter(str(path), arch)
    rope = hparams["rope_parameters"]
    writer.add_block_count(blocks)  # TextModel.set_gguf_parameters
    writer.add_context_length(hparams["max_position_embeddings"])
    writer.add_embedding_length(hparams["hidden_size"])
    writer.add_feed_forward_length(hparams["intermediate_size"])
    writer.add_head_count(hparams["num_attention_heads"])
    writer.add_head_count_kv(hparams["num_key_value_heads"])
    writer.add_rope_freq_base(rope["rope_theta"])  # llama3: "handled in generate_extra_tensors"
    writer.add_layer_norm_rms_eps(hparams["rms_norm_eps"])
    if hparams.get("head_dim") is not None:
        writer.add_key_length(hparams["head_dim"])
        writer.add_value_length(hparams["head_dim"])
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    if arch == "llama":  # LlamaModel.set_gguf_parameters
        writer.add_vocab_size(hparams["vocab_size"])
        writer.add_rope_dimension_count(hparams["head_dim"])
    writer.add_tokenizer_model("gpt2")  # a byte-level BPE vocabulary: ids only in these tests
    writer.add_tokenizer_pre("llama-bpe" if arch == "llama" else "qwen2")
    writer.add_token_list([f"t{i}" for i in range(hparams["vocab_size"])])
    writer.add_token_types([1] * hparams["vocab_size"])
    for add in change_meta or ():
        add(writer)
    tensors = {}
    if arch == "llama" and rope.get("rope_type") == "llama3":  # generate_extra_tensors
        tensors["rope_freqs.weight"] = llama3_rope_factors(hparams)
    heads, kv_heads = hparams["num_attention_heads"], hparams["num_key_value_heads"]
    for name, data in weights.items():  # LlamaModel.modify_tensors / TextModel's
        if arch == "llama" and name.endswith(("q_proj.weight", "q_proj.bias")):
            data = permute(data, heads, heads)
        if arch == "llama" and name.endswith(("k_proj.weight", "k_proj.bias")):
            data = permute(data, heads, kv_heads)
        tensors[names.get_name(name, try_suffixes=(".weight", ".bias"))] = data
    tensors.update(extra_tensors or {})
    for name, data in tensors.items():
        writer.add_tensor(name, np.ascontiguousarray(data, np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def convert(tmp_path, kind, tie=False, **write):
    """``(reference model, GGUF path)`` of a fresh ``kind`` checkpoint (``write``: the keywords
    of :func:`write_gguf`)."""
    reference_model = checkpoint(tmp_path / "hf", kind, tie=tie)
    arch = "llama" if kind == "llama3" else kind
    return reference_model, write_gguf(tmp_path / "hf", arch, tmp_path / f"{kind}.gguf", **write)


load = load_without_tokenizer


def test_llama3_rope_freqs_match_transformers_inv_freq(tmp_path):
    """The factors read from the file are transformers' own: ``default inv_freq / llama3
    inv_freq`` (``_compute_llama3_parameters``), to float32 rounding (measured 1.2e-7
    relative); 9 of the 16 differ from 1."""
    reference_model, path = convert(tmp_path, "llama3")
    model = load(path)
    assert isinstance(model.default_position, LongRoPE)
    factors = np.asarray(model.default_position.short_factor)
    inv_freq = reference_model.model.rotary_emb.inv_freq.double().numpy()  # llama3-scaled
    default = 1e4 ** (-np.arange(0, 32, 2) / 32)
    np.testing.assert_allclose(factors, default / inv_freq, rtol=2e-6)
    assert np.sum(np.abs(factors - 1) > 1e-3) == 9 and factors.max() == 8.0
    np.testing.assert_allclose(model.default_position.frequencies(32), inv_freq, rtol=2e-6)


@pytest.mark.parametrize("kind, ids", [("llama3", LONG_IDS), ("qwen2", IDS), ("qwen3", IDS)])
def test_gguf_logits_match_transformers_forward(tmp_path, kind, ids):
    """Measured (transformers 5.24.0, torch CPU, float64 model): llama3 at 160 tokens 1.6e-6,
    qwen2 1.4e-7, qwen3 1.7e-7 relative (max |Δ logit| 6.9e-6, 5.1e-7, 6.7e-7), the float32
    floor of transformers' forward (:func:`test_llama3_float64_reference_agrees_to_rounding`);
    the float32 model: 1.6e-6, 4.2e-7, 6.2e-7."""
    reference_model, path = convert(tmp_path, kind)
    want = reference(reference_model, ids)
    model = load(path)
    error = relative_error(model.logits(ids), want)
    assert error <= RTOL, error
    assert model.config.head_dim == (16 if kind == "qwen2" else 32)


def test_llama3_float64_reference_agrees_to_rounding(tmp_path, monkeypatch):
    """transformers' forward with its float32 RMSNorm, RoPE angles and softmax computed in
    float64, and the llama3 frequencies of ``_compute_llama3_parameters`` written out here in
    float64: measured 9.7e-9 relative at 160 tokens, the float32 rounding of the factors the
    converter stores (with those stored factors instead, 3.8e-13). So the 1.6e-6 above is
    transformers' float32, not a difference of the model."""
    softmax = torch.nn.functional.softmax
    monkeypatch.setattr(torch.nn.functional, "softmax",
                        lambda x, dim=None, dtype=None, **kw: softmax(x, dim=dim))
    reference_model, path = convert(tmp_path, "llama3")
    rope, dim, old = LLAMA3, 32, LLAMA3["original_max_position_embeddings"]
    inv_freq = rope["rope_theta"] ** (-np.arange(0, dim, 2) / dim)
    wavelen = 2 * math.pi / inv_freq
    smooth = (old / wavelen - rope["low_freq_factor"]) / (
        rope["high_freq_factor"] - rope["low_freq_factor"])
    llama3 = np.where(wavelen > old / rope["low_freq_factor"], inv_freq / rope["factor"],
                      inv_freq)
    medium = (wavelen >= old / rope["high_freq_factor"]) & (wavelen <= old / rope[
        "low_freq_factor"])
    llama3 = np.where(medium, (1 - smooth) * llama3 / rope["factor"] + smooth * llama3, llama3)

    def norm64(self, x):
        return self.weight * x / torch.sqrt(x.pow(2).mean(-1, keepdim=True)
                                            + self.variance_epsilon)

    def rope64(self, x, position_ids):
        angles = position_ids[0, :, None].double() * torch.tensor(llama3)  # (T, D/2)
        emb = torch.cat([angles, angles], -1)[None]  # (1, T, D)
        return emb.cos() * self.attention_scaling, emb.sin() * self.attention_scaling

    for module in reference_model.modules():
        name = type(module).__name__
        if name.endswith("RMSNorm"):
            module.forward = norm64.__get__(module)
        elif name.endswith("RotaryEmbedding"):
            module.forward = rope64.__get__(module)
    model = load(path)
    assert relative_error(model.logits(LONG_IDS), reference(reference_model, LONG_IDS)) <= 1e-7


def test_llama3_factors_and_qwen_row_order_matter(tmp_path, monkeypatch):
    """Negative controls: the Llama 3 file run with plain RoPE (its factors ignored), and a Qwen2
    file with llama.cpp's LLaMA un-permutation applied to its NEOX rows (the row order of the
    wrong rope type), both miss transformers by far more than RTOL: measured 0.29 (Llama 3 at
    160 tokens; 0.017 at 16) and 0.39 (Qwen2)."""
    reference_model, path = convert(tmp_path / "l3", "llama3")
    model = load(path)
    assert relative_error(model.logits(LONG_IDS, position=RoPE(1e4)),
                          reference(reference_model, LONG_IDS)) > 1e-2
    reference_model, path = convert(tmp_path / "q2", "qwen2")
    arch = gguf_llama_module.GGUF_ARCHITECTURES["qwen2"]
    wrong = {**gguf_llama_module.GGUF_ARCHITECTURES,
             "qwen2": dataclasses.replace(arch, rope="norm")}
    monkeypatch.setattr(gguf_llama_module, "GGUF_ARCHITECTURES", wrong)
    assert relative_error(load(path).logits(IDS), reference(reference_model, IDS)) > 1e-2


def test_a_tied_qwen2_gguf_without_output_weight_uses_the_embedding(tmp_path):
    reference_model, path = convert(tmp_path, "qwen2", tie=True)
    model = load(path)
    assert model.output_weight is model.embedding
    assert relative_error(model.logits(IDS), reference(reference_model, IDS)) <= RTOL


@pytest.fixture
def no_dequantization(monkeypatch):
    """Any dequantization fails the test: the refusals must come before it."""
    def forbidden(*args, **kwargs):
        raise AssertionError("a tensor was dequantized before the file was refused")

    monkeypatch.setattr(gguf.quants, "dequantize", forbidden)


SUPPORTED = ("supported: 'llama', 'qwen2', 'qwen3', 'phi3', 'gemma2', 'gemma3', 'olmo2', "
             "'granite'")


@pytest.mark.parametrize("arch, lacks", [
    ("phi2", "Phi-2's LayerNorm with biases, parallel attention and MLP"),
    ("gemma3n", "Gemma 3n's per-layer input embeddings"),
    ("olmoe", "OLMoE's mixture-of-experts MLP"), ("gpt2", None), ("mamba", None)])
def test_other_architectures_are_refused_by_name_before_any_dequantization(
        tmp_path, no_dequantization, arch, lacks):
    path = tmp_path / f"{arch}.gguf"
    writer = gguf.GGUFWriter(str(path), arch)
    writer.add_block_count(1)
    writer.add_tensor("token_embd.weight", np.ones((4, 8), np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with pytest.raises(ValueError) as info:
        load_pretrained(path)
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"the model file {path} has architecture "
                                                      f"'{arch}', which the model does not "
                                                      "implement")
    assert message.endswith(SUPPORTED) and (lacks is None or f"(it lacks {lacks}" in message)


@pytest.mark.parametrize("kind, change, extra, match", [
    ("qwen2", [lambda w: w.add_rope_scaling_type(gguf.RopeScalingType.YARN)], None,
     "sets qwen2.rope.scaling.type='yarn'"),
    ("qwen3", [lambda w: w.add_rope_scaling_factor(4.0)], None,
     "sets qwen3.rope.scaling.factor=4.0"),
    ("qwen3", [lambda w: w.add_rope_dimension_count(16)], None,
     "sets qwen3.rope.dimension_count=16 .supported: the head dimension 32"),
    ("qwen2", [lambda w: w.add_expert_count(4)], None, "sets qwen2.expert_count=4"),
    ("qwen2", [lambda w: w.add_causal_attention(False)], None, "qwen2.attention.causal=False"),
    ("qwen2", None, {"rope_freqs.weight": np.ones(8, np.float32)},
     r"unexpected \['rope_freqs.weight'\]"),
    ("llama3", None, {"rope_freqs.weight": np.ones(8, np.float32)},
     r"tensor 'rope_freqs.weight' of shape \(8,\), expected \(16,\)"),
])
def test_unimplemented_settings_are_refused_before_any_dequantization(
        tmp_path, kind, change, extra, match, no_dequantization):
    _, path = convert(tmp_path, kind, change_meta=change, extra_tensors=extra)
    with pytest.raises(ValueError, match=f"{kind}.gguf .*{match}"):
        load_pretrained(path)


def test_non_positive_rope_freqs_are_refused(tmp_path):
    factors = np.ones(16, np.float32)
    factors[3] = 0.0
    _, path = convert(tmp_path, "llama3", extra_tensors={"rope_freqs.weight": factors})
    with pytest.raises(ValueError, match="rope_freqs.weight factors that are not all positive"):
        load(path)
