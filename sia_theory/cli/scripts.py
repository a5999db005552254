"""The scripts the command runs: ``experiments/*.py`` (``figures``) and
``benchmarks/bench_*.py`` (``bench``).

They are those of the repository checkout when there is one (the folder holding this package
when it has ``experiments/`` — an editable install or ``PYTHONPATH`` —, else
``$SIA_THEORY_REPO``, else the current folder or one of its parents), else the copies the wheel
carries as package data (``sia_theory/_experiments``, ``sia_theory/_benchmarks``); figures then
go to ``./figures`` unless ``--out`` says otherwise. With neither, :class:`CommandError`.
"""

from __future__ import annotations

import fnmatch
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from .._infra.cli import OneLineArgumentParser
from .errors import CommandError

__all__ = ["repo_root", "script_folders", "scripts_in", "select_scripts", "run_scripts",
           "FigureFamily", "FIGURE_FAMILIES", "FAMILIES", "figure_family", "NamesHelpParser"]

_PACKAGE = Path(__file__).resolve().parent.parent


def repo_root() -> Path:
    """The repository checkout holding ``experiments/`` and ``benchmarks/`` (module docstring),
    or :class:`CommandError`."""
    candidates = [_PACKAGE.parent]
    if os.environ.get("SIA_THEORY_REPO"):
        candidates.append(Path(os.environ["SIA_THEORY_REPO"]))
    cwd = Path.cwd().resolve()
    candidates += [cwd, *cwd.parents]
    for path in candidates:
        if (path / "experiments").is_dir() and (path / "sia_theory").is_dir():
            return path
    raise CommandError("no sia-theory repository checkout found (experiments/ and benchmarks/): "
                       "run inside a clone or set SIA_THEORY_REPO")


def script_folders() -> tuple[Path, Path, Path]:
    """``(experiments, benchmarks, default figures folder)``: the checkout's (module docstring)
    or, installed from a wheel, the package's copies with ``./figures``; else
    :class:`CommandError`."""
    try:
        root = repo_root()
    except CommandError:
        if (_PACKAGE / "_experiments").is_dir() and (_PACKAGE / "_benchmarks").is_dir():
            return _PACKAGE / "_experiments", _PACKAGE / "_benchmarks", Path("figures")
        raise
    return root / "experiments", root / "benchmarks", root / "figures"


def scripts_in(folder: Path, pattern: str, strip: str = "") -> dict[str, Path]:
    """``{name: path}`` of the scripts matching ``pattern`` in ``folder`` (not ``_*``), the
    name without the prefix ``strip``."""
    return {p.stem[len(strip):]: p for p in sorted(folder.glob(pattern))
            if not p.name.startswith("_")}


def select_scripts(available: dict, only, what: str) -> list[Path]:
    """The scripts named in ``only`` (all of ``available`` when empty); :class:`CommandError`
    naming the unknown ones and the choices."""
    if not only:
        return list(available.values())
    unknown = [name for name in only if name not in available]
    if unknown:
        raise CommandError(f"unknown {what} {', '.join(map(repr, unknown))}; choose from "
                           f"{', '.join(available)}")
    return [available[name] for name in only]


def run_scripts(scripts, extra) -> int:
    """Run each script in its own process with the arguments ``extra``; 1 if any failed."""
    failed = []
    for script in scripts:
        print(f"== {script.name}", flush=True)
        if subprocess.call([sys.executable, str(script), *extra]) != 0:
            failed.append(script.name)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


@dataclass(frozen=True)
class FigureFamily:
    """One family of figure scripts: which files, the ``make`` target, the budget.

    Parameters
    ----------
    name : str
        What ``sia-theory figures --family`` takes.
    files : str
        The scripts' glob in ``experiments/`` (``core``: every script no other family claims).
    target : str
        The ``make`` command that regenerates the family into ``figures/``.
    minutes : int
        The time budget on 2 cores, in minutes (``core``: its measured time, about 12).
    what : str
        One line: what the family's figures show.
    """

    name: str
    files: str
    target: str
    minutes: int
    what: str


_FAMILIES = (
    FigureFamily("core", "*.py", "make figures", 12, "the papers' figures"),
    FigureFamily("ext", "ext_*.py", "make figures-ext", 20, "the results beyond the papers"),
    FigureFamily("model", "model_*.py", "make figures-model", 45,
                 "the pretrained model, SmolLM2-135M"),
    FigureFamily("train", "train_*.py", "make figures-train", 150,
                 "the models trained here with each scheme"),
    FigureFamily("needle", "train_needle.py", "make figures-needle", 75,
                 "SI Table 2: needle retrieval after fine-tuning the models trained here"),
)
FIGURE_FAMILIES = MappingProxyType({
    **{f.name: f for f in _FAMILIES},
    "all": FigureFamily("all", "*.py", "make figures-all", sum(f.minutes for f in _FAMILIES),
                        "every family"),
})
"""The figure families by name, the one table of their files, ``make`` targets and budgets
(:class:`FigureFamily`): ``core`` (the papers' figures, about 12 minutes on 2 cores), ``ext``,
``model`` and ``train`` (``experiments/ext_*.py``, ``model_*.py``, ``train_*.py`` but the
needle's), ``needle`` (``train_needle.py``: the fine-tuning of SI Table 2), and ``all``
(every script; its budget is the sum of the others'). ``figures --family``'s help and the
gallery are built from it; the Makefile's comment, README.md and the pages of the docs that
state a budget are held to it by ``tests/docs/test_single_sources.py``."""

FAMILIES = tuple(FIGURE_FAMILIES)
"""The names of :data:`FIGURE_FAMILIES`, what ``sia-theory figures --family`` takes."""


def figure_family(name: str) -> str:
    """The family of ``experiments/<name>.py``: of :data:`FIGURE_FAMILIES` other than ``core``
    and ``all``, the one that names the file (``needle``: ``train_needle.py``), else the first
    whose glob it matches (``ext``, ``model``, ``train``), else ``core``."""
    named = sorted(_FAMILIES[1:], key=lambda f: "*" in f.files)  # a file named before a glob
    for family in named:
        if fnmatch.fnmatchcase(f"{name}.py", family.files):
            return family.name
    return "core"


class NamesHelpParser(OneLineArgumentParser):
    """A parser whose help ends with the names its ``--only`` takes (the scripts found now, by
    :func:`script_folders`): ``names_of(folders) -> [name, ...]`` set as ``names_of``; looked up
    only when help is shown."""

    names_of = None

    def format_help(self):
        """The help text, ending with the names found now (or why none were)."""
        try:
            names = self.names_of(script_folders())
        except CommandError as err:
            self.epilog = f"names: none found ({err})"
        else:
            self.epilog = "names: " + ", ".join(names)
        return super().format_help()
