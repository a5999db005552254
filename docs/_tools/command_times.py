"""Measure the times the pages state for documented commands: each command twice in a fresh
process, first with empty compilation caches (Numba's and JAX's, as on a first run after
installing) and then warm (the caches the first run filled), each time in an empty folder, and
write ``docs/_data/command_times.csv`` (wall and CPU seconds of each run, the load average
before it, the cores, the date and the commit).

    python docs/_tools/command_times.py            # measure, write the file
    python docs/_tools/command_times.py --check    # measure, compare with the file: exit 1 when
                                                   # a time moved by more than 2× either way

The pages quote the file as ``warm W s, first run F s`` after the command
(``tests/docs/test_command_times.py`` holds each quoted pair to the file, so a page cannot state a
time that was not measured). Measure on a quiet machine: the load average is recorded beside the
times. Timing is never asserted in tests.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import os
import re
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "docs" / "_data" / "command_times.csv"
FIELDS = ["key", "command", "pages", "first_wall_s", "first_cpu_s", "warm_wall_s", "warm_cpu_s",
          "load_before", "cores", "date", "commit"]

# key: (the command as the pages give it, the pages that quote its time, files it reads)
COMMANDS = {
    "analyze-bias": ("sia-theory analyze my_transform.py:bias --quick --out reports",
                     ("docs/getting-started.md", "docs/command-line.md"), ("my_transform.py",)),
    "analyze-logn": ("sia-theory analyze zoo:logn --quick --no-zoo --out reports",
                     ("docs/command-line.md",), ()),
    "check-two": ("sia-theory check --quick --only SI-7,CAS-3 --out build/checks",
                  ("docs/getting-started.md",), ()),
    "figure-quick": ("sia-theory figures --only si_fig2_entropy_scaling --quick --out build/figs",
                     ("docs/getting-started.md",), ()),
    "sweep-quick": ("sia-theory sweep phase-diagram --quick --rho 0.3",
                    ("docs/guide/sweeps.md",), ()),
    "model-8k": ("sia-theory analyze --model smollm2-135m --n-ctx 8192 --out smol8k",
                 ("docs/guide/model-report.md",), ()),
    "model-quick": ("sia-theory analyze --model smollm2-135m --n-ctx 2048 --quick --out smol2k",
                    ("docs/guide/model-report.md",), ()),
}


def quoted(row) -> str:
    """How a page quotes a row: ``warm W s, first run F s`` (one decimal)."""
    return f"warm {float(row['warm_wall_s']):.1f} s, first run {float(row['first_wall_s']):.1f} s"


def moved(old: float, new: float) -> bool:
    """A time that moved by more than 2× either way (``--check`` reports it)."""
    return not 0.5 <= new / old <= 2.0


def page_block(page: str, first_line: str) -> str:
    """The fenced code block of ``page`` whose first line is ``first_line``."""
    text = (ROOT / page).read_text()
    for block in re.findall(r"```\w*\n(.*?)```", text, re.S):
        if block.startswith(first_line):
            return block
    raise SystemExit(f"{page} has no code block starting {first_line!r}")


def _run(command: str, needs, caches: Path) -> tuple[float, float]:
    """Wall and CPU seconds (the child's user + system) of one run in an empty folder."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(caches / "numba"),
               XDG_CACHE_HOME=str(caches / "xdg"), PYTHONDONTWRITEBYTECODE="1")
    env.pop("SIA_THEORY_CACHE", None)
    env.pop("SIA_THEORY_JAX_CACHE", None)
    exe = Path(sys.executable).parent / "sia-theory"
    with tempfile.TemporaryDirectory() as folder:
        if "my_transform.py" in needs:
            Path(folder, "my_transform.py").write_text(
                page_block("docs/getting-started.md", "# my_transform.py"))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run([str(exe), *shlex.split(command)[1:], "--no-progress"],
                              cwd=folder, env=env, capture_output=True, text=True,
                              timeout=3600)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(f"{command!r} exited {done.returncode}: {done.stderr.strip()[-500:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(keys) -> list[dict]:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip()
    rows = []
    for key in keys:
        command, pages, needs = COMMANDS[key]
        with tempfile.TemporaryDirectory() as caches:
            load = os.getloadavg()[0]
            first = _run(command, needs, Path(caches))
            warm = _run(command, needs, Path(caches))
        rows.append({"key": key, "command": command, "pages": " ".join(pages),
                     "first_wall_s": f"{first[0]:.1f}", "first_cpu_s": f"{first[1]:.1f}",
                     "warm_wall_s": f"{warm[0]:.1f}", "warm_cpu_s": f"{warm[1]:.1f}",
                     "load_before": f"{load:.2f}", "cores": os.cpu_count(),
                     "date": datetime.date.today().isoformat(), "commit": commit})
        print(f"{key}: {quoted(rows[-1])} (load {load:.2f})", flush=True)
    return rows


def read() -> list[dict]:
    with open(OUT, newline="") as handle:
        return list(csv.DictReader(handle))


def write(rows) -> None:
    OUT.parent.mkdir(parents=True, exist_ok=True)
    tmp = OUT.with_suffix(".csv.tmp")
    with open(tmp, "w", newline="") as handle:
        writer = csv.DictWriter(handle, FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    os.replace(tmp, OUT)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="compare with the committed file instead of writing it")
    parser.add_argument("--only", nargs="+", choices=sorted(COMMANDS), default=sorted(COMMANDS))
    args = parser.parse_args(argv)
    rows = measure(args.only)
    if not args.check:
        old = {r["key"]: r for r in read()} if OUT.exists() else {}
        old.update({r["key"]: r for r in rows})
        write([old[k] for k in sorted(old)])
        return 0
    stale = []
    for row in rows:
        was = {r["key"]: r for r in read()}[row["key"]]
        for field in ("first_wall_s", "warm_wall_s"):
            if moved(float(was[field]), float(row[field])):
                stale.append(f"{row['key']} {field}: {was[field]} → {row[field]}")
    print("\n".join(stale) or "every time within 2× of the file")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
