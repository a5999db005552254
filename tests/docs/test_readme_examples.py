"""Every Python example in README.md runs as written (documentation that cannot rot)."""

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
EXAMPLES = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_has_examples():
    assert len(EXAMPLES) >= 4


@pytest.mark.parametrize("index", range(len(EXAMPLES)))
def test_readme_example_runs(index, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    exec(compile(EXAMPLES[index], f"README.md example {index}", "exec"), {"__name__": "__readme__"})
