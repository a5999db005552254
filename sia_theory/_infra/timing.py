"""Measuring helpers shared by the benchmarks (``make bench``) and the memory experiment."""

from __future__ import annotations

import time
import tracemalloc
from typing import NamedTuple

__all__ = ["Timing", "best_time", "traced_peak"]


class Timing(NamedTuple):
    seconds: float  # best wall time over the repeats
    cpu_seconds: float  # process CPU time of that best run (how much of the machine it got)
    result: object  # what the last call returned


def best_time(fn, repeats: int = 1) -> Timing:
    """Best wall time of ``fn()`` over ``repeats`` runs: the minimum is the least disturbed by
    other jobs on a shared machine."""
    best, cpu, result = float("inf"), float("nan"), None
    for _ in range(max(1, repeats)):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = fn()
        wall = time.perf_counter() - start
        if wall < best:
            best, cpu = wall, time.process_time() - start_cpu
    return Timing(best, cpu, result)


def traced_peak(fn) -> int:
    """Peak Python-visible memory (tracemalloc, includes numpy buffers) that ``fn()`` allocates
    above what was live when it started, in bytes."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        fn()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
