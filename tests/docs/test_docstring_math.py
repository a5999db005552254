"""Formulas in the docstrings of the public names are mathematics, not code: they are written
with the Sphinx ``:math:`` role (or a ``.. math::`` block), which the griffe extension
``docs/_tools/griffe_sphinx_roles.py`` turns into the markup of ``pymdownx.arithmatex`` so that
KaTeX typesets them on the site. Code (parameter names, a call a user types) stays ``code``.

The names are those of ``tests/docs/test_docstring_sections.py``: ``sia_theory.__all__`` and the
engines' ``__all__``.

The heuristic for "an inline-code span that is an equation" (:func:`equation_spans`): a
double-backtick span that

* has a relation sign ``=``, ``≈`` or ``∝`` (not ``==``, ``<=``, ``>=``, ``!=``), and
* a mathematical symbol or function: a Greek letter, ``√``, a superscript digit (``²``), ``^``,
  ``·``, ``×``, ``∑``, ``≤``, ``≥``, ``∞``, or ``log``/``exp``/``ln``/``sqrt`` as a word, and
* is not a Python expression: no ``np.``/``math.``/``torch.`` prefix, no call of a public Python
  name of the package or a builtin (``ScaleInvariant(``, ``len(``), no keyword argument
  ``name=value`` written without spaces, and not in ``ALLOWED`` (code that looks like math).
"""

from __future__ import annotations

import builtins
import importlib
import inspect
import re
import textwrap

import griffe
import markdown
import pytest
from docs_tool_modules import load_tool

import sia_theory
from tests.docs.test_docstring_sections import ENGINE_NAMES

SPAN = re.compile(r"``(?P<body>(?:[^`]|`(?!`))+?)``")
RELATION = re.compile(r"(?<![=<>!])(=|≈|∝)(?!=)")
MATH_SYMBOL = re.compile(r"[α-ωΑ-Ω√²³⁴ⁿ^·×∑≤≥∞]|\b(?:log|exp|ln|sqrt)\b")
CODE_PREFIX = re.compile(r"\b(?:np|math|torch|jnp|jax|scipy)\.")
CALL = re.compile(r"(?<![\w.])(?P<name>[A-Za-z_]\w*)\(")
KEYWORD = re.compile(r"\b[A-Za-z_]\w*=[^=\s]")
# spans that pass the heuristic yet are code: a source's code quoted as written, a parameter
# named in a formula, an attribute's value
ALLOWED = {
    "get_mscale(s) = 0.1·ln s + 1", "get_mscale(s, m) = 0.1·m·ln s + 1",
    "attn_scales = log(floor((cache_position + 1) / floor_scale) + 1)·attn_scale + 1",
    "softmax_scale =\nqk_head_dim^(−1/2)·get_mscale(factor, mscale_all_dim)²",
    "L = Π_j members[j].multiplier(n)·S", "τ = tau", "log_n = log n",
    "transform.power_law =\n(α, β, τ)", "X = −ndtri_exp(log u + log Φ̄(x))",
}


def _public_python_names() -> set[str]:
    names = set(sia_theory.__all__) | set(dir(builtins))
    for where in ENGINE_NAMES:
        names.add(where.split(":")[1])
    return names


PYTHON_NAMES = _public_python_names()


def is_equation(span: str) -> bool:
    """Whether an inline-code span reads as an equation (the heuristic of the module)."""
    if span in ALLOWED or not RELATION.search(span) or not MATH_SYMBOL.search(span):
        return False
    if CODE_PREFIX.search(span) or KEYWORD.search(span):
        return False
    return not any(m["name"] in PYTHON_NAMES for m in CALL.finditer(span))


def equation_spans(doc: str) -> list[str]:
    """The inline-code spans of ``doc`` that are equations."""
    return [m["body"] for m in SPAN.finditer(doc or "") if is_equation(m["body"])]


def _docstrings() -> dict[str, str]:
    found = {}
    for name in sia_theory.__all__:
        found[f"sia_theory:{name}"] = getattr(sia_theory, name)
    for where in ENGINE_NAMES:
        module_name, name = where.split(":")
        found[where] = getattr(importlib.import_module(module_name), name)
    docs, seen = {}, set()
    for where, value in found.items():
        if inspect.ismodule(value) or id(value) in seen:
            continue
        seen.add(id(value))
        docs[where] = inspect.getdoc(value) or ""
    return docs


