"""``sia-theory sweep STUDY``: run a study's grid on Dask (local by default) into a resumable store.

    sia-theory sweep cas_fig1_phase_diagram --n 10000 --dims 512 --size 80 --store DIR
    sia-theory sweep phase-diagram --quick --rho 0.3
    sia-theory sweep si_entropy_scaling --t-max 100000 --samples 65536 --store DIR

The flags of a study are its settings' own fields (``--t-max`` sets ``t_max``), read off the
settings dataclass, so the grid is the study's own: the command starts from the study's full
settings (``--quick``: its quick ones), replaces the fields given, and calls the study itself
with a store and a scheduler, so the numbers are those of the figures and claims for the same
settings. Fields that the settings derive when left unset (``None``, such as the entropy
study's local-slope windows) are derived again from the fields given. A field whose value is a
transform takes ``MODULE:OBJECT``, ``FILE.py:OBJECT`` or ``zoo:NAME`` (as ``analyze``); fields
of other kinds are not flags. Each flag's help is the field's meaning, read off the settings'
docstring (:func:`field_meanings`), and its default. ``--scheduler`` takes a Dask address (``tcp://host:8786``),
``sync`` or ``threads``; unset, ``SIA_DASK_SCHEDULER`` or an embedded LocalCluster.
Re-running resumes from the store; ``--force`` recomputes. Bad input (an unknown study or
flag, a value out of the settings' range, a scheduler that does not answer) is one line on
stderr and exit status 2, with nothing written.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import re
import time

from .._deprecated import deprecated
from .._infra.cli import OneLineArgumentParser, add_no_progress, output_dir, positive_int, seed
from ..schemes.targets import TargetError, load_transform
from ..studies import ALIASES, DEPRECATED_NAMES, SWEEPABLE, get_study

__all__ = ["register", "scheduler_arg", "settings_parser", "settings_from_args",
           "add_execution_flags", "field_meanings"]


def scheduler_arg(text: str) -> str:
    """argparse type: ``sync``, ``threads`` or a dask address ``scheme://host:port``."""
    if text in ("sync", "threads") or ("://" in text and text.split("://", 1)[1]):
        return text
    raise argparse.ArgumentTypeError(f"expected 'sync', 'threads' or a dask address such as "
                                     f"tcp://host:8786, got {text!r}")


def _number(kind):
    expected = "an integer" if kind is int else "a number"

    def parse(text: str):
        try:
            return kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None

    parse.__name__ = kind.__name__
    return parse


def _pair(kind):
    def parse(text: str):
        lo, sep, hi = text.partition(":")
        if not sep:
            raise argparse.ArgumentTypeError(f"expected LOW:HIGH, got {text!r}")
        return _number(kind)(lo), _number(kind)(hi)

    parse.__name__ = f"{kind.__name__} pair"
    return parse


def _transform_arg(text: str):
    try:
        return load_transform(text)[0]
    except TargetError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _flag_kind(value):
    """``(argparse keywords, metavar)`` for a settings value, or ``None`` if it is no flag."""
    # numpy, 2 s of the command's start-up (python -X importtime): only once a study is parsed
    from ..transforms import Transform

    if isinstance(value, bool):
        return {"action": argparse.BooleanOptionalAction, "metavar": None}
    if isinstance(value, int | float) and not isinstance(value, bool):
        return {"type": _number(type(value))}
    if isinstance(value, str):
        return {"type": str}
    if isinstance(value, Transform):
        return {"type": _transform_arg, "metavar": "TARGET"}
    if isinstance(value, tuple) and value:
        if all(isinstance(v, int | float) and not isinstance(v, bool) for v in value):
            kind = float if any(isinstance(v, float) for v in value) else int
            return {"type": _number(kind), "nargs": "+"}
        if all(isinstance(v, tuple) and len(v) == 2 and all(
                isinstance(x, int | float) for x in v) for v in value):
            kind = float if any(isinstance(x, float) for v in value for x in v) else int
            return {"type": _pair(kind), "nargs": "+", "metavar": "LOW:HIGH"}
    return None


