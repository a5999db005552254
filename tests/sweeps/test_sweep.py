"""The sweep engine (sia_theory.sweeps): determinism across schedulers and worker counts,
resume after a crash, failed cells, the store's files, bad scheduler addresses; and the studies
ported onto it give the numbers they gave before (one-shot computation in the same process).

The clusters are ``LocalCluster(processes=True)``: worker processes are what a real cluster has
(cells pickled to another interpreter, BLAS and numba threads of their own), which is where
determinism could break; their start (~2 s each) fits the time budget.
"""

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import cloudpickle
import numpy as np
import pandas as pd
import pytest

from sia_theory._infra.seeding import seed_int
from sia_theory.sweeps import cell_key, load_errors, load_sweep, sweep

ROOT = Path(__file__).resolve().parents[2]
# worker processes cannot import this test module: ship its functions by value
cloudpickle.register_pickle_by_value(sys.modules[__name__])


def independent_seed(seed, study, cell):
    """The documented rule, re-derived here: seed_int(seed, study, first 8 bytes (little
    endian) of the SHA-256 of the canonical JSON of the sorted parameters, shifted right by 1)."""
    key = json.dumps(dict(sorted(cell.items())), separators=(",", ":"))
    digest = hashlib.sha256(key.encode()).digest()[:8]
    return seed_int(seed, study, int.from_bytes(digest, "little") >> 1)


def linear_algebra_cell(cell, rng_seed):
    """A cell with a matrix product (BLAS) and several rows."""
    rng = np.random.default_rng(rng_seed)
    a = rng.standard_normal((cell["n"], 40))  # (n, 40)
    g = a @ a.T  # (n, n)
    return pd.DataFrame({"row": np.arange(cell["n"]), "value": g.sum(axis=1) * cell["scale"]})


GRID = {"n": [30, 50, 70], "scale": [0.5, 1.0, 2.0, 3.0]}


def direct(seed=7, study="sweep"):
    """The grid computed by calling the cell function directly with independently derived
    seeds, in the Cartesian order (last parameter fastest)."""
    frames = []
    for n in GRID["n"]:
        for scale in GRID["scale"]:
            cell = {"n": n, "scale": scale}
            frames.append(linear_algebra_cell(cell, independent_seed(seed, study, cell)))
    return pd.concat(frames, ignore_index=True)


@pytest.fixture(scope="module")
def cluster2():
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                           dashboard_address="127.0.0.1:0", env={"NUMBA_NUM_THREADS": "1"})
    client = Client(cluster, set_as_default=False)
    yield client
    client.close()
    cluster.close()


def test_cell_key_does_not_depend_on_parameter_order_or_numpy_types():
    assert cell_key({"b": 2, "a": 0.1}) == cell_key({"a": np.float64(0.1), "b": np.int64(2)})
    assert cell_key({"a": 0.1, "b": 2}) == '{"a":0.1,"b":2}'
    with pytest.raises(ValueError, match="grid parameter 'a'"):
        cell_key({"a": [1, 2]})


@pytest.mark.slow  # a few seconds; make test-all and CI run it
def test_results_bit_identical_in_process_and_on_one_and_two_workers(cluster2, tmp_path):
    from distributed import Client, LocalCluster

    expected = direct()
    runs = {name: sweep(linear_algebra_cell, GRID, store=None, seed=7, scheduler=name,
                        progress=False) for name in ("sync", "threads")}
    runs["two workers"] = sweep(linear_algebra_cell, GRID, store=tmp_path / "two", seed=7,
                                scheduler=cluster2, progress=False)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address="127.0.0.1:0") as cluster, Client(cluster) as one:
        runs["one worker"] = sweep(linear_algebra_cell, GRID, store=tmp_path / "one", seed=7,
                                   scheduler=one, progress=False)
    for name, result in runs.items():
        assert result.attrs["errors"] == {}
        pd.testing.assert_frame_equal(result[["row", "value"]], expected, check_exact=True,
                                      obj=name)
        seeds = result.drop_duplicates("cell_key")["cell_seed"].tolist()
        assert seeds == [independent_seed(7, "sweep", {"n": n, "scale": s})
                         for n in GRID["n"] for s in GRID["scale"]]
    # the store holds the same rows (cells in key order)
    stored = load_sweep(tmp_path / "two").sort_values(["n", "scale", "row"], ignore_index=True)
    pd.testing.assert_frame_equal(stored[["row", "value"]], expected, check_exact=True)
    other = sweep(linear_algebra_cell, GRID, store=None, seed=8, scheduler="sync",
                  progress=False)
    assert not np.array_equal(other["value"], expected["value"])


