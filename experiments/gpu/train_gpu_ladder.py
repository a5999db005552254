"""The deciding grid at a model-size ladder on one GPU: does SI + p-RoPE's needle retention at
16L rise toward SI's ~1.0 as the model gets larger, or stay near 0.5 (docs/training.md, "The
model ladder on one GPU")?

**Sizes** (:data:`SIZES`; every head 64 wide, so only depth and width change; counted by
:func:`sia_theory.training.params.parameter_count` with the 2048-token BPE, printed at the
start): ``small`` 4 layers × 128, 2 heads (1.31 M parameters, the CPU grid's and the committed
GPU grid's model); ``medium`` 8 layers × 320, 5 heads (11.1 M); ``large`` 12 layers × 512,
8 heads (39.8 M). A token-shard corpus (``--corpus DIR``) brings its own vocabulary, which
changes the embedding's share of the counts.

**Protocol** at every size: the committed GPU grid's (``TrainSettings(batch_size=64,
steps=400, eval_every=100)``: 6.55 M tokens; needle fine-tuning 300 steps × 64 prompts after
100 warm-up steps, 32 prompts of three needles per length), so the small size repeats the
committed ``figures/train_gpu_grid`` numbers and the larger ones differ in size only.

**What is run, in order** (phases, each seed-major over the sizes, so that a call stopped by its
budget holds whole seeds of the most important phase): ``question``: SI + p-RoPE (τ = 10)
pretrained and needle-tuned, seeds 0, 1, 2; ``needle``: p-RoPE, LogN + p-RoPE and NoPE
pretrained and needle-tuned (with ``question``, TRAIN-6's decision); ``grid``: the rest of
:func:`sia_theory.studies.train_grid.figure_grid` (the Table 1 rows with the learned LogN,
SI + RoPE / NoPE, the τ sweep; TRAIN-1 … 4).

**Budget** (an estimate from the committed GPU timings, not a measurement of this script): the
committed GPU grid measured 2.3 s per 400-step pretraining of the small model (6.55 M tokens,
evaluation at L, 4L, 16L included) and 2.2 s per needle fine-tuning (4.9 M tokens). Scaling
by parameters × tokens (the ``6 N D`` FLOP count; the small model under-fills an H200, so the
estimate is pessimistic for it and roughly right for the large one): pretraining 2.3 / 19.6 /
70 s and fine-tuning 2.2 / 18.7 / 67 s for small / medium / large, so one scheme and seed with
its needles costs 4.5 + 38 + 137 ≈ 180 s across the ladder. Ten minutes (600 s) less compiling
(about 15 s per size on a fresh machine without the persistent cache) and start-up (about
15 s) leave about 540 s: the ``question`` phase, 3 seeds × 180 s. The ``needle`` phase costs
another 3 × 180 s per seed, the ``grid`` phase 10 pretrainings × 2.3 × 39.9 ≈ 920 s per
seed: the whole deciding grid at 3 seeds is about 4,900 s, nine calls of ten minutes
(``--phases``, ``--seeds`` and ``--sizes`` split it; the collector joins the folders).
``--budget-seconds`` is a deadline: no run starts that its estimate (the last measured rate
at that size, else the rate of the size below scaled by parameters, else the estimate above)
says would end after it, and every file is replaced whole after each finished run, so a
stopped call leaves what finished, never a half-written file.

Outputs in ``--out``: ``seed<k>/validation.csv`` (``size, scheme, seed, tau, step, length,
multiple, kind, loss``: every checkpoint), ``seed<k>/needles.csv`` (one row per evaluated
needle, with its ``depth`` in the prompt), ``seed<k>/runs.csv`` (parameters, tokens, seconds,
the training environments of the pretrained and the fine-tuned run as JSON),
``manifest.json`` (sizes with their parameter counts, settings, the plan, the distinct training
environments, what finished) and ``log.txt``. ``experiments/gpu/train_gpu_ladder_collect.py``
decides the claims per size and answers the question.

    python experiments/gpu/train_gpu_ladder.py --corpus SHARDS --out OUT --budget-seconds 570

``--smallest-only --quick`` rehearses the whole pipeline on a CPU in seconds (tiny settings).
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from pathlib import Path

from train_gpu_probe import Log

from sia_theory.toolkit import OneLineArgumentParser

SIZES = {"small": (4, 128, 2), "medium": (8, 320, 5), "large": (12, 512, 8)}
"""``(n_layers, d_model, n_heads)`` of each rung of the ladder, smallest first."""
QUICK_SIZES = {"small": (2, 32, 2), "medium": (2, 48, 3), "large": (3, 64, 4)}
"""The shapes under ``--quick`` (CPU rehearsal)."""
QUESTION = ("si-p-rope",)
NEEDLE = ("p-rope", "logn-p-rope", "nope")
"""With :data:`QUESTION`, SI Table 2's schemes (TRAIN-6)."""
PHASES = ("question", "needle", "grid")
SEEDS = (0, 1, 2)
MEASURED = {"pretrain": 2.3, "tune": 2.2, "parameters": 1_310_720, "tokens": 64 * 256 * 400,
            "tune_tokens": 300 * 64 * 257}
