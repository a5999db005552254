"""What counts as the public API of ``sia_theory``, and where each public name is documented.

Shared by the API reference generator (``hooks.py``, ``api_pages.py``) and the tests
(``tests/docs/test_docstrings.py``, ``tests/docs/test_api_reference.py``), so the tests hold
exactly what the site documents. Standard library only.

Public modules (:func:`public_modules`): every module under ``sia_theory`` with no path
component starting with ``_``. Every public name of every public module needs a docstring.

Modules with a page in the API reference (:func:`reference_modules`), one rule: **the front
doors, and the modules a front door's docstring names with a** ``:mod:`` **role**. The front
doors are ``sia_theory`` and the public modules and packages directly inside it
(``sia_theory.zoo``, ``sia_theory.toolkit``, ...). A package's docstring is where its author
points the reader to the modules to import from (``:mod:`.simplex```); a module it mentions as
plain code (````simplex_weights````) is an implementation module: importable, documented in its
source, without a page. A name that a page exports but whose defining module has no page (or
is private) is documented once, on the page nearest its definition that exports it
(:func:`documented_at`); so every object on the site has one place, and every link one target.
A role naming a module without a page stays plain code on the site (the roles are optional
links, ``griffe_sphinx_roles.py``).

Public names of a module: its ``__all__`` where it defines one, else the names not starting with
``_`` that the module itself defines (functions, classes, top-level assignments). A function or
class is documented by the docstring written in its source (not the one ``dataclasses`` invents
from the signature); data (a constant, a table) by the string literal that follows its
assignment (an attribute docstring, which is what mkdocstrings shows); an object carrying its
own ``__doc__`` (a study) by that.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import pkgutil
import re
import sys
from functools import cache
from pathlib import Path

PACKAGE = "sia_theory"


def is_private(module_name: str) -> bool:
    return any(part.startswith("_") for part in module_name.split(".")[1:])


def public_modules() -> list[str]:
    """Every public module of the package, sorted (a new subpackage, such as
    ``sia_theory.training``, is found without being listed anywhere)."""
    package = importlib.import_module(PACKAGE)
    root = Path(package.__file__).resolve().parent
    names = [PACKAGE]
    for info in pkgutil.walk_packages([str(root)], prefix=f"{PACKAGE}."):
        if not is_private(info.name):
            names.append(info.name)
    return sorted(names)


def is_front_door(module_name: str) -> bool:
    """``sia_theory`` itself, or a public module or package directly inside it."""
    return module_name == PACKAGE or (module_name.count(".") == 1 and not is_private(module_name)
                                      and module_name.startswith(PACKAGE + "."))


MOD_ROLE = re.compile(r":mod:`~?(?P<target>[^`<>]+?)(?:\s*<~?(?P<link>[^`>]+)>)?`")


def named_modules(module_name: str) -> list[str]:
    """The modules the docstring of ``module_name`` names with a ``:mod:`` role, resolved as
    Sphinx (and the site's ``griffe_sphinx_roles.py``) does: ``sia_theory....`` as written, a
    leading ``.`` relative to the package holding the docstring (``..`` one level up). Sorted,
    without repeats; targets that are not modules are kept (the caller filters)."""
    module = sys.modules.get(module_name) or importlib.import_module(module_name)
    package = module_name if hasattr(module, "__path__") else module_name.rpartition(".")[0]
    found = set()
    for match in MOD_ROLE.finditer(module.__doc__ or ""):
        target = (match["link"] or match["target"]).strip()
        if target.startswith("."):
            dots = len(target) - len(target.lstrip("."))
            parts = package.split(".")
            base = ".".join(parts[: len(parts) - (dots - 1)])
            target = f"{base}.{target.lstrip('.')}"
        found.add(target)
    return sorted(found)


def reference_modules() -> tuple[str, ...]:
    """The modules with a page in the API reference, sorted: the front doors and every public
    module a front door's docstring names with ``:mod:`` (module docstring above)."""
    return _reference_modules(PACKAGE)


@cache
def _reference_modules(package: str) -> tuple[str, ...]:  # cached per package (tests swap it)
    modules = public_modules()
    doors = [m for m in modules if is_front_door(m)]
    named = {target for door in doors for target in named_modules(door)}
    return tuple(sorted(set(doors) | (named & set(modules))))


@cache
def _tree(module_name: str) -> ast.Module | None:
    module = sys.modules.get(module_name) or importlib.import_module(module_name)
    path = getattr(module, "__file__", None)
    return ast.parse(Path(path).read_text()) if path and path.endswith(".py") else None


def _assigned_names(node: ast.stmt) -> set[str]:
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.AnnAssign):
        targets = [node.target]
    else:
        return set()
    return {sub.id for target in targets for sub in ast.walk(target) if isinstance(sub, ast.Name)}


