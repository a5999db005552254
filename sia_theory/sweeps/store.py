"""The sweep store: a folder holding a Parquet dataset, one file per finished cell.

Layout of ``store``::

    sweep.json              the study name and sweep seed the store belongs to
    cells/<stem>.parquet    one finished cell: fn's rows, then the cell's parameters (those not
                            already output columns), ``cell_key`` and ``cell_seed``
    cells/<stem>.<name>     files the cell returned beside its rows (``CellOutput.files``, e.g.
                            ``parameters.safetensors``), written before the Parquet file, so a
                            cell counts as finished only once all of them are in place; the
                            Parquet file records each one's SHA-256, and a cell whose file is
                            missing or differs (damaged) counts as unfinished: it runs again
    errors/<stem>.json      one failed cell: parameters, key, seed, error line and traceback
    data.parquet            every finished cell's rows in one table, for pandas, pyarrow and
                            others to read as it is (:mod:`sia_theory.sweeps.dataset`)

``<stem>`` is a hash of the cell key (:func:`sia_theory.sweeps.grid.file_stem`); the key itself is
in the file. Every file is written to a hidden temporary sibling and moved into place with
``os.replace`` (atomic on POSIX), so a killed sweep leaves only whole cells behind; permissions
are those of ``open`` (``0o666 & ~umask``, 0644 under umask 022). One sweep at a time per store.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

import pandas as pd
import pyarrow as pa

from .._infra.cli import check_output_dir
from .._infra.fileset import fsync_path, recover_sets, temporary_name

__all__ = ["CELL_COLUMNS", "check_store", "read_finished", "open_store", "finished_stems",
           "write_cell", "read_cell",
           "read_cell_files", "check_file_names", "write_error", "clear_error", "load_sweep",
           "load_errors", "atomic_write", "existing_store"]

CELL_COLUMNS = ("cell_key", "cell_seed")
"""The columns the store adds to each row a cell returns."""
_ADDED = b"sia_theory.sweeps.added"  # Parquet metadata: the columns the store added to fn's rows
_DIGESTS = b"sia_theory.sweeps.files"  # Parquet metadata: {file name: SHA-256} of the cell's files
_MANIFEST = "sweep.json"


def atomic_write(path: Path, write, durable: bool = True) -> None:
    """``write(tmp)`` then ``os.replace(tmp, path)``; the temporary file is created with mode
    ``0o666`` so the umask applies. ``durable`` fsyncs the file first (survives a power cut, not
    only a kill); cell files skip it (a few ms each) because an unreadable cell file is simply
    computed again."""
    tmp = path.with_name(temporary_name(path.name))
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    try:
        write(tmp)
        if durable:
            fsync_path(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def check_store(store, *, study: str, seed: int) -> Path:
    """``store`` as a Path if it can hold the sweep ``(study, seed)`` (absent, empty, or made by
    that sweep), else ``ValueError``; nothing is written."""
    root = Path(os.fspath(store))
    if root.exists() and not root.is_dir():
        raise ValueError(f"store must be a folder, got the file {str(root)!r}")
    try:  # a file on the way, or a folder that cannot be written: before any cell runs
        check_output_dir(root)
    except ValueError as err:
        raise ValueError(f"store: {err}") from None
    _check_manifest(root, study, seed, "; use another store folder")
    return root


def _check_manifest(root: Path, study: str, seed: int, hint: str = "") -> None:
    """``ValueError`` if ``root`` holds a sweep of another ``(study, seed)`` or an unreadable
    manifest (a folder without one passes)."""
    manifest = root / _MANIFEST
    if not manifest.is_file():
        return
    try:
        held = json.loads(manifest.read_text())
    except (OSError, ValueError) as err:
        raise ValueError(f"store {str(root)!r} has an unreadable {_MANIFEST}: {err}") from None
    if held.get("study") != study or held.get("seed") != seed:
        raise ValueError(f"store {str(root)!r} holds the sweep study={held.get('study')!r} "
                         f"seed={held.get('seed')!r}, not study={study!r} seed={seed}{hint}")


def read_finished(store, stems, *, study: str, seed: int, with_files: bool = False):
    """Read-only: ``(frames, files)`` of the cells ``stems`` finished in ``store`` (``None`` for
    the others; ``files`` ``None`` unless ``with_files``). Nothing is written or removed, not
    even a probe file, so a store another process is still filling can be read;
    ``ValueError`` if ``store`` holds another sweep than ``(study, seed)``."""
    root = Path(os.fspath(store))
    _check_manifest(root, study, seed)
    done = finished_stems(root)
    frames = [read_cell(root, s) if s in done else None for s in stems]
    files = [read_cell_files(root, s) if with_files and f is not None else None
             for s, f in zip(stems, frames, strict=True)]
    return frames, files


def open_store(store, *, study: str, seed: int) -> Path:
    """Create ``store`` (after :func:`check_store`) and remove what a killed writer left."""
    root = check_store(store, study=study, seed=seed)
    manifest = root / _MANIFEST
    for sub in ("cells", "errors"):
        (root / sub).mkdir(parents=True, exist_ok=True)
        recover_sets(root / sub)
    if not manifest.exists():
        text = json.dumps({"study": study, "seed": seed, "format": 1}, indent=2) + "\n"
        atomic_write(manifest, lambda tmp: tmp.write_text(text))
    return root


def finished_stems(root: Path) -> set[str]:
    """The file stems of the cells finished in the store at ``root``."""
    if not (root / "cells").is_dir():
        return set()
    return {p.name[:-len(".parquet")] for p in (root / "cells").glob("*.parquet")
            if not p.name.startswith(".")}


def stored_frame(frame: pd.DataFrame, cell: dict, key: str, seed: int):
    """fn's rows with the parameters not already among its columns, ``cell_key`` and
    ``cell_seed`` appended; and the names of the appended columns."""
    out = frame.copy()
    added = [name for name in cell if name not in out.columns]
    for name in added:
        out[name] = cell[name]
    for name in CELL_COLUMNS:
        if name in out.columns:
            raise ValueError(f"fn must not return a column named {name!r} (the store's own)")
    out["cell_key"], out["cell_seed"] = key, seed
    return out, [*added, *CELL_COLUMNS]


_FILE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")


def check_file_names(files) -> dict:
    """``files`` as a dict ``{name: bytes}``; a name is letters, digits, ``_ . -`` (not starting
    with a dot, not ending in ``.parquet``), a value is bytes. ``TypeError`` otherwise."""
    if not isinstance(files, dict):
        raise TypeError(f"CellOutput.files must be a dict of name -> bytes, got "
                        f"{type(files).__name__}")
    for name, data in files.items():
        if (not isinstance(name, str) or not _FILE_NAME.fullmatch(name)
                or name.endswith(".parquet")):
            raise TypeError(f"CellOutput.files: bad file name {name!r} (letters, digits, _ . -; "
                            "not *.parquet)")
        if not isinstance(data, bytes | bytearray):
            raise TypeError(f"CellOutput.files[{name!r}] must be bytes, got "
                            f"{type(data).__name__}")
    return {name: bytes(data) for name, data in files.items()}


def write_cell(root: Path, stem: str, frame: pd.DataFrame, cell: dict, key: str,
               seed: int, files: dict | None = None) -> None:
    """Write a finished cell: its ``files`` (``{name: bytes}``) first, then its rows."""
    # start-up: pyarrow.parquet (85 ms), only when cells are written or read
    import pyarrow.parquet as pq

    for name, data in (files or {}).items():
        atomic_write(root / "cells" / f"{stem}.{name}", lambda tmp, d=data: tmp.write_bytes(d),
                      durable=False)
    for name in CELL_COLUMNS:
        if name in frame.columns:
            raise ValueError(f"fn must not return a column named {name!r} (the store's own)")
    table = pa.Table.from_pandas(frame, preserve_index=False)  # the columns of stored_frame,
    added = [name for name in cell if name not in frame.columns]  # built in arrow (faster)
    for name, value in [*((n, cell[n]) for n in added), ("cell_key", key), ("cell_seed", seed)]:
        table = table.append_column(name, pa.array([value] * len(frame),
                                                   pa.int64() if name == "cell_seed" else None))
    added = [*added, *CELL_COLUMNS]
    digests = {name: hashlib.sha256(data).hexdigest() for name, data in (files or {}).items()}
    table = table.replace_schema_metadata({**(table.schema.metadata or {}),
                                           _ADDED: json.dumps(added).encode(),
                                           _DIGESTS: json.dumps(digests).encode()})
    atomic_write(root / "cells" / f"{stem}.parquet", lambda tmp: pq.write_table(table, tmp),
                  durable=False)
    clear_error(root, stem)


def _read(path: Path, with_digests: bool = False):
    # start-up: pyarrow.parquet (85 ms), only when cells are written or read
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    metadata = table.schema.metadata or {}
    added = json.loads(metadata.get(_ADDED, b"[]"))
    if with_digests:  # stores written before digests were recorded: {} (nothing checked)
        return table.to_pandas(), added, json.loads(metadata.get(_DIGESTS, b"{}"))
    return table.to_pandas(), added


def _files_intact(root: Path, stem: str, digests: dict) -> bool:
    for name, digest in digests.items():
        try:
            data = (root / "cells" / f"{stem}.{name}").read_bytes()
        except OSError:
            return False
        if hashlib.sha256(data).hexdigest() != digest:
            return False
    return True


def read_cell(root: Path, stem: str) -> pd.DataFrame | None:
    """fn's rows of a finished cell, exactly as fn returned them (added columns removed), or
    ``None`` if the file cannot be read (cut short by a power loss) or one of the cell's files
    is missing or not the one written with it (damaged): the cell runs again."""
    try:
        frame, added, digests = _read(root / "cells" / f"{stem}.parquet", with_digests=True)
        if not isinstance(digests, dict):
            return None
    except (OSError, pa.ArrowException, ValueError):
        return None
    if not _files_intact(root, stem, digests):
        return None
    return frame.drop(columns=added)


def read_cell_files(root: Path, stem: str) -> dict:
    """The files stored beside a finished cell, ``{name: bytes}`` (empty if it has none)."""
    prefix = f"{stem}."
    return {p.name[len(prefix):]: p.read_bytes()
            for p in sorted((root / "cells").glob(f"{stem}.*"))
            if not p.name.startswith(".") and not p.name.endswith(".parquet")}


def write_error(root: Path, stem: str, cell: dict, key: str, seed: int, error: str,
                trace: str) -> None:
    """Record a failed cell (its parameters, error and traceback) in ``root/errors/``."""
    record = {"cell": cell, "cell_key": key, "cell_seed": seed, "error": error,
              "traceback": trace}
    text = json.dumps(record, indent=2, default=str) + "\n"
    atomic_write(root / "errors" / f"{stem}.json", lambda tmp: tmp.write_text(text),
                  durable=False)


def clear_error(root: Path, stem: str) -> None:
    """Remove a cell's error record (it has now finished)."""
    (root / "errors" / f"{stem}.json").unlink(missing_ok=True)


