"""YaRN's attention temperature in the zoo (Peng et al. 2023, §3.3–3.4): fixed and dynamic.

:func:`yarn_mscale` (transformers' ``get_mscale``), :class:`YaRNTemperature` (a fixed scale
factor ``s``, the logit multiplied by ``(0.1·ln s + 1)²`` since YaRN scales cos and sin, i.e.
both ``q`` and ``k``) and :class:`DynamicYaRNTemperature` (``s = max(1, n/L)`` from the current
length). Both are :data:`~sia_theory.zoo.members.Multiplier` members of the zoo; every name here
is importable from :mod:`sia_theory.zoo` as well.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._infra.validate import check_int, check_real, one_of
from .members import Multiplier

__all__ = ["yarn_mscale", "YaRNTemperature", "DynamicYaRNTemperature"]


def yarn_mscale(scale, mscale=1.0) -> np.ndarray:
    """``get_mscale(scale, mscale)`` of transformers' ``_compute_yarn_parameters``: ``0.1·mscale·
    ln s + 1`` for ``s > 1``, else 1 (Peng et al. 2023, §3.4, ``√(1/t) = 0.1 ln s + 1`` at
    ``mscale = 1``; the YaRN authors' ``get_mscale``). Elementwise."""
    scale = np.asarray(scale, dtype=np.float64)
    return np.where(scale > 1.0, 0.1 * mscale * np.log(np.maximum(scale, 1.0)) + 1.0, 1.0)


@dataclass(frozen=True, init=False)
class YaRNTemperature(Multiplier):
    r"""YaRN attention scaling (Peng et al. 2023, "YaRN", §3.4: softmax of ``q·k/(t√d)`` with
    :math:`\sqrt{1/t} = 0.1 \ln s + 1`) as transformers computes it (``modeling_rope_utils.py``,
    ``_compute_yarn_parameters``, the v5 ``rope_parameters`` line; v4.4x reads the same keys):

    * ``attention_factor`` given: that value;
    * else, ``mscale`` and ``mscale_all_dim`` both given and non-zero:
      ``get_mscale(s, mscale)/get_mscale(s, mscale_all_dim)`` (so ``mscale = mscale_all_dim``
      gives 1.0, DeepSeek-V3's setting);
    * else ``get_mscale(s) = 0.1·ln s + 1`` (1 for ``s <= 1``), as in the YaRN authors' code;

    with ``get_mscale(s, m) = 0.1·m·ln s + 1`` (:func:`yarn_mscale`). The rotary embedding
    multiplies **cos and sin** by it, i.e. q and k each, so

        :math:`L = \texttt{attention\_factor}^2\, S`.

    ``scale`` is the context extension factor ``s`` (``rope_parameters["factor"]``, accepted as
    ``factor``; e.g. 4 for Qwen2.5's 32k → 128k YaRN setting): a **constant** fixed for a
    deployment, as in transformers, where ``seq_len`` is documented as unused for YaRN. The
    frequency interpolation belongs to the position encoding
    (:class:`~sia_theory.attention.YaRNRoPE`). DeepSeek-V2/V3 also multiply their softmax scale
    by ``get_mscale(s, mscale_all_dim)²`` in the attention module (not part of
    ``attention_factor``); that is :class:`~sia_theory.zoo.models.DeepSeekMScale`. See
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
class DynamicYaRNTemperature(Multiplier):
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
