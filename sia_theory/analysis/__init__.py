"""The analysis layer: :func:`analyze` any transform under Gaussian base logits (issue 9 §2).

Re-exports only: :mod:`.laws` (the entropy-law classification shared with claim SI-7),
:mod:`.quantities` (octave closed forms, convergence, the freezing-point phase),
:mod:`.study` (one scheme's numbers), :mod:`.report` (``analyze`` and ``Report``).
"""

from ..gaussian.laws import (
    ENTROPY_LAWS,
    EntropyLawEvidence,
    classify_entropy_law,
    entropy_law_evidence,
)
from .quantities import (
    FixedContext,
    at_context,
    convergence,
    freezing_point,
    octave_closed_forms,
    phase_of_ratio,
    phase_table,
)
from .report import Report, analyze, plot_studies, zoo_markdown, zoo_studies
from .study import AnalysisSettings, SchemeStudy, scheme_study, summary_row

__all__ = ["ENTROPY_LAWS", "EntropyLawEvidence", "classify_entropy_law", "entropy_law_evidence",
           "FixedContext", "at_context", "convergence", "freezing_point", "octave_closed_forms",
           "phase_of_ratio", "phase_table", "Report", "analyze", "plot_studies", "zoo_markdown",
           "zoo_studies", "AnalysisSettings", "SchemeStudy", "scheme_study", "summary_row"]
