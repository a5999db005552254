"""``sia-theory sweep``: run a study's grid on Dask (local by default) into a resumable store.

    sia-theory sweep phase-diagram --n 10000 --d 512 --grid 80 --store DIR --seed 0
    sia-theory sweep jacobian --n 2000 --d 16 64 256 1024 --draws 16 --store DIR
    sia-theory sweep entropy-scaling --tau 10 --t-max 100000 --samples 65536 --store DIR

Each subcommand calls the study function itself (:func:`sia_theory.studies.cas_fig1_phase_diagram.phase_diagram`,
:func:`sia_theory.studies.cas_fig2_jacobian.jacobian_sweep`,
:func:`sia_theory.studies.si_entropy_scaling.entropy_scaling_study`) with ``scheduler`` and ``store``, so the
numbers are those of the figures and claims for the same settings. ``--scheduler`` takes a dask
address (``tcp://host:8786``), ``sync`` or ``threads``; unset, ``SIA_DASK_SCHEDULER`` or an
embedded LocalCluster. Re-running resumes from the store; ``--force`` recomputes. Bad input
(including a scheduler that does not answer) is one line on stderr and exit status 2, with
nothing written. ``register(subparsers)`` adds the subcommand to the ``sia-theory`` parser;
``python -m sia_theory.sweeps.command ...`` runs it on its own.
"""

from __future__ import annotations

import argparse
import sys
import time
from functools import partial

from .._infra.cli import (
    OneLineArgumentParser,
    int_range,
    output_dir,
    positive_float,
    positive_int,
    seed,
)

__all__ = ["register", "main", "scheduler_arg"]


def scheduler_arg(text: str) -> str:
    """argparse type: ``sync``, ``threads`` or a dask address ``scheme://host:port``."""
    if text in ("sync", "threads") or ("://" in text and text.split("://", 1)[1]):
        return text
    raise argparse.ArgumentTypeError(f"expected 'sync', 'threads' or a dask address such as "
                                     f"tcp://host:8786, got {text!r}")


def _common(parser, name):
    parser.add_argument("--store", type=output_dir, default=f"sweeps/{name}",
                        help=f"store folder (default: sweeps/{name})")
    parser.add_argument("--seed", type=seed, default=0, help="sweep seed (default 0)")
    parser.add_argument("--scheduler", type=scheduler_arg, default=None,
                        help="dask address, 'sync' or 'threads' (default: $SIA_DASK_SCHEDULER "
                             "or a local cluster)")
    parser.add_argument("--workers", type=positive_int, default=None,
                        help="workers of the local cluster (default: CPU count)")
    parser.add_argument("--force", action="store_true", help="recompute stored cells")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def _phase_diagram(args):
    from ..studies.cas_fig1_phase_diagram import PhaseDiagramSettings, phase_diagram

    settings = PhaseDiagramSettings(n=args.n, size=args.grid, dims=tuple(args.d),
                                    gamma_max=args.gamma_max, rho=args.rho,
                                    transition_draws=args.transition_draws)
    data = phase_diagram(settings, **_run_kwargs(args))
    return {part: len(frame) for part, frame in data.items()}


def _jacobian(args):
    import numpy as np

    from ..studies.cas_fig2_jacobian import JacobianSweepSettings, jacobian_sweep

    gammas = tuple(np.round(np.linspace(0.0, args.gamma_max, args.points), 12))
    settings = JacobianSweepSettings(n=args.n, rho=args.rho, dims=tuple(args.d), gammas=gammas,
                                     draws=args.draws)
    data = jacobian_sweep(settings, **_run_kwargs(args))
    return {"eta": len(data["eta"])}


def _entropy_scaling(args):
    from ..studies.si_entropy_scaling import EntropyScalingSettings, entropy_scaling_study
    from ..transforms import NoScale, ScaleInvariant

    transform = NoScale() if args.tau is None else ScaleInvariant(args.tau)
    t_max = args.t_max
    windows = tuple((lo, min(10 * lo, t_max)) for lo in (100, 1_000, 10_000, 100_000)
                    if 10 * lo <= t_max)
    settings = EntropyScalingSettings(transform=transform, t_max=t_max, n_t=args.n_t,
                                      samples=args.samples, windows=windows or ((10, t_max),))
    kwargs = _run_kwargs(args)
    result = entropy_scaling_study(settings, kwargs.pop("seed"), **kwargs)
    return {"table": len(result.table)}


