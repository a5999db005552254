"""Streaming attention against PyTorch's ``scaled_dot_product_attention`` (the peer), one thread.

B = 1, H = 8, D = 64, causal, T = 1024, 4096 and 16,384, float32 and float64, identical inputs
(written to ``.npy`` files that the peer loads). Each side runs on one thread: the peer with
``torch.set_num_threads(1)``, ours with ``workers=1`` (BLAS pinned to one thread inside). The
runs alternate (ours, peer, ours, …) so that both see the same load, and each time is the best
of ``--repeats``; the load average is printed on every row. Times are the CPU seconds of each
side's process (``time.process_time``): on one thread that is the work done, and unlike wall
time it is not stretched when a shared machine gives the core to another job for a while. The
ratio of wall times is printed beside it (on a quiet machine the two agree).

**What is compared.** SDPA has no per-distance multiplier: ScaleInvariant's ``a_t·S + m_t``
cannot be given to it as a mask without computing ``S`` first. So the primary row is the same
function on both sides, bare causal attention (``is_causal=True`` against ``score_mod=None``):
its time ratio and both errors are like for like. The ``SI`` row is our ScaleInvariant(10)
attention against the peer's bare attention: the time ratio says what the transform costs us on
top of the peer's fastest path; its error is ours against float64 SI. At T <= 4096 a third row
gives the peer the nearest thing it has, a float ``attn_mask`` holding SI's additive part ``m_t``
and the causal ``-inf`` (a dense T×T table: one mask read per score), with its error against a
float64 run of that bias-only function.

**Errors.** Worst row of ``|out - ref| / |ref|`` (Euclidean norms over the head dimension),
against float64: for float32 inputs the reference is our float64 streaming attention on the
same numbers (checked against the dense oracle ``attention_dense`` on the last 256 rows); for
float64 inputs it is ``attention_dense`` on the last 256 rows.

**Roofline.** Our useful rate (2·T²·D·H flops) and the peer's, against this machine's float32
matmul rate on our kernel's block shapes, measured in the same run on one thread.

Targets (float32, one thread, T = 4096 and 16,384): ours <= 1.2x the peer's time, and our
error <= 2e-6.

The peer is a Python with torch (and numpy) installed, never a dependency of this package:
``--peer-python PATH`` or the environment variable ``SIA_PEER_PYTHON``; without either (and in
``--quick`` mode) only our side runs. Every wait for the peer is bounded by ``--peer-timeout``.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from sia_theory import ScaleInvariant, Transform
from sia_theory.toolkit import benchmark_parser, positive_float, positive_int

TARGET_RATIO, TARGET_ERROR = 1.2, 2e-6
N_HEADS, HEAD_DIM, MASK_MAX_T, ORACLE_ROWS = 8, 64, 4096, 256

PEER = r"""
import json, sys, time
import numpy as np
import torch
torch.set_num_threads(1)
from torch.nn.functional import scaled_dot_product_attention as sdpa
print(json.dumps({"torch": torch.__version__, "threads": torch.get_num_threads()}), flush=True)
arrays = {}
for line in sys.stdin:
    cmd = json.loads(line)
    if cmd["op"] == "load":
        arrays = {name: torch.from_numpy(np.load(path)) for name, path in cmd["files"].items()}
        reply = {"loaded": sorted(arrays)}
    else:
        q, k, v = arrays["q"], arrays["k"], arrays["v"]
        mask = arrays["mask"] if cmd["mask"] else None
        with torch.inference_mode():
            start, start_cpu = time.perf_counter(), time.process_time()
            out = sdpa(q, k, v, attn_mask=mask, is_causal=mask is None)
            seconds, cpu = time.perf_counter() - start, time.process_time() - start_cpu
        if cmd.get("save"):
            np.save(cmd["save"], out.numpy())
        reply = {"seconds": seconds, "cpu": cpu}
    print(json.dumps(reply), flush=True)
