"""MkDocs hooks (``hooks:`` in mkdocs.yml): the pages generated when the site is built.

* ``api/*.md``: one page per module of ``public_api.reference_modules()`` (the front doors and
  the modules their docstrings point to; ``api_pages.py``), appended to the nav;
* ``claims.md`` from ``paper_checks/results/claims.csv`` and ``gallery.md`` from
  ``figures/*.png`` (``results_pages.py``), with the figures and their data files copied into
  the site;
* ``tutorials/*.md``: each ``docs/tutorials/*.py`` executed (``run_tutorial.py``) and rendered
  with its printed output and figures; a failing cell fails the build;
* ``checks.md``: every test a page names (``tests/FILE.py::NAME``), with its source; in the
  hand-written pages those names and the claim IDs (``SI-7``) become links;
* the ``sia-theory`` command's help, in place of ``<!-- sia-theory help -->`` (on any page).

Tutorial results are cached in ``build/docs-cache`` under a key of the script, the runner, every
``sia_theory`` source file and the installed package versions, so an unchanged tutorial is not
run again; ``SIA_DOCS_FRESH=1`` runs every tutorial.
"""

from __future__ import annotations

import argparse
import ast
import functools
import hashlib
import importlib.metadata
import json
import logging
import os
import posixpath
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File

TOOLS = Path(__file__).resolve().parent
ROOT = TOOLS.parents[1]
for path in (str(TOOLS), str(ROOT)):
    if path not in sys.path:
        sys.path.insert(0, path)

import api_pages  # noqa: E402
import public_api  # noqa: E402
import results_pages  # noqa: E402
import run_tutorial  # noqa: E402
import search_text  # noqa: E402

log = logging.getLogger("mkdocs.hooks.sia")
TUTORIALS = ROOT / "docs" / "tutorials"
CACHE = ROOT / "build" / "docs-cache" / "tutorials"
TEST_REF = re.compile(r"\b(tests/[\w/]+\.py)::(\w+)")
CLAIM_REF = re.compile(r"(?<![\[\w#/-])((?:SI|CAS|EXT|INA|REF|TRAIN|SPH|GAP)-\d+)\b(?![\]\w-])")
LINKED_PAGES = re.compile(r"^(criticality\.md|theory/.*|guide/.*|index\.md|getting-started\.md)$")
TIMINGS: dict[str, float] = {}
_STATE: dict = {}


# ---------------------------------------------------------------- configuration: the API nav
def on_config(config):
    modules = list(public_api.reference_modules())
    _STATE["modules"] = modules
    nav = config["nav"]
    if not any(isinstance(e, dict) and "API reference" in e for e in nav):
        nav.append({"API reference": api_pages.nav_entries(modules)})
    return config


# ---------------------------------------------------------------- generated files
def _add(files, config, uri: str, content) -> None:
    existing = files.get_file_from_path(uri)
    if existing is not None:
        files.remove(existing)
    files.append(File.generated(config, uri, content=content))


def _add_static(files, config, uri: str, path: Path) -> None:
    existing = files.get_file_from_path(uri)
    if existing is not None:
        files.remove(existing)
    files.append(File.generated(config, uri, abs_src_path=str(path)))


def on_files(files, config):
    started = time.perf_counter()
    modules = _STATE.get("modules") or list(public_api.reference_modules())
    _add(files, config, "api/index.md", api_pages.index_page(modules))
    for module_name in modules:
        _add(files, config, api_pages.page_path(module_name), api_pages.module_page(module_name))
    _add(files, config, "claims.md", results_pages.claims_page(ROOT))
    from sia_theory.cli.scripts import figure_family

    gallery, linked = results_pages.gallery_page(ROOT, figure_family)
    _add(files, config, "gallery.md", gallery)
    for name in linked:
        _add_static(files, config, f"figures/{name}", ROOT / "figures" / name)
    log.info("API, claims and gallery pages generated in %.1f s", time.perf_counter() - started)
    for script in sorted(TUTORIALS.glob("*.py")):
        _tutorial(files, config, script)
    if TIMINGS:  # the tutorials run in this build (cached ones are not timed again)
        log.info("tutorials run: %s; total %.1f s", ", ".join(
            f"{k} {v:.1f} s" for k, v in TIMINGS.items()), sum(TIMINGS.values()))
    _add(files, config, "checks.md", _checks_page())
    return files


