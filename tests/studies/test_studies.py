"""One study contract for every study: ``study(settings, *, seed, execution=None) ->
StudyResult``, checked before any work; the registry names every study once; the seeding keys
stay byte-identical (they look like module paths but are keys: renaming one changes every
number drawn under it)."""

import dataclasses
import importlib
import inspect
import pkgutil
import re

import numpy as np
import pandas as pd
import pytest

import sia_theory.studies as studies_package
from sia_theory._infra.seeding import seed_int
from sia_theory.studies import (
    ALIASES,
    DEPRECATED_NAMES,
    STUDIES,
    Execution,
    Study,
    StudyResult,
    get_study,
)

NAMES = sorted(STUDIES)

# Every seeding key of the package, by where it is defined.
SEED_KEYS = {
    "sia_theory.studies.si_entropy_scaling:ENTROPY_STUDY": "si.entropy_scaling",
    "sia_theory.studies.si_entropy_extension:EXTENSION_STUDY": "si.entropy_extension",
    "sia_theory.studies.si_fig1_gaussian:CONTEXT_STUDY": "si.context_sweep",
    "sia_theory.gaussian.asymptotic:ASYMPTOTIC_STUDY": "si.asymptotic",
    "sia_theory.studies.ext_needle:NEEDLE_STUDY": "si.needle",
    "sia_theory.studies.cas_fig1_phase_diagram:PHASE_STUDY": "cas.phase_diagram",
    "sia_theory.cas.dynamics:TOKEN_STUDY": "cas.tokens",
    "sia_theory.studies.cas_fig2_jacobian:JACOBIAN_STUDY": "cas.jacobian_sweep",
    "sia_theory.studies.ext_si_on_cas:SI_ON_CAS_STUDY": "cas.si_on_cas",
    "sia_theory.cas.transition:TRANSITION_STUDY": "cas.transition",
    "sia_theory.cas.universality:UNIVERSALITY_STUDY": "cas.universality",
    "sia_theory.studies.cas_depth:DEPTH_STUDY": "cas.depth",
    "sia_theory.studies.cas_sparsity:SPARSITY_STUDY": "cas.sparsity",
    "sia_theory.studies.cas_finite_n:MATCHED_STUDY": "cas.matched_self_weight",
    "sia_theory.studies.model_gaussianity:GAUSSIANITY_STUDY": "models.gaussianity",
    "sia_theory.studies.model_entropy_law:ENTROPY_LAW_STUDY": "models.entropy_law",
    "sia_theory.studies.model_extrapolation:EXTRAPOLATION_STUDY": "models.extrapolation",
    "sia_theory.studies.model_passkey:PASSKEY_CELLS_STUDY": "models.passkey_cells",
    "sia_theory.models.corpus:PASSKEY_STUDY": "models.passkey",
    "sia_theory.studies.ext_zoo_phase:TURNOVER_STUDY": "analysis.zoo_phase.turnover",
    "sia_theory.studies.train_grid:TRAIN_GRID_STUDY": "training.grid",
    "sia_theory.studies.train_needle:NEEDLE_CELLS_STUDY": "training.needle",
    "sia_theory.training.needle_task:NEEDLE_TASK_STUDY": "training.needle_task",
    "sia_theory.studies.ext_sphere:SPHERE_CLAIMS_STUDY": "ext.sphere",
    "sia_theory.studies.ext_phase_plane:PHASE_PLANE_STUDY": "ext.phase_plane",
    "sia_theory.sphere.routes:SPHERE_STUDY": "sphere.routes",
    "sia_theory.sphere.gaps:GAPS_STUDY": "gaps.bootstrap",
    "sia_theory.studies.head_phases:HEAD_PHASES_STUDY": "head_phases.bootstrap",
}
@pytest.mark.parametrize("where", sorted(SEED_KEYS))
def test_seeding_keys_are_byte_identical(where):
    module, name = where.split(":")
    assert getattr(importlib.import_module(module), name) == SEED_KEYS[where]


@pytest.mark.parametrize("key", sorted(set(SEED_KEYS.values())))
def test_a_key_seeds_the_stream_its_documented_rule_gives(key):
    """``seed_int(seed, key)``: the first 8 bytes of SHA-256 of the key (little-endian) after
    the seed in a ``SeedSequence``, first 64-bit word shifted right by one (written out here
    from the rule in :mod:`sia_theory._infra.seeding`, not from its code)."""
    import hashlib

    digest = int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "little")
    for seed in (0, 12345):
        word = np.random.SeedSequence([seed, digest]).generate_state(2, np.uint64)[0]
        assert seed_int(seed, key) == int(word) >> 1


def test_the_registry_names_every_study_defined_in_the_package_once():
    defined = {}
    for info in pkgutil.iter_modules(studies_package.__path__):
        module = importlib.import_module(f"sia_theory.studies.{info.name}")
        for value in vars(module).values():
            if isinstance(value, Study) and value.__module__ == module.__name__:
                defined[value.name] = info.name
    assert defined == STUDIES
    assert set(ALIASES.values()) <= set(STUDIES)
    for alias, name in ALIASES.items():
        assert get_study(alias) is get_study(name)


