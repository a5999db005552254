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

The keys read are exactly those named above: ``text_config``, ``_name_or_path``,
``model_type``, ``head_dim``, ``hidden_size``, ``num_attention_heads``, ``qk_rope_head_dim``,
``qk_nope_head_dim``, ``partial_rotary_factor``, ``rope_parameters`` / ``rope_scaling``,
``rope_theta``, ``max_position_embeddings``, ``original_max_position_embeddings``,
``attn_temperature_tuning``, ``floor_scale``, ``attn_scale``, ``use_logn_attn``,
``seq_length``, ``attn_temperature_len``, ``attention_multiplier``, ``query_pre_attn_scalar``
and ``attn_logit_softcapping``. Any other key of the config is not read and not an error
(configs carry many: Granite's ``embedding_multiplier``, ``residual_multiplier`` and
``logits_scaling``, Gemma's ``final_logit_softcapping``, ... do not touch the attention
logits). The keys of the rope dict are checked against transformers' lists (plus Mistral's
``llama_4_scaling_beta`` and ``max_position_embeddings``, its
``ignore_keys_at_rope_validation``), and an unknown one is a ``ValueError`` naming it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .._infra.validate import check_finite_array, check_int, check_real
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

__all__ = ["HFScheme", "from_hf_config", "MISTRAL_ROPE_KEYS"]

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
    ``logit_scale = score_scale·√qk_head_dim`` the factor on the package's
    :math:`S = q\cdot k/\sqrt{d}` over the dimensions ``q·k`` sums (1 for a plain Llama; Granite-3
    8B 0.0884; Gemma-3-27B 0.873; DeepSeek-V3 its ``mscale²``), which ``transform`` includes.
    ``logit_softcap`` is the tanh cap on the scaled logits, ``cap·tanh(logits/cap)`` (Gemma-2;
    ``None`` where none): not a multiplier, so it is not in ``transform`` and the Gaussian-logit
    analysis of the scheme does not see it.

    >>> s = from_hf_config({"model_type": "granite", "hidden_size": 4096,
    ...                     "num_attention_heads": 32, "attention_multiplier": 0.0078125})
    >>> s.score_scale, round(s.logit_scale, 4), s.logit_softcap  # Granite-3 8B: 1/128, not 1/√128
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
    logit_scale: float = 1.0
    logit_softcap: float | None = None

    @property
    def encoding(self):
        """The position encoding the config fixes (the scheme's ``position``)."""
        return self.position

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


def _rope_dict(cfg):
    """The rope dict (v5 ``rope_parameters``, else v4 ``rope_scaling``), its layer read (the
    ``full_attention`` entry of a per-layer-type dict) and the ``rope_theta`` beside it."""
    v5, v4 = cfg.get("rope_parameters"), cfg.get("rope_scaling")
    if v5 is not None and v4 is not None and v5 != v4:
        raise ValueError("config gives both rope_parameters and rope_scaling, with different "
                         "contents: give one")
    for key, value in (("rope_parameters", v5), ("rope_scaling", v4)):
        if value is not None and not isinstance(value, Mapping):
            raise ValueError(f"{key} must be a dict (transformers' rope dict) or null, got "
                             f"{type(value).__name__} {value!r:.60}")
    params, layer = dict(v5 if v5 is not None else (v4 or {})), None
    if params and all(isinstance(v, Mapping) for v in params.values()):
        layer = "full_attention" if "full_attention" in params else sorted(params)[0]
        params = dict(params[layer])
    inner, outer = params.pop("rope_theta", None), cfg.get("rope_theta")
    if inner is not None and outer is not None and inner != outer:
        raise ValueError(f"rope_theta is given twice with different values: {inner!r} in the "
                         f"rope dict and {outer!r} at the top of the config (transformers "
                         "silently takes the rope dict's); give one")
    return params, layer, (outer if inner is None else inner)


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
        For a rope dict key transformers does not accept for its ``rope_type`` (named), an
        unknown ``rope_type``, missing dimensions (``qk_nope_head_dim`` with
        ``qk_rope_head_dim`` outside the DeepSeek and Mistral-4 configs), or a non-positive
        ``attention_multiplier``, ``query_pre_attn_scalar`` or ``attn_logit_softcapping``
        (named).

    Examples
    --------
    >>> s = from_hf_config({"hidden_size": 2048, "num_attention_heads": 32, "rope_theta": 1e4,
    ...     "max_position_embeddings": 163840, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128,
    ...     "rope_scaling": {"type": "yarn", "factor": 40, "mscale": 1.0, "mscale_all_dim": 1.0,
    ...                      "original_max_position_embeddings": 4096}})
    >>> s.inv_freq.shape, s.attention_factor, round(s.softmax_scale, 4)  # DeepSeek-V3's
    ((32,), 1.0, 1.8739)
    >>> s.qk_head_dim, round(s.score_scale * 192 ** 0.5, 4), round(s.logit_scale, 4)
    (192, 1.8739, 1.8739)
    """
    cfg, name = _load(config)
    _check_config(cfg)
    params, layer, theta = _rope_dict(cfg)
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
    factor_qk, softmax, members = _constant_factors(cfg, rope_type, params, score_mod, max_pos,
                                                    original)
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
    source = (f"transformers modeling_rope_utils.py (v5 rope_parameters; v4.4x rope_scaling) "
              f"rope_type {rope_type!r}"
              + (f" ({layer} layers)" if layer else "") + (f"; {note}" if note else "")
              + ("; DeepSeek softmax scale mscale_all_dim" if softmax != 1.0 else "")
              + (f"; {scale_note}" if scale_note else ""))
    return HFScheme(name=name, position=encoding, transform=transform, source=source,
                    extension=None if rope_type == "default" else rope_type,
                    inv_freq=_initial_frequencies(encoding, rotary_dim, max_pos),
                    attention_factor=float(factor_qk), softmax_scale=softmax,
                    query_temperature=temperature, head_dim=head_dim, rotary_dim=rotary_dim,
                    max_position_embeddings=None if max_pos is None else int(max_pos),
                    score_scale=base * softmax, qk_head_dim=qk_head_dim,
                    logit_scale=key_factor * softmax, logit_softcap=cap)


def _initial_frequencies(encoding, rotary_dim, max_pos) -> np.ndarray:
    """The float64 inverse frequencies of ``encoding`` on ``rotary_dim`` dimensions, as at the
    model's initialisation (dynamic NTK: ``seq_len = max_position_embeddings``)."""
    if isinstance(encoding, DynamicNTKRoPE):
        inv_freq = rope_frequencies(rotary_dim, encoding.base_at(max_pos, rotary_dim))
    else:
        inv_freq = encoding.frequencies(rotary_dim)
    return np.asarray(inv_freq, dtype=np.float64)