# ---------------------------------------------------------------- tutorials
def _tutorial_key(script: Path) -> str:
    digest = hashlib.sha256()
    for path in [script, TOOLS / "run_tutorial.py",
                 *sorted((ROOT / "sia_theory").rglob("*.py"))]:
        digest.update(str(path.relative_to(ROOT)).encode())
        digest.update(path.read_bytes())
    versions = sorted(f"{d.metadata['Name']}=={d.version}"
                      for d in importlib.metadata.distributions())
    digest.update(repr((sys.version, versions)).encode())
    return digest.hexdigest()[:20]


def _run_tutorial(script: Path) -> Path:
    out = CACHE / script.stem / _tutorial_key(script)
    if (out / "cells.json").exists() and not os.environ.get("SIA_DOCS_FRESH"):
        log.info("tutorial %s: cached result (%s)", script.name, out.name)
        return out
    if out.parent.exists():
        shutil.rmtree(out.parent)
    work = out / "work"
    work.mkdir(parents=True)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]), MPLBACKEND="Agg",
        SIA_THEORY_REPO=str(ROOT))
    log.info("tutorial %s: running", script.name)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, str(TOOLS / "run_tutorial.py"), str(script),
                           str(out)], cwd=work, env=env, capture_output=True, text=True)
    TIMINGS[script.stem] = time.perf_counter() - start
    if proc.returncode != 0:
        shutil.rmtree(out, ignore_errors=True)
        raise PluginError(f"tutorial {script.relative_to(ROOT)} failed:\n{proc.stderr[-6000:]}")
    shutil.rmtree(work, ignore_errors=True)
    return out


def _under_the_title(source: str, link: str) -> list[str]:
    """A tutorial's first Markdown cell as page parts, with ``link`` under its ``# title``
    (before the whole cell when it does not open with one)."""
    title, _, rest = source.partition("\n")
    if not title.startswith("# "):
        return [link, source]
    return [title, link] + ([rest.strip("\n")] if rest.strip() else [])


def _tutorial(files, config, script: Path) -> None:
    out = _run_tutorial(script)
    record = json.loads((out / "cells.json").read_text())
    book = out / f"{script.stem}.ipynb"
    if not book.exists():  # a result cached before notebooks were written
        book.write_text(json.dumps(run_tutorial.notebook(record, out), indent=1) + "\n")
    _add_static(files, config, f"tutorials/{script.stem}.ipynb", book)
    link = (f"[Download this tutorial as a notebook]({script.stem}.ipynb) (with the outputs "
            f"below) or as the script [`{script.name}`]({script.name}).")
    parts = []
    for cell in record["cells"]:
        if cell["kind"] == "markdown":
            parts.extend(_under_the_title(cell["source"], link) if link else [cell["source"]])
            link = None
            continue
        if link:  # a tutorial that opens with code: the link heads the page
            parts.append(link)
            link = None
        parts.append(f"```python\n{cell['source']}\n```")
        if cell["output"].strip():
            text = cell["output"].rstrip().replace("```", "ʼʼʼ")
            parts.append(f'<div class="tutorial-output" markdown>\n\n```text\n{text}\n```\n\n'
                         "</div>")
        for image in cell["images"]:
            _add_static(files, config, f"tutorials/{image}", out / image)
            parts.append(f"![figure from the cell above]({image})")
    seconds = record["seconds"]
    parts.append(f"---\n\n*Executed when this site was built: {seconds:.1f} s "
                 f"(cells run in order; source: [`docs/tutorials/{script.name}`]({script.name}), "
                 f"which also runs as `python docs/tutorials/{script.name}`).*")
    _add(files, config, f"tutorials/{script.stem}.md", "\n\n".join(parts) + "\n")


