"""Every formula of docs/criticality.md names the code that checks it (``checked by:``); those
references must exist: each ``tests/FILE.py::NAME`` is a test function of that file, each claim ID
is a registered claim of the claims table. A renamed or deleted test fails here."""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "criticality.md"
TEXT = DOC.read_text()
TEST_REFS = sorted(set(re.findall(r"(tests/[\w/]+\.py)::(\w+)", TEXT)))
CLAIM_REFS = sorted(set(re.findall(r"\b((?:EXT|SI|CAS|INA)-\d+)\b", TEXT)))


def _functions(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {node.name for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}


def test_every_section_says_what_checks_it():
    sections = re.split(r"\n## ", TEXT)[1:]
    assert len(sections) == 4
    for section in sections:
        assert section.count("checked by") >= 3, section.splitlines()[0]


@pytest.mark.parametrize("path, name", TEST_REFS)
def test_referenced_test_exists(path, name):
    file = ROOT / path
    assert file.exists(), path
    assert name in _functions(file), f"{path}::{name} is named in docs/criticality.md"


def test_referenced_claims_are_registered():
    from sia_theory.claims.core import REGISTRY

    assert len(TEST_REFS) >= 20 and {"EXT-1", "EXT-7"} <= set(CLAIM_REFS)
    missing = [c for c in CLAIM_REFS if c not in REGISTRY]
    assert not missing, missing
