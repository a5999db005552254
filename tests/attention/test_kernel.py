"""sia_theory.attention.kernel, exercised by its own name: a Problem's task plan covers every
(batch, head, query row) once, and run_task over the plan reproduces a numpy softmax."""

import math

import numpy as np
import pytest

from sia_theory.attention.kernel import Problem, plan_tasks, run_task


def _problem(q, k, v, q_block=16, k_block=32):
    scale = 1 / math.sqrt(q.shape[-1])
    return Problem(q * scale, q, scale, k, v, None, True, 0, 0, q_block, k_block, False)


def test_plan_covers_every_row_once():
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((2, 4, 50, 8)) for _ in range(3))
    for split in (False, True):
        seen = np.zeros((2, 4, 50), dtype=int)
        for b0, b1, h0, h1, q0, q1 in plan_tasks(_problem(q, k, v), split):
            seen[b0:b1, h0:h1, q0:q1] += 1
        assert np.all(seen == 1)


def test_run_task_against_numpy_softmax():
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal((1, 2, 70, 8)) for _ in range(3))
    problem = _problem(q, k, v)
    out, lse = np.zeros_like(q), np.zeros(q.shape[:3])
    for task in plan_tasks(problem, True):
        run_task(problem, task, out, lse)
    s = q @ k.swapaxes(-1, -2) / math.sqrt(8)
    s = np.where(np.tril(np.ones((70, 70), bool)), s, -np.inf)
    w = np.exp(s - s.max(axis=-1, keepdims=True))
    assert out == pytest.approx(w @ v / w.sum(axis=-1, keepdims=True), abs=1e-12)
    assert lse == pytest.approx(np.log(np.exp(s).sum(axis=-1)), abs=1e-12)
    assert problem.group == 1 and problem.key_end(10) == 10
