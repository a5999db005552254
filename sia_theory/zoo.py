"""The zoo: published length-scaling rules as :class:`~sia_theory.transforms.Transform` objects.

Each member maps the raw score ``S = q·k/√d`` to ``L = a·S + m`` (THEORY.md §5). Sources
disagree on two conventions, and each class states and tests its own:

* **n as position or as length.** Here ``n`` is always the number of keys the query sees,
  ``n = q_idx + 1`` (query position + 1, 0-based positions). Qwen indexes its table by the
  query's absolute position with ``i = position + 1`` and Llama-4 uses ``cache_position + 1``:
  both are this ``n``. CAS and SSMax define ``n`` as the sequence length, which is the same
  number for the last query of a causal sequence. Without a causal mask ``n`` is still
  ``q_idx + 1`` (the package convention); for a bidirectional layer over ``N`` tokens use
  ``Temperature(member.multiplier(N))`` instead.
* **Temperature on q only or on q and k.** A factor ``f`` on the query alone multiplies the
  logit by ``f`` (Qwen logn, Llama-4); YaRN multiplies cos/sin, i.e. both ``q`` and ``k``,
  so the logit gets ``f²``.

Each member's docstring names the implementation and version it follows, and the tests
(``tests/core/test_zoo.py``) hold it against that source's formula written out independently.
The reference's own parameter names are accepted as well (each member's Parameters).

Members defined here: :class:`Temperature`, :class:`QwenLogN`, :class:`YaRNTemperature`,
:class:`DynamicYaRNTemperature`, :class:`Llama4Temperature`, :class:`CriticalScaling`;
:data:`SSMax` is :class:`~sia_theory.transforms.LogN` (same law). :data:`ZOO` holds a default
instance of every member, including ``NoScale``, ``LogN``, ``ALiBi`` and ``ScaleInvariant``
from :mod:`sia_theory.transforms`, and :func:`zoo_table` describes them as a DataFrame.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import NamedTuple

import numpy as np

from ._infra.validate import check_finite_array, check_int, check_real, one_of
from .transforms import ALiBi, LogN, NoScale, ScaleInvariant, Transform, declared_dependence

__all__ = ["Temperature", "QwenLogN", "YaRNTemperature", "DynamicYaRNTemperature",
           "Llama4Temperature", "CriticalScaling", "SSMax", "yarn_mscale", "ZooEntry", "ZOO",
           "ZOO_INFO", "zoo_table"]

SSMax = LogN
"""Scalable-Softmax (Nakanishi 2025, "Scalable-Softmax Is Superior for Attention", §3:
``z_i ↦ n^{s z_i} / Σ_j n^{s z_j}``, i.e. ``softmax(s·log n·z)`` with ``n`` the number of scores)
is exactly :class:`~sia_theory.transforms.LogN`: an alias, not a second class."""


class _Multiplier(Transform):
    """A pure logit multiplier ``L = multiplier(n)·S`` (no bias, no distance dependence);
    ``multiplier(n_ctx)`` is public: it is the scheme's effective inverse temperature."""

    def multiplier(self, n_ctx=None) -> np.ndarray:
        """The effective inverse temperature at context length ``n_ctx`` (keys the query sees,
        ``>= 1``; ``None`` for schemes that do not depend on it)."""
        if "context" in self.depends_on:
            if n_ctx is None:
                raise ValueError(f"n_ctx is required for {type(self).__name__} (its multiplier "
                                 "depends on the number of keys the query sees)")
        if n_ctx is not None:  # checked even where it does not change the value
            n_ctx = check_finite_array("n_ctx", n_ctx, lo=1)
        return self._multiplier(n_ctx)

    def _multiplier(self, n):
        raise NotImplementedError(f"{type(self).__name__} must implement _multiplier(n) -> the "
                                  "logit multiplier at context length n")

    def _affine(self, t, n, h):
        if n is None and "context" in self.depends_on:
            raise ValueError(f"n_ctx is required for {type(self).__name__} (its multiplier "
                             "depends on the number of keys the query sees)")
        return self.multiplier(n) * np.ones_like(t), np.zeros_like(t)


