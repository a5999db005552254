"""The zoo's registry: :data:`ZOO`, a default instance of every member (the papers' transforms
beside the published rules of :mod:`~sia_theory.zoo.members`, :mod:`~sia_theory.zoo.yarn` and
:mod:`~sia_theory.zoo.models`), :data:`ZOO_INFO` (how each reads its source) and
:func:`zoo_table`."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import NamedTuple

from ..transforms import ALiBi, LogN, NoScale, ScaleInvariant, Transform, declared_dependence
from .members import (
    CriticalScaling,
    Llama4Temperature,
    QwenLogN,
    Temperature,
)
from .models import (
    DeepSeekMScale,
    Grok2Temperature,
    MultiplierProduct,
    Sandwich,
    longrope_attention_factor,
    mistral_temperature,
)
from .yarn import DynamicYaRNTemperature, YaRNTemperature

__all__ = ["ZooEntry", "ZOO", "ZOO_INFO", "zoo_table"]


class ZooEntry(NamedTuple):
    """A zoo member's default instance and how it reads its source."""

    transform: Transform
    source: str  # paper / model card / file and equation
    n_convention: str  # what n (or t) is in the source's own terms
    applied_to: str  # where the factor enters: q only, q and k, the logit, a bias
    formula: str  # the law on S = q·k/√d


_E = ZooEntry
ZOO_INFO: dict[str, ZooEntry] = {
    "none": _E(NoScale(), "standard attention (Vaswani et al. 2017)", "-", "-", "L = S"),
    "temperature": _E(Temperature(1.5), "constant inverse temperature", "-", "logit",
                      "L = c·S"),
    "logn": _E(LogN(0.4), "LogN / SSMax (Nakanishi 2025 §3; Chiang & Cholak 2022); "
               "SI Fig. 1", "n = number of keys (position + 1)", "logit", "L = s·log(n)·S"),
    "qwen-logn": _E(QwenLogN(8192), "Qwen-1 modeling_qwen.py use_logn_attn (logn_list; "
                    "Qwen-7B-Chat)",
                    "i = position + 1 (= n)", "q only", "L = max(1, log n/log train_len)·S"),
    "yarn": _E(YaRNTemperature(4.0), "YaRN (Peng et al. 2023) §3.4; transformers v5 "
               "_compute_yarn_parameters attention_factor", "fixed s (rope_parameters factor)",
               "q and k (cos/sin)", "L = (0.1·ln s + 1)²·S"),
    "yarn-dynamic": _E(DynamicYaRNTemperature(8192), "YaRN (Peng et al. 2023) §3.3 dynamic "
                       "scaling, s = max(1, l'/L); authors' LlamaDynamicYaRNScaledRotaryEmbedding",
                       "s from n = position + 1",
                       "q and k (cos/sin)", "L = (0.1·ln max(1, n/L) + 1)²·S"),
    "llama4": _E(Llama4Temperature(8192, 0.1), "transformers modeling_llama4 "
                 "attn_scales, attn_temperature_tuning (NoPE layers)", "cache_position + 1 (= n)",
                 "q only",
                 "L = (log(floor(n/8192) + 1)·0.1 + 1)·S"),
    "critical": _E(CriticalScaling(2.0, head_dim=64), "CAS: beta = gamma·log n on cosines, "
                   "gamma = 1/(1 - 0.5); QK-norm (RMSNorm), d = 64", "n = number of keys",
                   "logit (cosine)", "L = γ·log(n)/√d·S"),
    "alibi": _E(ALiBi(2.0 ** -4), "ALiBi (Press et al. 2022), slope 2^-4 (head h = 3 of "
                "ALiBi.standard(8))", "t = q_idx - kv_idx", "bias", "L = S - slope·t"),
    "scale-invariant": _E(ScaleInvariant(10.0), "SI eq. 16, tau = 10", "t = q_idx - kv_idx",
                          "logit and bias", "L = a_t·S + m_t"),
    # the members of sia_theory.zoo.models and LongRoPE's factor (shipped models' configs)
    "mistral": _E(mistral_temperature(0.1, 16384),
                  "transformers ministral3/mistral4 get_llama_4_attn_scale (llama_4_scaling_beta; "
                  "commit 0205eec1d869); vLLM deepseek_v2 _get_llama_4_scaling; llama.cpp "
                  "f_attn_temp_offset = 0; Ministral-3's beta = 0.1, L = 16384",
                  "position p = n - 1", "q only (after RoPE)",
                  "L = (1 + 0.1·ln(1 + floor((n-1)/16384)))·S"),
    "grok2": _E(Grok2Temperature(1024), "sglang triton decode/extend attention "
                "xai_temperature_len (commit 83ea222010e3; Grok-2 attn_temperature_len = 1024)",
                "position p = n - 1", "logit",
                "L = max(1, log2(n-1)/log2 1024)·S for n - 1 > 1024"),
    "deepseek-mscale": _E(DeepSeekMScale(40.0, 1.0), "vLLM DeepseekV2Attention (commit "
                          "002d6073aa03) / transformers DeepseekV3Attention: softmax scale times "
                          "yarn_get_mscale(factor, mscale_all_dim)^2; DeepSeek-V3 factor 40",
                          "fixed s (rope_parameters factor)", "logit (softmax scale)",
                          "L = (0.1·ln 40 + 1)²·S"),
    "mistral4": _E(MultiplierProduct((DeepSeekMScale(128.0, 1.0), mistral_temperature(0.1, 8192))),
                   "transformers modeling_mistral4 (commit 0205eec1d869): yarn_apply_mscale "
                   "softmax scale and get_llama_4_attn_scale; Mistral-Small-4 config (factor "
                   "128, mscale_all_dim 1, beta 0.1, original 8192)", "position p = n - 1",
                   "logit (softmax scale) and q only",
                   "L = (0.1·ln 128 + 1)²·(1 + 0.1·ln(1 + floor((n-1)/8192)))·S"),
    "longrope": _E(Temperature(longrope_attention_factor(32, 4096) ** 2),
                   "transformers _compute_longrope_parameters attention_factor sqrt(1 + ln f / "
                   "ln L) (Phi-3.5-mini: f = 131072/4096 = 32, L = 4096)",
                   "fixed f (max / original positions)", "q and k (cos/sin)",
                   "L = (1 + ln 32/ln 4096)·S"),
    "sandwich": _E(Sandwich(1, 128), "attention-gym mods/sandwich.py (commit 70ab2d6fe07e; Chi "
                   "et al. 2023), one head, d_bar = 128", "t = q_idx - kv_idx", "bias",
                   "L = S + Σ_i cos(t·w_i)/8"),
}
"""Zoo name → :class:`ZooEntry`: the default instance, its source, dependence, where the factor acts
and its formula."""
ZOO: Mapping[str, Transform] = MappingProxyType(
    {name: entry.transform for name, entry in ZOO_INFO.items()})  # read-only: shared by all callers
