"""Checking that a GGUF file is a LLaMA model :class:`~.llama.LlamaModel` runs as written.

A user's GGUF file (not the pinned registry model) is checked from its metadata and tensor
shapes alone, before any tensor is dequantized: the architecture is ``llama``; the file sets
nothing the model does not implement (RoPE scaling, a rotary dimension or key/value length other
than ``d_model / heads``, experts, llama.cpp's ``rope_freqs`` frequency factors); and it holds
exactly the tensors of the LLaMA graph with their shapes (llama.cpp ``llama-arch.cpp``:
``token_embd``, ``output_norm``, optionally ``output``, and per block ``attn_norm``,
``attn_q/k/v``, ``attn_output``, ``ffn_norm``, ``ffn_gate/up/down``).
"""

from __future__ import annotations

from .._infra.validate import check_int, check_real
from .llama import LlamaConfig

__all__ = ["check_llama_gguf", "llama_tensor_shapes"]


def llama_tensor_shapes(config: LlamaConfig) -> dict:
    """Tensor name -> numpy shape ``(rows, cols)`` of a LLaMA GGUF file with ``config`` (without
    the optional untied ``output.weight``, of shape ``(vocab, d_model)``)."""
    d, q, kv = config.d_model, config.n_heads * config.head_dim, config.n_kv_heads * config.head_dim
    shapes = {"token_embd.weight": (config.vocab_size, d), "output_norm.weight": (d,)}
    for i in range(config.n_layers):
        block = {"attn_norm": (d,), "ffn_norm": (d,), "attn_q": (q, d), "attn_k": (kv, d),
                 "attn_v": (kv, d), "attn_output": (d, q), "ffn_gate": (config.ffn, d),
                 "ffn_up": (config.ffn, d), "ffn_down": (d, config.ffn)}
        shapes.update({f"blk.{i}.{name}.weight": shape for name, shape in block.items()})
    return shapes


def _unimplemented(meta: dict, shapes: dict, head_dim: int) -> str | None:
    """The first setting of the file the model does not implement, described, or ``None``."""
    scaling = meta.get("llama.rope.scaling.type")
    if scaling not in (None, "none"):
        return f"llama.rope.scaling.type={scaling!r} (supported: none)"
    for key in ("llama.rope.dimension_count", "llama.attention.key_length",
                "llama.attention.value_length"):
        if meta.get(key) not in (None, head_dim):
            return f"{key}={meta[key]} (supported: d_model / heads = {head_dim})"
    if meta.get("llama.expert_count"):
        return f"llama.expert_count={meta['llama.expert_count']} (a mixture of experts)"
    if "rope_freqs.weight" in shapes:
        return "the tensor 'rope_freqs.weight' (llama.cpp's RoPE frequency factors)"
    return None


_SIZES = ("llama.block_count", "llama.embedding_length", "llama.attention.head_count",
          "llama.attention.head_count_kv", "llama.feed_forward_length", "llama.context_length")


def _check_metadata(path, meta: dict) -> None:
    """The values :meth:`LlamaConfig.from_metadata` reads, where present: the sizes integers
    >= 1, the RMSNorm epsilon a finite real >= 0, the RoPE base a finite real > 1, the
    vocabulary a non-empty list. ``ValueError`` naming the file and the metadata key (a missing
    key is left to the caller, which names it)."""
    try:
        for key in _SIZES:
            if key in meta:
                check_int(key, meta[key], lo=1)
        if "llama.attention.layer_norm_rms_epsilon" in meta:
            check_real("llama.attention.layer_norm_rms_epsilon",
                       meta["llama.attention.layer_norm_rms_epsilon"], lo=0)
        if "llama.rope.freq_base" in meta:
            check_real("llama.rope.freq_base", meta["llama.rope.freq_base"], lo=1, lo_open=True)
    except ValueError as err:
        raise ValueError(f"the model file {path}: metadata {err}") from None
    tokens = meta.get("tokenizer.ggml.tokens", [None])
    if not isinstance(tokens, list | tuple) or not tokens:
        raise ValueError(f"the model file {path}: metadata tokenizer.ggml.tokens must be a "
                         f"non-empty list (the vocabulary), got {tokens!r:.60}")


def check_llama_gguf(path, meta: dict, shapes: dict) -> LlamaConfig:
    """The :class:`LlamaConfig` of a GGUF file's metadata, after checking its tensors.

    Parameters
    ----------
    path : str or PathLike
        The file, named in the errors.
    meta : dict
        Its metadata (``gguf_file.read_gguf``'s ``metadata``).
    shapes : dict
        Its tensors' numpy shapes (name -> ``(rows, cols)``).

    Returns
    -------
    LlamaConfig

    Raises
    ------
    ValueError
        For another architecture, a missing metadata key or one out of range (named: sizes
        integers >= 1, the epsilon >= 0, the RoPE base > 1, a non-empty vocabulary), a setting
        the model does not implement, or a missing, extra or misshapen tensor.
    """
    _check_metadata(path, meta)
    try:
        config = LlamaConfig.from_metadata(meta)
    except ValueError as err:
        raise ValueError(f"the model file {path}: {err}") from None
    except KeyError as err:
        raise ValueError(f"the model file {path} lacks the metadata key {err.args[0]!r} of a "
                         "llama GGUF file") from None
    if config.d_model % config.n_heads or config.n_heads % config.n_kv_heads:
        raise ValueError(f"the model file {path} has {config.n_heads} heads and "
                         f"{config.n_kv_heads} key-value heads for d_model {config.d_model}; "
                         "heads must divide d_model and key-value heads must divide heads")
    setting = _unimplemented(meta, shapes, config.head_dim)
    if setting is not None:
        raise ValueError(f"the model file {path} sets {setting}, which the model does not "
                         "implement")
    expected = llama_tensor_shapes(config)
    if "output.weight" in shapes:
        expected["output.weight"] = (config.vocab_size, config.d_model)
    missing = sorted(set(expected) - set(shapes))
    extra = sorted(set(shapes) - set(expected))
    if missing or extra:
        raise ValueError(f"the model file {path} does not hold the tensors of a "
                         f"{config.n_layers}-block llama model: missing {missing[:5]}, "
                         f"unexpected {extra[:5]}")
    wrong = [(name, shapes[name], shape) for name, shape in expected.items()
             if tuple(shapes[name]) != shape]
    if wrong:
        name, actual, shape = wrong[0]
        raise ValueError(f"the model file {path} has tensor {name!r} of shape {actual}, "
                         f"expected {shape} from its metadata ({len(wrong)} such tensors)")
    return config
