"""sia_theory.cas.config, exercised by its own name: the phase, token-kind and grid checks."""

import pytest

from sia_theory.cas.config import (
    PHASES,
    RELATIVE_GAMMAS,
    TOKEN_KINDS,
    check_layer_grid,
    check_phase,
    check_token_kind,
)


def test_phases_and_their_relative_gammas():
    assert PHASES == ("subcritical", "critical", "supercritical")
    assert [RELATIVE_GAMMAS[p] for p in PHASES] == [0.5, 1.0, 1.5]
    assert check_phase("critical") == "critical"
    assert check_token_kind("simplex") == "simplex"
    assert TOKEN_KINDS == ("gaussian", "simplex")


def test_layer_grid():
    assert check_layer_grid(64, 0.5, [16, 256], 4) == (16, 256)


@pytest.mark.parametrize(("args", "name"), [
    ((0, 0.5, [16, 32], 4), "d"), ((8, 1.0, [16, 32], 4), "rho"), ((8, 0.5, [16], 4), "ns"),
    ((8, 0.5, [2, 32], 4), "ns"), ((8, 0.5, [16, 32], 1), "draws")])
def test_bad_grid_named(args, name):
    with pytest.raises(ValueError, match=name):
        check_layer_grid(*args)


def test_bad_names():
    with pytest.raises(ValueError, match="phase"):
        check_phase("frozen")
    with pytest.raises(ValueError, match="tokens"):
        check_token_kind("uniform")