def attribute_docstring(module_name: str, name: str) -> str | None:
    """The string literal after the top-level assignment of ``name`` in ``module_name``: ``""``
    when it is assigned without one, ``None`` when the module does not assign it."""
    tree = _tree(module_name)
    if tree is None:
        return None
    found = None
    for i, node in enumerate(tree.body):
        if name in _assigned_names(node):
            nxt = tree.body[i + 1] if i + 1 < len(tree.body) else None
            doc = nxt.value.value if (isinstance(nxt, ast.Expr)
                                      and isinstance(nxt.value, ast.Constant)
                                      and isinstance(nxt.value.value, str)) else ""
            found = doc if found is None else (found or doc)
    return found


def import_source(module_name: str, name: str) -> tuple[str, str] | None:
    """The module ``module_name`` takes ``name`` from and the name it has there
    (``from X import name [as alias]``, or the lazy ``_EXPORTS`` table of the top-level
    package), or None."""
    module = sys.modules[module_name]
    exports = getattr(module, "_EXPORTS", None)
    if isinstance(exports, dict) and name in exports:
        return importlib.util.resolve_name(exports[name], module_name), name
    tree = _tree(module_name)
    if tree is None:
        return None
    package = module_name if hasattr(module, "__path__") else module_name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    base = "." * node.level + (node.module or "")
                    source = importlib.util.resolve_name(base, package) if node.level else base
                    return source, alias.name
    return None


def data_home(module_name: str, name: str, value, seen: tuple = ()) -> tuple[str, str] | None:
    """The module that assigns the data seen as ``module_name.name``, and its name there
    (following imports)."""
    if attribute_docstring(module_name, name) is not None:
        return module_name, name
    found = import_source(module_name, name)
    if found and found[0] not in seen and found[0].startswith(PACKAGE):
        importlib.import_module(found[0])
        return data_home(found[0], found[1], value, (*seen, module_name))
    for other in sorted(m for m in sys.modules if m.startswith(PACKAGE)):  # lazy __getattr__
        if getattr(sys.modules[other], name, None) is value and \
                attribute_docstring(other, name) is not None:
            return other, name
    return None


def is_code(value) -> bool:
    """A function, class, or an object standing for one (a numba dispatcher, a study)."""
    return inspect.isclass(value) or inspect.isroutine(value) or hasattr(value, "py_func") or (
        callable(value) and hasattr(value, "__wrapped__") and hasattr(value, "__module__"))


def _definition(obj):
    """The ``def``/``class`` node of ``obj`` in its module's source, or None."""
    obj = getattr(obj, "__wrapped__", obj)
    obj = getattr(obj, "py_func", obj)
    try:
        tree = _tree(obj.__module__)
        parts = obj.__qualname__.split(".")
    except (AttributeError, ImportError, TypeError, KeyError):
        return None
    if tree is None:
        return None
    scope, node = tree.body, None
    for part in parts:
        node = next((n for n in scope if isinstance(
            n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and n.name == part), None)
        if node is None:
            return None
        scope = node.body
    return node


def class_attribute_docstring(cls, name: str) -> str:
    """The string literal after ``name = ...`` in the body of ``cls`` (``""`` if none)."""
    node = _definition(cls)
    if node is None:
        return ""
    for i, stmt in enumerate(node.body):
        if name in _assigned_names(stmt) and i + 1 < len(node.body):
            nxt = node.body[i + 1]
            if isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant) and \
                    isinstance(nxt.value.value, str):
                return nxt.value.value
    return ""


