"""Lists and numbers the docs type by hand are held to their one source in code or data.

* the scheme names (``sia-theory train --scheme``'s help, the schemes package's docstring table,
  the layout page) are the registry's, :data:`sia_theory.schemes.SCHEMES`, in its order;
* every budget of a figure family stated in the Makefile's comment, README.md and the docs is
  that of ``FIGURE_FAMILIES`` (``sia_theory/cli/scripts.py``), which also builds the gallery's
  sentence and ``figures --family``'s help;
* the extras the getting-started page and the Makefile's message say ``make`` installs are those
  of the Makefile's install line, each an extra of ``pyproject.toml``;
* the claim counts of README.md, docs/index.md and the CAS page are those of
  ``paper_checks/results/claims.csv``.

Each parser also reads a text with a wrong number or name, and the test requires the mismatch to
be found (a negative control), so a rewording that the parser no longer reads fails here rather
than passing unread.
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import re
import sys
from collections import Counter
from pathlib import Path

import pytest

import sia_theory.schemes
from sia_theory.cli import build_parser
from sia_theory.cli.scripts import FAMILIES, FIGURE_FAMILIES, figure_family
from sia_theory.schemes import SCHEMES, scheme_names

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = None

ROOT = Path(__file__).resolve().parents[2]


def _read(path: str) -> str:
    return (ROOT / path).read_text()


# ------------------------------------------------------------------------ the scheme names
NAME_LIST = re.compile(r"\(((?:`[\w-]+`(?:, |; |\)))+)")


def names_in_parentheses(text: str) -> list[str]:
    """The longest parenthesised run of backticked names in ``text`` (``(`a`, `b`; …)``)."""
    runs = [re.findall(r"`([\w-]+)`", m[1]) for m in NAME_LIST.finditer(text)]
    return max(runs, key=len, default=[])


def docstring_table_names(doc: str) -> list[str]:
    """The first column of a Markdown table of ``name`` rows (``| ``rope`` | … |``)."""
    return re.findall(r"^\| ``([\w-]+)`` \|", doc, flags=re.M)


def layout_scheme_row() -> str:
    rows = [line for line in _read("docs/guide/layout.md").splitlines()
            if line.startswith("| `sia_theory/schemes")]
    assert len(rows) == 1, rows
    return rows[0]


def _option_help(parser: argparse.ArgumentParser, subcommand: str, option: str) -> str:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    action = next(a for a in sub.choices[subcommand]._actions if option in a.option_strings)
    return action.help


def test_the_registry_has_the_names_the_lists_are_held_to():
    assert scheme_names() == tuple(SCHEMES)
    assert len(SCHEMES) == 14 and "logn-p-rope-learned" in SCHEMES


def test_train_scheme_help_lists_every_registered_scheme():
    help_text = _option_help(build_parser(), "train", "--scheme")
    listed = help_text.split("(", 1)[1].split(")", 1)[0].split(", ")
    assert listed == list(scheme_names())


@pytest.mark.parametrize("where", ["layout page", "schemes docstring"])
def test_the_scheme_lists_of_the_docs_are_the_registry(where):
    if where == "layout page":
        listed = names_in_parentheses(layout_scheme_row())
    else:
        listed = docstring_table_names(sia_theory.schemes.__doc__)
    missing = [n for n in SCHEMES if n not in listed]
    unknown = [n for n in listed if n not in SCHEMES]
    assert not missing and not unknown, f"{where}: missing {missing}, not registered {unknown}"
    assert listed == list(SCHEMES), f"{where}: not in the registry's order"


def test_the_scheme_list_parsers_find_a_missing_or_unknown_name():
    """Negative controls: the same parsers on a row without one name and a table with a
    made-up one."""
    row = layout_scheme_row().replace("`logn-p-rope-learned`, ", "")
    assert "logn-p-rope-learned" not in names_in_parentheses(row)
    assert len(names_in_parentheses(row)) == len(SCHEMES) - 1
    table = sia_theory.schemes.__doc__ + "\n| ``made-up`` | ``RoPE(base)`` | none |\n"
    assert docstring_table_names(table)[-1] == "made-up"
    assert names_in_parentheses("(`a`, `b`; `c`) and (`d`)") == ["a", "b", "c"]


# ------------------------------------------------------------------------ figure-family budgets
DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*(minutes|min|hours|h)\b")
TARGET_MARKERS = {f.name: re.escape(f"`{f.target}`") for f in FIGURE_FAMILIES.values()}
MAKEFILE_MARKERS = {"core": r"(?<![\w-])figures:", **{
    name: rf"figures-{name}:" for name in FAMILIES if name != "core"}}
PAGE_END = re.compile(r"\n\s*\n|`make ")  # a blank line, or another make target


def stated_budgets(text: str, markers: dict[str, str]) -> dict[str, tuple[float, str]]:
    """``{family: (number, unit)}``: the first duration after each family's marker (a regex),
    before the next marker, a blank line or another ``make`` target. A family whose stretch of
    text states no duration is left out."""
    starts = sorted((m.start(), m.end(), family) for family, marker in markers.items()
                    for m in re.finditer(marker, text))
    found: dict[str, tuple[float, str]] = {}
    for i, (_, end, family) in enumerate(starts):
        stop = starts[i + 1][0] if i + 1 < len(starts) else len(text)
        rest = text[end:stop]
        cut = PAGE_END.search(rest)
        duration = DURATION.search(rest[:cut.start()] if cut else rest)
        if duration and family not in found:
            found[family] = (float(duration[1]), duration[2])
    return found


def budget_mismatches(stated: dict[str, tuple[float, str]]) -> dict[str, str]:
    """Each stated budget that is not the table's: minutes exactly, hours to the nearest."""
    wrong = {}
    for family, (number, unit) in stated.items():
        minutes = FIGURE_FAMILIES[family].minutes
        ok = number == minutes if unit.startswith("min") else number == round(minutes / 60)
        if not ok:
            wrong[family] = f"{number:g} {unit}, the table says {minutes} minutes"
    return wrong


