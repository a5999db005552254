"""``python -m sia_theory.claims [--quick] [--seed S] [--only ID ...] [--jobs N] [--out DIR]`` (also
``sia-theory check`` and, in the repository, ``python -m paper_checks``); exit 1 on a FAIL or
ERROR row (DIVERGES, UNTESTED, UNDERPOWERED and INFO rows are findings, not failures), exit 2
on a usage error.

Every argument (the seed range, the output folder, the claim IDs) is checked before the first
check runs and before the progress bar: a usage error prints one line, writes nothing and exits
with status 2. ERROR rows are only for checks that crash."""

from __future__ import annotations

import sys

from sia_theory._infra.cli import OneLineArgumentParser, claim_ids, int_range, output_dir, seed

from .core import run_claims, select, write_table

DEFAULT_OUT = "sia-theory-claims"
"""The default output folder (``-quick`` appended for ``--quick``): a hyphenated name, so it can
never shadow an importable package in the folder the command runs in."""


def main(argv=None, prog: str = "python -m sia_theory.claims") -> int:
    """Run the claims table with ``argv`` (default ``sys.argv[1:]``); ``prog`` names the command
    in error lines (``sia-theory check`` passes its own). Returns the exit status."""
    parser = OneLineArgumentParser(prog=prog, description=__doc__)
    parser.add_argument("--quick", action="store_true", help="CI-sized checks (seconds each)")
    parser.add_argument("--seed", type=seed, default=0, help="an integer in [0, 2**63 - 1]")
    parser.add_argument("--only", nargs="+", type=claim_ids, default=None, metavar="ID",
                        help="claim IDs, e.g. SI-1 CAS-3 or SI-1,CAS-3 (default: every claim)")
    parser.add_argument("--jobs", type=int_range(1, 64), default=1,
                        help="processes running checks at once, 1 … 64 (default 1); the table is "
                             "the same for any value")
    parser.add_argument("--out", type=output_dir, default=None,
                        help=f"folder for claims.md/claims.csv (default: ./{DEFAULT_OUT} for a "
                             f"full run, ./{DEFAULT_OUT}-quick for --quick; names no Python "
                             "package can have)")
    args = parser.parse_args(argv)
    ids = None if args.only is None else [i for group in args.only for i in group]
    out = args.out or output_dir(DEFAULT_OUT + ("-quick" if args.quick else ""))

    try:
        select(ids)  # unknown IDs are a usage error, before any check runs
    except ValueError as err:
        parser.error(str(err))
    table = run_claims(ids, quick=args.quick, seed=args.seed, jobs=args.jobs)
    md, _ = write_table(table, out, quick=args.quick, seed=args.seed)
    width = 60
    print(f"{'ID':<8} {'verdict':<8} {'value [CI]':<28} measured")
    for row in table.itertuples(index=False):
        measured = row.measured if len(row.measured) <= width else row.measured[: width - 1] + "…"
        value = "" if row.value != row.value else f"{row.value:.4g}"
        if row.ci_low == row.ci_low and row.ci_high == row.ci_high:
            value += f" [{row.ci_low:.3g}, {row.ci_high:.3g}]"
        print(f"{row.id:<8} {row.verdict:<8} {value:<28} {measured}")
    counts = table["verdict"].value_counts()
    failed = int(counts.get("FAIL", 0) + counts.get("ERROR", 0))
    passed = int(counts.get("PASS", 0))
    print(f"table written to {md}")
    print(f"other rows: {int(counts.get('DIVERGES', 0))} DIVERGES (the paper is contradicted, "
          f"with evidence), {int(counts.get('UNTESTED', 0))} UNTESTED (a premise of the "
          f"experiment unmet, named in the row), {int(counts.get('UNDERPOWERED', 0))} "
          f"UNDERPOWERED (not run at a size that can decide it), "
          f"{int(counts.get('INFO', 0))} INFO")
    print(f"claims: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
