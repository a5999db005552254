"""``sia-theory analyze TARGET [--n-ctx N] [--out DIR] [--quick] [--seed S] [--no-zoo] [--head H]
[--no-progress]``: :func:`sia_theory.analyze` on a transform named ``MODULE:OBJECT`` (a module on
the path), ``FILE.py:OBJECT`` (a file) or ``zoo:NAME`` (a :data:`~sia_theory.zoo.ZOO` member);
the object is a Transform instance, a Transform class that takes no arguments, or a plain
function with FlexAttention's ``score_mod(score, b, h, q_idx, kv_idx)`` signature (numpy), whose
affine coefficients are probed (refused if it is not affine in the score). The target is loaded
before any computation or output. ``analyze --hf-config config.json`` gives the theory's verdict
on the scheme a model's config ships (:func:`sia_theory.analysis.hf.hf_report`): the line and its
assumptions printed, the report written into ``--out``, ``--n-ctx`` honoured and ``--head``
refused. ``analyze --model PATH [--text FILE]`` measures a checkpoint's own attention on real text
(:func:`sia_theory.analysis.model.model_report`): the verdict line of each kind of layer and
what was run printed, the figure, tables and Markdown report written into ``--out``; ``--n-ctx``
is the context (default 2048), ``--text`` a UTF-8 file read instead of the default prose, and
``--head`` refused (every head is reported)."""

from __future__ import annotations

import re

from .._infra.cli import OneLineArgumentParser, add_no_progress, int_range, output_dir, seed
from ..schemes.targets import load_transform
from .errors import CommandError

__all__ = ["register"]


MODEL_N_CTX = 2048
"""The context ``analyze --model`` runs at without ``--n-ctx``."""


