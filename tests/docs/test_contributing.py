"""CONTRIBUTING.md names what exists: every repository path it cites in code (``sia_theory/...``,
``tests/...``, ``docs/...``, ``experiments/...``, ``.ci/run``) is a file or folder of this
checkout, and every ``NAME`` it places ``in`` a file is written in that file. (Its ``make``
targets are checked with the other pages' in ``test_docs_commands.py``.)"""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEXT = (ROOT / "CONTRIBUTING.md").read_text()
PATH = re.compile(r"`((?:sia_theory|tests|docs|experiments|benchmarks|paper_checks|\.ci)"
                  r"(?:/[\w.<>-]+)*/?)`")
NAME_IN = re.compile(r"`(\w+)`\s+in\s+`([\w./-]+\.\w+)`")


def cited_paths(text: str) -> list[str]:
    """The repository paths cited as code, without templates such as ``<name>.py``."""
    return [p for p in PATH.findall(text) if "<" not in p]


def test_every_cited_path_exists():
    paths = cited_paths(TEXT)
    assert len(paths) >= 20  # the scan sees the guide's paths
    missing = [p for p in paths if not (ROOT / p).exists()]
    assert not missing, missing


def test_every_name_placed_in_a_file_is_there():
    pairs = NAME_IN.findall(TEXT)
    assert {"ZOO_INFO", "TWENTY_PERCENT", "STUDIES", "CLAIM_REF", "CLAIM_ID"} <= {
        name for name, _ in pairs}
    absent = [(name, path) for name, path in pairs
              if not re.search(rf"\b{name}\b", (ROOT / path).read_text())]
    assert not absent, absent


def test_a_wrong_path_or_name_is_caught():
    """Negative control: a moved file and a name its file lacks are both reported; templated
    paths are not paths."""
    text = "see `sia_theory/zoo.py`, `tests/zoo/` and `experiments/<name>.py`; " \
           "`NO_SUCH_TABLE` in `sia_theory/zoo/registry.py`"
    assert cited_paths(text) == ["sia_theory/zoo.py", "tests/zoo/", "sia_theory/zoo/registry.py"]
    assert [p for p in cited_paths(text) if not (ROOT / p).exists()] == ["sia_theory/zoo.py"]
    ((name, path),) = NAME_IN.findall(text)
    assert not re.search(rf"\b{name}\b", (ROOT / path).read_text())