"""


def load() -> str:
    return "load {:.2f} / {:.2f} / {:.2f}".format(*os.getloadavg())


class SIBias(Transform):
    """ScaleInvariant's additive part alone (``a = 1``, ``m = m_t``): the function the peer
    computes when given ``m_t`` as a float mask."""

    depends_on = frozenset({"distance"})

    def __init__(self, tau):
        self.si = ScaleInvariant(tau)

    def coefficients(self, t, n_ctx=None, h=None):
        a, m = self.si.coefficients(t)
        return np.ones_like(a), m


class Peer:
    """A long-lived peer process answering one JSON line per command, each wait bounded."""

    def __init__(self, python, timeout, stderr_path):
        self.timeout = timeout
        self._stderr = open(stderr_path, "w+")  # noqa: SIM115 (closed in close())
        self.proc = subprocess.Popen([python, "-c", PEER], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self._stderr, text=True)
        self.info = self._reply()

    def _reply(self):
        ready, _, _ = select.select([self.proc.stdout], [], [], self.timeout)
        line = self.proc.stdout.readline() if ready else ""
        if not line:
            self._stderr.seek(0)
            tail = self._stderr.read()[-2000:]
            self.close()
            raise RuntimeError(f"the peer did not answer within {self.timeout:.0f} s "
                               f"(exit status {self.proc.poll()}): {tail.strip()}")
        return json.loads(line)

    def ask(self, **command):
        self.proc.stdin.write(json.dumps(command) + "\n")
        self.proc.stdin.flush()
        return self._reply()

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=self.timeout)
            except (subprocess.TimeoutExpired, BrokenPipeError):
                self.proc.kill()
                self.proc.wait(timeout=30)
        self._stderr.close()


def inputs(n_ctx, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((1, N_HEADS, n_ctx, HEAD_DIM)).astype(dtype)
                 for _ in range(3))


def row_error(out, ref):
    """Worst row of ``|out - ref| / |ref|`` (norms over the head dimension)."""
    out = np.asarray(out, np.float64)[..., -ref.shape[2]:, :]
    return float(np.max(np.linalg.norm(out - ref, axis=-1) / np.linalg.norm(ref, axis=-1)))


def causal_flops(n_ctx):
    return 2 * n_ctx * n_ctx * HEAD_DIM * N_HEADS


def references(q, k, v, mods):
    """Float64 reference of each score mod: our float64 streaming attention on all rows for
    float32 inputs (checked against the dense oracle on the last rows), the dense oracle on the
    last rows for float64 inputs. Returns ``{name: ref}`` and the check's largest difference."""
    from sia_theory.attention import attention, attention_dense

    q64, k64, v64 = (x.astype(np.float64) for x in (q, k, v))
    refs, check = {}, 0.0
    for name, mod in mods.items():
        oracle = attention_dense(q64[:, :, -ORACLE_ROWS:], k64, v64, score_mod=mod)
        if q.dtype == np.float64:
            refs[name] = oracle
        else:
            refs[name] = attention(q64, k64, v64, score_mod=mod)
            check = max(check, row_error(refs[name], oracle))
    return refs, check


def interleaved_best(fns, repeats):
    """Best ``(wall, cpu)`` seconds of each function (from its own process's clocks), the runs
    alternating; the two minima are taken separately."""
    best = [(float("inf"), float("inf"))] * len(fns)
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            wall, cpu = fn()
            best[i] = (min(best[i][0], wall), min(best[i][1], cpu))
    return best


def timed(fn):
    def run():
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        return time.perf_counter() - start, time.process_time() - start_cpu
    return run


