"""Every public name of every public module of ``sia_theory`` has a docstring: the API reference
of the documentation site is generated from them.

Public modules: every module under ``sia_theory`` with no path component starting with ``_``.
Public names: a module's ``__all__`` where it defines one, else the names not starting with
``_`` that it defines itself; public methods and properties of a public class count too. The
rules live in ``docs/_tools/public_api.py``, which the site's API generator uses as well, so the
test holds every name the site shows, and those of the implementation modules the API reference
gives no page (``test_api_reference.py``), which a reader still meets in their source.
"""

from __future__ import annotations

import importlib
import textwrap

import pytest
from docs_tool_modules import load_tool

api = load_tool("public_api")


def test_the_walk_finds_every_public_package():
    modules = set(api.public_modules())
    expected = {"sia_theory", "sia_theory.transforms", "sia_theory.zoo", "sia_theory.phases",
                "sia_theory.schemes.targets", "sia_theory.transforms.score_mod",
                "sia_theory.gaussian.frullani", "sia_theory.gaussian.routes",
                "sia_theory.gaussian.estimate", "sia_theory.gaussian.laws",
                "sia_theory.gaussian.phase", "sia_theory.gaussian.family",
                "sia_theory.gaussian.needle", "sia_theory.gaussian.asymptotic",
                "sia_theory.cas.simplex", "sia_theory.attention.rope_scaling",
                "sia_theory.schemes.rope_config", "sia_theory.attention.positional",
                "sia_theory.attention.model", "sia_theory.models.loader",
                "sia_theory.analysis", "sia_theory.studies", "sia_theory.studies.base",
                "sia_theory.sweeps.engine", "sia_theory.symbolic.si", "sia_theory.cli"}
    assert expected <= modules, expected - modules
    assert not any(part.startswith("_") for m in modules for part in m.split(".")[1:])
    assert "sia_theory._infra.io" not in modules and "sia_theory.gaussian._kernels" not in modules


def test_every_public_name_has_a_docstring():
    missing = api.missing_docstrings()
    assert not missing, f"{len(missing)} public names without a docstring:\n" + "\n".join(missing)


@pytest.mark.parametrize("module_name, name", [
    ("sia_theory", "ScaleInvariant"),        # lazily exported class
    ("sia_theory", "ZOO"),                   # lazily exported data
    ("sia_theory", "needle_study"),          # a study object re-exported at the top
    ("sia_theory.studies", "Execution"),     # the lazy __getattr__ of a package
    ("sia_theory.attention", "DEFAULT_BLOCK_SIZE"),  # a re-exported constant
])
def test_the_lookup_follows_re_exports_to_the_definition(module_name, name):
    importlib.import_module(module_name)
    assert api.docstring_of(module_name, name).strip()
    assert not api.is_private(api.home_of(module_name, name)[0])


def test_an_undocumented_module_is_caught(tmp_path, monkeypatch):
    """Negative control: a dataclass with only the docstring ``dataclasses`` invents, an
    undocumented function, constant and method are each reported; documented ones are not."""
    package = tmp_path / "sia_theory_fake"
    package.mkdir()
    (package / "__init__.py").write_text('"""A fake package."""\n')
    (package / "mod.py").write_text(textwrap.dedent('''
        """A module."""
        import dataclasses

        __all__ = ["Bare", "Documented", "bare", "documented", "LIMIT", "DOCUMENTED_LIMIT"]

        @dataclasses.dataclass
        class Bare:
            x: int = 0

        class Documented:
            """Has one."""

            def method(self):
                return 1

        def bare():
            return 0

        def documented():
            """Has one."""

        LIMIT = 3
        DOCUMENTED_LIMIT = 4
        """Has one."""
        '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(api, "PACKAGE", "sia_theory_fake")
    missing = api.missing_docstrings(["sia_theory_fake.mod"])
    assert missing == ["sia_theory_fake.mod.Bare", "sia_theory_fake.mod.Documented.method",
                       "sia_theory_fake.mod.LIMIT", "sia_theory_fake.mod.bare"]