def counting_cell(cell, rng_seed):
    """Counts its calls in files; interrupts or kills itself where the cell says so (once)."""
    calls = Path(cell["calls"])
    (calls / f"{cell['i']}.{time.monotonic_ns()}").touch()
    flag = calls / "crashed"
    if cell["i"] == cell["crash_at"] and not flag.exists():
        flag.touch()
        if cell["how"] == "interrupt":
            raise KeyboardInterrupt
        if cell["how"] == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        raise ValueError(f"cell {cell['i']} failed on purpose")
    return {"x": float(np.random.default_rng(rng_seed).standard_normal())}


def counting_grid(calls, how, crash_at=3, cells=8):
    return [{"i": i, "calls": str(calls), "how": how, "crash_at": crash_at} for i in range(cells)]


def call_counts(calls, cells=8):
    names = [p.name.split(".")[0] for p in Path(calls).iterdir() if p.name != "crashed"]
    return [names.count(str(i)) for i in range(cells)]


def test_resume_after_keyboard_interrupt_skips_finished_cells(tmp_path):
    calls = tmp_path / "calls"
    calls.mkdir()
    grid = counting_grid(calls, "interrupt")
    with pytest.raises(KeyboardInterrupt):
        sweep(counting_cell, grid, store=tmp_path / "store", seed=1, scheduler="sync",
              progress=False)
    assert len(load_sweep(tmp_path / "store")) == 3
    result = sweep(counting_cell, grid, store=tmp_path / "store", seed=1, scheduler="sync",
                   progress=False)
    assert call_counts(calls) == [1, 1, 1, 2, 1, 1, 1, 1]
    sweep(counting_cell, grid, store=tmp_path / "store", seed=1, scheduler="sync",
          progress=False, force=True)
    assert call_counts(calls) == [2, 2, 2, 3, 2, 2, 2, 2]
    fresh = sweep(counting_cell, grid, store=None, seed=1, scheduler="sync", progress=False)
    assert result["x"].tolist() == fresh["x"].tolist()


KILLED_RUN = """
import sys
sys.path.insert(0, {tests!r})
from test_sweep import counting_cell, counting_grid
from sia_theory.sweeps import sweep
sweep(counting_cell, counting_grid({calls!r}, "kill"), store={store!r}, seed=1,
      scheduler="sync", progress=False)
"""


def test_resume_after_sigkill_recomputes_only_unfinished_cells(tmp_path):
    calls, store = tmp_path / "calls", tmp_path / "store"
    calls.mkdir()
    code = KILLED_RUN.format(tests=str(ROOT / "tests" / "sweeps"), calls=str(calls),
                             store=str(store))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, timeout=120)
    assert run.returncode == -signal.SIGKILL
    assert sorted(load_sweep(store)["i"]) == [0, 1, 2]
    result = sweep(counting_cell, counting_grid(calls, "kill"), store=store, seed=1,
                   scheduler="sync", progress=False)
    assert call_counts(calls) == [1, 1, 1, 2, 1, 1, 1, 1]
    assert result["i"].tolist() == list(range(8))
    leftovers = [p for p in store.rglob("*") if p.name.startswith(".")]
    assert leftovers == []