# ---------------------------------------------------------------- checks page and links
def _test_anchor(path: str, name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", f"{path}-{name}".lower()).strip("-")


def _referenced_tests() -> dict[tuple[str, str], list[str]]:
    refs: dict[tuple[str, str], list[str]] = {}
    docs = ROOT / "docs"
    for page in sorted(docs.rglob("*.md")):
        rel = page.relative_to(docs).as_posix()
        if rel.startswith("_") or "/_" in rel:
            continue
        for path, name in TEST_REF.findall(page.read_text()):
            refs.setdefault((path, name), [])
            if rel not in refs[(path, name)]:
                refs[(path, name)].append(rel)
    return refs


def _checks_page() -> str:
    lines = ["# Where the formulas are checked", "",
             "Every test that a page of this site names as the check of a formula "
             "(`checked by:`), with its docstring and source. The names are verified by "
             "`tests/docs/test_docs_checked_by.py` (a renamed test fails there).", ""]
    for (path, name), pages in sorted(_referenced_tests().items()):
        file = ROOT / path
        source, doc = "", ""
        if file.exists():
            tree = ast.parse(file.read_text())
            node = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)
                         and n.name == name), None)
            if node is not None:
                source = ast.get_source_segment(file.read_text(), node) or ""
                doc = ast.get_docstring(node) or ""
        if not source:
            raise PluginError(f"{path}::{name} is named in {', '.join(pages)} but not found")
        used = ", ".join(f"[{p}]({p})" for p in pages)
        lines += [f"## `{name}` {{#{_test_anchor(path, name)}}}", "",
                  f"`{path}` — named in {used}.", ""]
        if doc:
            lines += [" ".join(doc.split()), ""]
        lines += ['??? note "source"', "", "    ```python",
                  *("    " + line for line in source.splitlines()), "    ```", ""]
    return "\n".join(lines)


def _link_text(text: str, rel_dir: str) -> str:
    claims = posixpath.relpath("claims.md", rel_dir or ".")
    checks = posixpath.relpath("checks.md", rel_dir or ".")
    text = TEST_REF.sub(lambda m: f"[{m[1]}::{m[2]}]({checks}#{_test_anchor(m[1], m[2])})",
                        text)
    rows = _claim_rows()  # only rows the claims page has get a link (an anchor there)
    return CLAIM_REF.sub(lambda m: f"[{m[1]}]({claims}#{m[1]})" if m[1] in rows else m[0],
                         text)


@functools.lru_cache(maxsize=1)
def _claim_rows() -> frozenset:
    """The claim IDs of ``paper_checks/results/claims.csv`` (the rows of the claims page)."""
    import csv

    with open(ROOT / "paper_checks" / "results" / "claims.csv", newline="") as f:
        return frozenset(row["id"] for row in csv.DictReader(f))


HELP_MARKER = "<!-- sia-theory help -->"
"""Where a page gets the ``sia-theory`` command's help (:func:`_command_help`)."""


def on_page_markdown(markdown, page, config, files):
    src = page.file.src_uri
    text = _linked(markdown, src) if LINKED_PAGES.match(src) else markdown
    if HELP_MARKER in text:  # on any page, linked or not
        text = text.replace(HELP_MARKER, _command_help())
    return text


def _linked(markdown: str, src: str) -> str:
    """``markdown`` with the test names and claim IDs as links (outside code and math)."""
    rel_dir = posixpath.dirname(src)
    out, fence, math = [], False, False
    for line in markdown.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
            out.append(line)
            continue
        if line.count("$$") % 2:
            math = not math
            out.append(line)
            continue
        if fence or math or line.startswith(("#", "    ")) or "$$" in line:
            out.append(line)
            continue
        # outside inline code, math and existing links only
        pieces = re.split(r"(`[^`]*`|\$[^$]+\$|\[[^\]]*\]\([^)]*\))", line)
        out.append("".join(p if i % 2 else _link_text(p, rel_dir) for i, p in enumerate(pieces)))
    return "\n".join(out)


def _command_help() -> str:
    from sia_theory.cli import build_parser

    parser = build_parser()
    parser.prog = "sia-theory"
    parts = [f"```text\n$ sia-theory --help\n{parser.format_help().rstrip()}\n```"]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                if name == "sweep":
                    continue  # its help lists every study; the sweep guide shows it
                parts.append(f"### `sia-theory {name}`\n\n```text\n$ sia-theory {name} "
                             f"--help\n{sub.format_help().rstrip()}\n```")
    return "\n\n".join(parts)


# ---------------------------------------------------------------- the search index: plain text
def on_post_build(config):
    """The search previews show formulas as plain text, not LaTeX (:mod:`search_text`)."""
    changed = search_text.rewrite_index(Path(config["site_dir"]))
    log.info("search index: %d entries with formulas written as plain text", changed)
