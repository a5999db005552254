"""Every deprecated path and name (``sia_theory._deprecated``) still works, warns with its new
path and "removed in 0.5", is listed in the CHANGELOG's "Deprecated" section, and is gone by
0.5: a test here fails once the version reaches ``REMOVED_IN`` while a row remains."""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import sia_theory
from sia_theory import _deprecated as dep

ROOT = Path(__file__).resolve().parents[1]
MESSAGE = r"is deprecated; use .+ \(removed in 0\.5\)"


def _release(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


def _rows() -> list[str]:
    return ([*dep.MOVED_MODULES]
            + [f"{module}.{name}" for module, names in dep.MOVED_NAMES.items() for name in names]
            + [*dep.DEPRECATED_CALLS] + [*dep.RENAMED_VALUES])


def test_no_deprecated_row_survives_its_removal_version():
    if _release(sia_theory.__version__) >= _release(dep.REMOVED_IN):
        assert not _rows(), f"remove these before releasing {sia_theory.__version__}: {_rows()}"
    assert _release("0.5.0") >= _release(dep.REMOVED_IN) > _release("0.4.9")  # the gate's order


@pytest.mark.parametrize("old", sorted(dep.MOVED_MODULES))
def test_a_moved_module_warns_and_hands_its_names_on(old):
    sys.modules.pop(old, None)
    with pytest.warns(dep.SiaDeprecationWarning, match=MESSAGE) as caught:
        exec(f"import {old}")  # noqa: S102  (a plain import statement, as a user writes it)
    module = sys.modules[old]
    message = str(caught[0].message)
    assert old in message and dep.MOVED_MODULES[old][0] in message
    assert caught[0].filename == "<string>"  # the importing line, not this package or importlib
    homes = [importlib.import_module(m) for m in dep.MOVED_MODULES[old]]
    assert module.__all__
    constants = dep.MOVED_CONSTANTS.get(old, {})
    for name in module.__all__:
        if name in constants:
            assert getattr(module, name) == constants[name]
        else:
            assert getattr(module, name) is next(getattr(h, name) for h in homes
                                                 if hasattr(h, name))
    with pytest.raises(AttributeError, match="no attribute"):
        module.not_a_name  # noqa: B018


RELEASED_ALL = {  # the __all__ of each moved module in 0.3.0, written out from that release
    "sia_theory.command": ["main", "build_parser", "repo_root", "script_folders",
                           "load_transform", "TargetError", "SUBCOMMANDS",
                           "EXTRA_SUBCOMMAND_MODULES", "CommandError"],
    "sia_theory.targets": ["TargetError", "load_transform"],
    "sia_theory.score_mod_transform": ["ScoreModTransform", "PROBE_SCORES", "AFFINE_RTOL",
                                       "as_transform"],
    "sia_theory.attention.rope_config": ["from_rope_parameters", "ROPE_TYPES"],
}


@pytest.mark.parametrize("old", sorted(RELEASED_ALL))
def test_every_name_a_moved_module_exported_in_03_still_resolves(old):
    assert set(RELEASED_ALL) == set(dep.MOVED_MODULES)
    sys.modules.pop(old, None)
    with pytest.warns(dep.SiaDeprecationWarning):
        module = importlib.import_module(old)
    for name in RELEASED_ALL[old]:
        assert getattr(module, name) is not None or name == "EXTRA_SUBCOMMAND_MODULES"
    assert module.__dict__.get("__path__") is None and not hasattr(module, "__path__")
    with pytest.raises(ModuleNotFoundError):  # no submodule of the old path (as in 0.3)
        importlib.import_module(f"{old}.train")


def test_importlib_and_reload_point_the_warning_at_the_caller():
    sys.modules.pop("sia_theory.targets", None)
    with pytest.warns(dep.SiaDeprecationWarning) as caught:
        module = importlib.import_module("sia_theory.targets")
    assert caught[0].filename == __file__
    with pytest.warns(dep.SiaDeprecationWarning) as caught:
        importlib.reload(module)
    assert caught[0].filename == __file__


def test_only_the_old_command_is_runnable():
    run = subprocess.run([sys.executable, "-m", "sia_theory.targets"], capture_output=True,
                         text=True, timeout=120, cwd=ROOT)
    assert run.returncode == 1 and "not runnable" in run.stderr


def test_the_old_command_module_still_runs():
    run = subprocess.run([sys.executable, "-m", "sia_theory.command", "--version"],
                         capture_output=True, text=True, timeout=120, cwd=ROOT,
                         env={**os.environ, "PYTHONWARNINGS": "default"})
    assert run.returncode == 0 and sia_theory.__version__ in run.stdout
    assert ("python -m sia_theory.command is deprecated; use python -m sia_theory (or "
            "sia-theory)") in run.stderr


@pytest.mark.parametrize("module, name", [(m, n) for m, names in dep.MOVED_NAMES.items()
                                          for n in names])
def test_a_moved_name_warns_and_resolves(module, name):
    target, advice = dep.moved_target(dep.MOVED_NAMES[module][name])
    home, _, new = target.partition(":")
    with pytest.warns(dep.SiaDeprecationWarning, match=MESSAGE) as caught:
        value = getattr(importlib.import_module(module), name)
    assert f"{module}.{name}" in str(caught[0].message)
    assert advice in str(caught[0].message)
    assert value is getattr(importlib.import_module(home), new)


def test_renamed_values_warn():
    from sia_theory.schemes import ALIASES, SCHEMES, resolve_scheme
    from sia_theory.studies import DEPRECATED_NAMES, get_study

    for old, new in ALIASES.items():
        with pytest.warns(dep.SiaDeprecationWarning, match=MESSAGE):
            assert resolve_scheme(old) is SCHEMES[new]
    for old, new in DEPRECATED_NAMES.items():
        with pytest.warns(dep.SiaDeprecationWarning, match=MESSAGE):
            assert get_study(old) is get_study(new)


def test_the_package_warnings_are_errors_in_this_suite():
    """The suite's filter (pyproject.toml) turns the package's deprecation warnings into errors,
    so the project's own code and tests cannot lean on a deprecated name."""
    with pytest.raises(dep.SiaDeprecationWarning):
        dep.deprecated("x", "y")


def test_the_changelog_lists_every_deprecated_row():
    text = (ROOT / "CHANGELOG.md").read_text()
    section = re.search(r"### Deprecated\n(.*?)(?=\n### |\n## )", text, re.S)
    assert section, "CHANGELOG.md has no Deprecated section"
    body = section.group(1)
    assert "removed in 0.5" in body
    missing = [row for row in _rows() if f"`{row}`" not in body]
    assert not missing, f"CHANGELOG's Deprecated section misses {missing}"
    from sia_theory.schemes import ALIASES
    from sia_theory.studies import DEPRECATED_NAMES

    assert all(f"`{old}`" in body for old in [*ALIASES, *DEPRECATED_NAMES])


def test_a_transform_that_defines_the_old_law_name_works_and_warns():
    """0.3's extension point, ``_affine``: a subclass defining it still works (its law is the
    transform's ``affine``) and the warning points at the class statement."""
    import numpy as np

    from sia_theory.transforms import LogN, Transform

    with pytest.warns(dep.SiaDeprecationWarning, match=MESSAGE) as caught:
        class OldStyle(Transform):
            depends_on = frozenset({"distance"})

            def _affine(self, t, n, h):
                return np.full_like(t, 2.0), -np.log1p(t)

        class OldStyleLogN(LogN):  # overriding a library transform's law the old way
            def _affine(self, t, n, h):
                return np.ones_like(t), np.zeros_like(t)

    assert len(caught) == 2 and all(w.filename == __file__ for w in caught)
    assert "OldStyle._affine" in str(caught[0].message) and "OldStyle.affine" in str(
        caught[0].message)
    a, m = OldStyle().coefficients(np.array([0.0, 3.0]))
    assert a.tolist() == [2.0, 2.0] and m.tolist() == [0.0, -np.log(4.0)]
    a, _ = OldStyleLogN(0.4).coefficients(np.array([1.0]), n_ctx=np.array([100.0]))
    assert a.tolist() == [1.0]  # the old-style override wins over LogN's own law
    assert LogN(0.4).coefficients(np.array([1.0]), n_ctx=np.array([100.0]))[0][0] != 1.0


def test_the_public_law_is_what_a_subclass_defines_without_a_warning():
    import warnings

    import numpy as np

    from sia_theory.transforms import Transform

    with warnings.catch_warnings():
        warnings.simplefilter("error")

        class NewStyle(Transform):
            depends_on = frozenset({"distance"})

            def affine(self, t, n, h):
                return np.ones_like(t), -t

    assert NewStyle().coefficients(np.array([2.0]))[1].tolist() == [-2.0]


def test_03_code_that_calls_the_old_law_name_still_reaches_the_right_law():
    """``super()._affine`` from a 0.3-style subclass reaches the parent's law (no recursion),
    and a wrapper calling ``inner._affine`` gets the inner transform's law, each with a
    warning."""
    import numpy as np

    from sia_theory.transforms import LogN

    with pytest.warns(dep.SiaDeprecationWarning):
        class Doubled(LogN):
            def _affine(self, t, n, h):
                a, m = super()._affine(t, n, h)
                return 2 * a, m

    t, n = np.array([1.0]), np.array([100.0])
    with pytest.warns(dep.SiaDeprecationWarning, match=r"calling LogN._affine|calling Doubled"):
        a, _ = Doubled(0.4).coefficients(t, n_ctx=n)
    assert a[0] == pytest.approx(2 * 0.4 * np.log(100.0), rel=1e-15)
    with pytest.warns(dep.SiaDeprecationWarning, match="affine"):
        a, _ = LogN(0.4)._affine(t, n, None)
    assert a[0] == pytest.approx(0.4 * np.log(100.0), rel=1e-15)
