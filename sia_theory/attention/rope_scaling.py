"""RoPE scaling for context extension, as the implementations models actually run it.

Each encoding is a frozen callable ``encoding(x, positions)`` with the half-split pairing
``(k, k + D/2)`` of :func:`~sia_theory.attention.rope` (HF Llama's ``rotate_half``), in float64
(the references compute the frequencies in float32: relative differences of about 1e-7).

* :func:`ntk_base` / :class:`NTKRoPE` — NTK-aware scaling (bloc97 2023; SI App. G): base
  ``b·α^(D/(D−2))`` with ``α = L_inf/L_tr`` when ``L_inf > L_tr``. Reference: the YaRN
  authors' ``scaled_rope/LlamaNTKScaledRotaryEmbedding.py`` (jquesnelle/yarn, commit
  995db5b575e7, April 2024), ``base * alpha ** (dim / (dim - 2))``.
* :func:`dynamic_ntk_base` / :class:`DynamicNTKRoPE` — dynamic NTK (emozilla 2023): transformers'
  ``_compute_dynamic_ntk_parameters`` (``modeling_rope_utils.py``; v4.4x at commit ef46806472a6
  and the v5 ``rope_parameters`` line read the same), ``b·(f·ℓ/L − (f − 1))^(D/(D−2))`` with
  ``ℓ = max(seq_len, L)``, ``seq_len = max(position_ids) + 1`` of the forward call.
* :func:`yarn_frequencies` / :class:`YaRNRoPE` — YaRN's "NTK-by-parts" interpolation (Peng et
  al. 2023, §3.2–3.4): frequency ``d`` becomes ``(1 − γ_d)·θ_d/s + γ_d·θ_d``. Two readings of the
  ramp ``γ``:

  - ``ramp="dimension"`` (default): the YaRN authors' code (``scaled_rope/
    LlamaYaRNScaledRotaryEmbedding.py``, commit 995db5b575e7) and transformers'
    ``_compute_yarn_parameters`` (v4.4x and v5; v5 adds ``truncate``): the correction
    dimensions ``d(n) = D·ln(L/(2πn))/(2 ln b)`` of ``n = beta_fast`` and ``n = beta_slow``
    rotations are floored / ceiled (``truncate=True``) and clamped to ``[0, D − 1]``, and
    ``γ_d = 1 − clip((d − low)/(high − low), 0, 1)`` is linear in the *dimension index*. The
    inference engines port this code (their ``_yarn_find_correction_range`` /
    ``_yarn_linear_ramp_mask``).
  - ``ramp="rotations"``: the paper's text, ``γ = clip((r − α)/(β − α), 0, 1)`` linear in the
    number of rotations ``r = L·θ_d/(2π)``. This is exactly Llama 3.1's ``rope_type="llama3"``
    (transformers ``_compute_llama3_parameters``: ``smooth = (L/λ − low_freq_factor)/
    (high_freq_factor − low_freq_factor)``, i.e. ``α = low_freq_factor = 1``, ``β =
    high_freq_factor = 4``, ``s = factor = 8``, ``L = 8192``, no attention factor).

  At factor 2, L = 8192, b = 1e5, D = 64 the two readings differ in 9 of the 32 frequencies,
  by up to 23 %. YaRN's attention factor is the zoo's :class:`~sia_theory.zoo.YaRNTemperature`.

Parameters take the transformers ``rope_parameters`` names (``factor``,
``original_max_position_embeddings``, ``max_position_embeddings``, ``rope_theta``,
``beta_fast``, ``beta_slow``, ``truncate``) or this package's older ones (``train_length``,
``target_length``, ``inference_length``, ``base``, ``alpha``, ``beta``); :func:`from_rope_parameters
<sia_theory.schemes.rope_config.from_rope_parameters>` reads a model config's dict.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._infra.validate import check_int, check_real, one_of
from .rotary import RoPE, check_head_dim, check_positions, check_x, rope, rope_frequencies
from .yarn import YARN_ALPHA, YARN_BETA, YARN_RAMPS, YaRNRoPE, yarn_frequencies

__all__ = ["ntk_base", "NTKRoPE", "dynamic_ntk_base", "DynamicNTKRoPE", "yarn_frequencies",
           "YaRNRoPE", "YARN_ALPHA", "YARN_BETA", "YARN_RAMPS"]

def _ntk_exponent(head_dim):
    head_dim = check_head_dim(head_dim)
    if head_dim == 2:
        raise ValueError("head_dim must be >= 4 for NTK scaling (exponent d/(d-2))")
    return head_dim / (head_dim - 2)


def ntk_base(base, head_dim, train_length, inference_length) -> float:
    """NTK-aware RoPE base (SI App. G; bloc97 2023): ``base·(L_inf/L_tr)^(d/(d−2))`` if
    ``L_inf > L_tr``, else ``base`` (the scaling only applies beyond the training length).

    Parameters
    ----------
    base : float
        ``> 1``.
    head_dim : int
        ``d``, even and ``>= 4``.
    train_length, inference_length : int
        ``L_tr`` and ``L_inf``, ``>= 1``.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If an argument is outside its range.
    """
    base = check_real("base", base, lo=1, lo_open=True)
    exponent = _ntk_exponent(head_dim)
    train_length = check_int("train_length", train_length, lo=1)
    inference_length = check_int("inference_length", inference_length, lo=1)
    if inference_length <= train_length:
        return base
    return base * (inference_length / train_length) ** exponent


def dynamic_ntk_base(rope_theta, head_dim, max_position_embeddings, seq_len,
                     factor=1.0) -> float:
    """Dynamic NTK base (transformers ``_compute_dynamic_ntk_parameters``): with
    ``ℓ = max(seq_len, L)``, ``rope_theta·(factor·ℓ/L − (factor − 1))^(d/(d−2))``; equal to
    ``rope_theta`` up to ``L = max_position_embeddings`` and to :func:`ntk_base` when
    ``factor = 1``.

    Parameters
    ----------
    rope_theta : float
        ``> 1``.
    head_dim : int
        ``d``, even and ``>= 4``.
    max_position_embeddings, seq_len : int
        ``L`` and the current length, ``>= 1``.
    factor : float
        ``>= 1``.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If an argument is outside its range.
    """
    rope_theta = check_real("rope_theta", rope_theta, lo=1, lo_open=True)
    exponent = _ntk_exponent(head_dim)
    length = check_int("max_position_embeddings", max_position_embeddings, lo=1)
    seq_len = max(check_int("seq_len", seq_len, lo=1), length)
    factor = check_real("factor", factor, lo=1)
    return rope_theta * (factor * seq_len / length - (factor - 1.0)) ** exponent


@dataclass(frozen=True, init=False)
class NTKRoPE:
    """RoPE whose base is NTK-scaled for ``inference_length`` (:func:`ntk_base`); ``fraction < 1``
    is p-RoPE as in :func:`~sia_theory.attention.rope`. ``rope_theta`` is accepted for ``base``.

    Parameters
    ----------
    train_length, inference_length : int
        Training and inference context lengths ``L_tr, L_inf >= 1`` (tokens).
    base : float
        RoPE base, ``> 1`` (default 10000; also as ``rope_theta``).
    fraction : float
        Share of the frequencies rotated, ``0 < fraction <= 1`` (p-RoPE).

    Raises
    ------
    ValueError
        If an argument is outside the ranges above, or both ``base`` and ``rope_theta`` are
        given.

    Examples
    --------
    >>> from sia_theory import NTKRoPE
    >>> NTKRoPE(4096, 16384).frequencies(4)  # base 10⁴·4^(d/(d−2)) = 1.6·10⁵ at d = 4
    array([1.    , 0.0025])
    """

    train_length: int
    inference_length: int
    base: float = 10000.0
    fraction: float = 1.0

    def __init__(self, train_length, inference_length, base=None, fraction=1.0, *,
                 rope_theta=None):
        base_name, base = one_of(10000.0, base=base, rope_theta=rope_theta)
        object.__setattr__(self, "train_length", check_int("train_length", train_length, lo=1))
        object.__setattr__(self, "inference_length",
                           check_int("inference_length", inference_length, lo=1))
        object.__setattr__(self, "base", check_real(base_name, base, lo=1, lo_open=True))
        RoPE(self.base, fraction)  # validates fraction
        object.__setattr__(self, "fraction", float(fraction))

    def frequencies(self, head_dim) -> np.ndarray:
        """RoPE's frequencies at the NTK-scaled base :func:`ntk_base`, shape ``(D/2,)``."""
        scaled = ntk_base(self.base, head_dim, self.train_length, self.inference_length)
        return rope_frequencies(head_dim, scaled, self.fraction)

    def __call__(self, x, positions):
        x = check_x(x, 2)
        scaled = ntk_base(self.base, x.shape[-1], self.train_length, self.inference_length)
        return rope(x, positions, scaled, self.fraction)