"""The committed GPU grid's timings of the small model (seconds, median over its 70 runs)."""


def ladder_settings(size: str, corpus=None, quick: bool = False):
    """``(TrainSettings, NeedleTuneSettings)`` of one rung; ``corpus`` (a token-shard folder)
    set only when given (``TrainSettings.with_corpus``, which takes the folder's
    vocabulary)."""
    from sia_theory.training.needle import NeedleTuneSettings
    from sia_theory.training.settings import TrainSettings

    layers, width, heads = (QUICK_SIZES if quick else SIZES)[size]
    if quick:
        train = dataclasses.replace(TrainSettings.quick(), train_length=256, steps=8,
                                    eval_every=4, n_layers=layers, d_model=width,
                                    n_heads=heads)
        needle = NeedleTuneSettings(steps=6, batch_size=4, warmup=2, cooldown=1 / 3,
                                    eval_examples=2)
    else:
        train = TrainSettings(batch_size=64, steps=400, eval_every=100, n_layers=layers,
                              d_model=width, n_heads=heads)
        needle = NeedleTuneSettings(steps=300, batch_size=64, warmup=100, cooldown=1 / 3,
                                    eval_examples=32)
    if corpus is not None:
        if not hasattr(train, "with_corpus"):
            raise SystemExit("--corpus needs TrainSettings(corpus=...), which this checkout "
                             "lacks; use --data (an export_tokenized folder)")
        train = train.with_corpus(corpus)
    return train, needle


def parameter_counts(sizes=tuple(SIZES), corpus=None, quick=False) -> dict:
    """``{size: parameters}`` by the project's own counting (of freshly initialised weights;
    LogN's learned scales add one number per layer)."""
    from sia_theory.training.params import init_parameters, parameter_count

    return {size: parameter_count(init_parameters(ladder_settings(size, corpus, quick)[0], 0))
            for size in sizes}


def plan(phases=PHASES, seeds=SEEDS, sizes=tuple(SIZES), quick=False) -> list:
    """``[(phase, size, scheme, seed, tau, needle)]`` in the order run (module docstring)."""
    from sia_theory.studies.train_grid import figure_grid

    grid = figure_grid(quick=quick, seeds=seeds, side_seeds=seeds)
    out = []
    for phase in PHASES:
        if phase not in phases:
            continue
        for seed in seeds:
            for size in sizes:
                if phase == "grid":
                    runs = [(s, t) for s, k, t in grid.runs if k == seed
                            and not (s in QUESTION + NEEDLE and t in (None, 10.0))]
                else:
                    runs = [(s, 10.0 if s.startswith("si-") else None)
                            for s in (QUESTION if phase == "question" else NEEDLE)]
                out += [(phase, size, s, seed, t, phase != "grid") for s, t in runs]
    return out


def tokens_of(settings) -> tuple:
    """``(pretraining tokens, fine-tuning tokens)`` of one rung's ``(TrainSettings,
    NeedleTuneSettings)``."""
    train_s, needle_s = settings
    return (train_s.steps * train_s.batch_size * train_s.train_length,
            needle_s.steps * needle_s.batch_size * (train_s.train_length + 1))


