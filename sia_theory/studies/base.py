"""The one study contract: ``study(settings, *, seed, execution=None) -> StudyResult``.

A study is a function of a frozen settings object and a seed, registered with :func:`study`;
figures, claims, sweeps and the command line all call it the same way, so a figure and the
claim beside it report the same number for the same settings. The decorated function receives
``(settings, seed, execution)`` and returns its tables (a dict of DataFrames), optionally with
metadata (a dict of JSON-able scalars); the decorator makes it a :class:`Study`, which checks
the arguments before any work and wraps the output in a :class:`StudyResult`.

``execution`` (an :class:`Execution`) says how a study that runs on the sweep engine runs its
cells: in this process (``"sync"``), on threads, or on a Dask cluster, optionally resumable
from a store. A study that does not run cells refuses a store or a scheduler instead of
ignoring it.

Settings classes follow :class:`sia_theory._infra.settings.StudySettings`: frozen dataclasses
whose defaults are the full-fidelity run, with ``quick()`` the seconds-long one the tests use.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pandas as pd

from .._infra.seeding import check_seed

__all__ = ["Execution", "StudyResult", "Study", "study", "DEFAULT_EXECUTION", "sweep_store"]


@dataclass(frozen=True)
class Execution:
    """How a study runs its sweep cells (:func:`sia_theory.sweeps.run_cells`).

    Parameters
    ----------
    scheduler : str, dask.distributed.Client or None
        ``"sync"`` (this process, the default), ``"threads"``, a Dask address
        (``tcp://host:8786``) or client, or ``None`` (``$SIA_DASK_SCHEDULER`` or a local
        cluster).
    store : str or os.PathLike or None
        A folder that keeps finished cells (an interrupted run resumes from it; ``None``:
        memory only).
    force : bool
        Recompute stored cells.
    progress : bool
        A progress bar.
    n_workers : int or None
        The local cluster's size, ``>= 1``.
    finished_only : bool
        Use only the cells already in the store (the model studies render a partial grid with
        it).

    Raises
    ------
    ValueError
        If ``n_workers`` is not a positive integer or None.
    """

    scheduler: str | None = "sync"
    store: str | os.PathLike | None = None
    force: bool = False
    progress: bool = False
    n_workers: int | None = None
    finished_only: bool = False

    def __post_init__(self):
        if self.n_workers is not None and (isinstance(self.n_workers, bool) or not isinstance(
                self.n_workers, int) or self.n_workers < 1):
            raise ValueError(f"n_workers must be a positive integer or None, got "
                             f"{self.n_workers!r}")

    @property
    def in_process(self) -> bool:
        """True when nothing beyond this process is asked for (no store, sync scheduler)."""
        return self.store is None and self.scheduler == "sync" and not self.finished_only

    def run_cells(self, fn, cells, *, seed, study, seed_key=None, with_files=False):
        """:func:`sia_theory.sweeps.run_cells` with these options: ``(cells, frames,
        missing)``, and fourth, with ``with_files=True``, each cell's files (``{name: bytes}``).
        A failed cell raises; ``missing`` lists the keys of the cells not in the store when
        ``finished_only`` (their frames are ``None``; nothing is computed and nothing is written
        into the store), else it is empty."""
        from ..sweeps import run_cells  # start-up: the sweep engine (50 ms), only where cells run

        if not self.finished_only:
            cells, frames, _, *out = run_cells(
                fn, cells, seed=seed, store=self.store, scheduler=self.scheduler,
                force=self.force, progress=self.progress, study=study, seed_key=seed_key,
                on_error="raise", n_workers=self.n_workers, with_files=with_files)
            return (cells, frames, [], *out)
        if self.store is None:
            raise ValueError("finished_only needs a store to read the finished cells from")
        # start-up: the sweep engine (50 ms), only where cells run
        from ..sweeps.grid import cell_key, expand_grid, file_stem
        from ..sweeps.store import read_finished

        # read only: nothing is written into the store (another process may be filling it)
        cells = expand_grid(cells)
        keys = [cell_key(c) for c in cells]
        frames, files = read_finished(self.store, [file_stem(k) for k in keys], study=study,
                                      seed=seed, with_files=with_files)
        if all(f is None for f in frames):
            raise ValueError(f"store {self.store} holds no finished cell of this study yet")
        missing = sorted(k for k, f in zip(keys, frames, strict=True) if f is None)
        return (cells, frames, missing, *([files] if with_files else []))


DEFAULT_EXECUTION = Execution()
"""In this process, no store (``Execution()``)."""


@dataclass(frozen=True)
class StudyResult:
    """What a study returns; ``result["name"]`` is ``result.frames["name"]``.

    Parameters
    ----------
    study : str
        The study's name.
    settings
        The settings that made the result.
    seed : int
        The study seed that made it.
    frames : mapping of str to pandas.DataFrame
        Named DataFrames.
    metadata : mapping of str to scalar
        JSON-able scalars.

    Raises
    ------
    TypeError
        If a frame is not a DataFrame.
    """

    study: str
    settings: Any
    seed: int
    frames: Mapping[str, pd.DataFrame]
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        for name, frame in self.frames.items():
            if not isinstance(frame, pd.DataFrame):
                raise TypeError(f"study {self.study!r} returned {type(frame).__name__} for "
                                f"frame {name!r}, not a DataFrame")
        object.__setattr__(self, "frames", MappingProxyType(dict(self.frames)))
        object.__setattr__(self, "metadata", MappingProxyType(dict(self.metadata)))

    def __getitem__(self, name: str) -> pd.DataFrame:
        try:
            return self.frames[name]
        except KeyError:
            raise KeyError(f"study {self.study!r} has no frame {name!r}; frames: "
                           f"{', '.join(self.frames)}") from None

    def __contains__(self, name) -> bool:
        return name in self.frames


class Study:
    """A registered study: ``study(settings, *, seed, execution=None) -> StudyResult``.

    Parameters
    ----------
    name : str
        The study's name (its module's, the name of the figure that draws it).
    settings_type : type
        The frozen settings dataclass it takes.
    fn : callable
        ``fn(settings, seed, execution) -> frames | (frames, metadata)``.
    sweepable : bool
        Whether it runs its cells on the sweep engine (then ``execution`` may carry a store and
        a scheduler, and ``sia-theory sweep NAME`` runs it).
    partial : bool
        Whether it can render the cells already in a store (``execution.finished_only``).
    cli_aliases : mapping of str to str, optional
        Short command-line flags for settings fields.
    presets : (callable, callable), optional
        The quick and full settings (default ``settings_type.quick`` and ``.full``).

    Raises
    ------
    TypeError
        If ``settings_type`` is not a dataclass.
    """

    def __init__(self, name: str, settings_type: type, fn: Callable, *, sweepable: bool = False,
                 partial: bool = False, cli_aliases: Mapping[str, str] | None = None,
                 presets: tuple[Callable, Callable] | None = None):
        if not dataclasses.is_dataclass(settings_type):
            raise TypeError(f"settings_type of study {name!r} must be a dataclass")
        self.name, self.settings_type, self.fn = name, settings_type, fn
        self.sweepable, self.partial = sweepable, partial
        self.cli_aliases = dict(cli_aliases or {})
        self._presets = presets or (settings_type.quick, settings_type.full)
        self.__doc__ = fn.__doc__
        self.__name__ = getattr(fn, "__name__", name)
        self.__module__ = getattr(fn, "__module__", __name__)
        self.__wrapped__ = fn

    def __repr__(self) -> str:
        return f"<study {self.name} ({self.settings_type.__name__})>"

    def quick(self):
        """The study's CI-sized settings (what its figure's ``--quick`` runs)."""
        return self._presets[0]()

    def full(self):
        """The study's full-fidelity settings (what its committed figure ran)."""
        return self._presets[1]()

    def of(self, quick: bool):
        """The quick settings if ``quick`` else the full ones."""
        return self.quick() if quick else self.full()

    def check(self, settings, seed, execution) -> tuple[Any, int, Execution]:
        """The arguments checked (``ValueError`` naming what is wrong), before any work."""
        if not isinstance(settings, self.settings_type):
            raise ValueError(f"settings of study {self.name!r} must be a "
                             f"{self.settings_type.__name__}, got {type(settings).__name__}")
        seed = check_seed(seed)
        execution = DEFAULT_EXECUTION if execution is None else execution
        if not isinstance(execution, Execution):
            raise ValueError(f"execution must be an Execution, got {type(execution).__name__}")
        if not self.sweepable and not execution.in_process:
            raise ValueError(f"study {self.name!r} runs in this process only: it takes no "
                             f"store, scheduler or finished_only (got {execution})")
        if execution.finished_only and not self.partial:
            raise ValueError(f"study {self.name!r} cannot render a partial grid "
                             "(finished_only)")
        return settings, seed, execution

    def __call__(self, settings, *, seed, execution: Execution | None = None) -> StudyResult:
        settings, seed, execution = self.check(settings, seed, execution)
        out = self.fn(settings, seed, execution)
        if isinstance(out, StudyResult):  # a study may return a richer subclass itself
            return out
        frames, metadata = out if isinstance(out, tuple) else (out, {})
        return StudyResult(self.name, settings, seed, frames, metadata)


def study(name: str, settings_type: type, **options) -> Callable[[Callable], Study]:
    """Decorator: ``fn(settings, seed, execution) -> frames | (frames, metadata)`` becomes the
    :class:`Study` ``name``.

    Parameters
    ----------
    name : str
    settings_type : type
    **options
        As for :class:`Study`.

    Returns
    -------
    callable
        ``fn -> Study``.
    """

    def register(fn):
        return Study(name, settings_type, fn, **options)

    return register


def sweep_store(study: str, seed: int, folder) -> Path:
    """The store of ``study``'s full runs at study seed ``seed`` in the sweeps ``folder``
    (the repository's ``build/sweeps``, shared by a study's figures and claims).

    Parameters
    ----------
    study : str
    seed : int
    folder : str or os.PathLike

    Returns
    -------
    pathlib.Path
        ``folder/<study>-seed<seed>``.

    Examples
    --------
    >>> sweep_store("train_grid", 0, "build/sweeps").as_posix()
    'build/sweeps/train_grid-seed0'
    """
    return Path(os.fspath(folder)) / f"{study}-seed{int(seed)}"
