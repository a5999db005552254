"""The training figures (experiments/train_*.py) in quick mode: one quick grid trained once into
a store shared by the four scripts (as ``make figures-train`` shares the full one), real numbers
in their CSV files, the quick grid's schemes present, and ``--finished-only`` drawing a partial
store without training or writing anything into it."""

import importlib.util
import json
import runpy
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sia_theory.studies import Execution
from sia_theory.studies.train_grid import (
    TABLE1_ROWS,
    TrainGridSettings,
    figure_grid,
    train_grid,
)
from sia_theory.studies.train_phase import PHASE_SCHEMES

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ("train_table1", "train_si_positions", "train_tau", "train_attention_stats",
           "train_phase")


def load(stem: str):
    script = ROOT / "experiments" / f"{stem}.py"
    spec = importlib.util.spec_from_file_location(f"experiment_{stem}", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def quick_store(tmp_path_factory):
    """The whole quick grid, trained once (22 runs of 8 steps)."""
    store = tmp_path_factory.mktemp("train_grid-quick")
    train_grid(figure_grid(quick=True), seed=0, execution=Execution(store=store))
    return store


def _check_environments(record: dict, store: Path):
    """A training figure's JSON: the package version of the code that drew it, jaxlib's, and
    the distinct environments of its runs, each as the run recorded it when it trained (the
    quick store's runs, trained in this process)."""
    import os

    import jax
    import jaxlib

    import sia_theory

    versions = record["versions"]
    assert versions["sia-theory"] == sia_theory.__version__
    assert versions["jaxlib"] == jaxlib.__version__
    envs = record["training_environments"]
    assert len(envs) == 1 and envs[0]["runs"] >= 1, envs
    env = envs[0]["environment"]
    assert env["sia-theory"] == sia_theory.__version__
    assert (env["jax"], env["jaxlib"]) == (jax.__version__, jaxlib.__version__)
    assert env["device_kind"] == jax.devices()[0].device_kind
    assert env["device_count"] == len(jax.devices())
    assert env["xla_flags"] == os.environ.get("XLA_FLAGS", "")


def _snapshot(store: Path) -> dict:
    return {str(p.relative_to(store)): p.stat().st_mtime_ns for p in store.rglob("*")}


def test_the_figure_grid_is_the_one_the_lead_trains():
    full = figure_grid()
    assert full.train.steps == 240 and len(full.runs) == 50 and full.train.corpus == "registry"
    assert {(s, k) for s in TABLE1_ROWS for k in range(3)} <= {r[:2] for r in full.runs}
    assert {("si-p-rope", k, t) for t in (0.1, 0.625, 1.0, 10.0, 100.0) for k in (0, 1)} <= set(
        full.runs)
    assert {("si-rope", 1, 10.0), ("si-nope", 1, 10.0)} <= set(full.runs)
    quick = figure_grid(quick=True)
    assert quick.train.steps == 8 and {r[0] for r in quick.runs} == {r[0] for r in full.runs}


@pytest.mark.parametrize("stem", [pytest.param(s, marks=pytest.mark.slow) if s == "train_phase"
                                  else s for s in SCRIPTS])  # train_phase: 6 s, in test-all
def test_quick_figure_from_the_shared_store(stem, quick_store, tmp_path):
    before = _snapshot(quick_store)
    load(stem).main(quick=True, seed=0, out_dir=tmp_path, store=str(quick_store))
    assert _snapshot(quick_store) == before, "a figure retrained or rewrote a stored run"
    assert (tmp_path / f"{stem}.png").stat().st_size > 5_000
    record = json.loads((tmp_path / f"{stem}.json").read_text())
    meta = record["parameters"]
    assert meta["quick"] is True and meta["missing_runs"] == []
    _check_environments(record, quick_store)
    frames = {p.stem: pd.read_csv(p) for p in tmp_path.glob(f"{stem}_*.csv")}
    assert frames
    with_losses = 0
    for frame in frames.values():
        losses = frame[[c for c in frame if c == "mean" or c.startswith("loss")]].to_numpy(float)
        assert np.isfinite(losses).all()
        with_losses += losses.size > 0
    assert with_losses, "no CSV of the figure holds a loss or a mean"
    if stem == "train_table1":
        table = frames["train_table1_table"]
        pooled = table[table["kind"] == "all"]
        assert list(pooled["scheme"]) == list(TABLE1_ROWS)
        assert set(table["kind"]) == {"all", "prose", "code"}
        assert (table["seeds"] == 2).all()
        assert np.isfinite(table[["loss_1L", "loss_16L", "low_16L", "high_16L"]].to_numpy()).all()
        assert (table["loss_16L"] < np.log(320) + 0.1).all()  # trained below uniform
        assert len(frames["train_table1_copy"]) == len(TABLE1_ROWS) * 2
    if stem == "train_tau":
        assert sorted(frames["train_tau_summary"]["tau"].unique()) == [
            0.078125, 0.1, 1.0, 10.0, 100.0]  # 0.078125 = 10 x 32 / 4096, τ rescaled with L
    if stem == "train_si_positions":
        assert set(frames["train_si_positions_summary"]["scheme"]) == {
            "si-nope", "si-rope", "si-p-rope", "nope", "rope", "p-rope"}
    if stem == "train_attention_stats":
        model = frames["train_attention_stats_model"]
        assert set(model["scheme"]) == {"p-rope", "logn-p-rope", "si-p-rope"}
        assert sorted(model["seed"].unique()) == [0, 1]  # every seed of the quick grid
        mass = model[model["quantity"] == "recent_mass"]["mean"]
        assert ((mass > 0) & (mass <= 1 + 1e-9)).all()
    if stem == "train_phase":
        heads, summary = frames["train_phase_heads"], frames["train_phase_summary"]
        assert set(heads["scheme"]) == set(PHASE_SCHEMES) == set(summary["scheme"])
        assert (heads[["ratio_train", "ratio_end"]] > 0).all().all()
        assert -1 <= summary["spearman"].iloc[0] <= 1
        assert np.isfinite(summary["loss_change"]).all()
        octaves = frames["train_phase_octaves"]
        assert set(octaves["scheme"]) == set(PHASE_SCHEMES)
        assert np.isfinite(summary[["mae_tail_L", "mae_tail_16L", "dilution_tail"]]).all().all()
        assert sorted(summary["seed"].unique()) == [0, 1]  # the quick grid's Table 1 seeds
        assert meta["seeds_measured"] == [0, 1] and meta["seed_shown"] == 0
        total = octaves.groupby(["seed", "scheme", "layer", "head", "context"])[
            "share_measured"].sum()
        np.testing.assert_allclose(total, 1, atol=1e-9)


@pytest.mark.parametrize("scheme, tau", [("si-p-rope", 10.0), ("alibi", None), ("rope-ntk", None),
                                         ("logn-p-rope", None)])
def test_head_phase_sigma_equals_the_decoders_own_transformed_logits(scheme, tau, quick_store):
    """Each head's σ at L and at 16L from head_phases (raw q·k/√Dh through the scheme's
    coefficients) equals the one computed from the decoder's own transformed logits
    (attention_logits; the decoder at L for L, at 16L for 16L), over the keys at distances
    [M, 2M) of each of the last queries; and r = σ/√(2 log M). LogN's coefficients depend on the
    context, RoPE + NTK's decoder on the length."""
    from sia_theory.studies.train_grid import grid_runs
    from sia_theory.studies.train_phase import head_phases
    from sia_theory.training.data import corpus

    quick = figure_grid(quick=True)
    runs = grid_runs(TrainGridSettings(train=quick.train, runs=((scheme, 0, tau),)), seed=0,
                     execution=Execution(store=quick_store, finished_only=True))
    run = runs[(scheme, 0, tau)]
    heads = head_phases(run, queries=3)
    length = run.settings.max_length
    tokens = corpus(run.settings).validation_windows(length)[:1, :length]
    for which, n in (("end", length), ("train", run.settings.train_length)):
        decoder = run.decoder(n)
        rows = np.arange(n - 3, n)
        for layer in range(run.settings.n_layers):
            logits = decoder.attention_logits(tokens[:, :n], layer, last=n).astype(np.float64)
            for h in range(run.settings.n_heads):
                var = []
                for i in rows:
                    m = (i + 1) // 2
                    var.append(logits[0, h, i, i - np.arange(m, 2 * m)].var())
                sigma = np.sqrt(np.mean(var))
                got = heads[(heads["layer"] == layer) & (heads["head"] == h)].iloc[0]
                assert got[f"sigma_{which}"] == pytest.approx(sigma, rel=1e-4)
                m0 = (rows[0] + 1) // 2
                assert got[f"ratio_{which}"] == pytest.approx(sigma / np.sqrt(2 * np.log(m0)),
                                                             rel=1e-4)


@pytest.mark.parametrize("scheme, tau", [("alibi", None), ("rope-ntk", None),
                                         ("logn-p-rope-learned", None)])
def test_octaves_measured_equal_the_decoders_own_attention(scheme, tau, quick_store):
    """The study's measured octave entropy and share (raw q·k/√Dh through the scheme's
    coefficients, per query row, mean over the rows) equal octave_stats of the decoder's own
    transformed logits (attention_logits, the decoder at L for L and at 16L for 16L; ALiBi's
    bias, NTK's base and the learned LogN scale inside the decoder); the predictions are shares
    summing to 1, seeded (the same seed gives the same frame)."""
    from sia_theory.studies.train_grid import grid_runs
    from sia_theory.studies.train_phase import run_measurements
    from sia_theory.training.data import corpus
    from sia_theory.training.octaves import octave_stats

    quick = figure_grid(quick=True)
    runs = grid_runs(TrainGridSettings(train=quick.train, runs=((scheme, 0, tau),)), seed=0,
                     execution=Execution(store=quick_store, finished_only=True))
    run = runs[(scheme, 0, tau)]
    _, octaves = run_measurements(run, queries=3, seed=4)
    _, again = run_measurements(run, queries=3, seed=4)
    pd.testing.assert_frame_equal(octaves, again)
    tokens = corpus(run.settings).validation_windows(run.settings.max_length)
    for n in (run.settings.train_length, run.settings.max_length):
        decoder = run.decoder(n)
        for layer in range(run.settings.n_layers):
            logits = decoder.attention_logits(tokens[:1, :n], layer, last=n).astype(np.float64)
            for h in range(run.settings.n_heads):
                stats = [octave_stats(logits[0, h, i, i::-1]) for i in range(n - 3, n)]
                got = octaves[(octaves["layer"] == layer) & (octaves["head"] == h)
                              & (octaves["context"] == n)].sort_values("octave")
                np.testing.assert_allclose(got["share_measured"],
                                           np.mean([s for _, s in stats], axis=0), rtol=1e-4)
                np.testing.assert_allclose(got["entropy_measured"],
                                           np.mean([e for e, _ in stats], axis=0), rtol=1e-4)
                for kind in ("tail", "gauss"):
                    assert got[f"share_{kind}"].sum() == pytest.approx(1, abs=1e-9)


def test_finished_only_draws_a_partial_store_and_writes_nothing_into_it(tmp_path):
    """Two runs stored: the figure draws them, lists its other Table 1 runs as missing, trains
    nothing and
    leaves the store byte for byte as it was (no error records, no probe files)."""
    store = tmp_path / "store"
    quick = figure_grid(quick=True)
    part = TrainGridSettings(train=quick.train, runs=(("p-rope", 0, None), ("nope", 0, None)))
    train_grid(part, seed=0, execution=Execution(store=store))
    before = _snapshot(store)
    out = tmp_path / "out"
    argv = [str(ROOT / "experiments" / "train_table1.py"), "--quick", "--out", str(out),
            "--store", str(store), "--finished-only"]
    old = sys.argv
    try:
        sys.argv = argv
        with pytest.raises(SystemExit) as exit_info:
            runpy.run_path(argv[0], run_name="__main__")
    finally:
        sys.argv = old
    assert exit_info.value.code in (0, None)
    assert _snapshot(store) == before
    meta = json.loads((out / "train_table1.json").read_text())["parameters"]
    table1 = [r for r in quick.runs if r[0] in TABLE1_ROWS and r[2] in (None, 10.0)]
    assert len(meta["missing_runs"]) == len(table1) - 2  # only the figure's own runs
    table = pd.read_csv(out / "train_table1_table.csv")
    assert sorted(set(table["scheme"])) == ["nope", "p-rope"]


def test_finished_only_on_an_empty_store_says_so(tmp_path):
    with pytest.raises(ValueError, match="no finished cell"):
        train_grid(figure_grid(quick=True), seed=0,
                   execution=Execution(store=tmp_path / "empty", finished_only=True))
    assert not (tmp_path / "empty").exists()


def test_scheme_runs_reads_every_seed_and_seed0_runs_seed_0(quick_store):
    """The attention studies' runs: every seed the grid holds for the schemes (the quick grid:
    seeds 0, 1 of the Table 1 rows, seed 0 of the side runs), τ = 10 for SI; seed0_runs the
    seed-0 ones; a scheme the grid lacks is a ValueError naming schemes."""
    from sia_theory.studies.train_grid import scheme_runs, seed0_runs

    execution = Execution(store=quick_store, finished_only=True)
    _, runs, missing = scheme_runs(("p-rope", "si-p-rope", "si-rope"), seed=0,
                                   execution=execution, quick=True)
    assert missing == []
    assert sorted(runs) == [("p-rope", 0, None), ("p-rope", 1, None), ("si-p-rope", 0, 10.0),
                            ("si-p-rope", 1, 10.0), ("si-rope", 0, 10.0)]
    _, runs, _ = seed0_runs(("p-rope", "si-p-rope"), seed=0, execution=execution, quick=True)
    assert sorted(runs) == [("p-rope", 0, None), ("si-p-rope", 0, 10.0)]
    with pytest.raises(ValueError, match="schemes: the grid holds no run"):
        scheme_runs(("p-rope",), seed=0, execution=execution, quick=True, seeds=(7,))
