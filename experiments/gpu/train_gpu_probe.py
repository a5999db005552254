"""A GPU probe of SI Table 2 in miniature: longer pretraining, the copy test, SI's needle
protocol scaled down (docs/training.md, "The GPU probe").

For the Table 2 schemes and seeds (seed-major: every scheme of a seed before the next seed, so
a run stopped early holds whole seeds): pretrain the CPU grid's model longer, with validation at
L, 4L and 16L and the copy test at every checkpoint; then the copy test of the final model and
needle fine-tuning with a warm-up (SI: 100 warm-up, 100 constant, 100 cool-down steps), more
prompts per step and more steps than the CPU study, and the needle accuracy at L, 4L and 16L.
Results are written after every run, so a stopped probe still returns data.

Two steps, the first on the machine that has the data (its Python's standard library and the
BPE of its ``tokenizers`` define the tokens), the second anywhere::

    python experiments/gpu/train_gpu_probe.py prepare --size gpu --data DIR
    python experiments/gpu/train_gpu_probe.py run --size gpu --data DIR --out OUT --budget 420

``--size tiny`` is the CPU rehearsal (seconds). Writes ``OUT/manifest.json`` (versions, XLA
flags, device, CPU, settings, timings), ``curves.csv`` (validation at every checkpoint and
length), ``copy.csv`` (copy test at every checkpoint), ``needles.csv`` (accuracy per scheme,
seed and length), ``tune.csv`` (the answer loss of every fine-tuning step), ``runs.csv`` (one row
per run: parameters, tokens, prompts, seconds) and ``log.txt``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import platform
import sys
import time
from pathlib import Path

from sia_theory.toolkit import OneLineArgumentParser

SCHEMES = ("si-p-rope", "p-rope", "logn-p-rope", "nope")
COMMITTED_PROTOCOL = {"prompts": "shared", "checkpoints": 1}
"""The needle protocol of the committed GPU figures: every seed on the prompts of seed 0, scored
once at the end (``NeedleTuneSettings(prompts="per-seed", checkpoints=3)`` is the study's)."""


def sizes(size: str):
    """``(TrainSettings, NeedleTuneSettings, seeds)`` of ``size``: ``gpu``, ``gpu400`` (the same
    with 400 pretraining steps, where the validation loss is lowest) or ``tiny``."""
    from sia_theory.training.needle import NeedleTuneSettings
    from sia_theory.training.settings import TrainSettings

    if size in ("gpu", "gpu400"):  # the CPU grid's model, 4 x the batch, 6.7 (1.7) x the steps
        train = (TrainSettings(batch_size=64, steps=1600, eval_every=400) if size == "gpu"
                 else TrainSettings(batch_size=64, steps=400, eval_every=100))
        needle = NeedleTuneSettings(steps=300, batch_size=64, warmup=100, cooldown=1 / 3,
                                eval_examples=32, **COMMITTED_PROTOCOL)
        return train, needle, (0, 1, 2)
    train = dataclasses.replace(TrainSettings.quick(), train_length=256, steps=8,
                                eval_every=4)
    needle = NeedleTuneSettings(steps=6, batch_size=4, warmup=2, cooldown=1 / 3, eval_examples=2,
                                **COMMITTED_PROTOCOL)
    return train, needle, (0, 1)


class Log:
    def __init__(self, out: Path):
        self.path, self.t0 = out / "log.txt", time.perf_counter()

    def __call__(self, text):
        line = f"[{time.perf_counter() - self.t0:7.1f}s] {text}"
        print(line, flush=True)
        with open(self.path, "a") as f:
            f.write(line + "\n")


def append_rows(path: Path, rows: list):
    import pandas as pd

    frame = pd.DataFrame(rows)
    frame.to_csv(path, mode="a", header=not path.exists(), index=False, float_format="%.6g")


def environment() -> dict:
    import jax
    import jaxlib
    import optax

    cpu = ""
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                   if line.startswith("model name"))
    except (OSError, StopIteration):
        cpu = platform.processor()
    return {"python": sys.version.split()[0], "jax": jax.__version__,
            "jaxlib": jaxlib.__version__, "optax": optax.__version__,
            "xla_flags": os.environ.get("XLA_FLAGS", ""),
            "matmul_precision": str(jax.config.jax_default_matmul_precision),
            "devices": [str(d) for d in jax.devices()],
            "device_kind": jax.devices()[0].device_kind, "cpu": cpu,
            "platform": platform.platform()}


