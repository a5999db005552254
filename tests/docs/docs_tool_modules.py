"""The one loader of the documentation tools (``docs/_tools/*.py``) for the tests: they are
scripts beside mkdocs.yml, not a package, so a test loads one by its path."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

TOOLS = Path(__file__).resolve().parents[2] / "docs" / "_tools"


def load_tool(name: str):
    """``docs/_tools/<name>.py`` executed afresh as the module ``docs_tools_<name>`` (registered
    in ``sys.modules`` first, as an import would, so its dataclasses and caches work)."""
    spec = importlib.util.spec_from_file_location(f"docs_tools_{name}", TOOLS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
