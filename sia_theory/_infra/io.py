"""Writing results so that nothing already on disk is lost or left half-written.

Every file goes to a temporary sibling first and is moved into place with ``os.replace``, which
is atomic on POSIX: a crash or a bad argument leaves the previous figure and data untouched.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import tempfile
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path


@contextmanager
def atomic_path(path):
    """Yield a temporary path beside ``path``; move it onto ``path`` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_text(path, text: str) -> Path:
    with atomic_path(path) as tmp:
        tmp.write_text(text)
    return Path(path)


def write_csv(path, frame) -> Path:
    """Write a pandas DataFrame as CSV (full float precision)."""
    with atomic_path(path) as tmp:
        frame.to_csv(tmp, index=False, float_format="%.17g")
    return Path(path)


def save_figure(fig, path, dpi: int = 150) -> Path:
    path = Path(path)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=dpi, bbox_inches="tight", format=path.suffix.lstrip(".") or "png")
    return path


def package_versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": sys.version.split()[0], "platform": platform.platform()}
    for name in ("sia-theory", "numpy", "scipy", "sympy", "numba", "pandas", "matplotlib"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out


def write_metadata(path, **params) -> Path:
    """JSON beside a figure: its parameters, seed, package versions and creation time."""
    record = {
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "parameters": params,
        "versions": package_versions(),
    }
    return write_text(path, json.dumps(record, indent=2, sort_keys=True, default=str) + "\n")


def save_experiment(out_dir, stem: str, fig, data, **params) -> dict:
    """Write ``stem.png``, its data (``stem.csv``, or ``stem_<key>.csv`` for a dict of frames)
    and ``stem.json`` into ``out_dir``; return the written paths by kind."""
    out_dir = Path(out_dir)
    frames = data if isinstance(data, dict) else {"": data}
    written = {"figure": save_figure(fig, out_dir / f"{stem}.png")}
    for key, frame in frames.items():
        name = f"{stem}_{key}.csv" if key else f"{stem}.csv"
        written[f"data{'_' + key if key else ''}"] = write_csv(out_dir / name, frame)
    written["metadata"] = write_metadata(out_dir / f"{stem}.json", **params)
    return written
