"""The site shows a docstring written with shared-parameter placeholders as ``help()`` does.

The docstrings name shared parameters by placeholder lines (``{transform, n_ctx, t}``,
:mod:`sia_theory._infra.docstrings`), expanded at import; the site reads the source with griffe,
so ``docs/_tools/griffe_shared_parameters.py`` puts the run-time text in. Here the package is
loaded as mkdocstrings loads it: every docstring with a placeholder becomes exactly its
``__doc__``, parses as numpy without a warning (the strict build fails on one) into the entries
``help()`` shows, and the roles extension, after it, links the roles the entries hold. Negative
controls: without the extension griffe warns on the same docstring, and a placeholder that no
decorator expands stops the build."""

from __future__ import annotations

import ast
import importlib
import inspect
import logging
import textwrap
from pathlib import Path

import griffe
import pytest
from docs_tool_modules import load_tool

from sia_theory._infra.docstrings import PLACEHOLDER, parameter_entries

ROOT = Path(__file__).resolve().parents[2]
shared = load_tool("griffe_shared_parameters")
roles = load_tool("griffe_sphinx_roles")


def _placeholder_paths() -> list[str]:
    """``module.qualname`` of every function or class whose source docstring holds one."""
    paths = []
    for file in sorted((ROOT / "sia_theory").rglob("*.py")):
        module = ".".join(file.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")

        def walk(body, prefix):
            for node in body:
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    doc = ast.get_docstring(node, clean=False) or ""
                    if PLACEHOLDER.search(doc):
                        paths.append(f"{prefix}.{node.name}")
                    walk(node.body, f"{prefix}.{node.name}")

        walk(ast.parse(file.read_text()).body, module)
    return paths


PATHS = _placeholder_paths()


def _runtime(path: str):
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


def _load(*extensions):
    return griffe.load("sia_theory", search_paths=[str(ROOT)],
                       extensions=griffe.load_extensions(*extensions))


def _griffe_warnings(caplog, obj) -> tuple[list, list[str]]:
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="griffe"):
        sections = obj.docstring.parse("numpy")
    return sections, [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def test_the_placeholders_are_where_the_families_are():
    assert len(PATHS) >= 50
    for path in ("sia_theory.gaussian.needle.argmax_probability",
                 "sia_theory.gaussian.closed_forms.expected_total_attention",
                 "sia_theory.gaussian.montecarlo.simulate_gaussian_logits",
                 "sia_theory.cas.simplex_weights.simplex_self_weight"):
        assert path in PATHS, path


def test_the_site_shows_the_run_time_docstring_and_parses_it_cleanly(caplog):
    package = _load(shared.SharedParameters)
    for path in PATHS:
        obj = package[path.removeprefix("sia_theory.")]
        runtime = _runtime(path)
        assert obj.docstring.value == inspect.cleandoc(runtime.__doc__), path
        sections, warnings = _griffe_warnings(caplog, obj)
        assert warnings == [], (path, warnings)
        names = [p.name for s in sections if s.kind.value == "parameters" for p in s.value]
        assert names == list(parameter_entries(runtime.__doc__)), path


def test_without_the_extension_griffe_warns_on_a_placeholder(caplog):
    """Negative control: the source docstring as griffe reads it alone."""
    obj = _load()["gaussian.needle.argmax_probability"]
    _, warnings = _griffe_warnings(caplog, obj)
    assert any("{transform, n_ctx, t, deltas, head}" in w for w in warnings), warnings


def test_the_roles_extension_runs_after_it_and_links_the_expanded_roles():
    config = (ROOT / "mkdocs.yml").read_text()
    assert config.index("griffe_shared_parameters.py") < config.index("griffe_sphinx_roles.py")
    package = _load(shared.SharedParameters, roles.SphinxRoles)
    doc = package["gaussian.closed_forms.expected_total_attention"].docstring.value
    parameters = doc.split("Returns\n-------")[0]
    assert '<autoref identifier="sia_theory.transforms.LogN" optional>' in parameters


def test_a_placeholder_that_nothing_expands_stops_the_build(tmp_path, monkeypatch):
    (tmp_path / "undecorated_fake.py").write_text(textwrap.dedent('''
        """A module."""

        def f(n_ctx):
            """Forgot the decorator.

            Parameters
            ----------
            {n_ctx}
            """
        '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError, match="undecorated_fake.f: .* nothing expands"):
        griffe.load("undecorated_fake", search_paths=[str(tmp_path)],
                    extensions=griffe.load_extensions(shared.SharedParameters))
