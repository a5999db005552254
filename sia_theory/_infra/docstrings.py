"""Parameters that sibling functions share, described once.

A :class:`ParameterTable` holds the numpy entry of each parameter a family of functions shares
(the needle functions' ``transform``, ``n_ctx``, ``t``, ``head``): its type and one canonical
description. A docstring names entries by a placeholder line in its ``Parameters`` section,
the names in braces::

    Parameters
    ----------
    {transform, n_ctx, t}
    deltas : array_like of float
        Raises of the needle's base score.

and the decorator :func:`shared_parameters` replaces the line by the entries when the module is
imported, so ``help()`` and ``__doc__`` show the full text:

* the type gets ``, optional`` where the signature gives the parameter a default;
* a type written after the braces replaces the table's (``{gamma, rho} : float`` where a
  function takes scalars only);
* lines indented under a placeholder continue the description of its last parameter: a
  constraint of that function alone (``{n_ctx}``, then ``At most 1e7 here.`` under it);
* a placeholder that names no entry of the table, or no parameter of the function, is a
  ``ValueError`` at import.

The design, and why: the documentation site renders docstrings statically (griffe reads the
source, not ``__doc__``), so a substitution at run time alone would leave ``{n_ctx}`` on the
site. The griffe extension ``docs/_tools/griffe_shared_parameters.py`` gives every function or
class whose source docstring holds a placeholder its run-time ``__doc__`` instead: the source
holds each text once, and ``help()`` and the site show the same words. A sibling that writes a
shared parameter out by hand is held to the table by :meth:`ParameterTable.disagreements`: its
description must begin with the canonical one (types are free to narrow), so two siblings
cannot describe ``n_ctx`` two ways. Each family's test runs :meth:`ParameterTable.check` over
the modules its table names.
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Callable, Mapping

__all__ = ["PLACEHOLDER", "ParameterTable", "shared_parameters", "parameter_entries"]

PLACEHOLDER = re.compile(r"^(?P<indent>[ \t]*)\{(?P<names>[A-Za-z_]\w*(?:,[ \t]*[A-Za-z_]\w*)*)\}"
                         r"(?:[ \t]+:[ \t]+(?P<kind>\S.*?))?[ \t]*$", re.MULTILINE)
"""A placeholder line: parameter names, comma-separated, in braces (``{n_ctx, t}``), then
optionally `` : type`` in place of the table's types (``{gamma, rho} : float``)."""

_INDENT = "    "  # a description sits one level (four spaces) under its entry
_WIDTH = 100  # the source's line length: an expanded description is wrapped to it
# a word of a description: literals (``a < b``) and roles (:func:`f`) are never split
_WORD = re.compile(r"(?:``.+?``|`[^`]*`|[^\s`])+")
_DASHES = re.compile(r"^[ \t]*-{3,}[ \t]*$")


def _split(names: str) -> tuple[str, ...]:
    return tuple(name.strip().lstrip("*") for name in names.split(",") if name.strip())


def _words(text: str) -> str:
    return " ".join(text.split())


