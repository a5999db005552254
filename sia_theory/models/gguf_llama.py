"""Checking that a GGUF file is a model :class:`~.llama.LlamaModel` runs as written, and
building that model from the file's tensors.

A user's GGUF file (not the pinned registry model) is checked from its metadata and tensor
shapes alone, before any tensor is dequantized. Eight of llama.cpp's architectures
(``general.architecture``) are read, each from its own ``<arch>.*`` metadata keys
(:data:`GGUF_ARCHITECTURES`). The metadata is translated into the transformers config it stands
for (:func:`transformers_config`), and the model is built from that config as a Hugging Face
folder is (:func:`~.hf_folder.hf_config` for the structure, ``from_hf_config`` for each layer's
RoPE and logit law, :func:`~.hf_folder.hf_layer_schemes`), so each architecture's features and
per-layer scheme are defined once. What each file holds (llama.cpp's ``convert_hf_to_gguf.py``
and ``src/llama-model.cpp``, ggml-org/llama.cpp read at commit 0024aa74, and the hparams
loaders of its later ``src/models/<arch>.cpp``):

* ``llama`` (LLaMA 1–3, Mistral, SmolLM2, ...): the LLaMA graph (``token_embd``,
  ``output_norm``, optionally ``output``, and per block ``attn_norm``, ``attn_q/k/v``,
  ``attn_output``, ``ffn_norm``, ``ffn_gate/up/down``), and optionally Llama 3.x's
  ``rope_freqs.weight`` (below).
* ``qwen2``: the same, with the biases ``blk.<i>.attn_{q,k,v}.bias``.
* ``qwen3``: the same, with the per-head RMSNorm gains ``blk.<i>.attn_{q,k}_norm.weight`` and a
  head dimension of its own, ``qwen3.attention.key_length``.
* ``phi3``: Phi-3's fused ``attn_qkv`` (q, k, v rows) and ``ffn_up`` of ``2·ffn`` rows (the gate,
  then the up projection: llama.cpp's ``LLM_FFN_SWIGLU`` halves, ``Phi3MLP``'s ``chunk(2)``),
  split here; ``phi3.attention.sliding_window`` (0: none) on every layer, as transformers
  applies it (llama.cpp at present runs Phi-3 without it, warning that results may suffer);
  with LongRoPE (``Phi3MiniModel.generate_extra_tensors``) the tensors
  ``rope_factors_long.weight`` and ``rope_factors_short.weight`` (``head_dim/2`` each),
  ``phi3.rope.scaling.attn_factor`` and ``phi3.rope.scaling.original_context_length``, read as
  transformers' ``longrope`` (the short factors up to the original context, the long ones
  beyond, chosen by the length of the call as transformers chooses them; llama.cpp chooses once,
  by the context size it is run with).
* ``gemma2``: the sandwich norms (``attn_norm``, ``post_attention_norm``, ``ffn_norm``,
  ``post_ffw_norm``), GeGLU, the embedding × ``√d``, ``gemma2.attn_logit_softcapping`` (default
  50) and ``gemma2.final_logit_softcapping`` (default 30), ``gemma2.attention.sliding_window``
  (default 4096) on the layers ``i % p < p − 1`` (llama.cpp's ``set_swa_pattern``, ``p =
  gemma2.attention.sliding_window_pattern``, default 2: every other layer, the first sliding),
  the RoPE base ``gemma2.rope.freq_base`` (the converter writes none: 10000). The output is the
  token embedding (llama.cpp reads no ``output.weight`` for it).
* ``gemma3``: Gemma-2's layout with RMSNorm on each head of ``q`` and ``k``, no attention cap,
  the final cap only when ``gemma3.final_logit_softcapping`` is given, and sliding layers only
  when ``gemma3.attention.sliding_window`` is given and > 0, by the same rule with ``p =
  gemma3.attention.sliding_window_pattern`` (default 6: five sliding, one full); they rotate
  with their own base ``gemma3.rope.freq_base_swa`` (which ``TextModel.set_gguf_parameters``
  writes; default 10000, the base llama.cpp gave them before it read the key) and without the
  RoPE scaling of the full layers (linear: ``gemma3.rope.scaling.type = "linear"`` with
  ``gemma3.rope.scaling.factor``, Gemma-3 4B and up).
* ``olmo2``: no pre-norms, ``post_attention_norm`` and ``post_ffw_norm``, and ``q``/``k`` RMSNorm
  over the whole projection (``attn_q_norm`` of ``heads·head_dim``).
* ``granite``: the LLaMA graph with ``granite.embedding_scale``, ``granite.residual_scale``,
  ``granite.logit_scale`` (the logits divided by it) and ``granite.attention.scale`` (the scale
  on ``q·k``; absent or 0: ``1/√head_dim``, as llama.cpp reads it), and optionally
  ``rope_freqs.weight``.

**Gemma's norms and q·k scale.** ``convert_hf_to_gguf.py`` (``Gemma2Model.modify_tensors``,
``Gemma3Model.modify_tensors``) adds 1 to every tensor whose name ends in ``norm.weight`` (the
``1 + w`` of ``Gemma2RMSNorm``, ``q_norm``/``k_norm`` of Gemma-3 included), so the file holds the
gains themselves and nothing is added here. The file carries no ``query_pre_attn_scalar``:
llama.cpp scales ``q`` by ``1/√head_dim``, except for the 27B models it recognises by their
block count (Gemma-2: 46, Gemma-3: 62), where it takes ``1/√(d_model / heads)``
(``hparams.f_attention_scale``); the same rule is read here, as ``query_pre_attn_scalar``.

**Row order.** llama.cpp rotates by the rope type of the architecture
(``llama_model_rope_type`` in ``src/llama-model.cpp``): ``llama`` and ``granite`` are
``LLAMA_ROPE_TYPE_NORM`` (interleaved pairs ``(2i, 2i+1)``), for which ``convert_hf_to_gguf.py``
(``LlamaModel.permute``, which ``GraniteModel`` inherits) permutes the rows of each ``q``/``k``
head; ``qwen2``, ``qwen3``, ``phi3``, ``gemma2``, ``gemma3`` and ``olmo2`` are
``LLAMA_ROPE_TYPE_NEOX`` (half-split pairs ``(i, i + D/2)``, as Hugging Face rotates), and their
converter writes the rows unpermuted. :class:`~.llama.LlamaModel` un-permutes every ``q``/``k``
row (and bias and norm gain), so for a NEOX file :func:`gguf_model` first gives those rows
llama.cpp's permutation (:func:`~.hf_folder.to_gguf_rows`, as the Hugging Face loader does),
which the model undoes.

**rope_freqs.** For a Llama 3.x checkpoint (transformers ``rope_type = "llama3"``) the converter
(``LlamaModel.generate_extra_tensors``) writes no RoPE scaling metadata but the tensor
``rope_freqs.weight``, one factor ``f_i`` per frequency (``D/2`` of them), and llama.cpp passes it
to ``ggml_rope_ext`` as ``freq_factors``: frequency ``i`` rotates by ``θ_i / f_i``
(``ggml-cpu/ops.cpp``, ``ggml_rope_cache_init``: ``rope_yarn(theta/ff, ...)`` with
``ff = freq_factors[i0/2]``), ``θ_i = base^(−2i/D)``. The model then runs
:class:`~sia_theory.attention.rope_variants.LongRoPE` with ``short_factor = long_factor = f``
(frequencies ``1/(f_i·base^(2i/D))``, the same for every length) as its ``default_position``.

Refused, each with a one-line ``ValueError`` naming the file: any other architecture (naming it
and the supported ones; those close to LLaMA with what the model lacks for them,
:data:`UNIMPLEMENTED_ARCHITECTURES`); a setting the model does not implement (a RoPE scaling
type or factor other than Phi-3's LongRoPE tensors and Gemma-3's linear scaling, a rotary
dimension or value length other than the key length, experts, non-causal attention, OLMo's
sliding window, Granite without RoPE); a metadata value out of range (named by key);
``rope_freqs`` on an architecture llama.cpp does not read it for; and missing, extra or
misshapen tensors.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._infra.validate import check_int, check_real
from ..attention.rope_variants import LongRoPE
from .hf_folder import (
    ARCHITECTURES,
    hf_config,
    hf_layer_schemes,
    hf_shapes,
    layer_defaults,
    split_fused,
    to_gguf_rows,
)
from .llama import LlamaConfig, LlamaModel

__all__ = ["GGUFArchitecture", "GGUF_ARCHITECTURES", "UNIMPLEMENTED_ARCHITECTURES",
           "check_llama_gguf", "llama_tensor_shapes", "gguf_model", "transformers_config"]


@dataclass(frozen=True)
class GGUFArchitecture:
    """How a GGUF architecture maps to the transformers model it was converted from (module
    docstring).

    Parameters
    ----------
    rope : str
        llama.cpp's rope type for it, ``"norm"`` (the converter permuted the ``q``/``k`` rows)
        or ``"neox"`` (rows as in Hugging Face).
    model_type : str
        The transformers ``model_type`` (a key of :data:`~.hf_folder.ARCHITECTURES`) whose
        layout, tensors and per-layer scheme the file holds.
    rope_freqs : bool
        llama.cpp reads an optional ``rope_freqs.weight`` for it (LLaMA, Granite).
    """

    rope: str
    model_type: str = "llama"
    rope_freqs: bool = False


GGUF_ARCHITECTURES = {
    "llama": GGUFArchitecture("norm", "llama", rope_freqs=True),
    "qwen2": GGUFArchitecture("neox", "qwen2"),
    "qwen3": GGUFArchitecture("neox", "qwen3"),
    "phi3": GGUFArchitecture("neox", "phi3"),
    "gemma2": GGUFArchitecture("neox", "gemma2"),
    "gemma3": GGUFArchitecture("neox", "gemma3_text"),
    "olmo2": GGUFArchitecture("neox", "olmo2"),
    "granite": GGUFArchitecture("norm", "granite", rope_freqs=True),
}
"""``general.architecture`` → :class:`GGUFArchitecture`: the GGUF files :func:`check_llama_gguf`
accepts."""

UNIMPLEMENTED_ARCHITECTURES = {
    "phi2": "Phi-2's LayerNorm with biases, parallel attention and MLP, ungated GELU MLP and "
            "partial rotary dimensions",
    "gemma3n": "Gemma 3n's per-layer input embeddings and AltUp and LAuReL blocks",
    "phimoe": "PhiMoE's mixture-of-experts MLP",
    "olmoe": "OLMoE's mixture-of-experts MLP",
    "granitemoe": "Granite MoE's mixture-of-experts MLP",
}
"""Architectures close to those read that are refused with what the model lacks for them."""

_FACTORS = ("rope_factors_long.weight", "rope_factors_short.weight")  # Phi-3's LongRoPE


def _sliding_types(n_layers: int, period: int) -> list:
    """llama.cpp's ``llama_hparams::set_swa_pattern(period)``: layer ``i`` slides when
    ``i % period < period − 1`` (the last of each period is full), which is transformers'
    ``(i + 1) % period != 0``."""
    return ["sliding_attention" if i % period < period - 1 else "full_attention"
            for i in range(n_layers)]


def transformers_config(meta: dict, factors: tuple | None = None) -> dict:
    """The transformers config (a ``config.json`` dict) a GGUF file's metadata stands for, as
    llama.cpp reads the file (module docstring): the sizes, the RoPE of each layer type, the
    sliding window and its layers, the soft caps, Gemma's ``query_pre_attn_scalar`` and
    Granite's multipliers. ``factors``: Phi-3's ``(short, long)`` LongRoPE factor tensors, when
    the file has them. The metadata must have passed :func:`check_llama_gguf` (a missing
    required key is a ``KeyError``)."""
    arch = meta["general.architecture"]
    spec = GGUF_ARCHITECTURES[arch]

    def key(name, default=None):
        return meta.get(f"{arch}.{name}", default)

    heads = int(meta[f"{arch}.attention.head_count"])
    d_model = int(meta[f"{arch}.embedding_length"])
    n_layers = int(meta[f"{arch}.block_count"])
    head_dim = int(key("attention.key_length", d_model // heads))
    base = float(key("rope.freq_base", 10000.0))
    cfg = {"model_type": spec.model_type, "num_hidden_layers": n_layers, "hidden_size": d_model,
           "num_attention_heads": heads,
           "num_key_value_heads": int(key("attention.head_count_kv", heads)),
           "intermediate_size": int(meta[f"{arch}.feed_forward_length"]),
           "rms_norm_eps": float(meta[f"{arch}.attention.layer_norm_rms_epsilon"]),
           "max_position_embeddings": int(meta[f"{arch}.context_length"]),
           "vocab_size": len(meta["tokenizer.ggml.tokens"]), "head_dim": head_dim,
           "rope_parameters": {"rope_type": "default", "rope_theta": base}}
    if arch == "phi3":
        cfg["sliding_window"] = int(key("attention.sliding_window", 0)) or None
        original = key("rope.scaling.original_context_length")
        if original is not None:
            cfg["original_max_position_embeddings"] = int(original)
        if factors is not None:
            short, long = (np.asarray(f, np.float64).tolist() for f in factors)
            cfg["rope_parameters"] = {"rope_type": "longrope", "rope_theta": base,
                                      "short_factor": short, "long_factor": long}
            if key("rope.scaling.attn_factor") is not None:
                cfg["rope_parameters"]["attention_factor"] = float(key("rope.scaling.attn_factor"))
    elif arch in ("gemma2", "gemma3"):
        gemma2 = arch == "gemma2"
        window = int(key("attention.sliding_window", 4096 if gemma2 else 0))
        period = int(key("attention.sliding_window_pattern", 2 if gemma2 else 6))
        cfg["sliding_window"] = window or None
        cfg["layer_types"] = (_sliding_types(n_layers, period) if window
                              else ["full_attention"] * n_layers)
        big = n_layers == (46 if gemma2 else 62)  # llama.cpp's LLM_TYPE_27B
        cfg["query_pre_attn_scalar"] = d_model // heads if big else head_dim
        if gemma2:
            cfg["attn_logit_softcapping"] = float(key("attn_logit_softcapping", 50.0))
            cfg["final_logit_softcapping"] = float(key("final_logit_softcapping", 30.0))
        else:
            cfg["attn_logit_softcapping"] = None
            cfg["final_logit_softcapping"] = float(key("final_logit_softcapping", 0.0)) or None
        full = {"rope_type": "default", "rope_theta": base}
        factor = key("rope.scaling.factor")
        if not gemma2 and factor not in (None, 0, 1):  # linear, checked by _unimplemented
            full = {"rope_type": "linear", "factor": float(factor), "rope_theta": base}
        local = float(key("rope.freq_base_swa", base if gemma2 else 10000.0))
        cfg["rope_parameters"] = {"full_attention": full,
                                  "sliding_attention": {"rope_type": "default",
                                                        "rope_theta": local}}
    elif arch == "granite":
        cfg["attention_multiplier"] = float(key("attention.scale", 0.0)) or head_dim ** -0.5
        cfg["embedding_multiplier"] = float(key("embedding_scale", 0.0)) or 1.0
        cfg["residual_multiplier"] = float(key("residual_scale", 0.0)) or 1.0
        cfg["logits_scaling"] = float(key("logit_scale", 0.0)) or 1.0
    return cfg


def llama_tensor_shapes(config: LlamaConfig, architecture: str = "llama") -> dict:
    """Tensor name -> numpy shape ``(rows, cols)`` (``(n,)`` for a vector) of a GGUF file of
    ``architecture`` (a key of :data:`GGUF_ARCHITECTURES`) with ``config``, without the optional
    tensors: the untied ``output.weight`` ``(vocab, d_model)``, ``rope_freqs.weight`` (LLaMA,
    Granite) and Phi-3's ``rope_factors_long/short.weight`` ``(head_dim / 2,)``. The names are
    those of the transformers checkpoint's tensors (:func:`~.hf_folder.hf_shapes`) as
    ``gguf.TensorNameMap`` maps them; Phi-3's fused ``gate_up_proj`` is llama.cpp's ``ffn_up``."""
    model_type = GGUF_ARCHITECTURES[architecture].model_type
    shapes = {}
    for name, shape, _ in hf_shapes(config, model_type).values():
        if name != "output.weight":
            shapes[name.replace(".ffn_gate_up.", ".ffn_up.")] = shape
    return shapes


def _unimplemented(arch: str, meta: dict, head_dim: int, shapes: dict) -> str | None:
    """The first setting of the file the model does not implement, described, or ``None``."""
    scaling = meta.get(f"{arch}.rope.scaling.type")
    factor = meta.get(f"{arch}.rope.scaling.factor")
    factors = [name in shapes for name in _FACTORS]
    linear = arch == "gemma3" and scaling in (None, "linear")  # on the full layers
    allowed = ("none",) + (("linear",) if arch == "gemma3" else ()) + (
        ("longrope",) if arch == "phi3" and all(factors) else ())
    if scaling not in (None, *allowed):
        return (f"{arch}.rope.scaling.type={scaling!r} (supported: none"
                + (", linear" if arch == "gemma3" else "")
                + (", longrope with rope_factors_long/short tensors" if arch == "phi3" else "")
                + ")")
    if factor not in (None, 0.0, 1.0) and not linear:  # llama.cpp scales by it without a type
        return (f"{arch}.rope.scaling.factor={factor} (supported: none, 0 or 1"
                + ("; any with the linear type" if arch == "gemma3" else "") + ")")
    for key in (f"{arch}.rope.dimension_count", f"{arch}.attention.value_length"):
        if meta.get(key) not in (None, head_dim):
            return f"{key}={meta[key]} (supported: the head dimension {head_dim})"
    if meta.get(f"{arch}.expert_count"):
        return f"{arch}.expert_count={meta[f'{arch}.expert_count']} (a mixture of experts)"
    if meta.get(f"{arch}.attention.causal") is False:
        return f"{arch}.attention.causal=False (supported: causal attention)"
    if arch == "olmo2" and meta.get("olmo2.attention.sliding_window"):
        return (f"olmo2.attention.sliding_window={meta['olmo2.attention.sliding_window']} "
                "(OLMo 3's sliding layers; supported: none or 0)")
    if arch == "granite" and meta.get("granite.rope.scaling.finetuned") is False:
        return "granite.rope.scaling.finetuned=False (Granite without RoPE; supported: true)"
    return None


def _refuse_architecture(path, arch) -> ValueError:
    supported = ", ".join(map(repr, GGUF_ARCHITECTURES))
    lacks = (f" (it lacks {UNIMPLEMENTED_ARCHITECTURES[arch]})"
             if arch in UNIMPLEMENTED_ARCHITECTURES else "")
    return ValueError(f"the model file {path} has architecture {arch!r}, which the model does "
                      f"not implement{lacks}; supported: {supported}")


_SIZES = ("block_count", "embedding_length", "attention.head_count", "attention.head_count_kv",
          "feed_forward_length", "context_length")
# the other keys transformers_config reads, when present: (key, kind, bounds); 0 is llama.cpp's
# "absent" for the sliding window, Gemma-3's final cap, the scaling factor and Granite's scales
_OTHER_KEYS = {
    "phi3": (("attention.sliding_window", int, {"lo": 0}),
             ("rope.scaling.original_context_length", int, {"lo": 1}),
             ("rope.scaling.attn_factor", float, {"lo": 0, "lo_open": True})),
    "gemma2": (("attention.sliding_window", int, {"lo": 1}),
               ("attention.sliding_window_pattern", int, {"lo": 1}),
               ("attn_logit_softcapping", float, {"lo": 0, "lo_open": True}),
               ("final_logit_softcapping", float, {"lo": 0, "lo_open": True}),
               ("rope.freq_base_swa", float, {"lo": 1, "lo_open": True})),
    "gemma3": (("attention.sliding_window", int, {"lo": 0}),
               ("attention.sliding_window_pattern", int, {"lo": 1}),
               ("final_logit_softcapping", float, {"lo": 0}),
               ("rope.freq_base_swa", float, {"lo": 1, "lo_open": True}),
               ("rope.scaling.factor", float, {"lo": 0})),
    "granite": (("attention.scale", float, {"lo": 0}), ("embedding_scale", float, {"lo": 0}),
                ("residual_scale", float, {"lo": 0}), ("logit_scale", float, {"lo": 0})),
}


def _check_metadata(path, meta: dict, arch: str = "llama") -> None:
    """The values :func:`transformers_config` reads, where present: the sizes integers >= 1,
    the RMSNorm epsilon a finite real >= 0, the RoPE base a finite real > 1, the vocabulary a
    non-empty list, and the architecture's own keys (:data:`_OTHER_KEYS`: windows, patterns,
    caps, scales) in range. ``ValueError`` naming the file and the metadata key (a missing key
    is left to the caller, which names it)."""
    try:
        for key in (f"{arch}.{k}" for k in _SIZES):
            if key in meta:
                check_int(key, meta[key], lo=1)
        eps, base = f"{arch}.attention.layer_norm_rms_epsilon", f"{arch}.rope.freq_base"
        if eps in meta:
            check_real(eps, meta[eps], lo=0)
        if base in meta:
            check_real(base, meta[base], lo=1, lo_open=True)
        for name, kind, bounds in _OTHER_KEYS.get(arch, ()):
            key = f"{arch}.{name}"
            if key in meta:
                (check_int if kind is int else check_real)(key, meta[key], **bounds)
    except ValueError as err:
        raise ValueError(f"the model file {path}: metadata {err}") from None
    tokens = meta.get("tokenizer.ggml.tokens", [None])
    if not isinstance(tokens, list | tuple) or not tokens:
        raise ValueError(f"the model file {path}: metadata tokenizer.ggml.tokens must be a "
                         f"non-empty list (the vocabulary), got {tokens!r:.60}")


def check_llama_gguf(path, meta: dict, shapes: dict) -> LlamaConfig:
    """The :class:`LlamaConfig` of a GGUF file's metadata, after checking its architecture,
    settings and tensors (module docstring).

    Parameters
    ----------
    path : str or PathLike
        The file, named in the errors.
    meta : dict
        Its metadata (``gguf_file.read_gguf``'s ``metadata``).
    shapes : dict
        Its tensors' numpy shapes (name -> ``(rows, cols)`` or ``(n,)``).

    Returns
    -------
    LlamaConfig
        :func:`~.hf_folder.hf_config` of :func:`transformers_config`.

    Raises
    ------
    ValueError
        For an architecture outside :data:`GGUF_ARCHITECTURES`, a missing metadata key or one
        out of range (named: sizes integers >= 1, the epsilon >= 0, the RoPE base > 1, a
        non-empty vocabulary, the architecture's windows, caps and scales), a setting the model
        does not implement, or a missing, extra or misshapen tensor.
    """
    arch = meta.get("general.architecture")
    if arch not in GGUF_ARCHITECTURES:
        raise _refuse_architecture(path, arch)
    _check_metadata(path, meta, arch)
    heads, d_model = f"{arch}.attention.head_count", f"{arch}.embedding_length"
    no_key_length = f"{arch}.attention.key_length" not in meta
    try:
        if (no_key_length and int(meta[d_model]) % int(meta[heads])) or int(meta[heads]) % int(
                meta.get(f"{arch}.attention.head_count_kv", meta[heads])):
            raise ValueError(f"the model file {path} has {meta[heads]} heads and "
                             f"{meta.get(f'{arch}.attention.head_count_kv', meta[heads])} "
                             f"key-value heads for d_model {meta[d_model]}; heads must divide "
                             "d_model (without a key length) and key-value heads must divide "
                             "heads")
        hf = transformers_config(meta)
    except KeyError as err:
        raise ValueError(f"the model file {path} lacks the metadata key {err.args[0]!r} of a "
                         f"{arch} GGUF file") from None
    if hf["head_dim"] < 2 or hf["head_dim"] % 2:
        raise ValueError(f"the model file {path} has a head dimension of {hf['head_dim']}; "
                         "RoPE needs an even one")
    setting = _unimplemented(arch, meta, hf["head_dim"], shapes)
    if setting is not None:
        raise ValueError(f"the model file {path} sets {setting}, which the model does not "
                         "implement")
    factors = [name for name in _FACTORS if name in shapes]
    if arch == "phi3" and len(factors) == 1:
        raise ValueError(f"the model file {path} has {factors[0]} without "
                         f"{(set(_FACTORS) - set(factors)).pop()}: LongRoPE needs both")
    if arch == "phi3" and factors and "phi3.rope.scaling.original_context_length" not in meta:
        raise ValueError(f"the model file {path} has LongRoPE factor tensors without "
                         "phi3.rope.scaling.original_context_length (the length past which the "
                         "long factors apply)")
    try:
        config = hf_config(hf)
    except ValueError as err:  # read as the transformers config the metadata stands for
        raise ValueError(f"the model file {path}, read as a {hf['model_type']} config: "
                         f"{str(err).removeprefix('config.json').lstrip(': ')}") from None
    expected = llama_tensor_shapes(config, arch)
    if "output.weight" in shapes and arch != "gemma2":  # Gemma 2: the embedding, always
        expected["output.weight"] = (config.vocab_size, config.d_model)
    if "rope_freqs.weight" in shapes and GGUF_ARCHITECTURES[arch].rope_freqs:
        expected["rope_freqs.weight"] = (config.head_dim // 2,)
    if arch == "phi3":
        expected.update({name: (config.head_dim // 2,) for name in _FACTORS if name in shapes})
    missing = sorted(set(expected) - set(shapes))
    extra = sorted(set(shapes) - set(expected))
    if missing or extra:
        raise ValueError(f"the model file {path} does not hold the tensors of a "
                         f"{config.n_layers}-block {arch} model: missing {missing[:5]}, "
                         f"unexpected {extra[:5]}")
    wrong = [(name, shapes[name], shape) for name, shape in expected.items()
             if tuple(shapes[name]) != shape]
    if wrong:
        name, actual, shape = wrong[0]
        raise ValueError(f"the model file {path} has tensor {name!r} of shape {actual}, "
                         f"expected {shape} from its metadata ({len(wrong)} such tensors)")
    return config


def _positive(path, name: str, factors: np.ndarray) -> np.ndarray:
    if not (np.all(np.isfinite(factors)) and np.all(factors > 0)):
        raise ValueError(f"the model file {path} has {name} factors that are not all positive "
                         f"finite numbers: {factors.tolist()}")
    return factors


def gguf_model(path, config: LlamaConfig, metadata: dict, tensors: dict,
               dtype=np.float32) -> LlamaModel:
    """The :class:`LlamaModel` of a GGUF file that :func:`check_llama_gguf` accepted (module
    docstring): Phi-3's fused tensors split, a NEOX architecture's ``q``/``k`` rows (biases and
    norm gains too) given llama.cpp's permutation (which the model undoes), each layer's RoPE and
    logit law from :func:`transformers_config` as its ``layer_defaults`` (Phi-3's LongRoPE
    factors included), and ``rope_freqs.weight``, when present, as the model's
    ``default_position``.

    Parameters
    ----------
    path : str or PathLike
        The file, named in the errors.
    config : LlamaConfig
        From :func:`check_llama_gguf`.
    metadata, tensors : dict
        The file's metadata and float32 tensors (``gguf_file.read_gguf``).
    dtype : numpy dtype
        The model's compute dtype.

    Returns
    -------
    LlamaModel

    Raises
    ------
    ValueError
        If ``rope_freqs.weight`` or Phi-3's ``rope_factors_long/short.weight`` hold a factor
        that is not a positive finite number.
    """
    arch = GGUF_ARCHITECTURES[metadata["general.architecture"]]
    tensors = dict(tensors)
    freqs = tensors.pop("rope_freqs.weight", None)
    if freqs is not None:
        freqs = _positive(path, "rope_freqs.weight", freqs)
    factors = None
    if all(name in tensors for name in _FACTORS):  # (short, long), as LongRoPE takes them
        factors = tuple(_positive(path, name, tensors.pop(name)) for name in _FACTORS[::-1])
    if ARCHITECTURES[arch.model_type].fused:  # Phi-3: attn_qkv and the gate-up ffn_up, split
        for name in [n for n in tensors if n.endswith((".attn_qkv.weight", ".ffn_up.weight"))]:
            fused = tensors.pop(name)
            tensors.update(split_fused(name.replace(".ffn_up.", ".ffn_gate_up."), fused, config))
    if arch.rope == "neox":  # rows as in Hugging Face: give them llama.cpp's NORM order
        for name in list(tensors):
            part = name.split(".")[-2] if name.startswith("blk.") else ""
            weight = tensors[name]
            if part in ("attn_q", "attn_k"):
                heads = config.n_heads if part == "attn_q" else config.n_kv_heads
            elif part in ("attn_q_norm", "attn_k_norm"):  # one head's gains, or every head's
                heads = weight.size // config.head_dim
            else:
                continue
            tensors[name] = (to_gguf_rows(weight, heads) if weight.ndim == 2
                             else to_gguf_rows(weight[:, None], heads)[:, 0])
    layers = hf_layer_schemes(f"the model file {path}", config,
                              transformers_config(metadata, factors))
    model = LlamaModel(config, tensors, dtype)
    model.layer_defaults = layer_defaults(layers)
    if freqs is not None:
        model.default_position = LongRoPE(freqs, freqs, config.context_length, config.rope_base)
    return model
