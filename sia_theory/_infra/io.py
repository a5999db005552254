"""Writing results so that nothing already on disk is lost, left half-written or mixed.

* One file (``atomic_path``, ``write_text``, ``write_csv``, ``save_figure``): written to a
  temporary sibling ``.<name>.<pid>-<token>.tmp``, fsync'ed and moved into place with
  ``os.replace``, which is atomic on POSIX.
* A set of files (``save_experiment``: figure, data and metadata of one stem): published
  together through ``sia_theory._infra.fileset.write_set`` with a checksummed manifest, so
  ``read_set`` sees either the complete old set or the complete new one after a kill at any
  point (see that module for the steps and the exact guarantee).

Files get the permissions of an ordinary ``open`` (``0o666 & ~umask``: 0644 under the usual
umask 022), and what a killed run leaves behind is removed by the next write into the folder.
"""

from __future__ import annotations

import json
import os
import platform
import sys
from collections.abc import Mapping
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

import sia_theory

from .fileset import (
    SetNotFoundError,
    fsync_path,
    manifest_name,
    read_set,
    recover_sets,
    temporary_name,
    write_set,
)

__all__ = ["SetNotFoundError", "atomic_path", "write_text", "write_csv", "save_figure",
           "package_versions", "metadata_text", "write_metadata", "save_experiment",
           "experiment_files", "manifest_name", "read_set", "recover_sets", "write_set"]


@contextmanager
def atomic_path(path):
    """Yield a temporary path beside ``path``; move it onto ``path`` only if the block succeeds.

    The temporary file is created empty with ``O_EXCL`` and mode ``0o666`` (the umask applies),
    so what lands at ``path`` has the permissions of a file made by ``open``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    recover_sets(path.parent)
    tmp = path.with_name(temporary_name(path.name))
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    try:
        yield tmp
        fsync_path(tmp)
        os.replace(tmp, path)
        fsync_path(path.parent)
    finally:
        tmp.unlink(missing_ok=True)


def write_text(path, text: str) -> Path:
    """Write ``text`` to ``path`` atomically (through :func:`atomic_path`): after a kill at any
    point the file holds the old text or the new, never part of either.

    Parameters
    ----------
    path : str or os.PathLike
        The file; its folder is created if missing.
    text : str
        What to write.

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    with atomic_path(path) as tmp:
        tmp.write_text(text)
    return Path(path)


def _csv_writer(frame):
    return lambda path: frame.to_csv(path, index=False, float_format="%.17g")


def _figure_writer(fig, dpi: int, fmt: str):
    return lambda path: fig.savefig(path, dpi=dpi, bbox_inches="tight", format=fmt)


def write_csv(path, frame) -> Path:
    """Write a pandas DataFrame as CSV (full float precision)."""
    with atomic_path(path) as tmp:
        _csv_writer(frame)(tmp)
    return Path(path)


def save_figure(fig, path, dpi: int = 150) -> Path:
    path = Path(path)
    with atomic_path(path) as tmp:
        _figure_writer(fig, dpi, path.suffix.lstrip(".") or "png")(tmp)
    return path


def cpu_model() -> str:
    """The processor's model name (``/proc/cpuinfo``; ``platform.processor()`` elsewhere)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def package_versions() -> dict:
    """Python, platform, CPU model, ``XLA_FLAGS`` and the versions of the packages the numbers
    depend on (``None`` for one not installed; JAX, jaxlib and optax for the training
    figures).

    ``sia-theory`` is :data:`sia_theory.__version__` of the code running, read at the time of
    the call, not the installed distribution's metadata: an editable install keeps the version
    it was installed at, and a checkout on ``PYTHONPATH`` has none of its own."""
    # start-up: importlib.metadata (30 ms), only when versions are recorded; sia_theory.cli
    # imports this module
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": sys.version.split()[0], "platform": platform.platform(),
           "cpu": cpu_model(), "xla_flags": os.environ.get("XLA_FLAGS", ""),
           "sia-theory": sia_theory.__version__}
    for name in ("numpy", "scipy", "sympy", "numba", "pandas", "matplotlib",
                 "jax", "jaxlib", "optax"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out


def metadata_text(*, training_environments=None, **params) -> str:
    """The JSON beside a figure: its parameters, seed, package versions and creation time.

    ``versions`` are those of the process writing the file (the one that drew the figure).
    ``training_environments``, for a figure drawn from trained runs: the distinct environments
    the runs were trained in, as each run recorded it when it trained
    (:func:`sia_theory.training.run.distinct_environments`); written as a top-level
    ``training_environments`` when given."""
    record = {
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "parameters": params,
        "versions": package_versions(),
    }
    if training_environments is not None:
        record["training_environments"] = list(training_environments)
    return json.dumps(record, indent=2, sort_keys=True, default=str) + "\n"


def write_metadata(path, *, training_environments=None, **params) -> Path:
    return write_text(path, metadata_text(training_environments=training_environments,
                                          **params))


def _frames(data) -> dict:
    """``data`` as ``{key: frame}``: a mapping of frames, a study result (its frames) or one
    frame (key ``""``)."""
    frames = getattr(data, "frames", data)
    return dict(frames) if isinstance(frames, Mapping) else {"": frames}


def experiment_files(stem: str, data) -> dict[str, str]:
    """The file names of a figure set by kind: ``figure`` (``stem.png``), ``data`` (``stem.csv``)
    or ``data_<key>`` (``stem_<key>.csv`` for each key of a dict of frames), ``metadata``
    (``stem.json``)."""
    names = {"figure": f"{stem}.png"}
    for key in _frames(data):
        names[f"data_{key}" if key else "data"] = f"{stem}_{key}.csv" if key else f"{stem}.csv"
    names["metadata"] = f"{stem}.json"
    return names


def save_experiment(out_dir, stem: str, fig, data, *, training_environments=None,
                    **params) -> dict:
    """Publish ``stem.png``, its data (``stem.csv``, or ``stem_<key>.csv`` for a mapping of
    frames or a study result's frames) and ``stem.json`` into ``out_dir`` as one set (with
    ``stem.manifest.json``); return the written paths by kind (``figure``, ``data`` /
    ``data_<key>``, ``metadata``, ``manifest``).

    ``stem.json`` holds ``params``, the creation time, :func:`package_versions` (of this
    process) and, for a figure of trained runs, their ``training_environments``
    (:func:`metadata_text`); the manifest the size and SHA-256 of each file and the
    ``sia-theory`` version that wrote the set (:data:`sia_theory.__version__` at write time;
    see :func:`write_set`)."""
    frames = _frames(data)
    names = experiment_files(stem, data)
    text = metadata_text(training_environments=training_environments, **params)
    writers = {names["figure"]: _figure_writer(fig, 150, "png")}
    for key, frame in frames.items():
        writers[names[f"data_{key}" if key else "data"]] = _csv_writer(frame)
    writers[names["metadata"]] = lambda path: path.write_text(text)
    paths = write_set(out_dir, stem, writers)
    written = {kind: paths[name] for kind, name in names.items()}
    written["manifest"] = Path(out_dir) / manifest_name(stem)
    return written