def _wrap(text: str, indent: str) -> list[str]:
    """``text`` in lines of at most ``_WIDTH`` characters with ``indent`` (a longer word stands
    alone on its line)."""
    lines, line = [], ""
    for word in _WORD.findall(text):
        if line and len(indent) + len(line) + 1 + len(word) > _WIDTH:
            lines.append(indent + line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return lines + [indent + line]


class ParameterTable:
    """The canonical numpy entries of the parameters a family of functions shares.

    Parameters
    ----------
    family : str
        The family's name, for messages (``"needle"``).
    modules : sequence of str
        The modules of the family: :meth:`check` holds every public function defined there
        that takes one of the table's parameters.
    entries : mapping of str to (str, str)
        ``names -> (type, description)``; ``names`` as numpy writes the entry (``"t1, t2"`` for
        a pair described together), the type without ``, optional`` (added per function where
        the parameter has a default), the description as one paragraph (wrapped to lines of
        100 characters where it is expanded).

    Raises
    ------
    ValueError
        If a name is not an identifier or appears twice, a type carries ``optional``, or a
        type or description is empty.

    Examples
    --------
    >>> table = ParameterTable("demo", [], {"n_ctx": ("int", "Keys the query sees, ``>= 2``.")})
    >>> @shared_parameters(table)
    ... def f(n_ctx, k=1):
    ...     '''Demo.
    ...
    ...     Parameters
    ...     ----------
    ...     {n_ctx}
    ...     k : int, optional
    ...     '''
    >>> print(f.__doc__.split("----------")[1].rstrip())
    <BLANKLINE>
        n_ctx : int
            Keys the query sees, ``>= 2``.
        k : int, optional
    """

    def __init__(self, family: str, modules, entries: Mapping[str, tuple[str, str]]):
        self.family = str(family)
        self.modules = tuple(modules)
        self._entries: dict[tuple[str, ...], tuple[str, str]] = {}
        self._key_of: dict[str, tuple[str, ...]] = {}
        for names, (kind, description) in entries.items():
            key = _split(names)
            if not key or not all(name.isidentifier() for name in key):
                raise ValueError(f"entries of the {family} table must be named by identifiers, "
                                 f"got {names!r}")
            if not kind.strip() or not description.strip():
                raise ValueError(f"entry {names!r} of the {family} table needs a type and a "
                                 "description")
            if "optional" in kind:
                raise ValueError(f"the type of {names!r} in the {family} table must not say "
                                 "optional (the decorator adds it where a default is given)")
            for name in key:
                if name in self._key_of:
                    raise ValueError(f"{name} appears twice in the {family} table")
                self._key_of[name] = key
            self._entries[key] = (kind.strip(), description.strip())

    def __repr__(self) -> str:
        return f"<ParameterTable {self.family}: {', '.join(self._key_of)}>"

    def __contains__(self, name) -> bool:
        return name in self._key_of

    def description(self, name: str) -> str:
        """The canonical description of ``name`` (a parameter of the table).

        Parameters
        ----------
        name : str

        Returns
        -------
        str

        Raises
        ------
        KeyError
            If the table has no ``name``.
        """
        return self._entries[self._key_of[name]][1]

    def _keys(self, names: tuple[str, ...], where: str) -> list[tuple[str, ...]]:
        """``names`` grouped into the table's entries (a pair ``t1, t2`` stays together)."""
        keys, i = [], 0
        while i < len(names):
            key = self._key_of.get(names[i])
            if key is None:
                raise ValueError(f"{where}: placeholder {{{', '.join(names)}}} names "
                                 f"{names[i]!r}, which the {self.family} table does not have "
                                 f"(it has {', '.join(self._key_of)})")
            if names[i:i + len(key)] != key:
                raise ValueError(f"{where}: {', '.join(key)} are one entry of the {self.family} "
                                 f"table; name them together, in that order")
            keys.append(key)
            i += len(key)
        return keys

    def expand(self, doc: str, parameters: Mapping[str, inspect.Parameter] | None = None,
               where: str = "docstring") -> str:
        """``doc`` with every placeholder line replaced by the table's entries.

        Parameters
        ----------
        doc : str
            A docstring.
        parameters : mapping of str to inspect.Parameter, optional
            The function's signature parameters: each placeholder name must be one, and the
            type says ``optional`` where it has a default. Without it no name is checked and
            no type says ``optional``.
        where : str
            What the error messages name.

        Returns
        -------
        str
            ``doc`` with the entries in place of the placeholder lines.

        Raises
        ------
        ValueError
            If a placeholder names a parameter the table does not have, splits an entry of
            several names, or names no parameter of ``parameters``.
        """

        def replace(match):
            indent, names, narrowed = match["indent"], _split(match["names"]), match["kind"]
            if narrowed and "optional" in narrowed:
                raise ValueError(f"{where}: the type after {{{match['names']}}} must not say "
                                 "optional (it is added where the parameter has a default)")
            lines = []
            for key in self._keys(names, where):
                if parameters is not None:
                    missing = [name for name in key if name not in parameters]
                    if missing:
                        raise ValueError(f"{where}: placeholder names {', '.join(missing)}, "
                                         "not a parameter of the function")
                optional = parameters is not None and all(
                    parameters[name].default is not inspect.Parameter.empty for name in key)
                kind, description = self._entries[key]
                kind = narrowed or kind
                lines.append(f"{indent}{', '.join(key)} : {kind}{', optional' * optional}")
                lines += _wrap(description, indent + _INDENT)
            return "\n".join(lines)

        return PLACEHOLDER.sub(replace, doc)

    def disagreements(self, function: Callable, doc: str | None = None) -> list[str]:
        """Where ``function``'s docstring describes a parameter of the table otherwise: not at
        all, or with a description that does not begin with the canonical one (types are not
        compared: a sibling may narrow one).

        Parameters
        ----------
        function : callable
        doc : str, optional
            The docstring to read (default ``function.__doc__``).

        Returns
        -------
        list of str
            One message per parameter; empty when the function agrees with the table.
        """
        where = getattr(function, "__qualname__", repr(function))
        entries = parameter_entries(function.__doc__ if doc is None else doc)
        found = []
        for name in inspect.signature(function).parameters:
            if name not in self._key_of:
                continue
            canonical = _words(self.description(name))
            if name not in entries:
                found.append(f"{where}: {name} is not described (the {self.family} table: "
                             f"{canonical!r})")
                continue
            text = _words(entries[name][1])
            if text != canonical and not text.startswith(canonical + " "):
                found.append(f"{where}: {name} is described as {text!r}, not as the "
                             f"{self.family} table's {canonical!r}")
        return found

    def siblings(self) -> list[Callable]:
        """The public functions defined in the table's modules (their ``__all__``) that take
        at least one of its parameters: what :meth:`check` holds to the table.

        Returns
        -------
        list of callable
        """
        found = []
        for module_name in self.modules:
            module = importlib.import_module(module_name)
            for name in module.__all__:
                value = getattr(module, name)
                if not callable(value) or inspect.isclass(value) or \
                        getattr(value, "__module__", None) != module_name:
                    continue
                try:
                    names = inspect.signature(value).parameters
                except (TypeError, ValueError):
                    continue
                if any(n in self._key_of for n in names):
                    found.append(value)
        return found

    def check(self) -> list[str]:
        """:meth:`disagreements` of every function of :meth:`siblings`.

        Returns
        -------
        list of str
            Empty when every sibling describes every shared parameter as the table does.
        """
        return [message for function in self.siblings()
                for message in self.disagreements(function)]


def shared_parameters(*tables: ParameterTable) -> Callable:
    """Decorator: the function's docstring with its placeholder lines expanded from ``tables``
    (module docstring), once, at import.

    Parameters
    ----------
    *tables : ParameterTable
        The tables to read; a name may stand in one of them only.

    Returns
    -------
    callable
        ``function -> function``, the same function with its ``__doc__`` expanded.

    Raises
    ------
    ValueError
        If two tables share a name, or the docstring names an entry no table has or a name
        that is not a parameter of the function.
    """
    if len(tables) == 1:
        table = tables[0]
    else:
        family, merged = " + ".join(t.family for t in tables), {}
        for one in tables:
            for key, entry in one._entries.items():
                if ", ".join(key) in merged:
                    raise ValueError(f"{', '.join(key)} appears twice in the tables {family}")
                merged[", ".join(key)] = entry
        table = ParameterTable(family, [m for t in tables for m in t.modules], merged)

    def decorate(function):
        where = getattr(function, "__qualname__", repr(function))
        if function.__doc__ and PLACEHOLDER.search(function.__doc__):
            function.__doc__ = table.expand(function.__doc__,
                                            inspect.signature(function).parameters, where)
        return function

    return decorate


def parameter_entries(doc: str | None) -> dict[str, tuple[str, str]]:
    """The entries of the ``Parameters`` section of a numpy docstring: ``name -> (type,
    description)``, one item per name of an entry that names several (``t1, t2 : int``).

    Parameters
    ----------
    doc : str or None

    Returns
    -------
    dict of str to (str, str)
        Empty when there is no ``Parameters`` section; ``*args`` is listed as ``args``.

    Examples
    --------
    >>> parameter_entries('''Sum.
    ...
    ...     Parameters
    ...     ----------
    ...     t1, t2 : int
    ...         The range.
    ...
    ...     Returns
    ...     -------
    ...     int
    ...     ''')
    {'t1': ('int', 'The range.'), 't2': ('int', 'The range.')}
    """
    lines = inspect.cleandoc(doc or "").split("\n")
    start = next((i + 2 for i in range(len(lines) - 1) if lines[i].strip() == "Parameters"
                  and _DASHES.match(lines[i + 1])), None)
    if start is None:
        return {}
    entries, current = {}, None
    for i in range(start, len(lines)):
        line = lines[i]
        if i + 1 < len(lines) and line.strip() and _DASHES.match(lines[i + 1]):
            break  # the next section
        if line.strip() and not line[0].isspace():
            names, _, kind = line.partition(" : ")
            current = (_split(names), kind.strip(), [])
            for name in current[0]:
                entries[name] = current
        elif current is not None and line.strip():
            current[2].append(line.strip())
    return {name: (kind, " ".join(text)) for name, (_, kind, text) in entries.items()}