@dataclass(frozen=True, init=False)
class DynamicNTKRoPE:
    """Dynamic NTK RoPE (transformers ``rope_type="dynamic"``): each call rotates with the base
    :func:`dynamic_ntk_base` of ``seq_len = max(positions) + 1``, as transformers'
    ``dynamic_rope_update`` recomputes ``inv_freq`` from ``max(position_ids) + 1``. Keys cached
    by an earlier call keep the base they were rotated with (transformers caches keys after the
    rotation too). transformers keeps a grown ``inv_freq`` until the length falls back below
    ``max_position_embeddings``; a stateless encoding cannot, which differs only if a call's
    positions end before an earlier call's. ``train_length`` / ``base`` are accepted for
    ``max_position_embeddings`` / ``rope_theta``.

    Parameters
    ----------
    max_position_embeddings : int
        Training context ``L >= 1`` (required; also as ``train_length``).
    factor : float
        transformers' ``factor``, ``>= 1``.
    rope_theta : float
        RoPE base, ``> 1`` (default 10000; also as ``base``).

    Raises
    ------
    ValueError
        If ``max_position_embeddings`` is missing, an argument is outside the ranges above, or a
        value is given under both its names.

    Examples
    --------
    >>> from sia_theory import DynamicNTKRoPE
    >>> rope = DynamicNTKRoPE(4096, factor=2.0)
    >>> rope.base_at(100, 4), rope.base_at(8192, 4)  # 10⁴·(2·8192/4096 − 1)^(d/(d−2))
    (10000.0, 90000.0)
    """

    max_position_embeddings: int
    factor: float = 1.0
    rope_theta: float = 10000.0

    def __init__(self, max_position_embeddings=None, factor=1.0, rope_theta=None, *,
                 train_length=None, base=None):
        name, length = one_of(None, max_position_embeddings=max_position_embeddings,
                              train_length=train_length)
        if length is None:
            raise ValueError("max_position_embeddings (the training context) is required")
        theta_name, theta = one_of(10000.0, rope_theta=rope_theta, base=base)
        object.__setattr__(self, "max_position_embeddings", check_int(name, length, lo=1))
        object.__setattr__(self, "factor", check_real("factor", factor, lo=1))
        object.__setattr__(self, "rope_theta", check_real(theta_name, theta, lo=1, lo_open=True))

    def base_at(self, seq_len, head_dim) -> float:
        """The base used when the forward call's last position is ``seq_len − 1``."""
        return dynamic_ntk_base(self.rope_theta, head_dim, self.max_position_embeddings,
                                seq_len, self.factor)

    def __call__(self, x, positions):
        x, positions = check_x(x, 2), check_positions(positions)
        seq_len = int(positions.max()) + 1
        return rope(x, positions, self.base_at(seq_len, x.shape[-1]))
