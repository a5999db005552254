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


class _Clock:
    """A clock the test moves by hand (seconds)."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_a_long_stage_logs_plain_lines_on_a_non_terminal():
    """No bar in a log, but signs of life: nothing for a stage shorter than LOG_FIRST, then one
    line once it has run LOG_FIRST seconds, at most one per LOG_EVERY seconds after, and one
    at its end: what, how many of how many, elapsed."""
    from sia_theory._infra.progress import LOG_EVERY, LOG_FIRST, LogLines

    log, clock = io.StringIO(), _Clock()
    quick = LogLines(total=3, desc="quick", unit="cell", stream=log, clock=clock)
    for _ in range(3):
        clock.now += 1.0
        quick.update()
    quick.close()
    assert log.getvalue() == ""  # 3 s: shorter than LOG_FIRST
    clock.now = 0.0
    slow = LogLines(total=40, desc="paper checks", unit="claim", stream=log, clock=clock)
    for _ in range(40):
        clock.now += 2.0  # 80 s in all
        slow.update()
    slow.close()
    lines = log.getvalue().splitlines()
    assert lines[0] == f"paper checks: {int(LOG_FIRST // 2)}/40 claims ({LOG_FIRST / 80:.0%}), " \
                       f"{int(LOG_FIRST)} s"
    assert lines[-1] == "paper checks: 40/40 claims (100%), 1 min 20 s"
    assert len(lines) == 2 + int((80 - LOG_FIRST) // LOG_EVERY)  # first, every 30 s, the end


def test_progress_bar_logs_on_a_non_terminal_unless_hidden_or_disabled(monkeypatch):
    from sia_theory._infra.progress import LogLines, bars_hidden

    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert not isinstance(progress_bar(total=5, desc="x"), LogLines)  # a library call: silent
    with bars_hidden(False):  # a command runs (sia-theory, an experiment script)
        assert isinstance(progress_bar(total=5, desc="x"), LogLines)
        assert not isinstance(progress_bar(total=5, desc="x", enabled=False), LogLines)
    with bars_hidden():  # a command's --no-progress silences the lines too
        assert not isinstance(progress_bar(total=5, desc="x"), LogLines)
    monkeypatch.setattr(sys, "stderr", _Terminal())
    with bars_hidden(False):
        assert not isinstance(progress_bar(total=5, desc="x"), LogLines)