def makefile_budget_comment() -> str:
    """The comment block above the ``figures`` rule, without its ``#``."""
    lines = _read("Makefile").split("\nfigures: ", 1)[0].splitlines()
    block = []
    for line in reversed(lines):
        if not line.startswith("#"):
            break
        block.insert(0, line.lstrip("# "))
    return " ".join(block)


def _train_grid_docstring() -> str:
    """The docstring of ``GRID_SEEDS`` in ``sia_theory/studies/train_grid.py``."""
    text = _read("sia_theory/studies/train_grid.py")
    return text.split("\nGRID_SEEDS = ", 1)[1].split("\nSIDE_SEEDS", 1)[0]


CLI_MARKERS = {"core": r"`core` by default", **{
    name: rf"`{name}`:" for name in FAMILIES if name != "core"}}
BUDGET_PLACES = {
    # place: (its text, the markers, the families it states a budget for)
    "Makefile": (makefile_budget_comment, MAKEFILE_MARKERS, set(FAMILIES)),
    "README.md": (lambda: _read("README.md"), TARGET_MARKERS,
                  {"core", "ext", "model", "train", "needle"}),
    "docs/getting-started.md": (lambda: _read("docs/getting-started.md"), TARGET_MARKERS,
                                set(FAMILIES)),
    "docs/command-line.md": (lambda: _read("docs/command-line.md"), CLI_MARKERS, set(FAMILIES)),
    "docs/training.md": (lambda: _read("docs/training.md"),
                         {"train": r"inside its budget of", "all": r"`all` means every figure"},
                         {"train", "all"}),
    "docs/theory/beyond.md": (lambda: _read("docs/theory/beyond.md"), TARGET_MARKERS, {"ext"}),
    "docs/theory/models.md": (lambda: _read("docs/theory/models.md"), TARGET_MARKERS, {"model"}),
}


