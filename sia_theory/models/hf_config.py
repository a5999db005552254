"""A model's ``config.json`` as the scheme the theory analyses: RoPE frequencies, the attention
factor on cos/sin, and every query temperature shipped models use.

:func:`from_hf_config` reads a Hugging Face config (a path to ``config.json`` or its dict; the
``text_config`` of a multimodal one) the way transformers builds the model, following
``src/transformers/modeling_rope_utils.py`` of the v5 ``rope_parameters`` line (its
``standardize_rope_params``: a top-level ``original_max_position_embeddings`` wins, else
``max_position_embeddings``) and of v4.4x (huggingface/transformers commit ef46806472a6:
``rope_scaling`` beside a top-level ``rope_theta`` and ``partial_rotary_factor``):

* the head dimension: ``qk_rope_head_dim`` for multi-head latent attention (DeepSeek-V2/V3,
  Mistral-4: their transformers configs alias ``head_dim = qk_rope_head_dim``, the part that
  rotates), else ``head_dim``, else
  ``hidden_size // num_attention_heads``; ``partial_rotary_factor`` rotates the first
  ``int(D·p)`` dimensions (all of them for ``proportional``, which zeroes frequencies instead);
* the encoding and attention factor: :func:`~sia_theory.schemes.from_rope_parameters`;
* query temperatures: Llama 4's ``attn_temperature_tuning`` / ``floor_scale`` / ``attn_scale``
  (``models/llama4/modeling_llama4.py``, NoPE layers only), Mistral's ``llama_4_scaling_beta``
  (``get_llama_4_attn_scale``, at the position, llama.cpp's ``f_attn_temp_offset = 0``),
  Qwen-1's ``use_logn_attn`` with ``seq_length``, Grok-2's ``attn_temperature_len`` (sglang);
* DeepSeek's softmax scale ``get_mscale(factor, mscale_all_dim)²`` for latent-attention models
  with a scaled RoPE (transformers ``DeepseekV3Attention``; vLLM ``DeepseekV2Attention``);
* the softmax scale on the raw ``q·k`` (transformers' ``scaling``, :attr:`HFScheme.score_scale`),
  as transformers 5.x builds each attention module (checked against transformers 5.24.0):

  - ``attention_multiplier`` (Granite, GraniteMoE, GraniteMoEShared, GraniteMoEHybrid):
    ``scaling = attention_multiplier``
    (``src/transformers/models/granite/modeling_granite.py``, ``GraniteAttention``);
  - ``query_pre_attn_scalar`` (Gemma-2, Gemma-3): ``scaling = query_pre_attn_scalar ** -0.5``
    (``gemma2/modeling_gemma2.py``, ``gemma3/modeling_gemma3.py``; the configs' default 256
    when a ``gemma2``/``gemma3``/``gemma3_text`` config omits it);
  - ``qk_nope_head_dim`` with ``qk_rope_head_dim`` (multi-head latent attention: DeepSeek-V2/V3,
    Mistral-4): ``scaling = (qk_nope_head_dim + qk_rope_head_dim) ** -0.5`` times DeepSeek's
    ``mscale²`` (``deepseek_v3/modeling_deepseek_v3.py``, ``DeepseekV3Attention``; default
    ``qk_nope_head_dim`` 128 for ``deepseek_v2``/``deepseek_v3``, 64 for ``mistral4``);
  - else ``head_dim ** -0.5`` (``llama/modeling_llama.py``);
* ``attn_logit_softcapping``: the tanh cap ``cap·tanh(logits/cap)`` Gemma-2 puts on the scaled
  logits (``gemma2/modeling_gemma2.py``, ``eager_attention_forward``; the config's default 50.0
  when a ``gemma2`` config omits it), :attr:`HFScheme.logit_softcap`. Gemma-3's attention keeps
  the key but does not apply it (``Gemma3Attention`` passes no ``softcap``), so a ``gemma3`` or
  ``gemma3_text`` config has no cap.

**Layers.** transformers builds each layer from ``layer_types`` (``full_attention``,
``sliding_attention`` with ``sliding_window``, ``chunked_attention`` with
``attention_chunk_size``) and, for SmolLM3 and Llama 4, ``no_rope_layers`` (0: the layer has no
RoPE); where the config omits them, its class's rule is followed (:func:`_structure`: Gemma-2
and gpt-oss alternate, Gemma-3 has ``sliding_window_pattern - 1`` sliding layers to one full,
Qwen2/Qwen3 slide from ``max_window_layers`` on when ``use_sliding_window``, Mistral and Phi-3
slide on every layer). Each distinct kind of layer gets its own scheme, in
:attr:`HFScheme.layers` (keyed by layer type, ``_nope`` appended for layers without RoPE), with
its RoPE (Gemma-3's sliding layers: their own base, ``rope_local_base_freq`` or their entry of
a per-layer-type ``rope_parameters``), window or chunk, and the query temperature where it
applies (Llama 4: NoPE layers only, whose RoPE layers L2-normalise q and k:
``use_qk_norm``). :attr:`HFScheme.layer_types` names each layer's entry. The top-level fields
are those of the full-attention layers (else the most common kind): the single-scheme view,
which :attr:`HFScheme.mixed` flags and :meth:`HFScheme.logit_scale` refuses without a
``layer_type``.

**Keys.** :data:`CONFIG_KEYS` lists every attention-relevant key of the config classes of
:data:`SUPPORTED_CONFIGS` and what is done with it (read, refused and why, or why it does not
set the attention logits); :data:`OTHER_KEYS` the rest of them (MLP, experts, vocabulary,
training). Keys outside both (a config of another model type may carry many) are not read and
not an error. The keys of the rope dict are checked against transformers' lists (plus
Mistral's ``llama_4_scaling_beta`` and ``max_position_embeddings``, its
``ignore_keys_at_rope_validation``), and an unknown one is a ``ValueError`` naming it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from .._infra.validate import check_finite_array, check_int, check_real
from ..attention.positional import NoPE
from ..attention.rope_scaling import DynamicNTKRoPE
from ..attention.rotary import rope_frequencies
from ..schemes import Scheme
from ..schemes.rope_config import from_rope_parameters
from ..transforms import NoScale, Transform
from ..zoo import Llama4Temperature, QwenLogN, Temperature, YaRNTemperature
from ..zoo.models import (
    DeepSeekMScale,
    Grok2Temperature,
    MultiplierProduct,
    longrope_attention_factor,
    mistral_temperature,
)
from ._json import read_json

__all__ = ["HFScheme", "from_hf_config", "MISTRAL_ROPE_KEYS", "CONFIG_KEYS", "OTHER_KEYS",
           "SUPPORTED_CONFIGS", "LAYER_TYPES", "layer_structure"]

MISTRAL_ROPE_KEYS = frozenset({"llama_4_scaling_beta", "max_position_embeddings"})
"""Keys Ministral-3 / Mistral-4 keep in ``rope_parameters`` that transformers' rope validation
ignores (their configs' ``ignore_keys_at_rope_validation``)."""
_SCALED = ("llama3", "yarn", "longrope")  # the types standardize_rope_params gives an original


@dataclass(frozen=True)
class HFScheme(Scheme):
    r"""One model's attention scheme, read from its config (:func:`from_hf_config`): a
    :class:`sia_theory.schemes.Scheme` (usable wherever a scheme is) whose ``position`` is the
    encoding object the config fixes, with what transformers computes beside it.

    ``name``, ``encoding`` (= ``position``, an encoding of :mod:`sia_theory.attention`),
    ``transform``
    (the logit law on :math:`S = q\cdot k/\sqrt d`: the attention factor squared, DeepSeek's
    softmax-scale factor and the query temperature, multiplied), ``source`` (what was followed) and
    ``extension`` (the ``rope_type`` when it is not ``default``) are the fields of the library's
    scheme. ``inv_freq`` is what transformers computes at initialisation, float64, shape
    ``(rotary_dim // 2,)``; ``attention_factor`` its factor on cos and sin (1 where none);
    ``softmax_scale`` DeepSeek's ``mscale²`` on the softmax scale (1 where none);
    ``query_temperature`` the law on the query alone (``None`` where none).

    What the model's softmax uses, as transformers builds its attention (module docstring):
    ``score_scale`` is the multiplier on the raw ``q·k`` (transformers' ``scaling``: ``1/√d`` for
    Llama, Granite's ``attention_multiplier``, Gemma's ``query_pre_attn_scalar^(-1/2)``,
    DeepSeek's ``(qk_nope_head_dim + qk_rope_head_dim)^(-1/2)·mscale²``); ``qk_head_dim`` the
    dimension ``q·k`` sums over (``head_dim``, except for multi-head latent attention, where it
    is ``qk_nope_head_dim + qk_rope_head_dim`` while ``head_dim`` is the rotating part); and
    ``s_factor = score_scale·√qk_head_dim`` the factor on the package's
    :math:`S = q\cdot k/\sqrt{d}` over the dimensions ``q·k`` sums (1 for a plain Llama; Granite-3
    8B 0.0884; Gemma-3-27B 0.873; DeepSeek-V3 its ``mscale²``), which ``transform`` includes.
    ``logit_softcap`` is the tanh cap on the scaled logits, ``cap·tanh(logits/cap)`` (Gemma-2;
    ``None`` where none): not a multiplier, so it is not in ``transform`` and the Gaussian-logit
    analysis of the scheme does not see it.

    >>> s = from_hf_config({"model_type": "granite", "hidden_size": 4096,
    ...                     "num_attention_heads": 32, "attention_multiplier": 0.0078125})
    >>> s.score_scale, round(s.s_factor, 4), s.logit_softcap  # Granite-3 8B: 1/128, not 1/√128
    (0.0078125, 0.0884, None)
    """

    inv_freq: np.ndarray = field(default=None, repr=False, compare=False)
    attention_factor: float = 1.0
    softmax_scale: float = 1.0
    query_temperature: Transform | None = None
    head_dim: int = 0
    rotary_dim: int = 0
    max_position_embeddings: int | None = None
    score_scale: float = 0.0
    qk_head_dim: int = 0
    s_factor: float = 1.0
    logit_softcap: float | None = None
    layer_type: str = "full_attention"
    rope: bool = True
    window: int | None = None
    chunk: int | None = None
    layer_indices: tuple | None = None
    layer_types: tuple | None = None
    qk_norm: str | None = None
    layers: Mapping = field(default_factory=dict, repr=False, compare=False)

    @property
    def encoding(self):
        """The position encoding the config fixes (the scheme's ``position``)."""
        return self.position

    @property
    def mixed(self) -> bool:
        """Whether the model's layers differ (more than one entry in :attr:`layers`): then the
        single-scheme view (``position``, ``transform``, ...) describes :attr:`layer_type`
        layers only."""
        return len(self.layers) > 1

    def layer(self, i) -> HFScheme:
        """The scheme of layer ``i`` (0-based; its entry of :attr:`layers`)."""
        if self.layer_types is None:
            raise ValueError("the config gives no num_hidden_layers, so its layers are not laid "
                             "out: use scheme.layers[layer_type]")
        i = check_int("i", i, lo=0, hi=len(self.layer_types) - 1)
        return self.layers[self.layer_types[i]]

    def logit_scale(self, positions, layer_type=None) -> np.ndarray:
        r"""The whole factor on the raw ``q·k`` at each 0-based query position, shaped like
        ``positions``: transformers' ``scaling`` (``1/√d`` or its replacement, DeepSeek's
        ``mscale²`` included: :attr:`score_scale`) times the attention factor squared (on cos
        and sin, so on every rotated dimension) times the query temperature at the position
        (:meth:`query_scale`), for the layers of ``layer_type`` (a key of :attr:`layers`;
        default the single-scheme view, which a mixed model refuses).

        A soft cap (:attr:`logit_softcap`) then acts on ``logit_scale·q·k``; it is not a factor.

        >>> s = from_hf_config({"model_type": "granite", "hidden_size": 4096,
        ...                     "num_attention_heads": 32, "attention_multiplier": 0.0078125})
        >>> s.logit_scale([0, 10**6]).tolist()  # Granite-3 8B: 1/128 on q·k at every position
        [0.0078125, 0.0078125]
        """
        if layer_type is not None:
            if layer_type not in self.layers:
                raise ValueError(f"layer_type must be one of {', '.join(self.layers)}, got "
                                 f"{layer_type!r}")
            return self.layers[layer_type].logit_scale(positions)
        if self.mixed:
            raise ValueError(f"{self.name} has layer types {', '.join(self.layers)} with their "
                             "own factors: give layer_type")
        if self.attention_factor != 1.0 and self.rotary_dim < self.qk_head_dim:
            raise ValueError(f"{self.name}: the attention factor {self.attention_factor:g} scales "
                             f"cos and sin, so only the {self.rotary_dim} rotated of the "
                             f"{self.qk_head_dim} dimensions of q·k: no single factor on q·k")
        return self.score_scale * self.attention_factor ** 2 * self.query_scale(positions)

    def query_scale(self, positions) -> np.ndarray:
        """The multiplier of ``q`` at each 0-based absolute position (1 where the model has no
        query temperature), shaped like ``positions``.

        >>> s = from_hf_config({"hidden_size": 4096, "num_attention_heads": 32,
        ...     "rope_parameters": {"rope_type": "yarn", "rope_theta": 1e6, "factor": 16.0,
        ...     "original_max_position_embeddings": 16384, "llama_4_scaling_beta": 0.1}})
        >>> s.query_scale([16383, 16384]).round(4).tolist()  # Ministral-3: at the position p
        [1.0, 1.0693]
        """
        p = check_finite_array("positions", positions, dtype=np.float64, lo=0)
        if self.query_temperature is None:
            return np.ones_like(p)
        return np.broadcast_to(self.query_temperature.multiplier(p + 1.0), p.shape).copy()


def _load(config):
    if isinstance(config, str | Path):
        path = Path(config)
        try:
            found = "a folder" if path.is_dir() else None if path.is_file() else "no such file"
        except (OSError, ValueError) as err:  # a name too long, a NUL byte
            found = f"not a usable path: {getattr(err, 'strerror', None) or err}"
        if found:
            raise ValueError(f"config must be a config.json path or a dict, got {config!r:.200} "
                             f"({found})")
        data = read_json(path, "config ")
        name = path.parent.name if path.name == "config.json" else path.stem
    elif isinstance(config, Mapping):
        data, name = dict(config), None
    else:
        raise ValueError(f"config must be a config.json path or a dict, got {config!r}")
    if not isinstance(data, Mapping):
        raise ValueError(f"config must hold a JSON object, got {type(data).__name__}")
    name = data.get("_name_or_path") or name or data.get("model_type") or "model"
    text = data.get("text_config")
    if text is not None and not isinstance(text, Mapping):
        raise ValueError(f"text_config must be a dict (the text model's config), got "
                         f"{type(text).__name__} {text!r:.60}")
    cfg = dict(text) if isinstance(text, Mapping) else dict(data)
    if cfg.get("model_type") is None and data.get("model_type") is not None:
        cfg["model_type"] = data["model_type"]  # a multimodal wrapper's type for its text part
    return cfg, str(name)


_POSITIVE_INTS = ("hidden_size", "num_attention_heads", "head_dim", "qk_rope_head_dim",
                  "max_position_embeddings", "original_max_position_embeddings", "seq_length")
"""Keys read as sizes or lengths: when given (not null) each must be an integer >= 1
(transformers' strict config dataclasses refuse another type; 0 would be read as absent)."""


def _check_config(cfg):
    """The config's values before anything is computed: the type of ``model_type``, every key of
    :data:`_POSITIVE_INTS` an integer >= 1, and (as transformers' ``LlamaConfig`` refuses it) a
    ``hidden_size`` that ``num_attention_heads`` divides when ``head_dim`` is not given.
    ``ValueError`` naming the key."""
    if cfg.get("model_type") is not None and not isinstance(cfg["model_type"], str):
        raise ValueError(f"model_type must be a string, got {cfg['model_type']!r:.60}")
    for key in _POSITIVE_INTS:
        if cfg.get(key) is not None:
            check_int(key, cfg[key], lo=1)
    if cfg.get("attn_temperature_len") is not None:  # Grok-2's: <= 0 means none
        check_real("attn_temperature_len", cfg["attn_temperature_len"])
    hidden, heads = cfg.get("hidden_size"), cfg.get("num_attention_heads")
    if (cfg.get("head_dim") is None and cfg.get("qk_rope_head_dim") is None
            and hidden is not None and heads is not None and int(hidden) % int(heads)):
        raise ValueError(f"hidden_size {hidden} is not a multiple of num_attention_heads "
                         f"{heads} (transformers refuses it); give head_dim")


def _head_dims(cfg, rope_type, partial):
    """``(head_dim, rotary_dim)``: the dimension the frequencies are computed over."""
    if cfg.get("qk_rope_head_dim"):
        head_dim = check_int("qk_rope_head_dim", cfg["qk_rope_head_dim"], lo=2)
    elif cfg.get("head_dim"):
        head_dim = check_int("head_dim", cfg["head_dim"], lo=2)
    else:
        if cfg.get("hidden_size") is None or cfg.get("num_attention_heads") is None:
            raise ValueError("config must give head_dim (or qk_rope_head_dim), or hidden_size "
                             "and num_attention_heads")
        head_dim = (check_int("hidden_size", cfg["hidden_size"], lo=1)
                    // check_int("num_attention_heads", cfg["num_attention_heads"], lo=1))
    if rope_type == "proportional" or partial is None:
        return head_dim, head_dim
    partial = check_real("partial_rotary_factor", partial, lo=0, hi=1, lo_open=True)
    return head_dim, int(head_dim * partial)


def _rope_dict(cfg, layer_type=None):
    """The rope dict of ``layer_type``'s layers (v5 ``rope_parameters``, else v4
    ``rope_scaling``; the entry of a per-layer-type dict, else the one dict), the layer type it
    was read for (``None`` for one dict) and the ``rope_theta`` beside it. Gemma-3's v4 keys
    (``rope_local_base_freq`` for the sliding layers, ``rope_scaling`` for the full ones) are
    read as its config class does (``configuration_gemma3.py``,
    ``convert_rope_params_to_dict``)."""
    v5, v4 = cfg.get("rope_parameters"), cfg.get("rope_scaling")
    if v5 is not None and v4 is not None and v5 != v4:
        raise ValueError("config gives both rope_parameters and rope_scaling, with different "
                         "contents: give one")
    for key, value in (("rope_parameters", v5), ("rope_scaling", v4)):
        if value is not None and not isinstance(value, Mapping):
            raise ValueError(f"{key} must be a dict (transformers' rope dict) or null, got "
                             f"{type(value).__name__} {value!r:.60}")
    params, layer = dict(v5 if v5 is not None else (v4 or {})), None
    gemma3 = cfg.get("model_type") in ("gemma3", "gemma3_text")
    if params and all(isinstance(v, Mapping) for v in params.values()):
        layer = layer_type or ("full_attention" if "full_attention" in params
                               else sorted(params)[0])
        if gemma3 and layer in ("full_attention", "sliding_attention"):
            # Gemma3TextConfig.convert_rope_params_to_dict: an absent entry is default RoPE and
            # an absent rope_theta the config's (full) or rope_local_base_freq (sliding)
            entry = dict(params.get(layer) or {"rope_type": "default"})
            entry.setdefault("rope_theta", cfg.get("rope_theta", _GEMMA3_THETA["global"])
                             if layer == "full_attention"
                             else cfg.get("rope_local_base_freq", _GEMMA3_THETA["local"]))
            return entry, layer, entry.pop("rope_theta")
        if layer not in params:
            raise ValueError(f"rope_parameters has entries for {', '.join(sorted(params))} but "
                             f"the model has {layer} layers: give one for them")
        params = dict(params[layer])
    elif gemma3 and v5 is None:
        layer = layer_type or "full_attention"
        if layer == "sliding_attention":  # the local layers: default RoPE of their own base
            return ({"rope_type": "default"}, layer,
                    cfg.get("rope_local_base_freq", _GEMMA3_THETA["local"]))
        theta = params.pop("rope_theta", cfg.get("rope_theta", _GEMMA3_THETA["global"]))
        return params, layer, theta
    inner, outer = params.pop("rope_theta", None), cfg.get("rope_theta")
    if inner is not None and outer is not None and inner != outer:
        raise ValueError(f"rope_theta is given twice with different values: {inner!r} in the "
                         f"rope dict and {outer!r} at the top of the config (transformers "
                         "silently takes the rope dict's); give one")
    return params, layer, (outer if inner is None else inner)


_GEMMA3_THETA = {"global": 1_000_000.0, "local": 10_000.0}  # Gemma3TextConfig.default_theta


def _query_temperature(cfg, params, original):
    """The query-only law: Llama 4, Mistral, Qwen-1 or Grok-2 (at most one)."""
    found = []
    if cfg.get("attn_temperature_tuning"):
        found.append(("Llama 4 attn_temperature_tuning (NoPE layers; transformers "
                      "modeling_llama4)", Llama4Temperature(cfg.get("floor_scale", 8192),
                                                            cfg.get("attn_scale", 0.1))))
    beta = params.get("llama_4_scaling_beta")
    if beta:
        found.append(("Mistral llama_4_scaling_beta at position p (get_llama_4_attn_scale)",
                      mistral_temperature(beta, original)))
    if cfg.get("use_logn_attn"):
        found.append(("Qwen-1 use_logn_attn (modeling_qwen.py)",
                      QwenLogN(seq_length=cfg.get("seq_length", 8192))))
    if (cfg.get("attn_temperature_len") or -1) > 0:
        found.append(("Grok-2 attn_temperature_len (sglang)",
                      Grok2Temperature(attn_temperature_len=cfg["attn_temperature_len"])))
    if len(found) > 1:
        raise ValueError(f"config sets {len(found)} query temperatures "
                         f"({'; '.join(f for f, _ in found)}): no shipped model has several")
    return found[0] if found else (None, None)


def _constant_factors(cfg, rope_type, params, score_mod, max_pos, original):
    """``(attention_factor, softmax_scale, [their zoo members])``: YaRN's or LongRoPE's factor
    on cos/sin (squared on the logit) and DeepSeek's ``mscale²`` on the softmax scale."""
    factor_qk, members = 1.0, []
    if isinstance(score_mod, YaRNTemperature):
        factor_qk = score_mod.attention_factor
    elif rope_type == "longrope":
        factor_qk = params.get("attention_factor") or longrope_attention_factor(
            params.get("factor") or max_pos / original, original)
    if factor_qk != 1.0:
        members.append(score_mod if isinstance(score_mod, YaRNTemperature)
                       else Temperature(factor_qk ** 2))
    softmax = 1.0
    if cfg.get("qk_rope_head_dim") and rope_type != "default" and params.get("mscale_all_dim"):
        mscale = DeepSeekMScale(params["factor"], params["mscale_all_dim"])
        softmax = float(mscale.multiplier())
        if softmax != 1.0:
            members.append(mscale)
    return float(factor_qk), softmax, members


_READ = "read"
_NOT_ATTENTION = "not the attention logits"
CONFIG_KEYS = {
    # read: the factor on q·k, the encoding, the layer structure
    "head_dim": _READ, "hidden_size": _READ, "num_attention_heads": _READ,
    "qk_rope_head_dim": _READ, "qk_nope_head_dim": _READ, "partial_rotary_factor": _READ,
    "qk_head_dim": _READ, "rope_parameters": _READ, "rope_scaling": _READ, "rope_theta": _READ,
    "rope_local_base_freq": _READ, "max_position_embeddings": _READ,
    "original_max_position_embeddings": _READ, "attn_temperature_tuning": _READ,
    "floor_scale": _READ, "attn_scale": _READ, "use_logn_attn": _READ, "seq_length": _READ,
    "attn_temperature_len": _READ, "attention_multiplier": _READ,
    "query_pre_attn_scalar": _READ, "attn_logit_softcapping": _READ, "num_hidden_layers": _READ,
    "layer_types": _READ, "sliding_window": _READ, "use_sliding_window": _READ,
    "max_window_layers": _READ, "sliding_window_pattern": _READ,
    "_sliding_window_pattern": "transformers' private copy of sliding_window_pattern (read "
                               "under that name)", "no_rope_layers": _READ,
    "no_rope_layer_interval": _READ, "attention_chunk_size": _READ, "use_qk_norm": _READ,
    "use_bidirectional_attention": "refused when true: the reader models causal attention",
    # the rest of a decoder config: not the factor on q·k, the encoding or the mask
    "rope_interleave": "pairs the rotated dimensions (interleaved or half-split): the same "
                       "frequencies and factor, a permutation of q and k",
    "num_key_value_heads": "shares key heads between query heads (grouped-query attention), "
                           "not the logit of a head",
    "attention_bias": "a bias on the projections: part of q and k, not a factor on q·k",
    "attention_dropout": "training only", "kv_lora_rank": "the latent attention's compression "
    "of k and v, not its q·k scale", "q_lora_rank": "the latent attention's compression of q",
    "v_head_dim": "the value dimension, not the logits",
    "final_logit_softcapping": "the output head's cap (the model applies it), not attention",
    "logits_scaling": "the output head's divisor (the model applies it), not attention",
    "embedding_multiplier": "the embedding's factor (the model applies it), not attention",
    "residual_multiplier": "the residual branch's factor (the model applies it), not attention",
}
"""Every attention-relevant key of a supported config class and what :func:`from_hf_config`
does with it: ``"read"``, ``"refused ..."`` (with when and why), or why it does not set the
attention logits. Keys of the MLP, the experts, the vocabulary, the tokens and training
(``intermediate_size``, ``hidden_act``, ``vocab_size``, ``rms_norm_eps``, ``n_routed_experts``,
...) are listed in :data:`OTHER_KEYS`. ``tests/models/test_hf_config_keys.py`` lists the keys
of transformers' config classes and checks that each is in one of the two."""

OTHER_KEYS = frozenset({
    "vocab_size", "intermediate_size", "hidden_act", "hidden_activation", "rms_norm_eps",
    "initializer_range", "use_cache", "pad_token_id", "bos_token_id", "eos_token_id",
    "tie_word_embeddings", "mlp_bias", "pretraining_tp", "embd_pdrop", "resid_pdrop",
    "intermediate_size_mlp", "interleave_moe_layer_step", "moe_layers", "moe_intermediate_size",
    "num_local_experts", "num_experts_per_tok", "output_router_logits", "router_aux_loss_coef",
    "router_jitter_noise", "n_routed_experts", "n_shared_experts", "routed_scaling_factor",
    "n_group", "topk_group", "topk_method", "norm_topk_prob", "first_k_dense_replace",
    "num_nextn_predict_layers", "decoder_sparse_step", "mlp_only_layers", "swiglu_alpha",
    "swiglu_limit", "num_experts", "experts_per_token", "initial_context_length",
    "router_temperature", "use_qk_norm_mlp",
})
"""Keys of a supported config class that are not about attention at all (MLP, experts,
vocabulary, special tokens, initialisation, training)."""

SUPPORTED_CONFIGS = {
    "llama": "LlamaConfig", "mistral": "MistralConfig", "qwen2": "Qwen2Config",
    "qwen3": "Qwen3Config", "gemma2": "Gemma2Config", "gemma3_text": "Gemma3TextConfig",
    "phi3": "Phi3Config", "olmo2": "Olmo2Config", "granite": "GraniteConfig",
    "smollm3": "SmolLM3Config", "llama4_text": "Llama4TextConfig",
    "deepseek_v2": "DeepseekV2Config", "deepseek_v3": "DeepseekV3Config",
    "ministral3": "Ministral3Config", "gpt_oss": "GptOssConfig",
}
"""The model types whose every config key :data:`CONFIG_KEYS` and :data:`OTHER_KEYS` classify,
with transformers' config class (checked against transformers 5.24.0)."""


_SCALE_DEFAULTS = {  # transformers 5.x config classes' defaults for the keys read below
    "gemma2": {"query_pre_attn_scalar": 256, "attn_logit_softcapping": 50.0},
    "gemma3": {"query_pre_attn_scalar": 256},
    "gemma3_text": {"query_pre_attn_scalar": 256},
    "deepseek_v2": {"qk_nope_head_dim": 128},
    "deepseek_v3": {"qk_nope_head_dim": 128},
    "mistral4": {"qk_nope_head_dim": 64},
}
_CAP_NOT_APPLIED = frozenset({"gemma3", "gemma3_text"})  # Gemma3Attention passes no softcap
_UNIT_SCALING = frozenset({"gemma3n", "gemma3n_text", "gemma4", "gemma4_text"})
"""Model types whose attention transformers builds with ``scaling = 1.0`` (their q and k are
normalised: ``models/gemma3n/modeling_gemma3n.py``, ``models/gemma4/modeling_gemma4.py``) and
a soft cap under another key: refused, not read as ``1/√head_dim``."""


def _score_scale(cfg, head_dim):
    """``(base_scale, qk_head_dim, softcap, note)``: transformers' ``scaling`` before DeepSeek's
    ``mscale²``, the dimension ``q·k`` sums over, the logit cap and what was followed."""
    model_type = cfg.get("model_type")
    if model_type in _UNIT_SCALING:
        raise ValueError(f"model_type {model_type!r}: transformers builds its attention with "
                         f"scaling 1.0 on normalised q and k, which this reader does not model; "
                         f"refused rather than read as 1/sqrt(head_dim)")
    defaults = _SCALE_DEFAULTS.get(model_type, {})

    def get(key):
        return cfg[key] if key in cfg else defaults.get(key)

    qk_head_dim, notes = head_dim, []
    if cfg.get("qk_rope_head_dim"):
        nope = get("qk_nope_head_dim")
        if nope is None:
            raise ValueError("config gives qk_rope_head_dim (multi-head latent attention) but not "
                             "qk_nope_head_dim: the softmax scale is (qk_nope_head_dim + "
                             "qk_rope_head_dim)^(-1/2); give it")
        qk_head_dim = head_dim + check_int("qk_nope_head_dim", nope, lo=0)
        if cfg.get("qk_head_dim") is not None and cfg["qk_head_dim"] != qk_head_dim:
            raise ValueError(f"config gives qk_head_dim {cfg['qk_head_dim']!r} but "
                             f"qk_nope_head_dim + qk_rope_head_dim = {qk_head_dim}: they must "
                             "agree (transformers derives the first from the others)")
    multiplier, scalar = get("attention_multiplier"), get("query_pre_attn_scalar")
    if multiplier is not None and scalar is not None:
        raise ValueError("config gives both attention_multiplier and query_pre_attn_scalar: no "
                         "transformers model reads both; give one")
    if multiplier is not None:
        base = check_real("attention_multiplier", multiplier, lo=0, lo_open=True)
        notes.append(f"attention_multiplier {base:g} (granite/modeling_granite.py scaling)")
    elif scalar is not None:
        scalar = check_real("query_pre_attn_scalar", scalar, lo=0, lo_open=True)
        base = scalar ** -0.5
        notes.append(f"query_pre_attn_scalar {scalar:g} (gemma2, gemma3 modeling scaling = "
                     "query_pre_attn_scalar^-0.5)")
    else:
        base = qk_head_dim ** -0.5
        if qk_head_dim != head_dim:
            notes.append(f"latent attention scaling (qk_nope_head_dim + qk_rope_head_dim = "
                         f"{qk_head_dim})^-0.5 (deepseek_v3/modeling_deepseek_v3.py)")
    cap = get("attn_logit_softcapping")
    if cap is not None and model_type in _CAP_NOT_APPLIED:
        cap = None
    if cap is not None:
        cap = check_real("attn_logit_softcapping", cap, lo=0, lo_open=True)
        notes.append(f"attn_logit_softcapping {cap:g}: logits = cap·tanh(logits/cap) "
                     "(gemma2/modeling_gemma2.py), not in the transform")
    return float(base), qk_head_dim, cap, "; ".join(notes)


LAYER_TYPES = ("full_attention", "sliding_attention", "chunked_attention")
"""The ``layer_types`` entries read (transformers ``configuration_utils.ALLOWED_LAYER_TYPES``
that a causal decoder's attention mask distinguishes); another entry is refused by name."""

_STRUCTURE_DEFAULTS = {  # transformers 5.x config classes' defaults for the layer-structure keys
    "gemma2": {"sliding_window": 4096},
    "gemma3": {"sliding_window": 4096, "sliding_window_pattern": 6},
    "gemma3_text": {"sliding_window": 4096, "sliding_window_pattern": 6},
    "gpt_oss": {"sliding_window": 128},
    "mistral": {"sliding_window": 4096},
    "qwen2": {"sliding_window": 4096, "max_window_layers": 28},
    "qwen3": {"sliding_window": 4096, "max_window_layers": 28},
    "smollm3": {"no_rope_layer_interval": 4},
    "llama4": {"no_rope_layer_interval": 4, "attention_chunk_size": 8192,
               "attn_temperature_tuning": True, "use_qk_norm": True},
    "llama4_text": {"no_rope_layer_interval": 4, "attention_chunk_size": 8192,
                    "attn_temperature_tuning": True, "use_qk_norm": True},
}
_PERIODIC = {"gemma2": 2, "gpt_oss": 2}  # sliding when (i + 1) % period != 0
_EVERY_LAYER_WINDOW = frozenset({"mistral", "phi3", "ministral3"})
"""Model types whose attention takes ``config.sliding_window`` on every layer and ignores
``layer_types`` (transformers warns "Detected Mistral model with layer_types")."""
_IGNORE_LAYER_TYPES = _EVERY_LAYER_WINDOW | frozenset({
    "llama", "olmo2", "granite", "deepseek_v2", "deepseek_v3", "mistral4"})
"""Supported model types whose attention modules do not read ``layer_types`` (one kind of
layer, or every layer sliding): a ``layer_types`` in their config is not followed."""
_WINDOW_FROM = frozenset({"qwen2", "qwen3"})  # use_sliding_window, from max_window_layers on
_NOPE_LAYERS = frozenset({"smollm3", "llama4", "llama4_text"})  # no_rope_layers (1 = RoPE)


def _defaults(cfg):
    """``cfg`` with transformers' defaults for the keys read here filled in where absent."""
    kind = cfg.get("model_type")
    return {**_SCALE_DEFAULTS.get(kind, {}), **_STRUCTURE_DEFAULTS.get(kind, {}), **cfg}


def layer_structure(config) -> tuple:
    """``(layer_types, rope)`` of a transformers config dict, one entry per layer: each layer's
    type (an entry of :data:`LAYER_TYPES`) and whether it rotates, as transformers 5.x builds
    them (:func:`_structure`, the config class's defaults filled in). The one rule
    :func:`from_hf_config` and the folder reader (:mod:`.hf_folder`) follow."""
    types, rope, counted = _structure(_defaults(dict(config)))
    if not counted:
        raise ValueError("config must give num_hidden_layers (or layer_types) to lay out its "
                         "layers")
    return types, rope


def _structure(cfg):
    """``(types, rope, counted)``: each layer's ``layer_types`` entry, whether it rotates, and
    whether the list is the model's own (``num_hidden_layers`` given) or one period of its
    pattern (``counted`` False). As transformers 5.x builds ``layer_types`` and
    ``no_rope_layers`` (``configuration_gemma2.py``, ``configuration_gemma3.py``,
    ``configuration_gpt_oss.py``, ``configuration_qwen2.py``, ``configuration_qwen3.py``,
    ``configuration_smollm3.py``, ``configuration_llama4.py``; Mistral and Phi-3 pass
    ``config.sliding_window`` to every layer)."""
    kind = cfg.get("model_type")
    n = cfg.get("num_hidden_layers")
    counted = n is not None
    if counted:
        n = check_int("num_hidden_layers", n, lo=1)
    window = cfg.get("sliding_window")
    period = None
    if kind in _PERIODIC:
        period = _PERIODIC[kind]
    elif kind in ("gemma3", "gemma3_text"):
        period = check_int("sliding_window_pattern", cfg["sliding_window_pattern"], lo=1)
    elif kind in _NOPE_LAYERS:
        period = check_int("no_rope_layer_interval", cfg["no_rope_layer_interval"], lo=1)
    given = None if kind in _IGNORE_LAYER_TYPES else cfg.get("layer_types")
    if given is not None:
        if (not isinstance(given, list | tuple) or not given
                or not all(isinstance(t, str) for t in given)):
            raise ValueError(f"layer_types must be a list of layer-type names, got {given!r}")
        bad = sorted(set(given) - set(LAYER_TYPES))
        if bad:
            raise ValueError(f"layer_types has {bad[0]!r}, which this reader does not model; "
                             f"supported: {', '.join(LAYER_TYPES)}")
        if counted and len(given) != n:
            raise ValueError(f"layer_types has {len(given)} entries but num_hidden_layers is "
                             f"{n}: give one per layer")
        n, counted = len(given), True
    if n is None:
        if kind in _WINDOW_FROM and cfg.get("use_sliding_window"):
            raise ValueError(f"a {kind} config with use_sliding_window needs "
                             "num_hidden_layers (the window starts at max_window_layers)")
        n = period or 1
    rope = [True] * n
    if kind in _NOPE_LAYERS:
        flags = cfg.get("no_rope_layers") or [int((i + 1) % (period or 4) != 0)
                                              for i in range(n)]
        if (not isinstance(flags, list | tuple) or len(flags) != n
                or any(f not in (0, 1) for f in flags)):
            raise ValueError(f"no_rope_layers must list 0 or 1 for each of the {n} layers "
                             f"(1: the layer uses RoPE), got {flags!r}")
        rope = [bool(f) for f in flags]
    if given is not None:
        types = list(given)
    elif kind in _PERIODIC or kind in ("gemma3", "gemma3_text"):
        types = ["sliding_attention" if (i + 1) % period else "full_attention"
                 for i in range(n)]
    elif kind in _WINDOW_FROM:
        start = check_int("max_window_layers", cfg["max_window_layers"], lo=0)
        types = ["sliding_attention" if cfg.get("use_sliding_window") and window is not None
                 and i >= start else "full_attention" for i in range(n)]
    elif kind in ("llama4", "llama4_text"):
        types = ["chunked_attention" if r and cfg.get("attention_chunk_size") is not None
                 else "full_attention" for r in rope]
    elif kind == "smollm3":
        types = ["sliding_attention" if cfg.get("use_sliding_window") and window is not None
                 and not r else "full_attention" for r in rope]
    elif kind in _EVERY_LAYER_WINDOW and window is not None:
        types = ["sliding_attention"] * n
    else:
        if (window is not None and cfg.get("use_sliding_window", True)
                and kind not in _IGNORE_LAYER_TYPES):
            raise ValueError(f"config sets sliding_window {window!r} for model_type {kind!r}, "
                             "whose layers this reader does not know how transformers masks; "
                             "give layer_types")
        types = ["full_attention"] * n
    if "sliding_attention" in types and window is None:
        raise ValueError("layer_types has sliding_attention but sliding_window is null: give it")
    return tuple(types), tuple(rope), counted


def from_hf_config(config) -> HFScheme:
    """The attention scheme of a Hugging Face model config (module docstring).

    Parameters
    ----------
    config : str, Path or dict
        A ``config.json`` path, or its dict (v4 ``rope_scaling`` or v5 ``rope_parameters``).

    Returns
    -------
    HFScheme

    Raises
    ------
    ValueError
        Naming the key: a rope dict key transformers does not accept for its ``rope_type``,
        an unknown ``rope_type``, a rope dict that is not a dict, ``rope_theta`` given twice
        with different values, sizes that are not integers >= 1 (``max_position_embeddings``
        0 included), ``hidden_size`` not a multiple of ``num_attention_heads`` without a
        ``head_dim``, missing dimensions (``qk_nope_head_dim`` with ``qk_rope_head_dim``
        outside the DeepSeek and Mistral-4 configs; ``qk_head_dim`` disagreeing with them), a
        non-positive ``attention_multiplier``, ``query_pre_attn_scalar`` or
        ``attn_logit_softcapping``, ``use_bidirectional_attention``, and a layer structure
        that does not add up (``layer_types`` of another length than ``num_hidden_layers`` or
        with an entry outside :data:`LAYER_TYPES`, ``no_rope_layers`` not 0/1 per layer,
        sliding layers without ``sliding_window``).

    Warns
    -----
    UserWarning
        Where transformers' rope validation warns (naming the key): a YaRN ``factor`` other
        than ``max_position_embeddings / original_max_position_embeddings``, an original
        context at or past the maximum, a ``factor`` in (0, 1), llama3 frequency factors out
        of order.

    Examples
    --------
    >>> s = from_hf_config({"hidden_size": 2048, "num_attention_heads": 32, "rope_theta": 1e4,
    ...     "max_position_embeddings": 163840, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128,
    ...     "rope_scaling": {"type": "yarn", "factor": 40, "mscale": 1.0, "mscale_all_dim": 1.0,
    ...                      "original_max_position_embeddings": 4096}})
    >>> s.inv_freq.shape, s.attention_factor, round(s.softmax_scale, 4)  # DeepSeek-V3's
    ((32,), 1.0, 1.8739)
    >>> s.qk_head_dim, round(s.score_scale * 192 ** 0.5, 4), round(s.s_factor, 4)
    (192, 1.8739, 1.8739)
    """
    cfg, name = _load(config)
    _check_config(cfg)
    cfg = _defaults(cfg)
    if cfg.get("use_bidirectional_attention"):
        raise ValueError("config sets use_bidirectional_attention: the reader models causal "
                         "attention (the query sees the keys before it); refused")
    types, rope, counted = _structure(cfg)
    keys = [t if r else f"{t}_nope" for t, r in zip(types, rope, strict=True)]
    groups = {}
    for i, key in enumerate(keys):
        groups.setdefault(key, []).append(i)
    layers = {key: _group_scheme(cfg, name, types[idx[0]], rope[idx[0]],
                                 tuple(idx) if counted else None)
              for key, idx in groups.items()}
    primary = ("full_attention" if "full_attention" in layers
               else max(groups, key=lambda k: len(groups[k])))
    return replace(layers[primary], layers=layers,
                   layer_types=tuple(keys) if counted else None)


def _group_scheme(cfg, name, layer_type, rope, indices) -> HFScheme:
    """The scheme of the layers of one type (``layer_type``, rotating or not)."""
    params, layer, theta = _rope_dict(cfg, layer_type)
    rope_type = params.get("rope_type") or params.get("type") or "default"
    partial = params.pop("partial_rotary_factor", cfg.get("partial_rotary_factor"))
    head_dim, rotary_dim = _head_dims(cfg, rope_type, partial)
    if rope_type == "proportional" and partial is not None:
        params["partial_rotary_factor"] = partial
    inner = {key: params.pop(key) for key in MISTRAL_ROPE_KEYS & set(params)}
    max_pos = cfg.get("max_position_embeddings") or inner.get("max_position_embeddings")
    if rope_type in _SCALED and cfg.get("original_max_position_embeddings"):
        params["original_max_position_embeddings"] = cfg["original_max_position_embeddings"]
    encoding, score_mod = from_rope_parameters(params, rope_theta=theta,
                                               max_position_embeddings=max_pos)
    original = params.get("original_max_position_embeddings") or max_pos
    note, temperature = _query_temperature(cfg, inner, original)
    if note is not None and note.startswith("Llama 4") and rope:
        note, temperature = None, None  # Llama 4 tunes the temperature of its NoPE layers only
    factor_qk, softmax, members = _constant_factors(cfg, rope_type, params, score_mod, max_pos,
                                                    original)
    if not rope:  # no cos and sin to carry an attention factor
        encoding, rotary_dim, factor_qk = NoPE(), 0, 1.0
        members = [m for m in members if isinstance(m, DeepSeekMScale)]
    base, qk_head_dim, cap, scale_note = _score_scale(cfg, head_dim)
    key_factor = base * qk_head_dim ** 0.5  # the config's factor on S = q·k/√qk_head_dim
    if abs(key_factor - 1.0) <= 1e-12:
        key_factor = 1.0  # 1/√d written out: a rounding of 1, not a factor
    else:
        members.append(Temperature(key_factor))
    if temperature is not None:
        members.append(temperature)
    transform = (NoScale() if not members else members[0] if len(members) == 1
                 else MultiplierProduct(tuple(members)))
    window = chunk = None
    if layer_type == "sliding_attention":
        window = check_int("sliding_window", cfg["sliding_window"], lo=1)
    elif layer_type == "chunked_attention":
        chunk = check_int("attention_chunk_size", cfg["attention_chunk_size"], lo=1)
    # Llama 4: q and k divided by their L2 norms on its RoPE layers (Llama4TextL2Norm)
    qk_norm = bool(cfg.get("use_qk_norm")) and rope and cfg.get("model_type") in _NOPE_LAYERS
    where = (f"{layer_type} layers" + (", q and k L2-normalised" if qk_norm else "")
             + ("" if rope else " without RoPE (no_rope_layers)")
             + (f", window {window}" if window else "")
             + (f", chunks of {chunk}" if chunk else ""))
    source = ("transformers modeling_rope_utils.py (v5 rope_parameters; v4.4x rope_scaling) "
              + (f"rope_type {rope_type!r}" if rope else "no RoPE") + f" ({where})"
              + (f"; {note}" if note else "")
              + ("; DeepSeek softmax scale mscale_all_dim" if softmax != 1.0 else "")
              + (f"; {scale_note}" if scale_note else ""))
    return HFScheme(name=name, position=encoding, transform=transform, source=source,
                    extension=None if rope_type == "default" or not rope else rope_type,
                    inv_freq=(_initial_frequencies(encoding, rotary_dim, max_pos) if rope
                              else np.zeros(0)),
                    attention_factor=float(factor_qk), softmax_scale=softmax,
                    query_temperature=temperature, head_dim=head_dim, rotary_dim=rotary_dim,
                    max_position_embeddings=None if max_pos is None else int(max_pos),
                    score_scale=base * softmax, qk_head_dim=qk_head_dim,
                    s_factor=key_factor * softmax, logit_softcap=cap, layer_type=layer_type,
                    rope=rope, window=window, chunk=chunk, layer_indices=indices,
                    qk_norm="l2" if qk_norm else None)


def _initial_frequencies(encoding, rotary_dim, max_pos) -> np.ndarray:
    """The float64 inverse frequencies of ``encoding`` on ``rotary_dim`` dimensions, as at the
    model's initialisation (dynamic NTK: ``seq_len = max_position_embeddings``)."""
    if isinstance(encoding, DynamicNTKRoPE):
        inv_freq = rope_frequencies(rotary_dim, encoding.base_at(max_pos, rotary_dim))
    else:
        inv_freq = encoding.frequencies(rotary_dim)
    return np.asarray(inv_freq, dtype=np.float64)