def test_failed_cell_is_recorded_and_the_others_finish(cluster2, tmp_path):
    calls, store = tmp_path / "calls", tmp_path / "store"
    calls.mkdir()
    grid = counting_grid(calls, "raise", crash_at=5)
    result = sweep(counting_cell, grid, store=store, seed=2, scheduler=cluster2,
                   progress=False)
    assert sorted(result["i"]) == [0, 1, 2, 3, 4, 6, 7]
    errors = load_errors(store)
    assert errors["i"].tolist() == [5]
    assert errors["error"].iloc[0] == "ValueError: cell 5 failed on purpose"
    assert list(result.attrs["errors"].values()) == ["ValueError: cell 5 failed on purpose"]
    again = sweep(counting_cell, grid, store=store, seed=2, scheduler="sync", progress=False)
    assert call_counts(calls) == [1, 1, 1, 1, 1, 2, 1, 1]
    assert again["i"].tolist() == list(range(8)) and len(load_errors(store)) == 0


def test_store_files_are_whole_parquet_files_with_umask_permissions(tmp_path):
    old = os.umask(0o022)
    try:
        sweep(linear_algebra_cell, GRID, store=tmp_path / "s", seed=7, scheduler="sync",
              progress=False)
    finally:
        os.umask(old)
    files = sorted((tmp_path / "s" / "cells").iterdir())
    assert len(files) == 12 and all(p.suffix == ".parquet" for p in files)
    assert {oct(p.stat().st_mode & 0o777) for p in files} == {"0o644"}
    with pytest.raises(ValueError, match="holds the sweep"):
        sweep(linear_algebra_cell, GRID, store=tmp_path / "s", seed=8, scheduler="sync",
              progress=False)


@pytest.mark.slow  # a few seconds; make test-all and CI run it
def test_bad_scheduler_address_is_a_quick_value_error_and_writes_nothing(tmp_path, monkeypatch):
    start = time.perf_counter()
    with pytest.raises(ValueError, match="tcp://127.0.0.1:9"):
        sweep(linear_algebra_cell, GRID, store=tmp_path / "s", seed=1,
              scheduler="tcp://127.0.0.1:9", progress=False)
    assert time.perf_counter() - start < 15
    with pytest.raises(ValueError, match="scheduler must be"):
        sweep(linear_algebra_cell, GRID, store=tmp_path / "s", seed=1, scheduler="nowhere")
    monkeypatch.setenv("SIA_DASK_SCHEDULER", "tcp://127.0.0.1:9")
    with pytest.raises(ValueError, match="tcp://127.0.0.1:9"):
        sweep(linear_algebra_cell, GRID, store=tmp_path / "s", seed=1, progress=False)
    assert not (tmp_path / "s").exists()


@pytest.mark.slow  # a few seconds; make test-all and CI run it
def test_command_bad_scheduler_is_one_line_exit_2_nothing_written(tmp_path):
    store = tmp_path / "store"
    for scheduler in ("tcp://127.0.0.1:9", "nowhere"):
        run = subprocess.run([sys.executable, "-m", "sia_theory", "sweep",
                              "phase-diagram", "--n", "50", "--d", "4", "--grid", "3",
                              "--scheduler", scheduler, "--store", str(store)],
                             env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True,
                             text=True, timeout=60)
        assert run.returncode == 2, run.stderr
        assert run.stderr.count("\n") == 1 and scheduler in run.stderr
        assert run.stdout == ""
    assert not store.exists()


def test_phase_diagram_and_jacobian_studies_identical_on_dask_and_in_process(cluster2, tmp_path):
    from sia_theory.cas.transition import transition_draws
    from sia_theory.studies import Execution
    from sia_theory.studies.cas_fig1_phase_diagram import PhaseDiagramSettings, phase_diagram
    from sia_theory.studies.cas_fig2_jacobian import JacobianSweepSettings, jacobian_sweep

    settings = PhaseDiagramSettings(n=60, size=4, dims=(16, 2), transition_draws=2,
                                    scaling_ns=(64, 128), scaling_draws=2, scaling_queries=32)
    local = phase_diagram(settings, seed=5)
    remote = phase_diagram(settings, seed=5, execution=Execution(scheduler=cluster2,
                                                                 store=tmp_path / "p"))
    resumed = phase_diagram(settings, seed=5, execution=Execution(scheduler="threads",
                                                                  store=tmp_path / "p"))
    for part in local.frames:
        pd.testing.assert_frame_equal(remote[part], local[part], check_exact=True)
        pd.testing.assert_frame_equal(resumed[part], local[part], check_exact=True)
    # the crossing draws are those of the one-shot helper with the study's stream names
    one_shot = transition_draws(ns=[60], d=16, rho=0.5, seed=5, draws=2, queries=60,
                                levels=(0.1, 0.5, 0.9), study="cas.phase_diagram.transition")
    pd.testing.assert_frame_equal(local["transition"].iloc[:2], one_shot, check_exact=True)
    jac = JacobianSweepSettings(n=40, dims=(16,), gamma_max=4.0, points=3, draws=2)
    a = jacobian_sweep(jac, seed=1)
    b = jacobian_sweep(jac, seed=1, execution=Execution(scheduler=cluster2))
    for part in a.frames:
        pd.testing.assert_frame_equal(b[part], a[part], check_exact=True)