def existing_store(store) -> Path:
    """``store`` as a Path if it holds a sweep (its manifest), else ``ValueError``."""
    root = Path(os.fspath(store))
    if not (root / _MANIFEST).is_file():
        raise ValueError(f"store {str(root)!r} is not a sweep store (no {_MANIFEST})")
    return root


def load_sweep(store) -> pd.DataFrame:
    """Every finished cell of ``store`` as one DataFrame (cells in order of their key; within a
    cell, fn's rows in order), with the parameter, ``cell_key`` and ``cell_seed`` columns.

    Parameters
    ----------
    store : str or os.PathLike
        The folder of a sweep store (written by :func:`~sia_theory.sweeps.engine.sweep`).

    Returns
    -------
    pandas.DataFrame
        One row per row of each finished cell; no rows (the cell columns) if none finished.

    Raises
    ------
    ValueError
        If ``store`` is not a sweep store (it has no manifest).

    Examples
    --------
    >>> from sia_theory import load_sweep, sweep
    >>> def cell(params, rng_seed):
    ...     return {"square": params["x"] ** 2}
    >>> _ = sweep(cell, {"x": [1, 2, 3]}, store="squares", seed=0, scheduler="sync",
    ...           progress=False)
    >>> load_sweep("squares")[["x", "square"]].to_dict("list")  # read back from the files
    {'x': [1, 2, 3], 'square': [1, 4, 9]}
    """
    root = existing_store(store)
    paths = sorted(p for p in (root / "cells").glob("*.parquet") if not p.name.startswith("."))
    frames = [_read(p)[0] for p in paths]
    if not frames:
        return pd.DataFrame(columns=list(CELL_COLUMNS))
    frames.sort(key=lambda f: f["cell_key"].iloc[0] if len(f) else "")
    return pd.concat(frames, ignore_index=True)


def load_errors(store) -> pd.DataFrame:
    """The failed cells of ``store``: ``cell_key, cell_seed, error, traceback`` and the
    parameters."""
    root = existing_store(store)
    rows = []
    for path in sorted((root / "errors").glob("*.json")):
        if path.name.startswith("."):
            continue
        record = json.loads(path.read_text())
        rows.append({**record["cell"], "cell_key": record["cell_key"],
                     "cell_seed": record["cell_seed"], "error": record["error"],
                     "traceback": record["traceback"]})
    return pd.DataFrame(rows, columns=None if rows else ["cell_key", "cell_seed", "error",
                                                           "traceback"])