def source_docstring(obj) -> str | None:
    """The docstring written in the source for a function or class, or None when the
    definition cannot be found there."""
    node = _definition(obj)
    return None if node is None else ast.get_docstring(node)


def docstring_of(module_name: str, name: str) -> str:
    """The documentation of ``module_name.name`` as the site shows it (``""`` if none)."""
    module = sys.modules.get(module_name) or importlib.import_module(module_name)
    value = getattr(module, name)
    if inspect.ismodule(value):
        return value.__doc__ or ""
    if is_code(value):
        doc = source_docstring(value)
        if doc is None and not inspect.isclass(value):
            doc = getattr(value, "__doc__", None)
        return doc or ""
    home = data_home(module_name, name, value)
    return (attribute_docstring(*home) or "") if home else ""


def public_names(module_name: str) -> list[str]:
    """The public names of a module (module docstring above)."""
    module = importlib.import_module(module_name)
    if hasattr(module, "__all__"):
        return list(module.__all__)
    names = []
    for name, value in vars(module).items():
        if name.startswith("_") or inspect.ismodule(value):
            continue
        if is_code(value):
            here = getattr(value, "__module__", None) == module_name or \
                attribute_docstring(module_name, name) is not None
        else:
            here = attribute_docstring(module_name, name) is not None
        if here:
            names.append(name)
    return names


def defined_in(module_name: str, name: str) -> tuple[str, str] | None:
    """The module that defines ``module_name.name`` and its name there, following re-exports
    (private modules included; ``(module, "")`` for a module), or None when it cannot be
    told."""
    module = sys.modules.get(module_name) or importlib.import_module(module_name)
    value = getattr(module, name)
    if inspect.ismodule(value):
        return value.__name__, ""
    if is_code(value):
        where = getattr(value, "__module__", None)
        own = getattr(value, "__qualname__", name)
        if where and getattr(sys.modules.get(where), own.split(".")[0], None) is not None:
            return where, own
        return None
    return data_home(module_name, name, value)


def home_of(module_name: str, name: str) -> tuple[str, str]:
    """The module that defines ``module_name.name`` and its name there, or
    ``(module_name, name)`` itself when that module is private or not the package's."""
    home = defined_in(module_name, name)
    if not home or is_private(home[0]) or not home[0].startswith(PACKAGE):
        return module_name, name
    return home


def _module_level(body):
    """The statements run when a module loads: its body, into ``if``/``try``/``with`` blocks,
    not into functions or classes."""
    for node in body:
        yield node
        if isinstance(node, ast.If | ast.Try | ast.With):
            for block in (node.body, getattr(node, "orelse", []),
                          getattr(node, "finalbody", []),
                          *(h.body for h in getattr(node, "handlers", []))):
                yield from _module_level(block)


def statically_bound(module_name: str, name: str) -> bool:
    """Whether the source of ``module_name`` binds ``name`` at module level (a ``def``, a
    ``class``, an assignment or an import), so that griffe, which reads sources, sees it there;
    a name served by a module ``__getattr__`` (the lazy exports) is not."""
    tree = _tree(module_name)
    for node in _module_level(tree.body if tree else []):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound = {node.name}
        elif isinstance(node, ast.ImportFrom | ast.Import):
            bound = {alias.asname or alias.name.split(".")[0] for alias in node.names}
        else:
            bound = _assigned_names(node)
        if name in bound:
            return True
    return False


def _identity(module_name: str, name: str):
    """What makes two public names the same object: a function, class or module by identity;
    data by where it is assigned (equal values assigned in different places stay different),
    else the name itself."""
    value = getattr(sys.modules[module_name], name)
    if is_code(value) or inspect.ismodule(value):
        return "object", id(value)
    return data_home(module_name, name, value) or (module_name, name)


def _page_exports() -> dict:
    """Identity (:func:`_identity`) -> the ``(page module, name)`` pairs exporting it."""
    return _page_exports_of(PACKAGE)


@cache
def _page_exports_of(package: str) -> dict:
    exports: dict = {}
    for page in reference_modules():
        module = importlib.import_module(page)
        for name in public_names(page):
            if hasattr(module, name) and not inspect.ismodule(getattr(module, name)):
                exports.setdefault(_identity(page, name), []).append((page, name))
    return exports


