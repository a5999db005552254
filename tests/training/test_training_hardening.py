"""Bad input and damaged files on the training surfaces: one ValueError naming the parameter (or
the file) before any work, a damaged store file recomputed like a damaged Parquet file, and a
failed start that leaves nothing behind."""

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from sia_theory import Transform
from sia_theory.schemes import Scheme
from sia_theory.studies.base import Execution
from sia_theory.studies.train_grid import SETTINGS_FILE, TrainGridSettings, train_grid
from sia_theory.training import TrainSettings
from sia_theory.training.params import from_safetensors
from sia_theory.training.run import PARAMETERS_FILE, TrainedRun

QUICK = TrainSettings.quick()
ONE = TrainGridSettings(train=QUICK, runs=(("p-rope", 0, None),))


@pytest.fixture(scope="module")
def quick_run():
    pytest.importorskip("jax")
    from sia_theory.training import train

    return train("p-rope", QUICK, seed=0)


@pytest.fixture(scope="module")
def one_cell_store(tmp_path_factory):
    pytest.importorskip("jax")
    store = tmp_path_factory.mktemp("grid") / "store"
    result = train_grid(ONE, seed=0, execution=Execution(store=store))
    return store, result


# --- damaged parameters files --------------------------------------------------------------

def _damage(path, how):
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[:len(data) // 2])
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "header":
        path.write_bytes(b"\xff" * 64 + data[64:])  # the length and the JSON header


@pytest.mark.parametrize("how", ["truncated", "empty", "header"])
def test_damaged_parameters_in_a_store_are_recomputed_to_the_same_numbers(one_cell_store,
                                                                          tmp_path, how):
    import shutil

    store, result = one_cell_store
    copy = tmp_path / "copy"
    shutil.copytree(store, copy)
    (victim,) = (copy / "cells").glob(f"*.{PARAMETERS_FILE}")
    _damage(victim, how)
    again = train_grid(ONE, seed=0, execution=Execution(store=copy))
    pd.testing.assert_frame_equal(again["validation"], result["validation"])
    pd.testing.assert_frame_equal(again["curves"], result["curves"])
    (original,) = (store / "cells").glob(f"*.{PARAMETERS_FILE}")
    rewritten, _ = from_safetensors(victim.read_bytes())  # whole again (its timings differ)
    for key, value in from_safetensors(original.read_bytes())[0]["layers"].items():
        np.testing.assert_array_equal(rewritten["layers"][key], value)


@pytest.mark.parametrize("how", ["truncated", "empty", "header"])
def test_loading_a_damaged_saved_run_names_the_file(quick_run, tmp_path, how):
    quick_run.save(tmp_path / "run")
    path = tmp_path / "run" / PARAMETERS_FILE
    _damage(path, how)
    with pytest.raises(ValueError, match=PARAMETERS_FILE) as err:
        TrainedRun.load(tmp_path / "run")
    assert str(path) in str(err.value)


def test_a_saved_run_loads_back_exactly(quick_run, tmp_path):
    quick_run.save(tmp_path / "run")
    back = TrainedRun.load(tmp_path / "run")
    assert back.validation == quick_run.validation
    for key, value in quick_run.parameters["layers"].items():
        np.testing.assert_array_equal(back.parameters["layers"][key], value)


# --- a failed start leaves nothing behind --------------------------------------------------

@pytest.mark.slow  # a few seconds; make test-all and CI run it
def test_a_scheduler_that_cannot_be_reached_leaves_no_settings_file(tmp_path):
    store = tmp_path / "store"
    with pytest.raises((ValueError, OSError)):
        train_grid(ONE, seed=0, execution=Execution(store=store,
                                                    scheduler="tcp://127.0.0.1:9"))
    assert not store.exists(), sorted(p.name for p in store.rglob("*"))
    existing = tmp_path / "existing"
    existing.mkdir()
    with pytest.raises((ValueError, OSError)):
        train_grid(ONE, seed=0, execution=Execution(store=existing,
                                                    scheduler="tcp://127.0.0.1:9"))
    assert existing.is_dir() and not any(existing.iterdir())
    # a later run with other settings into that folder is not refused
    from sia_theory.studies.train_grid import check_store_settings

    other = TrainSettings(**{**QUICK.to_dict(), "d_model": 64, "eval_multiples": (1, 4, 16)})
    assert check_store_settings(existing, other) == existing / SETTINGS_FILE


# --- TrainedRun ----------------------------------------------------------------------------

@pytest.mark.parametrize("length", [2.5, "abc", float("nan"), 0, -32, True])
def test_validation_loss_length_is_checked(quick_run, length):
    with pytest.raises(ValueError, match="length"):
        quick_run.validation_loss(length)
    with pytest.raises(ValueError, match="length"):
        quick_run.decoder(length)


def test_validation_loss_takes_an_integral_float(quick_run):
    assert quick_run.validation_loss(32.0) == quick_run.validation[32]


@pytest.mark.parametrize("where", ["file", "under"])
def test_saving_into_or_under_a_regular_file_names_the_path(quick_run, tmp_path, where):
    blocker = tmp_path / "blocker"
    blocker.write_text("not a folder")
    target = blocker if where == "file" else blocker / "run"
    with pytest.raises(ValueError, match="blocker"):
        quick_run.save(target)
    assert blocker.read_text() == "not a folder"


# --- train(parameters=, batches=) ------------------------------------------------------------

def _train(**kwargs):
    pytest.importorskip("jax")
    from sia_theory.training import train

    return train("p-rope", QUICK, seed=0, **kwargs)


def test_parameters_of_the_wrong_structure_or_shape_are_refused(quick_run):
    with pytest.raises(ValueError, match="parameters.*layers"):
        _train(parameters={})
    wrong = {**quick_run.parameters, "layers": {**quick_run.parameters["layers"]}}
    wrong["layers"]["w_q"] = wrong["layers"]["w_q"][:, :, :16]
    with pytest.raises(ValueError, match=r"parameters.*w_q.*\(2, 32, 32\)"):
        _train(parameters=wrong)
    bad = {**quick_run.parameters, "embedding": quick_run.parameters["embedding"][:10]}
    with pytest.raises(ValueError, match=r"parameters.*embedding.*\(320, 32\)"):
        _train(parameters=bad)
    nan = {**quick_run.parameters, "unembedding": np.full((32, 320), np.nan, np.float32)}
    with pytest.raises(ValueError, match=r"parameters.*unembedding.*finite"):
        _train(parameters=nan)


def _batches(windows_shape, mask_shape, high=320):
    def batches(step):
        rng = np.random.default_rng(step)
        return rng.integers(0, high, windows_shape), np.ones(mask_shape)
    return batches


@pytest.mark.parametrize("windows_shape, mask_shape, high, match", [
    ((4, 32), (4, 32), 320, r"batches.*windows.*\(4, 33\)"),
    ((4, 33), (4, 33), 320, r"batches.*mask.*\(4, 32\)"),
    ((3, 33), (3, 32), 320, r"batches.*windows.*\(4, 33\)"),
    ((4, 33), (4, 32), 1000, r"batches.*token ids.*320"),
])
def test_batches_of_the_wrong_shape_or_ids_are_refused(windows_shape, mask_shape, high, match):
    with pytest.raises(ValueError, match=match):
        _train(batches=_batches(windows_shape, mask_shape, high))


def test_batches_must_return_a_pair():
    with pytest.raises(ValueError, match="batches"):
        _train(batches=lambda step: np.zeros((4, 33), int))


# --- a transform that overflows in float32 only ---------------------------------------------

@dataclass(frozen=True)
class SteepBias(Transform):
    """m = scale·exp(rate·t): finite in float64 far beyond where float32 (max 3.4e38)
    overflows."""

    scale: float = 1.0
    rate: float = 0.5
    depends_on = frozenset({"distance"})

    def affine(self, t, n, h):
        return np.ones_like(t), self.scale * np.exp(self.rate * t)


@pytest.mark.parametrize("scale, rate, at", [
    (1e39, 0.0, 0),    # overflows float32 at every distance: fails at once
    (1e38, 0.1, 13),   # 1e38·e^1.3 = 3.7e38, inside the training length (32)
    (1.0, 0.5, 178),   # e^89 = 4.5e38, only at the validation lengths (128, 512)
])
def test_a_transform_that_overflows_float32_is_refused_before_training(scale, rate, at):
    scheme = Scheme("steep", "p-rope", SteepBias(scale, rate))
    a, m = scheme.transform.coefficients(np.arange(512.0))
    with np.errstate(over="ignore"):
        assert np.isfinite(m).all() and not np.isfinite(m.astype(np.float32)).all()
    pytest.importorskip("jax")
    from sia_theory.training import train

    with pytest.raises(ValueError, match=rf"SteepBias.*float32.*distance {at}\b") as err:
        train(scheme, QUICK, seed=0)
    assert "learning rate" not in str(err.value)


@dataclass(frozen=True)
class NanCoefficients(Transform):
    """Overrides the public ``coefficients`` (not ``affine``), so the base class's finiteness
    check never runs: ``m`` is NaN from distance ``at`` on."""

    at: int = 0
    depends_on = frozenset({"distance"})

    def coefficients(self, t, n_ctx=None, h=None):
        t = np.asarray(t, dtype=np.float64)
        return np.ones_like(t), np.where(t >= self.at, np.nan, 0.0)


@pytest.mark.parametrize("at", [0, 13, 178])  # at once, inside the training length, beyond it
def test_a_transform_whose_coefficients_are_nan_is_refused_before_training(at):
    scheme = Scheme("nan", "p-rope", NanCoefficients(at))
    assert np.isnan(scheme.transform.coefficients(np.arange(512.0))[1][at:]).all()
    pytest.importorskip("jax")
    from sia_theory.training import train

    with pytest.raises(ValueError, match=rf"NanCoefficients.*m = nan.*distance {at}\b") as err:
        train(scheme, QUICK, seed=0)
    assert "diverged" not in str(err.value)


# --- the other training surfaces -------------------------------------------------------------

@pytest.mark.parametrize("make, match", [
    (lambda: TrainSettings.from_dict(None), "settings must be a dict"),
    (lambda: TrainSettings.from_dict([("steps", 2)]), "settings must be a dict"),
    (lambda: TrainSettings(eval_multiples={1: 2}), "eval_multiples"),
    (lambda: TrainSettings(eval_multiples="14"), "eval_multiples"),
    (lambda: TrainSettings(eval_multiples=[]), "eval_multiples"),
    (lambda: TrainSettings(eval_multiples=(4, 16)), "eval_multiples.*including 1"),
])
def test_train_settings_bad_input_names_the_field(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_needle_settings_bad_input_names_the_field():
    from sia_theory.training.needle import NeedleTuneSettings

    for value in ({1: 2}, "14", [], None):
        with pytest.raises(ValueError, match="eval_multiples"):
            NeedleTuneSettings(eval_multiples=value)
    assert NeedleTuneSettings(eval_multiples=[16, 1, 4, 4]).eval_multiples == (1, 4, 16)
    with pytest.raises(ValueError, match="train must be a TrainSettings"):
        NeedleTuneSettings().tune_settings(None)


def test_evaluate_needles_checks_its_parameters(quick_run):
    from sia_theory.training.needle import NeedleTuneSettings, evaluate_needles

    long_run = TrainedRun(scheme="p-rope", tau=None, seed=0,
                          settings=TrainSettings(**{**QUICK.to_dict(), "train_length": 256,
                                                    "eval_multiples": (1,)}),
                          parameters=quick_run.parameters, train_losses=np.zeros(1),
                          validation_curve=())
    with pytest.raises(ValueError, match="parameters.*layers"):
        evaluate_needles(long_run, NeedleTuneSettings.quick(), parameters={})


def test_loading_a_folder_without_a_run_names_the_missing_file(quick_run, tmp_path):
    with pytest.raises(ValueError, match="curves.csv"):
        TrainedRun.load(tmp_path / "absent")
    quick_run.save(tmp_path / "run")
    (tmp_path / "run" / "curves.csv").write_text("")
    with pytest.raises(ValueError, match="curves.csv"):
        TrainedRun.load(tmp_path / "run")
    (tmp_path / "run" / "curves.csv").write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="curves.csv.*split"):
        TrainedRun.load(tmp_path / "run")
    with pytest.raises(ValueError, match="frame"):
        TrainedRun.from_stored(pd.DataFrame({"a": [1]}), quick_run.parameters_bytes())
