"""Benchmark: import and first-call cost of the package, each in a fresh Python process.

Three timings of the first-call cost, each the median over ``--runs`` fresh interpreters:

* ``import sia_theory`` (target <= 0.3 s: the top level re-exports lazily, PEP 562);
* the first ``ScaleInvariant(10).coefficients(np.arange(10))`` after ``import numpy`` and
  ``import sia_theory`` (target <= 0.3 s: the coefficients come from the committed module
  generated from the sympy solution, so no sympy solving at run time);
* ``import sia_theory.attention`` (target: loads neither numba nor sympy; the time is shown).

The time is measured inside the child with ``time.perf_counter`` around the statement only, so
interpreter start-up and ``import numpy`` (which every user pays anyway) are not counted; the
"process s" column is the whole child process (start-up included), for reference.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from sia_theory.toolkit import benchmark_parser, int_range

# The checkout, whose package the probes import; run from an installed wheel (the package's
# copy of this script), the installed package and the current folder.
ROOT = Path(__file__).resolve().parent.parent
if not (ROOT / "benchmarks").is_dir():
    ROOT = None

# Each probe prints one JSON line: the measured seconds and which heavy modules got loaded.
PROBES = {
    "import sia_theory": ("import numpy", "import sia_theory", 0.3),
    "first ScaleInvariant(10).coefficients": (
        "import numpy as np; import sia_theory",
        "sia_theory.ScaleInvariant(10).coefficients(np.arange(10))", 0.3),
    "import sia_theory.attention": ("import numpy", "import sia_theory.attention", None),
}
CHILD = """
import json, sys, time
{setup}
start = time.perf_counter()
{statement}
seconds = time.perf_counter() - start
print(json.dumps({{"seconds": seconds, "numba": "numba" in sys.modules,
                   "sympy": "sympy" in sys.modules}}))
"""


def probe(setup: str, statement: str) -> dict:
    """Run ``statement`` after ``setup`` in a fresh interpreter; the child's JSON line."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [ROOT and str(ROOT),
                                                      env.get("PYTHONPATH")]))
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", CHILD.format(setup=setup, statement=statement)],
                         capture_output=True, text=True, env=env, check=True, cwd=ROOT)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["process"] = time.perf_counter() - start
    return result


def main(quick=False, runs=None) -> int:
    runs = runs or (3 if quick else 7)
    load = os.getloadavg()[0]
    print(f"median of {runs} fresh processes each; load average {load:.2f} on "
          f"{os.cpu_count() or 1} cores; {sys.executable}")
    print(f"\n{'measurement':38s} {'median s':>9s} {'min s':>7s} {'process s':>10s} "
          f"{'target':>15s} {'numba':>6s} {'sympy':>6s}  verdict")
    all_met = True
    for label, (setup, statement, target) in PROBES.items():
        results = [probe(setup, statement) for _ in range(runs)]
        seconds = [r["seconds"] for r in results]
        median = statistics.median(seconds)
        numba_loaded = any(r["numba"] for r in results)
        sympy_loaded = any(r["sympy"] for r in results)
        if target is None:  # the target is about what gets loaded, not the time
            met = not (numba_loaded or sympy_loaded)
            target_text = "no numba/sympy"
        else:
            met = median <= target
            target_text = f"<= {target:.1f} s"
        all_met &= met
        process = statistics.median(r["process"] for r in results)
        print(f"{label:38s} {median:9.3f} {min(seconds):7.3f} {process:10.3f} {target_text:>15s} "
              f"{'yes' if numba_loaded else 'no':>6s} {'yes' if sympy_loaded else 'no':>6s}  "
              f"{'MET' if met else 'NOT MET'}")
    print(f"\nall targets {'met' if all_met else 'NOT met'}")
    return 0


if __name__ == "__main__":
    parser = benchmark_parser(__doc__)
    parser.add_argument("--runs", type=int_range(1, 1000), default=None,
                        help="fresh processes per measurement, 1 to 1000 (median reported)")
    args = parser.parse_args()
    sys.exit(main(quick=args.quick, runs=args.runs))
