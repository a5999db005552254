"""Every module of the engines has a test module named after it that imports it by its own name:
``sia_theory/<engine>/<module>.py`` → ``tests/<engine>/test_<module>.py`` (a private module
``_kernels.py`` → ``test_kernels.py``). Tests under other names may exercise a module too; this
is the one place a reader (or a reviewer) looks first. A new engine module fails here until its
test module exists; a new engine is added to ``ENGINES``."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENGINES = ("gaussian", "cas", "attention", "models", "training", "sweeps", "sphere", "export",
           "transforms", "zoo", "schemes")

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
    assert len(MODULES) > 60  # 73 modules when this test was written


@pytest.mark.parametrize(("engine", "module"), MODULES, ids=[f"{e}/{m}" for e, m in MODULES])
def test_module_has_its_test_module(engine, module):
    test_file = _test_path(engine, module)
    assert test_file.is_file(), f"sia_theory/{engine}/{module}.py has no {test_file.name}"
    if f"{engine}/{module}" in THROUGH_PACKAGE:
        return
    assert _imports_module(test_file, engine, module), (
        f"{test_file.relative_to(ROOT)} does not import sia_theory.{engine}.{module} by name")


def test_import_check_rejects_other_imports(tmp_path):
    """Negative controls: the package, a sibling module, or the name in a docstring only."""
    path = tmp_path / "test_x.py"
    for text in ('from sia_theory.gaussian import laplace\n',
                 'from sia_theory.gaussian.laplace_extra import f\n',
                 '"""uses sia_theory.gaussian.frullani"""\nimport sia_theory\n'):
        path.write_text(text)
        assert not _imports_module(path, "gaussian", "frullani")
    path.write_text("from sia_theory.gaussian import frullani as fr\n")
    assert _imports_module(path, "gaussian", "frullani")


def test_exceptions_name_real_modules():
    assert THROUGH_PACKAGE <= {f"{e}/{m}" for e, m in MODULES}
    for name in THROUGH_PACKAGE:
        engine, module = name.split("/")
        assert not _imports_module(_test_path(engine, module), engine, module), (
            f"{name}'s test module imports it by name now: remove it from THROUGH_PACKAGE")