def _shared_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a.split("."), b.split(".")):
        if x != y:
            break
        n += 1
    return n


def documented_at(module_name: str, name: str) -> tuple[str, str]:
    """Where the API reference documents ``module_name.name``: ``(page module, identifier)``.

    On the page of the module that defines it when that module has a page and lists the name;
    otherwise on the page nearest the definition (the longest shared dotted prefix; then the
    shallower, then the alphabetically first) among the pages that export it. The identifier
    is the autorefs anchor: ``page.name`` where the page's source binds the name (rendered as
    a member of the page's module), else the definition's own path (rendered by that path)."""
    home = defined_in(module_name, name)
    pages = set(reference_modules())
    if home and home[0] in pages and home[1] in public_names(home[0]):
        return home[0], f"{home[0]}.{home[1]}"
    exporters = _page_exports().get(_identity(module_name, name)) or [(module_name, name)]
    target = home[0] if home else module_name
    page, page_name = min(exporters, key=lambda pair: (-_shared_prefix(pair[0], target),
                                                      pair[0].count("."), pair))
    if statically_bound(page, page_name) or not home:
        return page, f"{page}.{page_name}"
    return page, f"{home[0]}.{home[1]}"


def class_members(cls) -> list[str]:
    """Public methods and properties defined in ``cls`` itself (not by ``dataclasses``, not
    inherited)."""
    members = []
    for name, value in vars(cls).items():
        if name.startswith("_"):
            continue
        func = value.fget if isinstance(value, property) else \
            value.__func__ if isinstance(value, classmethod | staticmethod) else value
        if inspect.isfunction(func) and func.__qualname__.startswith(cls.__qualname__ + "."):
            members.append(name)
    return members


def missing_docstrings(modules=None) -> list[str]:
    """Every public module, name and class member without a docstring."""
    missing, seen = [], set()
    for module_name in modules or public_modules():
        module = importlib.import_module(module_name)
        if not (module.__doc__ or "").strip():
            missing.append(f"{module_name} (module docstring)")
        for name in public_names(module_name):
            if not hasattr(module, name):
                missing.append(f"{module_name}.{name} (in __all__ but not defined)")
                continue
            if not docstring_of(module_name, name).strip():
                missing.append(f"{module_name}.{name}")
            value = getattr(module, name)
            if inspect.isclass(value) and value.__module__.startswith(PACKAGE) \
                    and value not in seen:
                seen.add(value)
                for member in class_members(value):
                    raw = vars(value)[member]
                    doc = (raw.__doc__ or class_attribute_docstring(value, member)) \
                        if isinstance(raw, property) else source_docstring(getattr(value, member))
                    if not (doc or "").strip():
                        missing.append(f"{value.__module__}.{value.__qualname__}.{member}")
    return sorted(set(missing))


def inline_math(text: str) -> str:
    """``text`` with each ``:math:`` role as arithmatex inline math ``\\(...\\)`` (as the site's
    griffe extension writes it), for summaries written into pages outside mkdocstrings."""
    return re.sub(r":math:`([^`]+)`", r"\\(\1\\)", text)


def summary(module_name: str, name: str) -> str:
    """The first sentence of the documentation of ``module_name.name`` (one line)."""
    try:
        doc = docstring_of(module_name, name)
    except Exception:  # noqa: BLE001 - a summary is decoration, never a build failure
        return ""
    first = " ".join(doc.strip().split("\n\n")[0].split())
    first = inline_math(first)
    first = re.sub(r":[a-z]+:`~?([^`]+)`",  # Sphinx roles: the target as code, ~ keeps its tail
                   lambda m: "`" + (m[1].split(".")[-1] if m[0].count("~") else m[1]) + "`",
                   first)
    for match in re.finditer(r"\.\s+(?=[A-Z`(])", first):
        word = re.search(r"([\w.]+)$", first[:match.start()])
        if word and word[1].lower() in ABBREVIATIONS:
            continue
        return first[:match.start() + 1]
    return first if len(first) <= 240 else first[:239] + "…"


