"""``sia-theory figures [--quick] [--family core|ext|model|train|all] [--only NAME...]
[--seed S] [--out DIR] [--no-progress]``: runs ``experiments/NAME.py`` (every script of the
family not starting with ``_``) one after another, each in its own process (:mod:`.scripts` says
which folder)."""

from __future__ import annotations

from .._infra.cli import add_no_progress, output_dir, seed
from .scripts import (
    FAMILIES,
    FIGURE_FAMILIES,
    NamesHelpParser,
    figure_family,
    run_scripts,
    script_folders,
    scripts_in,
    select_scripts,
)

__all__ = ["register"]


def _handler(args) -> int:
    experiments, _, figures = script_folders()
    available = scripts_in(experiments, "*.py")
    if not args.only and args.family != "all":
        available = {k: v for k, v in available.items() if figure_family(k) == args.family}
    scripts = select_scripts(available, args.only, "figure")
    extra = ["--seed", str(args.seed), "--out", str(args.out or figures)]
    extra += ["--quick"] if args.quick else []
    return run_scripts(scripts, extra + (["--no-progress"] if args.no_progress else []))


def _families_help() -> str:
    """``--family``'s choices as :data:`~.scripts.FIGURE_FAMILIES` states them."""
    parts = []
    for f in FIGURE_FAMILIES.values():
        files = "" if f.files == "*.py" else f", experiments/{f.files}"
        default = " (default)" if f.name == "core" else ""
        parts.append(f"{f.name}{default}: {f.what}{files}, {f.minutes} min")
    return "; ".join(parts)


def register(subparsers):
    """Add ``figures`` to the ``sia-theory`` subparsers."""
    p = subparsers.add_parser("figures", help="regenerate figures (experiments/*.py)",
                              description="Run experiments/NAME.py for every figure of a family "
                                          "(or those named by --only), each in its own process.")
    p.__class__ = NamesHelpParser
    p.names_of = lambda folders: list(scripts_in(folders[0], "*.py"))
    p.add_argument("--quick", action="store_true",
                   help="seconds-long runs of each figure (a smoke test, not the committed data)")
    p.add_argument("--only", nargs="+", metavar="NAME",
                   help="figure names (experiments/NAME.py), e.g. si_fig1_gaussian; overrides "
                        "--family")
    p.add_argument("--family", choices=FAMILIES, default="core",
                   help="which figures without --only, with the budget on 2 cores: "
                        + _families_help())
    p.add_argument("--seed", type=seed, default=0,
                   help="the Monte Carlo and training seed every script starts from (default 0)")
    add_no_progress(p)
    p.add_argument("--out", type=output_dir, default=None,
                   help="folder the figures, their data and manifests go to (default: figures/ "
                        "of the checkout, ./figures from the wheel)")
    p.set_defaults(handler=_handler)
    return p
