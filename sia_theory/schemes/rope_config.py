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

from collections.abc import Mapping

from .._infra.validate import check_int
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
        length is missing, or a value is out of range.

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
    if rope_type not in ROPE_TYPES:
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
    original = params.get("original_max_position_embeddings") or max_position_embeddings
    if original is None:
        raise ValueError(f"rope_type {rope_type!r} needs original_max_position_embeddings (in "
                         "rope_parameters) or max_position_embeddings")
    if rope_type == "llama3":
        return YaRNRoPE(factor=_require(params, "factor", rope_type),
                        original_max_position_embeddings=original, rope_theta=theta,
                        beta_slow=_require(params, "low_freq_factor", rope_type),
                        beta_fast=_require(params, "high_freq_factor", rope_type),
                        ramp="rotations"), None
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