def test_entropy_study_in_sample_blocks_equals_one_simulation(monkeypatch, tmp_path):
    from sia_theory._infra.seeding import seed_int as derive
    from sia_theory.gaussian.entropy import entropy_in_range_samples
    from sia_theory.studies import Execution
    from sia_theory.studies import si_entropy_scaling as studies
    from sia_theory.transforms import ScaleInvariant

    settings = studies.EntropyScalingSettings(ScaleInvariant(10.0), t_min=10, t_max=2000,
                                              n_t=9, samples=100,
                                              windows=((10, 100), (200, 2000)))
    monkeypatch.setattr(studies, "SAMPLE_BLOCK", 16)
    assert len(studies.entropy_scaling_cells(settings)) == 7
    store = Execution(store=tmp_path / "e")
    blocked = studies.entropy_scaling_study(settings, seed=4, execution=store)
    t_values = np.unique(np.concatenate([np.round(np.geomspace(10, 2000, 9)).astype(np.int64),
                                         [10, 100, 200, 2000]]))
    table, h = entropy_in_range_samples(settings.transform, t_values, settings.deltas,
                                        samples=100, seed=derive(4, "si.entropy_scaling"))
    pd.testing.assert_frame_equal(blocked["entropy"], table, check_exact=True)
    again = studies.entropy_scaling_study(settings, seed=4, execution=store)
    pd.testing.assert_frame_equal(again["slopes"], blocked["slopes"], check_exact=True)


@pytest.mark.slow  # half a minute or more: make test-all
def test_command_runs_a_study_into_the_store_and_resumes(tmp_path):
    store = tmp_path / "store"
    command = [sys.executable, "-m", "sia_theory", "sweep", "jacobian", "--n", "20",
               "--d", "16", "--draws", "2", "--points", "3", "--scheduler", "sync", "--store",
               str(store), "--seed", "3", "--no-progress"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    first = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    stored = load_sweep(store)
    assert sorted(set(stored["draw"])) == [0, 1] and len(stored) == 6
    from sia_theory.studies.cas_fig2_jacobian import JacobianSweepSettings, jacobian_sweep

    direct = jacobian_sweep(JacobianSweepSettings(n=20, dims=(16,), points=3, draws=2),
                            seed=3)["eta"]
    ordered = stored.sort_values(["draw", "gamma"], ignore_index=True)[list(direct.columns)]
    pd.testing.assert_frame_equal(ordered, direct, check_exact=True)
    mtimes = {p: p.stat().st_mtime_ns for p in (store / "cells").iterdir()}
    again = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0
    assert {p: p.stat().st_mtime_ns for p in (store / "cells").iterdir()} == mtimes


def test_benchmark_rejects_bad_flags_in_one_line():
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_sweep.py"),
                          "--cells", "5"], env={**os.environ, "PYTHONPATH": str(ROOT)},
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and run.stderr.count("\n") == 1 and "--cells" in run.stderr


def test_sweep_subcommand_of_the_sia_theory_command_refuses_a_dead_scheduler(tmp_path, capsys):
    from sia_theory import cli as command

    store = tmp_path / "store"
    code = command.main(["sweep", "jacobian", "--n", "20", "--d", "16", "--draws", "2",
                         "--points", "2", "--scheduler", "tcp://127.0.0.1:9", "--store",
                         str(store)])
    assert code == 2 and not store.exists()
    assert capsys.readouterr().err.count("\n") == 1


