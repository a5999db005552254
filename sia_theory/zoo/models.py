"""The zoo's members that shipped models use besides :mod:`sia_theory.zoo`'s, read from their
implementations, with the same conventions (``n = q_idx + 1`` keys, ``p = n − 1`` the query's
0-based position; a factor on q alone enters the logit once, one on cos/sin twice).

* :func:`mistral_temperature` — Mistral's ``llama_4_scaling_beta`` (Ministral-3, Mistral-4):
  :class:`~sia_theory.zoo.Llama4Temperature` with ``offset = 0``, i.e. ``1 + β·ln(1 +
  floor(p/L))`` on the query after RoPE (transformers ``get_llama_4_attn_scale`` of
  ``position_ids`` in ``models/ministral3/modeling_ministral3.py`` and
  ``models/mistral4/modeling_mistral4.py``, commit 0205eec1d869; vLLM ``_get_llama_4_scaling`` in
  ``vllm/model_executor/models/deepseek_v2.py`` at commit 002d6073aa03).
* :class:`Grok2Temperature` — xAI Grok-2's ``attn_temperature_len`` as sglang runs it
  (``python/sglang/srt/layers/attention/triton_ops/decode_attention.py`` at commit
  83ea222010e3, and the extend kernel: ``xai_temperature_reg = log2(p)/log2(L)`` where ``p >
  L``, else 1, times the logits, with ``p`` the query's 0-based position).
* :class:`DeepSeekMScale` — DeepSeek-V2/V3's YaRN ``mscale_all_dim``: the softmax scale times
  ``get_mscale(s, mscale_all_dim)²`` in the attention module (vLLM ``DeepseekV2Attention``
  at commit 002d6073aa03; transformers ``DeepseekV3Attention`` and Mistral-4's
  ``yarn_apply_mscale`` in ``models/mistral4/modeling_mistral4.py`` at commit 0205eec1d869), on
  top of YaRN's ``attention_factor`` on cos/sin.
* :class:`Sandwich` — the Sandwich bias (Chi et al. 2023, arXiv 2212.10356), as
  attention-gym's ``attn_gym/mods/sandwich.py`` (meta-pytorch/attention-gym commit
  70ab2d6fe07e) builds it: ``S + Σ_i cos(t·w_i)·H/(8(h+1))``, ``w_i = 10000^(−2i/d̄)``.
* :class:`MultiplierProduct` — the product of pure multipliers, for a model with several
  (Mistral-4: DeepSeek's mscale² and Mistral's query scaling).

:data:`~sia_theory.zoo.ZOO` holds a default instance of each (``mistral``, ``grok2``,
``deepseek-mscale``, ``mistral4``, ``sandwich``), described in :data:`~sia_theory.zoo.ZOO_INFO`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .._infra.validate import check_int, check_real
from ..transforms import Transform, declared_dependence
from .members import Llama4Temperature, Multiplier
from .yarn import yarn_mscale

__all__ = ["longrope_attention_factor", "mistral_temperature", "Grok2Temperature",
           "DeepSeekMScale", "Sandwich", "MultiplierProduct"]


def longrope_attention_factor(factor, original_max_position_embeddings) -> float:
    """LongRoPE's default attention factor (transformers ``_compute_longrope_parameters``, both
    versions): ``sqrt(1 + ln f / ln L)`` for ``f > 1``, else 1, with ``f`` the config's
    ``factor`` or ``max_position_embeddings / original_max_position_embeddings`` and ``L =
    original_max_position_embeddings``. It multiplies cos and sin, so the logit gets its square.

    >>> round(longrope_attention_factor(32, 4096), 6)  # Phi-3.5-mini: 131072 / 4096
    1.190238
    """
    factor = check_real("factor", factor, lo=0, lo_open=True)
    length = check_int("original_max_position_embeddings", original_max_position_embeddings,
                       lo=2)
    if factor <= 1.0:
        return 1.0
    return math.sqrt(1.0 + math.log(factor) / math.log(length))


def mistral_temperature(llama_4_scaling_beta=0.1, original_max_position_embeddings=16384):
    """Mistral's query scaling ``1 + β·ln(1 + floor(p/L))`` at the query's position ``p``:
    :class:`~sia_theory.zoo.Llama4Temperature` ``(L, β, offset=0)``. Defaults: Ministral-3's
    ``rope_parameters`` (β = 0.1, L = 16384).

    Parameters
    ----------
    llama_4_scaling_beta : float, optional
        ``β >= 0``.
    original_max_position_embeddings : float, optional
        ``L > 0``.

    Returns
    -------
    Llama4Temperature

    Raises
    ------
    ValueError
        If ``β < 0`` or ``L <= 0`` (or either is not a finite real number).

    Examples
    --------
    >>> m = mistral_temperature(0.1, 16384)
    >>> m.multiplier([16384, 16385]).round(6).tolist()  # p = 16383 → 1; p = 16384 → 1 + 0.1 ln 2
    [1.0, 1.069315]
    """
    return Llama4Temperature(check_real("original_max_position_embeddings",
                                        original_max_position_embeddings, lo=0, lo_open=True),
                             check_real("llama_4_scaling_beta", llama_4_scaling_beta, lo=0),
                             offset=0.0)


@dataclass(frozen=True, init=False)
class Grok2Temperature(Multiplier):
    r"""Grok-2's attention temperature (sglang, module docstring): with ``p = n − 1`` the query's
    position and ``L = attn_temperature_len`` (1024 in xai-org/grok-2's config),

        :math:`L = (\log_2 p / \log_2 L)\, S` for ``p > L``, else ``L = S``.

    It is Qwen-1's logn law read at the position instead of ``n`` (:class:`~sia_theory.zoo.
    QwenLogN` uses ``n = p + 1``): the two differ at ``n = L + 1`` only by whether the factor
    has started. ``attn_temperature_len`` is accepted for ``length``.

    Parameters
    ----------
    length, attn_temperature_len : int, optional
        ``L >= 2`` under either name, not both (default 1024).

    Raises
    ------
    ValueError
        If both names are given or ``L`` is not an integer >= 2.

    Examples
    --------
    >>> from sia_theory import Grok2Temperature
    >>> Grok2Temperature(1024).multiplier([1025, 2049, 2**20 + 1]).round(6).tolist()
    [1.0, 1.1, 2.0]

    (``p = 1024``: not yet; ``log2 2048 / log2 1024``; ``log2 2²⁰ / 10``.)
    """

    depends_on = frozenset({"context"})

    length: int = 1024

    def __init__(self, length=None, *, attn_temperature_len=None):
        if length is not None and attn_temperature_len is not None:
            raise ValueError("give length or attn_temperature_len, not both")
        name = "length" if attn_temperature_len is None else "attn_temperature_len"
        value = 1024 if length is None and attn_temperature_len is None else (
            length if attn_temperature_len is None else attn_temperature_len)
        object.__setattr__(self, "length", check_int(name, value, lo=2))

    def _multiplier(self, n_ctx):
        p = np.asarray(n_ctx, dtype=np.float64) - 1.0
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.log2(p) / math.log2(self.length)
        return np.where(p > self.length, ratio, 1.0)


@dataclass(frozen=True)
class DeepSeekMScale(Multiplier):
    r"""DeepSeek's YaRN softmax-scale correction (module docstring): ``softmax_scale =
    qk_head_dim^(−1/2)·get_mscale(factor, mscale_all_dim)²``, so

        :math:`L = (0.1\cdot\texttt{mscale\_all\_dim}\ln s + 1)^2\, S` (1 for ``s <= 1`` or
        ``mscale_all_dim = 0``).

    DeepSeek-V3 (``factor = 40``, ``mscale = mscale_all_dim = 1``) gets
    :math:`(0.1 \ln 40 + 1)^2 \approx 1.874` here and YaRN's ``attention_factor`` 1 on cos/sin.

    Parameters
    ----------
    factor : float, optional
        The YaRN factor ``s > 0`` (default 40).
    mscale_all_dim : float, optional
        ``>= 0`` (default 1).

    Raises
    ------
    ValueError
        If ``factor <= 0`` or ``mscale_all_dim < 0`` (or either is not a finite real number).

    Examples
    --------
    >>> import math
    >>> from sia_theory import DeepSeekMScale
    >>> m = float(DeepSeekMScale(40.0, 1.0).multiplier(10))  # the same at every n
    >>> round(m, 6), round((0.1 * math.log(40) + 1) ** 2, 6)
    (1.873854, 1.873854)
    """

    depends_on = frozenset()

    factor: float = 40.0
    mscale_all_dim: float = 1.0

    def __post_init__(self):
        object.__setattr__(self, "factor", check_real("factor", self.factor, lo=0, lo_open=True))
        object.__setattr__(self, "mscale_all_dim",
                           check_real("mscale_all_dim", self.mscale_all_dim, lo=0))

    def _multiplier(self, n_ctx):
        return np.float64(yarn_mscale(self.factor, self.mscale_all_dim) ** 2)


@dataclass(frozen=True)
class MultiplierProduct(Multiplier):
    """``L = Π_j members[j].multiplier(n)·S``: pure multipliers applied together (e.g. a
    constant softmax-scale factor and a query temperature). Depends on the context when any
    member does.

    Parameters
    ----------
    members : tuple of Multiplier
        The zoo's pure multipliers, at least one.

    Raises
    ------
    ValueError
        If ``members`` is empty or holds something other than a pure multiplier.

    Examples
    --------
    >>> from sia_theory import DeepSeekMScale, MultiplierProduct, mistral_temperature
    >>> mistral4 = MultiplierProduct((DeepSeekMScale(40.0, 1.0), mistral_temperature()))
    >>> mistral4.multiplier([16384, 16385]).round(6).tolist()  # 1.873854·(1, 1 + 0.1 ln 2)
    [1.873854, 2.00374]
    """

    members: tuple

    def __post_init__(self):
        members = tuple(self.members)
        if not members or not all(isinstance(m, Multiplier) for m in members):
            raise ValueError(f"members must be a non-empty tuple of the zoo's pure multipliers "
                             f"(Temperature, YaRNTemperature, Llama4Temperature, ...), got "
                             f"{self.members!r}")
        object.__setattr__(self, "members", members)

    @property
    def depends_on(self) -> frozenset:
        """The union of the members' dependences."""
        return frozenset().union(*(declared_dependence(m) for m in self.members))

    def _multiplier(self, n_ctx):
        out = np.float64(1.0)
        for member in self.members:
            out = out * member.multiplier(n_ctx)
        return out


@dataclass(frozen=True)
class Sandwich(Transform):
    r"""The Sandwich bias (attention-gym ``generate_sandwich_bias``, module docstring):

        :math:`L = S + \sum_{i<\bar d/2} \cos(t\cdot 10000^{-2i/\bar d})\, H/(8(h+1))`,
        ``t = q_idx − kv_idx``

    (the paper's ``− d̄/2`` offset, constant over keys, is left out as attention-gym does).
    The bias oscillates in ``t`` (period ``2π`` for ``w_0 = 1``), so the exact routes' distance
    quadrature refuses it (``smooth_in_distance = False``: it would miss the range sums by
    5 % at 1000 keys and 24 % at 10⁵); the exact range sums, Monte Carlo and attention take it.
    One head (``n_heads = 1``, ratio 8) needs no head index; with several, ``h`` selects the
    ALiBi-style compression ratio ``8(h+1)/H``.

    Parameters
    ----------
    n_heads : int, optional
        ``H >= 1`` (default 1).
    d_bar : int, optional
        ``d̄``, even and >= 2 (default 128).

    Raises
    ------
    ValueError
        If ``n_heads < 1`` or ``d_bar`` is not an even integer >= 2; from ``coefficients``
        when ``h`` is not a head index.

    Examples
    --------
    >>> import numpy as np
    >>> from sia_theory import Sandwich
    >>> a, m = Sandwich(1, 4).coefficients(np.array([0.0, 1.0]))  # d̄ = 4: w = 1, 1/100
    >>> a.tolist(), m.round(6).tolist()  # (cos t + cos(t/100))/8
    ([1.0, 1.0], [0.25, 0.192532])
    """

    n_heads: int = 1
    d_bar: int = 128
    frequencies: np.ndarray = field(init=False, repr=False, compare=False)
    smooth_in_distance = False  # cos(t·w) with w up to 1: no quadrature in log t (class data)

    def __post_init__(self):
        object.__setattr__(self, "n_heads", check_int("n_heads", self.n_heads, lo=1))
        d_bar = check_int("d_bar", self.d_bar, lo=2)
        if d_bar % 2:
            raise ValueError(f"d_bar must be even (pairs of sinusoids), got {d_bar}")
        object.__setattr__(self, "d_bar", d_bar)
        freqs = 1.0 / 10000.0 ** (2.0 * np.arange(d_bar // 2) / d_bar)  # (d̄/2,)
        freqs.setflags(write=False)
        object.__setattr__(self, "frequencies", freqs)

    @property
    def depends_on(self) -> frozenset:
        """``{"distance"}``, with ``"head"`` when there are several heads."""
        return frozenset({"distance", "head"} if self.n_heads > 1 else {"distance"})

    def head_scale(self, h) -> np.ndarray:
        """``H/(8(h+1))`` (attention-gym's ``head_scale``); ``1/8`` for every head when
        ``n_heads = 1`` (one bias shared by all heads, as ``depends_on`` has no ``"head"``)."""
        if self.n_heads == 1:
            return np.float64(1.0 / 8.0)
        h = np.asarray(h)
        if h.dtype.kind not in "iu" or np.any((h < 0) | (h >= self.n_heads)):
            raise ValueError(f"h must be an integer head index in [0, {self.n_heads - 1}]")
        return self.n_heads / (8.0 * (h + 1.0))

    def affine(self, t, n, h):
        """``(1, Σ_i cos(t·w_i)·head_scale(h))``: the Sandwich bias."""
        bias = np.zeros(np.shape(t))
        for w in self.frequencies:  # one pass per frequency: memory stays that of t
            bias += np.cos(np.abs(t) * w)
        return np.ones_like(bias), bias * self.head_scale(h)
