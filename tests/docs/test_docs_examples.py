"""Every Python example of the documentation pages runs as written (``docs/**/*.md``), like
``test_readme_examples.py`` for README.md.

Each ```` ```python ```` block runs in a fresh namespace in a temporary folder; the executed
tutorials (``docs/tutorials/*.py``) are run by the site build instead.
"""

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
EXAMPLES = [(page, i, code) for page in sorted(DOCS.rglob("*.md"))
            for i, code in enumerate(re.findall(r"```python\n(.*?)```", page.read_text(),
                                                flags=re.S))]


def test_the_pages_have_examples():
    pages = {page.name for page, _, _ in EXAMPLES}
    assert {"getting-started.md", "transforms.md", "training.md"} <= pages
    assert len(EXAMPLES) >= 10


@pytest.mark.parametrize("page, index, code", EXAMPLES,
                         ids=[f"{p.relative_to(DOCS)}#{i}" for p, i, _ in EXAMPLES])
def test_docs_example_runs(page, index, code, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    exec(compile(code, f"{page.relative_to(DOCS)} example {index}", "exec"),
         {"__name__": "__docs__"})