def section_pair(peer, n_ctx, dtype, repeats, tmp, rates):
    from sia_theory.attention import attention

    q, k, v = inputs(n_ctx, dtype)
    si, bias = ScaleInvariant(10.0), SIBias(10.0)
    with_mask = peer is not None and n_ctx <= MASK_MAX_T
    mods = {"bare": None, "SI": si, **({"SI bias": bias} if with_mask else {})}
    refs, check = references(q, k, v, mods)
    ours = {name: attention(q, k, v, score_mod=mods[name], workers=1)
            for name in ("bare", "SI")}
    fns = [timed(lambda mod=mods[name]: attention(q, k, v, score_mod=mod, workers=1))
           for name in ("bare", "SI")]
    peer_out = {}
    if peer is not None:
        files = {}
        for name, x in (("q", q), ("k", k), ("v", v)):
            files[name] = str(tmp / f"{name}.npy")
            np.save(files[name], x)
        if with_mask:
            t = np.arange(n_ctx)[:, None] - np.arange(n_ctx)[None, :]  # (T, T) distances
            _, m = si.coefficients(np.abs(t).astype(np.float64))
            files["mask"] = str(tmp / "mask.npy")
            np.save(files["mask"], np.where(t < 0, -np.inf, m).astype(dtype))
            del t, m
        peer.ask(op="load", files=files)
        for name, mask in (("bare", False), ("SI bias", True))[:1 + with_mask]:
            path = str(tmp / f"out_{name.replace(' ', '_')}.npy")
            peer.ask(op="run", mask=mask, save=path)  # also the warm-up
            peer_out[name] = np.load(path)
            fns.append(lambda mask=mask: tuple(peer.ask(op="run", mask=mask)[key]
                                               for key in ("seconds", "cpu")))
    times = interleaved_best(fns, repeats)
    # the ratio is of CPU seconds (each side runs on one thread, so its CPU time is its work,
    # unlike wall time not stretched when a shared machine preempts it); wall time beside it
    ours_t = {name: t[1] for name, t in zip(("bare", "SI"), times[:2], strict=True)}
    ours_w = {name: t[0] for name, t in zip(("bare", "SI"), times[:2], strict=True)}
    peer_names = ("bare", "SI bias")[:len(times) - 2]
    peer_t = {name: t[1] for name, t in zip(peer_names, times[2:], strict=True)}
    peer_w = {name: t[0] for name, t in zip(peer_names, times[2:], strict=True)}
    where = (f"all rows vs our float64 (which matches the dense oracle to {check:.1e} on the "
             f"last {ORACLE_ROWS} rows)" if dtype == "float32"
             else f"last {ORACLE_ROWS} rows vs the dense oracle")
    print(f"\n== T = {n_ctx}, {dtype}, one thread each; errors: {where}; {load()}")
    print(f"{'ours':<8}{'peer':<14}{'ours s':>9}{'peer s':>9}{'ratio':>7}{'wall':>7}"
          f"{'our err':>10}{'peer err':>10}   (s: CPU seconds; wall: the ratio of wall times)")
    rows = [("bare", "bare", "bare"), ("SI", "bare", "SI")]
    if with_mask:
        rows.append(("SI", "SI bias", "SI bias"))
    verdict = {}
    for mine, theirs, ref_name in rows:
        our_err = row_error(ours[mine], refs[mine])
        if theirs in peer_t:
            # the peer's error only where it computes the function of the reference
            same = (theirs == ref_name)
            peer_err = row_error(peer_out[theirs], refs[ref_name]) if same else None
            ratio = ours_t[mine] / peer_t[theirs]
            peer_cols = (f"{peer_t[theirs]:>9.3f}{ratio:>7.2f}"
                         f"{ours_w[mine] / peer_w[theirs]:>7.2f}")
            peer_err_col = f"{peer_err:>10.1e}" if same else f"{'-':>10}"
            verdict.setdefault(mine, ratio)
        else:
            peer_cols, peer_err_col = f"{'-':>9}{'-':>7}{'-':>7}", f"{'-':>10}"
        label = {"bare": "bare", "SI bias": "+mask m_t"}[theirs]
        print(f"{mine:<8}{label:<14}{ours_t[mine]:>9.3f}{peer_cols}{our_err:>10.1e}"
              f"{peer_err_col}")
        verdict[f"{mine} error"] = our_err
    if dtype == "float32" and rates is not None:
        flops = causal_flops(n_ctx) / 1e9
        line = (f"roofline (float32 matmul on our block shapes: {rates:.1f} GFLOP/s): ours bare "
                f"{flops / ours_t['bare']:.1f} GFLOP/s = {flops / ours_t['bare'] / rates:.0%}, "
                f"SI {flops / ours_t['SI'] / rates:.0%}")
        if "bare" in peer_t:
            line += f"; peer {flops / peer_t['bare']:.1f} GFLOP/s = " \
                    f"{flops / peer_t['bare'] / rates:.0%}"
        print(line)
    return verdict


