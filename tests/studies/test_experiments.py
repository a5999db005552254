"""Every experiment script runs in --quick mode, writes its figure, data and metadata, and
rejects bad command-line input with exit status 2 and one line."""

import importlib.util
import json
import runpy
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(p for p in (ROOT / "experiments").glob("*.py")
                 if not p.name.startswith("_"))
# Quick runs of 4 s or more (2 cores): in `make test-all`, not `make test`. Their studies' quick
# settings also run in the quick claims table, in tests/studies or in test_model_experiments.py;
# what only these tests cover is the drawing, and `make test` still draws one figure of every
# family (cas_*, si_*, ext_si_on_cas, inattention_memory, reference_logits, cas_sparsity …).
SLOW_SCRIPTS = {"model_passkey", "cas_fig1_phase_diagram", "si_fig2_entropy_scaling",
                "model_entropy_law", "ext_needle", "model_extrapolation", "ext_trichotomy",
                "zoo_comparison", "ext_zoo_phase", "ext_head_phases", "train_needle", "ext_sphere",
                "model_gaussianity", "ext_phase_plane", "cas_finite_n", "ext_universality"}
# The training figures of the grid share one quick grid: tests/studies/test_train_experiments.py
# runs them (the needle figure runs here).
QUICK_RUNS = [p for p in SCRIPTS
              if not p.stem.startswith("train_") or p.stem == "train_needle"]
SLOW_BENCHMARKS = {"bench_model", "bench_sweep", "bench_train", "bench_attention"}


def marked(paths, slow):
    return [pytest.param(p, id=p.stem, marks=[pytest.mark.slow] if p.stem in slow else [])
            for p in paths]


def load(script: Path):
    spec = importlib.util.spec_from_file_location(f"experiment_{script.stem}", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("script", marked(QUICK_RUNS, SLOW_SCRIPTS))
def test_experiment_quick_mode_writes_figure_data_and_metadata(script, tmp_path):
    written = load(script).main(quick=True, seed=0, out_dir=tmp_path)
    png = tmp_path / f"{script.stem}.png"
    assert png.exists() and png.stat().st_size > 5_000, "figure missing or empty"
    csvs = list(tmp_path.glob(f"{script.stem}*.csv"))
    assert csvs, "no data written beside the figure"
    for csv in csvs:
        frame = pd.read_csv(csv)
        assert len(frame) > 0 and frame.select_dtypes("number").notna().any().any()
    meta = json.loads((tmp_path / f"{script.stem}.json").read_text())
    assert meta["parameters"]["seed"] == 0 and meta["parameters"]["quick"] is True
    assert set(written) >= {"figure", "metadata"}
    assert not list(tmp_path.glob(".*.tmp")), "temporary files left behind"


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
@pytest.mark.parametrize("flags", [["--seed", "-3"], ["--bogus"], ["--seed", "x"]])
def test_experiment_rejects_bad_flags_with_one_line_and_status_2(script, flags, tmp_path,
                                                                 monkeypatch, capsys):
    """The script run as ``__main__`` in this process (its imports are already loaded, so the
    check costs milliseconds): exit status 2, one line on stderr, nothing written."""
    out = tmp_path / "out"
    monkeypatch.setattr(sys, "argv", [str(script), "--quick", "--out", str(out), *flags])
    with pytest.raises(SystemExit) as exit_info:
        runpy.run_path(str(script), run_name="__main__")
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err
    assert not out.exists() or not any(out.iterdir()), "bad flags must not write anything"


def test_a_script_rejects_bad_flags_in_its_own_process(tmp_path):
    """The same through a real interpreter (exit status and stderr as a shell sees them)."""
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, str(ROOT / "experiments" / "si_coefficients.py"),
                           "--quick", "--out", str(out), "--seed", "-3"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert not out.exists()


BENCHMARKS = sorted((ROOT / "benchmarks").glob("bench_*.py"))


@pytest.mark.parametrize("script", marked(BENCHMARKS, SLOW_BENCHMARKS))
def test_benchmark_runs_in_quick_mode(script, monkeypatch, capsys):
    """`make bench` must not rot: every benchmark runs end to end at small sizes, as
    ``__main__`` in this process (its timings are not asserted: speed is reported, not tested;
    benchmarks that need a fresh process start their own)."""
    monkeypatch.setattr(sys, "argv", [str(script), "--quick"])
    monkeypatch.syspath_prepend(str(script.parent))
    with pytest.raises(SystemExit) as exit_info:
        runpy.run_path(str(script), run_name="__main__")
    assert exit_info.value.code in (0, None), capsys.readouterr().err[-2000:]
    assert "target" in capsys.readouterr().out