r"""A default instance of every zoo member under a stable name. Defaults: ``Temperature(1.5)``;
``LogN(0.4)`` (SI Fig. 1); ``QwenLogN(8192)`` and ``DynamicYaRNTemperature(8192)`` (an 8k
training context); ``YaRNTemperature(4)`` (Qwen2.5's YaRN factor); ``Llama4Temperature(8192,
0.1)`` (Llama-4 config); ``CriticalScaling(2, head_dim=64)`` (:math:`\gamma = 1/(1-\rho)` at
``ρ = 0.5``, QK-norm with ``d = 64``); ``ALiBi(2⁻⁴)`` (one slope, so no member needs a head
index); ``ScaleInvariant(10)`` (SI's τ); the shipped models' rules of :mod:`sia_theory.zoo.models`
at their configs' values: ``mistral_temperature(0.1, 16384)`` (Ministral-3, ``Llama4Temperature``
with ``offset=0``), ``Grok2Temperature(1024)`` (Grok-2), ``DeepSeekMScale(40, 1)``
(DeepSeek-V3), the product of ``DeepSeekMScale(128, 1)`` and ``mistral_temperature(0.1, 8192)``
(Mistral-Small-4), LongRoPE's factor as ``Temperature(1 + ln 32/ln 4096)`` (Phi-3.5-mini) and
``Sandwich(1, 128)``. The ``linear`` and ``proportional`` RoPE types change frequencies only (no
logit factor): they are encodings (:func:`~sia_theory.schemes.from_rope_parameters`), not zoo
members."""


def zoo_table():
    r"""The zoo as a pandas DataFrame: one row per :data:`ZOO` entry with its name, class,
    parameters, source, declared dependence, ``n`` convention, where the factor is applied and
    the law on :math:`S = q\cdot k/\sqrt d`."""
    import pandas as pd  # here, so that importing the zoo loads no pandas

    rows = []
    for name, entry in ZOO_INFO.items():
        member = entry.transform
        rows.append({"name": name, "class": type(member).__name__, "parameters": repr(member),
                     "source": entry.source,
                     "depends_on": ",".join(sorted(declared_dependence(member))) or "-",
                     "n_convention": entry.n_convention, "applied_to": entry.applied_to,
                     "formula": entry.formula})
    return pd.DataFrame(rows)
