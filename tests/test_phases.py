"""One phase vocabulary for the REM criticality (liquid / critical / frozen), used everywhere;
the CAS phases keep their names and map onto it."""

import math

import numpy as np
import pytest

from sia_theory import CAS_PHASES, REM_PHASES, NoScale, ScaleInvariant
from sia_theory.cas.simplex import critical_gamma, phase_of, simplex_self_weight
from sia_theory.gaussian.phase import PHASE_BAND, phase_of_ratio, phase_table
from sia_theory.phases import CAS_OF_REM, PHASE_LABELS
from sia_theory.zoo import Temperature


def test_the_vocabularies_are_the_documented_words():
    assert REM_PHASES == ("liquid", "critical", "frozen")
    assert CAS_PHASES == ("subcritical", "critical", "supercritical")
    assert CAS_OF_REM == {"liquid": "subcritical", "critical": "critical",
                          "frozen": "supercritical"}
    assert set(PHASE_LABELS) == set(REM_PHASES) | set(CAS_PHASES)


@pytest.mark.parametrize(("ratio", "phase"), [(0.5, "liquid"), (1 - PHASE_BAND - 1e-9, "liquid"),
                                              (1.0, "critical"), (1 + PHASE_BAND, "critical"),
                                              (1.2, "frozen")])
def test_the_rem_phase_follows_the_freezing_point(ratio, phase):
    assert str(phase_of_ratio(ratio)) == phase


def test_phase_tables_speak_the_rem_vocabulary():
    """No scaling is liquid at every scale; a temperature of 3 freezes ranges of fewer than
    e^{(3/1.1)²/2} ≈ 41 keys (σ = 3 above 1.1·√(2 log M)); SI is in the critical band from
    t = 2^11 on (its spread over the freezing point tends to 1: THEORY.md §6)."""
    n = 2**14
    octaves = 2 ** np.arange(1, 13)
    none = phase_table(NoScale(), n, octaves)
    assert set(none["phase"]) == {"liquid"}
    hot = phase_table(Temperature(3.0), n, octaves)
    frozen = hot["M"] < math.exp((3.0 / (1 + PHASE_BAND)) ** 2 / 2)
    assert frozen.sum() == 5 and set(hot[frozen & (hot["t"] > 0)]["phase"]) == {"frozen"}
    assert "frozen" not in set(hot[~frozen]["phase"])
    si = phase_table(ScaleInvariant(10.0), n, octaves)
    assert set(si[si["t"] >= 2**11]["phase"]) == {"critical"}
    assert set(si["phase"]) <= set(REM_PHASES)


def test_cas_phases_map_onto_the_rem_phases_through_the_self_weight():
    """Below γ_c the self weight of simplex tokens → 0 (attention spread over all tokens: the
    liquid side), above it → 1 (frozen onto one token), at it ½."""
    rho, n = 0.5, 1e12
    gc = float(critical_gamma(rho))
    weights = {phase: float(simplex_self_weight(n=n, gamma=g * gc, rho=rho))
               for phase, g in zip(CAS_PHASES, (0.5, 1.0, 1.5), strict=True)}
    assert weights["subcritical"] < 1e-2 and weights["supercritical"] > 1 - 1e-2
    assert weights["critical"] == pytest.approx(0.5, abs=1e-6)
    for rem, cas in CAS_OF_REM.items():
        assert phase_of(gamma=(0.5 if rem == "liquid" else 1.5 if rem == "frozen"
                                     else 1.0) * gc, rho=rho) == cas


def test_phase_shift_counts_heads_by_hand():
    """Four heads: liquid → liquid, liquid → critical, critical → frozen, frozen → frozen (ratios
    chosen away from the band's edges); shares, changes and medians worked out by hand."""
    from sia_theory.gaussian.phase import phase_shift

    train, end = [0.5, 0.5, 1.0, 2.0], [0.5, 1.0, 2.0, 4.0]
    got = phase_shift(train, end)
    assert got["liquid_train"] == 0.5 and got["critical_train"] == 0.25
    assert got["frozen_train"] == 0.25
    assert got["liquid_end"] == 0.25 and got["critical_end"] == 0.25 and got["frozen_end"] == 0.5
    assert got["phase_changed"] == 0.5
    assert got["phase_shift"] == pytest.approx(np.log(2.0), rel=1e-15)  # |log| = 0, l2, l2, l2
    assert got["median_ratio_train"] == 0.75 and got["median_ratio_end"] == 1.5
    for bad in ([], [0.5, -1.0], [0.5, np.nan]):
        with pytest.raises(ValueError, match="ratio_train"):
            phase_shift(bad, [0.5] * max(len(bad), 1))
    with pytest.raises(ValueError, match="same number"):
        phase_shift([0.5, 1.0], [0.5])
