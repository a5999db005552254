"""The zoo outside numpy: a transform as PyTorch FlexAttention ``score_mod`` and as JAX inputs.

Every route reads the same per-position coefficient tables (:func:`coefficient_tables`, the
transform's own ``coefficients`` in float64, rounded once): :func:`flex_score_mod` and
:func:`causal_block_mask` for ``torch.nn.attention.flex_attention``, :func:`flex_query_stats`
for per-query statistics from its ``return_lse``; :func:`dot_product_attention_inputs` (the
per-position query scale and additive bias of ``jax.nn.dot_product_attention``),
:func:`jax_score_mod` (a ``jax.numpy`` score function) and :func:`jax_attention` for JAX. torch
and jax are imported only when a function that needs them is called.
"""

from ..transforms.tables import coefficient_tables, is_separable
from .jax_nn import dot_product_attention_inputs, jax_attention, jax_score_mod
from .torch_flex import causal_block_mask, flex_query_stats, flex_score_mod

__all__ = ["coefficient_tables", "is_separable", "flex_score_mod", "causal_block_mask",
           "flex_query_stats", "dot_product_attention_inputs", "jax_score_mod", "jax_attention"]
