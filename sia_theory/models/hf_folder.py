"""Reading a Hugging Face folder of a LLaMA-style decoder: ``config.json`` and ``*.safetensors``.

The folder is what ``save_pretrained`` writes for ``LlamaForCausalLM`` (transformers
``models/llama``: ``model.embed_tokens``, ``model.layers.{i}.self_attn.{q,k,v,o}_proj``,
``mlp.{gate,up,down}_proj``, ``input_layernorm``, ``post_attention_layernorm``, ``model.norm``,
``lm_head`` unless ``tie_word_embeddings``). Weights are ``(out, in)`` as in GGUF's numpy order.
Eight more ``model_type`` values are read, each as data (:data:`ARCHITECTURES`,
:class:`Architecture`), checked against transformers 5.24.0
``models/<type>/modeling_<type>.py``:

* ``mistral``: the same tensors; ``sliding_window`` on every layer.
* ``qwen2``: biases on ``self_attn.{q,k,v}_proj``; ``qwen3``: RMSNorm gains on each head of
  ``q`` and ``k`` (``self_attn.{q,k}_norm``), a ``head_dim`` of its own. Both slide the
  ``layer_types`` layers when ``use_sliding_window``.
* ``phi3``: fused ``self_attn.qkv_proj`` (q, k, v rows) and ``mlp.gate_up_proj`` (gate, then
  up: ``Phi3MLP``'s ``chunk(2)``), split here; LongRoPE read by
  :func:`~sia_theory.models.hf_config.from_hf_config`; ``sliding_window`` on every layer.
* ``olmo2``: no pre-norms; ``post_attention_layernorm`` and ``post_feedforward_layernorm`` on
  the attention and MLP outputs; ``q_norm``/``k_norm`` over the whole projection (all heads)
  before RoPE (``Olmo2Attention``).
* ``granite``: ``embedding_multiplier``, ``residual_multiplier``, ``logits_scaling`` (the logits
  divided); its ``attention_multiplier`` (the ``q·k`` scale) is from_hf_config's transform.
* ``gemma2``: sandwich norms (``input_layernorm``, ``post_attention_layernorm``,
  ``pre_feedforward_layernorm``, ``post_feedforward_layernorm``) whose gain is ``1 + w``, formed
  here in float32 as ``Gemma2RMSNorm`` forms it; embeddings × ``√hidden_size`` in the compute
  dtype; GeGLU (``gelu_pytorch_tanh``); ``attn_logit_softcapping`` on the attention logits,
  ``final_logit_softcapping`` on the output logits; alternating sliding/full layers
  (``layer_types``); tied embeddings by default. Its ``query_pre_attn_scalar`` is
  from_hf_config's transform.
* ``gemma3_text`` (``Gemma3ForCausalLM``): Gemma-2's layout plus ``q_norm``/``k_norm`` per head,
  five sliding layers to one full (``sliding_window_pattern``), the sliding layers' own RoPE base
  (from_hf_config), and no attention soft cap (``Gemma3Attention`` does not pass it).

Refused by key (``ValueError``), as settings the model does not implement: ``attention_bias``,
``mlp_bias``, ``use_bidirectional_attention``, another activation than the architecture's, a
``partial_rotary_factor`` other than 1, ``layer_types`` entries other than full or sliding
attention, a missing ``head_dim`` whose transformers default is not ``hidden_size /
num_attention_heads`` (Qwen3, Gemma); and, naming the file and the tensor, missing, extra,
misshapen or non-finite tensors (an untied folder without ``lm_head.weight`` included).

**Sliding window.** transformers keeps key ``j`` for query ``i`` when ``i - j <
sliding_window`` (``masking_utils.py``, ``sliding_window_overlay``) on the layers that slide;
the model applies the same mask in those layers, in prefill and in KV-cache decoding
(:meth:`~.llama.LlamaConfig.window_of`, :class:`~sia_theory.attention.LayerScoreMod`).

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
from ..transforms import NoScale
from ._json import read_json
from .hf_config import from_hf_config, layer_structure
from .llama import LayerDefault, LlamaConfig

__all__ = ["read_hf_folder", "hf_config", "hf_shapes", "to_gguf_rows", "read_safetensors",
           "DTYPES", "LAYER_NAMES", "NORM_NAMES", "tensor_names", "Architecture",
           "ARCHITECTURES", "split_fused", "hf_layer_schemes", "layer_defaults"]


@dataclass(frozen=True)
class Architecture:
    """What a ``model_type`` changes in the LLaMA layout, as data (transformers' modules).

    Parameters
    ----------
    qkv_bias : bool
        Biases on the ``q``/``k``/``v`` projections (``Qwen2Attention``: ``bias=True``).
    qk_norm : str or None
        RMSNorm gains on ``q`` and ``k`` before RoPE: ``"head"``, ``(head_dim,)`` on each head
        (``Qwen3Attention``, ``Gemma3Attention``: ``q_norm``, ``k_norm``); ``"projection"``,
        ``(heads·head_dim,)`` over the whole projection (``Olmo2Attention``); ``None``.
    window : str or None
        How the config sets a sliding window: ``"config"`` (``sliding_window``, every layer:
        Mistral, Phi-3), ``"layers"`` (``use_sliding_window``, ``max_window_layers``,
        ``layer_types``: Qwen2/Qwen3), ``"types"`` (``layer_types``, default every
        ``pattern``-th layer full: Gemma-2/3), ``None``.
    unimplemented : tuple of str
        Keys the architecture reads that the model does not implement, refused when true:
        ``attention_bias`` (biases on every attention projection, ``o_proj`` included),
        ``mlp_bias``, ``use_bidirectional_attention`` (Gemma's non-causal mode).
    norms : str
        The block's RMSNorms: ``"pre"`` (``input_layernorm`` before attention,
        ``post_attention_layernorm`` before the MLP: LLaMA), ``"post"``
        (``post_attention_layernorm`` and ``post_feedforward_layernorm`` on the attention and
        MLP outputs, no pre-norms: ``Olmo2DecoderLayer``), ``"sandwich"`` (both, with
        ``pre_feedforward_layernorm``: ``Gemma2DecoderLayer``, ``Gemma3DecoderLayer``).
    fused : bool
        ``self_attn.qkv_proj`` and ``mlp.gate_up_proj`` in place of the separate projections
        (``Phi3Attention``, ``Phi3MLP``; split here: q, k, v rows; gate then up).
    norm_offset : float
        Added to every RMSNorm gain: Gemma's ``(1 + weight)``, computed in float32 as
        ``Gemma2RMSNorm.forward`` does (``1.0 + self.weight.float()``).
    activation_key, activation : str
        The config key of the MLP activation and the one value the model runs
        (``"silu"``: SwiGLU; ``"gelu_pytorch_tanh"``: GeGLU, Gemma's ``hidden_activation``).
    head_dim_default : int or None
        transformers' ``head_dim`` when the config omits it, where it is not
        ``hidden_size / num_attention_heads`` (Qwen3 128, Gemma 256): such a config is refused
        rather than guessed.
    multipliers : bool
        Granite's ``embedding_multiplier``, ``residual_multiplier`` and ``logits_scaling``
        (``GraniteModel``, ``GraniteDecoderLayer``, ``GraniteForCausalLM``).
    embed_sqrt : bool
        Embeddings times ``√hidden_size`` in the compute dtype (``Gemma2TextScaledWordEmbedding``).
    attn_softcap, final_softcap : bool
        The model applies ``attn_logit_softcapping`` (Gemma-2; Gemma-3's attention does not pass
        it) and ``final_logit_softcapping`` (Gemma-2/3).
    pattern_key : str or None
        The config key of the sliding pattern when ``layer_types`` is absent (Gemma-3's
        ``sliding_window_pattern``).
    defaults : tuple of (key, value)
        transformers' config defaults of the keys read, where they differ from LLaMA's.
    """

    qkv_bias: bool = False
    qk_norm: str | None = None
    window: str | None = None
    unimplemented: tuple = ()
    norms: str = "pre"
    fused: bool = False
    norm_offset: float = 0.0
    activation_key: str = "hidden_act"
    activation: str = "silu"
    head_dim_default: int | None = None
    multipliers: bool = False
    embed_sqrt: bool = False
    attn_softcap: bool = False
    final_softcap: bool = False
    pattern_key: str | None = None
    defaults: tuple = ()


_GEMMA = {"window": "types", "unimplemented": ("attention_bias", "use_bidirectional_attention"),
          "norms": "sandwich", "norm_offset": 1.0, "activation_key": "hidden_activation",
          "activation": "gelu_pytorch_tanh", "head_dim_default": 256, "embed_sqrt": True,
          "final_softcap": True}
ARCHITECTURES = {
    "llama": Architecture(unimplemented=("attention_bias", "mlp_bias")),
    "mistral": Architecture(window="config", defaults=(("sliding_window", 4096),)),
    "qwen2": Architecture(qkv_bias=True, window="layers",
                          defaults=(("sliding_window", 4096), ("max_window_layers", 28))),
    "qwen3": Architecture(qk_norm="head", window="layers", unimplemented=("attention_bias",),
                          head_dim_default=128,
                          defaults=(("sliding_window", 4096), ("max_window_layers", 28))),
    "phi3": Architecture(window="config", fused=True, defaults=(("rms_norm_eps", 1e-5),)),
    "olmo2": Architecture(qk_norm="projection", norms="post", unimplemented=("attention_bias",),
                          defaults=(("rms_norm_eps", 1e-5),)),
    "granite": Architecture(unimplemented=("attention_bias", "mlp_bias"), multipliers=True),
    "gemma2": Architecture(**_GEMMA, attn_softcap=True, defaults=(
        ("sliding_window", 4096), ("attn_logit_softcapping", 50.0),
        ("final_logit_softcapping", 30.0), ("tie_word_embeddings", True),
        ("hidden_activation", "gelu_pytorch_tanh"))),
    "gemma3_text": Architecture(**_GEMMA, qk_norm="head", pattern_key="sliding_window_pattern",
                                defaults=(("sliding_window", 4096),
                                          ("tie_word_embeddings", True),
                                          ("hidden_activation", "gelu_pytorch_tanh"),
                                          ("sliding_window_pattern", 6))),
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
NORM_NAMES = {
    "pre": {"input_layernorm": "attn_norm", "post_attention_layernorm": "ffn_norm"},
    "post": {"post_attention_layernorm": "post_attention_norm",
             "post_feedforward_layernorm": "post_ffw_norm"},
    "sandwich": {"input_layernorm": "attn_norm", "post_attention_layernorm": "post_attention_norm",
                 "pre_feedforward_layernorm": "ffn_norm",
                 "post_feedforward_layernorm": "post_ffw_norm"},
}
""":attr:`Architecture.norms` → its layer norms' transformers names → llama.cpp's GGUF names
(``convert_hf_to_gguf.py``'s tensor map: OLMo-2's and Gemma-2's ``post_attention_norm``,
``post_ffw_norm``)."""


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


def _window(cfg: dict, n_layers: int) -> tuple:
    """``(sliding_window, layer_types)`` as transformers applies them to this config: the
    window of the layers that slide (``None``: none does) and the per-layer types (``None``:
    every layer alike). The layers are laid out by
    :func:`~sia_theory.models.hf_config.layer_structure`, the rule ``from_hf_config`` follows
    too; layers without RoPE or with chunked attention are refused (these architectures have
    none)."""
    types, rope = layer_structure({**cfg, "num_hidden_layers": n_layers})
    if not all(rope) or "chunked_attention" in types:
        raise ValueError("config.json gives layers without RoPE (no_rope_layers) or with "
                         "chunked attention (layer_types), which model_type "
                         f"{cfg['model_type']!r} does not have")
    if "sliding_attention" not in types:
        return None, None
    window = _key_int(cfg, "sliding_window")
    return window, None if set(types) == {"sliding_attention"} else tuple(types)


def hf_config(config: dict) -> LlamaConfig:
    """The :class:`LlamaConfig` of a transformers config dict of a model type in
    :data:`ARCHITECTURES` (missing keys take transformers' config defaults,
    :attr:`Architecture.defaults`); ``ValueError`` naming the key for another architecture or a
    setting the model does not implement (another activation, the bias or bidirectional flags
    the architecture reads, a partial rotary factor, a ``layer_types`` entry other than full or
    sliding attention, a missing ``head_dim`` whose default is not ``hidden_size /
    num_attention_heads``). The sliding window, soft caps and multipliers become the config's
    fields. A scaled RoPE (``rope_scaling`` / ``rope_parameters``) and the ``q·k`` scale are
    read by :func:`~sia_theory.models.hf_config.from_hf_config` when the folder is loaded;
    ``rope_base`` is the (full-attention layers') ``rope_theta``."""
    kind = config.get("model_type")
    if kind not in ARCHITECTURES:
        raise ValueError(f"config.json has model_type {kind!r}; supported: "
                         f"{', '.join(map(repr, ARCHITECTURES))}")
    arch = ARCHITECTURES[kind]
    cfg = {**dict(arch.defaults), **config}
    for key in arch.unimplemented:
        if cfg.get(key):
            raise ValueError(f"config.json sets {key}={cfg[key]!r}, which the model does not "
                             "implement; supported: null/false")
    act = cfg.get(arch.activation_key) or arch.activation
    if act != arch.activation:
        raise ValueError(f"config.json has {arch.activation_key} {act!r}; supported: "
                         f"{arch.activation!r} (model_type {kind!r}'s gated MLP)")
    rope = cfg.get("rope_parameters") or cfg.get("rope_scaling") or {}
    if not isinstance(rope, dict):
        rope = {}  # from_hf_config refuses it, naming the key
    if rope and all(isinstance(v, dict) for v in rope.values()):  # per layer type (Gemma-3)
        rope = rope.get("full_attention") or {}
    partial = rope.get("partial_rotary_factor", cfg.get("partial_rotary_factor"))
    if partial is not None and partial != 1:
        raise ValueError(f"config.json has partial_rotary_factor {partial!r}, which the model "
                         "does not implement (it rotates every dimension); supported: 1.0")
    heads = _key_int(cfg, "num_attention_heads")
    d_model = _key_int(cfg, "hidden_size")
    if arch.head_dim_default is not None and cfg.get("head_dim") is None:
        raise ValueError(f"config.json of model_type {kind!r} lacks head_dim (transformers then "
                         f"takes {arch.head_dim_default}, not hidden_size / "
                         "num_attention_heads): give it")
    if cfg.get("head_dim") is None and d_model % heads:
        raise ValueError(f"config.json: hidden_size {d_model} is not a multiple of "
                         f"num_attention_heads {heads} (transformers refuses it); give head_dim")
    kv_heads = _key_int(cfg, "num_key_value_heads", heads)
    if heads % kv_heads:
        raise ValueError(f"config.json: num_attention_heads {heads} is not a multiple of "
                         f"num_key_value_heads {kv_heads} (each key-value head serves a whole "
                         "group of query heads)")
    n_layers = _key_int(cfg, "num_hidden_layers")
    window, types = _window(cfg, n_layers)
    embedding_scale = residual_scale = logit_divisor = 1.0
    if arch.multipliers:  # Granite
        embedding_scale = _key_real(cfg, "embedding_multiplier", 1.0, lo=0, lo_open=True)
        residual_scale = _key_real(cfg, "residual_multiplier", 1.0, lo=0, lo_open=True)
        logit_divisor = _key_real(cfg, "logits_scaling", 1.0, lo=0, lo_open=True)
    if arch.embed_sqrt:  # Gemma
        embedding_scale = d_model ** 0.5
    return LlamaConfig(n_layers=n_layers, d_model=d_model, n_heads=heads,
                       n_kv_heads=kv_heads, ffn=_key_int(cfg, "intermediate_size"),
                       rope_base=_key_real(cfg, "rope_theta", 10000.0, rope.get("rope_theta"),
                                           lo=1, lo_open=True),
                       rms_eps=_key_real(cfg, "rms_norm_eps", 1e-6, lo=0),
                       context_length=_key_int(cfg, "max_position_embeddings", 2048),
                       vocab_size=_key_int(cfg, "vocab_size"),
                       head_dim=_key_int(cfg, "head_dim", d_model // heads),
                       sliding_window=window, layer_types=types,
                       attn_softcap=_softcap(cfg, "attn_logit_softcapping", arch.attn_softcap),
                       final_softcap=_softcap(cfg, "final_logit_softcapping",
                                              arch.final_softcap),
                       embedding_scale=embedding_scale, residual_scale=residual_scale,
                       logit_divisor=logit_divisor,
                       activation="gelu_tanh" if arch.activation == "gelu_pytorch_tanh"
                       else "silu")


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


def _softcap(cfg: dict, key: str, applied: bool) -> float | None:
    """``cfg[key]`` as a soft cap (a finite float ``> 0``) when the architecture applies it and
    the config gives one; ``None`` otherwise."""
    if not applied or cfg.get(key) is None:
        return None
    return _key_real(cfg, key, None, lo=0, lo_open=True)


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
    untied head). Phi-3's fused tensors get the names ``attn_qkv`` and ``ffn_gate_up``, split
    by :func:`read_hf_folder`."""
    arch = ARCHITECTURES[model_type]
    d, ffn, dim = config.d_model, config.ffn, config.head_dim
    q, kv = config.n_heads * dim, config.n_kv_heads * dim
    why_q = f"num_attention_heads {config.n_heads} × head_dim {dim}"
    why_kv = f"num_key_value_heads {config.n_kv_heads} × head_dim {dim}"
    why_d, why_f = f"hidden_size {d}", f"intermediate_size {ffn}"
    layer = {f"{hf}.weight": (f"{name}.weight", (d,), why_d)
             for hf, name in NORM_NAMES[arch.norms].items()}
    if arch.fused:  # Phi-3
        layer.update({
            "self_attn.qkv_proj.weight": ("attn_qkv.weight", (q + 2 * kv, d),
                                          f"{why_q} + 2 × {why_kv}, {why_d}"),
            "mlp.gate_up_proj.weight": ("ffn_gate_up.weight", (2 * ffn, d),
                                        f"2 × {why_f}, {why_d}")})
    else:
        layer.update({
            "self_attn.q_proj.weight": ("attn_q.weight", (q, d), f"{why_q}, {why_d}"),
            "self_attn.k_proj.weight": ("attn_k.weight", (kv, d), f"{why_kv}, {why_d}"),
            "self_attn.v_proj.weight": ("attn_v.weight", (kv, d), f"{why_kv}, {why_d}"),
            "mlp.gate_proj.weight": ("ffn_gate.weight", (ffn, d), f"{why_f}, {why_d}"),
            "mlp.up_proj.weight": ("ffn_up.weight", (ffn, d), f"{why_f}, {why_d}")})
    layer.update({
        "self_attn.o_proj.weight": ("attn_output.weight", (d, q), f"{why_d}, {why_q}"),
        "mlp.down_proj.weight": ("ffn_down.weight", (d, ffn), f"{why_d}, {why_f}")})
    if arch.qkv_bias:
        layer.update({"self_attn.q_proj.bias": ("attn_q.bias", (q,), why_q),
                      "self_attn.k_proj.bias": ("attn_k.bias", (kv,), why_kv),
                      "self_attn.v_proj.bias": ("attn_v.bias", (kv,), why_kv)})
    if arch.qk_norm == "head":
        layer.update({"self_attn.q_norm.weight": ("attn_q_norm.weight", (dim,), f"head_dim {dim}"),
                      "self_attn.k_norm.weight": ("attn_k_norm.weight", (dim,), f"head_dim {dim}")})
    elif arch.qk_norm == "projection":
        layer.update({"self_attn.q_norm.weight": ("attn_q_norm.weight", (q,), why_q),
                      "self_attn.k_norm.weight": ("attn_k_norm.weight", (kv,), why_kv)})
    why_v = f"vocab_size {config.vocab_size}, {why_d}"
    shapes = {"model.embed_tokens.weight": ("token_embd.weight", (config.vocab_size, d), why_v),
              "model.norm.weight": ("output_norm.weight", (d,), why_d),
              "lm_head.weight": ("output.weight", (config.vocab_size, d), why_v)}
    for i in range(config.n_layers):
        for hf_name, (name, shape, why) in layer.items():
            shapes[f"model.layers.{i}.{hf_name}"] = (f"blk.{i}.{name}", shape, why)
    return shapes


def split_fused(name: str, weight: np.ndarray, config: LlamaConfig) -> list:
    """``[(GGUF name, weight)]``: Phi-3's fused ``attn_qkv`` as ``attn_q``, ``attn_k``,
    ``attn_v`` (``Phi3Attention.forward``: q, then k, then v rows) and ``ffn_gate_up`` as
    ``ffn_gate``, ``ffn_up`` (``Phi3MLP.forward``: ``gate, up = chunk(2)``); others as they
    are."""
    prefix, part = name.rsplit(".", 2)[0], name.split(".")[-2]
    if part == "attn_qkv":
        q = config.n_heads * config.head_dim
        kv = config.n_kv_heads * config.head_dim
        return [(f"{prefix}.attn_q.weight", weight[:q]),
                (f"{prefix}.attn_k.weight", weight[q:q + kv]),
                (f"{prefix}.attn_v.weight", weight[q + kv:])]
    if part == "ffn_gate_up":
        return [(f"{prefix}.ffn_gate.weight", weight[:config.ffn]),
                (f"{prefix}.ffn_up.weight", weight[config.ffn:])]
    return [(name, weight)]


def read_hf_folder(folder) -> tuple[LlamaConfig, dict]:
    """``(config, tensors)`` of a Hugging Face folder of a model type in :data:`ARCHITECTURES`,
    the tensors under the GGUF names :class:`~.llama.LlamaModel` reads (``output.weight`` only
    for an untied head), each checked against the shape the config gives it (a ``ValueError``
    naming the file and the tensor).

    ``config`` carries the structure (shapes, norms, activation, multipliers, soft caps, the
    sliding window and ``layer_types``) and ``rope_theta`` only: the config's RoPE scaling, per
    layer type, and its logit factors (``rope_scaling`` / ``rope_parameters``, the ``q·k``
    scale) are read by :func:`~sia_theory.models.hf_config.from_hf_config`, which
    :func:`~sia_theory.models.loader.load_hf_folder` (``load_pretrained(folder)``) applies as
    the model's per-layer defaults; a ``LlamaModel`` built from this pair alone runs the
    unscaled RoPE of ``rope_theta`` on every layer and ``q·k/√D``."""
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
    arch = ARCHITECTURES[kind]
    tied = {**dict(arch.defaults), **raw}.get("tie_word_embeddings", False)
    tensors = {}
    for hf_name, (name, shape, why) in hf_shapes(config, kind).items():
        if hf_name not in hf:
            if hf_name == "lm_head.weight" and tied:
                continue
            raise ValueError(f"{folder} lacks the tensor {hf_name!r} of a {kind} checkpoint"
                             + (" (tie_word_embeddings is false: an untied head)"
                                if hf_name == "lm_head.weight" else ""))
        weight = hf.pop(hf_name)
        if weight.shape != shape:
            raise ValueError(f"{folder / origin[hf_name]}: tensor {hf_name!r} has shape "
                             f"{weight.shape}; expected {shape} ({why}, config.json)")
        if not np.isfinite(weight).all():
            bad = int(np.size(weight) - np.count_nonzero(np.isfinite(weight)))
            raise ValueError(f"{folder / origin[hf_name]}: tensor {hf_name!r} holds {bad} "
                             "non-finite values (NaN or infinity); a checkpoint's weights must "
                             "be finite")
        if hf_name == "lm_head.weight" and tied:
            continue  # a tied head: the embedding serves (the saved copy is not read)
        for gguf_name, tensor in split_fused(name, weight, config):
            part = gguf_name.split(".")[-2]  # blk.<i>.<part>.weight|bias
            if arch.norm_offset and part.endswith("norm"):  # Gemma: 1 + w, in float32
                tensor = np.float32(arch.norm_offset) + tensor.astype(np.float32)
            if part in ("attn_q", "attn_k"):  # llama.cpp's q/k row order, biases alike
                heads = config.n_heads if part == "attn_q" else config.n_kv_heads
                tensor = (to_gguf_rows(tensor, heads) if tensor.ndim == 2
                          else to_gguf_rows(tensor[:, None], heads)[:, 0])
            elif part in ("attn_q_norm", "attn_k_norm"):  # one head's rows, or every head's
                heads = 1 if tensor.size == config.head_dim else tensor.size // config.head_dim
                tensor = to_gguf_rows(tensor[:, None], heads)[:, 0]
            tensors[gguf_name] = tensor
    unused = sorted(k for k in hf if not k.endswith("rotary_emb.inv_freq"))
    if unused:
        raise ValueError(f"{folder} holds tensors the {kind} architecture does not use: "
                         f"{', '.join(unused[:5])}")
    return config, tensors


def hf_layer_schemes(config_path, config: LlamaConfig, raw: dict | None = None) -> list:
    """Layer ``i``'s scheme of the Hugging Face config at ``config_path`` (or of ``raw``, its
    dict, with ``config_path`` naming its source in the errors: a GGUF file's metadata as a
    transformers config, :func:`~.gguf_llama.transformers_config`) for each layer
    (:meth:`~sia_theory.models.hf_config.HFScheme.layer`: its ``encoding`` and its
    ``transform`` on ``S = q·k/√D``; Gemma-3's sliding layers with their own RoPE base, NoPE
    layers with :class:`~sia_theory.attention.NoPE`), checked against the model's own reading
    of the structure, ``config`` (:func:`hf_config`): each layer's sliding window
    (:meth:`~.llama.LlamaConfig.window_of`) and attention soft cap must be the scheme's, and a
    layer the model does not run (chunked attention, L2-normalised q and k) is refused by
    name."""
    scheme = from_hf_config(config_path if raw is None else raw)
    layers = [scheme.layer(i) for i in range(config.n_layers)]
    for i, layer in enumerate(layers):
        if layer.chunk is not None or layer.qk_norm is not None:
            raise ValueError(f"{config_path}: layer {i} is {layer.layer_type}"
                             + (" with L2-normalised q and k" if layer.qk_norm else "")
                             + ", which the model does not implement")
        if (layer.window, layer.logit_softcap) != (config.window_of(i), config.attn_softcap):
            raise ValueError(f"{config_path}: layer {i}: from_hf_config reads window "
                             f"{layer.window} and soft cap {layer.logit_softcap}, the folder "
                             f"reader {config.window_of(i)} and {config.attn_softcap}; they "
                             "must agree")
    return layers


def layer_defaults(layers) -> tuple:
    """The model's :attr:`~.llama.LlamaModel.layer_defaults` of :func:`hf_layer_schemes`' layers:
    each layer's encoding and its logit law (``None`` for ``q·k/√D`` as is)."""
    return tuple(LayerDefault(layer.encoding,
                              None if isinstance(layer.transform, NoScale) else layer.transform)
                 for layer in layers)
