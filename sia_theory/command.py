"""The ``sia-theory`` command (``[project.scripts]``; also ``python -m sia_theory.command``).

Subcommands, each added by a ``register(subparsers)`` function:

* ``figures [--quick] [--family core|ext|model|train|all] [--only NAME...] [--seed S] [--out DIR]``:
  runs ``experiments/NAME.py`` (every script of the family not starting with ``_``) one after
  another, each in its own process;
* ``check [--quick] [--only ID...] [--seed S] [--out DIR]``: the claims table
  (``python -m paper_checks``);
* ``analyze TARGET [--n-ctx N] [--out DIR] [--quick] [--seed S] [--no-zoo] [--head H]``
  (or ``analyze --hf-config config.json``: :func:`sia_theory.analysis.hf.hf_report`):
  :func:`sia_theory.analyze` on a transform named ``MODULE:OBJECT`` (a module on the path),
  ``FILE.py:OBJECT`` (a file) or ``zoo:NAME`` (a :data:`~sia_theory.zoo.ZOO` member); the
  object is a Transform instance, a Transform class that takes no arguments, or a plain
  function with FlexAttention's ``score_mod(score, b, h, q_idx, kv_idx)`` signature (numpy),
  whose affine coefficients are probed (refused if it is not affine in the score);
* ``bench [--quick] [--only NAME...]``: runs ``benchmarks/bench_NAME.py``;
* ``train --scheme NAME... [--quick] [--seed S...] [--tau T...] [--out DIR]``: trains models
  (:mod:`sia_theory.studies.train_command`; needs the ``train`` extra);
* ``sweep STUDY ...``: a study's grid on Dask (:mod:`sia_theory.studies.command`).

``figures`` and ``bench`` run the scripts ``experiments/*.py`` and ``benchmarks/bench_*.py``:
those of the repository checkout when there is one (the folder holding this package when it has
``experiments/`` — an editable install or ``PYTHONPATH`` —, else ``$SIA_THEORY_REPO``, else the
current folder or one of its parents), else the copies the wheel carries as package data
(``sia_theory/_experiments``, ``sia_theory/_benchmarks``); figures then go to ``./figures``
unless ``--out`` says otherwise. With neither they stop with one line and exit status 2.
Bad input anywhere (unknown flag, bad ``TARGET``, an object that is neither a Transform nor an
affine score_mod function, unknown
figure or benchmark name) is one line on stderr and exit status 2, with nothing written.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

from ._infra.cli import OneLineArgumentParser, int_range, output_dir, seed
from .targets import TargetError, load_transform

__all__ = ["main", "build_parser", "repo_root", "script_folders", "load_transform", "TargetError",
           "SUBCOMMANDS", "EXTRA_SUBCOMMAND_MODULES", "CommandError"]

# Modules with a ``register(subparsers)`` function, imported when the parser is built (they
# import nothing heavy at module level: ``train`` imports JAX only in its handler).
EXTRA_SUBCOMMAND_MODULES: tuple[str, ...] = ("sia_theory.studies.command",
                                             "sia_theory.studies.train_command")
"""Modules with a ``register(subparsers)`` function, imported when the parser is built
(``sweep`` lives in :mod:`sia_theory.studies.command`, ``train`` in
:mod:`sia_theory.studies.train_command`)."""


class CommandError(ValueError):
    """Bad input found after parsing (reported as one line, exit status 2)."""



def repo_root() -> Path:
    """The repository checkout holding ``experiments/`` and ``benchmarks/`` (module docstring),
    or :class:`CommandError`."""
    here = Path(__file__).resolve().parent.parent
    candidates = [here]
    if os.environ.get("SIA_THEORY_REPO"):
        candidates.append(Path(os.environ["SIA_THEORY_REPO"]))
    cwd = Path.cwd().resolve()
    candidates += [cwd, *cwd.parents]
    for path in candidates:
        if (path / "experiments").is_dir() and (path / "sia_theory").is_dir():
            return path
    raise CommandError("no sia-theory repository checkout found (experiments/ and benchmarks/): "
                       "run inside a clone or set SIA_THEORY_REPO")


def script_folders() -> tuple[Path, Path, Path]:
    """``(experiments, benchmarks, default figures folder)``: the checkout's (module docstring)
    or, installed from a wheel, the package's copies with ``./figures``; else
    :class:`CommandError`."""
    try:
        root = repo_root()
    except CommandError:
        package = Path(__file__).resolve().parent
        if (package / "_experiments").is_dir() and (package / "_benchmarks").is_dir():
            return package / "_experiments", package / "_benchmarks", Path("figures")
        raise
    return root / "experiments", root / "benchmarks", root / "figures"


def _scripts(folder: Path, pattern: str, strip: str = "") -> dict[str, Path]:
    return {p.stem[len(strip):]: p for p in sorted(folder.glob(pattern))
            if not p.name.startswith("_")}


def _select(available: dict, only, what: str) -> list[Path]:
    if not only:
        return list(available.values())
    unknown = [name for name in only if name not in available]
    if unknown:
        raise CommandError(f"unknown {what} {', '.join(map(repr, unknown))}; choose from "
                           f"{', '.join(available)}")
    return [available[name] for name in only]


def _run_scripts(scripts, extra) -> int:
    failed = []
    for script in scripts:
        print(f"== {script.name}", flush=True)
        if subprocess.call([sys.executable, str(script), *extra]) != 0:
            failed.append(script.name)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


# --- figures ------------------------------------------------------------------------------

FAMILIES = ("core", "ext", "model", "train", "all")
"""Figure families by file name: ``experiments/ext_*.py`` (beyond the papers,
``make figures-ext``), ``experiments/model_*.py`` (the pretrained model, ``make figures-model``),
``experiments/train_*.py`` (models trained here, ``make figures-train``), everything else
``core`` (``make figures``); ``all`` runs every family, the training grid included."""


def figure_family(name: str) -> str:
    """The family of ``experiments/<name>.py``: ``ext``, ``model``, ``train`` or ``core``."""
    for family in ("ext", "model", "train"):
        if name.startswith(family + "_"):
            return family
    return "core"


def _figures(args) -> int:
    experiments, _, figures = script_folders()
    available = _scripts(experiments, "*.py")
    if not args.only and args.family != "all":
        available = {k: v for k, v in available.items() if figure_family(k) == args.family}
    scripts = _select(available, args.only, "figure")
    extra = ["--seed", str(args.seed), "--out", str(args.out or figures)]
    return _run_scripts(scripts, extra + (["--quick"] if args.quick else []))


def register_figures(subparsers):
    p = subparsers.add_parser("figures", help="regenerate figures (experiments/*.py)",
                              description="Run experiments/NAME.py for every figure (or --only).")
    p.add_argument("--quick", action="store_true", help="seconds-long runs (smoke test)")
    p.add_argument("--only", nargs="+", metavar="NAME", help="figure names, e.g. si_fig1_gaussian")
    p.add_argument("--family", choices=FAMILIES, default="core",
                   help="which figures without --only: core (default; the papers' figures), ext "
                        "(experiments/ext_*.py), model (experiments/model_*.py), train "
                        "(experiments/train_*.py: models trained here) or all")
    p.add_argument("--seed", type=seed, default=0, help="Monte Carlo seed")
    p.add_argument("--out", type=output_dir, default=None,
                   help="output folder (default: figures/ of the checkout)")
    p.set_defaults(handler=_figures)


# --- check --------------------------------------------------------------------------------

def _check(args) -> int:
    from paper_checks.__main__ import main as checks_main

    argv = ["--seed", str(args.seed)] + (["--quick"] if args.quick else [])
    if args.only:
        argv += ["--only", ",".join(args.only)]
    if args.out is not None:
        argv += ["--out", str(args.out)]
    return checks_main(argv)


def register_check(subparsers):
    p = subparsers.add_parser("check", help="the claims table (paper_checks)",
                              description="Run the paper checks and write the claims table.")
    p.add_argument("--quick", action="store_true", help="CI-sized checks")
    p.add_argument("--only", nargs="+", metavar="ID", help="claim IDs, e.g. SI-7 CAS-3")
    p.add_argument("--seed", type=seed, default=0, help="Monte Carlo seed")
    p.add_argument("--out", type=output_dir, default=None,
                   help="folder for claims.md/.csv (default as python -m paper_checks)")
    p.set_defaults(handler=_check)


# --- analyze ------------------------------------------------------------------------------

def _analyze(args) -> int:
    if (args.target is None) == (args.hf_config is None):
        raise CommandError("give a TARGET or --hf-config, one of them")
    if args.hf_config is not None:  # the scheme a model config ships (sia_theory.analysis.hf)
        from .analysis.hf import hf_report

        print(hf_report(args.hf_config, quick=args.quick, seed=args.seed).line())
        return 0
    transform, name = load_transform(args.target)  # before any computation or output
    from .analysis import analyze

    if args.head is not None:
        name = f"{name}_head{args.head}"
    report = analyze(transform, n_ctx=args.n_ctx, seed=args.seed, quick=args.quick,
                     zoo=not args.no_zoo, name=name, head=args.head)
    stem = "analysis_" + re.sub(r"[^A-Za-z0-9_.-]+", "_", name)
    paths = report.write(args.out, stem)
    limit = report.total_attention_limit
    print(f"{name}: entropy law {report.entropy_law} (p = {report.evidence.exponent:.3f} ± "
          f"{report.evidence.exponent_se:.3f}); total attention per octave "
          + (f"→ {limit:.6g}" if limit is not None else report.study.total_attention[0])
          + f"; phase {report.phase} (σ/√(2 log M) = {report.summary.iloc[0]['ratio']:.3f}); "
          f"{report.seconds:.1f} s")
    print(f"written: {paths[stem + '.md']} (+ {len(paths) - 1} files)")
    return 0


class _ZooHelpParser(OneLineArgumentParser):
    """The ``analyze`` parser: its help lists the zoo's names, loaded only when help is shown
    (the zoo imports numpy; parsing must stay fast)."""

    def format_help(self):
        from .zoo import ZOO

        self.epilog = ("zoo names: " + ", ".join(ZOO) + ". FILE.py:OBJECT executes the file "
                       "(as python would); MODULE:OBJECT imports an installed module or one of "
                       "the current folder (searched after the installed packages).")
        return super().format_help()


def register_analyze(subparsers):
    p = subparsers.add_parser("analyze", help="analyse a transform (sia_theory.analyze)",
                              description="Analyse a transform under Gaussian base logits.")
    p.__class__ = _ZooHelpParser
    p.add_argument("target", metavar="TARGET", nargs="?",
                   help="MODULE:OBJECT, FILE.py:OBJECT (runs the file) or zoo:NAME (e.g. "
                        "zoo:logn; the names are listed below); OBJECT is a Transform or a "
                        "function score_mod(score, b, h, q_idx, kv_idx)")
    p.add_argument("--n-ctx", type=int_range(2**8), default=2**20,
                   help="context length for context-dependent transforms (default 2^20)")
    p.add_argument("--out", type=output_dir, default="analysis", help="output folder")
    p.add_argument("--quick", action="store_true", help="seconds-long settings")
    p.add_argument("--seed", type=seed, default=0, help="Monte Carlo seed")
    p.add_argument("--no-zoo", action="store_true", help="skip the side-by-side zoo table")
    p.add_argument("--head", type=int_range(0), default=None,
                   help="the head to analyse, for a transform with its own coefficients on each "
                        "head (e.g. ALiBi.standard(8))")
    p.add_argument("--hf-config", default=None, metavar="CONFIG_JSON",
                   help="analyse the scheme of a Hugging Face config.json instead of a TARGET")
    p.set_defaults(handler=_analyze)


# --- bench --------------------------------------------------------------------------------

def _bench(args) -> int:
    _, benchmarks, _ = script_folders()
    scripts = _select(_scripts(benchmarks, "bench_*.py", "bench_"), args.only,
                      "benchmark")
    return _run_scripts(scripts, ["--quick"] if args.quick else [])


def register_bench(subparsers):
    p = subparsers.add_parser("bench", help="run benchmarks/bench_*.py",
                              description="Run the benchmarks (each prints its ratios).")
    p.add_argument("--quick", action="store_true", help="small sizes")
    p.add_argument("--only", nargs="+", metavar="NAME", help="benchmark names, e.g. cas")
    p.set_defaults(handler=_bench)


SUBCOMMANDS = (register_figures, register_check, register_analyze, register_bench)
"""The ``register(subparsers)`` functions of this module's subcommands."""


def build_parser() -> OneLineArgumentParser:
    """The ``sia-theory`` argument parser with every subcommand."""
    parser = OneLineArgumentParser(prog="sia-theory", description="Executable theory of "
                                   "long-context attention scaling: regenerate the figures, "
                                   "check the claims, analyse a transform, run the benchmarks.")
    from . import __version__

    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for register in SUBCOMMANDS:
        register(sub)
    for module in EXTRA_SUBCOMMAND_MODULES:
        importlib.import_module(module).register(sub)
    return parser


def main(argv=None) -> int:
    """Run the ``sia-theory`` command with ``argv`` (default: ``sys.argv[1:]``); returns the exit
    status (2 for bad input, with one line on stderr)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except ValueError as err:  # CommandError and the library's bad-input errors
        print(f"sia-theory {args.command}: error: {' '.join(str(err).split())}",
              file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
