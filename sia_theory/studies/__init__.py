"""The studies: one module per figure (named like ``experiments/`` and ``paper_checks/``), each
a :class:`~sia_theory.studies.base.Study` with one call contract,
``study(settings, *, seed, execution=None) -> StudyResult``, called the same way by its
figure, its claims, ``sia-theory sweep NAME`` and the tests.

:data:`STUDIES` maps every study's name to its module (loaded on first use: the command line
lists the studies without importing them); :func:`get_study` returns the study object of a
name or of one of its :data:`ALIASES`. The contract is :mod:`.base`.

Each study's module holds its settings type (``quick()``, ``full()``) and its study object:

* SI: :mod:`.si_fig1_gaussian`, :mod:`.si_entropy_scaling`, :mod:`.si_entropy_extension`;
* CAS: :mod:`.cas_fig1_phase_diagram`, :mod:`.cas_fig2_jacobian`, :mod:`.cas_finite_n`,
  :mod:`.cas_transition`, :mod:`.cas_depth`, :mod:`.cas_sparsity`;
* beyond the papers: :mod:`.ext_needle`, :mod:`.ext_si_on_cas`, :mod:`.ext_trichotomy`,
  :mod:`.ext_universality`, :mod:`.ext_zoo_phase`, :mod:`.ext_sphere`,
  :mod:`.ext_phase_plane`, :mod:`.zoo_comparison`;
* the pretrained model: :mod:`.model_gaussianity`, :mod:`.model_entropy_law`,
  :mod:`.model_extrapolation`, :mod:`.model_passkey`, :mod:`.head_phases`;
* models trained here: :mod:`.train_grid`, :mod:`.train_needle`,
  :mod:`.train_attention_stats`, :mod:`.train_phase`.
"""

import importlib

from .._deprecated import deprecated

__all__ = ["STUDIES", "ALIASES", "SWEEPABLE", "DEPRECATED_NAMES", "get_study", "study_names",
           "Study", "StudyResult", "Execution", "DEFAULT_EXECUTION", "study", "sweep_store"]

STUDIES = {
    "si_fig1_gaussian": "si_fig1_gaussian",
    "si_entropy_scaling": "si_entropy_scaling",
    "si_entropy_extension": "si_entropy_extension",
    "cas_fig1_phase_diagram": "cas_fig1_phase_diagram",
    "cas_fig2_jacobian": "cas_fig2_jacobian",
    "cas_finite_n": "cas_finite_n",
    "cas_transition": "cas_transition",
    "cas_depth": "cas_depth",
    "cas_sparsity": "cas_sparsity",
    "ext_needle": "ext_needle",
    "ext_si_on_cas": "ext_si_on_cas",
    "ext_trichotomy": "ext_trichotomy",
    "ext_universality": "ext_universality",
    "ext_zoo_phase": "ext_zoo_phase",
    "ext_sphere": "ext_sphere",
    "ext_phase_plane": "ext_phase_plane",
    "model_gaussianity": "model_gaussianity",
    "model_entropy_law": "model_entropy_law",
    "model_extrapolation": "model_extrapolation",
    "model_passkey": "model_passkey",
    "scheme_analysis": "zoo_comparison",
    "zoo_comparison": "zoo_comparison",
    "train_grid": "train_grid",
    "train_needle": "train_needle",
    "train_attention_stats": "train_attention_stats",
    "train_phase": "train_phase",
    "head_phases": "head_phases",
}
"""Study name → module of :mod:`sia_theory.studies` that defines it."""

ALIASES = {"entropy-scaling": "si_entropy_scaling", "phase-diagram": "cas_fig1_phase_diagram",
           "jacobian": "cas_fig2_jacobian"}
"""Short command-line names of some studies (``sia-theory sweep phase-diagram``)."""
SWEEPABLE = ("si_entropy_scaling", "cas_fig1_phase_diagram", "cas_fig2_jacobian", "ext_needle",
             "ext_si_on_cas", "ext_universality", "model_gaussianity", "model_entropy_law",
             "model_extrapolation", "model_passkey", "train_grid", "train_needle",
             "train_attention_stats", "train_phase", "head_phases")
"""The studies that run their cells on the sweep engine (``sia-theory sweep`` runs these; a
test holds the list against each study's ``sweepable``)."""
DEPRECATED_NAMES = {"train-grid": "train_grid", "train-needle": "train_needle"}
"""Names of 0.3 (one naming style now: underscores); they resolve with a deprecation warning
until 0.5."""


_BASE = ("DEFAULT_EXECUTION", "Execution", "Study", "StudyResult", "study", "sweep_store")


def __getattr__(name):  # the contract loads on first use: listing the studies imports nothing
    if name in _BASE:
        return getattr(importlib.import_module(f"{__name__}.base"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def study_names() -> tuple[str, ...]:
    """The names of every study, in :data:`STUDIES` order.

    Returns
    -------
    tuple of str

    Examples
    --------
    >>> "ext_needle" in study_names()
    True
    """
    return tuple(STUDIES)


def get_study(name: str):
    """The :class:`Study` called ``name`` (or an alias of it), or ``ValueError`` listing the
    names.

    Parameters
    ----------
    name : str
        A study name, an alias of one, or a deprecated name (which resolves with a
        ``DeprecationWarning``).

    Returns
    -------
    Study

    Raises
    ------
    ValueError
        For an unknown name (the message lists the names).

    Examples
    --------
    >>> import dataclasses
    >>> from sia_theory.studies import Execution, get_study
    >>> study = get_study("jacobian")  # an alias
    >>> study.name, study.sweepable
    ('cas_fig2_jacobian', True)
    >>> settings = dataclasses.replace(study.quick(), n=100, dims=(16,), points=3, draws=2)
    >>> result = study(settings, seed=0, execution=Execution(scheduler="sync"))
    >>> sorted(result.frames)
    ['eta', 'simplex', 'summary']
    >>> eta = result["summary"]["eta_mean"].iloc[-1]  # γ = 8 = 4γ_c: η → 1 − 1/d (CAS Thm 2.4)
    >>> bool(abs(eta - (1 - 1 / 16)) < 0.01)
    True
    """
    if name in DEPRECATED_NAMES:
        deprecated(f"study name {name!r}", repr(DEPRECATED_NAMES[name]))
        name = DEPRECATED_NAMES[name]
    name = ALIASES.get(name, name)
    if name not in STUDIES:
        raise ValueError(f"unknown study {name!r}; choose from {', '.join(STUDIES)}")
    # start-up: the base loads pandas; the command line lists the studies without it
    from .base import Study

    module = importlib.import_module(f"{__name__}.{STUDIES[name]}")
    for value in vars(module).values():
        if isinstance(value, Study) and value.name == name:
            return value
    raise LookupError(f"module {module.__name__} defines no study named {name!r}")
