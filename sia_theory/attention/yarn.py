"""YaRN's "NTK-by-parts" RoPE interpolation (Peng et al. 2023, §3.2–3.4), as the
implementations models actually run it: frequency ``d`` becomes ``(1 − γ_d)·θ_d/s + γ_d·θ_d``,
with the ramp ``γ`` read in the dimension index (the reference code, default) or in the number
of rotations (the paper's text, Llama 3.1's ``llama3``). The two readings, their references and
the parameter names are described in :mod:`sia_theory.attention.rope_scaling`, which also
re-exports these names beside the NTK scalings.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._infra.validate import check_int, check_real, one_of
from ..zoo import YaRNTemperature
from .rotary import check_head_dim, check_x, rotate

__all__ = ["yarn_frequencies", "YaRNRoPE", "YARN_ALPHA", "YARN_BETA", "YARN_RAMPS"]

# YaRN's ramp bounds for LLaMA-family models (Peng et al. 2023, §3.2: "α = 1, β = 32";
# transformers' beta_slow / beta_fast defaults).
YARN_ALPHA = 1.0
"""YaRN's lower ramp bound for LLaMA-family models (Peng et al. 2023, §3.2; transformers'
``beta_slow``)."""
YARN_BETA = 32.0
"""YaRN's upper ramp bound (transformers' ``beta_fast``)."""
YARN_RAMPS = ("dimension", "rotations")
"""The ramps :class:`YaRNRoPE` offers: ``"dimension"`` (the reference code's, default) and
``"rotations"`` (the paper's text, Llama 3.1's ``llama3``)."""


def _yarn_kept(head_dim, theta, rope_theta, length, beta_fast, beta_slow, truncate, ramp):
    """The share ``γ_d`` of each frequency kept unscaled, ``(D/2,)`` (module docstring)."""
    if ramp == "rotations":
        turns = length * theta / (2.0 * math.pi)  # r_d = L/λ_d
        if beta_fast == beta_slow:  # Llama 4's low = high = 1: a step, no medium band
            return (turns > beta_fast).astype(np.float64)
        return np.clip((turns - beta_slow) / (beta_fast - beta_slow), 0.0, 1.0)

    def correction_dim(n_rotations):  # the dimension index with n rotations inside L
        return head_dim * math.log(length / (n_rotations * 2.0 * math.pi)) / (
            2.0 * math.log(rope_theta))

    low, high = correction_dim(beta_fast), correction_dim(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, head_dim - 1)  # the references clamp to D − 1, not D/2 − 1
    if low == high:
        high += 0.001  # the references' guard against 0/0
    return 1.0 - np.clip((np.arange(head_dim // 2) - low) / (high - low), 0.0, 1.0)


@dataclass(frozen=True, init=False)
class YaRNRoPE:
    """RoPE with YaRN's frequency interpolation (module docstring), pairs ``(k, k + D/2)``.

    Give the scale as ``factor`` (transformers) or as ``target_length`` (then ``factor =
    max(1, target_length/train_length)``), the training context as
    ``original_max_position_embeddings`` or ``train_length``, the base as ``rope_theta`` or
    ``base``, the ramp bounds as ``beta_fast``/``beta_slow`` or ``beta``/``alpha``. ``ramp``:
    ``"dimension"`` (the YaRN authors' code and transformers; default) or ``"rotations"`` (the
    paper's text; Llama 3.1's ``llama3`` scaling; ``beta_fast = beta_slow`` is allowed there and
    is a step, as transformers' ``llama3`` with Llama 4's ``low_freq_factor = high_freq_factor =
    1``). ``truncate``: floor/ceil the correction
    dimensions (transformers v5's ``truncate``, default ``True`` as in every earlier version;
    ``"dimension"`` ramp only). ``factor = 1`` is plain RoPE.

    YaRN proper also multiplies q and k by its attention factor: :meth:`attention_factor` is the
    zoo's :class:`~sia_theory.zoo.YaRNTemperature` of the same factor (for ``mscale``,
    ``mscale_all_dim`` or an explicit ``attention_factor`` build that class with them, as
    :func:`~sia_theory.schemes.rope_config.from_rope_parameters` does).

    Parameters
    ----------
    train_length, original_max_position_embeddings : int
        The training context, >= 1 (one of the two, required).
    target_length : int, optional
        The target context, >= 1 (alternative to ``factor``).
    factor : float, optional
        The extension factor, >= 1 (this or ``target_length`` required).
    base, rope_theta : float, optional
        RoPE's base, > 1 (default 10000).
    alpha, beta_slow : float, optional
        The lower ramp bound (default :data:`YARN_ALPHA`), >= 0 (> 0 for the ``"dimension"``
        ramp).
    beta, beta_fast : float, optional
        The upper ramp bound (default :data:`YARN_BETA`), >= the lower (> it for the
        ``"dimension"`` ramp).
    truncate : bool, optional
        Floor/ceil the correction dimensions (``"dimension"`` ramp only; default True).
    ramp : {"dimension", "rotations"}, optional
        The ramp (default ``"dimension"``).

    Raises
    ------
    ValueError
        If a required value is missing, a value and its synonym are both given, a value is
        out of its range, ``ramp`` is unknown or ``truncate`` is not a bool.

    Examples
    --------
    >>> import numpy as np
    >>> from sia_theory.attention import YaRNRoPE, rope_frequencies
    >>> yarn = YaRNRoPE(factor=2, original_max_position_embeddings=8192, rope_theta=1e5)
    >>> f, rope = yarn.frequencies(64), rope_frequencies(64, 1e5)
    >>> bool(f[0] == rope[0]), bool(np.isclose(f[-1], rope[-1] / 2))  # fast kept, slow divided by 2
    (True, True)
    >>> text = YaRNRoPE(factor=2, original_max_position_embeddings=8192, rope_theta=1e5,
    ...                 ramp="rotations")  # the paper's ramp, linear in r = L/λ
    >>> int(np.sum(~np.isclose(f, text.frequencies(64))))  # the two ramps differ in 9 of 32
    9
    """

    factor: float
    original_max_position_embeddings: int
    rope_theta: float = 10000.0
    beta_fast: float = YARN_BETA
    beta_slow: float = YARN_ALPHA
    truncate: bool = True
    ramp: str = "dimension"

    def __init__(self, train_length=None, target_length=None, base=None, alpha=None, beta=None,
                 *, factor=None, original_max_position_embeddings=None, rope_theta=None,
                 beta_fast=None, beta_slow=None, truncate=True, ramp="dimension"):
        name, length = one_of(None, train_length=train_length,
                              original_max_position_embeddings=original_max_position_embeddings)
        if length is None:
            raise ValueError("train_length (original_max_position_embeddings) is required")
        length = check_int(name, length, lo=1)
        scale_name, scale = one_of(None, target_length=target_length, factor=factor)
        if scale is None:
            raise ValueError("factor (or target_length) is required")
        if scale_name == "target_length":
            scale = max(1.0, check_int(scale_name, scale, lo=1) / length)
        scale = check_real(scale_name, scale, lo=1)
        base_name, base = one_of(10000.0, base=base, rope_theta=rope_theta)
        base = check_real(base_name, base, lo=1, lo_open=True)
        if ramp not in YARN_RAMPS:
            raise ValueError(f"ramp must be one of {YARN_RAMPS}, got {ramp!r}")
        if not isinstance(truncate, bool | np.bool_):
            raise ValueError(f"truncate must be True or False, got {truncate!r}")
        slow_name, slow = one_of(YARN_ALPHA, alpha=alpha, beta_slow=beta_slow)
        slow = check_real(slow_name, slow, lo=0, lo_open=ramp == "dimension")
        fast_name, fast = one_of(YARN_BETA, beta=beta, beta_fast=beta_fast)
        fast = check_real(fast_name, fast, lo=slow, lo_open=ramp == "dimension")
        for key, value in (("factor", scale), ("original_max_position_embeddings", length),
                           ("rope_theta", base), ("beta_fast", fast), ("beta_slow", slow),
                           ("truncate", bool(truncate)), ("ramp", ramp)):
            object.__setattr__(self, key, value)

    # the package's earlier names, read-only
    train_length = property(lambda self: self.original_max_position_embeddings)
    """The older name of ``original_max_position_embeddings``."""
    base = property(lambda self: self.rope_theta)
    """The older name of ``rope_theta``."""
    alpha = property(lambda self: self.beta_slow)
    """The older name of ``beta_slow``."""
    beta = property(lambda self: self.beta_fast)
    """The older name of ``beta_fast``."""
    scale = property(lambda self: self.factor, doc="``s``, the context extension factor.")

    @property
    def target_length(self) -> float:
        """``factor·original_max_position_embeddings``: the context the factor extends to."""
        return self.factor * self.original_max_position_embeddings

    def kept(self, head_dim) -> np.ndarray:
        """``γ_d``, the share of each frequency kept unscaled (1: ``θ_d``, 0: ``θ_d/s``)."""
        head_dim = check_head_dim(head_dim)
        theta = self.rope_theta ** (-2.0 * np.arange(head_dim // 2) / head_dim)  # (D/2,)
        return _yarn_kept(head_dim, theta, self.rope_theta, self.original_max_position_embeddings,
                          self.beta_fast, self.beta_slow, self.truncate, self.ramp)

    def frequencies(self, head_dim) -> np.ndarray:
        """The interpolated angular frequencies ``(1 − γ_d)·θ_d/s + γ_d·θ_d``, ``(D/2,)``."""
        head_dim = check_head_dim(head_dim)
        theta = self.rope_theta ** (-2.0 * np.arange(head_dim // 2) / head_dim)  # (D/2,)
        if self.factor == 1.0:
            return theta  # exactly RoPE's (the blend below could differ in the last bit)
        kept = self.kept(head_dim)
        return theta / self.factor * (1.0 - kept) + theta * kept

    def attention_factor(self):
        """YaRN's default temperature as the zoo score mod: ``YaRNTemperature(factor)``, logits
        times ``(0.1·ln s + 1)²`` (1 when ``s = 1``)."""
        return YaRNTemperature(self.factor)

    def __call__(self, x, positions):
        x = check_x(x, 2)
        return rotate(x, positions, self.frequencies(x.shape[-1]))


def yarn_frequencies(head_dim, base, train_length, target_length, alpha=YARN_ALPHA,
                     beta=YARN_BETA, *, ramp="dimension", truncate=True) -> np.ndarray:
    """YaRN's interpolated RoPE frequencies: :meth:`YaRNRoPE.frequencies` of
    ``YaRNRoPE(train_length, target_length, base, alpha, beta, ramp=ramp, truncate=truncate)``
    (``s = max(1, target_length/train_length)``).

    Parameters
    ----------
    head_dim : int
        ``D``, even.
    base, train_length, target_length, alpha, beta, ramp, truncate
        As for :class:`YaRNRoPE` (the default ramp is the reference code's, in the dimension
        index; ``ramp="rotations"`` is the paper's text).

    Returns
    -------
    numpy.ndarray
        ``(D/2,)``.

    Raises
    ------
    ValueError
        If an argument is outside its range (as for :class:`YaRNRoPE`).
    """
    return YaRNRoPE(train_length, target_length, base, alpha, beta, ramp=ramp,
                    truncate=truncate).frequencies(head_dim)
