"""``python -m paper_checks [--quick] [--seed S] [--only ID,ID] [--out DIR]``; exit 1 on a FAIL."""

from __future__ import annotations

import sys

from sia_theory._infra.cli import OneLineArgumentParser, nonnegative_int

from . import run_claims, write_table


def main(argv=None) -> int:
    parser = OneLineArgumentParser(prog="python -m paper_checks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="CI-sized checks (seconds each)")
    parser.add_argument("--seed", type=nonnegative_int, default=0)
    parser.add_argument("--only", default="", help="comma-separated claim IDs, e.g. SI-1,CAS-3")
    parser.add_argument("--out", default=None,
                        help="folder for claims.md/claims.csv (default: paper_checks/results for "
                             "a full run, build/paper_checks_quick for --quick)")
    args = parser.parse_args(argv)
    ids = [x.strip() for x in args.only.split(",") if x.strip()]
    out = args.out or ("build/paper_checks_quick" if args.quick else "paper_checks/results")
    try:
        table = run_claims(ids, quick=args.quick, seed=args.seed)
    except ValueError as err:
        print(f"{parser.prog}: error: {err}", file=sys.stderr)
        return 2
    md, _ = write_table(table, out, quick=args.quick, seed=args.seed)
    width = 60
    print(f"{'ID':<8} {'verdict':<7} {'measured':<{width}} interval")
    for row in table.itertuples(index=False):
        measured = row.measured if len(row.measured) <= width else row.measured[: width - 1] + "…"
        print(f"{row.id:<8} {row.verdict:<7} {measured:<{width}} {row.interval}")
    failed = int(table["verdict"].isin(["FAIL", "ERROR"]).sum())
    passed = int((table["verdict"] == "PASS").sum())
    informational = len(table) - failed - passed
    extra = f"; {informational} informational rows" if informational else ""
    print(f"table written to {md}{extra}")
    print(f"claims: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
