r"""The zoo: published length-scaling rules as :class:`~sia_theory.transforms.Transform` objects.

Each member maps the raw score :math:`S = q\cdot k/\sqrt d` to ``L = a·S + m`` (THEORY.md §5).
Sources disagree on two conventions, and each class states and tests its own:

* **n as position or as length.** Here ``n`` is always the number of keys the query sees,
  ``n = q_idx + 1`` (query position + 1, 0-based positions). Qwen indexes its table by the
  query's absolute position with ``i = position + 1`` and Llama-4 uses ``cache_position + 1``:
  both are this ``n``. CAS and SSMax define ``n`` as the sequence length, which is the same
  number for the last query of a causal sequence. Without a causal mask ``n`` is still
  ``q_idx + 1`` (the package convention); for a bidirectional layer over ``N`` tokens use
  ``Temperature(member.multiplier(N))`` instead.
* **Temperature on q only or on q and k.** A factor ``f`` on the query alone multiplies the
  logit by ``f`` (Qwen logn, Llama-4); YaRN multiplies cos/sin, i.e. both ``q`` and ``k``,
  so the logit gets ``f²``.

Each member's docstring names the implementation and version it follows, and the tests
(``tests/core/test_zoo.py``) hold it against that source's formula written out independently.
The reference's own parameter names are accepted as well (each member's Parameters).

Members, importable from here: :class:`Temperature`, :class:`QwenLogN`, :class:`Llama4Temperature`,
:class:`CriticalScaling` (defined in :mod:`sia_theory.zoo_members` with their base ``Multiplier``),
:class:`YaRNTemperature`, :class:`DynamicYaRNTemperature` and :func:`yarn_mscale` (defined in
:mod:`sia_theory.zoo_yarn`); :data:`SSMax` is :class:`~sia_theory.transforms.LogN` (same law).
:data:`ZOO` holds a default instance of every member, including ``NoScale``, ``LogN``, ``ALiBi``
and ``ScaleInvariant`` from :mod:`sia_theory.transforms`, and :func:`zoo_table` describes them as a
DataFrame.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import NamedTuple

from .transforms import ALiBi, LogN, NoScale, ScaleInvariant, Transform, declared_dependence
from .zoo_members import (
    CriticalScaling,
    Llama4Temperature,
    Multiplier,  # noqa: F401  (re-exported: the base of members defined elsewhere)
    QwenLogN,
    SSMax,
    Temperature,
)
from .zoo_yarn import DynamicYaRNTemperature, YaRNTemperature, yarn_mscale

__all__ = ["Temperature", "QwenLogN", "YaRNTemperature", "DynamicYaRNTemperature",
           "Llama4Temperature", "CriticalScaling", "SSMax", "yarn_mscale", "ZooEntry", "ZOO",
           "ZOO_INFO", "zoo_table"]


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
}
"""Zoo name → :class:`ZooEntry`: the default instance, its source, dependence, where the factor acts
and its formula."""
ZOO: Mapping[str, Transform] = MappingProxyType(
    {name: entry.transform for name, entry in ZOO_INFO.items()})  # read-only: shared by all callers
r"""A default instance of every zoo member under a stable name. Defaults: ``Temperature(1.5)``;
``LogN(0.4)`` (SI Fig. 1); ``QwenLogN(8192)`` and ``DynamicYaRNTemperature(8192)`` (an 8k
training context); ``YaRNTemperature(4)`` (Qwen2.5's YaRN factor); ``Llama4Temperature(8192,
0.1)`` (Llama-4 config); ``CriticalScaling(2, head_dim=64)`` (:math:`\gamma = 1/(1-\rho)` at ``ρ =
0.5``, QK-norm with ``d =
64``); ``ALiBi(2⁻⁴)`` (one slope, so no member needs a head index); ``ScaleInvariant(10)`` (SI's
τ)."""


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
