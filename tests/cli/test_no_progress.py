"""``--no-progress`` on every command that can draw a progress bar: each ``sia-theory``
subcommand that runs long work and every experiment script (through ``experiment_parser``)
accepts it, and it hides every bar of the process while the work runs, even on a terminal.
Parse-only: nothing long is run."""

import io
import subprocess
import sys
from pathlib import Path

import pytest

import sia_theory.cli as command
import sia_theory.cli.figures as cli_figures
from sia_theory._infra.cli import experiment_parser, run
from sia_theory._infra.progress import bars_hidden, bars_shown
from sia_theory.cli.main import build_parser
from sia_theory.cli.sweep import settings_parser
from sia_theory.studies import SWEEPABLE, get_study

ROOT = Path(__file__).resolve().parents[2]


class _Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("argv", [
    ["figures", "--quick"], ["check", "--quick"], ["analyze", "zoo:si"],
    ["train", "--scheme", "si-p-rope", "--quick"]])
def test_every_long_subcommand_accepts_no_progress(argv):
    parser = build_parser()
    assert parser.parse_args([*argv, "--no-progress"]).no_progress is True
    assert parser.parse_args(argv).no_progress is False


@pytest.mark.parametrize("name", SWEEPABLE)
def test_every_study_sweep_accepts_no_progress(name):
    """``sweep STUDY`` hands its flags to the study's own parser."""
    parser = settings_parser(get_study(name), f"sia-theory sweep {name}")
    assert parser.parse_args(["--no-progress"]).no_progress is True


def test_bars_hidden_hides_bars_on_a_terminal_and_restores():
    terminal = _Terminal()
    assert bars_shown(terminal)
    with bars_hidden():
        assert not bars_shown(terminal)
        with bars_hidden(False):  # an inner "no" does not show them again
            assert not bars_shown(terminal)
    assert bars_shown(terminal)
    with bars_hidden(False):
        assert bars_shown(terminal)


def test_experiment_scripts_take_no_progress_and_main_runs_without_bars(monkeypatch, tmp_path):
    assert experiment_parser("d").parse_args(["--no-progress"]).no_progress is True
    monkeypatch.setattr(sys, "stderr", _Terminal())
    seen = []
    assert run(lambda **kw: seen.append((kw, bars_shown())), "demo",
               argv=["--no-progress", "--out", str(tmp_path)]) == 0
    assert run(lambda **kw: seen.append((kw, bars_shown())), "demo",
               argv=["--out", str(tmp_path)]) == 0
    plain = {"quick": False, "seed": 0, "out_dir": tmp_path}  # the flag is not main's
    assert seen == [(plain, False), (plain, True)]


def test_a_subcommand_handler_runs_without_bars(monkeypatch):
    monkeypatch.setattr(sys, "stderr", _Terminal())
    seen = []
    monkeypatch.setattr(cli_figures, "run_scripts",
                        lambda scripts, extra: seen.append((extra, bars_shown())) or 0)
    monkeypatch.setattr(cli_figures, "select_scripts", lambda available, only, what: [])
    assert command.main(["figures", "--quick", "--no-progress"]) == 0
    assert command.main(["figures", "--quick"]) == 0
    (with_flag, hidden), (without, shown) = seen
    assert "--no-progress" in with_flag and not hidden  # passed on to each script too
    assert "--no-progress" not in without and shown


@pytest.mark.parametrize("script", ["inattention_memory.py", "model_passkey.py",
                                    "train_needle.py"])
def test_scripts_that_draw_bars_list_no_progress_in_their_help(script):
    """One script per parser kind: ``experiment_parser`` as is, with a store flag, and the
    training scripts' parser."""
    proc = subprocess.run([sys.executable, str(ROOT / "experiments" / script), "--help"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "--no-progress" in proc.stdout
