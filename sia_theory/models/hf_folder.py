"""Reading a Hugging Face LLaMA-architecture folder: ``config.json`` and ``*.safetensors``.

The folder is what ``save_pretrained`` writes for ``LlamaForCausalLM`` (transformers
``models/llama``: ``model.embed_tokens``, ``model.layers.{i}.self_attn.{q,k,v,o}_proj``,
``mlp.{gate,up,down}_proj``, ``input_layernorm``, ``post_attention_layernorm``, ``model.norm``,
``lm_head`` unless ``tie_word_embeddings``). Weights are ``(out, in)`` as in GGUF's numpy order.

**RoPE pairing.** transformers rotates half-split pairs ``(i, i + D/2)`` (``rotate_half``); the
GGUF tensors :class:`~.llama.LlamaModel` takes carry llama.cpp's converter permutation of the
``q``/``k`` rows (``convert_hf_to_gguf.py``, ``LlamaModel.permute``:
``w.reshape(n_head, 2, D/2, d).swapaxes(1, 2)``), which the model undoes. So the rows of
``q_proj`` and ``k_proj`` are permuted here exactly as llama.cpp does (:func:`to_gguf_rows`), and
one model class serves both sources.

safetensors files are parsed directly (an 8-byte header length, a JSON header, raw
little-endian data): float32, float64, float16 and bfloat16 (numpy has no bfloat16; its bits
are the upper half of a float32) are read, as float32.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np

from .llama import LlamaConfig

__all__ = ["read_hf_folder", "hf_config", "to_gguf_rows", "read_safetensors", "DTYPES",
           "LAYER_NAMES", "tensor_names"]

DTYPES = {"F32": np.float32, "F64": np.float64, "F16": np.float16, "BF16": np.uint16}
"""safetensors dtypes read (BF16 through its bits)."""
LAYER_NAMES = {"input_layernorm": "attn_norm", "post_attention_layernorm": "ffn_norm",
          "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k",
          "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output",
          "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down"}
"""A transformers LLaMA layer's weight names (``model.layers.<i>.<name>.weight``) → the GGUF
names (``blk.<i>.<name>.weight``) that :class:`~.llama.LlamaModel` reads."""


def tensor_names(n_layers: int) -> dict:
    """Every GGUF tensor name of an ``n_layers`` LLaMA model → its transformers name (the map
    :func:`read_hf_folder` applies, inverted; ``output.weight`` is ``lm_head.weight``).

    Examples
    --------
    >>> tensor_names(1)["blk.0.attn_q.weight"]
    'model.layers.0.self_attn.q_proj.weight'
    """
    names = {"token_embd.weight": "model.embed_tokens.weight",
             "output_norm.weight": "model.norm.weight", "output.weight": "lm_head.weight"}
    for i in range(n_layers):
        for hf_name, name in LAYER_NAMES.items():
            names[f"blk.{i}.{name}.weight"] = f"model.layers.{i}.{hf_name}.weight"
    return names


def read_safetensors(path) -> dict:
    """The tensors of one safetensors file as float32 numpy arrays (module docstring)."""
    data = Path(path).read_bytes()
    if len(data) < 8:
        raise ValueError(f"{path} is not a safetensors file (shorter than its header length)")
    (size,) = struct.unpack("<Q", data[:8])
    try:
        header = json.loads(data[8:8 + size])
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"{path} is not a safetensors file ({err})") from None
    tensors, body = {}, 8 + size
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        if entry["dtype"] not in DTYPES:
            raise ValueError(f"{path}: tensor {name!r} has dtype {entry['dtype']}; supported: "
                             f"{', '.join(DTYPES)}")
        start, stop = entry["data_offsets"]
        raw = np.frombuffer(data, DTYPES[entry["dtype"]], offset=body + start,
                            count=(stop - start) // np.dtype(DTYPES[entry["dtype"]]).itemsize)
        if entry["dtype"] == "BF16":  # bfloat16: the upper 16 bits of a float32
            raw = (raw.astype(np.uint32) << 16).view(np.float32)
        tensors[name] = raw.astype(np.float32).reshape(entry["shape"])
    return tensors


def hf_config(config: dict) -> LlamaConfig:
    """The :class:`LlamaConfig` of a transformers ``LlamaConfig`` dict; ``ValueError`` for another
    architecture or a setting the model does not implement (a ``head_dim`` other than
    ``hidden_size / num_attention_heads``, attention or MLP biases). A scaled RoPE
    (``rope_scaling`` / ``rope_parameters``) is read by
    :func:`~sia_theory.models.hf_config.from_hf_config` when the folder is loaded; ``rope_base``
    is its ``rope_theta``."""
    kind = config.get("model_type")
    if kind != "llama":
        raise ValueError(f"config.json has model_type {kind!r}; supported: 'llama'")
    for key in ("attention_bias", "mlp_bias"):
        if config.get(key):
            raise ValueError(f"config.json sets {key}={config[key]!r}, which the model does not "
                             "implement; supported: null/false")
    heads = int(config["num_attention_heads"])
    d_model = int(config["hidden_size"])
    if config.get("head_dim") not in (None, d_model // heads):
        raise ValueError(f"config.json has head_dim {config['head_dim']}; supported: "
                         f"hidden_size / num_attention_heads = {d_model // heads}")
    return LlamaConfig(n_layers=int(config["num_hidden_layers"]), d_model=d_model,
                       n_heads=heads,
                       n_kv_heads=int(config.get("num_key_value_heads") or heads),
                       ffn=int(config["intermediate_size"]),
                       rope_base=float((config.get("rope_parameters") or {}).get(
                           "rope_theta", config.get("rope_theta", 10000.0))),
                       rms_eps=float(config.get("rms_norm_eps", 1e-6)),
                       context_length=int(config.get("max_position_embeddings", 2048)),
                       vocab_size=int(config["vocab_size"]))


def to_gguf_rows(weight: np.ndarray, n_heads: int) -> np.ndarray:
    """llama.cpp's permutation of a Hugging Face ``q``/``k`` weight ``(n_heads·D, d)``:
    ``reshape(n_heads, 2, D/2, d).swapaxes(1, 2)`` (the inverse of
    :func:`~.llama.unpermute_rope_rows`)."""
    rows, cols = weight.shape
    return np.ascontiguousarray(
        weight.reshape(n_heads, 2, rows // n_heads // 2, cols).swapaxes(1, 2).reshape(rows, cols))


def read_hf_folder(folder) -> tuple[LlamaConfig, dict]:
    """``(config, tensors)`` of a Hugging Face LLaMA folder, the tensors under the GGUF names
    :class:`~.llama.LlamaModel` reads (``output.weight`` only for an untied head).

    ``config`` carries ``rope_theta`` only: the config's RoPE scaling and logit factors
    (``rope_scaling`` / ``rope_parameters``) are read by
    :func:`~sia_theory.models.hf_config.from_hf_config`, which
    :func:`~sia_theory.models.loader.load_hf_folder` (``load_pretrained(folder)``) applies as the
    model's default position encoding and score_mod; a ``LlamaModel`` built from this pair
    alone runs the unscaled RoPE."""
    folder = Path(folder)
    files = sorted(folder.glob("*.safetensors"))
    if not (folder / "config.json").is_file() or not files:
        raise ValueError(f"path {folder} must be a folder with config.json and *.safetensors "
                         "(a Hugging Face LLaMA checkpoint)")
    raw = json.loads((folder / "config.json").read_text())
    config = hf_config(raw)
    hf = {}
    for file in files:
        hf.update(read_safetensors(file))

    def take(name):
        if name not in hf:
            raise ValueError(f"{folder} lacks the tensor {name!r} of a LLaMA checkpoint")
        return hf.pop(name)

    tensors = {"token_embd.weight": take("model.embed_tokens.weight"),
               "output_norm.weight": take("model.norm.weight")}
    head = hf.pop("lm_head.weight", None)
    if head is not None and not raw.get("tie_word_embeddings", False):
        tensors["output.weight"] = head
    for i in range(config.n_layers):
        for hf_name, name in LAYER_NAMES.items():
            weight = take(f"model.layers.{i}.{hf_name}.weight")
            if name in ("attn_q", "attn_k"):
                weight = to_gguf_rows(weight, config.n_heads if name == "attn_q"
                                      else config.n_kv_heads)
            tensors[f"blk.{i}.{name}.weight"] = weight
    unused = sorted(k for k in hf if not k.endswith("rotary_emb.inv_freq"))
    if unused:
        raise ValueError(f"{folder} holds tensors the LLaMA architecture does not use: "
                         f"{', '.join(unused[:5])}")
    return config, tensors