Multiplier = _Multiplier
"""The base of the zoo's pure multipliers ``L = multiplier(n)·S``, public for members defined
in other modules (:mod:`sia_theory.zoo_models`)."""


@dataclass(frozen=True)
class Temperature(_Multiplier):
    """A constant inverse temperature: ``L = c·S`` for every query and key.

    Parameters
    ----------
    c : float
        The multiplier, ``> 0``.

    Raises
    ------
    ValueError
        If ``c`` is not a finite number ``> 0``.

    Examples
    --------
    >>> from sia_theory import Temperature
    >>> float(Temperature(2.0).multiplier())
    2.0
    """

    depends_on = frozenset()

    c: float = 1.5

    def __post_init__(self):
        object.__setattr__(self, "c", check_real("c", self.c, lo=0, lo_open=True))

    def _multiplier(self, n_ctx):
        return np.float64(self.c)


@dataclass(frozen=True, init=False)
class QwenLogN(_Multiplier):
    """Qwen-1 ``use_logn_attn`` (``modeling_qwen.py`` of Qwen-7B / Qwen-7B-Chat on the Hugging Face
    Hub, read in the mirror undefdev/Qwen-7B-Chat at commit 04df5dd57b94, ``QWenAttention``):
    ``logn_list = [math.log(i, self.seq_length) if i > self.seq_length else 1 for i in range(1,
    32768)]`` and ``query = query * logn_tensor[:, seq_start:seq_end]`` with ``seq_start =
    key.size(1) − query.size(1)``, so the query at absolute position ``p`` gets ``logn_list[p]``
    and, with ``n = p + 1``:

        ``L = max(1, log n / log train_len)·S``  (query only: the logit gets the factor once).

    ``train_len`` is the config's ``seq_length`` (accepted under that name too). Qwen applies it
    at inference only (``not self.training``); the table's 32767-entry cap is not reproduced
    (``n`` is unbounded).

    Parameters
    ----------
    train_len : int
        Training context (tokens), ``>= 2``; default 8192 (also as ``seq_length``).

    Raises
    ------
    ValueError
        If ``train_len < 2`` or both names are given.

    Examples
    --------
    >>> from sia_theory import QwenLogN
    >>> QwenLogN(8192).multiplier([4096, 8192, 65536]).round(6)  # log 65536/log 8192 = 16/13
    array([1.      , 1.      , 1.230769])
    """

    depends_on = frozenset({"context"})

    train_len: int = 8192

    def __init__(self, train_len=None, *, seq_length=None):
        name, value = one_of(8192, train_len=train_len, seq_length=seq_length)
        object.__setattr__(self, "train_len", check_int(name, value, lo=2))

    def _multiplier(self, n_ctx):
        n = np.asarray(n_ctx, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.log(n) / math.log(self.train_len)
        return np.where(n > self.train_len, ratio, 1.0)


def yarn_mscale(scale, mscale=1.0) -> np.ndarray:
    """``get_mscale(scale, mscale)`` of transformers' ``_compute_yarn_parameters``: ``0.1·mscale·
    ln s + 1`` for ``s > 1``, else 1 (Peng et al. 2023, §3.4, ``√(1/t) = 0.1 ln s + 1`` at
    ``mscale = 1``; the YaRN authors' ``get_mscale``). Elementwise."""
    scale = np.asarray(scale, dtype=np.float64)
    return np.where(scale > 1.0, 0.1 * mscale * np.log(np.maximum(scale, 1.0)) + 1.0, 1.0)


@dataclass(frozen=True, init=False)
class YaRNTemperature(_Multiplier):
    """YaRN attention scaling (Peng et al. 2023, "YaRN", §3.4: softmax of ``q·k/(t√d)`` with
    ``√(1/t) = 0.1·ln s + 1``) as transformers computes it (``modeling_rope_utils.py``,
    ``_compute_yarn_parameters``, the v5 ``rope_parameters`` line; v4.4x reads the same keys):

    * ``attention_factor`` given: that value;
    * else, ``mscale`` and ``mscale_all_dim`` both given and non-zero:
      ``get_mscale(s, mscale)/get_mscale(s, mscale_all_dim)`` (so ``mscale = mscale_all_dim``
      gives 1.0, DeepSeek-V3's setting);
    * else ``get_mscale(s) = 0.1·ln s + 1`` (1 for ``s <= 1``), as in the YaRN authors' code;

    with ``get_mscale(s, m) = 0.1·m·ln s + 1`` (:func:`yarn_mscale`). The rotary embedding
    multiplies **cos and sin** by it, i.e. q and k each, so

        ``L = attention_factor²·S``.

    ``scale`` is the context extension factor ``s`` (``rope_parameters["factor"]``, accepted as
    ``factor``; e.g. 4 for Qwen2.5's 32k → 128k YaRN setting): a **constant** fixed for a
    deployment, as in transformers, where ``seq_len`` is documented as unused for YaRN. The
    frequency interpolation belongs to the position encoding
    (:class:`~sia_theory.attention.YaRNRoPE`). DeepSeek-V2/V3 also multiply their softmax scale
    by ``get_mscale(s, mscale_all_dim)²`` in the attention module (not part of
    ``attention_factor``); that is :class:`~sia_theory.zoo_models.DeepSeekMScale`. See
    :class:`DynamicYaRNTemperature` for ``s`` following the context length.

    Parameters
    ----------
    scale : float
        ``s > 0`` (default 4; also as ``factor``).
    mscale, mscale_all_dim : float, optional
        transformers' keys, ``>= 0``.
    attention_factor : float, optional
        The factor on q and on k itself, ``> 0``.

    Raises
    ------
    ValueError
        If a value is outside these ranges or ``scale`` and ``factor`` are both given.

    Examples
    --------
    >>> from sia_theory import YaRNTemperature
    >>> round(float(YaRNTemperature(4.0).multiplier()), 6)  # (0.1·ln 4 + 1)²
    1.296477
    >>> float(YaRNTemperature(40, mscale=1.0, mscale_all_dim=1.0).multiplier())  # DeepSeek-V3
    1.0
    """

    depends_on = frozenset()

    scale: float = 4.0
    mscale: float | None = None
    mscale_all_dim: float | None = None
    attention_factor: float = field(default=1.0, init=False)  # the factor on q and on k

    def __init__(self, scale=None, *, factor=None, mscale=None, mscale_all_dim=None,
                 attention_factor=None):
        name, value = one_of(4.0, scale=scale, factor=factor)
        value = check_real(name, value, lo=0, lo_open=True)
        if mscale is not None:
            mscale = check_real("mscale", mscale, lo=0)
        if mscale_all_dim is not None:
            mscale_all_dim = check_real("mscale_all_dim", mscale_all_dim, lo=0)
        if attention_factor is not None:
            factor_qk = check_real("attention_factor", attention_factor, lo=0, lo_open=True)
        elif mscale and mscale_all_dim:  # transformers: both present and non-zero
            factor_qk = float(yarn_mscale(value, mscale) / yarn_mscale(value, mscale_all_dim))
        else:
            factor_qk = float(yarn_mscale(value))
        for key, item in (("scale", value), ("mscale", mscale), ("mscale_all_dim", mscale_all_dim),
                          ("attention_factor", factor_qk)):
            object.__setattr__(self, key, item)

    factor = property(lambda self: self.scale, doc="``s`` under transformers' name.")

    def _multiplier(self, n_ctx):
        return np.float64(self.attention_factor ** 2)


@dataclass(frozen=True, init=False)
class DynamicYaRNTemperature(_Multiplier):
    """Dynamic YaRN (Peng et al. 2023, §3.3 "Dynamic Scaling", ``s = max(1, l'/L)`` with ``l'``
    the current sequence length; the YaRN authors'
    ``scaled_rope/LlamaDynamicYaRNScaledRotaryEmbedding.py``, jquesnelle/yarn commit
    995db5b575e7: ``self.yarn(seq_len / self.original_max_position_embeddings)`` once ``seq_len``
    exceeds the cached length, ``mscale = get_mscale(scale)`` on cos and sin): the attention
    factor of :class:`YaRNTemperature` with ``s = max(1, n/train_len)``, ``n`` the keys the query
    sees (the sequence length while decoding token by token):

        ``L = (0.1·ln max(1, n/train_len) + 1)²·S``  (q and k, as in YaRN).

    ``train_len`` is ``original_max_position_embeddings`` (accepted under that name too). Both
    q and k carry the factor of the *current* length (the cos/sin cache recomputed, as in a
    forward pass without a KV cache); an implementation that keeps keys cached under an older
    ``s`` differs from this, and so does a prefill of ``N`` tokens in the authors' code, which
    gives every query ``s = N/L``. This is the law CAS classes as ``~(log n)²``.

    Parameters
    ----------
    train_len : int
        ``L >= 1`` (tokens), default 8192 (also as ``original_max_position_embeddings``).

    Raises
    ------
    ValueError
        If ``train_len < 1`` or both names are given.

    Examples
    --------
    >>> from sia_theory import DynamicYaRNTemperature
    >>> DynamicYaRNTemperature(8192).multiplier([8192, 32768]).round(6)  # s = 1, 4
    array([1.      , 1.296477])
    """

    depends_on = frozenset({"context"})

    train_len: int = 8192

    def __init__(self, train_len=None, *, original_max_position_embeddings=None):
        name, value = one_of(8192, train_len=train_len,
                             original_max_position_embeddings=original_max_position_embeddings)
        object.__setattr__(self, "train_len", check_int(name, value, lo=1))

    def _multiplier(self, n_ctx):
        return yarn_mscale(np.asarray(n_ctx, dtype=np.float64) / self.train_len) ** 2


@dataclass(frozen=True)
class Llama4Temperature(_Multiplier):
    """Llama-4 attention temperature tuning (transformers ``models/llama4/modeling_llama4.py``,
    ``Llama4TextAttention.forward``, commit 63210d0e3b74, NoPE layers, citing Nakanishi 2025):
    ``attn_scales = log(floor((cache_position + 1) / floor_scale) + 1)·attn_scale + 1``
    multiplies the **query states** only, so with ``n = cache_position + 1``:

        ``L = (log(floor(n/floor_scale) + 1)·attn_scale + 1)·S``.

    Defaults ``floor_scale = 8192``, ``attn_scale = 0.1`` are the Llama-4 config values (the
    parameters carry ``Llama4TextConfig``'s names). The
    multiplier is 1 for ``n < floor_scale`` and a staircase in ``n`` above it.

    ``offset`` is llama.cpp's ``f_attn_temp_offset`` (``src/llama-graph.cpp``,
    ``llm_graph_input_attn_temp::set_input``, ggml-org/llama.cpp commit 434f71a5b4d1:
    ``log(floor((pos + f_attn_temp_offset)/n_attn_temp_floor_scale) + 1)·f_attn_temp_scale +
    1``): the staircase reads the query's 0-based position ``p = n − 1`` plus ``offset``. Llama 4
    has ``offset = 1`` (the default: ``p + 1 = n``, today's numbers exactly); Mistral's
    ``llama_4_scaling_beta`` (transformers ``get_llama_4_attn_scale`` of ``ministral3`` /
    ``mistral4``, vLLM's ``_get_llama_4_scaling`` in ``deepseek_v2.py``; llama.cpp sets
    ``f_attn_temp_offset = 0`` for them in ``src/llama-model.cpp``) reads ``p`` itself,
    ``offset = 0``: at ``p = floor_scale − 1`` Llama 4 gives ``1 + 0.1·ln 2`` and Mistral 1.

    Parameters
    ----------
    floor_scale : float
        ``> 0`` (tokens).
    attn_scale : float
        ``>= 0``.
    offset : float
        In ``[0, 1]``.

    Raises
    ------
    ValueError
        If a value is outside these ranges.

    Examples
    --------
    >>> from sia_theory import Llama4Temperature
    >>> Llama4Temperature().multiplier([8191, 8192, 16384]).round(6)  # 1 + 0.1·ln 2, 0.1·ln 3
    array([1.      , 1.069315, 1.109861])
    """

    depends_on = frozenset({"context"})

    floor_scale: float = 8192.0
    attn_scale: float = 0.1
    offset: float = 1.0

    def __post_init__(self):
        object.__setattr__(self, "floor_scale",
                           check_real("floor_scale", self.floor_scale, lo=0, lo_open=True))
        object.__setattr__(self, "attn_scale", check_real("attn_scale", self.attn_scale, lo=0))
        object.__setattr__(self, "offset", check_real("offset", self.offset, lo=0, hi=1))

    def __repr__(self):  # Llama 4's offset 1 is left out: the committed tables keep their names
        extra = "" if self.offset == 1.0 else f", offset={self.offset!r}"
        return (f"Llama4Temperature(floor_scale={self.floor_scale!r}, "
                f"attn_scale={self.attn_scale!r}{extra})")

    def _multiplier(self, n_ctx):
        n = np.asarray(n_ctx, dtype=np.float64)
        shifted = n if self.offset == 1.0 else n + (self.offset - 1.0)  # p + offset, p = n − 1
        return np.log(np.floor(shifted / self.floor_scale) + 1.0) * self.attn_scale + 1.0


@dataclass(frozen=True)
class CriticalScaling(_Multiplier):
    """Critical attention scaling (CAS): ``softmax(β·cos)`` with ``β = γ·log n`` on cosine
    scores of unit tokens; ``γ = 1/(1−ρ)`` is critical for simplex tokens with cosine ``ρ``.

    Conversion to ``S = q·k/√d``: with QK-norm as RMSNorm (``|q| = |k| = √d``, what
    :func:`sia_theory.attention.qk_norm` does), ``S = √d·cos``, so ``β·cos = (γ·log n/√d)·S``:

        ``L = γ·log(n)/√head_dim·S``;  with ``head_dim=None``, ``L = γ·log(n)·S``

    (``S`` already is the cosine, e.g. unit-norm q, k with ``scale=1``). For random directions
    ``cos ~ N(0, 1/d)``, so ``S ~ N(0, 1)``: the Gaussian-logit theory applies to ``S``.

    Parameters
    ----------
    gamma : float
        ``γ > 0``.
    head_dim : int, optional
        ``d >= 1``; ``None``: ``S`` is the cosine.

    Raises
    ------
    ValueError
        If ``gamma <= 0`` or ``head_dim < 1``.

    Examples
    --------
    >>> from sia_theory import CriticalScaling
    >>> round(float(CriticalScaling(2.0, head_dim=64).multiplier(1000)), 6)  # 2·log(1000)/8
    1.726939
    """

    depends_on = frozenset({"context"})

    gamma: float = 2.0
    head_dim: int | None = None

    def __post_init__(self):
        object.__setattr__(self, "gamma", check_real("gamma", self.gamma, lo=0, lo_open=True))
        if self.head_dim is not None:
            object.__setattr__(self, "head_dim", check_int("head_dim", self.head_dim, lo=1))

    def beta(self, n_ctx) -> np.ndarray:
        """The CAS inverse temperature on cosines, ``γ·log n``."""
        return self.gamma * np.log(np.asarray(n_ctx, dtype=np.float64))

    def _multiplier(self, n_ctx):
        root_d = 1.0 if self.head_dim is None else math.sqrt(self.head_dim)
        return self.beta(n_ctx) / root_d


class ZooEntry(NamedTuple):
    """A zoo member's default instance and how it reads its source."""

    transform: Transform
    source: str  # paper / model card / file and equation
    n_convention: str  # what n (or t) is in the source's own terms
    applied_to: str  # where the factor enters: q only, q and k, the logit, a bias
    formula: str  # the law on S = q·k/√d


_E = ZooEntry
ZOO_INFO: dict[str, ZooEntry] = {
    "none": _E(NoScale(), "standard attention (Vaswani et al. 2017)", "-", "-", "L = S"),
    "temperature": _E(Temperature(1.5), "constant inverse temperature", "-", "logit",
                      "L = c·S"),
    "logn": _E(LogN(0.4), "LogN / SSMax (Nakanishi 2025 §3; Chiang & Cholak 2022); "
               "SI Fig. 1", "n = number of keys (position + 1)", "logit", "L = s·log(n)·S"),
    "qwen-logn": _E(QwenLogN(8192), "Qwen-1 modeling_qwen.py use_logn_attn (logn_list; "
                    "Qwen-7B-Chat)",
                    "i = position + 1 (= n)", "q only", "L = max(1, log n/log train_len)·S"),
    "yarn": _E(YaRNTemperature(4.0), "YaRN (Peng et al. 2023) §3.4; transformers v5 "
               "_compute_yarn_parameters attention_factor", "fixed s (rope_parameters factor)",
               "q and k (cos/sin)", "L = (0.1·ln s + 1)²·S"),
    "yarn-dynamic": _E(DynamicYaRNTemperature(8192), "YaRN (Peng et al. 2023) §3.3 dynamic "
                       "scaling, s = max(1, l'/L); authors' LlamaDynamicYaRNScaledRotaryEmbedding",
                       "s from n = position + 1",
                       "q and k (cos/sin)", "L = (0.1·ln max(1, n/L) + 1)²·S"),
    "llama4": _E(Llama4Temperature(8192, 0.1), "transformers modeling_llama4 "
                 "attn_scales, attn_temperature_tuning (NoPE layers)", "cache_position + 1 (= n)",
                 "q only",
                 "L = (log(floor(n/8192) + 1)·0.1 + 1)·S"),
    "critical": _E(CriticalScaling(2.0, head_dim=64), "CAS: beta = gamma·log n on cosines, "
                   "gamma = 1/(1 - 0.5); QK-norm (RMSNorm), d = 64", "n = number of keys",
                   "logit (cosine)", "L = γ·log(n)/√d·S"),
    "alibi": _E(ALiBi(2.0 ** -4), "ALiBi (Press et al. 2022), slope 2^-4 (head h = 3 of "
                "ALiBi.standard(8))", "t = q_idx - kv_idx", "bias", "L = S - slope·t"),
    "scale-invariant": _E(ScaleInvariant(10.0), "SI eq. 16, tau = 10", "t = q_idx - kv_idx",
                          "logit and bias", "L = a_t·S + m_t"),
}
"""Zoo name → :class:`ZooEntry`: the default instance, its source, dependence, where the factor acts
and its formula."""
ZOO: Mapping[str, Transform] = MappingProxyType(
    {name: entry.transform for name, entry in ZOO_INFO.items()})  # read-only: shared by all callers
"""A default instance of every zoo member under a stable name. Defaults: ``Temperature(1.5)``;
``LogN(0.4)`` (SI Fig. 1); ``QwenLogN(8192)`` and ``DynamicYaRNTemperature(8192)`` (an 8k
training context); ``YaRNTemperature(4)`` (Qwen2.5's YaRN factor); ``Llama4Temperature(8192,
0.1)`` (Llama-4 config); ``CriticalScaling(2, head_dim=64)`` (``γ = 1/(1−ρ)`` at ``ρ = 0.5``,
QK-norm with ``d = 64``); ``ALiBi(2⁻⁴)`` (one slope, so no member needs a head index);
``ScaleInvariant(10)`` (SI's τ)."""


def zoo_table():
    """The zoo as a pandas DataFrame: one row per :data:`ZOO` entry with its name, class,
    parameters, source, declared dependence, ``n`` convention, where the factor is applied and
    the law on ``S = q·k/√d``."""
    import pandas as pd  # here, so that importing the zoo loads no pandas

    rows = []
    for name, entry in ZOO_INFO.items():
        member = entry.transform
        rows.append({"name": name, "class": type(member).__name__, "parameters": repr(member),
                     "source": entry.source,
                     "depends_on": ",".join(sorted(declared_dependence(member))) or "-",
                     "n_convention": entry.n_convention, "applied_to": entry.applied_to,
                     "formula": entry.formula})
    return pd.DataFrame(rows)
