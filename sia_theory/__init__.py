"""sia-theory: executable theory of long-context attention scaling.

The transforms are the shared vocabulary: the closed forms, the Monte Carlo, the figures and the
attention reference all take a transform object. The engines: ``gaussian`` (independent
Gaussian logits under any transform: closed forms, Monte Carlo, the exact and asymptotic routes,
the needle, the REM phase), ``cas`` (the tokens of critical attention scaling), ``attention``
(the torch-free attention reference and decoder), ``models`` (a pretrained model through that
reference); ``symbolic`` (sympy derivations and the numeric code generated from them). Above
them, ``studies`` (one module per figure, one call contract) and ``analysis`` (``analyze``).

Names are re-exported lazily (PEP 562): ``import sia_theory`` loads nothing else, and
``from sia_theory import X`` imports only the module that defines ``X`` (so, e.g., the
transforms never load numba or sympy).
"""

import importlib

from ._deprecated import install as _install_moved_modules

_install_moved_modules()  # the module paths of 0.3 that moved resolve, with a warning

# Public name -> module (relative to this package) that defines it.
_EXPORTS = {
    **dict.fromkeys(["ALiBi", "LogN", "NoScale", "ScaleInvariant", "ScaleInvariantFamily",
                     "Transform"], ".transforms"),
    **dict.fromkeys(["expected_total_attention", "expected_log_total_attention",
                     "expected_negentropy", "plug_in_entropy",
                     "scale_invariant_total_attention", "scale_invariant_negentropy",
                     "scale_invariant_limits"], ".gaussian.closed_forms"),
    **dict.fromkeys(["RangeStatistics", "range_statistics", "summarize",
                     "simulate_gaussian_logits", "simulate_gaussian_range_statistics",
                     "context_length_sweep"], ".gaussian.montecarlo"),
    **dict.fromkeys(["entropy_in_range_scaling", "fit_growth_laws"], ".gaussian.entropy"),
    **dict.fromkeys(["simulate_gaussian_logits_asymptotic"], ".gaussian.asymptotic"),
    **dict.fromkeys(["distance_quadrature", "expected_entropy_exact", "expected_mass_exact",
                     "range_log_laplace", "ExactEntropy", "ExactMass"], ".gaussian.exact"),
    **dict.fromkeys(["laplace_log_factor", "laplace_tilted"], ".gaussian.laplace"),
    **dict.fromkeys(["critical_gamma", "simplex_self_weight", "simplex_inner_product",
                     "simplex_limit", "jacobian_limit", "simplex_eta", "simplex_sparsity",
                     "critical_eta_excess", "transition_width"], ".cas.simplex"),
    **dict.fromkeys(["attention_step", "simulate_token_step", "simulate_depth",
                     "sample_tokens"], ".cas.dynamics"),
    **dict.fromkeys(["jacobian_eta", "dense_jacobian"], ".cas.jacobian"),
    **dict.fromkeys(["Temperature", "QwenLogN", "YaRNTemperature", "DynamicYaRNTemperature",
                     "Llama4Temperature", "CriticalScaling", "SSMax", "ZOO", "zoo_table"],
                    ".zoo"),
    **dict.fromkeys(["YaRNRoPE", "NTKRoPE", "DynamicNTKRoPE"], ".attention.rope_scaling"),
    "from_rope_parameters": ".schemes",
    "from_hf_config": ".models.hf_config",
    "hf_report": ".analysis.hf",
    **dict.fromkeys(["model_report", "ModelReport"], ".analysis.model"),
    **dict.fromkeys(["Grok2Temperature", "DeepSeekMScale", "Sandwich", "MultiplierProduct",
                     "mistral_temperature"], ".zoo"),
    **dict.fromkeys(["analyze", "Report"], ".analysis"),
    **dict.fromkeys(["sweep", "load_sweep"], ".sweeps"),
    **dict.fromkeys(["load_pretrained"], ".models"),
    **dict.fromkeys(["argmax_probability", "needle_mass"], ".gaussian.needle"),
    **dict.fromkeys(["argmax_threshold", "mass_threshold", "evt_threshold"],
                    ".gaussian.needle_theory"),
    **dict.fromkeys(["simulate_needle"], ".gaussian.needle_montecarlo"),
    **dict.fromkeys(["NeedleSettings", "needle_study"], ".studies.ext_needle"),
    # one phase diagram (EXT-4 … EXT-6)
    **dict.fromkeys(["participation_beta50", "rem_participation", "rem_beta50",
                     "simplex_beta50"], ".cas.universality"),
    **dict.fromkeys(["zoo_phase_table", "freezing_ratio", "rem_max_location"],
                    ".gaussian.phase"),
    **dict.fromkeys(["Estimate", "assert_agree"], ".gaussian.estimate"),
    "expectation": ".gaussian.routes",
    **dict.fromkeys(["FixedContext", "at_context"], ".transforms"),
    "ScoreModTransform": ".transforms",
    **dict.fromkeys(["REM_PHASES", "CAS_PHASES"], ".phases"),
    "get_study": ".studies",
    **dict.fromkeys(["Scheme", "SCHEMES", "resolve_scheme"], ".schemes"),
    # bounded scores: the gap-counting diagnostic and keys on a sphere
    **dict.fromkeys(["gap_counts", "half_mass_beta", "critical_scale"], ".sphere.gaps"),
    **dict.fromkeys(["DistanceLaw"], ".sphere.model"),
    "order_parameter": ".sphere.routes",
}
_SUBPACKAGES = ("analysis", "attention", "cas", "gaussian", "models", "sphere", "studies",
                "symbolic")

