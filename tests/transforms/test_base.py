"""sia_theory.transforms.base, by its own name: the protocol :class:`Transform` (its argument
checks, its safe default dependence, a subclass's own ``score_mod``), the declared dependence as
data (:data:`DEPENDENCES`, :func:`declared_dependence`), :func:`describe`, the error of a
subclass without a law (:class:`TransformNotDefined`) and the adapters that fix one argument
(:class:`FixedContext` / :func:`at_context`, :class:`AtHead` / :func:`at_head`). The concrete
transforms used as examples are :mod:`sia_theory.transforms.standard`'s."""

import math

import numpy as np
import pytest

from sia_theory import simulate_gaussian_logits
from sia_theory.attention import attention
from sia_theory.transforms.base import (
    DEPENDENCES,
    AtHead,
    FixedContext,
    Transform,
    TransformNotDefined,
    at_context,
    at_head,
    declared_dependence,
    describe,
)
from sia_theory.transforms.standard import ALiBi, LogN, NoScale, ScaleInvariant


def _qkv(n_heads, n, d, seed):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((1, n_heads, n, d)) for _ in range(3))


def test_dependences_are_distance_context_and_head():
    assert DEPENDENCES == frozenset({"distance", "context", "head"})
    assert Transform.depends_on == DEPENDENCES and Transform.n_heads is None


def test_negative_distance_rejected():
    with pytest.raises(ValueError, match="^t must"):
        NoScale().coefficients([-1, 0])


def test_user_transform_defaults_to_no_distance_fast_path():
    """A subclass that depends on n but declares nothing gets the safe default dependence (all
    of distance, context, head); attention then evaluates it exactly like the built-in LogN."""

    class MyLogN(Transform):
        def affine(self, t, n, h):
            return 0.4 * np.log(n) * np.ones_like(t), np.zeros_like(t)

    q, k, v = _qkv(2, 40, 8, seed=0)
    expected = attention(q, k, v, score_mod=LogN(0.4))
    for mod in (MyLogN(), MyLogN().score_mod):
        np.testing.assert_allclose(attention(q, k, v, score_mod=mod), expected, rtol=0,
                                   atol=1e-12)
    assert MyLogN().depends_on == {"distance", "context", "head"}
    assert ScaleInvariant().depends_on == {"distance"}


def test_subclass_overriding_score_mod_is_honoured_by_attention():
    class Shifted(NoScale):
        def score_mod(self, score, b, h, q_idx, kv_idx):
            return score + 0.0 * q_idx - (q_idx == kv_idx) * 100.0  # never attend to yourself

    q, k, v = _qkv(1, 6, 4, seed=1)
    out = attention(q, k, v, score_mod=Shifted())
    # Row 1 sees keys 0 and 1; with key 1 suppressed it is (almost exactly) v[0].
    np.testing.assert_allclose(out[0, 0, 1], v[0, 0, 0], atol=1e-30 + 1e-12)


def test_declared_dependence_is_the_declaration_as_a_frozenset():
    class Declared(Transform):
        depends_on = {"distance", "head"}  # a plain set is accepted, returned frozen

    assert declared_dependence(Declared()) == frozenset({"distance", "head"})
    assert type(declared_dependence(Declared())) is frozenset
    assert declared_dependence(LogN()) == {"context"}
    assert declared_dependence(Transform()) == DEPENDENCES


@pytest.mark.parametrize("deps", [{"distance", "time"}, ("distance",), None])
def test_bad_declared_dependence_raises_naming_it(deps):
    class Bad(Transform):
        depends_on = deps

        def affine(self, t, n, h):
            return np.ones_like(t), np.zeros_like(t)

    q, k, v = _qkv(3, 4, 8, seed=0)
    with pytest.raises(ValueError, match="depends_on"):
        attention(q, k, v, score_mod=Bad())
    with pytest.raises(ValueError, match="depends_on"):
        declared_dependence(Bad())


def test_distance_only_flag_is_gone_and_warned_about():
    assert not hasattr(ScaleInvariant(), "distance_only")
    with pytest.warns(FutureWarning, match="depends_on"):
        class Old(Transform):
            distance_only = True


