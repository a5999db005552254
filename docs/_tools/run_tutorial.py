"""Run one tutorial script cell by cell and record what a reader would see.

Usage: ``python docs/_tools/run_tutorial.py SCRIPT OUT_DIR``. A tutorial is a plain Python file
in the percent format (``# %%`` starts a code cell, ``# %% [markdown]`` a prose cell whose lines
are comments), so it also runs as ``python SCRIPT``. The cells run in order in one namespace;
each code cell's printed output is captured, and every matplotlib figure open at its end is
saved as a PNG and closed. The result is ``OUT_DIR/cells.json`` (kind, source, output, images,
seconds per cell) beside the PNGs, and the same as a Jupyter notebook with its outputs,
``OUT_DIR/<script stem>.ipynb`` (:func:`notebook`), which the site offers for download. A
cell that raises stops the run: its traceback goes to stderr and the exit status is 1, which
fails the site build. A missing script or an output
path that is (or is inside) a file is one line on stderr and exit status 2, before anything
is created.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import sys
import time
import traceback
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")

MARKER = re.compile(r"^# %%(?P<rest>.*)$")


def parse_cells(text: str) -> list[dict]:
    """Cells of a percent-format script: ``{"kind": "markdown"|"code", "source": str}``."""
    cells, kind, lines = [], None, []

    def flush():
        source = "\n".join(lines).strip("\n")
        if kind == "markdown":
            source = "\n".join(re.sub(r"^# ?", "", line) for line in source.splitlines())
        if source.strip():
            cells.append({"kind": kind, "source": source})

    for line in text.splitlines():
        match = MARKER.match(line)
        if match:
            if kind is not None:
                flush()
            kind, lines = ("markdown" if "[markdown]" in match["rest"] else "code"), []
        elif kind is not None:
            lines.append(line)
    if kind is not None:
        flush()
    return cells


def run(script: Path, out_dir: Path) -> int:
    out_dir.mkdir(parents=True, exist_ok=True)
    cells = parse_cells(script.read_text())
    namespace = {"__name__": "__main__", "__file__": str(script)}
    plt = None
    started = time.perf_counter()
    for index, cell in enumerate(cells):
        cell["output"], cell["images"], cell["seconds"] = "", [], 0.0
        if cell["kind"] != "code":
            continue
        buffer = io.StringIO()
        start = time.perf_counter()
        try:
            with contextlib.redirect_stdout(buffer):
                exec(compile(cell["source"], f"{script.name}, cell {index}", "exec"), namespace)
        except BaseException:  # noqa: BLE001 - any failure fails the build, with its traceback
            sys.stderr.write(f"{script.name}: cell {index} failed:\n{cell['source']}\n\n")
            sys.stderr.write(buffer.getvalue())
            traceback.print_exc()
            return 1
        cell["seconds"] = round(time.perf_counter() - start, 2)
        cell["output"] = buffer.getvalue()
        if "matplotlib.pyplot" in sys.modules:
            plt = sys.modules["matplotlib.pyplot"]
        if plt is not None:
            for number in plt.get_fignums():
                name = f"{script.stem}_{index}_{number}.png"
                plt.figure(number).savefig(out_dir / name, dpi=90, bbox_inches="tight")
                cell["images"].append(name)
            plt.close("all")
    total = round(time.perf_counter() - started, 2)
    record = {"script": script.name, "seconds": total, "cells": cells}
    (out_dir / "cells.json").write_text(json.dumps(record, indent=1))
    (out_dir / f"{script.stem}.ipynb").write_text(json.dumps(notebook(record, out_dir),
                                                             indent=1) + "\n")
    print(f"{script.name}: {total:.1f} s")
    return 0


def notebook(record: dict, images: Path) -> dict:
    """The executed tutorial ``record`` (the ``cells.json`` of :func:`run`) as a Jupyter
    notebook (nbformat 4.5, as JSON-able dict): prose cells as markdown, code cells with their
    printed output as a ``stream`` and each figure (a PNG in ``images``) as ``display_data``, so
    the download shows what the page shows and runs again cell by cell."""
    import base64

    cells = []
    count = 0
    for index, cell in enumerate(record["cells"]):
        entry = {"id": f"cell-{index}", "cell_type": cell["kind"], "metadata": {},
                 "source": cell["source"].splitlines(keepends=True)}
        if cell["kind"] == "code":
            count += 1
            outputs = []
            if cell.get("output"):
                outputs.append({"output_type": "stream", "name": "stdout",
                                "text": cell["output"].splitlines(keepends=True)})
            for name in cell.get("images", []):
                data = base64.b64encode((images / name).read_bytes()).decode("ascii")
                outputs.append({"output_type": "display_data", "metadata": {},
                                "data": {"image/png": data, "text/plain": ["<Figure>"]}})
            entry.update(execution_count=count, outputs=outputs)
        cells.append(entry)
    return {"nbformat": 4, "nbformat_minor": 5, "cells": cells,
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                        "language": "python"},
                         "language_info": {"name": "python"}}}


def check_arguments(script: Path, out_dir: Path) -> str | None:
    """Why ``script`` cannot be run into ``out_dir`` (one line), or ``None``: the script must
    be a readable file and ``out_dir`` a folder or a path whose nearest existing ancestor is
    one. Nothing is created."""
    if not script.is_file():
        return f"script {str(script)!r} is not a file"
    if not os.access(script, os.R_OK):
        return f"script {str(script)!r} cannot be read"
    probe = out_dir
    while not os.path.lexists(probe) and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir():
        where = "is" if probe == out_dir else "would be inside"
        return f"output folder {str(out_dir)!r} {where} {str(probe)!r}, which is not a folder"
    if not os.access(probe, os.W_OK | os.X_OK):
        return f"output folder {str(out_dir)!r}: {str(probe)!r} is not writable"
    return None


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python docs/_tools/run_tutorial.py SCRIPT OUT_DIR", file=sys.stderr)
        return 2
    script, out_dir = Path(argv[0]).resolve(), Path(argv[1]).resolve()
    problem = check_arguments(script, out_dir)
    if problem is not None:
        print(f"run_tutorial: {problem}", file=sys.stderr)
        return 2
    return run(script, out_dir)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