def test_the_budget_table():
    assert FAMILIES == ("core", "ext", "model", "train", "needle", "all")
    minutes = {name: f.minutes for name, f in FIGURE_FAMILIES.items()}
    assert minutes == {"core": 12, "ext": 20, "model": 45, "train": 150, "needle": 75,
                       "all": 302}
    assert [figure_family(n) for n in ("ext_needle", "model_passkey", "train_table1",
                                       "train_needle", "si_fig1_gaussian", "extra_thing")] == [
        "ext", "model", "train", "needle", "core", "core"]


@pytest.mark.parametrize("place", BUDGET_PLACES)
def test_every_stated_budget_is_the_tables(place):
    read, markers, families = BUDGET_PLACES[place]
    stated = stated_budgets(read(), markers)
    assert set(stated) == families, f"{place}: budgets found for {sorted(stated)}"
    assert not budget_mismatches(stated), f"{place}: {budget_mismatches(stated)}"


def test_the_train_grid_seeds_name_the_budget_of_the_table():
    """The seeds' docstring points to the table instead of typing a number of minutes."""
    text = _train_grid_docstring()
    assert "FIGURE_FAMILIES[\"train\"]" in text and not DURATION.search(text)


def test_the_budget_parser_finds_a_wrong_number():
    """Negative controls: a page that says 90 minutes for the training family, a Makefile
    comment that puts a measured time before the budget, a page that drops a number."""
    text = _read("README.md").replace("≤ 150\nminutes", "≤ 90\nminutes")
    assert budget_mismatches(stated_budgets(text, TARGET_MARKERS)) == {
        "train": "90 minutes, the table says 150 minutes"}
    comment = makefile_budget_comment().replace("budget 150 min on 2 cores: ",
                                                  "about 95 min measured, budget 150 min: ")
    assert "train" in budget_mismatches(stated_budgets(comment, MAKEFILE_MARKERS))
    text = _read("docs/getting-started.md").replace("about 5 hours", "about 6 hours")
    assert set(budget_mismatches(stated_budgets(text, TARGET_MARKERS))) == {"all"}
    text = _read("docs/getting-started.md").replace(", ≤ 20 minutes", "")
    assert "ext" not in stated_budgets(text, TARGET_MARKERS)


def test_the_generated_places_read_the_table():
    """The gallery's sentence and ``figures --family``'s help carry every family's numbers."""
    spec = importlib.util.spec_from_file_location(
        "docs_tools_results_pages", ROOT / "docs" / "_tools" / "results_pages.py")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(ROOT / "docs" / "_tools"))  # results_pages imports figure_claims
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(ROOT / "docs" / "_tools"))
    sentence = module.families_sentence()
    help_text = _option_help(build_parser(), "figures", "--family")
    for f in FIGURE_FAMILIES.values():
        assert f"`{f.target}`, {f.minutes} minutes" in sentence, f.name
        assert f"{f.name}{' (default)' if f.name == 'core' else ''}: {f.what}" in help_text
        assert f", {f.minutes} min" in help_text
    assert DURATION.findall(sentence) == [(str(f.minutes), "minutes")
                                          for f in FIGURE_FAMILIES.values()]


def test_every_family_target_is_a_makefile_rule_running_that_family():
    makefile = _read("Makefile")
    for f in FIGURE_FAMILIES.values():
        rule = f.target.removeprefix("make ")
        body = re.search(rf"^{re.escape(rule)}: .*\n\t(.*)", makefile, flags=re.M)
        assert body, rule
        family = re.search(r"--family (\w+)", body[1])
        assert (family[1] if family else "core") == f.name, rule


