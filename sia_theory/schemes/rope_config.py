"""A model config's RoPE settings as this package's encoding and score mod.

:func:`from_rope_parameters` reads the ``rope_parameters`` dict of transformers v5 (or the
``rope_scaling`` dict of v4, with ``type`` for ``rope_type`` and ``rope_theta`` passed beside it)
with the keys and defaults of transformers' ``modeling_rope_utils.py`` (its
``_validate_*_rope_parameters`` lists): unknown keys are refused, so a typo or a setting this
package does not reproduce is never silently dropped. Every ``rope_type`` transformers has is
read: ``default``, ``linear``, ``dynamic``, ``yarn``, ``longrope``, ``llama3`` and (v5)
``proportional``. A whole ``config.json`` (head dimension, Mistral's and Llama 4's query
temperatures, DeepSeek's softmax scale) is :func:`sia_theory.models.hf_config.from_hf_config`.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping

from .._infra.validate import check_int, check_real
from ..attention.positional import RoPE
from ..attention.rope_scaling import DynamicNTKRoPE, YaRNRoPE
from ..attention.rope_variants import LinearRoPE, LongRoPE, ProportionalRoPE
from ..zoo import Temperature, YaRNTemperature
from ..zoo.models import longrope_attention_factor

__all__ = ["from_rope_parameters", "ROPE_TYPES"]

# rope_type -> the keys transformers accepts for it (besides rope_type/type and rope_theta).
ROPE_TYPES = {
    "default": frozenset(),
    "linear": frozenset({"factor"}),
    "dynamic": frozenset({"factor"}),
    "yarn": frozenset({"factor", "original_max_position_embeddings", "attention_factor",
                       "beta_fast", "beta_slow", "mscale", "mscale_all_dim", "truncate"}),
    "longrope": frozenset({"short_factor", "long_factor", "original_max_position_embeddings",
                           "attention_factor", "factor"}),
    "llama3": frozenset({"factor", "original_max_position_embeddings", "low_freq_factor",
                         "high_freq_factor"}),
    "proportional": frozenset({"factor", "partial_rotary_factor"}),
}
"""``rope_type`` → the keys of a transformers ``rope_parameters`` dict that
:func:`from_rope_parameters` reproduces for it (besides ``rope_type``/``type`` and
``rope_theta``)."""


def _require(params, key, rope_type):
    if params.get(key) is None:
        raise ValueError(f"rope_parameters must give {key!r} for rope_type {rope_type!r}")
    return params[key]


def from_rope_parameters(rope_parameters: Mapping, *, rope_theta=None,
                         max_position_embeddings=None):
    """``(position, score_mod)`` for a transformers ``rope_parameters`` dict.

    * ``"default"``: ``RoPE(rope_theta)``, no score mod;
    * ``"dynamic"``: :class:`~sia_theory.attention.DynamicNTKRoPE` (``max_position_embeddings``
      of the config is required: transformers scales from it), no score mod;
    * ``"yarn"``: :class:`~sia_theory.attention.YaRNRoPE` and the zoo's
      :class:`~sia_theory.zoo.YaRNTemperature` with ``mscale``, ``mscale_all_dim`` and
      ``attention_factor``. As in transformers v5, an explicit ``factor`` wins; without one it
      is ``max_position_embeddings / original_max_position_embeddings`` (some v4 releases
      instead replaced ``factor`` by that ratio whenever ``original_max_position_embeddings``
      was given); without
      ``original_max_position_embeddings`` it is ``max_position_embeddings``; ``beta_fast`` /
      ``beta_slow`` default to 32 / 1 (also when given as 0 or ``None``: transformers reads
      them with ``or``);
    * ``"llama3"``: Llama 3.1's scaling, which is YaRN's ramp linear in the rotations
      (``YaRNRoPE(ramp="rotations", beta_slow=low_freq_factor, beta_fast=high_freq_factor)``)
      without an attention factor (transformers returns 1.0);
    * ``"linear"``: :class:`~sia_theory.attention.rope_variants.LinearRoPE`, no score mod;
    * ``"longrope"``: :class:`~sia_theory.attention.rope_variants.LongRoPE` and, unless it is 1,
      ``Temperature(attention_factor²)`` (the factor is on cos and sin; default
      :func:`~sia_theory.attention.rope_variants.longrope_attention_factor` of ``factor``, or
      of ``max_position_embeddings / original_max_position_embeddings`` without one);
    * ``"proportional"``: :class:`~sia_theory.attention.rope_variants.ProportionalRoPE` (its
      ``partial_rotary_factor`` is part of the type), no score mod.

    ``rope_theta`` may be in the dict (v5) or given here (v4 configs keep it beside
    ``rope_scaling``; default 10000 as transformers' ``default_theta``). ``partial_rotary_factor``
    is refused outside ``proportional``: this package's p-RoPE ``fraction`` is a different layout
    (see :mod:`~sia_theory.attention.positional`); :func:`~sia_theory.models.hf_config.
    from_hf_config` applies it the transformers way, to the rotated part of the head.

    Parameters
    ----------
    rope_parameters : Mapping
        transformers' ``rope_parameters`` (v5) or ``rope_scaling`` (v4) dict; ``rope_type`` (or
        ``type``) one of :data:`ROPE_TYPES` (default ``"default"``), with only that type's keys.
    rope_theta : float, optional
        The base, when the dict does not hold it (default 10000).
    max_position_embeddings : int, optional
        The config's context length, ``>= 1``.

    Returns
    -------
    tuple
        ``(position, score_mod)``: the position encoding and a zoo transform or ``None``.

    Raises
    ------
    ValueError
        If ``rope_parameters`` is not a dict, its type is unknown or it holds keys that type
        does not take, ``rope_theta`` is given twice with different values, a required key or
        length is missing, or a value is out of range (named: ``max_position_embeddings`` and
        ``original_max_position_embeddings`` integers >= 1, llama3's ``low_freq_factor`` and
        ``high_freq_factor`` > 0).

    Warns
    -----
    UserWarning
        Naming the key, where transformers' ``_validate_*_rope_parameters`` warns and still
        builds the model: a ``factor`` below 1; for llama3 an
        ``original_max_position_embeddings`` at or past ``max_position_embeddings``, or
        ``high_freq_factor <= low_freq_factor`` (read as transformers computes it, a step);
        for yarn an explicit ``factor`` other than ``max_position_embeddings /
        original_max_position_embeddings`` (unless that ratio is 1); for longrope an
        ``original_max_position_embeddings`` past ``max_position_embeddings``.

    Examples
    --------
    >>> from sia_theory import from_rope_parameters
    >>> position, score_mod = from_rope_parameters(
    ...     {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768})
    >>> type(position).__name__, round(score_mod.attention_factor, 6)  # 0.1·ln 4 + 1
    ('YaRNRoPE', 1.138629)
    """
    rope_type, params, theta = _parsed(rope_parameters, rope_theta)
    if max_position_embeddings is not None:
        max_position_embeddings = check_int("max_position_embeddings", max_position_embeddings,
                                            lo=1)
    if rope_type != "proportional":  # transformers checks the factor of the other types
        _warn_factor_below_one(params.get("factor"))
    if rope_type == "default":
        return RoPE(rope_theta=theta), None
    if rope_type in ("linear", "proportional"):
        return _interpolated(rope_type, params, theta), None
    if rope_type == "dynamic":
        if max_position_embeddings is None:
            raise ValueError("max_position_embeddings is required for rope_type 'dynamic'")
        return DynamicNTKRoPE(max_position_embeddings, _require(params, "factor", rope_type),
                              theta), None
    return _extended(rope_type, params, theta, max_position_embeddings)


def _parsed(rope_parameters, rope_theta):
    """``(rope_type, params, theta)``: the dict's type and remaining keys (each checked against
    :data:`ROPE_TYPES`) and ``rope_theta`` from the dict or the argument (default 10000)."""
    if not isinstance(rope_parameters, Mapping):
        raise ValueError(f"rope_parameters must be a dict, got {rope_parameters!r}")
    params = dict(rope_parameters)
    rope_type = params.pop("rope_type", None) or params.pop("type", None) or "default"
    params.pop("type", None)
    if not isinstance(rope_type, str) or rope_type not in ROPE_TYPES:
        raise ValueError(f"rope_type must be one of {sorted(ROPE_TYPES)}, got {rope_type!r}")
    theta = params.pop("rope_theta", None)
    if theta is not None and rope_theta is not None and theta != rope_theta:
        raise ValueError(f"rope_theta is given twice with different values: {theta!r} in "
                         f"rope_parameters and {rope_theta!r}")
    if theta is None:
        theta = 10000.0 if rope_theta is None else rope_theta
    unknown = sorted(set(params) - ROPE_TYPES[rope_type])
    if unknown:
        raise ValueError(f"rope_parameters has keys {unknown} that rope_type {rope_type!r} does "
                         f"not take here; allowed: {sorted(ROPE_TYPES[rope_type])}")
    return rope_type, params, theta


def _extended(rope_type, params, theta, max_position_embeddings):
    """``(position, score_mod)`` of the types that extend an original context: ``llama3``,
    ``longrope`` and ``yarn`` (``factor`` defaults to the ratio of the two lengths)."""
    original = params.get("original_max_position_embeddings")
    if original is not None:  # 0 is not "absent": it is refused, not replaced
        original = check_int("original_max_position_embeddings", original, lo=1)
    else:
        original = max_position_embeddings
    if original is None:
        raise ValueError(f"rope_type {rope_type!r} needs original_max_position_embeddings (in "
                         "rope_parameters) or max_position_embeddings")
    _warn_lengths(rope_type, params.get("factor"), original, max_position_embeddings)
    if rope_type == "llama3":
        low, high = _llama3_ramp(params)
        return YaRNRoPE(factor=_require(params, "factor", rope_type),
                        original_max_position_embeddings=original, rope_theta=theta,
                        beta_slow=low, beta_fast=high, ramp="rotations"), None
    factor = params.get("factor")
    if factor is None:
        if max_position_embeddings is None:
            raise ValueError(f"rope_parameters must give 'factor' for rope_type {rope_type!r} "
                             "(or pass max_position_embeddings, which transformers divides by "
                             "original_max_position_embeddings)")
        factor = max_position_embeddings / original
    if rope_type == "longrope":
        return _longrope(params, theta, original, factor)
    return _yarn(params, theta, original, factor)


def _llama3_ramp(params):
    """``(low_freq_factor, high_freq_factor)`` of a llama3 dict as YaRN's ``beta_slow`` /
    ``beta_fast``, checked under their own names (> 0). transformers warns when
    ``high_freq_factor <= low_freq_factor`` and then computes a step, no medium band: every
    wavelength past ``original / low_freq_factor`` divided by the factor (Llama 4 Scout ships
    low = high = 1). The same warning here, and the same step (``beta_fast = beta_slow``)."""
    low = check_real("low_freq_factor", _require(params, "low_freq_factor", "llama3"), lo=0,
                     lo_open=True)
    high = check_real("high_freq_factor", _require(params, "high_freq_factor", "llama3"), lo=0,
                      lo_open=True)
    if high <= low:
        _warn(f"rope_parameters: high_freq_factor must be greater than low_freq_factor, got "
              f"high_freq_factor {high:g} and low_freq_factor {low:g}; read as transformers "
              f"computes it, a step at wavelength original_max_position_embeddings / "
              f"low_freq_factor")
    return low, max(low, high)


def _warn(message):
    warnings.warn(message + " (transformers' modeling_rope_utils.py warns too and builds the "
                  "model)", UserWarning, stacklevel=5)


def _warn_factor_below_one(factor):
    """transformers' ``_validate_*_rope_parameters``: a ``factor`` in (0, 1) is warned about (a
    factor that is not a positive real number is left to the encodings, which refuse it by
    name)."""
    if isinstance(factor, int | float) and not isinstance(factor, bool) and 0 < factor < 1:
        warnings.warn(f"rope_parameters: factor must be >= 1 (transformers warns), got {factor}",
                      UserWarning, stacklevel=3)


def _warn_lengths(rope_type, factor, original, max_position_embeddings):
    """The length contradictions transformers 5.x warns about (``_validate_llama3_`` and
    ``_validate_yarn_rope_parameters``), and a LongRoPE original length past the context
    (whose implied factor ``max/original`` is below 1: transformers then takes attention factor
    1, as here)."""
    if max_position_embeddings is None:
        return
    if rope_type == "llama3" and original >= max_position_embeddings:
        _warn(f"rope_parameters: original_max_position_embeddings {original} must be less than "
              f"max_position_embeddings {max_position_embeddings} for rope_type 'llama3'")
    elif rope_type == "longrope" and original > max_position_embeddings:
        _warn(f"rope_parameters: original_max_position_embeddings {original} is larger than "
              f"max_position_embeddings {max_position_embeddings} for rope_type 'longrope' "
              f"(the context is shorter than the one it extends)")
    elif rope_type == "yarn" and factor is not None:
        implicit = max_position_embeddings / original
        if implicit not in (factor, 1):
            _warn(f"rope_parameters: factor {factor} does not match max_position_embeddings / "
                  f"original_max_position_embeddings = {max_position_embeddings} / {original} "
                  f"= {implicit:g}; the explicit factor is used")


def _interpolated(rope_type, params, theta):
    """``linear`` (factor required) or ``proportional`` (factor 1 and p = 1 by default)."""
    if rope_type == "linear":
        return LinearRoPE(_require(params, "factor", rope_type), theta)
    return ProportionalRoPE(theta, params.get("partial_rotary_factor", 1.0),
                            params.get("factor", 1.0))


def _longrope(params, theta, original, factor):
    """LongRoPE and its attention factor (explicit, else ``sqrt(1 + ln f/ln L)``) as a constant
    :class:`~sia_theory.zoo.Temperature` of its square (it multiplies cos and sin)."""
    position = LongRoPE(_require(params, "short_factor", "longrope"),
                        _require(params, "long_factor", "longrope"), original, theta)
    factor_qk = params.get("attention_factor")
    if factor_qk is None:
        factor_qk = longrope_attention_factor(factor, original)
    return position, (None if factor_qk == 1.0 else Temperature(factor_qk ** 2))


def _yarn(params, theta, original, factor):
    """YaRN's interpolation and its attention factor (the zoo's ``YaRNTemperature``)."""
    position = YaRNRoPE(factor=factor, original_max_position_embeddings=original,
                        rope_theta=theta, beta_fast=params.get("beta_fast") or 32.0,
                        beta_slow=params.get("beta_slow") or 1.0,
                        truncate=params.get("truncate", True))
    score_mod = YaRNTemperature(factor=factor, mscale=params.get("mscale"),
                                mscale_all_dim=params.get("mscale_all_dim"),
                                attention_factor=params.get("attention_factor"))
    return position, score_mod
