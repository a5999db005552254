"""Reading a Hugging Face folder of the LLaMA layout: ``config.json`` and ``*.safetensors``.

The folder is what ``save_pretrained`` writes for ``LlamaForCausalLM`` (transformers
``models/llama``: ``model.embed_tokens``, ``model.layers.{i}.self_attn.{q,k,v,o}_proj``,
``mlp.{gate,up,down}_proj``, ``input_layernorm``, ``post_attention_layernorm``, ``model.norm``,
``lm_head`` unless ``tie_word_embeddings``). Weights are ``(out, in)`` as in GGUF's numpy order.
Three more ``model_type`` values share that layout (:data:`ARCHITECTURES`, checked against
transformers 5.24.0 ``models/{mistral,qwen2,qwen3}``): ``mistral`` (the same tensors),
``qwen2`` (adds ``self_attn.{q,k,v}_proj.bias``) and ``qwen3`` (adds the per-head RMSNorm gains
``self_attn.{q,k}_norm.weight``, and its ``head_dim`` is free of ``hidden_size /
num_attention_heads``).

**Sliding window.** Mistral's ``sliding_window`` masks every layer; Qwen2/Qwen3's masks the
layers ``layer_types`` marks ``sliding_attention`` (default: from ``max_window_layers`` on) when
``use_sliding_window`` is set. The mask keeps key ``j`` for query ``i`` when
``i - j < sliding_window``, so it has no effect on a context of at most ``sliding_window``
tokens; the model does not implement it and refuses longer contexts when run
(:attr:`~.llama.LlamaConfig.sliding_window`).

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
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._infra.validate import check_int, check_real
from ._json import read_json
from .llama import LlamaConfig

__all__ = ["read_hf_folder", "hf_config", "hf_shapes", "to_gguf_rows", "read_safetensors",
           "DTYPES", "LAYER_NAMES", "tensor_names", "Architecture", "ARCHITECTURES"]


@dataclass(frozen=True)
class Architecture:
    """What a ``model_type`` adds to the LLaMA layout (transformers' attention module).

    Parameters
    ----------
    qkv_bias : bool
        Biases on the ``q``/``k``/``v`` projections (``Qwen2Attention``: ``bias=True``).
    qk_norm : bool
        RMSNorm gains ``(head_dim,)`` on each head of ``q`` and ``k`` before RoPE
        (``Qwen3Attention.q_norm``, ``k_norm``); ``head_dim`` must be given.
    window : str or None
        How the config sets a sliding window: ``"config"`` (``sliding_window``, every layer),
        ``"layers"`` (``use_sliding_window``, ``max_window_layers``, ``layer_types``), ``None``.
    unimplemented : tuple of str
        Boolean keys the architecture reads that the model does not implement (refused when
        true): ``attention_bias`` also puts a bias on ``o_proj``; ``mlp_bias``.
    """

    qkv_bias: bool = False
    qk_norm: bool = False
    window: str | None = None
    unimplemented: tuple = ()


ARCHITECTURES = {
    "llama": Architecture(unimplemented=("attention_bias", "mlp_bias")),
    "mistral": Architecture(window="config"),
    "qwen2": Architecture(qkv_bias=True, window="layers"),
    "qwen3": Architecture(qk_norm=True, window="layers", unimplemented=("attention_bias",)),
}
"""``model_type`` → :class:`Architecture`: the Hugging Face folders :func:`read_hf_folder`
reads."""

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
    """The tensors of one safetensors file as float32 numpy arrays (module docstring).

    The header is checked as the ``safetensors`` library checks it before any tensor is read:
    a JSON object of ``{dtype, shape, data_offsets}`` entries, each shape's bytes equal to its
    offsets' span, the spans covering the data after the header exactly (no overlap, no gap,
    nothing short: a truncated file is refused). ``ValueError`` naming the file and the
    tensor."""
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise ValueError(f"{path} cannot be read ({err.strerror or err}); a safetensors file "
                         "is expected") from None
    if len(data) < 8:
        raise ValueError(f"{path} is not a safetensors file (shorter than its header length)")
    (size,) = struct.unpack("<Q", data[:8])
    if 8 + size > len(data):
        raise ValueError(f"{path}: its header length {size} runs past the end of the file "
                         f"({len(data)} bytes): not a safetensors file, or truncated")
    try:
        header = json.loads(data[8:8 + size])
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
        raise ValueError(f"{path} is not a safetensors file ({err})") from None
    if not isinstance(header, dict):
        raise ValueError(f"{path}: the header must be a JSON object (tensor name -> entry), "
                         f"got {type(header).__name__}")
    body = memoryview(data)[8 + size:]
    entries = {name: _header_entry(path, name, entry) for name, entry in header.items()
               if name != "__metadata__"}
    end = 0
    for name, (_, _, start, stop) in sorted(entries.items(), key=lambda e: e[1][2:]):
        if stop > len(body):
            raise ValueError(f"{path}: tensor {name!r} has data_offsets [{start}, {stop}] "
                             f"outside the file's {len(body)} bytes of data (truncated?)")
        if start != end:
            raise ValueError(f"{path}: tensor {name!r} has data_offsets [{start}, {stop}] that "
                             f"overlap or leave a gap after the previous tensor's end {end}")
        end = stop
    if end != len(body):
        raise ValueError(f"{path}: the header's tensors need {end} bytes of data, the file "
                         f"holds {len(body)} (truncated or padded)")
    tensors = {}
    for name, (kind, shape, start, stop) in entries.items():
        raw = np.frombuffer(body[start:stop], DTYPES[kind])
        if kind == "BF16":  # bfloat16: the upper 16 bits of a float32
            raw = (raw.astype(np.uint32) << 16).view(np.float32)
        tensors[name] = raw.astype(np.float32).reshape(shape)
    return tensors


def _header_entry(path, name, entry) -> tuple:
    """``(dtype, shape, start, stop)`` of one safetensors header entry, each field checked
    (``ValueError`` naming the file and the tensor)."""
    if not isinstance(entry, dict):
        raise ValueError(f"{path}: tensor {name!r} must have a header entry {{dtype, shape, "
                         f"data_offsets}}, got {type(entry).__name__}")
    for field in ("dtype", "shape", "data_offsets"):
        if field not in entry:
            raise ValueError(f"{path}: tensor {name!r} lacks {field} in the header")
    kind, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
    if kind not in DTYPES:
        raise ValueError(f"{path}: tensor {name!r} has dtype {kind}; supported: "
                         f"{', '.join(DTYPES)}")

    def whole(x):
        return isinstance(x, int) and not isinstance(x, bool) and x >= 0

    if not isinstance(shape, list) or not all(map(whole, shape)):
        raise ValueError(f"{path}: tensor {name!r} has shape {shape!r:.60}; a shape is a list of "
                         "integers >= 0")
    if (not isinstance(offsets, list) or len(offsets) != 2 or not all(map(whole, offsets))
            or offsets[1] < offsets[0]):
        raise ValueError(f"{path}: tensor {name!r} has data_offsets {offsets!r:.60}, not "
                         "[start, stop] with 0 <= start <= stop")
    need = int(np.prod(shape, dtype=object)) * np.dtype(DTYPES[kind]).itemsize
    if need != offsets[1] - offsets[0]:
        raise ValueError(f"{path}: tensor {name!r} of shape {shape} and dtype {kind} needs "
                         f"{need} bytes, its data_offsets give {offsets[1] - offsets[0]}")
    return kind, tuple(shape), offsets[0], offsets[1]


def _window(config: dict, arch: Architecture, n_layers: int) -> int | None:
    """The sliding window transformers applies to some layer of this config, or ``None``
    (module docstring)."""
    types = config.get("layer_types")
    if types is not None and (len(types) != n_layers or not set(types) <= {
            "full_attention", "sliding_attention"}):
        raise ValueError(f"config.json has layer_types {types!r}; supported: "
                         f"{n_layers} entries of 'full_attention' or 'sliding_attention'")
    if arch.window == "config":  # Mistral: config.sliding_window on every layer
        window = config.get("sliding_window")
    elif arch.window == "layers" and config.get("use_sliding_window"):  # Qwen2, Qwen3
        window = config.get("sliding_window")
        if types is None:
            first = _key_int(config, "max_window_layers", 28, lo=0)
            types = ["sliding_attention" if i >= first else "full_attention"
                     for i in range(n_layers)]
        if "sliding_attention" not in types:
            window = None
    else:
        window = None
    if types is not None and "sliding_attention" in types and arch.window != "layers":
        raise ValueError(f"config.json has sliding_attention in layer_types, which "
                         f"model_type {config['model_type']!r} does not read; supported: "
                         "'full_attention' only")
    return None if window is None else _key_int(config, "sliding_window")


def hf_config(config: dict) -> LlamaConfig:
    """The :class:`LlamaConfig` of a transformers config dict of a model type in
    :data:`ARCHITECTURES`; ``ValueError`` naming the key for another architecture or a setting
    the model does not implement (an activation other than ``silu``, the attention or MLP bias
    flags the architecture reads, a ``layer_types`` entry other than full or sliding
    attention). A sliding window becomes ``sliding_window`` (contexts longer than it are
    refused when run). A scaled RoPE (``rope_scaling`` / ``rope_parameters``) is read by
    :func:`~sia_theory.models.hf_config.from_hf_config` when the folder is loaded;
    ``rope_base`` is its ``rope_theta``."""
    kind = config.get("model_type")
    if kind not in ARCHITECTURES:
        raise ValueError(f"config.json has model_type {kind!r}; supported: "
                         f"{', '.join(map(repr, ARCHITECTURES))}")
    arch = ARCHITECTURES[kind]
    for key in arch.unimplemented:
        if config.get(key):
            raise ValueError(f"config.json sets {key}={config[key]!r}, which the model does not "
                             "implement; supported: null/false")
    if config.get("hidden_act", "silu") != "silu":
        raise ValueError(f"config.json has hidden_act {config['hidden_act']!r}; supported: "
                         "'silu' (the SwiGLU MLP)")
    heads = _key_int(config, "num_attention_heads")
    d_model = _key_int(config, "hidden_size")
    if arch.qk_norm and config.get("head_dim") is None:
        raise ValueError(f"config.json of model_type {kind!r} lacks head_dim (transformers then "
                         "takes 128, not hidden_size / num_attention_heads): give it")
    if config.get("head_dim") is None and d_model % heads:
        raise ValueError(f"config.json: hidden_size {d_model} is not a multiple of "
                         f"num_attention_heads {heads} (transformers refuses it); give head_dim")
    kv_heads = _key_int(config, "num_key_value_heads", heads)
    if heads % kv_heads:
        raise ValueError(f"config.json: num_attention_heads {heads} is not a multiple of "
                         f"num_key_value_heads {kv_heads} (each key-value head serves a whole "
                         "group of query heads)")
    n_layers = _key_int(config, "num_hidden_layers")
    rope = config.get("rope_parameters")
    theta = (rope or {}).get("rope_theta") if isinstance(rope, dict) else None
    return LlamaConfig(n_layers=n_layers, d_model=d_model, n_heads=heads,
                       n_kv_heads=kv_heads, ffn=_key_int(config, "intermediate_size"),
                       rope_base=_key_real(config, "rope_theta", 10000.0, theta, lo=1,
                                           lo_open=True),
                       rms_eps=_key_real(config, "rms_norm_eps", 1e-6, lo=0),
                       context_length=_key_int(config, "max_position_embeddings", 2048),
                       vocab_size=_key_int(config, "vocab_size"),
                       head_dim=_key_int(config, "head_dim", d_model // heads),
                       sliding_window=_window(config, arch, n_layers))


def _key_int(config: dict, key: str, default=None, lo: int = 1) -> int:
    """``config[key]`` (``default`` when absent or null) as an integer >= ``lo``;
    ``ValueError`` naming ``config.json`` and the key when it is missing without a default or
    out of range."""
    value = config.get(key)
    if value is None:
        value = default
    if value is None:
        raise ValueError(f"config.json: {key} is missing (an integer >= {lo})")
    try:
        return check_int(key, value, lo=lo)
    except ValueError as err:
        raise ValueError(f"config.json: {err}") from None


def _key_real(config: dict, key: str, default: float, value=None, **bounds) -> float:
    """``value`` if given, else ``config[key]`` (``default`` when absent or null), as a finite
    float within ``bounds``; ``ValueError`` naming ``config.json`` and the key."""
    if value is None:
        value = config.get(key)
    try:
        return check_real(key, default if value is None else value, **bounds)
    except ValueError as err:
        raise ValueError(f"config.json: {err}") from None


def to_gguf_rows(weight: np.ndarray, n_heads: int) -> np.ndarray:
    """llama.cpp's permutation of a Hugging Face ``q``/``k`` weight ``(n_heads·D, d)``:
    ``reshape(n_heads, 2, D/2, d).swapaxes(1, 2)`` (the inverse of
    :func:`~.llama.unpermute_rope_rows`)."""
    rows, cols = weight.shape
    return np.ascontiguousarray(
        weight.reshape(n_heads, 2, rows // n_heads // 2, cols).swapaxes(1, 2).reshape(rows, cols))


def hf_shapes(config: LlamaConfig, model_type: str = "llama") -> dict:
    """Every transformers tensor name of a ``model_type`` checkpoint with ``config`` →
    ``(GGUF name, shape, the config's reason for it)`` (``lm_head.weight`` is optional: an
    untied head)."""
    arch = ARCHITECTURES[model_type]
    d, ffn, dim = config.d_model, config.ffn, config.head_dim
    q, kv = config.n_heads * dim, config.n_kv_heads * dim
    why_q = f"num_attention_heads {config.n_heads} × head_dim {dim}"
    why_kv = f"num_key_value_heads {config.n_kv_heads} × head_dim {dim}"
    why_d, why_f = f"hidden_size {d}", f"intermediate_size {ffn}"
    layer = {"input_layernorm.weight": ("attn_norm.weight", (d,), why_d),
             "post_attention_layernorm.weight": ("ffn_norm.weight", (d,), why_d),
             "self_attn.q_proj.weight": ("attn_q.weight", (q, d), f"{why_q}, {why_d}"),
             "self_attn.k_proj.weight": ("attn_k.weight", (kv, d), f"{why_kv}, {why_d}"),
             "self_attn.v_proj.weight": ("attn_v.weight", (kv, d), f"{why_kv}, {why_d}"),
             "self_attn.o_proj.weight": ("attn_output.weight", (d, q), f"{why_d}, {why_q}"),
             "mlp.gate_proj.weight": ("ffn_gate.weight", (ffn, d), f"{why_f}, {why_d}"),
             "mlp.up_proj.weight": ("ffn_up.weight", (ffn, d), f"{why_f}, {why_d}"),
             "mlp.down_proj.weight": ("ffn_down.weight", (d, ffn), f"{why_d}, {why_f}")}
    if arch.qkv_bias:
        layer.update({"self_attn.q_proj.bias": ("attn_q.bias", (q,), why_q),
                      "self_attn.k_proj.bias": ("attn_k.bias", (kv,), why_kv),
                      "self_attn.v_proj.bias": ("attn_v.bias", (kv,), why_kv)})
    if arch.qk_norm:
        layer.update({"self_attn.q_norm.weight": ("attn_q_norm.weight", (dim,), f"head_dim {dim}"),
                      "self_attn.k_norm.weight": ("attn_k_norm.weight", (dim,), f"head_dim {dim}")})
    why_v = f"vocab_size {config.vocab_size}, {why_d}"
    shapes = {"model.embed_tokens.weight": ("token_embd.weight", (config.vocab_size, d), why_v),
              "model.norm.weight": ("output_norm.weight", (d,), why_d),
              "lm_head.weight": ("output.weight", (config.vocab_size, d), why_v)}
    for i in range(config.n_layers):
        for hf_name, (name, shape, why) in layer.items():
            shapes[f"model.layers.{i}.{hf_name}"] = (f"blk.{i}.{name}", shape, why)
    return shapes


def read_hf_folder(folder) -> tuple[LlamaConfig, dict]:
    """``(config, tensors)`` of a Hugging Face folder of a model type in :data:`ARCHITECTURES`,
    the tensors under the GGUF names :class:`~.llama.LlamaModel` reads (``output.weight`` only
    for an untied head), each checked against the shape the config gives it (a ``ValueError``
    naming the file and the tensor).

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
                         "(a Hugging Face checkpoint)")
    raw = read_json(folder / "config.json")
    if not isinstance(raw, dict):
        raise ValueError(f"{folder / 'config.json'} must hold a JSON object, got "
                         f"{type(raw).__name__}")
    try:
        config = hf_config(raw)
    except ValueError as err:  # "config.json ..." named with its folder
        text = str(err)
        raise ValueError(str(folder / "config.json") + text[len("config.json"):]
                         if text.startswith("config.json") else f"{folder / 'config.json'}: "
                         f"{text}") from None
    hf, origin = {}, {}
    for file in files:
        part = read_safetensors(file)
        twice = sorted(set(part) & set(hf))
        if twice:  # two shards with one tensor: which one the model is, is not said
            raise ValueError(f"{folder}: tensor {twice[0]!r} is in both {origin[twice[0]]} and "
                             f"{file.name} ({len(twice)} such tensors)")
        hf.update(part)
        origin.update(dict.fromkeys(part, file.name))
    kind = raw["model_type"]
    tensors = {}
    for hf_name, (name, shape, why) in hf_shapes(config, kind).items():
        if hf_name not in hf:
            if hf_name == "lm_head.weight":
                continue
            raise ValueError(f"{folder} lacks the tensor {hf_name!r} of a {kind} checkpoint")
        weight = hf.pop(hf_name)
        if weight.shape != shape:
            raise ValueError(f"{folder / origin[hf_name]}: tensor {hf_name!r} has shape "
                             f"{weight.shape}; expected {shape} ({why}, config.json)")
        if not np.isfinite(weight).all():
            bad = int(np.size(weight) - np.count_nonzero(np.isfinite(weight)))
            raise ValueError(f"{folder / origin[hf_name]}: tensor {hf_name!r} holds {bad} "
                             "non-finite values (NaN or infinity); a checkpoint's weights must "
                             "be finite")
        if hf_name == "lm_head.weight" and raw.get("tie_word_embeddings", False):
            continue  # a tied head: the embedding serves (the saved copy is not read)
        part = name.split(".")[-2]  # blk.<i>.<part>.weight|bias
        if part in ("attn_q", "attn_k"):  # llama.cpp's q/k row order, biases alike
            heads = config.n_heads if part == "attn_q" else config.n_kv_heads
            weight = (to_gguf_rows(weight, heads) if weight.ndim == 2
                      else to_gguf_rows(weight[:, None], heads)[:, 0])
        elif part in ("attn_q_norm", "attn_k_norm"):  # the rows of one head
            weight = to_gguf_rows(weight[:, None], 1)[:, 0]
        tensors[name] = weight
    unused = sorted(k for k in hf if not k.endswith("rotary_emb.inv_freq"))
    if unused:
        raise ValueError(f"{folder} holds tensors the {kind} architecture does not use: "
                         f"{', '.join(unused[:5])}")
    return config, tensors
