"""The claims table lives in :mod:`sia_theory.claims` (installed with the package); this folder
of the repository keeps the committed full-fidelity table (``results/``) and ``python -m
paper_checks`` as a thin alias of ``python -m sia_theory.claims`` (and of ``sia-theory
check``)."""

from sia_theory.claims import *  # noqa: F403 - the alias re-exports the package's names
from sia_theory.claims import __all__  # noqa: F401