def estimate(size, needle, counts, rates, tokens) -> float:
    """Seconds one run of ``size`` should take (``tokens``: :func:`tokens_of` its settings):
    the last measured ``rates[size]`` (seconds per parameter-token of pretraining and of
    fine-tuning), else the nearest smaller measured size's, else :data:`MEASURED`'s, times
    parameters × tokens."""
    known = [s for s in rates if counts[s] <= counts[size]]
    if known:
        pre, tune = rates[max(known, key=lambda s: counts[s])]
    else:
        pre = MEASURED["pretrain"] / (MEASURED["parameters"] * MEASURED["tokens"])
        tune = MEASURED["tune"] / (MEASURED["parameters"] * MEASURED["tune_tokens"])
    return counts[size] * (pre * tokens[0] + (tune * tokens[1] if needle else 0.0))


def one_run(step, settings, out: Path, log, rows: dict) -> tuple:
    """Pretrain (and needle-tune) one planned run; add its rows to ``rows`` (per seed) and
    rewrite that seed's files whole. Returns ``(seconds of pretraining, of fine-tuning)``
    without compiling."""
    from sia_theory.training.needle import tune_and_evaluate
    from sia_theory.training.trainer import train

    phase, size, scheme, seed, tau, needle = step
    train_s, needle_s = settings[size]
    tag = {"size": size, "scheme": scheme, "seed": seed, "tau": "" if tau is None else tau}
    t0 = time.perf_counter()
    run = train(scheme, train_s, seed=seed, tau=tau)
    pretrain = time.perf_counter() - t0 - run.seconds["compile"]
    held = rows.setdefault(seed, {"validation": [], "needles": [], "runs": []})
    held["validation"] += [{**tag, **r} for r in run.checkpoint_frame().to_dict("records")]
    record = {**tag, "phase": phase, "parameters": run.parameter_count,
              "tokens": run.tokens_trained, "seconds_pretrain": pretrain,
              "seconds_compile": run.seconds["compile"], "seconds_tune": "",
              "seconds_evaluate_needles": "", "answer_loss_last": "",
              "environment_pretrain": json.dumps(run.environment, sort_keys=True),
              "environment_tune": ""}
    log(f"{size} {scheme} τ={tau} seed {seed}: {pretrain:.1f}s, validation "
        + ", ".join(f"{k}: {v:.3f}" for k, v in sorted(run.validation.items())))
    tune = 0.0
    if needle:
        needles, tuned, seconds = tune_and_evaluate(run, needle_s, seed=0)
        tune = seconds["tune"] + seconds["evaluate"] - tuned.seconds["compile"]
        held["needles"] += [{**tag, **r} for r in needles.to_dict("records")]
        tail = max(1, len(tuned.train_losses) // 10)
        record.update(seconds_tune=seconds["tune"], seconds_evaluate_needles=seconds["evaluate"],
                      answer_loss_last=float(tuned.train_losses[-tail:].mean()),
                      environment_tune=json.dumps(tuned.environment, sort_keys=True))
        by = needles.groupby("multiple")["correct"]
        log("  needles: " + ", ".join(f"{m}L {int(c.sum())}/{len(c)}" for m, c in by))
    held["runs"].append(record)
    write_seed(out, seed, held)
    return pretrain, tune


def write_seed(out: Path, seed: int, held: dict) -> None:
    """Replace the seed's CSV files whole (atomically: a stop leaves the old or the new)."""
    import pandas as pd

    from sia_theory._infra.io import write_csv

    for name, records in held.items():
        if records:
            write_csv(out / f"seed{seed}" / f"{name}.csv", pd.DataFrame(records))


def main(argv=None):
    parser = OneLineArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default=None, help="token-shard folder (its manifest.json)")
    parser.add_argument("--data", default=None,
                        help="instead of --corpus: a folder of export_tokenized's data")
    parser.add_argument("--out", default="build/train_gpu_ladder")
    parser.add_argument("--budget-seconds", type=float, default=570.0,
                        help="deadline: no run starts that would end after it")
    parser.add_argument("--phases", default=",".join(PHASES))
    parser.add_argument("--seeds", default=",".join(map(str, SEEDS)))
    parser.add_argument("--sizes", default=",".join(SIZES))
    parser.add_argument("--smallest-only", action="store_true", help="only the small size")
    parser.add_argument("--quick", action="store_true",
                        help="tiny settings, seeds 0 and 1 (CPU rehearsal in seconds)")
    args = parser.parse_args(argv)
    t_start = time.perf_counter()
    sizes = ("small",) if args.smallest_only else tuple(args.sizes.split(","))
    phases = tuple(args.phases.split(","))
    seeds = tuple(int(k) for k in args.seeds.split(",") if k)
    if args.quick and args.seeds == parser.get_default("seeds"):
        seeds = (0, 1)
    unknown = (set(sizes) - set(SIZES)) | (set(phases) - set(PHASES))
    if unknown:
        parser.error(f"unknown sizes or phases: {', '.join(sorted(unknown))}")
    if args.data is not None:
        from sia_theory.training.data import import_tokenized

        import_tokenized(args.data)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    log = Log(out)
    settings = {s: ladder_settings(s, args.corpus, args.quick) for s in sizes}
    counts = parameter_counts(sizes, args.corpus, args.quick)
    log("parameters: " + ", ".join(f"{s} {n:,}" for s, n in counts.items()))
    import jax

    from sia_theory._infra.io import write_text
    from sia_theory.training._jax import environment
    from sia_theory.training.run import distinct_environments

    if not args.quick:
        jax.config.update("jax_default_matmul_precision", "highest")  # float32 as on the CPU
    steps = plan(phases, seeds, sizes, args.quick)
    manifest = {"sizes": {s: {"shape": dict(zip(("n_layers", "d_model", "n_heads"),
                                                  (QUICK_SIZES if args.quick else SIZES)[s])),
                              "parameters": counts[s], "train": settings[s][0].to_dict(),
                              "needle": settings[s][1].to_dict()} for s in sizes},
                "quick": args.quick, "corpus": args.corpus, "phases": list(phases),
                "seeds": list(seeds), "plan": [list(p) for p in steps],
                "budget_s": args.budget_seconds, "environment": environment(),
                "finished": [], "not_started": []}
    log(json.dumps(manifest["environment"]))
    rows: dict = {}
    rates: dict = {}
    envs: list = []
    for step in steps:
        phase, size, scheme, seed, tau, needle = step
        elapsed = time.perf_counter() - t_start
        tokens = tokens_of(settings[size])
        need = 1.2 * estimate(size, needle, counts, rates, tokens)
        if elapsed + need > args.budget_seconds:
            log(f"budget: {size} {scheme} τ={tau} seed {seed} not started ({elapsed:.0f}s "
                f"used, about {need:.0f}s needed)")
            manifest["not_started"].append(list(step))
            continue
        pre, tune = one_run(step, settings, out, log, rows)
        default_tune = MEASURED["tune"] / (MEASURED["parameters"] * MEASURED["tune_tokens"])
        old = rates.get(size, (None, default_tune))
        rates[size] = (max(pre, 0.0) / (counts[size] * tokens[0]),
                       max(tune, 0.0) / (counts[size] * tokens[1]) if needle else old[1])
        record = rows[seed]["runs"][-1]
        envs += [json.loads(record[k]) for k in ("environment_pretrain", "environment_tune")
                 if record[k]]
        manifest["finished"].append(list(step))
        manifest["elapsed_s"] = time.perf_counter() - t_start
        manifest["training_environments"] = distinct_environments(envs)
        write_text(out / "manifest.json", json.dumps(manifest, indent=2, default=str) + "\n")
    manifest["elapsed_s"] = time.perf_counter() - t_start
    manifest["training_environments"] = distinct_environments(envs)
    write_text(out / "manifest.json", json.dumps(manifest, indent=2, default=str) + "\n")
    log(f"done: {len(manifest['finished'])} of {len(steps)} runs in {manifest['elapsed_s']:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
