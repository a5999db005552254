"""Griffe extension: a docstring written with shared-parameter placeholders (a ``{n_ctx, t}`` line
in its ``Parameters`` section, :mod:`sia_theory._infra.docstrings`) shows on the site as
``help()`` shows it.

Griffe reads docstrings from the source, where the placeholders stand; the decorator
``shared_parameters`` expands them when the module is imported. For every function or class
whose source docstring holds a placeholder, this extension imports the object and takes its
run-time ``__doc__`` (cleaned as griffe cleans a docstring): the site and ``help()`` show the
same text, from the one table. It must run before ``griffe_sphinx_roles.py`` (listed first in
mkdocs.yml), whose roles the expanded entries may hold.
"""

from __future__ import annotations

import importlib
import inspect

import griffe

from sia_theory._infra.docstrings import PLACEHOLDER


def runtime_object(obj):
    """The imported object that the griffe object ``obj`` describes."""
    module = obj
    while not module.is_module:
        module = module.parent
    value = importlib.import_module(module.path)
    for part in obj.path[len(module.path) + 1:].split("."):
        value = getattr(value, part)
    return value


def expanded(obj) -> str | None:
    """The docstring of ``obj`` with its placeholders expanded, or None when it has none.

    Raises ``ValueError`` when the run-time docstring still holds a placeholder (the function
    lacks the ``shared_parameters`` decorator): the strict build stops rather than show it."""
    if obj.docstring is None or not (obj.is_function or obj.is_class) or \
            not PLACEHOLDER.search(obj.docstring.value):
        return None
    doc = inspect.cleandoc(getattr(runtime_object(obj), "__doc__", None) or "")
    if not doc or PLACEHOLDER.search(doc):
        raise ValueError(f"{obj.path}: its docstring holds a shared-parameter placeholder that "
                         "nothing expands (decorate it with shared_parameters)")
    return doc


class SharedParameters(griffe.Extension):
    """Replace each docstring that holds placeholders by its expanded run-time text."""

    def on_object(self, *, obj, loader, **kwargs):  # noqa: ARG002
        doc = expanded(obj)
        if doc is not None:
            obj.docstring.value = doc
