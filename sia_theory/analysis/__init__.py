"""``analyze(transform) -> Report``: any transform under Gaussian base logits, against the zoo.

Re-exports only: :mod:`.report` (``analyze``, ``Report``, the four-panel figure and the zoo
table); the per-scheme study and its settings (:mod:`sia_theory.studies.zoo_comparison`), the
entropy-law classification shared with claim SI-7 (:mod:`sia_theory.gaussian.laws`), the octave
closed forms and their convergence (:mod:`sia_theory.gaussian.closed_forms`), the REM phase
(:mod:`sia_theory.gaussian.phase`) and the frozen-context wrapper
(:mod:`sia_theory.transforms`), under the names this package has always exported.
"""

from ..gaussian.closed_forms import convergence, octave_closed_forms
from ..gaussian.laws import (
    ENTROPY_LAWS,
    LOG_MARGIN,
    EntropyLawEvidence,
    classify_entropy_law,
    entropy_law_evidence,
    scaling_class,
)
from ..gaussian.phase import freezing_point, phase_of_ratio, phase_table
from ..studies.zoo_comparison import (
    AnalysisSettings,
    SchemeStudy,
    scheme_study,
    summary_row,
    zoo_studies,
)
from ..transforms import FixedContext, at_context
from .report import Report, analyze, plot_studies, zoo_markdown

__all__ = ["ENTROPY_LAWS", "LOG_MARGIN", "EntropyLawEvidence", "classify_entropy_law",
           "entropy_law_evidence", "scaling_class",
           "FixedContext", "at_context", "convergence", "freezing_point", "octave_closed_forms",
           "phase_of_ratio", "phase_table", "Report", "analyze", "plot_studies", "zoo_markdown",
           "zoo_studies", "AnalysisSettings", "SchemeStudy", "scheme_study", "summary_row"]
