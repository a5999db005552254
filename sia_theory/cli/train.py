"""``sia-theory train``: train schemes into a resumable store (cells of the sweep engine).

    sia-theory train --scheme si-p-rope [--quick] [--seed S ...] [--tau T ...] [--out DIR]
    sia-theory train --scheme rope p-rope si-p-rope --seed 0 1 2 --scheduler tcp://host:8786
    sia-theory train --scheme mymodule:MyRule@p-rope --quick
    sia-theory train --scheme p-rope si-p-rope --corpus build/corpus/registry

Every ``--scheme`` (a name of :data:`~sia_theory.schemes.SCHEMES`, or a transform
``MODULE:OBJECT``/``FILE.py:OBJECT``/``zoo:NAME`` with an optional ``@position``) × ``--seed``
(× ``--tau`` for schemes with a τ) is one cell of the ``train_grid`` study, stored in ``--out``
(default ``training``): an interrupted command resumes, a larger grid extends the store. One
cell runs in this process; several run on ``--scheduler`` (default: ``$SIA_DASK_SCHEDULER`` or a
local Dask cluster of ``--workers`` processes). Prints the validation losses at ``L``, ``4L``,
``16L``; the study writes them to ``DIR/validation.csv``. ``--corpus`` trains on a shard
folder (``sia-theory corpus build``) instead of the built-in corpus; given text (a ``.txt``,
``.jsonl`` or Parquet file or a folder of them) it is tokenized first into the cache folder
``DIR-corpus`` beside the store (reused while the text is unchanged), with the settings' BPE
size. Each scheme is resolved once (a user's
file is executed once) and checked before anything is written: bad input (an unknown scheme, a
transform that raises, is not finite in float32 or cannot train, a τ out of range, a store of
other settings, data too short for the training length, JAX missing) is one line on stderr and
exit status 2, with nothing written. JAX is imported only to train.
"""

from __future__ import annotations

import time
from pathlib import Path

from .._infra.cli import output_dir, positive_float, seed
from .._infra.io import write_csv
from .errors import MissingExtra
from .sweep import add_execution_flags

__all__ = ["register"]


def _settings(args):
    """The grid's settings, every scheme resolved and checked once (nothing written)."""
    # imported here: the trainer's package and the studies load pandas, start-up that --help
    # must not pay (the schemes are loaded with the parser already, see register)
    from ..schemes import resolve_scheme
    from ..studies.train_grid import TrainGridSettings
    from ..training.schemes import check_trainable
    from ..training.settings import TrainSettings

    schemes = [resolve_scheme(s) for s in args.scheme]  # each user file executed once
    if args.tau and not any(s.takes_tau for s in schemes):
        raise ValueError(f"tau: none of the schemes {', '.join(args.scheme)} has a τ")
    train = TrainSettings.quick() if args.quick else TrainSettings.full()
    if args.corpus is not None:
        train = train.with_corpus(_shard_folder(args, train.vocab_size))
    for scheme in schemes:
        check_trainable(scheme, train)
    taus = tuple(args.tau) if args.tau else (None,)
    return TrainGridSettings.grid(schemes, tuple(args.seed), taus, train)


def _shard_folder(args, vocab_size: int) -> str:
    """``--corpus`` as a shard folder: itself, or the cache folder its text is tokenized into
    (``ValueError`` naming ``corpus`` for a path that is neither, before anything is
    written)."""
    from ..training.shards import TEXT_SUFFIXES, build_shards, is_shard_folder

    path = args.corpus
    if is_shard_folder(path):
        return str(path)
    if not (path.is_dir() or (path.is_file() and path.suffix.lower() in TEXT_SUFFIXES)):
        raise ValueError(f"corpus must be a shard folder (sia-theory corpus build), or text: a "
                         f"{', '.join(TEXT_SUFFIXES)} file or a folder of them; got "
                         f"{str(path)!r}")
    cache = args.out.parent / f"{args.out.name}-corpus"
    try:
        build_shards(path, cache, vocab_size=vocab_size)
    except ValueError as err:
        raise ValueError(f"corpus: {err}") from None
    return str(cache)


def _handler(args) -> int:
    # the studies load pandas, the trainer JAX: only once the command runs, not for --help
    # start-up, as in _settings: pandas, the sweep engine and (require) JAX load only to train
    from ..studies.base import Execution
    from ..studies.train_grid import VALIDATION_FILE, train_grid
    from ..training._jax import require

    start = time.perf_counter()
    args.store = args.out
    settings = _settings(args)
    try:
        require()  # before the store is touched
    except ImportError as err:
        raise MissingExtra(str(err)) from None
    scheduler = args.scheduler or (None if len(settings.runs) > 1 else "sync")
    execution = Execution(scheduler=scheduler, store=args.out, force=args.force,
                          progress=not args.no_progress, n_workers=args.workers)
    result = train_grid(settings, seed=0, execution=execution)
    wide = result.frames["table"]
    write_csv(args.out / VALIDATION_FILE, wide)
    print(wide.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    print(f"sia-theory train: {len(settings.runs)} runs in {time.perf_counter() - start:.1f} s; "
          f"store {args.out}")
    return 0


def register(subparsers):
    """Add ``train`` to the ``sia-theory`` subparsers."""
    p = subparsers.add_parser("train", help="train schemes (JAX) into a resumable store",
                              description="Train small decoders with attention schemes (SI "
                                          "§5 in miniature) as cells of the sweep engine.")
    # the registry is loaded already when the parser is built (cli.analyze imports
    # sia_theory.schemes), so its names cost the start-up nothing more
    from ..schemes import scheme_names

    p.add_argument("--scheme", nargs="+", required=True, metavar="NAME",
                   help=f"scheme names ({', '.join(scheme_names())}) or a transform "
                        "MODULE:OBJECT[@position]")
    p.add_argument("--seed", type=seed, nargs="+", default=[0], metavar="S",
                   help="run seeds: each seeds one model's initialisation (default 0)")
    p.add_argument("--tau", type=positive_float, nargs="+", default=None, metavar="T",
                   help="τ of SI eq. 16 for schemes that have one (default: theirs, 10 for si-*)")
    p.add_argument("--quick", action="store_true",
                   help="the seconds-long training settings (a smoke test)")
    p.add_argument("--out", type=output_dir, default="training",
                   help="store folder (default: training)")
    p.add_argument("--corpus", type=Path, default=None, metavar="PATH",
                   help="train on a shard folder (sia-theory corpus build) instead of the "
                        "built-in corpus; text (.txt/.jsonl/Parquet, or a folder of them) is "
                        "tokenized first into OUT-corpus beside the store")
    add_execution_flags(p, "this process for one run, else $SIA_DASK_SCHEDULER or a local "
                           "cluster", "train stored runs again")
    p.set_defaults(handler=_handler)
    return p
