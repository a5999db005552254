"""``sia-theory train``: train schemes into a resumable store (cells of the sweep engine).

    sia-theory train --scheme si-p-rope [--quick] [--seed S ...] [--tau T ...] [--out DIR]
    sia-theory train --scheme rope p-rope si-p-rope --seed 0 1 2 --scheduler tcp://host:8786
    sia-theory train --scheme mymodule:MyRule@p-rope --quick

Every ``--scheme`` (a name of :data:`~sia_theory.training.SCHEMES`, or a transform
``MODULE:OBJECT``/``FILE.py:OBJECT``/``zoo:NAME`` with an optional ``@position``) × ``--seed``
(× ``--tau`` for schemes with a τ) is one cell of the ``train-grid`` study, stored in ``--out``
(default ``training``): an interrupted command resumes, a larger grid extends the store. One
cell runs in this process; several run on ``--scheduler`` (default: ``$SIA_DASK_SCHEDULER`` or a
local Dask cluster of ``--workers`` processes). Prints the validation losses at ``L``, ``4L``,
``16L`` and writes them to ``DIR/validation.csv``. Bad input (an unknown scheme, a τ out of
range, a store of other settings, data too short for the training length, JAX missing) is one
line on stderr and exit status 2, with nothing written. JAX is imported only to train.
"""

from __future__ import annotations

import sys
import time

from .._infra.cli import OneLineArgumentParser, output_dir, positive_float, positive_int, seed

__all__ = ["register", "main"]


def _handler(args) -> int:
    from ..sweeps.engine import SweepError

    prog = "sia-theory train"
    start = time.perf_counter()
    try:
        from ..training.schemes import resolve_scheme
        from ..training.settings import TrainSettings
        from .base import Execution
        from .train_grid import TrainGridSettings

        taus = tuple(args.tau) if args.tau else (None,)
        if args.tau and not any(resolve_scheme(s).takes_tau for s in args.scheme):
            raise ValueError(f"tau: none of the schemes {', '.join(args.scheme)} has a τ")
        train = TrainSettings.quick() if args.quick else TrainSettings.full()
        settings = TrainGridSettings.grid(args.scheme, tuple(args.seed), taus, train)
        scheduler = args.scheduler or (None if len(settings.runs) > 1 else "sync")
        execution = Execution(scheduler=scheduler, store=args.out, force=args.force,
                              progress=not args.no_progress, n_workers=args.workers)
        from ..training._jax import require

        require()  # ImportError naming the extra, before the store is touched
        from .train_grid import train_grid

        result = train_grid(settings, seed=0, execution=execution)
    except (ValueError, ImportError) as err:
        print(f"{prog}: error: {' '.join(str(err).split())}", file=sys.stderr)
        return 2
    except SweepError as err:
        print(f"{prog}: {' '.join(str(err).split())} (recorded in {args.out}/errors)",
              file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{prog}: interrupted; finished runs are in {args.out}, run again to resume",
              file=sys.stderr)
        return 130
    from .._infra.io import write_csv

    table = result["validation"]
    table = table.assign(tau=[("-" if t is None or t != t else f"{t:g}") for t in table["tau"]])
    wide = table.pivot_table(index=["scheme", "seed", "tau"], columns="multiple",
                             values="loss", sort=False).reset_index()
    wide.columns = [c if isinstance(c, str) else f"loss_{c}L" for c in wide.columns]
    write_csv(args.out / "validation.csv", wide)
    print(wide.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    print(f"{prog}: {len(settings.runs)} runs in {time.perf_counter() - start:.1f} s; store "
          f"{args.out}")
    return 0


def register(subparsers):
    """Add ``train`` to the ``sia-theory`` subparsers."""
    from .command import scheduler_arg

    p = subparsers.add_parser("train", help="train schemes (JAX) into a resumable store",
                              description="Train small decoders with attention schemes (SI "
                                          "§5 in miniature) as cells of the sweep engine.")
    p.add_argument("--scheme", nargs="+", required=True, metavar="NAME",
                   help="scheme names (rope, p-rope, nope, alibi, logn-p-rope, rope-ntk, "
                        "si-p-rope, si-rope, si-nope) or MODULE:OBJECT[@position]")
    p.add_argument("--seed", type=seed, nargs="+", default=[0], metavar="S",
                   help="run seeds (default 0)")
    p.add_argument("--tau", type=positive_float, nargs="+", default=None, metavar="T",
                   help="τ for schemes that have one (default: theirs, 10 for si-*)")
    p.add_argument("--quick", action="store_true", help="seconds-long settings (smoke test)")
    p.add_argument("--out", type=output_dir, default="training",
                   help="store folder (default: training)")
    p.add_argument("--scheduler", type=scheduler_arg, default=None,
                   help="dask address, 'sync' or 'threads' (default: this process for one "
                        "run, else $SIA_DASK_SCHEDULER or a local cluster)")
    p.add_argument("--workers", type=positive_int, default=None,
                   help="processes of the local cluster (default: CPU count)")
    p.add_argument("--force", action="store_true", help="train stored runs again")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(handler=_handler)
    return p


def main(argv=None) -> int:
    """Run ``sia-theory train`` alone: ``argv`` (default ``sys.argv[1:]``) as its arguments;
    returns the exit status."""
    parser = OneLineArgumentParser(prog="sia-theory", description="sia-theory train")
    register(parser.add_subparsers(dest="command", required=True,
                                   parser_class=OneLineArgumentParser))
    args = parser.parse_args(["train", *(sys.argv[1:] if argv is None else argv)])
    return args.handler(args)


if __name__ == "__main__":
    sys.exit(main())