ABBREVIATIONS = {"al", "fig", "figs", "eq", "eqs", "app", "thm", "cf", "vs", "e.g", "i.e", "sec",
                 "def", "defs", "ref", "no", "approx"}


# --- numpy-style sections ---------------------------------------------------------------------

_SECTION = re.compile(r"^[ \t]*([A-Z][A-Za-z ]+)[ \t]*\n[ \t]*(-{3,})[ \t]*$", re.MULTILINE)


def sections(doc: str) -> set[str]:
    """The numpy-style section titles of ``doc`` (a title line underlined by dashes, e.g.
    ``Parameters`` / ``----------``)."""
    return {m[1].strip() for m in _SECTION.finditer(doc or "")}


def is_namedtuple(value) -> bool:
    """Whether ``value`` is a ``typing.NamedTuple`` class (a tuple subclass with ``_fields``)."""
    return inspect.isclass(value) and issubclass(value, tuple) and hasattr(value, "_fields")


def takes_arguments(value) -> bool:
    """Whether a function or class is called with at least one argument (``self`` and ``cls``
    not counted); False when no signature can be read."""
    try:
        signature = inspect.signature(value)
    except (TypeError, ValueError):
        return False
    return any(name not in ("self", "cls") for name in signature.parameters)


def raises_directly(value) -> bool:
    """Whether the source of a function (of a class: its ``__init__``/``__post_init__``) holds a
    ``raise`` or a call of one of the validation helpers (``check_*``, ``one_of``): it rejects
    some input itself. What callees raise is not seen."""
    nodes = [_definition(value)]
    if inspect.isclass(value):
        nodes = [n for n in (nodes[0].body if nodes[0] else []) if isinstance(
            n, ast.FunctionDef) and n.name in ("__init__", "__post_init__")]
    for node in filter(None, nodes):
        for sub in ast.walk(node):
            if isinstance(sub, ast.Raise):
                return True
            if isinstance(sub, ast.Call):
                func = sub.func
                name = func.id if isinstance(func, ast.Name) else \
                    func.attr if isinstance(func, ast.Attribute) else ""
                if name.startswith("check_") or name == "one_of":
                    return True
    return False


def numpy_sections(module_name: str, name: str) -> dict:
    """What the docstring of the function or class ``module_name.name`` has and needs.

    Returns a dict: ``sections`` (the set of numpy section titles present), ``arguments`` (it
    takes at least one), ``function`` (a function rather than a class), ``raises`` (see
    :func:`raises_directly`) and ``missing``: the sections scipy's standard asks of it and the
    docstring lacks (``Parameters`` where it takes arguments, ``Returns`` for a function,
    ``Raises`` where it raises, ``Examples``)."""
    module = sys.modules.get(module_name) or importlib.import_module(module_name)
    value = getattr(module, name)
    found = sections(docstring_of(module_name, name))
    arguments, function = takes_arguments(value), not inspect.isclass(value)
    raises = raises_directly(value)
    # a NamedTuple's fields are its arguments: numpy documents them as Attributes (griffe reads
    # no signature from a NamedTuple, so a Parameters section would fail the strict docs build)
    fields = "Attributes" if is_namedtuple(value) else "Parameters"
    wanted = ([fields] if arguments else []) + (["Returns"] if function else []) + \
        (["Raises"] if raises else []) + ["Examples"]
    return {"sections": found, "arguments": arguments, "function": function, "raises": raises,
            "missing": [s for s in wanted if s not in found]}


def parameters_count(modules=None) -> tuple[int, int]:
    """``(with, total)``: of the distinct public functions and classes that take arguments
    (every public name of ``modules``, default all public modules; a re-export counted once),
    how many have a ``Parameters`` section."""
    seen, have = set(), 0
    for module_name in modules or public_modules():
        module = importlib.import_module(module_name)
        for name in public_names(module_name):
            value = getattr(module, name, None)
            if value is None or inspect.ismodule(value) or not is_code(value) or \
                    not takes_arguments(value) or id(value) in seen:
                continue
            seen.add(id(value))
            have += ("Attributes" if is_namedtuple(value) else "Parameters") in sections(
                docstring_of(module_name, name))
    return have, len(seen)
