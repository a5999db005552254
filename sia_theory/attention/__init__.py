"""Torch-free CPU attention reference: FlexAttention-style ``attention`` (dense or streaming),
a layer's logit law with its soft cap and sliding window (:class:`LayerScoreMod`),
position encodings (RoPE, p-RoPE, NoPE; NTK, dynamic NTK and YaRN in :mod:`.rope_scaling`,
transformers' other scalings in :mod:`.rope_variants`), QK-norm, and a minimal decoder with an
InAttention variant. The logit transforms are the package's :mod:`sia_theory.transforms`
objects, the published temperatures the zoo's (:mod:`sia_theory.zoo`, one floor down); a
transformers ``rope_parameters`` dict becomes an encoding and a score mod one floor up, in
:func:`sia_theory.schemes.from_rope_parameters`."""

from .._deprecated import moved_names
from .cache import DecodingCache
from .core import (
    DEFAULT_BLOCK_SIZE,
    attention,
    attention_dense,
    attention_partial,
    attention_scores,
    merge_partials,
)
from .layer_mod import LayerScoreMod, layer_score_mod
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
           "DynamicNTKRoPE", "dynamic_ntk_base", "LinearRoPE",
           "LongRoPE", "ProportionalRoPE",
           "Decoder",
           "DecoderConfig", "DecodingCache", "QueryStats", "LayerScoreMod", "layer_score_mod"]

__getattr__ = moved_names(__name__)  # from_rope_parameters is sia_theory.schemes' (removed in 0.5)
