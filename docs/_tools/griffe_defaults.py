"""Griffe extension: a parameter documented in a group (``beta, alpha : float`` in a numpy
``Parameters`` section, as the shared-parameter table writes several) gets its default from the
signature, as a parameter documented alone does. Griffe splits a group into one entry per name
but looks the default up for none of them, so the site showed ``alpha=0.0`` as *required*. It
runs last (mkdocs.yml), after the docstring text is final: it fills the parsed entries in place.
"""

from __future__ import annotations

import griffe


def fill_defaults(obj) -> int:
    """Set each documented parameter's default from ``obj``'s signature where the parsed entry
    has none; returns how many were filled."""
    if obj.docstring is None or not (obj.is_function or obj.is_class):
        return 0
    try:
        signature = {p.name: p for p in obj.parameters}
    except (AttributeError, TypeError, ValueError):  # a class griffe cannot give a signature
        return 0
    filled = 0
    for section in obj.docstring.parsed:
        if section.kind.value != "parameters":
            continue
        for entry in section.value:
            held = signature.get(entry.name)
            if entry.value is None and held is not None and held.default is not None:
                entry.value = held.default
                filled += 1
    return filled


class ParameterDefaults(griffe.Extension):
    """Fill the defaults of grouped parameter entries (module docstring)."""

    def on_object(self, *, obj, loader, **kwargs):  # noqa: ARG002
        fill_defaults(obj)
