"""Training runs as sweep cells: the store keeps curves and parameters, an interrupted grid
resumes with the same numbers, bad input is one clear error with nothing written, and the
package imports (and its command parses) without JAX."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sia_theory.studies.base import Execution
from sia_theory.studies.train_grid import (
    STORE_FORMAT,
    TrainGridSettings,
    check_store_settings,
    train_grid,
)
from sia_theory.sweeps import CellOutput, run_cells
from sia_theory.training import SCHEMES, TrainSettings, resolve_scheme

ROOT = Path(__file__).resolve().parents[2]
QUICK = TrainSettings.quick()

USER_FILE = '''
from dataclasses import dataclass

import numpy as np
from sia_theory import Transform


@dataclass(frozen=True)
class LogBias(Transform):
    c: float = 0.5
    tau: float = 4.0
    depends_on = frozenset({"distance"})

    def affine(self, t, n, h):
        return np.ones_like(t), -self.c * np.log1p(t / self.tau)


rule = LogBias()
'''


def sia(*argv, cwd=ROOT, env=None):
    return subprocess.run([sys.executable, "-m", "sia_theory", *argv], cwd=cwd,
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})


def assert_one_line_nothing_written(proc, out):
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert not out.exists() or not any(out.iterdir()), "bad input must not write anything"


# --- without JAX ---------------------------------------------------------------------------

def test_package_and_command_import_without_loading_jax():
    code = ("import sys; import sia_theory.training, sia_theory.studies.train_grid, "
            "sia_theory.cli as c; c.build_parser().parse_args(['train', '--scheme', "
            "'rope']); assert 'jax' not in sys.modules and 'optax' not in sys.modules")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr


def test_missing_jax_is_an_import_error_naming_the_extra(tmp_path):
    code = ("import sys; sys.modules['jax'] = None\n"
            "from sia_theory.training import TrainSettings\n"
            "try:\n    from sia_theory.training import train\n"
            "    train('rope', TrainSettings.quick())\n"
            "except ImportError as err:\n    print(err)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT)
    assert "pip install 'sia-theory[train]'" in proc.stdout, proc.stderr
    hidden = tmp_path / "hide"  # the command: one line, exit 2, nothing written
    hidden.mkdir()
    (hidden / "jax.py").write_text("raise ImportError('no jax here')\n")
    out = tmp_path / "out"
    proc = sia("train", "--scheme", "rope", "--quick", "--out", str(out),
               env={"PYTHONPATH": f"{hidden}{os.pathsep}{ROOT}"})
    assert_one_line_nothing_written(proc, out)
    assert "sia-theory[train]" in proc.stderr


# --- bad input -----------------------------------------------------------------------------

@pytest.mark.parametrize("field, value", [
    ("learning_rate", 0.0), ("learning_rate", 2.0), ("embedding_learning_rate", -1.0),
    ("head_learning_rate", float("nan")), ("train_length", 2), ("d_model", 30),
    ("tokenizer", "words"), ("optimizer", "sgd"), ("cooldown", 1.5), ("steps", 0),
    ("eval_multiples", (4, 16)), ("vocab_size", 100)])
def test_bad_settings_name_the_field(field, value):
    with pytest.raises(ValueError, match=field):
        TrainSettings(**{field: value})


def test_training_length_longer_than_the_data_is_refused_before_work(tmp_path):
    long = TrainSettings(train_length=8192, eval_multiples=(1, 16), tokenizer="bytes",
                         max_train_documents=2)
    settings = TrainGridSettings(train=long, runs=(("rope", 0, None),))
    with pytest.raises(ValueError, match="train_length"):
        train_grid(settings, seed=0, execution=Execution(store=tmp_path / "store"))
    assert not (tmp_path / "store").exists()


@pytest.mark.parametrize("argv", [["--scheme", "nope-rope"],
                                  ["--scheme", "si-p-rope", "--tau", "0"],
                                  ["--scheme", "rope", "--tau", "3"]])
def test_command_bad_input_is_one_line_exit_2_nothing_written(argv, tmp_path):
    out = tmp_path / "out"
    assert_one_line_nothing_written(sia("train", *argv, "--quick", "--out", str(out)), out)


def test_store_of_other_settings_is_refused_naming_them(tmp_path):
    store = tmp_path / "store"
    store.mkdir()
    (store / "training.json").write_text(json.dumps({"train": QUICK.to_dict(),
                                                     "format": STORE_FORMAT}))
    other = TrainSettings.quick().__class__(**{**QUICK.to_dict(), "d_model": 64,
                                               "eval_multiples": (1, 4, 16)})
    before = sorted(p.name for p in store.iterdir())
    with pytest.raises(ValueError, match="d_model"):
        check_store_settings(store, other)
    with pytest.raises(ValueError, match="d_model"):
        train_grid(TrainGridSettings(train=other, runs=(("rope", 0, None),)), seed=0,
                   execution=Execution(store=store))
    assert sorted(p.name for p in store.iterdir()) == before


def test_store_of_the_old_format_is_refused_untouched(tmp_path):
    """A 0.3 store (format 1: validation on code only, no checkpoints at the longer lengths)
    of the same settings is refused: its runs would mix with runs validated otherwise."""
    store = tmp_path / "store"
    store.mkdir()
    (store / "training.json").write_text(json.dumps({"train": QUICK.to_dict(), "format": 1}))
    before = sorted(p.name for p in store.iterdir())
    with pytest.raises(ValueError, match="format 1"):
        check_store_settings(store, QUICK)
    assert sorted(p.name for p in store.iterdir()) == before


# --- the store -----------------------------------------------------------------------------

def _with_file(cell, rng_seed):
    return CellOutput({"x": cell["x"]}, {"blob.bin": bytes([cell["x"]]) * 3})


def test_cell_files_are_stored_beside_the_rows_and_read_back(tmp_path):
    store = tmp_path / "store"
    _, frames, _, files = run_cells(_with_file, {"x": [1, 2]}, seed=0, store=store,
                                    scheduler="sync", progress=False, with_files=True)
    assert [f["x"].item() for f in frames] == [1, 2]
    assert files == [{"blob.bin": b"\x01\x01\x01"}, {"blob.bin": b"\x02\x02\x02"}]
    names = sorted(p.name.split(".", 1)[1] for p in (store / "cells").iterdir())
    assert names == ["blob.bin", "blob.bin", "parquet", "parquet"]
    _, _, _, again = run_cells(_not_called, {"x": [1, 2]}, seed=0, store=store,
                               scheduler="sync", progress=False, with_files=True)
    assert again == files


def _not_called(cell, rng_seed):
    raise AssertionError("a stored cell must not run again")


@pytest.fixture(scope="module")
def grid_store(tmp_path_factory):
    pytest.importorskip("jax")
    store = tmp_path_factory.mktemp("grid") / "store"
    settings = TrainGridSettings.grid(["p-rope", "si-p-rope"], seeds=(0, 1), train=QUICK)
    result = train_grid(settings, seed=0, execution=Execution(store=store))
    return settings, store, result


def test_grid_stores_curves_and_parameters_and_matches_a_direct_run(grid_store):
    from sia_theory.studies.train_grid import grid_runs
    from sia_theory.training import train

    settings, store, result = grid_store
    table = result["validation"]
    assert len(table) == 4 * len(QUICK.eval_lengths)
    runs = grid_runs(settings, seed=0, execution=Execution(store=store))
    direct = train("si-p-rope", QUICK, seed=1)
    stored = runs[("si-p-rope", 1, 10.0)]
    np.testing.assert_array_equal(stored.train_losses, direct.train_losses)
    assert stored.validation == direct.validation
    for key, value in direct.parameters["layers"].items():
        np.testing.assert_array_equal(stored.parameters["layers"][key], value)
    assert (store / "training.json").is_file()
    assert len(list((store / "cells").glob("*.parameters.safetensors"))) == 4


def test_interrupted_grid_resumes_with_the_same_numbers(grid_store, tmp_path):
    import shutil

    settings, store, result = grid_store
    copy = tmp_path / "copy"
    shutil.copytree(store, copy)
    cells = sorted((copy / "cells").glob("*.parquet"))
    victim = cells[0]
    victim.unlink()  # as if killed before this cell's rows were written
    again = train_grid(settings, seed=0, execution=Execution(store=copy))
    pd.testing.assert_frame_equal(again["validation"], result["validation"])
    assert victim.exists()


def test_user_transform_trains_through_the_same_grid(tmp_path, capsys):
    pytest.importorskip("jax")
    from sia_theory.cli import main

    path = tmp_path / "userrule.py"
    path.write_text(USER_FILE)
    name = f"{path}:rule@rope"
    assert resolve_scheme(name).position == "rope" and resolve_scheme(name, 8.0).tau == 8.0
    out = tmp_path / "out"
    assert main(["train", "--scheme", name, "--quick", "--out", str(out), "--no-progress"]) == 0
    assert name in capsys.readouterr().out
    table = pd.read_csv(out / "validation.csv")
    assert list(table["scheme"]) == [name] and list(table["tau"]) == [4]
    assert np.isfinite(table[["loss_1L", "loss_4L", "loss_16L"]].to_numpy()).all()
    assert len(SCHEMES) == 14


@pytest.mark.slow  # half a minute or more: make test-all
def test_grid_on_a_dask_cluster_gives_the_in_process_numbers(grid_store, tmp_path):
    """Cells pickled to worker processes (one XLA thread each) train the same models."""
    from distributed import Client, LocalCluster

    settings, _, result = grid_store
    two = TrainGridSettings(train=settings.train, runs=settings.runs[1:3])  # one per worker
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address="127.0.0.1:0") as cluster, Client(cluster):
        out = train_grid(two, seed=0, execution=Execution(
            scheduler=cluster.scheduler_address, store=tmp_path / "dask"))
    for frame in ("validation", "curves"):
        keys = out[frame][["scheme", "seed"]].drop_duplicates()
        expected = result[frame].merge(keys, on=["scheme", "seed"])
        pd.testing.assert_frame_equal(out[frame].reset_index(drop=True), expected)


def test_data_split_and_tokenizer_are_deterministic():
    pytest.importorskip("tokenizers")
    from sia_theory.training import data

    train_docs, pool = data.split(6)
    assert not {n for n, _ in train_docs} & {n for n, _ in pool}  # split by document
    assert len(pool) == data.VALIDATION_POOL
    first = data.tokenizer.__wrapped__("bpe", 320, 6)
    second = data.tokenizer.__wrapped__("bpe", 320, 6)
    assert first.to_json() == second.to_json()
    text = pool[0][1][:2000]
    assert first.decode(first.encode(text)) == text  # byte-level: lossless
    assert data.tokenizer("bytes", 257).decode(data.tokenizer("bytes", 257).encode(text)) == text


@pytest.mark.parametrize("seeds", [("0",), ("0", "1", "2")])
def test_a_users_file_is_executed_once_per_command_whatever_the_seeds(tmp_path, seeds):
    """The scheme is resolved once, at the command's boundary, and the object travels with the
    settings and cells: the file runs once for 1 or 3 seeds (it ran 3 and 10 times in 0.3)."""
    pytest.importorskip("jax")
    from sia_theory.cli import main

    counter = tmp_path / "executions.txt"
    path = tmp_path / "countedrule.py"
    path.write_text(f"open({str(counter)!r}, 'a').write('x')\n" + USER_FILE)
    out = tmp_path / "out"
    assert main(["train", "--scheme", f"{path}:rule@rope", "--seed", *seeds, "--quick",
                 "--scheduler", "sync", "--out", str(out), "--no-progress"]) == 0
    assert counter.read_text() == "x"
    assert len(pd.read_csv(out / "validation.csv")) == len(seeds)


def test_the_figure_grid_is_seed_major_with_the_learned_logn_and_tau_rescaled():
    from sia_theory.studies.train_grid import (
        GRID_SEEDS,
        RESCALED_SEEDS,
        SIDE_SEEDS,
        TABLE1_ROWS,
        TAU_SEEDS,
        figure_grid,
        rescaled_tau,
    )

    grid = figure_grid()
    assert rescaled_tau(256) == 10 * 256 / 4096 == 0.625
    assert grid.train.corpus == "registry"  # the real corpus; no folder needed to make it
    # Table 1 × 3; SI + p-RoPE's seeds 3, 4 beside SI + RoPE / NoPE × 5; three τ × 4; rescaled × 2
    assert len(grid.runs) == (len(TABLE1_ROWS) * len(GRID_SEEDS) + 2 + 2 * len(SIDE_SEEDS)
                              + 3 * len(TAU_SEEDS) + len(RESCALED_SEEDS)) == 50
    count = {}
    for s, _, t in grid.runs:
        count[s, t] = count.get((s, t), 0) + 1
    assert count[("si-rope", 10.0)] == count[("si-p-rope", 10.0)] == 5
    assert count[("si-p-rope", 0.1)] == count[("si-p-rope", 100.0)] == 4
    assert count[("si-p-rope", 0.625)] == 2 and count[("alibi", None)] == 3
    seeds = [k for _, k, _ in grid.runs]
    assert seeds == sorted(seeds)  # every run of a seed before the next seed's
    assert ("logn-p-rope-learned", 2, None) in grid.runs
    assert {t for s, _, t in grid.runs if s == "si-p-rope"} == {0.1, 0.625, 1.0, 10.0, 100.0}
    bigger = figure_grid(train=QUICK, seeds=range(5), side_seeds=range(3))
    assert len(bigger.runs) == 8 * 5 + 6 * 3 and bigger.train == QUICK


def test_each_seed_set_of_the_figure_grid_defaults_on_its_own():
    """Passing one seed set keeps the others at their defaults (the full grid's 50 runs when
    the defaults are passed back), the τ runs follow an explicit ``side_seeds`` (the GPU
    scripts'), and a rescaled τ equal to τ = 10 (L = 4096) adds no second τ = 10 run."""
    import dataclasses

    from sia_theory.studies.train_grid import (
        GRID_SEEDS,
        RESCALED_SEEDS,
        SIDE_SEEDS,
        TAU_SEEDS,
        figure_grid,
    )

    full = figure_grid().runs
    assert figure_grid(seeds=GRID_SEEDS).runs == full
    assert figure_grid(seeds=GRID_SEEDS, side_seeds=SIDE_SEEDS, tau_seeds=TAU_SEEDS,
                       rescaled_seeds=RESCALED_SEEDS).runs == full
    assert figure_grid(tau_seeds=TAU_SEEDS, rescaled_seeds=RESCALED_SEEDS).runs == full
    gpu = figure_grid(train=QUICK, seeds=range(5), side_seeds=range(3)).runs
    assert {k for s, k, t in gpu if s == "si-p-rope" and t == 0.1} == {0, 1, 2}
    long = figure_grid(train=dataclasses.replace(QUICK, train_length=4096), seeds=(0,),
                       side_seeds=(0,)).runs
    assert len(long) == len(set(long)) == 8 + 2 + 3