def _server(kind):
    """A loopback port that accepts connections but is no Dask scheduler: an HTTP server,
    one that answers every connection with garbage bytes, or one that never answers."""
    import http.server
    import socket
    import threading

    if kind == "http":
        class Quiet(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args):  # the test reads this process's stderr
                pass

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return f"tcp://127.0.0.1:{server.server_address[1]}", server.shutdown
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    held = []

    def serve():
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            held.append(conn)
            if kind == "garbage":
                conn.sendall(b"\xff" * 64)

    threading.Thread(target=serve, daemon=True).start()
    return f"tcp://127.0.0.1:{sock.getsockname()[1]}", sock.close


@pytest.mark.parametrize("kind", [  # http and silent wait out the bound (10 s each): make test-all
    pytest.param("http", marks=pytest.mark.slow), "garbage",
    pytest.param("silent", marks=pytest.mark.slow)])
def test_a_port_that_is_no_dask_scheduler_is_one_bounded_value_error(kind, tmp_path, capsys):
    """The handshake is bounded too (not only the TCP connect): an HTTP server or a silent port
    used to hang forever, garbage bytes to crash with an exabyte allocation."""
    from sia_theory import cli as command

    address, stop = _server(kind)
    try:
        start = time.perf_counter()
        with pytest.raises(ValueError, match="does not answer as a Dask scheduler"):
            sweep(linear_algebra_cell, GRID, store=tmp_path / "s", seed=1, scheduler=address,
                  progress=False)
        assert time.perf_counter() - start < 10
        assert not (tmp_path / "s").exists()
        code = command.main(["sweep", "jacobian", "--quick", "--scheduler", address, "--store",
                             str(tmp_path / "c"), "--no-progress"])
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
        assert not (tmp_path / "c").exists()
    finally:
        stop()


def _squares(cell, rng_seed):
    return pd.DataFrame({"square": [cell["x"] ** 2]})


def test_a_rerun_rebuilds_a_damaged_table_from_the_intact_cells(tmp_path):
    """data.parquet cut in half (a crash while it was written): a rerun runs nothing (the cells
    are intact) and rewrites the table, which pyarrow reads again and equals every cell."""
    import pyarrow.parquet as pq

    from sia_theory.sweeps.dataset import dataset_readable

    store = tmp_path / "store"
    first = sweep(_squares, {"x": [1, 2, 3]}, store=store, seed=0, scheduler="sync",
                  progress=False)
    table = store / "data.parquet"
    table.write_bytes(table.read_bytes()[: table.stat().st_size // 2])
    assert not dataset_readable(store)  # the footer is gone
    again = sweep(_squares, {"x": [1, 2, 3]}, store=store, seed=0, scheduler="sync",
                  progress=False)
    assert again["square"].tolist() == first["square"].tolist() == [1, 4, 9]
    assert sorted(pq.read_table(table).to_pandas()["square"]) == [1, 4, 9]


def test_a_finished_sweep_is_read_without_writing(tmp_path, monkeypatch):
    """Every cell finished and the table readable: the rerun reads the store and writes
    nothing, so a read-only store (simulated: any write check fails, as root passes chmod) is
    read, not refused."""
    from sia_theory.sweeps import store as stores

    store = tmp_path / "store"
    sweep(_squares, {"x": [1, 2]}, store=store, seed=0, scheduler="sync", progress=False)
    before = {p: p.stat().st_mtime_ns for p in store.rglob("*")}

    def refuse(*args, **kwargs):
        raise ValueError("store: not writable")

    monkeypatch.setattr(stores, "check_store", refuse)
    again = sweep(_squares, {"x": [1, 2]}, store=store, seed=0, scheduler="sync",
                  progress=False)
    assert again["square"].tolist() == [1, 4]
    assert {p: p.stat().st_mtime_ns for p in store.rglob("*")} == before
    with pytest.raises(ValueError, match="not writable"):  # a new cell still needs writing
        sweep(_squares, {"x": [1, 2, 3]}, store=store, seed=0, scheduler="sync",
              progress=False)
