"""The times the pages state for commands are measured ones: each ``warm W s, first run F s`` on
a page is a row of ``docs/_data/command_times.csv`` (written by ``docs/_tools/command_times.py``,
which runs each command in a fresh process with empty compilation caches and then warm), quoted
on the pages the row names, for a command the pages document; the full SI-7 check's time is the
``seconds`` of its row in the committed claims table. No time is measured here."""

import csv
import importlib.util
import re

import pytest

from tests.docs.test_docs_commands import PAGES, ROOT, _command_lines

TIMES = ROOT / "docs" / "_data" / "command_times.csv"
QUOTE = re.compile(r"warm (\d+\.\d) s, first run (\d+\.\d) s")


def _tool():
    spec = importlib.util.spec_from_file_location("command_times",
                                                  ROOT / "docs/_tools/command_times.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _rows():
    with open(TIMES, newline="") as handle:
        return list(csv.DictReader(handle))


def test_every_timed_command_is_measured_and_documented():
    tool, rows = _tool(), _rows()
    assert {r["key"] for r in rows} == set(tool.COMMANDS)
    documented = _command_lines()
    for row in rows:
        assert row["command"] == tool.COMMANDS[row["key"]][0]
        assert row["command"] in documented, row["command"]
        assert float(row["first_wall_s"]) > 0 and float(row["warm_wall_s"]) > 0
        assert row["load_before"] and int(row["cores"]) >= 1 and row["commit"]


def test_each_page_quotes_the_measured_pair():
    tool = _tool()
    for row in _rows():
        for page in row["pages"].split():
            assert tool.quoted(row) in " ".join((ROOT / page).read_text().split()), (page, row)


def test_no_page_quotes_a_pair_that_was_not_measured():
    measured = {(r["warm_wall_s"], r["first_wall_s"]) for r in _rows()}
    for page in PAGES:
        for pair in QUOTE.findall(" ".join(page.read_text().split())):
            assert pair in measured, (page.name, pair)


def test_a_stale_quote_would_be_found():
    """Negative control: a pair off by a tenth of a second is not a measured one."""
    row = _rows()[0]
    stale = (f"{float(row['warm_wall_s']) + 0.1:.1f}", row["first_wall_s"])
    assert stale not in {(r["warm_wall_s"], r["first_wall_s"]) for r in _rows()}
    assert QUOTE.findall(f"warm {stale[0]} s, first run {stale[1]} s") == [stale]


def test_the_full_si7_time_is_its_row_in_the_claims_table():
    with open(ROOT / "paper_checks/results/claims.csv", newline="") as handle:
        seconds = {r["id"]: float(r["seconds"]) for r in csv.DictReader(handle)}
    text = (ROOT / "docs/command-line.md").read_text()
    stated = re.search(r"SI-7 alone (\d+) s", text)
    assert stated, "docs/command-line.md no longer states the full SI-7 time"
    assert int(stated[1]) == round(seconds["SI-7"])


@pytest.mark.parametrize("old, new, stale", [(10.0, 10.0, False), (10.0, 19.0, False),
                                             (10.0, 5.5, False), (10.0, 21.0, True),
                                             (10.0, 4.0, True)])
def test_the_tool_flags_a_time_that_moved_more_than_twice(old, new, stale):
    assert _tool().moved(old, new) is stale
