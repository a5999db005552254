"""sia-theory: executable theory of long-context attention scaling.

The transforms are the shared vocabulary: the closed forms, the Monte Carlo, the figures and the
attention reference all take a transform object. Subpackages: ``symbolic`` (sympy derivations),
``attention`` (the torch-free attention reference and decoder).
"""

from . import attention, symbolic
from .cas.dynamics import attention_step, sample_tokens, simulate_depth, simulate_token_step
from .cas.jacobian import dense_jacobian, jacobian_eta
from .cas.simplex import (
    critical_eta_excess,
    critical_gamma,
    jacobian_limit,
    simplex_eta,
    simplex_inner_product,
    simplex_limit,
    simplex_self_weight,
    simplex_sparsity,
    transition_width,
)
from .si.closed_forms import (
    expected_negentropy,
    expected_total_attention,
    plug_in_entropy,
    scale_invariant_limits,
    scale_invariant_negentropy,
    scale_invariant_total_attention,
)
from .si.entropy_scaling import entropy_in_range_scaling, fit_growth_laws
from .si.montecarlo import (
    RangeStatistics,
    context_length_sweep,
    range_statistics,
    simulate_gaussian_logits,
    simulate_gaussian_range_statistics,
    summarize,
)
from .transforms import ALiBi, LogN, NoScale, ScaleInvariant, Transform

__all__ = [
    # transforms
    "ALiBi", "LogN", "NoScale", "ScaleInvariant", "Transform",
    # scale-invariant attention: closed forms and Monte Carlo
    "expected_total_attention", "expected_negentropy", "plug_in_entropy",
    "scale_invariant_total_attention", "scale_invariant_negentropy", "scale_invariant_limits",
    "RangeStatistics", "range_statistics", "summarize", "simulate_gaussian_logits",
    "simulate_gaussian_range_statistics", "context_length_sweep",
    "entropy_in_range_scaling", "fit_growth_laws",
    # critical attention scaling
    "critical_gamma", "simplex_self_weight", "simplex_inner_product", "simplex_limit",
    "jacobian_limit", "simplex_eta", "simplex_sparsity", "critical_eta_excess", "transition_width",
    "attention_step", "simulate_token_step", "simulate_depth", "sample_tokens",
    "jacobian_eta", "dense_jacobian",
    # subpackages
    "attention", "symbolic",
]
__version__ = "0.1.0"
