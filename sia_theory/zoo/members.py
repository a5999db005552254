r"""The zoo's multiplier members: ``L = multiplier(n)·S`` with the multiplier of each source.

The base :data:`Multiplier` (a pure logit multiplier, no bias and no distance dependence), and
the members that are one published law each: :class:`Temperature` (a constant),
:class:`QwenLogN` (Qwen-1's ``logn_list``), :class:`Llama4Temperature` (Llama-4's
``attn_scales``), :class:`CriticalScaling` (CAS's :math:`\beta = \gamma \log n` on cosines), and
:data:`SSMax` (Scalable-Softmax, which is :class:`~sia_theory.transforms.LogN`). YaRN's members
are :mod:`sia_theory.zoo.yarn`; the registry of default instances (:data:`~sia_theory.zoo.ZOO`)
and the conventions every member states (``n`` as the number of keys the query sees; a factor
on ``q`` only or on ``q`` and ``k``) are :mod:`sia_theory.zoo`, which re-exports every name here.
The tests (``tests/zoo/test_registry.py``) hold each member against its source's formula written
out independently.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._infra.validate import check_finite_array, check_int, check_real, one_of
from ..transforms import LogN, Transform

__all__ = ["Multiplier", "Temperature", "QwenLogN", "Llama4Temperature", "CriticalScaling",
           "SSMax"]

SSMax = LogN
"""Scalable-Softmax (Nakanishi 2025, "Scalable-Softmax Is Superior for Attention", §3:
``z_i ↦ n^{s z_i} / Σ_j n^{s z_j}``, i.e. ``softmax(s·log n·z)`` with ``n`` the number of scores)
is exactly :class:`~sia_theory.transforms.LogN`: an alias, not a second class."""


class Multiplier(Transform):
    """The base of the zoo's pure logit multipliers ``L = multiplier(n)·S`` (no bias, no
    distance dependence), public for members defined in other modules
    (:mod:`sia_theory.zoo.yarn`, :mod:`sia_theory.zoo.models`); ``multiplier(n_ctx)`` is the
    scheme's effective inverse temperature."""

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

    def affine(self, t, n, h):
        """``(multiplier(n), 0)``: a pure multiplier of the score."""
        if n is None and "context" in self.depends_on:
            raise ValueError(f"n_ctx is required for {type(self).__name__} (its multiplier "
                             "depends on the number of keys the query sees)")
        return self.multiplier(n) * np.ones_like(t), np.zeros_like(t)



@dataclass(frozen=True)
class Temperature(Multiplier):
    r"""A constant inverse temperature: :math:`L = c\, S` for every query and key.

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
class QwenLogN(Multiplier):
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


@dataclass(frozen=True)
class Llama4Temperature(Multiplier):
    r"""Llama-4 attention temperature tuning (transformers ``models/llama4/modeling_llama4.py``,
    ``Llama4TextAttention.forward``, commit 63210d0e3b74, NoPE layers, citing Nakanishi 2025):
    ``attn_scales = log(floor((cache_position + 1) / floor_scale) + 1)·attn_scale + 1``
    multiplies the **query states** only, so with ``n = cache_position + 1``:

    .. math::

        L = (\log(\lfloor n/\texttt{floor\_scale}\rfloor + 1)\cdot\texttt{attn\_scale} + 1)\, S.

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
class CriticalScaling(Multiplier):
    r"""Critical attention scaling (CAS): ``softmax(β·cos)`` with :math:`\beta = \gamma \log n` on
    cosine scores of unit tokens; :math:`\gamma = 1/(1-\rho)` is critical for simplex tokens with
    cosine ``ρ``.

    Conversion to :math:`S = q\cdot k/\sqrt d`: with QK-norm as RMSNorm
    (:math:`|q| = |k| = \sqrt d`, what :func:`sia_theory.attention.qk_norm` does),
    :math:`S = \sqrt d \cos`, so :math:`\beta \cos = (\gamma \log n/\sqrt d)\, S`:

        :math:`L = \gamma \log(n)/\sqrt{\texttt{head\_dim}}\, S`; with ``head_dim=None``,
        :math:`L = \gamma \log(n)\, S`

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