def _run_kwargs(args) -> dict:
    return {"seed": args.seed, "scheduler": args.scheduler or None, "store": args.store,
            "force": args.force, "progress": not args.no_progress,
            **({"n_workers": args.workers} if args.workers else {})}


def register(subparsers) -> argparse.ArgumentParser:
    """Add ``sweep`` (with its ``phase-diagram``, ``jacobian`` and ``entropy-scaling``
    subcommands) to ``subparsers``; the parsed namespace's ``handler(args)`` (alias ``func``)
    runs it and returns the exit status."""
    sweep = subparsers.add_parser("sweep", help="run a study's grid on Dask into a store",
                                  description="Run a study's grid on Dask (a local cluster by "
                                              "default) into a resumable Parquet store.")
    kinds = sweep.add_subparsers(dest="study", required=True, metavar="STUDY",
                                 parser_class=OneLineArgumentParser)
    p = kinds.add_parser("phase-diagram", help="CAS Fig. 1 and its transitions")
    p.add_argument("--n", type=int_range(3), default=1000, help="tokens (default 1000)")
    p.add_argument("--d", type=positive_int, nargs="+", default=[512, 32, 2],
                   help="dimensions (default 512 32 2)")
    p.add_argument("--grid", type=int_range(2), default=40, help="grid size (default 40)")
    p.add_argument("--gamma-max", type=positive_float, default=10.0)
    p.add_argument("--rho", type=float, default=0.5)
    p.add_argument("--transition-draws", type=positive_int, default=6)
    _common(p, "phase-diagram")
    run = partial(_run, job=_phase_diagram)
    p.set_defaults(func=run, handler=run)
    p = kinds.add_parser("jacobian", help="CAS Fig. 2: eta against gamma")
    p.add_argument("--n", type=int_range(3), default=1000)
    p.add_argument("--d", type=positive_int, nargs="+", default=[16, 64, 256])
    p.add_argument("--draws", type=positive_int, default=8)
    p.add_argument("--gamma-max", type=positive_float, default=8.0)
    p.add_argument("--points", type=int_range(2), default=25)
    p.add_argument("--rho", type=float, default=0.5)
    _common(p, "jacobian")
    run = partial(_run, job=_jacobian)
    p.set_defaults(func=run, handler=run)
    p = kinds.add_parser("entropy-scaling", help="SI Fig. 2 / 6: entropy in range against t")
    p.add_argument("--tau", type=positive_float, default=10.0,
                   help="scale-invariant transform's tau (default 10)")
    p.add_argument("--no-transform", dest="tau", action="store_const", const=None,
                   help="no transform (SI Fig. 6)")
    p.add_argument("--t-max", type=int_range(100), default=10**5)
    p.add_argument("--n-t", type=int_range(3), default=41)
    p.add_argument("--samples", type=int_range(2), default=16384)
    _common(p, "entropy-scaling")
    run = partial(_run, job=_entropy_scaling)
    p.set_defaults(func=run, handler=run)
    return sweep


def _run(args, job) -> int:
    from .engine import SweepError

    prog = f"sia-theory sweep {args.study}"
    start = time.perf_counter()
    try:
        rows = job(args)
    except ValueError as err:
        print(f"{prog}: error: {' '.join(str(err).split())}", file=sys.stderr)
        return 2
    except SweepError as err:
        print(f"{prog}: {' '.join(str(err).split())} (recorded in {args.store}/errors)",
              file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{prog}: interrupted; finished cells are in {args.store}, run again to resume",
              file=sys.stderr)
        return 130
    summary = ", ".join(f"{k} {v} rows" for k, v in rows.items())
    print(f"{prog}: done in {time.perf_counter() - start:.1f} s ({summary}); store "
          f"{args.store}")
    return 0


def main(argv=None) -> int:
    parser = OneLineArgumentParser(prog="sia-theory", description="sia-theory sweeps")
    register(parser.add_subparsers(dest="command", required=True,
                                   parser_class=OneLineArgumentParser))
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main(["sweep", *sys.argv[1:]]))