def one_run(scheme, seed, train_s, needle_s, out: Path, log):
    """Pretrain, copy-test and needle-tune one ``(scheme, seed)``; append its rows."""
    from types import SimpleNamespace

    from sia_theory.schemes import resolve_scheme
    from sia_theory.training.copying import copy_test
    from sia_theory.training.data import corpus as load_corpus
    from sia_theory.training.evaluation import evaluate
    from sia_theory.training.needle import accuracy_table, tune_and_evaluate
    from sia_theory.training.trainer import train

    resolved = resolve_scheme(scheme)
    data = load_corpus(train_s)
    view = SimpleNamespace(settings=train_s, resolved_scheme=lambda: resolved)
    curves, copies = [], []

    def checkpoint(step, params):
        for length in train_s.eval_lengths[1:]:
            curves.append({"scheme": scheme, "seed": seed, "step": step, "length": length,
                           "loss": evaluate(params, resolved, train_s, length, data)})
        copies.append({"scheme": scheme, "seed": seed, "step": step,
                       **copy_test(view, parameters=params)})

    t0 = time.perf_counter()
    run = train(scheme, train_s, seed=seed, on_checkpoint=checkpoint)
    t1 = time.perf_counter()
    curves += [{"scheme": scheme, "seed": seed, "step": step, "length": train_s.train_length,
                "loss": loss} for step, loss in run.validation_curve]
    final = copy_test(run, sequences=64)
    log(f"{scheme} seed {seed}: pretrained {t1 - t0:.1f}s, validation "
        + ", ".join(f"{k}: {v:.3f}" for k, v in sorted(run.validation.items()))
        + f"; copy drop random {final['random_drop']:.3f}, text {final['text_drop']:.3f}")
    needles, tuned, seconds = tune_and_evaluate(run, needle_s, seed=0)
    cells = accuracy_table(needles, ("length", "multiple"))
    log(f"{scheme} seed {seed}: tuned {seconds['tune']:.1f}s + {seconds['evaluate']:.1f}s, "
        "accuracy " + ", ".join(f"{r.multiple}L {r.correct}/{r.needles}"
                                for r in cells.itertuples()))
    append_rows(out / "curves.csv", curves)
    append_rows(out / "copy.csv", copies + [{"scheme": scheme, "seed": seed, "step": "final",
                                            **final}])
    append_rows(out / "needles.csv", [{"scheme": scheme, "seed": seed, **r}
                                      for r in cells.to_dict("records")])
    append_rows(out / "tune.csv", [{"scheme": scheme, "seed": seed, "step": i, "loss": float(v)}
                                   for i, v in enumerate(tuned.train_losses)])
    append_rows(out / "runs.csv", [{
        "scheme": scheme, "seed": seed, "parameters": run.parameter_count,
        "tokens": run.tokens_trained, "prompts": needle_s.steps * needle_s.batch_size,
        "seconds_pretrain": t1 - t0, "seconds_compile": run.seconds["compile"],
        "seconds_tune": seconds["tune"], "seconds_evaluate_needles": seconds["evaluate"],
        "text_loss_after_tuning": tuned.validation[train_s.train_length],
        "answer_loss_first": float(tuned.train_losses[0]),
        "answer_loss_last": float(tuned.train_losses[-30:].mean())}])
    return time.perf_counter() - t0 - run.seconds["compile"] - tuned.seconds["compile"]


def main(argv=None):
    parser = OneLineArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=("prepare", "run"))
    parser.add_argument("--size", choices=("gpu", "gpu400", "tiny"), default="gpu")
    parser.add_argument("--data", required=True, help="folder of the tokenized data")
    parser.add_argument("--out", default="build/train_gpu_probe")
    parser.add_argument("--budget", type=float, default=420.0,
                        help="seconds: no new run starts that would end after this")
    parser.add_argument("--schemes", default=",".join(SCHEMES))
    parser.add_argument("--seeds", default="", help="comma-separated seeds (default: the size's)")
    parser.add_argument("--skip", default="", help="runs not to do, e.g. si-p-rope:2,nope:0")
    args = parser.parse_args(argv)
    train_s, needle_s, seeds = sizes(args.size)
    seeds = tuple(int(k) for k in args.seeds.split(",")) if args.seeds else seeds
    skip = {tuple(x.split(":")) for x in args.skip.split(",") if x}
    from sia_theory.training.data import export_tokenized, import_tokenized

    if args.action == "prepare":
        print(export_tokenized(train_s, args.data))
        return 0
    import_tokenized(args.data)
    import jax

    jax.config.update("jax_default_matmul_precision", "highest")  # float32 as on the CPU
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    log = Log(out)
    manifest = {"size": args.size, "train": train_s.to_dict(), "needle": needle_s.to_dict(),
                "seeds": list(seeds), "schemes": args.schemes.split(","),
                "environment": environment(), "budget_s": args.budget, "finished": []}
    log(json.dumps(manifest["environment"]))
    last = 0.0  # seconds of the last run, its compiling left out (a first run's is most)
    for seed in seeds:
        for scheme in manifest["schemes"]:
            if (scheme, str(seed)) in skip:
                continue
            elapsed = time.perf_counter() - log.t0
            if elapsed + 1.2 * last > args.budget:
                log(f"budget: {scheme} seed {seed} not started ({elapsed:.0f}s used)")
                continue
            last = one_run(scheme, seed, train_s, needle_s, out, log)
            manifest["finished"].append([scheme, seed])
            manifest["elapsed_s"] = time.perf_counter() - log.t0
            (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
