"""The documentation tools fail fast and clearly: the browser check gives up on a chromium that
prints nothing or exits at once within its own deadline (one line, exit 2), and fails a page
with a build marker left raw or an empty section; the tutorial runner refuses a missing
script or an output path that is a file before creating anything; the site's build hook
fills the command-line page's help section."""

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from docs_tool_modules import load_tool

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "docs" / "_tools"


def _fake_chromium(folder: Path, body: str) -> dict:
    folder.mkdir()
    path = folder / "chromium"
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return {**os.environ, "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}


def _site(folder: Path) -> Path:
    site = folder / "site"
    site.mkdir()
    (site / "index.html").write_text("<html><body><article><h1>Home</h1><p>Hello.</p>"
                                     "</article></body></html>")
    return site


@pytest.mark.parametrize("body, says", [
    ("exec sleep 30", "no DevTools address within 2 s"),  # prints nothing: the old hang
    ("echo 'cannot open display' >&2; exit 3", "exited (status 3)"),
])
def test_browser_check_gives_up_on_chromium_within_its_deadline(tmp_path, body, says):
    pytest.importorskip("websocket")
    env = _fake_chromium(tmp_path / "bin", body)
    start = time.monotonic()
    proc = subprocess.run([sys.executable, str(TOOLS / "browser_check.py"), "--site",
                           str(_site(tmp_path)), "--screenshots", str(tmp_path / "shots"),
                           "--start-timeout", "2"], capture_output=True, text=True,
                          env=env, timeout=60)
    assert time.monotonic() - start < 20
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and says in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "shots").exists()


@pytest.mark.parametrize("article, problems", [
    ("<h1>T</h1><p>x</p><h2>Help</h2><p>Generated:</p><!-- sia-theory help -->",
     ["raw build marker '<!-- sia-theory help -->' (a hook did not fill it)"]),
    ("<h1>T</h1><p>x</p><h2>Every subcommand's help</h2><h2>Next</h2><p>y</p>",
     ["empty section \"Every subcommand's help\""]),
    ("<h1>T</h1><p>x</p><h2>Last<a class=\"headerlink\">¶</a></h2>\n  ",
     ["empty section 'Last'"]),
    ("<h1>T</h1><h2>A</h2><h3>B</h3><p>z</p><h2>C</h2><pre><code></code></pre>", []),
    ("<h1>T</h1><p>x</p><h2>Help</h2><pre><code>$ sia-theory --help</code></pre>", []),
    ("<h1>m</h1><h2 class=\"doc doc-heading\">f</h2><h2 class=\"doc doc-heading\">g</h2>", []),
])
def test_browser_check_flags_raw_markers_and_empty_sections(article, problems):
    check = load_tool("browser_check")
    html = (f"<html><head><!-- sia-theory ok --></head><body><nav><h2>Nav</h2></nav>"
            f"<article class=\"md-content__inner\">{article}</article></body></html>")
    expected = problems[:]
    if "sia-theory ok" in html:  # a marker outside the article is still a raw marker
        expected.insert(0, "raw build marker '<!-- sia-theory ok -->' (a hook did not fill it)")
    assert check.page_problems(html) == expected


def test_the_build_hook_fills_the_help_section_of_the_command_line_page():
    hooks = load_tool("hooks")
    page = SimpleNamespace(file=SimpleNamespace(src_uri="command-line.md"))
    text = (ROOT / "docs" / "command-line.md").read_text()
    assert hooks.HELP_MARKER in text
    out = hooks.on_page_markdown(text, page, None, None)
    assert hooks.HELP_MARKER not in out
    assert "$ sia-theory --help" in out and "### `sia-theory analyze`" in out


def test_a_tutorial_page_puts_the_notebook_link_under_its_title(tmp_path, monkeypatch):
    """The page built from a tutorial opens with its ``# title``, then the download link, then
    the rest of the first Markdown cell (the link once sat above the title)."""
    hooks = load_tool("hooks")
    out = tmp_path / "result"
    out.mkdir()
    cells = [{"kind": "markdown", "source": "# The title\n\nFirst paragraph."},
             {"kind": "code", "source": "print(1)", "output": "1\n", "images": []}]
    (out / "cells.json").write_text(json.dumps({"cells": cells, "seconds": 0.5}))
    (out / "tut.ipynb").write_text("{}")
    pages = {}
    monkeypatch.setattr(hooks, "_run_tutorial", lambda script: out)
    monkeypatch.setattr(hooks, "_add_static", lambda *args: None)
    monkeypatch.setattr(hooks, "_add", lambda files, config, uri, text: pages.update({uri: text}))
    hooks._tutorial(None, None, tmp_path / "tut.py")
    blocks = pages["tutorials/tut.md"].split("\n\n")
    assert blocks[0] == "# The title"
    assert blocks[1].startswith("[Download this tutorial as a notebook](tut.ipynb)")
    assert blocks[2] == "First paragraph." and blocks[3] == "```python\nprint(1)\n```"
    # a first cell without a title keeps the link first
    assert hooks._under_the_title("Prose.", "LINK") == ["LINK", "Prose."]
    assert hooks._under_the_title("# T", "LINK") == ["# T", "LINK"]