DOCSTRINGS = _docstrings()


def count() -> dict[str, list[str]]:
    """The equation spans per public name (only names that have some)."""
    return {w: spans for w, doc in DOCSTRINGS.items() if (spans := equation_spans(doc))}


def test_no_formula_of_a_public_docstring_is_inline_code():
    """The count over the public names is 0 (141 spans in 80 docstrings before the formulas
    were written as ``:math:``)."""
    found = count()
    assert not found, f"{sum(map(len, found.values()))} formulas as code: {found}"


def test_every_allowed_span_is_still_in_a_docstring():
    """The allow-list does not go stale: each entry is a span of some public docstring."""
    spans = {m["body"] for doc in DOCSTRINGS.values() for m in SPAN.finditer(doc)}
    assert ALLOWED <= spans, ALLOWED - spans


@pytest.mark.parametrize("span", ["a_t² = 1 + 2 log(1 + t/τ)", "β = γ log n", "L = s·log(n)·S",
                                  "E[H] ≈ c + b·(log t)^q", "β_c ∝ n^p", "w = 1/(1 + e^{−β})"])
def test_the_heuristic_finds_equations(span):
    assert is_equation(span) and equation_spans(f"The law ``{span}`` holds.") == [span]


@pytest.mark.parametrize("span", [
    "ScaleInvariant(tau=10, alpha=math.e**0.5)",  # a call of a public name
    "scale = np.log(n)·s",                           # numpy
    "tau=64",                                        # a keyword argument
    "n = 4096",                                      # no mathematical symbol
    "β == γ",                                        # a comparison
    "β ≥ α log α",                                   # no relation sign
    "len(x) = log n",                                # a builtin called
])
def test_the_heuristic_leaves_code_alone(span):
    assert not is_equation(span)


def _extension():
    return load_tool("griffe_sphinx_roles")


MODULE = textwrap.dedent('''
    def law(t, tau):
        r"""The law :math:`a_t^2 = 1 + 2\\log(1 + t/\\tau)`, see :func:`law`.

        .. math::

            \\beta = \\gamma \\log n

            L = s \\log(n)\\, S

        Parameters
        ----------
        t : int
            The distance, :math:`t \\ge 0`.
        tau : float
            ``tau = 10`` stays code.
        """
    ''')


def test_the_extension_writes_math_as_arithmatex_markup():
    """The griffe extension, on an object griffe read from source (as for mkdocstrings): inline math
    ``\\(...\\)``, one display ``$$...$$`` per equation of a block, roles still links, code
    still code; then Markdown with arithmatex (generic, as mkdocs.yml) wraps them in the
    ``arithmatex`` elements KaTeX typesets."""
    with griffe.temporary_visited_module(MODULE) as module:
        _extension().SphinxRoles().on_object(obj=module["law"], loader=None)
        text = module["law"].docstring.value
    assert "The law \\(a_t^2 = 1 + 2\\log(1 + t/\\tau)\\)" in text
    assert "\n$$\n\\beta = \\gamma \\log n\n$$\n" in text
    assert "\n$$\nL = s \\log(n)\\, S\n$$\n" in text
    assert "The distance, \\(t \\ge 0\\)." in text and "``tau = 10``" in text
    assert '<autoref identifier="module.law" optional><code>law</code></autoref>' in text
    assert ":math:" not in text and ".. math::" not in text
    html = markdown.markdown(text, extensions=["pymdownx.arithmatex"],
                             extension_configs={"pymdownx.arithmatex": {"generic": True}})
    assert html.count('<span class="arithmatex">') == 2
    assert html.count('<div class="arithmatex">') == 2
    assert '<div class="arithmatex">\\[\n\\beta = \\gamma \\log n\n\\]</div>' in html


def test_a_math_block_ends_at_the_first_line_not_indented_under_it():
    """The block is the directive's indented lines only; a one-line directive works too."""
    math = _extension().math
    assert math(".. math:: x = 1\nAfter.") == "\n$$\nx = 1\n$$\n\nAfter."
    out = math("Before.\n\n    .. math::\n\n        y = 2\n\n    After.\n")
    assert out == "Before.\n\n\n    $$\n    y = 2\n    $$\n\n    After.\n"


if __name__ == "__main__":
    found = count()
    for where, spans in found.items():
        print(where, spans)
    print(sum(map(len, found.values())), "equation spans in", len(found), "of", len(DOCSTRINGS),
          "docstrings")
