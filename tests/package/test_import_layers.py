"""The package's top-level units (each subpackage and each root module) import each other without
a loop, read from the source with ``ast`` (every ``import`` statement, those inside functions
included, so a function-level import cannot hide a loop; an ``importlib.import_module`` of a
string is not read: the package uses it only for its lazy re-exports and the deprecated paths).

The only modules left out are the deprecated ``python -m`` entry points of 0.3
(``studies/command.py``, ``studies/train_command.py``, removed in 0.5): they run the command
line from below it by design, and a test here checks that nothing imports them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "sia_theory"
DEPRECATED_ENTRY_POINTS = {"sia_theory.studies.command", "sia_theory.studies.train_command"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Absolute names of every module ``path`` imports (relative imports resolved)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{a.name}" for a in node.names)  # `from pkg import module`
    return {m for m in found if m == "sia_theory" or m.startswith("sia_theory.")}


def _unit(module: str) -> str | None:
    """The top-level unit of a module name: ``sia_theory.X`` (subpackage or root module), or the
    root package itself; ``None`` for a name that is not a module of the tree."""
    parts = module.split(".")
    if len(parts) == 1:
        return "sia_theory"
    head = PACKAGE / parts[1]
    if head.is_dir() or head.with_suffix(".py").is_file():
        return f"sia_theory.{parts[1]}"
    return None  # a name imported from the root package (`from sia_theory import X`)


def _graph(exempt=DEPRECATED_ENTRY_POINTS) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = _module_name(path)
        if name in exempt:
            continue
        src = _unit(name)
        edges = graph.setdefault(src, set())
        for target in _imports(path):
            dst = _unit(target)
            if dst is not None and dst != src:
                edges.add(dst)
    return graph


def _loops(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one unit (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_loop_between_top_level_units():
    loops = _loops(_graph())
    assert not loops, f"import loops between top-level units: {loops}"


def test_the_loop_finder_sees_a_loop_and_a_lazy_import():
    """Negative controls: a three-unit loop is found, and an import inside a function counts."""
    assert _loops({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    lazy = PACKAGE / "schemes" / "targets.py"  # imports the zoo inside a function
    assert "sia_theory.zoo" in {_unit(m) for m in _imports(lazy)}


@pytest.mark.parametrize("low, high", [
    ("sia_theory.transforms", "sia_theory.zoo"),
    ("sia_theory.zoo", "sia_theory.attention"),
    ("sia_theory.attention", "sia_theory.schemes"),
    ("sia_theory.transforms", "sia_theory.export"),
])
def test_the_floors_of_the_families(low, high):
    """The order the layout page draws: the transforms under the zoo, the zoo under attention,
    attention under the schemes; the coefficient tables beside the transforms, under the
    exports and the trainer."""
    graph = _graph()
    assert low in graph[high] or _reaches(graph, high, low)
    assert not _reaches(graph, low, high), f"{low} reaches {high}"


def _reaches(graph, src, dst) -> bool:
    seen, todo = set(), [src]
    while todo:
        v = todo.pop()
        if v == dst:
            return True
        if v not in seen:
            seen.add(v)
            todo.extend(graph.get(v, ()))
    return False


def test_training_does_not_depend_on_export():
    assert not _reaches(_graph(), "sia_theory.training", "sia_theory.export")


def test_nothing_imports_the_deprecated_entry_points():
    for path in PACKAGE.rglob("*.py"):
        if _module_name(path) in DEPRECATED_ENTRY_POINTS:
            continue
        assert not _imports(path) & DEPRECATED_ENTRY_POINTS, path