def _tutorial(*args):
    return subprocess.run([sys.executable, str(TOOLS / "run_tutorial.py"), *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def test_run_tutorial_refuses_a_missing_script_before_creating_its_output(tmp_path):
    out = tmp_path / "out" / "deeper"
    proc = _tutorial(tmp_path / "missing.py", out)
    assert proc.returncode == 2 and "missing.py" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("under", [False, True])
def test_run_tutorial_refuses_an_output_path_that_is_a_file(tmp_path, under):
    script = tmp_path / "t.py"
    script.write_text("# %%\nprint(1)\n")
    blocker = tmp_path / "blocker"
    blocker.write_text("x")
    proc = _tutorial(script, blocker / "sub" if under else blocker)
    assert proc.returncode == 2 and "blocker" in proc.stderr and "not a folder" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    assert blocker.read_text() == "x"


def test_run_tutorial_runs_a_script(tmp_path):
    script = tmp_path / "t.py"
    script.write_text("# %% [markdown]\n# Hi\n# %%\nprint(6 * 7)\n")
    proc = _tutorial(script, tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    import json

    cells = json.loads((tmp_path / "out" / "cells.json").read_text())["cells"]
    assert [c["kind"] for c in cells] == ["markdown", "code"] and cells[1]["output"] == "42\n"


def test_run_tutorial_writes_the_notebook_with_its_outputs(tmp_path):
    """The download offered beside each tutorial: nbformat 4 as its schema requires (the fields
    written out here from nbformat's v4.5 schema, since nbformat is not a dependency), the
    printed output as a stream and each figure as a base64 PNG that decodes to the saved file."""
    import base64
    import json

    script = tmp_path / "t.py"
    script.write_text("# %% [markdown]\n# # Title\n# Hi\n# %%\nprint(6 * 7)\n# %%\n"
                      "import matplotlib.pyplot as plt\nplt.plot([0, 1])\n")
    proc = _tutorial(script, tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    book = json.loads((tmp_path / "out" / "t.ipynb").read_text())
    assert (book["nbformat"], book["nbformat_minor"]) == (4, 5)
    assert book["metadata"]["kernelspec"]["name"] == "python3"
    kinds = [c["cell_type"] for c in book["cells"]]
    assert kinds == ["markdown", "code", "code"]
    for cell in book["cells"]:
        assert {"id", "cell_type", "metadata", "source"} <= set(cell)
        assert isinstance(cell["source"], list)
        if cell["cell_type"] == "code":
            assert {"execution_count", "outputs"} <= set(cell)
    assert "".join(book["cells"][0]["source"]) == "# Title\nHi"
    printed = book["cells"][1]["outputs"]
    assert printed == [{"output_type": "stream", "name": "stdout", "text": ["42\n"]}]
    figure = book["cells"][2]["outputs"][-1]
    assert figure["output_type"] == "display_data"
    cells = json.loads((tmp_path / "out" / "cells.json").read_text())["cells"]
    png = (tmp_path / "out" / cells[2]["images"][0]).read_bytes()
    assert base64.b64decode(figure["data"]["image/png"]) == png and png[:4] == b"\x89PNG"
    assert [c["execution_count"] for c in book["cells"][1:]] == [1, 2]


def test_the_search_index_gets_formulas_as_plain_text(tmp_path):
    """The search previews: every \\( … \\) and \\[ … \\] of the index's text becomes plain
    Unicode, in the JSON and in the offline plugin's JS copy; text without math is unchanged."""
    tool = load_tool("search_text")
    index = {"config": {"lang": ["en"]}, "docs": [
        {"location": "a.html", "title": "T", "text": r"with \(a_t^2 = 1 + 2\log(t/\tau + 1)\)"},
        {"location": "b.html", "title": "U", "text": r"\[ \sqrt{2 \log n} \le \frac{1}{\rho} \]"},
        {"location": "c.html", "title": "V", "text": "no math here"}]}
    search = tmp_path / "search"
    search.mkdir()
    (search / "search_index.json").write_text(json.dumps(index))
    (search / "search_index.js").write_text("var __index = " + json.dumps(index))
    assert tool.rewrite_index(tmp_path) == 2
    docs = json.loads((search / "search_index.json").read_text())["docs"]
    assert [d["text"] for d in docs] == ["with a_t^2 = 1 + 2 log (t/τ + 1)",
                                         "√(2 log n) ≤ 1/ρ", "no math here"]
    script = (search / "search_index.js").read_text()
    assert script.startswith("var __index = ") and "\\\\(" not in script
    assert json.loads(script.removeprefix("var __index = "))["docs"] == docs


def test_grouped_parameters_get_their_defaults(tmp_path):
    """``beta, alpha : float`` documents two parameters; griffe splits the group but gives
    neither a default, so the site showed ``alpha=0.0`` as required. The extension fills each
    entry's default from the signature; a parameter without one stays required."""
    griffe = pytest.importorskip("griffe")
    tool = load_tool("griffe_defaults")
    (tmp_path / "grouped_mod.py").write_text(
        'def f(X, *, beta, alpha=0.0, gamma=None):\n'
        '    """Doc.\n\n    Parameters\n    ----------\n    X : array\n        Tokens.\n'
        '    beta, alpha : float\n        Both.\n    gamma : float\n        Alone.\n    """\n')
    module = griffe.load("grouped_mod", search_paths=[str(tmp_path)], docstring_parser="numpy")
    f = module["f"]
    assert tool.fill_defaults(f) == 1  # alpha: gamma, documented alone, has its default
    entries = {p.name: p.value for s in f.docstring.parsed if s.kind.value == "parameters"
               for p in s.value}
    assert entries == {"X": None, "beta": None, "alpha": "0.0", "gamma": "None"}