# ------------------------------------------------------------------------ the extras make installs
def makefile_install_extras() -> list[str]:
    """The extras of the install in the ``$(STAMP)`` rule (what every target gets)."""
    rule = _read("Makefile").split("\n$(STAMP):", 1)[1].split("\n\n", 1)[0]
    found = re.findall(r"pip install [^\n]*-e '\.\[([\w,-]+)\]'", rule)
    assert len(found) == 1, found
    return found[0].split(",")


def extras_named(text: str) -> list[str]:
    """The names of the first list after "the extras" (to the end of its sentence, leaving out
    parenthesised remarks, which may nest), with or without backticks."""
    rest = text.split("the extras ", 1)[1].split("\n\n", 1)[0].replace("\n", " ")
    while re.search(r"\([^()]*\)", rest):
        rest = re.sub(r"\s*\([^()]*\)", "", rest)
    sentence = re.split(r"\.(?:\s|$)|\"", rest, maxsplit=1)[0]
    return [name.strip(" `") for name in re.split(r",|\band\b", sentence) if name.strip(" `")]


def _pyproject_extras() -> set[str]:
    if tomllib is None:
        pytest.skip("tomllib needs Python 3.11")
    return set(tomllib.loads(_read("pyproject.toml"))["project"]["optional-dependencies"])


def test_the_makefile_installs_extras_that_exist():
    installed = makefile_install_extras()
    assert installed == ["test", "dev", "model", "train", "torch", "docs"]
    assert set(installed) <= _pyproject_extras()


@pytest.mark.parametrize("place", ["docs/getting-started.md", "Makefile"])
def test_the_docs_name_exactly_the_extras_make_installs(place):
    text = _read(place)
    if place == "Makefile":  # the message printed before the install
        text = next(line for line in text.splitlines() if "the extras" in line)
    assert sorted(extras_named(text)) == sorted(makefile_install_extras()), place


def test_the_extras_parser_finds_a_missing_or_extra_name():
    """Negative controls: the getting-started sentence without ``torch`` (what it said before
    the torch extra was installed) and with a made-up extra."""
    text = _read("docs/getting-started.md")
    without = re.sub(r", `torch` \(PyTorch's CPU build,[^)]*\)", "", text)
    assert without != text and "torch" not in extras_named(without)
    made_up = text.replace("`dev`,", "`dev`, `gpu`,")
    assert "gpu" in extras_named(made_up)
    assert extras_named("the extras `a`, `b` (x (y), z) and `c` (w). Then `d`.") == ["a", "b", "c"]


def test_the_pages_that_list_what_make_installs_say_no_torch_only_of_run_time():
    text = _read("docs/getting-started.md")
    assert "No torch, no GPU" not in text  # the old wording, after an install that has torch
    assert "`torch`" in text.split("## The two commands", 1)[0]


# ------------------------------------------------------------------------ the claim counts
VERDICT_COUNT = re.compile(
    r"(?<![\w-])(\d+) (PASS|FAIL|DIVERGES|UNTESTED|UNDERPOWERED|INFO|ERROR)\b")
FAMILY_RANGE = re.compile(r"\b([A-Z]+)-1 … \1-(\d+)\b")
VERDICT_IDS = re.compile(
    r"(\d+) (PASS|FAIL|DIVERGES|UNTESTED|UNDERPOWERED) \(((?:[A-Z]+-)?\d+(?:, \d+)*)[):]")


def _claims() -> list[dict]:
    with open(ROOT / "paper_checks" / "results" / "claims.csv", newline="") as f:
        return list(csv.DictReader(f))