def test_describe_is_the_repr_or_the_class_name():
    class Anonymous(Transform):  # Python's default repr: "<...Anonymous object at 0x...>"
        pass

    assert describe(LogN(0.4)) == repr(LogN(0.4)) == "LogN(s=0.4)"
    assert describe(Anonymous()) == "Anonymous"


def test_base_transform_says_what_to_implement():
    """TransformNotDefined is a ValueError (bad input, as everywhere) and, for code written
    against 0.2, still a NotImplementedError; it names the method to define."""
    assert issubclass(TransformNotDefined, ValueError)
    assert issubclass(TransformNotDefined, NotImplementedError)
    with pytest.raises(TransformNotDefined, match=r"implement affine\(self, t, n, h\)"):
        Transform().coefficients([0, 1])
    with pytest.raises(TransformNotDefined, match="^Transform does not define"):
        Transform().score_mod(np.zeros(2), 0, 0, np.ones(2), np.zeros(2))


def test_a_transform_without_coefficients_is_a_value_error():
    with pytest.raises(ValueError, match="does not define its coefficients"):
        simulate_gaussian_logits(Transform(), 100, [(0, 10)], 4)
    with pytest.raises(NotImplementedError):  # still what 0.2 raised
        Transform().coefficients([1.0])


def test_fixed_context_is_the_transform_at_n_ctx_at_every_distance():
    frozen = FixedContext(LogN(0.4), 1000)
    t = np.array([0.0, 7.0, 999.0, 5000.0])  # also beyond n_ctx: the query's profile extended
    a, m = frozen.coefficients(t)
    np.testing.assert_allclose(a, 0.4 * math.log(1000), rtol=1e-15)
    np.testing.assert_array_equal(m, 0.0)
    assert frozen.depends_on == frozenset() and frozen.n_heads is None
    alibi = FixedContext(ALiBi((0.5, 0.25)), 10)  # the head stays a dependence
    assert alibi.depends_on == {"distance", "head"} and alibi.n_heads == 2
    np.testing.assert_array_equal(alibi.coefficients(t, h=1)[1], -0.25 * t)


@pytest.mark.parametrize(("transform", "n_ctx", "match"), [
    (LogN(0.4), 0, "^n_ctx must"), (LogN(0.4), 2.5, "^n_ctx must"),
    (lambda s, b, h, q, k: s, 10, "^transform must be a sia_theory Transform"),
])
def test_fixed_context_refuses_bad_arguments_naming_them(transform, n_ctx, match):
    with pytest.raises(ValueError, match=match):
        FixedContext(transform, n_ctx)


def test_at_context_freezes_only_a_context_dependent_transform():
    assert at_context(LogN(0.4), 1000) == FixedContext(LogN(0.4), 1000)
    si = ScaleInvariant(10.0)
    assert at_context(si, 1000) is si
    assert at_context(si, 0) is si  # n_ctx is not looked at without a context dependence
    with pytest.raises(ValueError, match="^n_ctx must"):
        at_context(LogN(0.4), 0)


def test_a_head_is_read_through_at_head():
    """A per-head analysis sees exactly that head's coefficients (the slope of ALiBi's paper,
    2^(−8(h+1)/H), written out here)."""
    alibi = ALiBi.standard(8)
    t = np.arange(0.0, 50.0)
    for h in range(8):
        a, m = at_head(alibi, h).coefficients(t)
        np.testing.assert_array_equal(a, 1.0)
        np.testing.assert_allclose(m, -(2.0 ** (-8 * (h + 1) / 8)) * t, rtol=1e-15)
    assert at_head(ScaleInvariant(10), 3) == ScaleInvariant(10)  # no head: itself
    assert "head" not in AtHead(alibi, 1).depends_on and AtHead(alibi, 1).n_heads == 1


def test_at_head_asks_for_a_head_of_a_several_headed_transform():
    alibi = ALiBi.standard(8)
    with pytest.raises(ValueError, match=r"has 8 heads .* \[0, 7\]"):
        at_head(alibi, None)
    with pytest.raises(ValueError, match="^h must be an integer >= 0 and <= 7"):
        AtHead(alibi, 8)
    one = ALiBi((0.5,))  # one slope: a scalar ALiBi needs no head
    assert at_head(one, None) is one
