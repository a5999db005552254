"""The claims table: one registered function per claim ID of THEORY.md.

A check is ``fn(quick: bool, seed: int) -> Measurement``; its docstring quotes the claim. It
measures through the same library study as the claim's figure, then calls a pure decision
function of the measured numbers; every claim also registers negative controls that feed
alternative laws to that decision function (each must give ``FAIL``): the stated alternative
and, under their own names, the nearest alternatives (for example a limit or an exponent 20 %
off). The runner writes the table as Markdown and CSV (the CSV carries the numbers).
Modules of this package (``si``, ``cas``, ``ina``, ...) register their rows on import, so a new
family of claims is one new module.
"""

from __future__ import annotations

import importlib
import multiprocessing
import re
import time
import traceback
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from sia_theory._infra.io import write_set
from sia_theory._infra.progress import progress_bar
from sia_theory._infra.validate import check_int

VERDICTS = ("PASS", "FAIL", "DIVERGES", "UNTESTED", "UNDERPOWERED", "INFO")
"""``PASS``: the measurement supports the claim. ``FAIL``: it does not. ``DIVERGES``: the paper's
statement is contradicted by the measurement and the row says how (an honest finding, not a
defect of the toolkit). ``UNTESTED``: a premise of the experiment was not met (for example the
models never learned the task whose transfer the claim is about), so the measurement can neither
support nor contradict the claim; the row names the unmet premise. ``UNDERPOWERED``: the
experiment was not run at a size that can decide the claim (a trained row whose unresolved
comparisons need more seeds than were run, by the power analysis of a pilot:
:mod:`sia_theory.claims.power`), so it decides nothing; the row names the comparisons and the
seeds they need. ``INFO``: reported without judging. A check that crashes is an ``ERROR`` row,
written by the runner."""

NAN = float("nan")
"""Not a number: the default of every number of a :class:`Measurement` a check does not
report (a blank cell of the table)."""


@dataclass(frozen=True)
class Measurement:
    """What a check found.

    ``value`` with its interval ``[ci_low, ci_high]`` is the headline number of the row (for
    example a fitted exponent, a maximum error or a z-score), ``target`` the claim's value for
    it and ``tolerance`` the allowed distance; ``measured`` says the same in one line of text and
    ``detail`` adds one or two sentences. The verdict comes from the check's decision function,
    which is a pure function of measured numbers, so a negative control can feed it the
    alternative law and see ``FAIL``.
    """

    verdict: str
    measured: str
    value: float = NAN
    ci_low: float = NAN
    ci_high: float = NAN
    target: float = NAN
    tolerance: float = NAN
    detail: str = ""

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")
        for name in ("value", "ci_low", "ci_high", "target", "tolerance"):
            object.__setattr__(self, name, float(getattr(self, name)))


def verdict(ok: bool) -> str:
    """``"PASS"`` if ``ok`` else ``"FAIL"``."""
    return "PASS" if bool(ok) else "FAIL"


@dataclass(frozen=True)
class Claim:
    """A registered row: ``seeded`` is False for a check that draws no random numbers (its
    verdict cannot depend on the seed)."""

    claim_id: str
    statement: str
    alternative: str
    check: Callable[[bool, int], Measurement]
    seeded: bool = True


REGISTRY: dict[str, Claim] = {}
"""``REGISTRY[claim_id]``: every registered :class:`Claim`, filled by :func:`claim` when the
claim modules of this package are imported."""
NEGATIVE_CONTROLS: dict[str, dict[str, Callable[[], Measurement]]] = {}
"""``NEGATIVE_CONTROLS[claim_id][name]``: the registered controls of each claim by name."""
STATED = "stated alternative"
"""The name of each claim's control of the alternative its ``@claim`` names."""


def claim(claim_id: str, statement: str, *, alternative: str, seeded: bool = True):
    """Register ``fn(quick, seed) -> Measurement`` as the check of ``claim_id``.

    ``alternative`` names the law the check rejects (the negative control of
    :func:`negative_control` feeds exactly that law to the check's decision function);
    ``seeded=False`` says the check draws no random numbers.
    """
    if not alternative:
        raise ValueError(f"claim {claim_id} must name the alternative it rejects")

    def register(fn):
        if claim_id in REGISTRY:
            raise RuntimeError(f"claim {claim_id} registered twice")
        REGISTRY[claim_id] = Claim(claim_id, statement, alternative, fn, seeded)
        return fn

    return register


