"""sia_theory._infra.docstrings: a parameter shared by sibling functions is described once.

A placeholder line expands to the table's entries (``optional`` from the signature, a narrowed
type, a function's own continuation line, a pair kept together, long text wrapped without
splitting a literal); a bad placeholder fails at import; and the consistency check reports
siblings that describe a shared parameter otherwise (the negative controls: two siblings whose
``n_ctx`` differ, one that leaves it out)."""

from __future__ import annotations

import inspect
import sys
import textwrap

import pytest

from sia_theory._infra.docstrings import (
    PLACEHOLDER,
    ParameterTable,
    parameter_entries,
    shared_parameters,
)

TABLE = ParameterTable("demo", [], {
    "transform": ("Transform", "The logit transform."),
    "n_ctx": ("int", "Keys the query sees, ``N >= 2``."),
    "t1, t2": ("int", "The range ``[t1, t2)``."),
    "h": ("int", "The head index."),
})


def test_a_placeholder_expands_to_the_entries_with_optional_from_the_signature():
    @shared_parameters(TABLE)
    def f(transform, t1, t2, n_ctx=None, h=None):
        """Sum.

        Parameters
        ----------
        {transform, t1, t2}
        {n_ctx} : float
            At most ``1e7`` here.
        {h}

        Returns
        -------
        float
        """

    assert inspect.cleandoc(f.__doc__) == textwrap.dedent("""\
        Sum.

        Parameters
        ----------
        transform : Transform
            The logit transform.
        t1, t2 : int
            The range ``[t1, t2)``.
        n_ctx : float, optional
            Keys the query sees, ``N >= 2``.
            At most ``1e7`` here.
        h : int, optional
            The head index.

        Returns
        -------
        float""")
    assert parameter_entries(f.__doc__)["n_ctx"] == (
        "float, optional", "Keys the query sees, ``N >= 2``. At most ``1e7`` here.")


def test_a_long_description_wraps_at_100_characters_and_keeps_literals_whole():
    words = " ".join(f"``a{i} < b{i}``" for i in range(30))
    table = ParameterTable("long", [], {"x": ("float", words)})
    lines = table.expand("    {x}").split("\n")
    assert lines[0] == "    x : float"
    assert len(lines) > 3 and all(len(line) <= 100 for line in lines)
    assert all(line.startswith("        ``a") and line.endswith("``") for line in lines[1:])
    assert " ".join(line.strip() for line in lines[1:]) == words


@pytest.mark.parametrize(("doc", "match"), [
    ("{seed}", "'seed', which the demo table does not have"),
    ("{t1}", "t1, t2 are one entry"),
    ("{t2, t1}", "t1, t2 are one entry"),
    ("{h}", "names h, not a parameter of the function"),
    ("{n_ctx} : int, optional", "must not say optional"),
])
def test_a_bad_placeholder_fails_at_import(doc, match):
    def f(n_ctx, t1, t2):
        pass

    f.__doc__ = f"Demo.\n\n    Parameters\n    ----------\n    {doc}\n"
    with pytest.raises(ValueError, match=match):
        shared_parameters(TABLE)(f)


@pytest.mark.parametrize(("entries", "match"), [
    ({"n_ctx": ("int", "A."), "n_ctx, t": ("int", "B.")}, "n_ctx appears twice"),
    ({"n_ctx": ("int, optional", "A.")}, "must not say optional"),
    ({"n_ctx": ("int", " ")}, "needs a type and a description"),
    ({"n-ctx": ("int", "A.")}, "named by identifiers"),
])
def test_a_bad_table_is_refused(entries, match):
    with pytest.raises(ValueError, match=match):
        ParameterTable("bad", [], entries)


def test_two_tables_merge_and_a_name_in_both_is_refused():
    seeds = ParameterTable("seeds", [], {"seed": ("int", "The seed.")})

    @shared_parameters(TABLE, seeds)
    def f(n_ctx, seed):
        """Demo.

        Parameters
        ----------
        {n_ctx, seed}
        """

    assert set(parameter_entries(f.__doc__)) == {"n_ctx", "seed"}
    with pytest.raises(ValueError, match="n_ctx appears twice"):
        shared_parameters(TABLE, ParameterTable("again", [], {"n_ctx": ("int", "Other.")}))


def _doc(n_ctx_text: str | None) -> str:
    entry = "" if n_ctx_text is None else f"    n_ctx : int\n        {n_ctx_text}\n"
    return f"Demo.\n\n    Parameters\n    ----------\n{entry}    k : int\n        Other.\n"


