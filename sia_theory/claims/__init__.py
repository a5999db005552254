"""Every claim of THEORY.md as a row: ``python -m paper_checks [--quick]``.

Importing the package imports each claim module (every non-underscore module beside this file
other than ``core``), which registers its rows.
"""

import importlib
import pkgutil

from .core import (
    NEGATIVE_CONTROLS,
    REGISTRY,
    STATED,
    VERDICTS,
    Measurement,
    claim,
    negative_control,
    run_claims,
    verdict,
    write_table,
)

for _info in pkgutil.iter_modules(__path__):
    if not _info.name.startswith("_") and _info.name != "core":
        importlib.import_module(f"{__name__}.{_info.name}")

__all__ = ["NEGATIVE_CONTROLS", "REGISTRY", "STATED", "VERDICTS", "Measurement", "claim",
           "negative_control", "run_claims", "verdict", "write_table"]