def negative_control(claim_id: str, name: str = STATED):
    """Register ``fn() -> Measurement``: the decision function of ``claim_id`` applied to data
    that follow an alternative law, ``name`` saying which (default :data:`STATED`, the law the
    claim's ``alternative`` names). Its verdict must be ``FAIL`` (tested for every control)."""
    if not name:
        raise ValueError(f"a negative control of {claim_id} needs a name")

    def register(fn):
        controls = NEGATIVE_CONTROLS.setdefault(claim_id, {})
        if name in controls:
            raise RuntimeError(f"negative control {name!r} of {claim_id} registered twice")
        controls[name] = fn
        return fn

    return register


def _natural_key(claim_id: str):
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", claim_id)]


def select(ids=None) -> list[Claim]:
    """The registered claims named by ``ids`` (all of them when ``ids`` is empty or None), in
    natural order of their IDs (``SI-2`` before ``SI-10``).

    Parameters
    ----------
    ids : iterable of str, optional
        Claim IDs, as in :data:`REGISTRY`.

    Returns
    -------
    list of Claim

    Raises
    ------
    ValueError
        If an ID is not registered (the message lists the known IDs).
    """
    if ids:
        unknown = sorted(set(ids) - set(REGISTRY))
        if unknown:
            raise ValueError(f"--only names unknown claim IDs {unknown}; known: {sorted(REGISTRY)}")
        chosen = [REGISTRY[i] for i in ids]
    else:
        chosen = list(REGISTRY.values())
    return sorted(chosen, key=lambda c: _natural_key(c.claim_id))


COLUMNS = ["id", "verdict", "value", "ci_low", "ci_high", "target", "tolerance", "claim",
           "alternative", "measured", "detail", "seconds"]
"""The columns of the table :func:`run_claims` returns (and of ``claims.csv``): the claim ID,
the verdict, the :class:`Measurement`'s numbers and texts, the claim's statement and rejected
alternative, and the check's wall time in seconds."""


def _row(c: Claim, quick: bool, seed: int) -> dict:
    """One claim's row of the table (an ``ERROR`` row when its check crashes)."""
    start = time.perf_counter()
    try:
        result = c.check(quick, seed)
        if not isinstance(result, Measurement):
            raise TypeError(f"check returned {type(result).__name__}, not a Measurement")
        verdict_text = result.verdict
    except Exception as err:  # a crashing check is reported in its row as ERROR
        result = Measurement("FAIL", f"error: {err!r}",
                             detail=traceback.format_exc(limit=3).replace("\n", " | "))
        verdict_text = "ERROR"
    return {"id": c.claim_id, "verdict": verdict_text, "value": result.value,
            "ci_low": result.ci_low, "ci_high": result.ci_high,
            "target": result.target, "tolerance": result.tolerance,
            "claim": c.statement, "alternative": c.alternative,
            "measured": result.measured, "detail": result.detail,
            "seconds": round(time.perf_counter() - start, 2)}


def _row_in_worker(claim_id: str, quick: bool, seed: int) -> dict:
    """:func:`_row` of a claim of the package's table, in a worker process (which registers
    every claim on import)."""
    importlib.import_module("sia_theory.claims")
    return _row(REGISTRY[claim_id], quick, seed)


def _error_row(c: Claim, err: BaseException) -> dict:
    """The ``ERROR`` row of a claim whose worker failed outside its check."""
    return {"id": c.claim_id, "verdict": "ERROR", "value": float("nan"), "ci_low": float("nan"),
            "ci_high": float("nan"), "target": float("nan"), "tolerance": float("nan"),
            "claim": c.statement, "alternative": c.alternative,
            "measured": f"error: {err!r}", "detail": "the check's worker process failed",
            "seconds": float("nan")}


