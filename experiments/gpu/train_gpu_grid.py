"""The training grid bigger, on a GPU: every run of the figure grid at 4 × the batch and
1.7 × the steps, more seeds, SI's needle protocol on the Table 2 schemes (docs/training.md,
"The grid on a GPU").

The runs are those of :func:`sia_theory.studies.train_grid.figure_grid` (the Table 1 rows with
the learned LogN, SI + RoPE / NoPE, the τ sweep with τ rescaled with ``L``), with
``TrainSettings(batch_size=64, steps=400, eval_every=100)`` (the GPU probe's ``gpu400``: the
validation loss at ``L`` is lowest near 400 steps of this data) and seeds 0–4 for the Table 1
rows, 0–2 for the others, in seed-major order (a grid stopped by its budget holds whole seeds).
Every run records validation at ``L``, ``4L`` and ``16L`` at 4 checkpoints, pooled and per
document kind, and the copy test of the final model. Each Table 2 scheme (SI + p-RoPE at
τ = 10, p-RoPE, LogN + p-RoPE fixed and learned, NoPE) is then fine-tuned on needles with SI's
protocol scaled down (300 steps × 64 prompts, 100 warm-up steps) and scored at ``L``, ``4L``,
``16L``. Results are appended after every run.

Two steps, the first on the machine that has the data (its Python's standard library and the
BPE of its ``tokenizers`` define the tokens), the second on the GPU machine::

    python experiments/gpu/train_gpu_probe.py prepare --size gpu400 --data scratch/gpu/data
    python experiments/gpu/train_gpu_grid.py --data scratch/gpu/data --out OUT --budget 480

``--size tiny`` rehearses on a CPU in seconds. Writes into ``OUT``: ``checkpoints.csv``
(``scheme, seed, tau, step, length, multiple, kind, loss``), ``copy.csv``, ``needles.csv``,
``tune.csv``, ``runs.csv`` (per run: parameters, tokens, seconds, the learned scales) and
``manifest.json`` (versions, XLA flags, device, CPU, settings, the runs finished);
``experiments/gpu/train_gpu_collect.py --grid`` turns them into ``figures/train_gpu_grid/``.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from pathlib import Path

from train_gpu_probe import COMMITTED_PROTOCOL, Log, append_rows, environment

from sia_theory.toolkit import OneLineArgumentParser

TABLE2 = ("si-p-rope", "p-rope", "logn-p-rope", "logn-p-rope-learned", "nope")
"""The schemes fine-tuned on needles (SI Table 2's, with the learned LogN)."""


def sizes(size: str, seeds=None, side_seeds=None):
    """``(TrainGridSettings, NeedleTuneSettings)`` of ``size``: ``gpu`` or ``tiny``; ``seeds``
    and ``side_seeds`` replace the size's (a second call that adds seeds)."""
    from sia_theory.studies.train_grid import figure_grid
    from sia_theory.training.needle import NeedleTuneSettings
    from sia_theory.training.settings import TrainSettings

    if size == "gpu":
        train = TrainSettings(batch_size=64, steps=400, eval_every=100)
        needle = NeedleTuneSettings(steps=300, batch_size=64, warmup=100, cooldown=1 / 3,
                                    eval_examples=32, **COMMITTED_PROTOCOL)
        return figure_grid(train=train, seeds=range(5) if seeds is None else seeds,
                           side_seeds=range(3) if side_seeds is None else side_seeds), needle
    train = dataclasses.replace(TrainSettings.quick(), train_length=256, steps=8, eval_every=2)
    needle = NeedleTuneSettings(steps=4, batch_size=4, warmup=2, cooldown=1 / 3,
                                eval_examples=2, **COMMITTED_PROTOCOL)
    return figure_grid(train=train, seeds=(0, 1) if seeds is None else seeds,
                       side_seeds=(0,) if side_seeds is None else side_seeds), needle


def one_run(key, grid, needle_s, out: Path, log) -> float:
    """Pretrain one ``(scheme, seed, tau)`` of ``grid``, copy-test it, needle-tune it if it is a
    Table 2 scheme; append its rows; return its seconds without compiling."""
    from sia_theory.training.copying import copy_test
    from sia_theory.training.needle import accuracy_table, tune_and_evaluate
    from sia_theory.training.trainer import train

    scheme, seed, tau = key
    tag = {"scheme": scheme, "seed": seed, "tau": "" if tau is None else tau}
    t0 = time.perf_counter()
    run = train(grid.schemes[scheme], grid.train, seed=seed, tau=tau)
    t1 = time.perf_counter()
    final = copy_test(run, sequences=64)
    append_rows(out / "checkpoints.csv", [{**tag, **r} for r in
                                          run.checkpoint_frame().to_dict("records")])
    append_rows(out / "copy.csv", [{**tag, "step": "final", **final}])
    scales = run.parameters["layers"].get("score_scale")
    row = {**tag, "parameters": run.parameter_count, "tokens": run.tokens_trained,
           "seconds_pretrain": t1 - t0, "seconds_compile": run.seconds["compile"],
           "learned_scale": "" if scales is None else " ".join(f"{v:.4f}" for v in scales),
           "prompts": "", "seconds_tune": "", "seconds_evaluate_needles": "",
           "answer_loss_last": ""}  # every row the same columns (the file is appended to)
    log(f"{scheme} τ={tau} seed {seed}: {t1 - t0:.1f}s, validation "
        + ", ".join(f"{k}: {v:.3f}" for k, v in sorted(run.validation.items()))
        + f"; copy drop text {final['text_drop']:.3f}")
    spent = t1 - t0 - run.seconds["compile"]
    if scheme in TABLE2 and tau in (None, 10.0):
        needles, tuned, seconds = tune_and_evaluate(run, needle_s, seed=0)
        cells = accuracy_table(needles, ("length", "multiple"))
        log("  needles: " + ", ".join(f"{r.multiple}L {r.correct}/{r.needles}"
                                       for r in cells.itertuples()))
        append_rows(out / "needles.csv", [{**tag, **r} for r in cells.to_dict("records")])
        append_rows(out / "tune.csv", [{**tag, "step": i, "loss": float(v)}
                                       for i, v in enumerate(tuned.train_losses)])
        row.update(prompts=needle_s.steps * needle_s.batch_size, seconds_tune=seconds["tune"],
                   seconds_evaluate_needles=seconds["evaluate"],
                   answer_loss_last=float(tuned.train_losses[-30:].mean()))
        spent += seconds["tune"] + seconds["evaluate"]
    append_rows(out / "runs.csv", [row])
    return spent


def main(argv=None):
    parser = OneLineArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", choices=("gpu", "tiny"), default="gpu")
    parser.add_argument("--data", required=True, help="folder of the tokenized data (prepare)")
    parser.add_argument("--out", default="build/train_gpu_grid")
    parser.add_argument("--budget", type=float, default=480.0,
                        help="seconds: no new run starts that would end after this")
    parser.add_argument("--seeds", default=None,
                        help="comma-separated seeds of the Table 1 rows (default: the size's)")
    parser.add_argument("--side-seeds", default=None,
                        help="comma-separated seeds of the other runs (default: the size's)")
    args = parser.parse_args(argv)

    def seeds(text):
        return None if text is None else tuple(int(k) for k in text.split(",") if k)

    grid, needle_s = sizes(args.size, seeds(args.seeds), seeds(args.side_seeds))
    if seeds(args.seeds) == ():  # only the side runs: SI + p-RoPE at τ = 10 is a Table 1 row
        from sia_theory.studies.train_grid import TrainGridSettings

        grid = TrainGridSettings(train=grid.train, schemes=grid.schemes, runs=tuple(
            r for r in grid.runs if not (r[0] == "si-p-rope" and r[2] == 10.0)))
    from sia_theory.training.data import import_tokenized

    import_tokenized(args.data)
    import jax

    jax.config.update("jax_default_matmul_precision", "highest")  # float32 as on the CPU
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    log = Log(out)
    manifest = {"size": args.size, "train": grid.train.to_dict(), "needle": needle_s.to_dict(),
                "runs": [list(r) for r in grid.runs], "environment": environment(),
                "budget_s": args.budget, "finished": []}
    log(json.dumps(manifest["environment"]))
    last = 0.0
    for key in grid.runs:
        elapsed = time.perf_counter() - log.t0
        if elapsed + 1.2 * last > args.budget:
            log(f"budget: {key} not started ({elapsed:.0f}s used)")
            continue
        last = one_run(key, grid, needle_s, out, log)
        manifest["finished"].append(list(key))
        manifest["elapsed_s"] = time.perf_counter() - log.t0
        (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
