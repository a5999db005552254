"""Progress bars only on a terminal: one helper (sia_theory._infra.progress) draws every bar,
on stderr, and only when stderr is a terminal."""

import io
import re
import sys
from pathlib import Path

from sia_theory._infra.progress import bars_shown, progress_bar
from sia_theory.sweeps import run_cells

ROOT = Path(__file__).resolve().parents[2]


class _Terminal(io.StringIO):
    def isatty(self):
        return True


class _Closed(io.StringIO):
    def isatty(self):
        raise ValueError("I/O operation on closed file")


def test_bars_are_shown_only_on_a_terminal():
    assert bars_shown(_Terminal()) and not bars_shown(io.StringIO())
    assert not bars_shown(_Closed()) and not bars_shown(object())


def test_a_bar_draws_on_a_terminal_and_nothing_elsewhere(monkeypatch):
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert list(progress_bar(range(3), desc="demo-bar")) == [0, 1, 2]
    assert "demo-bar" in terminal.getvalue() and "3/3" in terminal.getvalue()
    terminal.truncate(0)
    assert list(progress_bar(range(3), desc="demo-bar", enabled=False)) == [0, 1, 2]
    assert terminal.getvalue() == ""
    log = io.StringIO()  # a file or a pipe
    monkeypatch.setattr(sys, "stderr", log)
    assert list(progress_bar(range(3), desc="demo-bar")) == [0, 1, 2]
    assert log.getvalue() == ""


def test_a_sweep_with_progress_writes_no_bar_into_a_log(capfd):
    _, frames, _ = run_cells(lambda cell, seed: {"y": cell["x"]}, {"x": [1, 2, 3]}, seed=0,
                             scheduler="sync", progress=True, study="quiet-log")
    assert [f["y"].item() for f in frames] == [1, 2, 3]
    assert "quiet-log" not in capfd.readouterr().err


def test_every_bar_comes_from_the_one_helper():
    users = [p.relative_to(ROOT).as_posix()
             for folder in ("sia_theory", "paper_checks", "experiments", "benchmarks")
             for p in sorted((ROOT / folder).rglob("*.py"))
             if re.search(r"^\s*(from tqdm|import tqdm)", p.read_text(), re.M)]
    assert users == ["sia_theory/_infra/progress.py"]