__all__ = [
    # transforms
    "ALiBi", "LogN", "NoScale", "ScaleInvariant", "ScaleInvariantFamily", "Transform",
    "ScoreModTransform",
    # scale-invariant attention: closed forms and Monte Carlo
    "expected_total_attention", "expected_log_total_attention", "expected_negentropy",
    "plug_in_entropy",
    "scale_invariant_total_attention", "scale_invariant_negentropy", "scale_invariant_limits",
    "RangeStatistics", "range_statistics", "summarize", "simulate_gaussian_logits",
    "simulate_gaussian_range_statistics", "context_length_sweep",
    "entropy_in_range_scaling", "fit_growth_laws", "simulate_gaussian_logits_asymptotic",
    # the exact (Laplace/Frullani) route, cost independent of the range
    "distance_quadrature", "expected_entropy_exact", "expected_mass_exact", "range_log_laplace",
    "ExactEntropy", "ExactMass", "laplace_log_factor", "laplace_tilted",
    # critical attention scaling
    "critical_gamma", "simplex_self_weight", "simplex_inner_product", "simplex_limit",
    "jacobian_limit", "simplex_eta", "simplex_sparsity", "critical_eta_excess", "transition_width",
    "attention_step", "simulate_token_step", "simulate_depth", "sample_tokens",
    "jacobian_eta", "dense_jacobian",
    # the zoo of published length-scaling schemes
    "Temperature", "QwenLogN", "YaRNTemperature", "DynamicYaRNTemperature", "Llama4Temperature",
    "CriticalScaling", "SSMax", "ZOO", "zoo_table", "YaRNRoPE", "NTKRoPE", "DynamicNTKRoPE",
    "from_rope_parameters", "from_hf_config", "hf_report", "Grok2Temperature", "DeepSeekMScale",
    "Sandwich", "MultiplierProduct", "mistral_temperature",
    # sweeps on dask.distributed
    "sweep", "load_sweep",
    # needle retrieval under Gaussian logits (EXT-7)
    "argmax_probability", "needle_mass", "argmax_threshold", "mass_threshold", "evt_threshold",
    "simulate_needle", "NeedleSettings", "needle_study",
    # the analysis layer (a model's own attention: model_report)
    "analyze", "Report", "model_report", "ModelReport",
    # pretrained models through the reference
    "load_pretrained",
    # one phase diagram (EXT-4 … EXT-6)
    "participation_beta50", "rem_participation", "rem_beta50", "rem_max_location",
    "simplex_beta50", "zoo_phase_table", "freezing_ratio",
    # one result type for the routes, one call for every route, the phase vocabularies
    "Estimate", "assert_agree", "expectation", "FixedContext", "at_context", "REM_PHASES",
    "CAS_PHASES",
    # length schemes: one position encoding + one transform, one registry
    "Scheme", "SCHEMES", "resolve_scheme",
    # the studies (one contract: study(settings, *, seed) -> StudyResult)
    "get_study",
    # bounded scores: the gap-counting diagnostic and keys on a sphere
    "gap_counts", "half_mass_beta", "critical_scale", "DistanceLaw", "order_parameter",
    # subpackages
    "analysis", "attention", "cas", "gaussian", "models", "sphere", "studies", "symbolic",
]
__version__ = "0.4.0"


def __getattr__(name):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name], __name__), name)
    elif name in _SUBPACKAGES:
        value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # cache: later look-ups skip __getattr__
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