def _read_text(path: str) -> str:
    """The text of ``--text``, or a :class:`CommandError` naming the file."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        raise CommandError(f"--text: no such file {path!r}") from None
    except IsADirectoryError:
        raise CommandError(f"--text: {path!r} is a folder, not a text file") from None
    except UnicodeDecodeError as err:
        raise CommandError(f"--text: {path!r} is not UTF-8 text ({err.reason} at byte "
                           f"{err.start})") from None
    except OSError as err:
        raise CommandError(f"--text: cannot read {path!r} ({err.strerror or err})") from None
    if not text.strip():
        raise CommandError(f"--text: {path!r} holds no text")
    return text


def _model_handler(args) -> int:
    """``analyze --model``: the model report."""
    if args.head is not None:
        raise CommandError("--head selects a head of a TARGET with its own coefficients per "
                           "head; --model reports every head of every layer")
    text = None if args.text is None else _read_text(args.text)  # before any computation
    from ..analysis.model import model_report  # the analysis layer: not for --help

    n_ctx = MODEL_N_CTX if args.n_ctx is None else args.n_ctx
    report = model_report(args.model, n_ctx, text=text, quick=args.quick, seed=args.seed)
    stem = "model_report_" + re.sub(r"[^A-Za-z0-9_.-]+", "_", report.name or "model")
    paths = report.write(args.out, stem)
    for line in report.verdicts:
        print(line)
    for note in report.notes:
        print(f"note: {note}")
    print(f"written: {paths[stem + '.md']} (+ {len(paths) - 1} files); "
          f"{report.info['seconds']:.1f} s")
    return 0


def _handler(args) -> int:
    given = [args.target is not None, args.hf_config is not None, args.model is not None]
    if sum(given) != 1:
        raise CommandError("give a TARGET, --hf-config or --model, one of them")
    if args.text is not None and args.model is None:
        raise CommandError("--text is the text a --model reads: give --model")
    if args.model is not None:
        return _model_handler(args)
    if args.hf_config is not None:  # the scheme a model config ships
        if args.head is not None:
            raise CommandError("--head selects a head of a TARGET with its own coefficients "
                               "per head; a config's scheme is the same on every head")
        from ..analysis.hf import hf_report  # the analysis layer: not for --help

        # --n-ctx: the analysis's context and the octaves out to it (else hf_report's defaults)
        given = {} if args.n_ctx is None else {"n_ctx": args.n_ctx, "n_max": args.n_ctx}
        report = hf_report(args.hf_config, quick=args.quick, seed=args.seed, **given)
        stem = "hf_" + re.sub(r"[^A-Za-z0-9_.-]+", "_", report.scheme.name or "config")
        paths = report.write(args.out, stem)
        print(report.line())
        print("assumptions: " + "; ".join(report.assumptions()))
        print(f"written: {paths[stem + '.md']} (+ {len(paths) - 1} files)")
        return 0
    transform, name = load_transform(args.target)  # before any computation or output
    from ..analysis import analyze  # the analysis layer loads numba and scipy: not for --help

    if args.head is not None:
        name = f"{name}_head{args.head}"
    given = {} if args.n_ctx is None else {"n_ctx": args.n_ctx}  # else analyze()'s default
    report = analyze(transform, **given, seed=args.seed, quick=args.quick,
                     zoo=not args.no_zoo, name=name, head=args.head)
    stem = "analysis_" + re.sub(r"[^A-Za-z0-9_.-]+", "_", name)
    paths = report.write(args.out, stem)
    limit = report.total_attention_limit
    print(f"{name}: entropy law {report.evidence.describe()}; total attention per octave "
          + (f"→ {limit:.6g}" if limit is not None else report.study.total_attention[0])
          + f"; phase {report.phase} (σ/√(2 log M) = {report.summary.iloc[0]['ratio']:.3f}); "
          f"{report.seconds:.1f} s")
    print(f"written: {paths[stem + '.md']} (+ {len(paths) - 1} files)")
    return 0


class _ZooHelpParser(OneLineArgumentParser):
    """The ``analyze`` parser: its help lists the zoo's names, loaded only when help is shown
    (the zoo imports numpy; parsing must stay fast)."""

    def format_help(self):
        from ..zoo import ZOO  # only for --help: parsing must not load numpy

        self.epilog = ("zoo names: " + ", ".join(ZOO) + ". FILE.py:OBJECT executes the file "
                       "(as python would); MODULE:OBJECT imports an installed module or one of "
                       "the current folder (searched after the installed packages).")
        return super().format_help()


def register(subparsers):
    """Add ``analyze`` to the ``sia-theory`` subparsers."""
    p = subparsers.add_parser("analyze", help="analyse a transform (sia_theory.analyze), a "
                                              "model config or a model's own attention",
                              description="Analyse a transform under Gaussian base logits, the "
                                          "scheme a model config ships (--hf-config) or a "
                                          "model's own attention on real text (--model).")
    p.__class__ = _ZooHelpParser
    p.add_argument("target", metavar="TARGET", nargs="?",
                   help="MODULE:OBJECT, FILE.py:OBJECT (runs the file) or zoo:NAME (e.g. "
                        "zoo:logn; the names are listed below); OBJECT is a Transform or a "
                        "function score_mod(score, b, h, q_idx, kv_idx)")
    p.add_argument("--n-ctx", type=int_range(2**8), default=None,
                   help="context length M for transforms that depend on it (default 2^20; "
                        "with --hf-config also the last context of the octave table, default "
                        "1e6; with --model the tokens the model reads, default 2048)")
    p.add_argument("--out", type=output_dir, default="analysis",
                   help="folder for the report (Markdown, CSV, figure; default ./analysis)")
    p.add_argument("--quick", action="store_true",
                   help="seconds-long settings (fewer samples and contexts; wider intervals)")
    p.add_argument("--seed", type=seed, default=0,
                   help="the Monte Carlo seed (default 0; with --model also the bootstrap's)")
    add_no_progress(p)
    p.add_argument("--no-zoo", action="store_true",
                   help="skip the side-by-side table of the zoo's schemes")
    p.add_argument("--head", type=int_range(0), default=None,
                   help="the head to analyse, for a transform with its own coefficients on each "
                        "head (e.g. ALiBi.standard(8)); refused with --hf-config and --model")
    p.add_argument("--hf-config", default=None, metavar="CONFIG_JSON",
                   help="analyse the scheme a Hugging Face config.json ships (its RoPE scaling "
                        "and query temperature, sia_theory.from_hf_config) instead of a TARGET: "
                        "the verdict, its assumptions and the octave table, written into --out")
    p.add_argument("--model", default=None, metavar="PATH",
                   help="measure a checkpoint's own attention instead of a TARGET: a registry "
                        "name (smollm2-135m), a Hugging Face folder or a GGUF file, run on "
                        "--n-ctx tokens of real text; each head's REM and gap-counting phase "
                        "and entropy law, the Gaussian theory's prediction and the config's "
                        "scaling, written into --out")
    p.add_argument("--text", default=None, metavar="FILE",
                   help="with --model: a UTF-8 text file to read (tokenised with the model's "
                        "tokenizer) instead of the default prose (the standard library's "
                        "pydoc topics)")
    p.set_defaults(handler=_handler)
    return p
