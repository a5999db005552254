"""sia_theory.schemes.scheme, by its own name: a Scheme's validation (each bad field named), its τ
(``with_tau`` replaces the transform's field, schemes without τ refuse), the resolution of a
transform rule by the context names it takes, and :meth:`Scheme.at` (the encoding of
:data:`POSITIONS` for the lengths, ``score_mod`` ``None`` for NoScale)."""

import pytest

from sia_theory.attention.positional import PRoPESI, RoPE
from sia_theory.schemes.scheme import LEARNED, POSITIONS, ROPE_BASE, BoundScheme, Scheme
from sia_theory.transforms import LogN, NoScale, ScaleInvariant


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"name": ""}, r"^scheme name"),
    ({"position": "spiral"}, r"^position must be one of"),
    ({"transform": 3.0}, r"^transform must be"),
    ({"learned": ("score_scale", "score_scale")}, r"^learned must be distinct"),
    ({"learned": ("bias",)}, r"^learned must be distinct"),
])
def test_bad_fields_are_named(kwargs, match):
    fields = {"name": "s", "position": "rope", "transform": NoScale(), **kwargs}
    with pytest.raises(ValueError, match=match):
        Scheme(**fields)


def test_tau_is_the_transform_field_and_only_where_it_exists():
    si = Scheme("si", "p-rope", ScaleInvariant(10.0))
    assert si.takes_tau and si.tau == 10.0
    assert si.with_tau(2.5).transform == ScaleInvariant(2.5)
    assert si.with_tau(None) is si
    with pytest.raises(ValueError, match=r"^tau: scheme 'logn' has no"):
        Scheme("logn", "p-rope", LogN(0.4)).with_tau(1.0)
    assert Scheme("learned", "rope", NoScale(), learned="score_scale").learned == LEARNED


def test_a_rule_gets_the_context_it_names():
    def rule(*, train_length, length):
        return LogN(length / train_length)

    scheme = Scheme("ratio", "rope", rule)
    assert scheme.transform_for(4, 100, 300) == LogN(3.0)
    with pytest.raises(ValueError, match="depends on train_length and length"):
        scheme.transform_for(4)
    heads = Scheme("by-heads", "rope", lambda h: LogN(0.1 * h))  # one other parameter: heads
    assert heads.transform_for(5) == LogN(0.5)
    with pytest.raises(ValueError, match="must return a Transform"):
        Scheme("bad", "rope", lambda h: 1.0).transform_for(2)


def test_at_binds_the_encoding_and_drops_noscale():
    bound = Scheme("rope", "rope", NoScale(), "plain").at(4096, 1024)
    assert bound == BoundScheme("rope", RoPE(ROPE_BASE), None, "plain")
    assert POSITIONS["p-rope"](1024, 4096) == PRoPESI()
    si = Scheme("si", "p-rope", ScaleInvariant(10.0)).at(4096, 1024, base=5e5)
    assert si.position == PRoPESI() and si.score_mod == ScaleInvariant(10.0)