def test_every_listed_study_is_a_registered_study_named_with_underscores():
    """One naming style (underscores) and one contract for every name of :data:`STUDIES`; the
    short command-line :data:`ALIASES` and the deprecated 0.3 names are the only others."""
    for name, module in STUDIES.items():
        study = get_study(name)
        assert isinstance(study, Study) and study.name == name, name
        assert re.fullmatch(r"[a-z][a-z0-9]*(_[a-z0-9]+)*", name), f"{name}: underscores only"
        assert re.fullmatch(r"[a-z][a-z0-9_]*", module), module
        assert study.__module__ == f"sia_theory.studies.{module}"
    assert not set(ALIASES) & set(STUDIES) and not set(DEPRECATED_NAMES) & set(STUDIES)
    for name in ("train_attention_stats", "train_phase"):  # were functions outside the contract
        assert name in STUDIES and get_study(name).sweepable and get_study(name).partial


@pytest.mark.parametrize("name", NAMES)
def test_every_study_has_the_one_call_contract(name):
    study = get_study(name)
    params = inspect.signature(study.fn).parameters
    assert list(params) == ["settings", "seed", "execution"], "fn(settings, seed, execution)"
    assert dataclasses.is_dataclass(study.settings_type)
    quick, full = study.quick(), study.full()
    assert isinstance(quick, study.settings_type) and isinstance(full, study.settings_type)
    assert quick != full, "quick settings must differ from the full ones"
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(full, dataclasses.fields(full)[0].name, None)
    assert study.__doc__, "a study says what its frames are"


@pytest.mark.parametrize("name", NAMES)
def test_bad_arguments_are_refused_before_any_work(name):
    study = get_study(name)
    quick = study.quick()
    with pytest.raises(ValueError, match="settings of study"):
        study({"not": "settings"}, seed=0)
    with pytest.raises(ValueError, match="seed"):
        study(quick, seed=-1)
    with pytest.raises(TypeError):
        study(quick, 0)  # seed is keyword-only
    with pytest.raises(ValueError, match="execution"):
        study(quick, seed=0, execution="threads")
    if not study.sweepable:
        with pytest.raises(ValueError, match="runs in this process only"):
            study(quick, seed=0, execution=Execution(store="somewhere"))
    if not study.partial:
        with pytest.raises(ValueError, match="finished_only|in this process"):
            study(quick, seed=0, execution=Execution(finished_only=True, store="somewhere"))


def test_a_study_returns_frames_and_metadata_and_names_a_missing_frame():
    study = get_study("cas_depth")
    settings = dataclasses.replace(study.quick(), n=64, d=16, layers=2, samples=2,
                                   relative_gammas=(0.5, 1.5))
    result = study(settings, seed=3)
    assert isinstance(result, StudyResult) and result.study == "cas_depth" and result.seed == 3
    assert set(result.frames) == {"gaussian", "simplex"}
    assert all(isinstance(f, pd.DataFrame) and len(f) for f in result.frames.values())
    again = study(settings, seed=3)
    pd.testing.assert_frame_equal(result["gaussian"], again["gaussian"], check_exact=True)
    other = study(settings, seed=4)
    assert not np.allclose(result["gaussian"]["cos"], other["gaussian"]["cos"])
    with pytest.raises(KeyError, match="gaussian, simplex"):
        result["nope"]
    with pytest.raises(TypeError):
        result.frames["x"] = pd.DataFrame()


def test_settings_validate_with_the_library_validators():
    """The sweep command's flags land in these settings: out-of-range values are refused by
    name before any cell runs."""
    from sia_theory.studies.cas_fig1_phase_diagram import PhaseDiagramSettings
    from sia_theory.studies.cas_fig2_jacobian import JacobianSweepSettings
    from sia_theory.studies.si_entropy_scaling import EntropyScalingSettings

    for bad in (1.5, 0.0, -0.2, float("nan")):
        with pytest.raises(ValueError, match="rho"):
            PhaseDiagramSettings(rho=bad)
        with pytest.raises(ValueError, match="rho"):
            JacobianSweepSettings(rho=bad)
    with pytest.raises(ValueError, match="dims"):
        PhaseDiagramSettings(dims=())
    with pytest.raises(ValueError, match="windows"):
        EntropyScalingSettings(t_max=1000, windows=((10, 10**4),))
    assert EntropyScalingSettings(t_max=10**4).windows == ((100, 1000), (1000, 10**4))


@pytest.mark.parametrize("module, wrapper", [("train_attention_stats", "trained_fig1"),
                                             ("train_phase", "trained_phases")])
def test_the_03_functions_of_the_trained_model_studies_are_deprecated_wrappers(module, wrapper,
                                                                               tmp_path):
    """0.3's ``trained_fig1`` / ``trained_phases`` still run (through the study: an empty store
    read with ``finished_only`` is refused by the study's grid) and warn."""
    fn = getattr(importlib.import_module(f"sia_theory.studies.{module}"), wrapper)
    with pytest.warns(DeprecationWarning, match=f"{wrapper} is deprecated; use the study"):
        with pytest.raises(ValueError, match="holds no finished cell"):
            fn(True, 0, Execution(store=tmp_path, finished_only=True))
