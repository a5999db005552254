"""``load_pretrained(path.gguf)`` of Phi-3, Gemma-2, Gemma-3, OLMo-2 and Granite GGUF files, held
against transformers' own forward of the checkpoint they were converted from.

Each test makes a tiny random transformers model, saves it (float32 safetensors) and writes the
GGUF file itself with the ``gguf`` package's ``GGUFWriter`` the way llama.cpp's
``convert_hf_to_gguf.py`` (ggml-org/llama.cpp, read at commit 0024aa74) writes it with
``--outtype f32``, its steps written out below, one function per converter method:

* ``TextModel.set_gguf_parameters`` (:func:`text_model_parameters`; Gemma-3, OLMo-2 and, through
  ``LlamaModel``, Granite call it): sizes, the full-attention layers' RoPE base (and a linear
  scaling type and factor), the sliding layers' base as ``rope.freq_base_swa``, the RMSNorm
  epsilon, ``head_dim`` as key and value length.
* ``Phi3MiniModel.set_gguf_parameters`` / ``generate_extra_tensors`` (:func:`phi3_parameters`):
  no call to the base class; the original context, the rotary dimension, the sliding window
  (0 for none); for LongRoPE the attention factor and the ``rope_factors_long/short`` tensors.
* ``Gemma2Model.set_gguf_parameters`` (:func:`gemma2_parameters`): no call to the base class, so
  no RoPE base (llama.cpp's default 10000, transformers' Gemma-2 default); the two soft caps and
  the sliding window.
* ``Gemma3Model.set_gguf_parameters`` (:func:`gemma3_parameters`): the base class's keys, then
  its own (the final cap only when set, the sliding window unless the pattern is 1).
* ``LlamaModel.set_gguf_parameters`` and ``GraniteModel.set_gguf_parameters``
  (:func:`granite_parameters`): ``head_dim`` dropped, the vocabulary size and rotary dimension,
  the four multipliers under llama.cpp's names (``attention.scale``, ``embedding_scale``,
  ``residual_scale``, ``logit_scale``).
* ``modify_tensors`` (:func:`converted_tensors`): the names of ``gguf.TensorNameMap``; Gemma-2 and
  Gemma-3 add 1 to every ``norm.weight`` (``q_norm``/``k_norm`` included) and Gemma-2 drops
  ``lm_head``; Granite (``LlamaModel.modify_tensors``, ``undo_permute``) permutes the rows of
  ``q_proj``/``k_proj`` for llama.cpp's NORM rope; Phi-3, Gemma and OLMo-2 are NEOX and keep
  them (``llama_model_rope_type`` in ``src/llama-model.cpp``).

The error is ``max |Δ logit| / max |logit|`` against transformers' float64 eager forward, held to
``RTOL = 1e-5``; transformers' float32 RoPE angles, RMSNorm and softmax are its floor (Gemma's
higher: its RMSNorm runs in float32 on embeddings scaled by √d), as in
``test_hf_architectures.py``.
"""

import dataclasses
import math

import numpy as np
import pytest

