"""The top-level names of ``sia_theory`` have scipy-standard docstrings: a function or class
that takes arguments has a numpy-style ``Parameters`` section, a function a ``Returns`` section,
one that rejects input itself a ``Raises`` section, and each an ``Examples`` section (run by
``tests/docs/test_doctests.py``).

The rules are :func:`numpy_sections` of ``docs/_tools/public_api.py``, which also counts the
sections over every public name. ``COVERED`` lists the top-level names whose docstrings have been
brought to the standard; the rest of ``sia_theory.__all__`` is to follow (each added to the list
as its docstring is written, until the list is the whole of ``__all__``).
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
import textwrap
from pathlib import Path

import pytest

import sia_theory

ROOT = Path(__file__).resolve().parents[2]


def _load_public_api():
    spec = importlib.util.spec_from_file_location("_docs_public_api",
                                                  ROOT / "docs" / "_tools" / "public_api.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


api = _load_public_api()

# The names brought to the standard so far; the rest of sia_theory.__all__ is to follow.
COVERED = [
    "ALiBi", "LogN", "SSMax", "ScaleInvariant", "ScaleInvariantFamily",
    "expected_log_total_attention", "expected_negentropy", "plug_in_entropy",
    "scale_invariant_total_attention", "scale_invariant_negentropy", "scale_invariant_limits",
    "expected_total_attention", "analyze", "Scheme", "resolve_scheme", "sweep",
    "load_pretrained", "expectation", "get_study",
    "critical_gamma", "simplex_self_weight", "simplex_inner_product",
    "range_log_laplace", "expected_entropy_exact", "expected_mass_exact",
    "Estimate", "ExactEntropy", "ExactMass", "assert_agree",
    "DistanceLaw", "ScoreModTransform", "YaRNRoPE", "distance_quadrature", "FixedContext",
    "at_context", "simulate_needle", "sample_tokens", "rem_beta50", "simplex_beta50",
    "mistral_temperature", "Grok2Temperature", "DeepSeekMScale", "MultiplierProduct", "Sandwich",
    "from_hf_config", "gap_counts", "half_mass_beta", "critical_scale", "order_parameter",
    "rem_max_location", "zoo_phase_table", "freezing_ratio", "argmax_probability", "needle_mass",
    "argmax_threshold", "mass_threshold", "evt_threshold", "entropy_in_range_scaling",
    "fit_growth_laws", "laplace_log_factor", "laplace_tilted",
    "simulate_gaussian_logits_asymptotic",
    "attention_step", "simulate_token_step", "simulate_depth", "jacobian_eta", "dense_jacobian",
    "participation_beta50", "rem_participation",
    "from_rope_parameters", "NTKRoPE", "DynamicNTKRoPE", "Report", "hf_report", "load_sweep",
    "NeedleSettings", "needle_study",
    "Temperature", "QwenLogN", "YaRNTemperature", "DynamicYaRNTemperature", "Llama4Temperature",
    "CriticalScaling",
    "simplex_limit", "jacobian_limit", "simplex_eta", "simplex_sparsity", "critical_eta_excess",
    "transition_width",
    "RangeStatistics", "range_statistics", "summarize", "simulate_gaussian_logits",
    "simulate_gaussian_range_statistics", "context_length_sweep",
]


def _callable_with_arguments(name: str) -> bool:
    value = getattr(sia_theory, name)
    return not inspect.ismodule(value) and api.is_code(value) and api.takes_arguments(value)


def test_the_covered_names_are_top_level_functions_or_classes_with_arguments():
    assert len(set(COVERED)) == len(COVERED)
    assert set(COVERED) <= set(sia_theory.__all__)
    assert all(_callable_with_arguments(name) for name in COVERED)


@pytest.mark.parametrize("name", COVERED)
def test_the_docstring_has_the_numpy_sections(name):
    found = api.numpy_sections("sia_theory", name)
    assert not found["missing"], f"sia_theory.{name} lacks {found['missing']}"


def test_the_section_rules_on_known_cases():
    """Negative and positive controls of the rules themselves."""
    doc = textwrap.dedent("""\
        Summary.

        Parameters
        ----------
        x : int

        Examples
        --------
        >>> 1
        1
        """)
    assert api.sections(doc) == {"Parameters", "Examples"}
    assert api.sections("Parameters: x, an int.\nReturns the square.") == set()
    # ScaleInvariant validates its arguments; NoScale takes none; expected_total_attention is
    # a function (Returns wanted), ALiBi a class (not)
    assert api.raises_directly(sia_theory.ScaleInvariant)
    assert not api.takes_arguments(sia_theory.NoScale)
    si = api.numpy_sections("sia_theory", "ScaleInvariant")
    assert si["arguments"] and not si["function"] and si["raises"]
    assert "Returns" not in si["missing"]


def test_an_undocumented_function_is_reported(tmp_path, monkeypatch):
    """Negative control: a function that raises, documented in prose only, lacks every
    section; one written to the standard lacks none."""
    package = tmp_path / "sia_theory_sections_fake"
    package.mkdir()
    (package / "__init__.py").write_text(textwrap.dedent('''
        """A fake package."""

        def bare(x):
            """Square ``x``; ValueError if negative."""
            if x < 0:
                raise ValueError("x must be >= 0")
            return x * x

        def full(x):
            """Square ``x``.

            Parameters
            ----------
            x : float
                >= 0.

            Returns
            -------
            float

            Raises
            ------
            ValueError
                If ``x < 0``.

            Examples
            --------
            >>> full(2)
            4
            """
            if x < 0:
                raise ValueError("x must be >= 0")
            return x * x
        '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(api, "PACKAGE", "sia_theory_sections_fake")
    bare = api.numpy_sections("sia_theory_sections_fake", "bare")
    assert bare["missing"] == ["Parameters", "Returns", "Raises", "Examples"]
    assert api.numpy_sections("sia_theory_sections_fake", "full")["missing"] == []
