"""SI Fig. 1's constants are written once (:mod:`sia_theory.studies.si_fig1_constants`) and are
the paper's: no scaling, LogN with s = 0.4 and the scale-invariant transform with τ = 10, the
attention on the 100 most recent tokens, decades of distances from 10 (SI Fig. 1 caption and
§5), here written out independently of the module."""

from sia_theory.claims.si_montecarlo import SI9_LABELS
from sia_theory.schemes import SCHEMES
from sia_theory.studies import si_fig1_constants as c
from sia_theory.studies import train_attention_stats as tas
from sia_theory.studies.si_fig1_gaussian import ContextSweepSettings
from sia_theory.transforms import LogN, NoScale, ScaleInvariant

PAPER = (("No scale", NoScale()), ("LogN (s = 0.4)", LogN(0.4)),
         ("Scale-invariant (τ = 10)", ScaleInvariant(10.0)))


def test_the_constants_are_the_papers():
    assert c.FIG1_TRANSFORMS == PAPER
    assert c.FIG1_RECENT == 100
    assert c.FIG1_RANGES == ((10, 100), (100, 1_000), (1_000, 10_000), (10_000, 100_000))
    assert c.fig1_ranges(4096) == ((10, 100), (100, 1_000), (1_000, 4096))
    assert c.fig1_ranges(105) == ((10, 100),)  # [100, 105) is shorter than 10 tokens


def test_every_user_reads_the_one_definition():
    full = ContextSweepSettings()
    assert (full.transforms, full.recent, full.ranges) == (PAPER, 100, c.FIG1_RANGES)
    assert SI9_LABELS == tuple(label for label, _ in PAPER)
    assert tas.FIG1_RECENT is c.FIG1_RECENT and tas.FIG1_SCHEMES is c.FIG1_SCHEMES
    assert tas.fig1_ranges is c.fig1_ranges
    trained = tuple(SCHEMES[name].transform for name in c.FIG1_SCHEMES)
    assert trained == tuple(t for _, t in PAPER)  # the bottom row trains the top row's transforms