_ENTRY = re.compile(r"^(\w+(?:, \w+)*) : [^\n]*\n((?:[ \t]+\S[^\n]*\n?)+)", re.M)
_SECTION = re.compile(r"^\S[^\n]*\n-{3,}\n", re.M)  # a numpy section's title and underline
_MARKUP = re.compile(r":\w+:`~?([^`]+)`|``([^`]+)``")


def _section_entries(doc: str, title: str) -> list[tuple[list[str], str]]:
    """The ``(names, meaning)`` entries of the numpy section ``title`` of ``doc`` (``[]``
    without one): ``name : type`` or ``name, other : type``, the indented meaning plain."""
    _, found, section = ("\n" + doc).partition(f"\n{title}\n{'-' * len(title)}\n")
    section = _SECTION.split(section)[0] if found else ""  # up to the next section
    return [(m.group(1).split(", "), _plain(m.group(2))) for m in _ENTRY.finditer(section)]


def _plain(text: str) -> str:
    """reST as plain one-line text: roles and literals unwrapped, whitespace collapsed."""
    return " ".join(_MARKUP.sub(lambda m: m.group(1) or m.group(2), text).split())


def _clause(text: str, start: int) -> str:
    """The clause of ``text`` around ``start``: from the last ``;`` or sentence end before it
    to the next one after it outside brackets."""
    depth, end = 0, start
    while end < len(text):
        depth += (text[end] in "([{") - (text[end] in ")]}")
        if depth <= 0 and (text[end] == ";" or text.startswith((". ", ".\n"), end)):
            break
        end += 1
    begin = max(text.rfind(";", 0, start), text.rfind(". ", 0, start),
                text.rfind(".\n", 0, start)) + 1
    return text[begin:end].strip()


def field_meanings(settings_type) -> dict:
    """``{field: meaning}`` read off a settings dataclass's docstring, the one place the
    meanings are written: its numpy ``Parameters`` section (``name : type`` or
    ``name, other : type`` and the indented meaning), then, for a field that section does not
    list, its ``Attributes`` section, and, for a field neither lists, the clause of the prose
    before the first section that first names it as a literal (clauses end at ``;`` and at
    sentence ends; a leading "name:" is dropped). Plain text on one line.

    Parameters
    ----------
    settings_type : type
        A study's settings dataclass (or any class with such a docstring).

    Returns
    -------
    dict
        ``{name: meaning}``; a field the docstring does not name is absent.

    Examples
    --------
    >>> class Settings:
    ...     '''``n`` draws of ``d`` dimensions; ``tau``: the temperature (in (0, 1]; ``x``).
    ...
    ...     Parameters
    ...     ----------
    ...     n : int
    ...         Seeded draws
    ...         per point.
    ...     '''
    >>> field_meanings(Settings)["n"], field_meanings(Settings)["tau"]
    ('Seeded draws per point.', 'the temperature (in (0, 1]; x)')
    """
    doc = inspect.getdoc(settings_type) or ""
    prose = _SECTION.split(doc)[0]
    meanings = {}
    for title in ("Parameters", "Attributes"):  # Parameters first: it wins
        for names, meaning in _section_entries(doc, title):
            for name in names:
                meanings.setdefault(name, meaning)
    for m in re.finditer(r"``(\w+)``", prose):
        if m.group(1) not in meanings:
            clause = re.sub(rf"^``{m.group(1)}``:\s*", "", _clause(prose, m.start()))
            meanings[m.group(1)] = _plain(clause)
    return meanings


def settings_parser(study, prog: str) -> OneLineArgumentParser:
    """The parser of ``sia-theory sweep NAME``: one flag per settings field (see the module
    docstring) and the execution flags."""
    parser = OneLineArgumentParser(
        prog=prog, description=f"Run the study {study.name} "
        f"({study.settings_type.__name__}) on the sweep engine; each settings flag replaces "
        "that field of the full (or, with --quick, the quick) settings.")
    parser.add_argument("--quick", action="store_true", help="start from the quick settings")
    preset = study.full()
    meanings = field_meanings(study.settings_type)
    short = {field: alias for alias, field in study.cli_aliases.items()}
    group = parser.add_argument_group("settings fields")
    for f in dataclasses.fields(study.settings_type):
        if not f.init:
            continue
        kind = _flag_kind(getattr(preset, f.name))
        if kind is None:
            continue
        names = [f"--{f.name.replace('_', '-')}"]
        if f.name in short:
            names.append(f"--{short[f.name]}")
        kind.setdefault("metavar", f.name.upper())
        default = f"default {getattr(preset, f.name)!r}"
        meaning = meanings.get(f.name, "").rstrip(".")
        text = f"{meaning} ({default})" if meaning else default
        group.add_argument(*names, dest=f"field_{f.name}", default=None,
                           help=text.replace("%", "%%"), **kind)
    parser.add_argument("--store", type=output_dir, default=f"sweeps/{study.name}",
                        help=f"store folder (default: sweeps/{study.name})")
    parser.add_argument("--seed", type=seed, default=0, help="sweep seed (default 0)")
    add_execution_flags(parser, "$SIA_DASK_SCHEDULER or a local cluster", "recompute stored cells")
    return parser