def matmul_rate(repeats):
    """float32 GFLOP/s of our kernel's two block products on one thread (bench_attention)."""
    from bench_attention import block_products

    fn, flops = block_products(N_HEADS, "float32", 1)
    best = interleaved_best([timed(fn)], repeats)[0][1]  # CPU seconds, as the rows
    return flops / best / 1e9


def main(quick=False, peer_python=None, repeats=3, peer_timeout=900.0, sizes=None):
    peer_python = peer_python or os.environ.get("SIA_PEER_PYTHON") or None
    print(f"numpy {np.__version__}; {os.cpu_count()} cores; {load()}")
    if quick:
        print("quick mode: our side only, T = 256 (the peer runs only in a full run)")
        peer_python = None
    elif peer_python is None:
        print("peer skipped: pass --peer-python PATH (a Python with torch and numpy) or set "
              "SIA_PEER_PYTHON to compare with torch's scaled_dot_product_attention")
    sizes = (256,) if quick else tuple(sizes or (1024, 4096, 16384))
    repeats = 2 if quick else repeats
    rates = None if quick else matmul_rate(repeats * 2)
    verdicts = {}
    with tempfile.TemporaryDirectory(prefix="sia-peer-") as tmp:
        peer = None
        if peer_python is not None:
            peer = Peer(peer_python, peer_timeout, Path(tmp) / "peer.stderr")
            print(f"peer: torch {peer.info['torch']}, {peer.info['threads']} thread(s), "
                  f"{peer_python}")
        try:
            for n_ctx in sizes:
                for dtype in ("float32", "float64"):
                    reps = max(2, repeats - 1) if n_ctx > 4096 else repeats
                    verdicts[(n_ctx, dtype)] = section_pair(peer, n_ctx, dtype, reps, Path(tmp),
                                                            rates)
        finally:
            if peer is not None:
                peer.close()
    print()
    for (n_ctx, dtype), verdict in verdicts.items():
        if dtype != "float32" or not (quick or n_ctx in (4096, 16384)):
            continue
        for name in ("bare", "SI"):
            if name in verdict:
                status = "MET" if verdict[name] <= TARGET_RATIO else "NOT MET"
                print(f"target T = {n_ctx} float32 {name}: <= {TARGET_RATIO}x the peer's bare "
                      f"attention: {verdict[name]:.2f}x {status}")
            err = verdict[f"{name} error"]
            status = ("not evaluated (quick sizes)" if quick
                      else "MET" if err <= TARGET_ERROR else "NOT MET")
            print(f"target T = {n_ctx} float32 {name}: error <= {TARGET_ERROR:.0e}: {err:.1e} "
                  f"{status}")
    if peer_python is None:
        print(f"target: <= {TARGET_RATIO}x the peer: not evaluated (no peer)")
    print(f"\nend: {load()}")
    return 0


def executable(text):
    path = Path(text)
    if not (path.is_file() and os.access(path, os.X_OK)):
        import argparse

        raise argparse.ArgumentTypeError(f"not an executable file: {text!r}")
    return str(path)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench_attention's helpers
    parser = benchmark_parser(__doc__)
    parser.add_argument("--peer-python", type=executable, default=None,
                        help="a Python with torch and numpy (default: $SIA_PEER_PYTHON; "
                             "without either the peer is skipped)")
    parser.add_argument("--repeats", type=positive_int, default=3,
                        help="timed runs per side, best kept (default 3; 16k: one fewer)")
    parser.add_argument("--peer-timeout", type=positive_float, default=900.0,
                        help="seconds to wait for any one answer of the peer (default 900)")
    parser.add_argument("--sizes", type=positive_int, nargs="+", default=None, metavar="T",
                        help="context lengths (default: 1024 4096 16384)")
    sys.exit(main(**vars(parser.parse_args())))
