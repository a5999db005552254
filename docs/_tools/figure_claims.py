"""Which claims of the table each committed figure bears on, found in the sources at build time.

A figure ``figures/NAME.png`` is drawn by ``experiments/NAME.py``. Its claims are the union of

* the claim IDs its script's docstring names (``EXT-7: needle retrieval ...``);
* the claims whose check (``sia_theory/claims/*.py``, the function registered with
  ``@claim("ID", ...)`` and the module-level helpers it calls) uses a name the script imports
  from ``sia_theory.studies.*`` (the same study, with the same settings, draws the figure and
  decides the claim);
* the claims whose row in ``claims.csv`` mentions ``figures/NAME``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

CLAIM_ID = re.compile(r"\b((?:SI|CAS|EXT|INA|REF|TRAIN|SPH|GAP)-\d+)\b")


def _study_imports(tree: ast.Module) -> dict[str, str]:
    """Local name -> study module, for ``from sia_theory.studies.X import name``."""
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                "sia_theory.studies."):
            for alias in node.names:
                names[alias.asname or alias.name] = node.module
    return names


def _names_used(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def claim_study_names(paper_checks: Path) -> dict[str, set[str]]:
    """Claim ID -> the study names its check uses (through the module's own helpers)."""
    out: dict[str, set[str]] = {}
    for path in sorted(paper_checks.glob("*.py")):
        tree = ast.parse(path.read_text())
        studies = _study_imports(tree)
        functions = {n.name: n for n in tree.body
                     if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
        for fn in functions.values():
            ids = [d.args[0].value for d in fn.decorator_list
                   if isinstance(d, ast.Call) and getattr(d.func, "id", "") == "claim"
                   and d.args and isinstance(d.args[0], ast.Constant)]
            if not ids:
                continue
            seen, todo, used = set(), [fn.name], set()
            while todo:  # the check and the helpers of this module it calls
                name = todo.pop()
                if name in seen or name not in functions:
                    continue
                seen.add(name)
                names = _names_used(functions[name])
                used |= names
                todo += [n for n in names if n in functions]
            for claim_id in ids:
                out.setdefault(claim_id, set()).update(n for n in used if n in studies)
    return out


def claim_modules(paper_checks: Path) -> dict[str, str]:
    """Claim ID -> the ``sia_theory/claims`` file that registers it."""
    out = {}
    for path in sorted(paper_checks.glob("*.py")):
        for claim_id in re.findall(r'@claim\(\s*"([A-Z]+-\d+)"', path.read_text()):
            out[claim_id] = f"sia_theory/claims/{path.name}"
    return out


def figure_claims(root: Path, figure: str, claims_text: dict[str, str]) -> list[str]:
    """The claim IDs figure ``figure`` bears on (module docstring), naturally sorted."""
    found: set[str] = set()
    script = root / "experiments" / f"{figure}.py"
    if script.exists():
        tree = ast.parse(script.read_text())
        found |= set(CLAIM_ID.findall(ast.get_docstring(tree) or ""))
        imported = set(_study_imports(tree))
        for claim_id, names in claim_study_names(root / "sia_theory" / "claims").items():
            if names & imported:
                found.add(claim_id)
    for claim_id, text in claims_text.items():
        if re.search(rf"figures/{re.escape(figure)}\b", text):
            found.add(claim_id)
    return sorted(found, key=natural_key)


def natural_key(claim_id: str):
    order = {"SI": 0, "CAS": 1, "INA": 2, "REF": 3, "EXT": 4}
    prefix, _, number = claim_id.partition("-")
    return (order.get(prefix, 9), prefix, int(number) if number.isdigit() else 0)