def add_execution_flags(parser, default_scheduler: str, force: str) -> None:
    """The flags of an :class:`~sia_theory.studies.base.Execution` that ``sweep`` and ``train``
    share: ``--scheduler`` (its default described by ``default_scheduler``), ``--workers``,
    ``--force`` (what it does: ``force``) and ``--no-progress``."""
    parser.add_argument("--scheduler", type=scheduler_arg, default=None,
                        help=f"dask address, 'sync' or 'threads' (default: {default_scheduler})")
    parser.add_argument("--workers", type=positive_int, default=None,
                        help="processes of the local cluster (default: CPU count)")
    parser.add_argument("--force", action="store_true", help=force)
    add_no_progress(parser)


def settings_from_args(study, args):
    """The study's settings: its quick or full preset with the fields given replaced; fields
    that default to ``None`` (derived) are derived again unless given. ``ValueError`` (from the
    settings' own validation) names a bad field."""
    base = study.quick() if args.quick else study.full()
    given = {k[len("field_"):]: v for k, v in vars(args).items()
             if k.startswith("field_") and v is not None}
    given = {k: tuple(v) if isinstance(v, list) else v for k, v in given.items()}
    if not given:
        return base
    derived = {f.name: None for f in dataclasses.fields(base)
               if f.init and f.default is None and f.name not in given}
    return dataclasses.replace(base, **derived, **given)


def _study_name(text: str) -> str:
    """argparse type: a study name; a name of 0.3 (:data:`DEPRECATED_NAMES`) becomes the new one
    with a deprecation warning (until 0.5)."""
    if text in DEPRECATED_NAMES:
        deprecated(f"study name {text!r}", repr(DEPRECATED_NAMES[text]))
        return DEPRECATED_NAMES[text]
    return text


def register(subparsers) -> argparse.ArgumentParser:
    """Add ``sweep STUDY ...`` to ``subparsers``; the namespace's ``handler(args)`` runs it
    and returns the exit status."""
    names = [*SWEEPABLE, *ALIASES]
    p = subparsers.add_parser(
        "sweep", help="run a study's grid on Dask into a resumable store",
        description="Run a study's grid on Dask (a local cluster by default) into a resumable "
                    "Parquet store. `sia-theory sweep STUDY --help` lists the study's flags (its "
                    "settings' fields). Aliases: " + ", ".join(
                        f"{a} = {n}" for a, n in ALIASES.items()) + ".")
    p.add_argument("study", metavar="STUDY", choices=names, type=_study_name,
                   help="one of: " + ", ".join(names))
    p.add_argument("options", nargs=argparse.REMAINDER, help="the study's flags")
    p.set_defaults(handler=_handler)
    return p


def _handler(args) -> int:
    from ..studies.base import Execution  # pandas and the sweep engine: not for --help

    args.prog = f"sia-theory sweep {args.study}"
    start = time.perf_counter()
    study = get_study(args.study)
    options = settings_parser(study, args.prog).parse_args(args.options)
    args.store = options.store
    settings = settings_from_args(study, options)
    execution = Execution(scheduler=options.scheduler or None, store=options.store,
                          force=options.force, progress=not options.no_progress,
                          n_workers=options.workers)
    result = study(settings, seed=options.seed, execution=execution)
    summary = ", ".join(f"{k} {len(v)} rows" for k, v in result.frames.items())
    print(f"{args.prog}: done in {time.perf_counter() - start:.1f} s ({summary}); store "
          f"{options.store}")
    return 0
