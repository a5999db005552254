"""The API reference: one generated page per module of
:func:`public_api.reference_modules` (the front doors and the modules they point to).

A module's page renders (mkdocstrings) the public names it documents
(:func:`public_api.documented_at`: the names it defines, and those it exports from a module
without a page); names documented on another page are listed with a link there, so every
object is documented once and every link has one target. ``sia_theory`` itself and the
packages that only re-export get a table of their exports.
"""

from __future__ import annotations

import importlib
import inspect

import public_api as api

TITLES = {
    "sia_theory": "sia_theory (top level)",
}


def page_path(module_name: str) -> str:
    return f"api/{module_name}.md"


def _kind(value) -> str:
    if inspect.ismodule(value):
        return "module"
    if inspect.isclass(value):
        return "class"
    if api.is_code(value):
        return "function"
    return "data"


def module_page(module_name: str) -> str:
    module = importlib.import_module(module_name)
    names = [n for n in api.public_names(module_name) if hasattr(module, n)]
    pages = set(api.reference_modules())
    here, hosted, elsewhere, submodules = [], [], [], []
    for name in names:
        value = getattr(module, name)
        if inspect.ismodule(value):
            submodules.append(value.__name__)
            continue
        page, identifier = api.documented_at(module_name, name)
        if identifier == f"{module_name}.{name}":
            here.append(name)
        elif page == module_name and identifier.rpartition(".")[0] not in pages:
            hosted.append(identifier)  # exported lazily from a module without a page
        else:  # on another page, or under another name here (an alias)
            elsewhere.append((name, identifier))
    lines = [f"# `{TITLES.get(module_name, module_name)}`", ""]
    members = ", ".join(f'"{n}"' for n in here)
    lines += [f"::: {module_name}",
              "    options:",
              "      show_root_heading: false",
              "      show_root_toc_entry: false",
              f"      members: [{members}]" if here else "      members: false",
              ""]
    for identifier in hosted:
        lines += [f"::: {identifier}",
                  "    options:",
                  "      show_root_full_path: false",
                  ""]
    if elsewhere:
        lines += ["## Exported here, documented with their module", "",
                  "| name | kind | summary |", "|---|---|---|"]
        for name, identifier in elsewhere:
            value = getattr(module, name)
            summary = api.summary(module_name, name).replace("|", "\\|")
            home_name = identifier.rpartition(".")[2]
            shown = name if name == home_name else f"{name}` (`{home_name}"
            lines.append(f"| [`{shown}`][{identifier}] | {_kind(value)} | {summary} |")
        lines.append("")
    children = [m for m in pages
                if m.rpartition(".")[0] == module_name] if hasattr(module, "__path__") else []
    children = sorted(set(children) | {m for m in submodules if m in pages})
    if children:
        lines += ["## Modules", "", "| module | summary |", "|---|---|"]
        for child in children:
            doc = (importlib.import_module(child).__doc__ or "").strip()
            first = api.inline_math(" ".join(doc.split("\n\n")[0].split())).replace("|", "\\|")
            lines.append(f"| [`{child}`]({child}.md) | {first} |")
        lines.append("")
    return "\n".join(lines)


def index_page(modules: list[str]) -> str:
    lines = ["# API reference", "",
             "Generated from the docstrings (numpy style) when the site is built: one page per "
             "module you import from. That is `sia_theory`, the modules and packages directly "
             "inside it (`sia_theory.zoo`, `sia_theory.toolkit`, ...), and the modules their "
             "docstrings point to; the other modules are the implementation (importable, "
             "documented in their source, without a page here). Public names are a module's "
             "`__all__`, or the names it defines not starting with `_`; "
             "`tests/docs/test_docstrings.py` fails when one of them has no docstring. Each "
             "object is documented once: on the page of the module that defines it, or, where "
             "that module has no page, on the page nearest it that exports it; packages that "
             "re-export list their exports with links.", "",
             "Start with [`sia_theory`](sia_theory.md) (everything `from sia_theory import X` "
             "offers), [`sia_theory.transforms`](sia_theory.transforms.md) (the logit "
             "transforms every engine takes) and "
             "[`sia_theory.analysis`](sia_theory.analysis.md) (`analyze`).", "",
             "| module | summary |", "|---|---|"]
    for module_name in modules:
        doc = (importlib.import_module(module_name).__doc__ or "").strip()
        first = api.inline_math(" ".join(doc.split("\n\n")[0].split())).replace("|", "\\|")
        lines.append(f"| [`{module_name}`]({module_name}.md) | {first} |")
    return "\n".join(lines) + "\n"


def nav_entries(modules: list[str]) -> list:
    """The nav subtree: packages as sections holding their modules."""
    def subtree(prefix):
        entries = []
        children = [m for m in modules if m.rpartition(".")[0] == prefix]
        for child in children:
            grand = [m for m in modules if m.rpartition(".")[0] == child]
            title = child.rpartition(".")[2]
            if grand:
                entries.append({title: [page_path(child), *subtree(child)]})
            else:
                entries.append({title: page_path(child)})
        return entries

    return ["api/index.md", {"sia_theory": page_path("sia_theory")}, *subtree("sia_theory")]
