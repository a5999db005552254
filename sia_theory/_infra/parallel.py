"""Deterministic parallelism: independent tasks on worker threads with single-threaded BLAS.

BLAS libraries partition a matrix product differently for different thread counts, which changes
the last bits of the result (measured with OpenBLAS on ``(300×300)·(300×32)``). Code whose
numbers must not depend on the thread count runs its products inside
:func:`single_threaded_blas` and gets its parallelism from :func:`parallel_map` over independent
tasks, reduced in input order. ``NUMBA_NUM_THREADS`` is the project's one thread knob.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import cache

from threadpoolctl import ThreadpoolController

__all__ = ["single_threaded_blas", "worker_count", "parallel_map", "available_workers",
           "run_tasks"]


@cache
def _blas_controller():
    return ThreadpoolController()


_blas_lock = threading.Lock()
_blas_state = {"depth": 0, "limiter": None}  # nesting depth across threads, active limiter


@contextmanager
def single_threaded_blas():
    """Run the block with one BLAS thread (threadpoolctl; works for OpenBLAS, MKL and BLIS),
    restored afterwards. Safe to nest and to enter from several threads: the limit is set by
    the first entrant and lifted by the last one out."""
    with _blas_lock:
        if _blas_state["depth"] == 0:
            _blas_state["limiter"] = _blas_controller().limit(limits=1, user_api="blas")
        _blas_state["depth"] += 1
    try:
        yield
    finally:
        with _blas_lock:
            _blas_state["depth"] -= 1
            if _blas_state["depth"] == 0:
                _blas_state["limiter"].restore_original_limits()
                _blas_state["limiter"] = None


def worker_count() -> int:
    """Worker threads for independent tasks: ``NUMBA_NUM_THREADS`` (the project's knob)."""
    # start-up: numba (0.5 s), only when the worker count is asked; the package loads lazily
    from numba import config

    return max(1, int(config.NUMBA_NUM_THREADS))


def parallel_map(fn, items) -> list:
    """``[fn(x) for x in items]`` on :func:`worker_count` threads with single-threaded BLAS.

    Each task must be independent of the others; results come back in input order, so any
    reduction over them is the same for every thread count.
    """
    items = list(items)
    with single_threaded_blas():
        if worker_count() == 1 or len(items) <= 1:
            return [fn(x) for x in items]
        with ThreadPoolExecutor(min(worker_count(), len(items))) as pool:
            return list(pool.map(fn, items))


def available_workers() -> int:
    """Default worker threads of a library call, without importing numba: ``NUMBA_NUM_THREADS``
    when set in the environment (the project's one knob), else the CPUs this process may run
    on (``os.sched_getaffinity``)."""
    knob = os.environ.get("NUMBA_NUM_THREADS", "").strip()
    if knob.isdigit() and int(knob) >= 1:
        return int(knob)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


_pools: dict[int, ThreadPoolExecutor] = {}
_pools_lock = threading.Lock()
_in_task = threading.local()


def _pool(workers):
    with _pools_lock:
        if workers not in _pools:
            _pools[workers] = ThreadPoolExecutor(workers, thread_name_prefix="sia-task")
        return _pools[workers]


def _forget_pools_after_fork():
    """A forked child has none of the parent's pool threads: forget the pools (and a lock a
    parent thread may have held) so that the child makes new ones instead of waiting forever."""
    global _pools_lock
    _pools.clear()
    _pools_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pools_after_fork)


def _run_flagged(fn, item):
    _in_task.active = True
    try:
        return fn(item)
    finally:
        _in_task.active = False


def run_tasks(fn, items, workers) -> list:
    """``[fn(x) for x in items]`` on ``workers`` threads of a persistent pool, with
    single-threaded BLAS; results in input order.

    For many short tasks (no pool is created per call). Each task must be independent and must
    compute the same numbers whichever thread runs it, so results do not depend on ``workers``.
    A call made from inside a task runs inline (no nested pools, no deadlock).
    """
    items = list(items)
    with single_threaded_blas():
        if workers <= 1 or len(items) <= 1 or getattr(_in_task, "active", False):
            return [fn(x) for x in items]
        pool = _pool(workers)
        return list(pool.map(_run_flagged, [fn] * len(items), items))