def run_claims(ids=None, *, quick=False, seed=0, progress=True, jobs=1) -> pd.DataFrame:
    """Run the checks of the claims ``ids`` (all by default) and return the table.

    A check that raises, or returns something other than a :class:`Measurement`, gives an
    ``ERROR`` row whose ``measured`` cell holds the error and ``detail`` the traceback's tail.
    Every check is seeded by ``seed`` and its own ID, so the table is the same whatever
    ``jobs`` is (only the ``seconds`` column differs): with ``jobs > 1`` the checks run in that
    many fresh processes (spawned, not forked: numba and JAX hold threads), rows in the same
    order.

    Parameters
    ----------
    ids : iterable of str, optional
        Claim IDs (see :func:`select`); None or empty runs every registered claim.
    quick : bool, optional
        The checks' quick (CI) mode instead of the full one.
    seed : int, optional
        The seed passed to every check.
    progress : bool, optional
        Show a progress bar (on a terminal only).
    jobs : int, optional
        Processes running checks at once, in ``[1, 64]`` (default 1: this process).

    Returns
    -------
    pandas.DataFrame
        One row per claim with the columns :data:`COLUMNS`.

    Raises
    ------
    ValueError
        If ``ids`` names an unregistered claim, or ``jobs`` is outside ``[1, 64]``.
    """
    jobs = check_int("jobs", jobs, lo=1, hi=64)
    claims = select(ids)
    if jobs == 1 or len(claims) == 1:
        if progress:
            claims = progress_bar(claims, desc="paper checks", unit="claim", leave=False)
        return pd.DataFrame([_row(c, quick, seed) for c in claims], columns=COLUMNS)
    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=min(jobs, len(claims)), mp_context=context)
    try:
        # a claim of the package's table travels by ID; another one (a user's) is pickled
        futures = [pool.submit(_row_in_worker, c.claim_id, quick, seed)
                   if REGISTRY.get(c.claim_id) is c else pool.submit(_row, c, quick, seed)
                   for c in claims]
        done = as_completed(futures)
        if progress:
            done = progress_bar(done, total=len(futures), desc="paper checks", unit="claim",
                                leave=False)
        for _ in done:
            pass
    except BaseException:  # Ctrl-C: drop the queued checks instead of running them all
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    rows = []
    for c, future in zip(claims, futures):  # the selection's order
        try:
            rows.append(future.result())
        except Exception as err:  # the worker died or the claim could not be sent
            rows.append(_error_row(c, err))
    return pd.DataFrame(rows, columns=COLUMNS)


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _number(x) -> str:
    return "" if pd.isna(x) else f"{x:.4g}"


def to_markdown(table: pd.DataFrame, *, quick: bool, seed: int) -> str:
    """The table of :func:`run_claims` as the Markdown page ``claims.md``.

    Parameters
    ----------
    table : pandas.DataFrame
        The output of :func:`run_claims`.
    quick : bool
        Whether it was a quick run (named in the title).
    seed : int
        The seed it ran with (named in the title).

    Returns
    -------
    str
        A title, the meaning of each verdict, one table row per claim (value with its interval,
        target ± tolerance, the rejected alternative) and the count of each verdict.
    """
    mode = "quick (CI)" if quick else "full"
    lines = [f"# Paper claims: {mode} run, seed {seed}", "",
             "Verdicts: PASS (the measurement supports the claim), FAIL (it does not), DIVERGES "
             "(the paper's statement is contradicted and the row says how), UNTESTED (a premise "
             "of the experiment was not met, named in the row: the claim was not tested), "
             "UNDERPOWERED (not run at a size that can decide it: the comparisons it names "
             "need more seeds than were run), INFO "
             "(reported, not judged), ERROR (the check crashed). Each row names the alternative "
             "law it rejects; a negative-control test feeds that law to the row's decision "
             "function and sees FAIL.", "",
             "| ID | verdict | claim | measured | value [CI] | target ± tol | rejects | detail |",
             "|---|---|---|---|---|---|---|---|"]
    for row in table.itertuples(index=False):
        value = _number(row.value)
        if not (pd.isna(row.ci_low) or pd.isna(row.ci_high)):
            value += f" [{_number(row.ci_low)}, {_number(row.ci_high)}]"
        target = _number(row.target)
        if not pd.isna(row.tolerance):
            target += f" ± {_number(row.tolerance)}"
        lines.append("| " + " | ".join(_cell(x) for x in (
            row.id, row.verdict, row.claim, row.measured, value, target, row.alternative,
            row.detail)) + " |")
    counts = table["verdict"].value_counts().to_dict()
    lines += ["", "Totals: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))]
    return "\n".join(lines) + "\n"


def write_table(table: pd.DataFrame, out_dir, *, quick: bool, seed: int) -> tuple[Path, Path]:
    """Publish ``claims.md`` and ``claims.csv`` in ``out_dir`` as one set (with
    ``claims.manifest.json``): after a kill at any point, ``read_set(out_dir, "claims")`` gives
    both files of the old run or both of the new one, never one of each."""
    text = to_markdown(table, quick=quick, seed=seed)
    paths = write_set(out_dir, "claims", {
        "claims.md": lambda path: path.write_text(text),
        "claims.csv": lambda path: table.to_csv(path, index=False, float_format="%.17g"),
    })
    return paths["claims.md"], paths["claims.csv"]
