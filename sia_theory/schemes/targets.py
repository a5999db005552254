"""Transforms named on a command line: ``MODULE:OBJECT`` (a module on the path),
``FILE.py:OBJECT`` (a file, which is executed) or ``zoo:NAME`` (a :data:`~sia_theory.zoo.ZOO`
member). The object is a Transform, a Transform class built without arguments, or a plain
function ``score_mod(score, b, h, q_idx, kv_idx)`` (FlexAttention's signature, numpy), read
through :class:`~sia_theory.transforms.score_mod.ScoreModTransform`. Used by ``sia-theory
analyze``, the settings flags of ``sia-theory sweep`` and ``sia-theory train``; a bad target is
one :class:`TargetError` (a ``ValueError``) saying what is wrong.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path

from ..transforms import ScoreModTransform, Transform
from ..zoo import ZOO

__all__ = ["TargetError", "load_transform"]


class TargetError(ValueError):
    """A target that does not name a transform (the message says why)."""


def _import_target(module: str):
    if module.endswith(".py") or os.sep in module or "/" in module:
        path = Path(module)
        if not path.is_file():
            raise TargetError(f"TARGET file {module!r} does not exist")
        spec = importlib.util.spec_from_file_location(f"_sia_user_{path.stem}", path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod  # dataclasses look their module up while being built
        spec.loader.exec_module(mod)
        _pickle_by_value(mod)
        return mod
    if os.getcwd() not in sys.path and "" not in sys.path:
        # modules of the current folder, searched after the installed ones: a stray numpy.py
        # in the folder must not shadow numpy
        sys.path.append(os.getcwd())
    return importlib.import_module(module)


def _pickle_by_value(module) -> None:
    """A user's file is no importable module on a Dask worker: its objects travel by value
    (cloudpickle, which dask.distributed uses for tasks), so a scheme resolved once here trains
    there without the file being executed again."""
    try:
        import cloudpickle  # a dependency of dask[distributed], which the package requires
    except ImportError:  # pragma: no cover - only without the sweep engine's dependencies
        return
    cloudpickle.register_pickle_by_value(module)


def load_transform(target: str):
    """The transform named by ``target`` (``MODULE:OBJECT``, ``FILE.py:OBJECT`` or
    ``zoo:NAME``; the object a Transform, a Transform class or a score_mod function) and a name
    for it; :class:`TargetError` saying what is wrong.

    Examples
    --------
    >>> from sia_theory.schemes.targets import load_transform
    >>> transform, name = load_transform("zoo:scale-invariant")
    >>> name, type(transform).__name__, transform.tau
    ('scale-invariant', 'ScaleInvariant', 10.0)
    >>> load_transform("zoo:nope")
    Traceback (most recent call last):
    ...
    sia_theory.schemes.targets.TargetError: zoo has no member 'nope'; choose from none, ...
    """

    module, sep, attr = target.rpartition(":")
    if not sep or not module or not attr:
        raise TargetError(f"TARGET must be MODULE:OBJECT, FILE.py:OBJECT or zoo:NAME, got "
                           f"{target!r}")
    if module == "zoo":

        if attr not in ZOO:
            raise TargetError(f"zoo has no member {attr!r}; choose from {', '.join(ZOO)}")
        return ZOO[attr], attr
    try:
        obj = _import_target(module)
    except TargetError:
        raise
    except SystemExit as err:  # the user's module must not end the caller's process
        raise TargetError(f"importing {module!r} called sys.exit({err.code!r}); a module "
                          "named as a TARGET must define the transform without exiting"
                          ) from None
    except Exception as err:  # the user's module can raise anything while importing
        raise TargetError(f"cannot import {module!r}: {type(err).__name__}: {err}") from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise TargetError(f"{module!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if isinstance(obj, type) and issubclass(obj, Transform):
        try:
            obj = obj()
        except Exception as err:
            raise TargetError(f"{target} is a Transform class that cannot be built without "
                               f"arguments ({type(err).__name__}: {err}); name an instance"
                               ) from None
    if not isinstance(obj, Transform):
        if isinstance(obj, type) or not callable(obj):
            raise TargetError(f"{target} is not a sia_theory Transform or a score_mod function "
                              f"(got {type(obj).__name__})")

        try:
            obj = ScoreModTransform(obj)
        except ValueError as err:
            raise TargetError(f"{target}: {err}") from None
    return obj, attr.split(".")[-1]
