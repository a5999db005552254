"""Torch-free CPU attention reference: FlexAttention-style ``attention`` (dense or streaming),
position encodings (RoPE, p-RoPE, NoPE; NTK, dynamic NTK and YaRN in :mod:`.rope_scaling`, a
transformers ``rope_parameters`` dict read by :func:`from_rope_parameters`), QK-norm, and a
minimal decoder with an InAttention variant. The logit transforms are the package's
:mod:`sia_theory.transforms` objects."""

from .cache import DecodingCache
from .core import (
    DEFAULT_BLOCK_SIZE,
    attention,
    attention_dense,
    attention_partial,
    attention_scores,
    merge_partials,
)
from .model import Decoder, DecoderConfig
from .positional import (
    P_ROPE_SI_BASE,
    NoPE,
    PRoPESI,
    RoPE,
    p_rope_si,
    p_rope_si_frequencies,
    qk_norm,
    rms_norm,
    rope,
    rope_frequencies,
)
from .rope_config import from_rope_parameters
from .rope_scaling import (
    DynamicNTKRoPE,
    NTKRoPE,
    YaRNRoPE,
    dynamic_ntk_base,
    ntk_base,
    yarn_frequencies,
)
from .rope_variants import LinearRoPE, LongRoPE, ProportionalRoPE
from .stats import QueryStats

__all__ = ["DEFAULT_BLOCK_SIZE", "attention", "attention_dense", "attention_partial",
           "merge_partials", "attention_scores", "P_ROPE_SI_BASE", "NoPE",
           "NTKRoPE", "PRoPESI", "RoPE", "ntk_base", "p_rope_si", "p_rope_si_frequencies",
           "qk_norm", "rms_norm", "rope", "rope_frequencies", "YaRNRoPE", "yarn_frequencies",
           "DynamicNTKRoPE", "dynamic_ntk_base", "from_rope_parameters", "LinearRoPE",
           "LongRoPE", "ProportionalRoPE",
           "Decoder",
           "DecoderConfig", "DecodingCache", "QueryStats"]
