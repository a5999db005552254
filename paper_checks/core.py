"""The claims table: one registered function per claim ID of THEORY.md.

A check is ``fn(quick: bool, seed: int) -> Measurement``; its docstring quotes the claim. The
runner computes both sides, records the verdict and writes the table as Markdown and CSV.
Modules of this package (``si``, ``cas``, ``ina``, ...) register their rows on import, so a new
family of claims is one new module.
"""

from __future__ import annotations

import re
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from sia_theory._infra.io import write_csv, write_text


@dataclass(frozen=True)
class Measurement:
    """What a check found. ``measured`` and ``interval`` are human-readable; ``passed`` is the
    verdict (``None`` for an informational row that reports without judging)."""

    measured: str
    passed: bool | None
    interval: str = ""
    detail: str = ""


@dataclass(frozen=True)
class Claim:
    claim_id: str
    statement: str
    check: Callable[[bool, int], Measurement]


REGISTRY: dict[str, Claim] = {}


def claim(claim_id: str, statement: str):
    """Register ``fn(quick, seed) -> Measurement`` as the check of ``claim_id``."""

    def register(fn):
        if claim_id in REGISTRY:
            raise RuntimeError(f"claim {claim_id} registered twice")
        REGISTRY[claim_id] = Claim(claim_id, statement, fn)
        return fn

    return register


def _natural_key(claim_id: str):
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", claim_id)]


def select(ids=None) -> list[Claim]:
    if ids:
        unknown = sorted(set(ids) - set(REGISTRY))
        if unknown:
            raise ValueError(f"--only names unknown claim IDs {unknown}; known: {sorted(REGISTRY)}")
        chosen = [REGISTRY[i] for i in ids]
    else:
        chosen = list(REGISTRY.values())
    return sorted(chosen, key=lambda c: _natural_key(c.claim_id))


def run_claims(ids=None, *, quick=False, seed=0, progress=True) -> pd.DataFrame:
    rows = []
    claims = select(ids)
    if progress:
        from tqdm import tqdm

        claims = tqdm(claims, desc="paper checks", unit="claim", leave=False)
    for c in claims:
        start = time.perf_counter()
        try:
            result = c.check(quick, seed)
            verdict = {True: "PASS", False: "FAIL", None: "INFO"}[result.passed]
        except Exception as err:  # a crashing check is a failing claim, reported in its row
            result = Measurement(f"error: {err!r}", False,
                                 detail=traceback.format_exc(limit=3).replace("\n", " | "))
            verdict = "ERROR"
        rows.append({"id": c.claim_id, "claim": c.statement, "measured": result.measured,
                     "interval": result.interval, "verdict": verdict, "detail": result.detail,
                     "seconds": round(time.perf_counter() - start, 2)})
    return pd.DataFrame(rows, columns=["id", "claim", "measured", "interval", "verdict",
                                       "detail", "seconds"])


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def to_markdown(table: pd.DataFrame, *, quick: bool, seed: int) -> str:
    mode = "quick (CI)" if quick else "full"
    lines = [f"# Paper claims: {mode} run, seed {seed}", "",
             "| ID | verdict | claim | measured | interval / tolerance | detail |",
             "|---|---|---|---|---|---|"]
    for row in table.itertuples(index=False):
        lines.append("| " + " | ".join(_cell(x) for x in (
            row.id, row.verdict, row.claim, row.measured, row.interval, row.detail)) + " |")
    counts = table["verdict"].value_counts().to_dict()
    lines += ["", "Totals: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))]
    return "\n".join(lines) + "\n"


def write_table(table: pd.DataFrame, out_dir, *, quick: bool, seed: int) -> tuple[Path, Path]:
    out_dir = Path(out_dir)
    md = write_text(out_dir / "claims.md", to_markdown(table, quick=quick, seed=seed))
    csv = write_csv(out_dir / "claims.csv", table)
    return md, csv
