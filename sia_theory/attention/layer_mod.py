"""One decoder layer's whole logit law as a FlexAttention ``score_mod``: transform, soft cap,
sliding window.

A pretrained layer may do three things to its attention logits beyond the softmax scale
(transformers' ``eager_attention_forward`` and masks, 5.24.0):

1. a logit law on ``S = q·k/√D`` (a :class:`~sia_theory.transforms.Transform`, e.g. the
   checkpoint's own ``q·k`` scale or YaRN's factor, or any FlexAttention callable);
2. a soft cap ``cap·tanh(x/cap)`` on the scaled logits (Gemma-2's ``attn_logit_softcapping``:
   ``models/gemma2/modeling_gemma2.py``, ``eager_attention_forward``: ``attn_weights /
   softcap``, ``tanh``, ``* softcap``, after the scale and before the mask);
3. a sliding window: key ``kv_idx`` is kept for query ``q_idx`` when ``q_idx - kv_idx <
   window`` (``masking_utils.py``, ``sliding_window_overlay``: ``kv_idx > q_idx -
   sliding_window``, and-ed with the causal mask), ``-inf`` otherwise.

:class:`LayerScoreMod` applies them in that order. The window keeps distance 0 (``window >=
1``), so under the causal mask every query keeps at least its own key: no row is ever fully
masked. :func:`layer_score_mod` returns the transform itself when there is neither a cap nor a
window, so such a layer keeps the attention kernel's table path (a Transform's coefficients
read per distance) instead of a per-block callable.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._infra.validate import check_int
from ..transforms import Transform
from ..transforms.tables import check_softcap, soft_cap

__all__ = ["LayerScoreMod", "layer_score_mod"]


@dataclass(frozen=True)
class LayerScoreMod:
    """``score_mod(score, b, h, q_idx, kv_idx)`` (FlexAttention's signature, on broadcast numpy
    blocks) of one layer: ``transform``, then ``softcap·tanh(x/softcap)``, then ``-inf`` where
    ``q_idx - kv_idx >= window`` (module docstring).

    Parameters
    ----------
    transform : None, Transform or callable
        The logit law (a Transform through its ``score_mod``, or a FlexAttention callable);
        ``None``: the scores unchanged.
    softcap : float > 0, optional
        The tanh cap; ``None``: none.
    window : int >= 1, optional
        Keys kept per query, its own included; ``None``: no window.

    Raises
    ------
    ValueError
        Naming the parameter: a ``transform`` that is neither a Transform nor callable, a
        ``softcap`` that is not a finite positive number, a ``window`` that is not an integer
        ``>= 1``.

    Examples
    --------
    >>> import numpy as np
    >>> mod = LayerScoreMod(softcap=2.0, window=2)
    >>> q_idx, kv_idx = np.array([[3]]), np.array([[0, 1, 2, 3]])
    >>> mod(np.full((1, 4), 10.0), 0, 0, q_idx, kv_idx).round(4).tolist()
    [[-inf, -inf, 1.9998, 1.9998]]
    """

    transform: object = None
    softcap: float | None = field(default=None, kw_only=True)
    window: int | None = field(default=None, kw_only=True)

    def __post_init__(self):
        if self.transform is not None and not (isinstance(self.transform, Transform)
                                                   or callable(self.transform)):
            raise ValueError(f"transform must be None, a Transform or a callable score_mod(score, "
                             f"b, h, q_idx, kv_idx), got {self.transform!r}")
        object.__setattr__(self, "softcap", check_softcap(self.softcap))
        if self.window is not None:
            object.__setattr__(self, "window", check_int("window", self.window, lo=1))

    def __call__(self, score, b, h, q_idx, kv_idx):
        out = score
        if isinstance(self.transform, Transform):
            out = self.transform.score_mod(out, b, h, q_idx, kv_idx)
        elif self.transform is not None:
            out = self.transform(out, b, h, q_idx, kv_idx)
        out = np.asarray(out)
        if self.softcap is not None:
            out = soft_cap(out, self.softcap)
        if self.window is not None:
            out = np.where(np.asarray(q_idx) - np.asarray(kv_idx) < self.window, out, -np.inf)
        return out


def layer_score_mod(transform=None, *, softcap=None, window=None):
    """The ``score_mod`` of a layer: ``transform`` itself (``None`` included) when ``softcap``
    and ``window`` are both ``None`` (the kernel's table path), else
    :class:`LayerScoreMod` ``(transform, softcap=softcap, window=window)``.

    Parameters
    ----------
    transform : None, Transform or callable
        The layer's logit law.
    softcap : float > 0, optional
        The tanh cap.
    window : int >= 1, optional
        The sliding window.

    Returns
    -------
    None, Transform, callable or LayerScoreMod
        What the attention kernel takes as ``score_mod``.

    Raises
    ------
    ValueError
        As :class:`LayerScoreMod`, when a cap or a window is given.

    Examples
    --------
    >>> from sia_theory.zoo import Temperature
    >>> layer_score_mod(Temperature(2.0)) == Temperature(2.0)
    True
    >>> layer_score_mod(None, window=4)
    LayerScoreMod(transform=None, softcap=None, window=4)
    """
    if softcap is None and window is None:
        return transform
    return LayerScoreMod(transform, softcap=softcap, window=window)
