"""Publishing a *set* of result files so that a reader sees the old set or the new one, whole.

A set is what one run writes under one ``stem`` in one folder: ``stem.png``, ``stem*.csv`` and
``stem.json`` for a figure, ``claims.md`` and ``claims.csv`` for the claims table. The files stay
ordinary files at fixed paths (git and the README read them there); beside them
``<stem>.manifest.json`` lists every file of the set with its size and SHA-256, and under
``sia-theory`` the version of the package that wrote the set (``sia_theory.__version__`` at
write time; manifests written before 0.4.0 lack it).

How a set is written (``write_set``):

1. **stage** — every file is written into a fresh hidden folder ``.<stem>.<pid>-<token>.tmp`` in
   the same folder, fsync'ed, then the new manifest and the list of old files the new set drops;
2. **commit** — that folder is renamed to ``.<stem>.<pid>-<token>.pending`` (one atomic
   ``rename``) and the parent folder fsync'ed. Before this step the old set is untouched; after
   it the new set is decided and complete on disk;
3. **publish** — each file is moved onto its final path with ``os.replace``, the manifest last,
   then the old files the new set drops are deleted and the pending folder removed.

Step 3 is idempotent, so an interrupted publish is finished (*rolled forward*) by the next
``write_set`` or ``recover_sets`` in that folder; a staging folder or temporary file whose
writer is dead is deleted. Writers are recognised by the pid in the name (a folder or file of a
live process is never touched), so only our own names are removed and nothing needs hiding
from git.

**Guarantee.** Let the old set be the one named by ``<stem>.manifest.json`` before a run. If
the run's process dies at any point (SIGKILL included), ``read_set(folder, stem)`` returns exactly
the complete old set (killed before the commit) or exactly the complete new set (killed after
it), every file checked against the manifest's SHA-256; it never returns a mix. Plain reads of
the fixed paths are consistent once the run has finished, or once the next run (or
``recover_sets``) has rolled a killed publish forward; in the window between a kill during
step 3 and that recovery, only ``read_set`` is guaranteed. A set without a manifest, or whose
files do not match it, is treated as absent (``SetNotFoundError``). One writer per stem and
folder at a time; writers of different stems may share a folder. Files and the commit are
fsync'ed, so the committed set also survives a power cut; the guarantee tested is process death.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import sia_theory

__all__ = ["SetNotFoundError", "manifest_name", "write_set", "read_set", "recover_sets",
           "temporary_name", "step_hook", "file_sha256"]

# Our temporary names: ".<name>.<pid>-<8 hex>.tmp" (staging folders and single-file temporaries)
# and ".<stem>.<pid>-<8 hex>.pending" (committed sets being published).
_OWN_NAME = re.compile(
    r"^\.(?P<name>.+)\.(?P<pid>\d+)-(?P<token>[0-9a-f]{8})\.(?P<kind>tmp|pending)$")
_DROPPED = "dropped.json"  # inside a staging/pending folder: old files the new set removes

#: For tests only: if set, called as ``step_hook(step, label)`` after each step of
#: ``write_set`` (step = 1, 2, ...), e.g. to SIGKILL the process at step k.
step_hook: Callable[[int, str], None] | None = None


class SetNotFoundError(FileNotFoundError):
    """No complete set: no manifest, or files that do not match it."""


def manifest_name(stem: str) -> str:
    return f"{stem}.manifest.json"


def temporary_name(name: str, kind: str = "tmp") -> str:
    """A fresh hidden name ``.<name>.<pid>-<token>.<kind>`` that ``recover_sets`` recognises."""
    return f".{name}.{os.getpid()}-{secrets.token_hex(4)}.{kind}"


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    except OverflowError:
        return False
    return True


def fsync_path(path) -> None:
    """fsync a file or folder (so a rename of it, or within it, survives a power cut)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def file_sha256(path) -> str:
    """The hex SHA-256 of the file at ``path`` (read in blocks of 1 MiB)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _check_names(stem: str, names) -> None:
    if not isinstance(stem, str) or not stem or "/" in stem or stem.startswith("."):
        raise ValueError(f"stem must be a non-empty file name not starting with '.', got {stem!r}")
    for name in names:
        if (not isinstance(name, str) or not name or "/" in name or name.startswith(".")
                or name == manifest_name(stem)):
            raise ValueError(f"file name {name!r} of set {stem!r} must be a plain file name, not "
                             "hidden and not the manifest")


def _load_json(path: Path):
    try:
        return json.loads(path.read_text())
    except (FileNotFoundError, NotADirectoryError, json.JSONDecodeError, UnicodeDecodeError):
        return None


def _publish(folder: Path, pending: Path, stem: str) -> None:
    """Step 3: move a committed set into place. Idempotent: safe to repeat after a kill."""
    manifest = _load_json(pending / manifest_name(stem))
    if manifest is not None:  # None: this very step already moved the manifest
        for name in manifest["files"]:
            _replace_if_present(pending / name, folder / name, stem, f"published {name}")
        _replace_if_present(pending / manifest_name(stem), folder / manifest_name(stem), stem,
                            "published manifest")
    for name in _load_json(pending / _DROPPED) or []:
        (folder / name).unlink(missing_ok=True)
        _step(f"dropped {name}")
    shutil.rmtree(pending, ignore_errors=True)
    fsync_path(folder)
    _step("cleaned")


def _replace_if_present(src: Path, dst: Path, stem: str, label: str) -> None:
    try:
        os.replace(src, dst)
    except FileNotFoundError:  # moved already (by a run that was killed after this move)
        return
    _step(label)


_counter = [0]


def _step(label: str) -> None:
    _counter[0] += 1
    if step_hook is not None:
        step_hook(_counter[0], label)


def recover_sets(folder) -> None:
    """Finish what killed writers left in ``folder``: publish their committed sets (roll
    forward) and delete their staging folders and temporary files. Names of live processes
    and names that are not ours are left alone."""
    folder = Path(folder)
    try:
        entries = sorted(os.listdir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return
    for entry in entries:
        match = _OWN_NAME.match(entry)
        if match is None or _alive(int(match["pid"])):
            continue
        path = folder / entry
        if match["kind"] == "pending" and path.is_dir():
            _publish(folder, path, match["name"])
        elif path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


def write_set(folder, stem: str, writers: dict) -> dict[str, Path]:
    """Write the files ``writers`` names (``{file name: fn(path)}``, each ``fn`` writing one
    file at the path it is given) as one set under ``stem`` in ``folder``; return the final
    paths by file name. See the module docstring for the steps and the guarantee."""
    _check_names(stem, writers)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    recover_sets(folder)
    _counter[0] = 0
    staging = folder / temporary_name(stem)
    staging.mkdir()
    try:
        files = {}
        for name, write in writers.items():
            write(staging / name)
            fsync_path(staging / name)
            files[name] = {"bytes": (staging / name).stat().st_size,
                           "sha256": file_sha256(staging / name)}
            _step(f"staged {name}")
        old = _load_json(folder / manifest_name(stem))
        old_names = list(old["files"]) if isinstance(old, dict) and "files" in old else []
        dropped = [n for n in old_names if isinstance(n, str) and n not in files and n
                   and "/" not in n and not n.startswith(".") and n != manifest_name(stem)]
        (staging / _DROPPED).write_text(json.dumps(dropped) + "\n")
        fsync_path(staging / _DROPPED)
        text = json.dumps({"stem": stem, "files": files, "sia-theory": sia_theory.__version__},
                          indent=2, sort_keys=True) + "\n"
        (staging / manifest_name(stem)).write_text(text)
        fsync_path(staging / manifest_name(stem))
        fsync_path(staging)
        _step("staged manifest")
        pending = staging.with_name(staging.name[: -len(".tmp")] + ".pending")
        os.rename(staging, pending)  # the commit point
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    fsync_path(folder)
    _step("committed")
    _publish(folder, pending, stem)
    return {name: folder / name for name in writers}


def _candidates(folder: Path, stem: str):
    """Where the newest committed set can be read: a pending folder of ``stem`` (publish under
    way or interrupted) overlaid on the folder, else the folder alone."""
    pending = []
    try:
        for entry in os.listdir(folder):
            match = _OWN_NAME.match(entry)
            if match and match["kind"] == "pending" and match["name"] == stem:
                pending.append(folder / entry)
    except (FileNotFoundError, NotADirectoryError):
        raise SetNotFoundError(f"no folder {folder}") from None
    if len(pending) > 1:
        raise SetNotFoundError(f"{len(pending)} concurrent publications of {stem!r} in {folder}")
    return pending[0] if pending else None


def _read_once(folder: Path, stem: str) -> dict[str, bytes] | None:
    pending = _candidates(folder, stem)
    manifest = _load_json(pending / manifest_name(stem)) if pending else None
    if manifest is None:  # no publication under way, or its manifest is already in place
        manifest = _load_json(folder / manifest_name(stem))
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        return None
    out = {}
    for name, entry in manifest["files"].items():
        data = None
        for place in ([pending / name] if pending else []) + [folder / name]:
            try:
                data = place.read_bytes()
            except (FileNotFoundError, NotADirectoryError):
                continue
            break
        if data is None or hashlib.sha256(data).hexdigest() != entry.get("sha256"):
            return None
        out[name] = data
    return out


def read_set(folder, stem: str, *, attempts: int = 5) -> dict[str, bytes]:
    """The complete set ``stem`` in ``folder`` as ``{file name: bytes}``, every file checked
    against the manifest; ``SetNotFoundError`` if there is none. Never mutates the folder.

    With no writer running the answer is decided in one pass; while a writer publishes, a pass
    can see files move and is retried (``attempts`` passes, 50 ms apart)."""
    folder = Path(folder)
    for attempt in range(attempts):
        found = _read_once(folder, stem)
        if found is not None:
            return found
        if attempt + 1 < attempts:
            time.sleep(0.05)
    raise SetNotFoundError(f"no complete set {stem!r} in {folder} (no manifest "
                           f"{manifest_name(stem)}, or files that do not match it)")
