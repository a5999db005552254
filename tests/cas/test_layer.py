"""sia_theory.cas.layer, exercised by its own name: one CAS layer (CAS eq. 1) against a plain
numpy forward pass, and the attention statistics on hand-made inputs."""

import math

import numpy as np
import pytest

from sia_theory.cas.layer import (
    attention_statistics,
    attention_step,
    softmax_from_gram,
    step_memory,
)


def test_attention_step_against_numpy():
    """x_i' = Σ_j softmax_j(β⟨y_i, y_j⟩) y_j + α x_i with y = x/|x|."""
    X = np.random.default_rng(0).standard_normal((7, 4))
    Y = X / np.linalg.norm(X, axis=1, keepdims=True)
    S = 3.0 * Y @ Y.T
    A = np.exp(S) / np.exp(S).sum(axis=1, keepdims=True)
    out, got_a = attention_step(X, beta=3.0, alpha=0.25, return_attention=True)
    assert got_a == pytest.approx(A, rel=1e-12)
    assert out == pytest.approx(A @ Y + 0.25 * X, rel=1e-12)
    assert attention_step(1e200 * X, beta=3.0) == pytest.approx(A @ Y, rel=1e-12)


def test_softmax_never_overflows():
    gram = np.array([[1.0, 0.5], [0.5, 1.0]])
    assert softmax_from_gram(gram, 1e308) == pytest.approx(np.eye(2))


def test_attention_statistics_of_uniform_and_one_hot():
    n = 5
    uniform = attention_statistics(np.full((n, n), 1 / n))
    assert uniform["self_weight"] == pytest.approx(0.2)
    assert uniform["effective_tokens"] == pytest.approx(5.0)
    assert uniform["entropy"] == pytest.approx(math.log(5))
    assert attention_statistics(np.eye(3)) == pytest.approx(
        {"self_weight": 1.0, "effective_tokens": 1.0, "entropy": 0.0})


def test_step_memory_counts_the_float64_arrays_of_one_layer():
    """At least the ``(n, n)`` Gram/attention matrix and the ``(n, d)`` output, in float64."""
    assert step_memory(1000, 8) >= 8 * (1000 * 1000 + 1000 * 8)
    assert step_memory(2000, 8) > 3.9 * step_memory(1000, 8)  # quadratic in n


def test_bad_input_named():
    with pytest.raises(ValueError, match="beta"):
        attention_step(np.ones((2, 2)), beta=-1.0)
    with pytest.raises(ValueError, match="zero row"):
        attention_step(np.array([[1.0, 0.0], [0.0, 0.0]]), beta=1.0)
    with pytest.raises(ValueError, match="A must be a square"):
        attention_statistics(np.ones((2, 3)))
    with pytest.raises(ValueError, match="max_bytes"):
        attention_step(np.ones((50, 2)), beta=1.0, max_bytes=10)
