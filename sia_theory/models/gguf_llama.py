"""Checking that a GGUF file is a model :class:`~.llama.LlamaModel` runs as written, and
building that model from the file's tensors.

A user's GGUF file (not the pinned registry model) is checked from its metadata and tensor
shapes alone, before any tensor is dequantized. Three of llama.cpp's architectures
(``general.architecture``) are read, each from its own ``<arch>.*`` metadata keys
(:data:`GGUF_ARCHITECTURES`):

* ``llama`` (LLaMA 1–3, Mistral, SmolLM2, ...): the LLaMA graph (llama.cpp ``llama-arch.cpp``:
  ``token_embd``, ``output_norm``, optionally ``output``, and per block ``attn_norm``,
  ``attn_q/k/v``, ``attn_output``, ``ffn_norm``, ``ffn_gate/up/down``), and optionally Llama 3.x's
  ``rope_freqs.weight`` (below).
* ``qwen2``: the same, with the biases ``blk.<i>.attn_{q,k,v}.bias``.
* ``qwen3``: the same, with the per-head RMSNorm gains ``blk.<i>.attn_{q,k}_norm.weight`` and a
  head dimension of its own, ``qwen3.attention.key_length``.

**Row order.** llama.cpp rotates by the rope type of the architecture
(``llama_model_rope_type`` in ``src/llama-model.cpp``): ``llama`` is ``LLAMA_ROPE_TYPE_NORM``
(interleaved pairs ``(2i, 2i+1)``), for which ``convert_hf_to_gguf.py`` (``LlamaModel.permute``)
permutes the rows of each ``q``/``k`` head; ``qwen2`` and ``qwen3`` are
``LLAMA_ROPE_TYPE_NEOX`` (half-split pairs ``(i, i + D/2)``, as Hugging Face rotates), and
their converter (``Qwen2Model``, ``Qwen3Model``) writes the rows unpermuted.
:class:`~.llama.LlamaModel` un-permutes every ``q``/``k`` row (and bias and norm gain), so for
a NEOX file :func:`gguf_model` first gives those rows llama.cpp's permutation
(:func:`~.hf_folder.to_gguf_rows`, as the Hugging Face loader does), which the model undoes.

**rope_freqs.** For a Llama 3.x checkpoint (transformers ``rope_type = "llama3"``) the converter
(``LlamaModel.generate_extra_tensors``) writes no RoPE scaling metadata but the tensor
``rope_freqs.weight``, one factor ``f_i`` per frequency (``D/2`` of them), and llama.cpp passes it
to ``ggml_rope_ext`` as ``freq_factors``: frequency ``i`` rotates by ``θ_i / f_i``
(``ggml-cpu/ops.cpp``, ``ggml_rope_cache_init``: ``rope_yarn(theta/ff, ...)`` with
``ff = freq_factors[i0/2]``), ``θ_i = base^(−2i/D)``. The model then runs
:class:`~sia_theory.attention.rope_variants.LongRoPE` with ``short_factor = long_factor = f``
(frequencies ``1/(f_i·base^(2i/D))``, the same for every length) as its ``default_position``.

Refused, each with a one-line ``ValueError`` naming the file: any other architecture (naming it
and the supported ones; Phi-3, Gemma 2/3, OLMo 2 and Granite with what the model lacks for them,
:data:`UNIMPLEMENTED_ARCHITECTURES`); a setting the model does not implement (a RoPE scaling
type or factor, a rotary dimension or value length other than the key length, experts,
non-causal attention); ``rope_freqs`` on an architecture llama.cpp does not read it for; and
missing, extra or misshapen tensors.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._infra.validate import check_int, check_real
from ..attention.rope_variants import LongRoPE
from .hf_folder import to_gguf_rows
from .llama import LlamaConfig, LlamaModel

__all__ = ["GGUFArchitecture", "GGUF_ARCHITECTURES", "UNIMPLEMENTED_ARCHITECTURES",
           "check_llama_gguf", "llama_tensor_shapes", "gguf_model"]


@dataclass(frozen=True)
class GGUFArchitecture:
    """What a GGUF architecture adds to the LLaMA graph (module docstring).

    Parameters
    ----------
    rope : str
        llama.cpp's rope type for it, ``"norm"`` (the converter permuted the ``q``/``k`` rows)
        or ``"neox"`` (rows as in Hugging Face).
    qkv_bias : bool
        The blocks carry ``attn_{q,k,v}.bias`` (Qwen2).
    qk_norm : bool
        The blocks carry ``attn_{q,k}_norm.weight`` (Qwen3).
    rope_freqs : bool
        llama.cpp reads an optional ``rope_freqs.weight`` for it (LLaMA).
    """

    rope: str
    qkv_bias: bool = False
    qk_norm: bool = False
    rope_freqs: bool = False


GGUF_ARCHITECTURES = {
    "llama": GGUFArchitecture("norm", rope_freqs=True),
    "qwen2": GGUFArchitecture("neox", qkv_bias=True),
    "qwen3": GGUFArchitecture("neox", qk_norm=True),
}
"""``general.architecture`` → :class:`GGUFArchitecture`: the GGUF files :func:`check_llama_gguf`
accepts."""

UNIMPLEMENTED_ARCHITECTURES = {
    "phi3": "Phi-3's fused attn_qkv and gate-up ffn_up tensors and its LongRoPE factor tensors",
    "gemma2": "Gemma 2's GeGLU MLP, scaled embedding, post-attention and post-MLP norms, logit "
              "soft-capping and alternating sliding-window layers",
    "gemma3": "Gemma 3's GeGLU MLP, scaled embedding, post-attention and post-MLP norms and "
              "local/global layers with two RoPE bases",
    "olmo2": "OLMo 2's norms after attention and the MLP (no pre-norms) and its q/k RMSNorm "
             "over the whole projection",
    "granite": "Granite's embedding, residual, attention and logit multipliers",
}
"""Architectures close to LLaMA that are refused with what the model lacks for them."""


def llama_tensor_shapes(config: LlamaConfig, architecture: str = "llama") -> dict:
    """Tensor name -> numpy shape ``(rows, cols)`` (``(n,)`` for a vector) of a GGUF file of
    ``architecture`` (a key of :data:`GGUF_ARCHITECTURES`) with ``config``, without the optional
    tensors: the untied ``output.weight`` ``(vocab, d_model)`` and LLaMA's
    ``rope_freqs.weight`` ``(head_dim / 2,)``."""
    arch = GGUF_ARCHITECTURES[architecture]
    d, dim = config.d_model, config.head_dim
    q, kv = config.n_heads * dim, config.n_kv_heads * dim
    shapes = {"token_embd.weight": (config.vocab_size, d), "output_norm.weight": (d,)}
    block = {"attn_norm.weight": (d,), "ffn_norm.weight": (d,), "attn_q.weight": (q, d),
             "attn_k.weight": (kv, d), "attn_v.weight": (kv, d), "attn_output.weight": (d, q),
             "ffn_gate.weight": (config.ffn, d), "ffn_up.weight": (config.ffn, d),
             "ffn_down.weight": (d, config.ffn)}
    if arch.qkv_bias:
        block.update({"attn_q.bias": (q,), "attn_k.bias": (kv,), "attn_v.bias": (kv,)})
    if arch.qk_norm:
        block.update({"attn_q_norm.weight": (dim,), "attn_k_norm.weight": (dim,)})
    for i in range(config.n_layers):
        shapes.update({f"blk.{i}.{name}": shape for name, shape in block.items()})
    return shapes


def _unimplemented(arch: str, meta: dict, head_dim: int) -> str | None:
    """The first setting of the file the model does not implement, described, or ``None``."""
    scaling = meta.get(f"{arch}.rope.scaling.type")
    if scaling not in (None, "none"):
        return f"{arch}.rope.scaling.type={scaling!r} (supported: none)"
    factor = meta.get(f"{arch}.rope.scaling.factor")
    if factor not in (None, 0.0, 1.0):  # llama.cpp scales by it when the type is absent
        return f"{arch}.rope.scaling.factor={factor} (supported: none, 0 or 1)"
    for key in (f"{arch}.rope.dimension_count", f"{arch}.attention.value_length"):
        if meta.get(key) not in (None, head_dim):
            return f"{key}={meta[key]} (supported: the head dimension {head_dim})"
    if meta.get(f"{arch}.expert_count"):
        return f"{arch}.expert_count={meta[f'{arch}.expert_count']} (a mixture of experts)"
    if meta.get(f"{arch}.attention.causal") is False:
        return f"{arch}.attention.causal=False (supported: causal attention)"
    return None


def _refuse_architecture(path, arch) -> ValueError:
    supported = ", ".join(map(repr, GGUF_ARCHITECTURES))
    lacks = (f" (it lacks {UNIMPLEMENTED_ARCHITECTURES[arch]})"
             if arch in UNIMPLEMENTED_ARCHITECTURES else "")
    return ValueError(f"the model file {path} has architecture {arch!r}, which the model does "
                      f"not implement{lacks}; supported: {supported}")


_SIZES = ("block_count", "embedding_length", "attention.head_count", "attention.head_count_kv",
          "feed_forward_length", "context_length")


def _check_metadata(path, meta: dict, arch: str = "llama") -> None:
    """The values :meth:`LlamaConfig.from_metadata` reads, where present: the sizes integers
    >= 1, the RMSNorm epsilon a finite real >= 0, the RoPE base a finite real > 1, the
    vocabulary a non-empty list. ``ValueError`` naming the file and the metadata key (a missing
    key is left to the caller, which names it)."""
    try:
        for key in (f"{arch}.{k}" for k in _SIZES):
            if key in meta:
                check_int(key, meta[key], lo=1)
        eps, base = f"{arch}.attention.layer_norm_rms_epsilon", f"{arch}.rope.freq_base"
        if eps in meta:
            check_real(eps, meta[eps], lo=0)
        if base in meta:
            check_real(base, meta[base], lo=1, lo_open=True)
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

    Raises
    ------
    ValueError
        For an architecture outside :data:`GGUF_ARCHITECTURES`, a missing metadata key or one
        out of range (named: sizes integers >= 1, the epsilon >= 0, the RoPE base > 1, a
        non-empty vocabulary), a setting the model does not implement, or a missing, extra or
        misshapen tensor.
    """
    arch = meta.get("general.architecture")
    if arch not in GGUF_ARCHITECTURES:
        raise _refuse_architecture(path, arch)
    _check_metadata(path, meta, arch)
    try:
        config = LlamaConfig.from_metadata(meta, tuple(GGUF_ARCHITECTURES))
    except KeyError as err:
        raise ValueError(f"the model file {path} lacks the metadata key {err.args[0]!r} of a "
                         f"{arch} GGUF file") from None
    no_key_length = f"{arch}.attention.key_length" not in meta
    if (no_key_length and config.d_model % config.n_heads) or config.n_heads % config.n_kv_heads:
        raise ValueError(f"the model file {path} has {config.n_heads} heads and "
                         f"{config.n_kv_heads} key-value heads for d_model {config.d_model}; "
                         "heads must divide d_model (without a key length) and key-value heads "
                         "must divide heads")
    if config.head_dim < 2 or config.head_dim % 2:
        raise ValueError(f"the model file {path} has a head dimension of {config.head_dim}; "
                         "RoPE needs an even one")
    setting = _unimplemented(arch, meta, config.head_dim)
    if setting is not None:
        raise ValueError(f"the model file {path} sets {setting}, which the model does not "
                         "implement")
    expected = llama_tensor_shapes(config, arch)
    if "output.weight" in shapes:
        expected["output.weight"] = (config.vocab_size, config.d_model)
    if "rope_freqs.weight" in shapes and GGUF_ARCHITECTURES[arch].rope_freqs:
        expected["rope_freqs.weight"] = (config.head_dim // 2,)
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


def gguf_model(path, config: LlamaConfig, metadata: dict, tensors: dict,
               dtype=np.float32) -> LlamaModel:
    """The :class:`LlamaModel` of a GGUF file that :func:`check_llama_gguf` accepted: a NEOX
    architecture's ``q``/``k`` rows given llama.cpp's permutation (which the model undoes), and
    ``rope_freqs.weight``, when present, as the model's ``default_position`` (module docstring).

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
        If ``rope_freqs.weight`` holds a factor that is not a positive finite number.
    """
    arch = GGUF_ARCHITECTURES[metadata["general.architecture"]]
    tensors = dict(tensors)
    factors = tensors.pop("rope_freqs.weight", None)
    if arch.rope == "neox":  # rows as in Hugging Face: give them llama.cpp's NORM order
        for name in list(tensors):
            part = name.split(".")[-2] if name.startswith("blk.") else ""
            if part in ("attn_q", "attn_k", "attn_q_norm", "attn_k_norm"):
                heads = {"attn_q": config.n_heads, "attn_k": config.n_kv_heads}.get(part, 1)
                weight = tensors[name]
                tensors[name] = (to_gguf_rows(weight, heads) if weight.ndim == 2
                                 else to_gguf_rows(weight[:, None], heads)[:, 0])
    model = LlamaModel(config, tensors, dtype)
    if factors is not None:
        if not (np.all(np.isfinite(factors)) and np.all(factors > 0)):
            raise ValueError(f"the model file {path} has rope_freqs.weight factors that are not "
                             f"all positive finite numbers: {factors.tolist()}")
        model.default_position = LongRoPE(factors, factors, config.context_length,
                                          config.rope_base)
    return model
