"""The names :mod:`sia_theory.models.runs` exported in 0.3 still import from there: the engine's
operations stay, the model studies' plumbing resolves lazily from
:mod:`sia_theory.studies.model_runs` (``si_tau``/``SI_EPSILON`` from :mod:`sia_theory.schemes`)
with a ``DeprecationWarning`` that names the new home."""

import importlib
import warnings

import pytest

import sia_theory.models.runs as runs

# sia_theory.models.runs.__all__ of 0.3, written out (not read from the module under test)
EXPORTED_03 = ("MODEL_NAME", "TRAIN_LENGTH", "pretrained", "documents", "score_capture",
               "capture_scores", "position_signature", "scheme_families", "extend_losses",
               "SCHEME_NAMES", "schemes", "si_tau", "SI_EPSILON", "identical_prefix",
               "prefill_flops", "check_documents", "document_cells", "cell_document",
               "model_families", "family_definition", "family_cache", "fork_for")
ENGINE = {"score_capture", "capture_scores", "extend_losses", "identical_prefix",
          "position_signature", "prefill_flops"}


@pytest.mark.parametrize("name", EXPORTED_03)
def test_every_03_name_still_imports_from_models_runs(name):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = getattr(runs, name)
    deprecations = [w for w in caught if issubclass(w.category, DeprecationWarning)]
    if name in ENGINE:
        assert not deprecations and name in runs.__all__
        return
    home = "sia_theory.schemes" if name in ("si_tau", "SI_EPSILON") else \
        "sia_theory.studies.model_runs"
    assert len(deprecations) == 1 and home in str(deprecations[0].message)
    assert f"sia_theory.models.runs.{name}" in str(deprecations[0].message)
    assert value is getattr(importlib.import_module(home), name)
    assert name not in runs.__all__


def test_the_engine_module_exports_the_engine_only_and_refuses_unknown_names():
    assert set(runs.__all__) == ENGINE
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        runs.nonsense  # noqa: B018
    with pytest.warns(DeprecationWarning, match="BoundScheme"):
        assert runs.Scheme.__name__ == "BoundScheme"
