"""Benchmark: the asymptotic sampler's cost per sample is flat in t.

Times, per sample, the statistics of the range ``[t, 10t)`` under the scale-invariant transform
(τ = 10):

* the asymptotic sampler ``simulate_gaussian_logits_asymptotic`` (top_k = 1000, numpy, one
  thread) at t = 1e4, 1e10, 1e20 and 1e30;
* the brute-force Monte Carlo ``simulate_gaussian_logits`` (numba kernel, all threads) at
  t = 1e4 and 1e5 (``n_ctx = 10t``, every logit drawn).

Target: the sampler at t = 1e30 costs no more per sample than brute force at
t = 1e4. Each timing is the best of ``--repeats`` runs after a warm-up.
"""

from __future__ import annotations

import os
import sys

import numba

from sia_theory import ScaleInvariant
from sia_theory.gaussian.asymptotic import simulate_gaussian_logits_asymptotic
from sia_theory.gaussian.montecarlo import simulate_gaussian_logits
from sia_theory.toolkit import benchmark_parser, best_time, int_range

SAMPLER_T = (1e4, 1e10, 1e20, 1e30)
BRUTE_T = (10**4, 10**5)


def main(quick=False, repeats=3) -> int:
    transform = ScaleInvariant(10.0)
    sampler_samples, brute_samples = (200, 16) if quick else (2000, 128)
    brute_t = BRUTE_T[:1] if quick else BRUTE_T
    load = os.getloadavg()[0]
    print(f"range [t, 10t), {transform!r}; sampler {sampler_samples} samples (top_k = 1000, "
          f"one thread), brute force {brute_samples} samples ({numba.config.NUMBA_NUM_THREADS} "
          f"threads); best of {repeats}")
    print(f"load average {load:.2f} on {os.cpu_count() or 1} cores"
          + ("  (busy machine: timings are noisy)" if load > 0.5 else ""))
    simulate_gaussian_logits(transform, 1000, [(0, 10)], 2)  # warm up / compile
    simulate_gaussian_logits_asymptotic(transform, [(1e4, 1e5)], 2, 0)

    per_sample = {}
    for t in brute_t:
        seconds = best_time(lambda t=t: simulate_gaussian_logits(
            transform, 10 * t, [(t, 10 * t)], brute_samples, 0), repeats).seconds
        per_sample[f"brute force, t = {t:.0e}"] = seconds / brute_samples
    for t in SAMPLER_T:
        seconds = best_time(lambda t=t: simulate_gaussian_logits_asymptotic(
            transform, [(t, 10 * t)], sampler_samples, 0), repeats).seconds
        per_sample[f"sampler, t = {t:.0e}"] = seconds / sampler_samples

    reference = per_sample["brute force, t = 1e+04"]
    print(f"\n{'route':28s} {'ms/sample':>10s} {'vs brute force at 1e4':>22s}")
    for name, seconds in per_sample.items():
        print(f"{name:28s} {1e3 * seconds:10.4f} {seconds / reference:21.3f}x")
    ratio = per_sample["sampler, t = 1e+30"] / reference
    flat = per_sample["sampler, t = 1e+30"] / per_sample["sampler, t = 1e+04"]
    print(f"\nsampler 1e30 / brute force 1e4   measured {ratio:6.3f}x  target <= 1.0x  "
          f"{'MET' if ratio <= 1.0 else 'NOT MET'}")
    print(f"sampler 1e30 / sampler 1e4       measured {flat:6.3f}x  (flat in t: about 1)")
    return 0


if __name__ == "__main__":
    parser = benchmark_parser(__doc__)
    parser.add_argument("--repeats", type=int_range(1, 1000), default=None,
                        help="timed repeats per route, 1 to 1000 (best is reported; default 3, "
                             "--quick 1)")
    args = parser.parse_args()
    sys.exit(main(quick=args.quick, repeats=args.repeats or (1 if args.quick else 3)))
