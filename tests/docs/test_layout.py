"""Every module of the engines has a test module named after it that imports it by its own name:
``sia_theory/<engine>/<module>.py`` → ``tests/<engine>/test_<module>.py`` (a private module
``_kernels.py`` → ``test_kernels.py``). Tests under other names may exercise a module too; this
is the one place a reader (or a reviewer) looks first.

``PENDING`` lists the modules still without one: it may only shrink (a module that gains its test
module must leave the list, checked below)."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENGINES = ("gaussian", "cas", "attention", "models", "training", "sweeps", "sphere", "export")
PENDING = frozenset({
    "training/trainer",
})

THROUGH_PACKAGE = frozenset({"attention/rope_scaling"})
"""Test modules that exist but import their module's names through the engine package
(``from sia_theory.attention import ...``); the file name still holds the rule."""


def _modules():
    for engine in ENGINES:
        for path in sorted((ROOT / "sia_theory" / engine).glob("*.py")):
            if path.stem != "__init__":
                yield engine, path.stem


MODULES = list(_modules())


def _test_path(engine, module):
    return ROOT / "tests" / engine / f"test_{module.lstrip('_')}.py"


def _imports_module(test_file: Path, engine: str, module: str) -> bool:
    """Whether the test file imports ``sia_theory.<engine>.<module>`` (or names from it)."""
    dotted = f"sia_theory.{engine}.{module}"
    for node in ast.walk(ast.parse(test_file.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module == dotted:
            return True
        if isinstance(node, ast.ImportFrom) and node.module == f"sia_theory.{engine}" and any(
                alias.name == module for alias in node.names):
            return True
        if isinstance(node, ast.Import) and any(alias.name == dotted for alias in node.names):
            return True
    return False


def test_every_engine_is_a_package_with_modules():
    for engine in ENGINES:
        assert (ROOT / "sia_theory" / engine / "__init__.py").is_file(), engine
    assert len(MODULES) > 60  # 71 modules when this test was written


@pytest.mark.parametrize(("engine", "module"), MODULES, ids=[f"{e}/{m}" for e, m in MODULES])
def test_module_has_its_test_module(engine, module):
    if f"{engine}/{module}" in PENDING:
        assert not _test_path(engine, module).exists(), (
            f"{engine}/{module} has its test module now: remove it from PENDING")
        pytest.skip("pending: no test module named after it yet")
    test_file = _test_path(engine, module)
    assert test_file.is_file(), f"sia_theory/{engine}/{module}.py has no {test_file.name}"
    if f"{engine}/{module}" in THROUGH_PACKAGE:
        return
    assert _imports_module(test_file, engine, module), (
        f"{test_file.relative_to(ROOT)} does not import sia_theory.{engine}.{module} by name")


def test_pending_names_real_modules():
    assert PENDING | THROUGH_PACKAGE <= {f"{e}/{m}" for e, m in MODULES}
    for name in THROUGH_PACKAGE:
        engine, module = name.split("/")
        assert not _imports_module(_test_path(engine, module), engine, module), (
            f"{name}'s test module imports it by name now: remove it from THROUGH_PACKAGE")