def test_the_check_reports_a_sibling_that_describes_n_ctx_otherwise():
    """Negative controls: another text, an empty one, none at all are reported, each naming
    the function and the parameter; the canonical text, also extended, is not."""

    def sibling(n_ctx, k):
        pass

    assert TABLE.disagreements(sibling, _doc("Keys the query sees, ``N >= 2``.")) == []
    assert TABLE.disagreements(
        sibling, _doc("Keys the query   sees, ``N >= 2``. At most 10 here.")) == []
    [other] = TABLE.disagreements(sibling, _doc("Keys in the context, ``>= 2``."))
    assert "sibling: n_ctx is described as 'Keys in the context, ``>= 2``.'" in other
    [empty] = TABLE.disagreements(sibling, _doc(""))
    assert "n_ctx is described as ''" in empty
    [missing] = TABLE.disagreements(sibling, _doc(None))
    assert "sibling: n_ctx is not described" in missing
    # a parameter the table does not have is free; the function must take the table's name
    assert TABLE.disagreements(lambda k: None, _doc("Anything.")) == []
    # a prefix of a word is no agreement
    assert TABLE.disagreements(sibling, _doc("Keys the query sees, ``N >= 2``.x"))


def _sibling(name: str, n_ctx_text: str) -> str:
    """The source of a function ``name(transform, n_ctx)`` that writes its entries out."""
    return textwrap.dedent(f'''
        def {name}(transform, n_ctx):
            """{name.title()}.

            Parameters
            ----------
            transform : Transform
                The logit transform.
            n_ctx : int
                {n_ctx_text}
            """
        ''')


def test_the_check_walks_a_family_of_modules(tmp_path, monkeypatch):
    """Two sibling modules: the decorated function and a hand-written copy agree, the third
    sibling's n_ctx disagrees and is the one message; a function without a table parameter, a
    private one and an import from elsewhere are not walked."""
    (tmp_path / "fam_a.py").write_text(textwrap.dedent('''
        from sia_theory._infra.docstrings import shared_parameters
        from fam_table import TABLE
        from math import floor

        __all__ = ["one", "plain", "floor"]

        @shared_parameters(TABLE)
        def one(transform, n_ctx):
            """One.

            Parameters
            ----------
            {transform, n_ctx}
            """

        def plain(x):
            """No shared parameter."""
        '''))
    written = "\n".join(_sibling(name, text) for name, text in (
        ("two", "Keys the query sees, ``N >= 2``."), ("three", "Keys in the context.")))
    (tmp_path / "fam_b.py").write_text(
        f'__all__ = ["two", "three"]\n{written}\ndef _hidden(n_ctx):\n    pass\n')
    (tmp_path / "fam_table.py").write_text(textwrap.dedent('''
        from sia_theory._infra.docstrings import ParameterTable

        TABLE = ParameterTable("fam", ["fam_a", "fam_b"], {
            "transform": ("Transform", "The logit transform."),
            "n_ctx": ("int", "Keys the query sees, ``N >= 2``."),
        })
        '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("fam_a", "fam_b", "fam_table"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    from fam_table import TABLE as family  # noqa: PLC0415

    assert [f.__name__ for f in family.siblings()] == ["one", "two", "three"]
    assert family.check() == [
        "three: n_ctx is described as 'Keys in the context.', not as the fam table's "
        "'Keys the query sees, ``N >= 2``.'"]


def test_parameter_entries_read_a_numpy_section():
    doc = """Summary.

        Parameters
        ----------
        a, b : int
            First line,
            second line.
        *args
            Rest.
        flag : bool, optional

        Returns
        -------
        int
            Not a parameter.
        """
    assert parameter_entries(doc) == {"a": ("int", "First line, second line."),
                                      "b": ("int", "First line, second line."),
                                      "args": ("", "Rest."), "flag": ("bool, optional", "")}
    assert parameter_entries("No sections.") == {} and parameter_entries(None) == {}


def test_the_placeholder_pattern_takes_only_a_line_of_names():
    assert PLACEHOLDER.search("    {n_ctx, t}\n")["names"] == "n_ctx, t"
    assert PLACEHOLDER.search("    {gamma, rho} : float")["kind"] == "float"
    for text in ("    {x} of math", "    x = {n}", r"    \{a\}", "    {1x}", "    { }"):
        assert PLACEHOLDER.search(text) is None, text
