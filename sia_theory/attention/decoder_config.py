"""The configuration of the minimal decoder (:class:`~sia_theory.attention.model.Decoder`):
its shape, position encoding, logit transform and caching, checked once at construction, and
the weight shapes it implies. :mod:`sia_theory.attention.model` re-exports both names.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .._infra.validate import check_int
from ..transforms import NoScale, Transform, declared_dependence
from .positional import NoPE, PRoPESI, RoPE
from .rope_scaling import DynamicNTKRoPE, NTKRoPE, YaRNRoPE

__all__ = ["DecoderConfig", "parameter_shapes"]

_POSITION_TYPES = (NoPE, RoPE, PRoPESI, NTKRoPE, DynamicNTKRoPE, YaRNRoPE)


@dataclass(frozen=True)
class DecoderConfig:
    """Configuration of :class:`Decoder` (frozen: a model's shape cannot drift after init).

    Parameters
    ----------
    vocab_size, d_model, n_heads, n_layers : int
        ``>= 1``; ``d_model`` a multiple of ``n_heads``; the head dimension even under a
        rotary ``position`` (a multiple of 4 for ``PRoPESI``).
    mlp_hidden : int or None
        Hidden width of the MLP (default ``4·d_model``).
    position : object
        ``NoPE()``, ``RoPE(base, fraction)``, ``PRoPESI()`` (SI's p-RoPE), ``NTKRoPE(...)``,
        ``DynamicNTKRoPE(...)`` or ``YaRNRoPE(...)``.
    transform : Transform
        A :mod:`sia_theory.transforms` object applied to the attention logits (SI eq. 16 for
        ``ScaleInvariant``), supporting ``n_heads`` heads.
    qk_norm, inattention : bool
        RMSNorm of queries and keys; InAttention (values from the initial embeddings).
    inattention_cache : str
        ``"initial"`` (cache ``Y``) or ``"projected"`` (cache ``W_K Y``, ``W_V Y`` per layer).
    seed : int
        ``>= 0``, seeds the random weights.
    dtype : str
        ``"float32"`` or ``"float64"``.
    block_size : int or None
        Streaming block of :func:`~sia_theory.attention.attention` (default: its own).
    kv_chunk : int
        Positions re-projected per chunk from an InAttention ``"initial"`` cache.

    Raises
    ------
    ValueError
        If a field is outside its range.
    """

    vocab_size: int = 256
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 2
    mlp_hidden: int | None = None  # default 4 * d_model
    position: object = field(default_factory=RoPE)
    transform: Transform = field(default_factory=NoScale)
    qk_norm: bool = True
    inattention: bool = False
    inattention_cache: str = "initial"
    seed: int = 0
    dtype: str = "float64"
    block_size: int | None = None
    kv_chunk: int = 2048  # InAttention "initial" cache: positions re-projected per chunk

    def __post_init__(self):
        for name, lo in (("vocab_size", 1), ("d_model", 1), ("n_heads", 1), ("n_layers", 1),
                         ("seed", 0)):
            check_int(name, getattr(self, name), lo=lo)
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model must be a multiple of n_heads={self.n_heads}, "
                             f"got d_model={self.d_model}")
        for name in ("qk_norm", "inattention"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be True or False, got {getattr(self, name)!r}")
        if self.mlp_hidden is not None:
            check_int("mlp_hidden", self.mlp_hidden, lo=1)
        if not isinstance(self.position, _POSITION_TYPES):
            raise ValueError("position must be NoPE(), RoPE(...), PRoPESI(), NTKRoPE(...), "
                             "DynamicNTKRoPE(...) or YaRNRoPE(...), "
                             f"got {self.position!r}")
        multiple = 4 if isinstance(self.position, PRoPESI) else 2
        if not isinstance(self.position, NoPE) and (self.d_model // self.n_heads) % multiple:
            raise ValueError(f"d_model/n_heads (the head dimension) must be a multiple of "
                             f"{multiple} for {type(self.position).__name__}, "
                             f"got {self.d_model // self.n_heads}")
        if not isinstance(self.transform, Transform):
            raise ValueError(f"transform must be a sia_theory Transform, got {self.transform!r}")
        supported = self.transform.n_heads
        if ("head" in declared_dependence(self.transform) and supported is not None
                and supported != self.n_heads):
            raise ValueError(f"transform: {self.transform!r} supports {supported} heads but the "
                             f"model has n_heads={self.n_heads}")
        if self.inattention_cache not in ("initial", "projected"):
            raise ValueError("inattention_cache must be 'initial' or 'projected', "
                             f"got {self.inattention_cache!r}")
        if self.dtype not in ("float32", "float64"):
            raise ValueError(f"dtype must be 'float32' or 'float64', got {self.dtype!r}")
        if self.block_size is not None:
            check_int("block_size", self.block_size, lo=1)
        check_int("kv_chunk", self.kv_chunk, lo=1)

    @property
    def head_dim(self) -> int:
        """``d_model // n_heads``."""
        return self.d_model // self.n_heads

    @property
    def hidden(self) -> int:
        """The MLP width (``4·d_model`` unless ``mlp_hidden`` is set)."""
        return 4 * self.d_model if self.mlp_hidden is None else self.mlp_hidden

    @property
    def cache_mode(self) -> str:
        """``"initial"`` (InAttention caching ``Y``) or ``"kv"`` (keys and values)."""
        if self.inattention and self.inattention_cache == "initial":
            return "initial"
        return "kv"


def parameter_shapes(c: DecoderConfig) -> dict:
    """Weight shapes of a :class:`Decoder` of ``c``: ``embedding`` ``(V, d)``, ``unembedding``
    ``(d, V)`` and the per-layer :attr:`Decoder.LAYER_WEIGHTS` (``(fan_in, fan_out)``)."""
    d, hidden = c.d_model, c.hidden
    return {"embedding": (c.vocab_size, d), "unembedding": (d, c.vocab_size),
            "w_q": (d, d), "w_k": (d, d), "w_v": (d, d), "w_o": (d, d),
            "w_up": (d, hidden), "w_down": (hidden, d)}
