"""sia_theory.gaussian.asymptotic, exercised by its own name: the asymptotic sampler against the
lognormal closed form E[Z] = n·e^{1/2} and the exact route, within stated standard errors."""

import math

import numpy as np
import pytest

from sia_theory import NoScale
from sia_theory.gaussian.asymptotic import (
    asymptotic_range_statistics,
    simulate_gaussian_logits_asymptotic,
)
from sia_theory.gaussian.exact import expected_entropy_exact


def test_binned_range_matches_the_exact_route():
    """NoScale over [0, 1e6) with top_k = 200 (binned, not drawn): E[H] within 4 SE of the
    exact route, and E[log Z] close to log(1e6) + ½ (its law-of-large-numbers value)."""
    row = simulate_gaussian_logits_asymptotic(NoScale(), [(0, 10**6)], 400, seed=1,
                                              top_k=200).iloc[0]
    exact = expected_entropy_exact(NoScale(), 0, 10**6)
    assert abs(row["H_mean"] - exact.value) < 4 * row["H_se"] + exact.error
    assert abs(row["log_Z_mean"] - (math.log(1e6) + 0.5)) < 4 * row["log_Z_se"] + 1e-3


def test_small_segment_drawn_exactly_matches_total_attention():
    """[0, 50) with top_k = 1000 is drawn exactly: E[Z] = 50·e^{1/2} within 4 SE."""
    row = simulate_gaussian_logits_asymptotic(NoScale(), [(0, 50)], 2000, seed=0).iloc[0]
    assert abs(row["Z_mean"] - 50 * math.exp(0.5)) < 4 * row["Z_se"]


def test_masses_split_the_context():
    """Two ranges covering [0, n_ctx): per sample the masses sum to 1."""
    out = asymptotic_range_statistics(NoScale(), [(0, 3000), (3000, 10**5)], 20, seed=2,
                                      top_k=100, n_ctx=10**5)
    assert np.exp(out["log_mass"]).sum(axis=1) == pytest.approx(1.0, rel=1e-12)
    assert out["H"] == pytest.approx(out["log_Z"] - out["nbar"])


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"ranges": [], "samples": 4, "seed": 0}, "ranges"),
    ({"ranges": [(5, 5)], "samples": 4, "seed": 0}, "ranges"),
    ({"ranges": [(0, 5)], "samples": 1, "seed": 0}, "samples"),
    ({"ranges": [(0, 5)], "samples": 4, "seed": 0, "top_k": 0}, "top_k"),
    ({"ranges": [(0, 5)], "samples": 4, "seed": 0, "n_ctx": 2.5}, "n_ctx"),
])
def test_bad_input_named(kwargs, name):
    with pytest.raises(ValueError, match=name):
        simulate_gaussian_logits_asymptotic(NoScale(), **kwargs)