from sia_theory.attention import RoPE
from sia_theory.models import gguf_llama as gguf_llama_module
from sia_theory.models import load_pretrained
from sia_theory.models.llama import LayerDefault
from tests.models.transformers_reference import (
    TINY,
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
LONGROPE = {"rope_type": "longrope", "rope_theta": 500.0,
            "short_factor": [1.0, 1.1, 1.3, 1.6, 2.0, 2.5, 3.0, 3.5],
            "long_factor": [1.0, 1.5, 2.5, 4.0, 6.0, 8.0, 11.0, 14.0]}
GEMMA = {"head_dim": 32, "query_pre_attn_scalar": 32, "sliding_window": 6,
         "final_logit_softcapping": 3.0, "tie_word_embeddings": True}
GEMMA3_ROPE = {"full_attention": {"rope_type": "default", "rope_theta": 500.0},
               "sliding_attention": {"rope_type": "default", "rope_theta": 40.0}}
CASES = {  # name -> (GGUF architecture, config class, model class, what it adds to TINY)
    "phi3": ("phi3", "Phi3Config", "Phi3ForCausalLM", {"sliding_window": 6}),
    "phi3 longrope": ("phi3", "Phi3Config", "Phi3ForCausalLM", {
        "rope_parameters": LONGROPE, "original_max_position_embeddings": 16}),
    # the file carries no RoPE base (Gemma2Model writes none): llama.cpp's and transformers'
    # default 10000; query_pre_attn_scalar = head_dim, what llama.cpp applies below 46 blocks
    "gemma2": ("gemma2", "Gemma2Config", "Gemma2ForCausalLM", {
        **GEMMA, "attn_logit_softcapping": 2.0,
        "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0}}),
    # 7 layers: sliding 0-4 and 6, full 5 (the pattern of 6 llama.cpp and transformers share)
    "gemma3": ("gemma3", "Gemma3TextConfig", "Gemma3ForCausalLM", {
        **GEMMA, "num_hidden_layers": 7, "rope_parameters": GEMMA3_ROPE}),
    "gemma3 linear": ("gemma3", "Gemma3TextConfig", "Gemma3ForCausalLM", {
        **GEMMA, "num_hidden_layers": 7, "rope_parameters": {
            **GEMMA3_ROPE, "full_attention": {"rope_type": "linear", "factor": 8.0,
                                              "rope_theta": 500.0}}}),
    "olmo2": ("olmo2", "Olmo2Config", "Olmo2ForCausalLM", {}),
    "granite": ("granite", "GraniteConfig", "GraniteForCausalLM", {
        "embedding_multiplier": 3.0, "residual_multiplier": 0.4, "logits_scaling": 2.5,
        "attention_multiplier": 0.07}),
}
IDS = [int(i) for i in np.random.default_rng(1).integers(0, 128, 16)]
LONG = [int(i) for i in np.random.default_rng(2).integers(0, 128, 40)]


def checkpoint(folder, name, seed=0, **change):
    """A random ``name`` model saved by transformers into ``folder`` (float32 safetensors;
    Gemma's stored norm weights near 0, its gains ``1 + w`` near 1); returns the float64 eager
    model, the reference."""
    _, config_cls, model_cls, extra = CASES[name]
    config = getattr(transformers, config_cls)(**{**TINY, **extra, **change})
    return saved_random_model(folder, config, getattr(transformers, model_cls), seed,
                              gain_centre=0.0 if "Gemma" in model_cls else 1.0)


def text_model_parameters(writer, hp):
    """convert_hf_to_gguf.py, ``TextModel.set_gguf_parameters``, for the keys these configs
    have (no experts, causal)."""
    writer.add_block_count(hp["num_hidden_layers"])
    writer.add_context_length(hp["max_position_embeddings"])
    writer.add_embedding_length(hp["hidden_size"])
    writer.add_feed_forward_length(hp["intermediate_size"])
    writer.add_head_count(hp["num_attention_heads"])
    writer.add_head_count_kv(hp["num_key_value_heads"])
    rope = hp["rope_parameters"]
    params = rope.get("full_attention", rope)  # "Handle sliding_attention similarly": not yet
    if params.get("rope_type") == "linear" and params.get("factor") is not None:
        writer.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)
        writer.add_rope_scaling_factor(params["factor"])
    if params.get("rope_theta") is not None:
        writer.add_rope_freq_base(params["rope_theta"])
    if (local := rope.get("sliding_attention", {}).get("rope_theta")) is not None:
        writer.add_rope_freq_base_swa(local)
    writer.add_layer_norm_rms_eps(hp["rms_norm_eps"])
    if hp.get("head_dim") is not None:
        writer.add_key_length(hp["head_dim"])
        writer.add_value_length(hp["head_dim"])
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)


def phi3_parameters(writer, hp):
    """convert_hf_to_gguf.py, ``Phi3MiniModel.set_gguf_parameters`` (it does not call
    ``TextModel``'s) and ``generate_extra_tensors``, whose tensors it returns. The converter
    reads LongRoPE from ``hparams["rope_scaling"]``, transformers 4.x's name, which shipped
    Phi-3 files were converted with; transformers 5 names the dict ``rope_parameters`` (the
    converter at this commit would then write no factors), so the dict is given under the old
    name here."""
    n_embd, n_head = hp["hidden_size"], hp["num_attention_heads"]
    max_pos, orig = hp["max_position_embeddings"], hp["original_max_position_embeddings"]
    rope_dims = int(hp.get("partial_rotary_factor", 1.0) * n_embd) // n_head
    writer.add_context_length(max_pos)
    writer.add_rope_scaling_orig_ctx_len(orig)
    writer.add_embedding_length(n_embd)
    writer.add_feed_forward_length(hp["intermediate_size"])
    writer.add_block_count(hp["num_hidden_layers"])
    writer.add_head_count(n_head)
    writer.add_head_count_kv(hp["num_key_value_heads"])
    writer.add_layer_norm_rms_eps(hp["rms_norm_eps"])
    writer.add_rope_dimension_count(rope_dims)
    writer.add_rope_freq_base(hp["rope_parameters"]["rope_theta"])
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_sliding_window(hp.get("sliding_window") or 0)  # 0: none (Phi-4)
    rope_scaling = hp["rope_parameters"] if hp["rope_parameters"]["rope_type"] == "longrope" \
        else None  # hparams["rope_scaling"] of a transformers 4.x config
    if rope_scaling is None:
        return {}
    scale = max_pos / orig
    attn_factor = math.sqrt(1 + math.log(scale) / math.log(orig)) if scale > 1.0 else 1.0
    writer.add_rope_scaling_attn_factors(attn_factor)
    return {"rope_factors_long.weight": np.array(rope_scaling["long_factor"], np.float32),
            "rope_factors_short.weight": np.array(rope_scaling["short_factor"], np.float32)}


def gemma2_parameters(writer, hp):
    """convert_hf_to_gguf.py, ``Gemma2Model.set_gguf_parameters`` (no call to ``TextModel``'s:
    no RoPE base)."""
    writer.add_context_length(hp["max_position_embeddings"])
    writer.add_embedding_length(hp["hidden_size"])
    writer.add_block_count(hp["num_hidden_layers"])
    writer.add_feed_forward_length(hp["intermediate_size"])
    writer.add_head_count(hp["num_attention_heads"])
    writer.add_head_count_kv(hp.get("num_key_value_heads", hp["num_attention_heads"]))
    writer.add_layer_norm_rms_eps(hp["rms_norm_eps"])
    writer.add_key_length(hp["head_dim"])
    writer.add_value_length(hp["head_dim"])
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_attn_logit_softcapping(hp["attn_logit_softcapping"])
    writer.add_final_logit_softcapping(hp["final_logit_softcapping"])
    writer.add_sliding_window(hp["sliding_window"])
    return {}


def gemma3_parameters(writer, hp):
    """convert_hf_to_gguf.py, ``Gemma3Model.set_gguf_parameters``: ``TextModel``'s keys, then
    its own (overwriting some with the same values)."""
    text_model_parameters(writer, hp)
    writer.add_context_length(hp.get("max_position_embeddings", 131072))
    writer.add_head_count(hp.get("num_attention_heads", 8))
    writer.add_layer_norm_rms_eps(hp.get("rms_norm_eps", 1e-6))
    writer.add_key_length(hp.get("head_dim", 256))
    writer.add_value_length(hp.get("head_dim", 256))
    rope = hp["rope_parameters"]
    writer.add_rope_freq_base(rope.get("full_attention", rope).get("rope_theta", 1_000_000.0))
    assert hp.get("attn_logit_softcapping") is None  # "removed in Gemma3"
    if final := hp.get("final_logit_softcapping"):
        writer.add_final_logit_softcapping(final)
    if hp.get("sliding_window_pattern") != 1:
        writer.add_sliding_window(hp["sliding_window"])
    writer.add_head_count_kv(hp.get("num_key_value_heads", 4))
    return {}


def olmo2_parameters(writer, hp):
    """convert_hf_to_gguf.py, ``Olmo2Model.set_gguf_parameters``: ``TextModel``'s keys (an
    OLMo-2 config has no ``sliding_window``)."""
    text_model_parameters(writer, hp)
    assert "sliding_window" not in hp
    return {}


def granite_parameters(writer, hp):
    """convert_hf_to_gguf.py, ``GraniteModel.set_gguf_parameters``: ``head_dim`` popped, then
    ``LlamaModel``'s (``TextModel``'s, the vocabulary size, the rotary dimension), then each
    multiplier under its llama.cpp name when it is not 0."""
    hp.pop("head_dim", None)
    text_model_parameters(writer, hp)
    writer.add_vocab_size(hp["vocab_size"])
    writer.add_rope_dimension_count(hp["hidden_size"] // hp["num_attention_heads"])
    for value, add in ((hp.get("attention_multiplier"), writer.add_attention_scale),
                       (hp.get("embedding_multiplier"), writer.add_embedding_scale),
                       (hp.get("residual_multiplier"), writer.add_residual_scale),
                       (hp.get("logits_scaling"), writer.add_logit_scale)):
        if value:
            add(value)
    return {}


PARAMETERS = {"phi3": phi3_parameters, "gemma2": gemma2_parameters,
              "gemma3": gemma3_parameters, "olmo2": olmo2_parameters,
              "granite": granite_parameters}


def permute(weights, n_head, n_head_kv):
    """convert_hf_to_gguf.py, ``LlamaModel.permute``."""
    if n_head_kv is not None and n_head != n_head_kv:
        n_head = n_head_kv
    return (weights.reshape(n_head, 2, weights.shape[0] // n_head // 2, *weights.shape[1:])
            .swapaxes(1, 2).reshape(weights.shape))


def converted_tensors(arch, hp, weights):
    """The converter's ``modify_tensors`` for ``arch`` (module docstring), as
    ``{GGUF name: float32 array}``."""
    names = gguf.get_tensor_name_map({v: k for k, v in gguf.MODEL_ARCH_NAMES.items()}[arch],
                                     hp["num_hidden_layers"])
    heads, kv_heads = hp["num_attention_heads"], hp["num_key_value_heads"]
    out = {}
    for name, data in weights.items():
        if arch == "gemma2" and name == "lm_head.weight":
            continue  # "lm_head is not used in llama.cpp"
        if arch in ("gemma2", "gemma3") and name.endswith("norm.weight"):
            data = data + np.float32(1)  # Gemma2Model / Gemma3Model.modify_tensors
        if arch == "granite" and name.endswith(("q_proj.weight", "q_proj.bias")):
            data = permute(data, heads, heads)
        if arch == "granite" and name.endswith(("k_proj.weight", "k_proj.bias")):
            data = permute(data, heads, kv_heads)
        out[names.get_name(name, try_suffixes=(".weight", ".bias"))] = data
    return out


def write_gguf(folder, arch, path, change_meta=(), extra_tensors=None, drop=()):
    """The GGUF file llama.cpp's converter writes for the checkpoint in ``folder`` (module
    docstring); ``change_meta`` adds to the writer, ``extra_tensors`` adds tensors and ``drop``
    leaves some out, to make files the loader must refuse."""
    hp = transformers.AutoConfig.from_pretrained(folder).to_dict()  # ModelBase.load_hparams
    writer = gguf.GGUFWriter(str(path), arch)
    tensors = PARAMETERS[arch](writer, hp)
    writer.add_tokenizer_model("gpt2")  # a byte-level BPE vocabulary: ids only in these tests
    writer.add_tokenizer_pre("default")
    writer.add_token_list([f"t{i}" for i in range(hp["vocab_size"])])
    writer.add_token_types([1] * hp["vocab_size"])
    for add in change_meta:
        add(writer)
    tensors.update(converted_tensors(arch, hp, load_file(str(folder / "model.safetensors"))))
    tensors.update(extra_tensors or {})
    for name, data in tensors.items():
        if name not in drop:
            writer.add_tensor(name, np.ascontiguousarray(data, np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def convert(tmp_path, name, change=None, **write):
    """``(reference model, GGUF path)`` of a fresh ``name`` checkpoint (``change``: config keys;
    ``write``: the keywords of :func:`write_gguf`)."""
    reference_model = checkpoint(tmp_path / "hf", name, **(change or {}))
    arch = CASES[name][0]
    return reference_model, write_gguf(tmp_path / "hf", arch, tmp_path / f"{arch}.gguf", **write)


load = load_without_tokenizer


@pytest.mark.parametrize("name", sorted(CASES))
def test_gguf_logits_match_transformers_forward(tmp_path, name):
    """At 16 / 40 tokens (40: past the sliding windows of 6 and Phi-3's original context of 16),
    float64. Measured (transformers 5.24.0, torch CPU), relative (max |Δ logit|) at 16 / 40:
    gemma2 2.4e-7 / 3.2e-7 (9.1e-7), gemma3 3.2e-7 / 1.1e-6 (3.1e-6), gemma3 linear 3.2e-7 /
    1.1e-6 (3.1e-6), granite 1.1e-7 / 1.0e-7 (1.7e-7), olmo2 2.3e-7 / 6.0e-7 (2.4e-6), phi3
    2.0e-7 / 4.0e-7 (1.6e-6), phi3 longrope 1.7e-7 / 6.2e-7 (2.4e-6): transformers' float32
    floor (module docstring; :func:`test_float64_reference_agrees_to_rounding`). The model in
    float32 (the default dtype) at 40 tokens: 4.3e-7 (granite) to 2.1e-6 (gemma3 linear), held
    to 3e-5."""
    reference_model, path = convert(tmp_path, name)
    model = load(path)
    for ids in (IDS, LONG):
        error = relative_error(model.logits(ids), reference(reference_model, ids))
        assert error <= RTOL, (name, len(ids), error)
    got = load(path, np.float32).logits(LONG)  # the default dtype
    assert got.dtype == np.float32
    assert relative_error(got.astype(np.float64), reference(reference_model, LONG)) <= 3e-5


@pytest.mark.parametrize("name", ["gemma2", "gemma3", "granite", "olmo2", "phi3"])
def test_float64_reference_agrees_to_rounding(tmp_path, name, monkeypatch):
    """transformers' forward with its float32 RMSNorm, RoPE tables and softmax computed in
    float64 instead (Gemma's gain ``1 + w`` still formed in float32, as the converter forms it):
    measured 7.5e-15 (gemma2), 1.1e-14 (gemma3), 1.8e-12 (olmo2), 1.7e-13 (phi3) and 1.4e-8
    (granite) relative at 40 tokens, so the errors above are transformers' float32 rounding;
    Granite's remainder is its multipliers stored as float32 metadata."""
    softmax = torch.nn.functional.softmax
    monkeypatch.setattr(torch.nn.functional, "softmax",
                        lambda x, dim=None, dtype=None, **kw: softmax(x, dim=dim))
    reference_model, path = convert(tmp_path, name)

    def norm64(self, x):
        eps = getattr(self, "variance_epsilon", getattr(self, "eps", None))
        gain = (1.0 + self.weight.float()).double() if type(self).__name__.startswith(
            "Gemma") else self.weight
        return gain * x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps)

    def rope64(self, x, position_ids, layer_type=None):
        rope = self.config.rope_parameters
        theta = (rope[layer_type] if layer_type else rope)["rope_theta"]
        dim = self.config.head_dim if layer_type else 2 * self.inv_freq.numel()
        angles = position_ids[0, :, None].double() * theta ** (
            -torch.arange(0, dim, 2, dtype=torch.float64) / dim)  # (T, D/2)
        emb = torch.cat([angles, angles], -1)[None]  # (1, T, D)
        return emb.cos(), emb.sin()

    for module in reference_model.modules():
        kind = type(module).__name__
        if kind.endswith("RMSNorm"):
            module.forward = norm64.__get__(module)
        elif kind.endswith("RotaryEmbedding"):
            module.forward = rope64.__get__(module)
    error = relative_error(load(path).logits(LONG), reference(reference_model, LONG))
    assert error <= 1e-7


def test_what_the_files_were_read_as(tmp_path):
    """Each file's per-layer scheme and structure, read from its metadata and tensors: Phi-3's
    window on every layer and LongRoPE factors with the converter's attention factor (a
    temperature on the logits, its square); Gemma-2's alternating window and two caps; Gemma-3's
    five sliding layers to one full, the sliding ones with their own base (40) and without the
    full layers' linear scaling; Granite's multipliers (the q·k scale 0.07 a temperature
    0.07·√16 on S = q·k/√D)."""
    from sia_theory.attention import LinearRoPE, LongRoPE
    from sia_theory.zoo import Temperature

    model = load(convert(tmp_path / "p", "phi3")[1])
    assert model.config.sliding_window == 6 and model.config.layer_types is None
    model = load(convert(tmp_path / "pl", "phi3 longrope")[1])
    position, law = model.layer_defaults[0]
    assert isinstance(position, LongRoPE) and position.original_max_position_embeddings == 16
    for which in ("long_factor", "short_factor"):  # stored as float32
        assert getattr(position, which) == tuple(np.float32(LONGROPE[which]).tolist())
    assert isinstance(law, Temperature)
    assert law.c == pytest.approx(1 + math.log(4) / math.log(16), rel=1e-6)  # √(...)²
    model = load(convert(tmp_path / "g2", "gemma2")[1])
    c = model.config
    assert (c.sliding_window, c.layer_types, c.attn_softcap, c.final_softcap) == (
        6, ("sliding_attention", "full_attention"), 2.0, 3.0)
    assert c.embedding_scale == 8.0 and model.output_weight is model.embedding
    assert model.default_score_mod is None  # query_pre_attn_scalar = head_dim: 1/√D
    model = load(convert(tmp_path / "g3", "gemma3 linear")[1])
    assert model.config.layer_types == ("sliding_attention",) * 5 + (
        "full_attention", "sliding_attention")
    assert [d.position for d in model.layer_defaults] == [RoPE(40.0)] * 5 + [
        LinearRoPE(8.0, 500.0), RoPE(40.0)]
    assert model.config.attn_softcap is None and model.config.final_softcap == 3.0
    model = load(convert(tmp_path / "gr", "granite")[1])
    c = model.config
    assert (c.embedding_scale, c.residual_scale, c.logit_divisor) == pytest.approx(
        (3.0, 0.4, 2.5), rel=1e-7)  # float32 metadata
    assert model.default_score_mod.c == pytest.approx(0.28, rel=1e-7)


@pytest.mark.parametrize("name, blocks", [("gemma2", 46), ("gemma3", 62)])
def test_gemma_27b_block_counts_take_the_27b_query_scale(tmp_path, name, blocks):
    """The file carries no ``query_pre_attn_scalar``: llama.cpp takes ``1/√(d_model/heads)`` for
    the block counts of Gemma-2-27B (46) and Gemma-3-27B (62), ``1/√head_dim`` otherwise
    (``hparams.f_attention_scale``). A 46- or 62-block checkpoint with ``query_pre_attn_scalar
    = 64/4 = 16`` (≠ head_dim 32, as in the 27B models: 144 and 168 ≠ 128) is read with it:
    measured 1.1e-6 (gemma2) and 1.4e-6 (gemma3) relative at 16 tokens. Negative control: the
    same file run with ``1/√head_dim`` misses by far more than RTOL (measured 0.46, 0.80)."""
    from sia_theory.transforms import NoScale
    from sia_theory.zoo import Temperature

    reference_model, path = convert(tmp_path, name, {"num_hidden_layers": blocks,
                                                     "query_pre_attn_scalar": 16})
    model = load(path)
    assert model.default_score_mod == Temperature(2 ** 0.5)  # √(head_dim / 16) on q·k/√D
    want = reference(reference_model, IDS)
    error = relative_error(model.logits(IDS), want)
    assert error <= RTOL
    assert relative_error(model.logits(IDS, score_mod=NoScale()), want) > 1e-2


def _add_one_to_every_norm(model):
    """What a loader adding Gemma's ``1 + w`` to the converted gains would run."""
    model.output_norm = model.output_norm + 1
    for layer in model.layers:
        for part in ("attn_norm", "ffn_norm", "post_attn_norm", "post_ffn_norm", "q_norm",
                     "k_norm"):
            if getattr(layer, part) is not None:
                setattr(layer, part, getattr(layer, part) + 1)


@pytest.mark.parametrize("name, wrong", [
    ("phi3", "gate and up swapped"), ("phi3", "no window"),
    ("phi3 longrope", "plain RoPE"),
    ("gemma2", "norm offset added again"), ("gemma2", "no attention cap"),
    ("gemma3", "norm offset added again"), ("gemma3", "one RoPE base"),
    ("gemma3 linear", "full layers unscaled"),
    ("olmo2", "NORM row order"),
    ("granite", "NEOX row order"), ("granite", "no multipliers"),
])
def test_wrong_readings_miss_transformers(tmp_path, monkeypatch, name, wrong):
    """Negative controls, at 40 tokens: each piece of the reading changed misses transformers by
    far more than RTOL, so the comparisons above can fail. The row orders: an OLMo-2 (NEOX) file
    read with the NORM rows llama.cpp's converter gives LLaMA, a Granite (NORM) file read as
    NEOX (its permuted rows permuted again). Measured (relative): phi3 gate and up swapped 0.88,
    no window 1.2; phi3 LongRoPE factors and attention factor ignored 1.1; gemma2 norm offset
    added again 1.2, no attention cap 0.33; gemma3 norm offset added again 1.6, one RoPE base
    0.62; gemma3 linear scaling left off the full layer 0.25; olmo2 NORM rows 1.2; granite NEOX
    rows 0.14, no multipliers 2.1."""
    reference_model, path = convert(tmp_path, name)
    want = reference(reference_model, LONG)
    if wrong.endswith("row order"):  # the other rope type's rows: llama.cpp's permutation
        arch = CASES[name][0]      # applied to a NEOX file, or not undone for a NORM one
        spec = gguf_llama_module.GGUF_ARCHITECTURES[arch]
        monkeypatch.setitem(gguf_llama_module.GGUF_ARCHITECTURES, arch, dataclasses.replace(
            spec, rope="norm" if spec.rope == "neox" else "neox"))
    model = load(path)
    c = model.config
    if wrong == "gate and up swapped":  # ffn_up's halves the other way round
        for layer in model.layers:
            layer.w_gate_up = np.ascontiguousarray(np.concatenate(
                [layer.w_gate_up[:, c.ffn:], layer.w_gate_up[:, :c.ffn]], axis=1))
    elif wrong == "no window":
        model.config = dataclasses.replace(c, sliding_window=None)
    elif wrong == "plain RoPE":  # the factor tensors and attention factor ignored
        model.layer_defaults = (LayerDefault(RoPE(500.0)),) * c.n_layers
    elif wrong == "norm offset added again":
        _add_one_to_every_norm(model)
    elif wrong == "no attention cap":
        model.config = dataclasses.replace(c, attn_softcap=None)
    elif wrong == "one RoPE base":  # gemma3.rope.freq_base_swa ignored
        model.default_position = RoPE(500.0)
    elif wrong == "full layers unscaled":
        model.layer_defaults = tuple(d._replace(position=RoPE(500.0)) if i == 5 else d
                                     for i, d in enumerate(model.layer_defaults))
    elif wrong == "no multipliers":
        model.config = dataclasses.replace(c, embedding_scale=1.0, residual_scale=1.0,
                                           logit_divisor=1.0)
    error = relative_error(model.logits(LONG), want)
    assert error > 1e-3, error


@pytest.mark.parametrize("name", ["gemma3", "phi3 longrope"])
def test_kv_cache_decoding_matches_transformers_decoding(tmp_path, name):
    """Prefill 9 tokens, then one at a time to 40: Gemma-3's windows move and its layers keep
    their own bases; Phi-3's LongRoPE switches to the long factors past 16 (the keys cached
    before keep the short ones, as in transformers' own cached decoding). Measured 1.1e-6
    (gemma3), 7.0e-7 (phi3 longrope) relative."""
    reference_model, path = convert(tmp_path, name)
    model = load(path)
    with torch.no_grad():
        out = reference_model(torch.tensor([LONG[:9]]), use_cache=True)
        want, cache = [out.logits[0, -1].numpy()], out.cache
        for token in LONG[9:]:
            out = reference_model(torch.tensor([[token]]), cache=cache, use_cache=True)
            want.append(out.logits[0, -1].numpy())
            cache = out.cache
    state = model.prefill(LONG[:9])
    got = [state.last_logits] + [model.continue_(state, [t])[0] for t in LONG[9:]]
    error = relative_error(np.array(got), np.array(want))
    assert error <= RTOL


@pytest.fixture
def no_dequantization(monkeypatch):
    """Any dequantization fails the test: the refusals must come before it."""
    def forbidden(*args, **kwargs):
        raise AssertionError("a tensor was dequantized before the file was refused")

    monkeypatch.setattr(gguf.quants, "dequantize", forbidden)


@pytest.mark.parametrize("name, change, extra, drop, match", [
    ("olmo2", [lambda w: w.add_sliding_window(4096)], None, (),
     r"sets olmo2\.attention\.sliding_window=4096 \(OLMo 3's sliding layers"),
    ("gemma3", [lambda w: w.add_rope_scaling_type(gguf.RopeScalingType.YARN)], None, (),
     r"sets gemma3\.rope\.scaling\.type='yarn' \(supported: none, linear\)"),
    ("gemma2", [lambda w: w.add_rope_scaling_type(gguf.RopeScalingType.LINEAR),
                lambda w: w.add_rope_scaling_factor(8.0)], None, (),
     r"sets gemma2\.rope\.scaling\.type='linear' \(supported: none\)"),
    ("phi3", [lambda w: w.add_rope_scaling_type(gguf.RopeScalingType.LONGROPE)], None, (),
     r"sets phi3\.rope\.scaling\.type='longrope' \(supported: none, longrope with "
     r"rope_factors_long/short tensors\)"),
    ("phi3 longrope", None, None, ("rope_factors_short.weight",),
     r"has rope_factors_long\.weight without rope_factors_short\.weight: LongRoPE needs both"),
    ("phi3 longrope", [lambda w: w.kv_data[0].pop("phi3.rope.scaling.original_context_length")],
     None, (), r"has LongRoPE factor tensors without phi3\.rope\.scaling\.original_context"),
    ("phi3 longrope", None, {"rope_factors_long.weight": np.ones(4, np.float32)}, (),
     r"tensor 'rope_factors_long\.weight' of shape \(4,\), expected \(8,\)"),
    ("phi3", [lambda w: w.add_rope_dimension_count(8)], None, (),
     r"sets phi3\.rope\.dimension_count=8 \(supported: the head dimension 16\)"),
    ("granite", [lambda w: w.add_rope_scaling_finetuned(False)], None, (),
     r"sets granite\.rope\.scaling\.finetuned=False \(Granite without RoPE"),
    ("granite", [lambda w: w.add_expert_count(4)], None, (), r"sets granite\.expert_count=4"),
    ("gemma2", None, {"output.weight": np.ones((128, 64), np.float32)}, (),
     r"unexpected \['output\.weight'\]"),
    ("gemma2", [lambda w: w.add_attn_logit_softcapping(0.0)], None, (),
     r"metadata gemma2\.attn_logit_softcapping must be a finite real number > 0"),
    ("gemma3", [lambda w: w.add_sliding_window_pattern([True, False] * 3 + [True])], None, (),
     r"metadata gemma3\.attention\.sliding_window_pattern must be an integer >= 1"),
    ("olmo2", None, None, ("blk.1.attn_k_norm.weight",),
     r"2-block olmo2 model: missing \['blk\.1\.attn_k_norm\.weight'\]"),
])
def test_unimplemented_settings_are_refused_before_any_dequantization(
        tmp_path, name, change, extra, drop, match, no_dequantization):
    """Each refused with one line naming the file and the key or tensor."""
    _, path = convert(tmp_path, name, change_meta=change or (), extra_tensors=extra, drop=drop)
    with pytest.raises(ValueError, match=f"the model file {path}.*{match}") as info:
        load_pretrained(path)
    assert "\n" not in str(info.value)


def test_non_positive_longrope_factors_are_refused(tmp_path):
    factors = np.array(LONGROPE["long_factor"], np.float32)
    factors[2] = -1.0
    _, path = convert(tmp_path, "phi3 longrope",
                      extra_tensors={"rope_factors_long.weight": factors})
    with pytest.raises(ValueError, match="rope_factors_long.weight factors that are not all "
                       "positive"):
        load(path)

