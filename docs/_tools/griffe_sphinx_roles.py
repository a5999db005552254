"""Griffe extension: the Sphinx roles the docstrings use (``:func:`~sia_theory.x.f```,
``:class:`.estimate.Estimate```, ``:mod:`.report```, ``:data:``, ``:meth:``) become links of
the site (mkdocs-autorefs, optional: a target that is not documented stays plain code).

Targets are resolved as Sphinx does for this package: an absolute ``sia_theory....`` path as
written; a leading ``.`` relative to the package of the module holding the docstring; a bare
name first in the object's own module (and class), then as written. ``~`` shows only the last
component.

The ``:math:`` role and the ``.. math::`` directive become the markup of ``pymdownx.arithmatex``
(generic mode), which KaTeX typesets in the browser: ``:math:`a_t^2 = 1 + 2\\log n``` becomes
inline math ``\\(a_t^2 = 1 + 2\\log n\\)``, a ``.. math::`` block (its indented lines) display
math ``$$ ... $$`` on lines of their own, one per equation (a blank line separates them).
"""

from __future__ import annotations

import html
import re
import textwrap

import griffe

ROLE = re.compile(r":(?:class|func|mod|data|meth|attr|exc|obj):`(?P<body>[^`]+)`")
MATH_ROLE = re.compile(r":math:`(?P<body>[^`]+)`")
# ``.. math::`` then its indented body (blank lines inside allowed), up to the first line that
# is indented no deeper than the directive
MATH_BLOCK = re.compile(r"^(?P<indent>[ \t]*)\.\. math::[ \t]*(?P<first>\S.*)?\n"
                        r"(?P<body>(?:(?:(?P=indent)[ \t]+\S.*)?[ \t]*\n|(?P=indent)[ \t]+\S.*$)*)",
                        re.MULTILINE)


def _module_of(obj):
    while obj is not None and not obj.is_module:
        obj = obj.parent
    return obj


def _resolve(target: str, obj) -> str:
    target = target.strip()
    if target.endswith("()"):
        target = target[:-2]
    module = _module_of(obj)
    if target.startswith("."):
        package = module.path if module.is_package else module.path.rpartition(".")[0]
        dots = len(target) - len(target.lstrip("."))
        parts = package.split(".")
        base = ".".join(parts[: len(parts) - (dots - 1)]) if dots > 1 else package
        return f"{base}.{target.lstrip('.')}"
    if target.startswith("sia_theory"):
        return target
    head = target.split(".")[0]
    scope = obj if obj.is_class else obj.parent
    while scope is not None:
        try:
            if head in scope.members:
                return f"{scope.path}.{target}"
        except Exception:  # an alias that does not resolve
            pass
        scope = scope.parent
    return target


def math(text: str) -> str:
    """``text`` with the ``:math:`` roles and ``.. math::`` blocks in arithmatex markup."""

    def block(match):  # one display per equation (Sphinx: equations split by blank lines)
        indent = match["indent"]
        body = textwrap.dedent(f"{match['first'] or ''}\n{match['body']}").strip()
        return "".join(f"\n{indent}$$\n{textwrap.indent(eq.strip(), indent)}\n{indent}$$\n"
                       for eq in re.split(r"\n[ \t]*\n", body)) + "\n"

    text = MATH_BLOCK.sub(block, text)
    return MATH_ROLE.sub(lambda match: f"\\({match['body']}\\)", text)


def rewrite(text: str, obj) -> str:
    """``text`` with every Sphinx role replaced by an optional autorefs link."""

    def replace(match):
        body = match["body"]
        title = None
        if "<" in body and body.endswith(">"):
            title, _, target = body[:-1].partition("<")
            title, target = title.strip(), target
        else:
            target = body
        short = target.startswith("~")
        target = target.lstrip("~")
        identifier = _resolve(target, obj)
        if title is None:
            title = target.split(".")[-1] if short else target.lstrip(".")
        return (f'<autoref identifier="{html.escape(identifier)}" optional>'
                f"<code>{html.escape(title)}</code></autoref>")

    return ROLE.sub(replace, math(text))


class SphinxRoles(griffe.Extension):
    """Rewrite the roles of every docstring once the tree is built."""

    def on_object(self, *, obj, loader, **kwargs):  # noqa: ARG002
        if obj.docstring is not None and ":" in obj.docstring.value:
            obj.docstring.value = rewrite(obj.docstring.value, obj)
