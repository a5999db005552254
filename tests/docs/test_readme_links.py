"""README.md works where it is shown without the repository (the package index shows it as the
project's description): every link is absolute, and the links into the repository start with
the project's address (``Source`` in pyproject.toml's ``[project.urls]``) and name files and
folders that exist in this checkout."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"

INLINE = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)")       # [text](target), ![alt](target)
DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)", re.M)  # [label]: target
HTML = re.compile(r"""\b(?:href|src)\s*=\s*["']([^"']+)""")  # <a href="...">, <img src="...">
AUTOLINK = re.compile(r"<([a-z][a-z0-9+.-]*:[^>\s]+)>")      # <https://...>
ABSOLUTE = ("http://", "https://", "#", "mailto:")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
CODE_SPAN = re.compile(r"`[^`\n]*`")

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = None


def links(markdown: str) -> list[str]:
    """Every link target of a Markdown text outside code (inline links and images, reference
    definitions, HTML href/src, autolinks)."""
    prose = CODE_SPAN.sub("", FENCE.sub("", markdown))
    return [m for pattern in (INLINE, DEFINITION, HTML, AUTOLINK) for m in pattern.findall(prose)]


def relative_links(markdown: str) -> list[str]:
    return [link for link in links(markdown) if not link.startswith(ABSOLUTE)]


def _urls() -> dict:
    if tomllib is None:
        pytest.skip("tomllib needs Python 3.11")
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]


def test_the_readme_has_no_relative_link():
    assert not relative_links(README.read_text())
    assert len(links(README.read_text())) >= 10  # the scan sees the README's links


def test_a_relative_link_is_caught():
    """Negative control: each link form with a relative target is reported, absolute targets,
    anchors and mail addresses are not, and neither is code that looks like a link."""
    text = textwrap.dedent("""
        See [the docs](docs/) and ![a figure](figures/x.png) or [changes][c].
        <a href="LICENSE">licence</a> <https://example.org/ok> [top](#cite)
        [mail](mailto:someone@example.org) [abs](https://github.com/o/r/blob/main/x.md)
        `[not a link](code.md)`

        ```markdown
        [inside a fence](fenced.md)
        ```

        [c]: CHANGELOG.md
        """)
    assert relative_links(text) == ["docs/", "figures/x.png", "CHANGELOG.md", "LICENSE"]


def test_links_into_the_repository_use_its_address_and_exist():
    """The README's links into the repository start with pyproject's Source (the one place the
    address is written for the package) and name a file (``blob/main/PATH``) or a folder
    (``tree/main/PATH``) of this checkout; the README names the documentation's address."""
    urls = _urls()
    source = urls["Source"].rstrip("/")
    text = README.read_text()
    into_repo = [link for link in links(text) if link.startswith("https://github.com/")]
    assert into_repo and all(link == source or link.startswith(source + "/")
                             for link in into_repo), into_repo
    for link in into_repo:
        if link == source:
            continue
        match = re.fullmatch(re.escape(source) + r"/(blob|tree)/main/(.+)", link)
        assert match, f"{link}: expected {source}/blob/main/PATH or {source}/tree/main/PATH"
        path = ROOT / match[2]
        assert (path.is_file() if match[1] == "blob" else path.is_dir()), link
    assert {"CHANGELOG.md", "LICENSE", "CITATION.cff", "CONTRIBUTING.md"} <= {
        link.rpartition("/")[2] for link in into_repo}
    assert urls["Documentation"] in text