def stated_claim_counts(text: str) -> dict:
    """The committed run's paragraph of a page: ``{"theory": …, "trained": …}``, each with the
    number of claims or rows, the verdict counts and the claim IDs named for a verdict; plus the
    family ranges (``SPH-1 … SPH-3``) the paragraph names."""
    start = text.index("committed full run")
    paragraph = " ".join(text[start:text.find("\n\n", start)].split())
    theory, trained = paragraph.split("rows on", 1)
    out = {"ranges": {f: int(n) for f, n in FAMILY_RANGE.findall(paragraph)}}
    for part, words, pattern in (("theory", theory, r"(\d+) claims of the theory"),
                                 ("trained", trained, None)):
        total = re.search(pattern, words) if pattern else re.search(r"(\d+)\s*$", theory)
        ids = {}
        for _count, verdict, listed in VERDICT_IDS.findall(words):
            prefix, _, first = listed.partition(", ")[0].rpartition("-")
            numbers = [first, *listed.split(", ")[1:]]
            ids[verdict] = [f"{prefix}-{n}" for n in numbers]
        out[part] = {"total": int(total[1]),
                     "verdicts": {v: int(n) for n, v in VERDICT_COUNT.findall(words)},
                     "ids": ids}
    return out


def claim_counts_of(rows) -> dict:
    """What :func:`stated_claim_counts` should read, from the rows of ``claims.csv``."""
    out = {"ranges": dict(Counter(r["id"].split("-")[0] for r in rows))}
    for part, selected in (("theory", [r for r in rows if not r["id"].startswith("TRAIN-")]),
                           ("trained", [r for r in rows if r["id"].startswith("TRAIN-")])):
        out[part] = {"total": len(selected),
                     "verdicts": dict(Counter(r["verdict"] for r in selected)),
                     "ids": {v: sorted((r["id"] for r in selected if r["verdict"] == v),
                                       key=lambda i: int(i.split("-")[1]))
                             for v in {r["verdict"] for r in selected}}}
    return out


@pytest.mark.parametrize("page", ["README.md", "docs/index.md"])
def test_the_claim_counts_of_the_page_are_the_claims_table(page):
    stated = stated_claim_counts(_read(page))
    actual = claim_counts_of(_claims())
    for part in ("theory", "trained"):
        assert stated[part]["total"] == actual[part]["total"], (page, part)
        assert stated[part]["verdicts"] == actual[part]["verdicts"], (page, part)
        for verdict, ids in stated[part]["ids"].items():
            assert ids == actual[part]["ids"][verdict], (page, part, verdict)
    assert stated["trained"]["ids"], page  # the parser read the named IDs at all
    for family, last in stated["ranges"].items():
        assert last == actual["ranges"][family], (page, family)


def test_the_cas_page_counts_are_the_claims_table():
    heading = next(line for line in _read("docs/theory/cas.md").splitlines()
                   if line.startswith("## Findings"))
    ids = re.search(r"CAS-1,\.\.\.,CAS-(\d+)", heading)
    cas = [r for r in _claims() if r["id"].startswith("CAS-")]
    assert int(ids[1]) == len(cas)
    assert {v: int(n) for n, v in VERDICT_COUNT.findall(heading)} == dict(
        Counter(r["verdict"] for r in cas))


def test_the_claim_count_parser_finds_a_wrong_number():
    """Negative controls: one more PASS, a FAIL with the wrong IDs, a shorter family range."""
    text = _read("README.md")
    actual = claim_counts_of(_claims())
    wrong = stated_claim_counts(text.replace("30 PASS and 4 DIVERGES", "31 PASS and 4 DIVERGES"))
    assert wrong["theory"]["verdicts"]["PASS"] == actual["theory"]["verdicts"]["PASS"] + 1
    wrong = stated_claim_counts(text.replace("2 FAIL (TRAIN-1, 7)", "2 FAIL (TRAIN-1, 6)"))
    assert wrong["trained"]["ids"]["FAIL"] != actual["trained"]["ids"]["FAIL"]
    wrong = stated_claim_counts(text.replace("GAP-1 … GAP-3", "GAP-1 … GAP-2"))
    assert wrong["ranges"]["GAP"] == actual["ranges"]["GAP"] - 1
    rows = [*_claims(), {"id": "TRAIN-8", "verdict": "ERROR"}]
    assert claim_counts_of(rows)["trained"]["verdicts"] != stated_claim_counts(text)["trained"][
        "verdicts"]
