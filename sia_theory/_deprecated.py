"""Every deprecated name of the package, in one table, each with the version that removes it.

Old import paths are data here, not files: a module path that moved is a row of
:data:`MOVED_MODULES` (served by a finder that :mod:`sia_theory` installs on import, so
``import sia_theory.targets`` still works, warns once with the new path and hands every name on
to the new module; ``python -m`` of an old command module still runs its command), and a name
that moved out of a module that still exists is a row of :data:`MOVED_NAMES` (the module's
``__getattr__ = moved_names(__name__)`` serves it). Renamed command-line values (scheme and
study names) live in their registries' alias tables; :data:`RENAMED_VALUES` lists where, and
:data:`DEPRECATED_CALLS` names the deprecated functions that still run.

Every warning is a :class:`SiaDeprecationWarning` (a :class:`DeprecationWarning`) whose message
names the new path and says "removed in 0.5"; the test suite turns them into errors, so the
project's own code and tests use current names only. ``tests/test_deprecated.py`` serves every
row and fails once :data:`sia_theory.__version__` reaches :data:`REMOVED_IN` while a row
remains. The CHANGELOG's "Deprecated" section lists the same rows.

This module imports only the standard library: :mod:`sia_theory` imports it at start-up.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import warnings

__all__ = ["REMOVED_IN", "SiaDeprecationWarning", "MOVED_MODULES", "MOVED_NAMES",
           "MOVED_CONSTANTS", "RUNNABLE", "RENAMED_VALUES", "DEPRECATED_CALLS", "deprecated",
           "moved_names", "moved_target", "install"]

REMOVED_IN = "0.5"
"""The release that removes every deprecated name listed here."""


class SiaDeprecationWarning(DeprecationWarning):
    """A deprecated sia-theory name or path was used; the message names its replacement and the
    release that removes it (:data:`REMOVED_IN`)."""


MOVED_MODULES: dict[str, tuple[str, ...]] = {
    # old module path (0.3) -> the module(s) that now hold its names, looked up in order
    "sia_theory.command": ("sia_theory.cli", "sia_theory.cli.scripts",
                           "sia_theory.schemes.targets"),
    "sia_theory.score_mod_transform": ("sia_theory.transforms.score_mod",),
    "sia_theory.targets": ("sia_theory.schemes.targets",),
    "sia_theory.attention.rope_config": ("sia_theory.schemes.rope_config",),
}
"""Module paths of 0.3 that moved: ``old -> (new, ...)``. Importing the old path warns once and
gives a module whose every name is looked up in the new ones."""

MOVED_CONSTANTS: dict[str, dict[str, object]] = {
    "sia_theory.command": {"EXTRA_SUBCOMMAND_MODULES": ()},
}
"""Names of a moved module that have no new home: their 0.3 meaning as a constant
(``EXTRA_SUBCOMMAND_MODULES``: every subcommand is now a module of :mod:`sia_theory.cli`)."""

RUNNABLE = {"sia_theory.command": "sia_theory"}
"""Moved modules that ``python -m`` ran in 0.3, and what to run instead."""

MOVED_NAMES: dict[str, dict[str, str | tuple[str, str]]] = {
    "sia_theory.attention": {
        "from_rope_parameters": "sia_theory.schemes.rope_config:from_rope_parameters"},
    "sia_theory.models.runs": {
        "Scheme": "sia_theory.schemes:BoundScheme",
        **{name: f"sia_theory.studies.model_runs:{name}" for name in (
            "MODEL_NAME", "TRAIN_LENGTH", "pretrained", "documents", "check_documents",
            "document_cells", "cell_document", "SCHEME_NAMES", "schemes", "scheme_families",
            "model_families", "family_definition", "family_cache", "fork_for")},
        "si_tau": "sia_theory.schemes:si_tau",
        "SI_EPSILON": "sia_theory.schemes:SI_EPSILON"},
    "sia_theory.training.data": {"documents": "sia_theory.training.data:texts"},
    "sia_theory.training.needle": {
        "NeedleSettings": "sia_theory.training.needle:NeedleTuneSettings",
        "TABLE2": "sia_theory.studies.train_needle:TABLE2"},
    "sia_theory.training.schemes": {
        name: f"sia_theory.schemes:{name}"
        for name in ("Scheme", "SCHEMES", "POSITIONS", "ROPE_BASE", "SI_TAU", "resolve_scheme")},
    "sia_theory.studies.command": {
        "main": ("sia_theory.studies.command:run_sweep", "sia_theory.cli.main(['sweep', ...])"),
        **{name: f"sia_theory.cli.sweep:{name}" for name in (
            "register", "scheduler_arg", "settings_parser", "settings_from_args")}},
    "sia_theory.studies.train_command": {
        "main": ("sia_theory.studies.train_command:run_train",
                 "sia_theory.cli.main(['train', ...])"),
        "register": "sia_theory.cli.train:register"},
}
"""Names that moved out of modules that still exist: ``module -> {old name: "module:new name"}``
(a different new name is a rename), or ``(target, advice)`` where the warning should advise
something other than the target (the 0.3 ``main`` wrappers)."""

RENAMED_VALUES: dict[str, str] = {
    "scheme names": "sia_theory.schemes.registry:ALIASES",
    "study names": "sia_theory.studies:DEPRECATED_NAMES",
}
"""Renamed values accepted with a warning, and the alias table that holds each kind."""

DEPRECATED_CALLS: dict[str, str] = {
    "sia_theory.studies.train_phase:trained_phases":
        "the study sia_theory.studies.train_phase (study(settings, seed=..., execution=...))",
    "sia_theory.studies.train_attention_stats:trained_fig1":
        "the study sia_theory.studies.train_attention_stats (study(settings, seed=..., "
        "execution=...))",
    "python -m sia_theory.studies.command": "sia-theory sweep",
    "python -m sia_theory.studies.train_command": "sia-theory train",
    "sia_theory.transforms.Transform:_affine":
        "Transform.affine (a subclass that defines _affine, and code that calls _affine, still "
        "work, and warn)",
}
"""Deprecated functions and entry points that still run (each warns when called)."""


_IMPORTLIB = importlib.__file__


def _import_machinery(filename: str) -> bool:
    """A frame :func:`warnings.warn` skips by itself (its own rule: importlib's bootstrap)."""
    return "importlib" in filename and "_bootstrap" in filename


def _caller_stacklevel() -> int:
    """The ``stacklevel`` (for a warning raised in :func:`deprecated`) of the first frame outside
    this module and the import machinery (``importlib.import_module``, ``importlib.reload``
    included), so the warning points at the user's ``import`` or attribute access.
    :func:`warnings.warn` skips importlib's bootstrap frames itself, so they are not counted."""
    frame, level = sys._getframe(2), 1  # frame 1 is deprecated(), stacklevel 1
    while frame is not None:
        filename = frame.f_code.co_filename
        if not _import_machinery(filename):
            level += 1
            if filename not in (__file__, _IMPORTLIB):
                return level
        frame = frame.f_back
    return level


def deprecated(old: str, new: str, *, frames: int = 0) -> None:
    """Warn that ``old`` is deprecated in favour of ``new`` (removed in :data:`REMOVED_IN`),
    pointing at the caller's line (``frames`` more frames up: a hook such as
    ``__init_subclass__`` points at the class statement with ``frames=1``)."""
    warnings.warn(f"{old} is deprecated; use {new} (removed in {REMOVED_IN})",
                  SiaDeprecationWarning, stacklevel=_caller_stacklevel() + frames)


def _resolve(target: str):
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


def moved_target(row) -> tuple[str, str]:
    """``(target, advice)`` of a :data:`MOVED_NAMES` value (advice: the target as a dotted
    path unless the row gives its own)."""
    if isinstance(row, str):
        return row, row.replace(":", ".")
    return row


def moved_names(module: str):
    """The module ``__getattr__`` of ``module`` serving its rows of :data:`MOVED_NAMES`."""
    table = MOVED_NAMES[module]

    def __getattr__(name):
        if name not in table:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        target, advice = moved_target(table[name])
        deprecated(f"{module}.{name}", advice)
        return _resolve(target)

    return __getattr__


class _MovedModule:
    """Finder and loader of :data:`MOVED_MODULES` (a meta path hook; see :func:`install`)."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in MOVED_MODULES:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        return None  # the default module object

    def exec_module(self, module):
        targets = MOVED_MODULES[module.__name__]
        deprecated(module.__name__, " or ".join(targets))
        homes = [importlib.import_module(t) for t in targets]
        constants = MOVED_CONSTANTS.get(module.__name__, {})

        def __getattr__(name):
            if not (name.startswith("__") and name.endswith("__")):  # not __path__, __file__
                if name in constants:
                    return constants[name]
                for home in homes:
                    if hasattr(home, name):
                        return getattr(home, name)
            raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}")

        module.__getattr__ = __getattr__
        module.__all__ = [n for home in homes for n in getattr(home, "__all__", ())] + [
            n for n in constants]
        module.__doc__ = f"Deprecated: {module.__name__} is {' and '.join(targets)}."

    def get_code(self, fullname):
        """``python -m OLD`` runs the command the old module ran (:data:`RUNNABLE`); the other
        moved modules were never runnable."""
        if fullname not in RUNNABLE:
            raise ImportError(f"{fullname} is not runnable (deprecated: it is "
                              f"{' and '.join(MOVED_MODULES[fullname])})", name=fullname)
        new = RUNNABLE[fullname]
        source = (f"import sys\nfrom sia_theory._deprecated import deprecated\n"
                  f"if __name__ == '__main__':  # not in a worker spawned from this command\n"
                  f"    deprecated('python -m {fullname}', 'python -m {new} (or sia-theory)')\n"
                  f"    from sia_theory.cli import main\n    sys.exit(main())\n")
        return compile(source, f"<deprecated {fullname}>", "exec")


_FINDER = _MovedModule()


def install() -> None:
    """Put the finder of :data:`MOVED_MODULES` first on :data:`sys.meta_path` (once): the table
    is authoritative, so a stale file of an old path left in an installation is never loaded."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
