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
(``tests/zoo/``) hold it against that source's formula written out independently.
The reference's own parameter names are accepted as well (each member's Parameters).

Every member imports from here. The package's modules:

* :mod:`~sia_theory.zoo.members` — :class:`Temperature`, :class:`QwenLogN`,
  :class:`Llama4Temperature`, :class:`CriticalScaling` and their base :class:`Multiplier`;
  :data:`SSMax` is :class:`~sia_theory.transforms.LogN` (same law);
* :mod:`~sia_theory.zoo.yarn` — :class:`YaRNTemperature`, :class:`DynamicYaRNTemperature`,
  :func:`yarn_mscale`;
* :mod:`~sia_theory.zoo.models` — the shipped models' rules (Mistral, Grok-2, DeepSeek, Sandwich,
  products of multipliers, LongRoPE's attention factor);
* :mod:`~sia_theory.zoo.registry` — :data:`ZOO`, a default instance of every member (with
  ``NoScale``, ``LogN``, ``ALiBi`` and ``ScaleInvariant`` from :mod:`sia_theory.transforms`),
  :data:`ZOO_INFO` and :func:`zoo_table`, a DataFrame describing them.

The zoo sits above :mod:`sia_theory.transforms` and below :mod:`sia_theory.attention`: it imports
nothing but the transforms, so the attention reference and the position encodings may use it.
"""

from .members import CriticalScaling, Llama4Temperature, Multiplier, QwenLogN, SSMax, Temperature
from .models import (
    DeepSeekMScale,
    Grok2Temperature,
    MultiplierProduct,
    Sandwich,
    longrope_attention_factor,
    mistral_temperature,
)
from .registry import ZOO, ZOO_INFO, ZooEntry, zoo_table
from .yarn import DynamicYaRNTemperature, YaRNTemperature, yarn_mscale

__all__ = ["Temperature", "QwenLogN", "YaRNTemperature", "DynamicYaRNTemperature",
           "Llama4Temperature", "CriticalScaling", "SSMax", "Multiplier", "yarn_mscale",
           "mistral_temperature", "Grok2Temperature", "DeepSeekMScale", "Sandwich",
           "MultiplierProduct", "longrope_attention_factor", "ZooEntry", "ZOO", "ZOO_INFO",
           "zoo_table"]
