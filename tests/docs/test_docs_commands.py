"""The commands the documentation tells a reader to type exist: every ``make TARGET`` in the
code of docs/*.md (and below), README.md and CONTRIBUTING.md is a target of the Makefile, and
every ``sia-theory SUBCOMMAND`` is a subcommand of the command's parser."""

import argparse
import datetime
import re
from pathlib import Path

import pytest

from sia_theory.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([ROOT / "README.md", ROOT / "CONTRIBUTING.md", *(ROOT / "docs").rglob("*.md")])
FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
INLINE = re.compile(r"`([^`\n]+)`")
MAKE = re.compile(r"(?:^|[\s;&|(])make ([A-Za-z][\w-]*)", re.M)
COMMAND = re.compile(r"(?:^|[\s/;&|(])sia-theory ([a-z][\w-]*)", re.M)


def _code(text: str) -> str:
    """The code of a Markdown page: its fenced blocks and inline code spans."""
    blocks = [m[0] for m in FENCE.finditer(text)]
    return "\n".join(blocks + INLINE.findall(FENCE.sub("", text)))


def _named(pattern) -> dict:
    found: dict[str, list[str]] = {}
    for page in PAGES:
        for name in pattern.findall(_code(page.read_text())):
            found.setdefault(name, []).append(str(page.relative_to(ROOT)))
    return found


def _make_targets() -> set:
    text = (ROOT / "Makefile").read_text()
    return {m[1] for m in re.finditer(r"^([A-Za-z][\w-]*)\s*:(?!=)", text, re.M)}


def _subcommands() -> set:
    parser = build_parser()
    return {name for action in parser._actions
            if isinstance(action, argparse._SubParsersAction) for name in action.choices}


def test_the_pages_name_commands_at_all():
    """The patterns find what the pages really say (a test of the test)."""
    assert {"test", "docs-check", "figures-train"} <= set(_named(MAKE))
    assert {"analyze", "train", "sweep"} <= set(_named(COMMAND))
    assert "it" not in _named(MAKE)  # prose ("make it") is not code


@pytest.mark.parametrize("pattern, known, what", [
    (MAKE, _make_targets, "Makefile target"),
    (COMMAND, _subcommands, "sia-theory subcommand"),
])
def test_every_command_a_page_names_exists(pattern, known, what):
    targets = known()
    missing = {name: pages for name, pages in _named(pattern).items() if name not in targets}
    assert not missing, f"no such {what}: {missing}"


def test_a_made_up_target_would_be_found():
    """Negative control: a page naming a target the Makefile lacks is caught."""
    names = MAKE.findall(_code("Run `make figures-everything` then\n```bash\nmake tset\n```\n"))
    assert set(names) == {"figures-everything", "tset"}
    assert not set(names) & _make_targets()


def test_the_citation_file_names_this_version_and_the_papers_the_readme_cites():
    yaml = pytest.importorskip("yaml")
    import sia_theory

    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0" and cff["version"] == sia_theory.__version__
    # the release date: an ISO date (YAML reads it as a date; a typo such as 2026-13-01 fails)
    assert isinstance(cff["date-released"], datetime.date), cff.get("date-released")
    ids = [i["value"] for ref in cff["references"] for i in ref["identifiers"]]
    assert ids == ["arXiv:2505.17083", "arXiv:2510.05554", "arXiv:2410.07063"]
    for page in ("README.md", "docs/index.md"):
        cite = (ROOT / page).read_text().split("## Cite", 1)[1]
        assert all(i in cite for i in ids), page


# ------------------------------------------------- every documented command line parses
PLACEHOLDER = re.compile(r"[\[\]|…<>]|\.\.\.|\b[A-Z][A-Z_]{2,}\b(?![-\d])")


def _command_lines() -> dict:
    """``{line: [pages]}``: every concrete ``sia-theory …`` line in the code of the pages
    (a ``$`` prompt and a trailing ``# comment`` removed; usage synopses with placeholders such
    as ``[--quick]``, ``NAME ...`` or ``TARGET`` left out: they are not commands to type)."""
    import shlex

    found: dict[str, list[str]] = {}
    for page in PAGES:
        for code in _code(page.read_text()).splitlines():
            line = code.strip().removeprefix("$ ").strip()
            if not line.startswith("sia-theory "):
                continue
            try:
                words = shlex.split(line, comments=True)
            except ValueError:
                continue
            command = " ".join(words)
            if PLACEHOLDER.search(command) or "$" in command or "error:" in command:
                continue  # a synopsis, a shell variable, or a command's output shown
            if len(words) == 2 and words[1] in ("train", "corpus", "sweep", "analyze"):
                continue  # a subcommand named in prose (these need arguments)
            found.setdefault(command, []).append(str(page.relative_to(ROOT)))
    return found


def test_the_pages_give_concrete_command_lines():
    """A test of the test: the documented lines are found, the synopses are not."""
    lines = _command_lines()
    assert "sia-theory check --quick --only SI-7,CAS-3 --out build/checks" in lines
    assert not any("[--quick]" in line for line in lines)
    assert len(lines) >= 20, sorted(lines)


def test_every_documented_command_line_parses(tmp_path, monkeypatch):
    """Each concrete ``sia-theory`` line of the docs and the README is accepted by the command's
    own parser (its flags, values and types: a renamed flag or a value the parser refuses now,
    as ``--only SI-7,CAS-3`` once was, fails here), parsed from an empty folder so that nothing
    is written."""
    import shlex

    monkeypatch.chdir(tmp_path)
    refused = {}
    for line, pages in _command_lines().items():
        parser = build_parser()
        try:
            parser.parse_args(shlex.split(line)[1:])
        except SystemExit as stop:
            if stop.code:
                refused[line] = pages
    assert not refused, refused
    assert not any(tmp_path.iterdir())


def test_a_refused_documented_line_would_be_found(capsys):
    """Negative control: a line with a flag the parser lacks is refused by it."""
    with pytest.raises(SystemExit) as stop:
        build_parser().parse_args(["check", "--quick", "--olny", "SI-7"])
    assert stop.value.code == 2
