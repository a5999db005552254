"""The top-level names of ``sia_theory`` have scipy-standard docstrings: a function or class
that takes arguments has a numpy-style ``Parameters`` section, a function a ``Returns`` section,
one that rejects input itself a ``Raises`` section, and each an ``Examples`` section (run by
``tests/docs/test_doctests.py``).

The rules are :func:`numpy_sections` of ``docs/_tools/public_api.py``, which also counts the
sections over every public name. ``COVERED`` is every name of ``sia_theory.__all__`` that is a
function or class taking arguments, so a new top-level name fails here until its docstring meets
the standard.
"""

from __future__ import annotations

import importlib
import inspect
import textwrap

import pytest
from docs_tool_modules import load_tool

import sia_theory

api = load_tool("public_api")


def _callable_with_arguments(name: str) -> bool:
    value = getattr(sia_theory, name)
    return not inspect.ismodule(value) and api.is_code(value) and api.takes_arguments(value)


# Every top-level function or class that takes arguments (95 of the 110 names of __all__ when the
# last one was brought to the standard): a new one fails test_the_docstring_has_the_numpy_sections
# until its docstring has the sections.
COVERED = [name for name in sia_theory.__all__ if _callable_with_arguments(name)]


def test_every_top_level_function_or_class_with_arguments_is_covered():
    """The selection itself, on known cases: the functions and classes with arguments are in,
    a class without (NoScale), data (ZOO, SCHEMES) and subpackages are out."""
    assert len(COVERED) == len(set(COVERED)) >= 95
    for name in ("ScaleInvariant", "expected_negentropy", "simulate_gaussian_logits", "Report",
                 "needle_study", "participation_beta50", "CriticalScaling"):
        assert name in COVERED, name
    for name in ("NoScale", "ZOO", "SCHEMES", "zoo_table", "gaussian", "cas"):
        assert name in sia_theory.__all__ and name not in COVERED, name


@pytest.mark.parametrize("name", COVERED)
def test_the_docstring_has_the_numpy_sections(name):
    found = api.numpy_sections("sia_theory", name)
    assert not found["missing"], f"sia_theory.{name} lacks {found['missing']}"


# The engines' own __all__: a subpackage's exports, and for the engines whose package exports
# nothing (Gaussian, CAS, sphere) every public module's __all__, so a new module is covered
# without being listed. Every function or class there, re-exports of the top level included,
# has Parameters (where it takes arguments), Returns (a function) and Raises (where it rejects
# input itself); Examples where cheap, so not required here.
ENGINES = ("sia_theory.attention", "sia_theory.models", "sia_theory.training",
           "sia_theory.studies", "sia_theory.sphere.gaps",
           *(m for m in api.public_modules() if m.startswith(
               ("sia_theory.gaussian.", "sia_theory.cas.", "sia_theory.sphere."))))


def _engine_names() -> list[str]:
    names, seen = [], set()
    for module_name in ENGINES:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            value = getattr(module, name)
            if inspect.ismodule(value) or not api.is_code(value) or id(value) in seen:
                continue
            seen.add(id(value))
            names.append(f"{module_name}:{name}")
    return names


ENGINE_NAMES = _engine_names()


def test_the_engine_selection_holds_the_known_names():
    assert len(ENGINE_NAMES) >= 210
    assert "sia_theory.gaussian.closed_forms" in ENGINES and "sia_theory.cas.tokens" in ENGINES
    for name in ("sia_theory.attention:attention_partial", "sia_theory.models:read_gguf",
                 "sia_theory.sphere.model:order_parameters", "sia_theory.cas.tokens:check_rng",
                 "sia_theory.training:TrainSettings", "sia_theory.studies:Execution",
                 "sia_theory.sphere.gaps:top_scores"):
        assert name in ENGINE_NAMES, name


@pytest.mark.parametrize("where", ENGINE_NAMES)
def test_the_engine_docstring_has_parameters_returns_raises(where):
    module_name, name = where.split(":")
    found = api.numpy_sections(module_name, name)
    missing = [s for s in found["missing"] if s != "Examples"]
    assert not missing, f"{module_name}.{name} lacks {missing}"


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
