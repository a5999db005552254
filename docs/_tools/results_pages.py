"""The claims page (from ``paper_checks/results/claims.csv``) and the gallery (from
``figures/*.png``), written when the site is built, never by hand."""

from __future__ import annotations

import ast
import csv
import json
import math
from pathlib import Path

import figure_claims as fc

from sia_theory.cli.scripts import FIGURE_FAMILIES

VERDICTS = ("PASS", "FAIL", "DIVERGES", "UNTESTED", "UNDERPOWERED", "INFO", "ERROR")
FAMILIES = {"SI": "Scale-invariant attention (SI)", "CAS": "Critical attention scaling (CAS)",
            "INA": "InAttention (INA)", "REF": "The attention reference (REF)",
            "EXT": "Beyond the papers (EXT)", "TRAIN": "Training (TRAIN)",
            "SPH": "Keys on a sphere (SPH)", "GAP": "The gap-counting diagnostic (GAP)"}


def badge(verdict: str) -> str:
    return f'<span class="verdict verdict-{verdict}">{verdict}</span>'


def read_claims(root: Path) -> list[dict]:
    with open(root / "paper_checks" / "results" / "claims.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    return sorted(rows, key=lambda r: fc.natural_key(r["id"]))


def claims_text(rows) -> dict[str, str]:
    return {r["id"]: " ".join(r.get(c, "") for c in ("claim", "measured", "detail")) for r in rows}


def _cell(text: str) -> str:
    text = " ".join((text or "").split()).replace("|", "\\|")
    return text.replace("[", "\\[").replace("]", "\\]").replace("*", "\\*")


def _number(text: str) -> str:
    try:
        x = float(text)
    except (TypeError, ValueError):
        return ""
    return "" if math.isnan(x) else f"{x:.4g}"


def figures_of_claims(root: Path, rows) -> dict[str, list[str]]:
    text = claims_text(rows)
    out: dict[str, list[str]] = {}
    for png in sorted((root / "figures").glob("*.png")):
        for claim_id in fc.figure_claims(root, png.stem, text):
            out.setdefault(claim_id, []).append(png.stem)
    return out


def claims_page(root: Path) -> str:
    rows = read_claims(root)
    modules = fc.claim_modules(root / "sia_theory" / "claims")
    figures = figures_of_claims(root, rows)
    counts = {v: sum(r["verdict"] == v for r in rows) for v in VERDICTS}
    lines = [
        "# The claims table", "",
        "One row per claim ID: the statement of the paper (or of the results beyond the papers), "
        "the alternative law the check rejects, what was measured, and a verdict. Rendered when "
        "the site is built from `paper_checks/results/claims.csv`, the committed full-fidelity "
        "run (`make check`, seed 0); `make test` runs the quick version "
        "(`sia-theory check --quick`). Each claim has an anchor: this page's `#SI-7` is claim "
        "SI-7.", "",
        f"**{len(rows)} claims:** " + ", ".join(
            f"{counts[v]} {badge(v)}" for v in VERDICTS if counts[v] or v in ("PASS", "FAIL")),
        "", "| verdict | meaning |", "|---|---|",
        f"| {badge('PASS')} | the measurement supports the claim and rejects the named "
        "alternative |",
        f"| {badge('FAIL')} | it does not (exit status 1) |",
        f"| {badge('DIVERGES')} | the paper's statement is contradicted by the measurement, and "
        "the row says how (a finding, reported with its evidence; not a failure of the toolkit) |",
        f"| {badge('UNTESTED')} | the experiment could not test the claim: a premise it rests "
        "on was not met (for example the models never learned the task whose transfer the claim "
        "is about), and the row names that premise (neither support nor contradiction; not a "
        "failure) |",
        f"| {badge('UNDERPOWERED')} | the experiment was not run at a size that can decide the "
        "claim: its unresolved comparisons need more seeds than were run, by the power analysis "
        "of a pilot (the row names them and the seeds each needs; neither support nor "
        "contradiction) |",
        f"| {badge('INFO')} | reported without a verdict |",
        f"| {badge('ERROR')} | the check itself crashed (exit status 1) |", "",
        "Every check is a study (the library function that also draws the claim's figure) "
        "followed by a pure decision function of the measured numbers, registered with "
        "`@claim(\"ID\", \"statement\", alternative=\"…\")` in `sia_theory/claims/`; negative "
        "controls (`@negative_control(\"ID\")` for the stated alternative, "
        "`@negative_control(\"ID\", name=\"…\")` for others) feed an alternative law (a "
        "bounded entropy curve, `β₅₀ ∝ (log n)²`, a mistyped formula, …) to the same decision "
        "function and a test requires `FAIL`, so no row can pass by construction. Among them are "
        "the nearest alternatives: the quantity each decision judges (a limit, a prefactor, an "
        "exponent, a threshold) 20 % off in both directions; the table `TWENTY_PERCENT` in "
        "`tests/claims/test_paper_checks.py` lists them for every claim, and says why where "
        "20 % means "
        "nothing (an exact identity, a lower bound). `make test` runs the quick table for seed "
        "0 and `make test-all` also for seeds 1 and 2; a test checks that the committed claims "
        "table and the committed figure data report the same numbers. `claims.csv` carries the "
        "numbers as columns: `value` with `ci_low`/`ci_high` (a confidence interval where the "
        "quantity is random), `target` and `tolerance`. A new family of claims is a new module "
        "in `sia_theory/claims/`; its rows appear here at the next build.", "",
        "```bash\n"
        "make check                         # full fidelity → "
        "paper_checks/results/claims.{md,csv}\n"
        "sia-theory check --quick --out DIR # CI-sized (make test: DIR = "
        "build/paper_checks_quick)\n"
        "sia-theory check --quick --only SI-7 CAS-3 --seed 1\n```", "",
        "## Summary", "", "| claim | verdict | statement | measured |", "|---|---|---|---|"]
    for r in rows:
        lines.append(f"| [{r['id']}](#{r['id']}) | {badge(r['verdict'])} | {_cell(r['claim'])} "
                     f"| {_cell(r['measured'])} |")
    lines.append("")
    family = None
    for r in rows:
        prefix = r["id"].partition("-")[0]
        if prefix != family:
            family = prefix
            lines += [f"## {FAMILIES.get(prefix, prefix)}", ""]
        value = _number(r.get("value"))
        lo, hi = _number(r.get("ci_low")), _number(r.get("ci_high"))
        target, tol = _number(r.get("target")), _number(r.get("tolerance"))
        lines += [f"### {r['id']} {{#{r['id']}}}", "",
                  f"{badge(r['verdict'])} {_cell(r['claim'])}", "",
                  "| | |", "|---|---|",
                  f"| measured | {_cell(r['measured'])} |"]
        if value:
            lines.append(f"| value | {value}" + (f" [{lo}, {hi}]" if lo and hi else "") + " |")
        if target:
            lines.append(f"| target | {target}" + (f" ± {tol}" if tol else "") + " |")
        lines.append(f"| rejects | {_cell(r['alternative'])} |")
        if r.get("detail"):
            lines.append(f"| detail | {_cell(r['detail'])} |")
        if r["id"] in modules:
            lines.append(f"| checked by | `{modules[r['id']]}` ({_number(r.get('seconds')) or '?'}"
                         " s in the committed run) |")
        if r["id"] in figures:
            links = ", ".join(f"[{f}](gallery.md#{f})" for f in figures[r["id"]])
            lines.append(f"| figures | {links} |")
        lines.append("")
    return "\n".join(lines)


def families_sentence() -> str:
    """The figure families with their ``make`` targets and budgets, from the one table
    (``sia_theory.cli.scripts.FIGURE_FAMILIES``)."""
    parts = []
    for f in FIGURE_FAMILIES.values():
        files = "" if f.files == "*.py" else f"`experiments/{f.files}`, "
        parts.append(f"{f.what} ({files}`{f.target}`, {f.minutes} minutes)")
    return ("Families, each with its budget on 2 cores: " + "; ".join(parts[:-1])
            + f"; and {parts[-1]}.")


def _caption(root: Path, name: str) -> str:
    script = root / "experiments" / f"{name}.py"
    if not script.exists():
        return "(no script `experiments/{name}.py`)"
    doc = ast.get_docstring(ast.parse(script.read_text())) or ""
    return " ".join(doc.split())


def gallery_page(root: Path, family_of) -> tuple[str, list[str]]:
    """The page and the figure files it links to (relative to ``figures/``)."""
    rows = read_claims(root)
    verdicts = {r["id"]: r["verdict"] for r in rows}
    text = claims_text(rows)
    pngs = sorted((root / "figures").glob("*.png"))
    linked: list[str] = []
    by_family: dict[str, list[Path]] = {}
    for png in pngs:
        by_family.setdefault(family_of(png.stem), []).append(png)
    lines = ["# Gallery", "",
             f"Every committed figure ({len(pngs)}), generated from `figures/*.png` when the site "
             "is built: its caption (the docstring of the script that draws it, "
             "`experiments/NAME.py`), the command that regenerates it, the claims it bears on "
             "(with their verdicts in the [claims table](claims.md)) and its data: the CSV "
             "tables, the JSON of parameters, seed and package versions, and the manifest "
             "(size and SHA-256 of each file of the set). Click a figure to open it at full "
             "resolution.", "",
             families_sentence(), "", "Each script also runs alone: "
             "`python experiments/NAME.py [--quick] [--seed S] [--out DIR]`.", ""]
    for family, items in by_family.items():
        title = FIGURE_FAMILIES[family].what if family in FIGURE_FAMILIES else family
        lines += [f"## {title[0].upper()}{title[1:]}", ""]
        for png in items:
            name = png.stem
            manifest = root / "figures" / f"{name}.manifest.json"
            files = sorted(json.loads(manifest.read_text())["files"]) if manifest.exists() else \
                [p.name for p in sorted((root / "figures").glob(f"{name}*"))]
            data = [f for f in files if f.endswith((".csv", ".json")) and f != f"{name}.png"]
            if manifest.exists():
                data.append(manifest.name)
            linked += [png.name, *data]
            claims = fc.figure_claims(root, name, text)
            claim_links = ", ".join(
                f"[{c}](claims.md#{c}) {badge(verdicts[c])}" if c in verdicts else c
                for c in claims) or "— (no claim row)"
            lines += [f"### {name} {{#{name}}}", "",
                      # the figure links to itself: a click shows it at full resolution
                      f"[![{name}](figures/{png.name}){{ loading=lazy }}](figures/{png.name} "
                      '"open at full resolution")', "",
                      _caption(root, name), "", "| | |", "|---|---|",
                      f"| regenerate | `sia-theory figures --only {name}` "
                      f"(all of its family: `{FIGURE_FAMILIES[family].target}`) |",
                      f"| claims | {claim_links} |",
                      "| data | " + ", ".join(f"[`{f}`](figures/{f})" for f in data) + " |", ""]
    lines += ["## The figures at a glance", "",
              "The summary table of the figures as the project describes them (hand-written; "
              "the sections above are generated from the files).", "",
              '--8<-- "_figures_at_a_glance.md"', ""]
    return "\n".join(lines), linked
