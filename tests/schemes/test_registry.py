"""sia_theory.schemes.registry, by its own name: every registered name resolves to its one
:class:`~sia_theory.schemes.scheme.Scheme`, with the position encoding and the transform of the
table in :mod:`sia_theory.schemes`'s docstring; a user's ``TARGET[@position]`` becomes a scheme;
bad names and τ are one ``ValueError`` naming them; and the post-hoc τ (:func:`si_tau`) keeps
SI eq. 16's multiplier within ε inside the training context. (The deprecated :data:`ALIASES`
warn: tests/test_deprecated.py.)"""

import math

import numpy as np
import pytest

from sia_theory.schemes.registry import (
    ALIASES,
    SCHEMES,
    SI_EPSILON,
    SI_TAU,
    get_scheme,
    resolve_scheme,
    scheme_names,
    si_tau,
)
from sia_theory.schemes.scheme import Scheme
from sia_theory.transforms import ALiBi, LogN, NoScale, ScaleInvariant
from sia_theory.zoo import ZOO, Llama4Temperature, QwenLogN, YaRNTemperature

H, L, N = 8, 1000, 4000  # heads, training length, length used at (s = n/L = 4)
TABLE = {  # the module docstring's table, at H, L and N
    "rope": ("rope", NoScale()),
    "p-rope": ("p-rope", NoScale()),
    "nope": ("nope", NoScale()),
    "alibi": ("nope", ALiBi.standard(H)),
    "logn-p-rope": ("p-rope", LogN(0.4)),
    "logn-p-rope-learned": ("p-rope", LogN(0.4)),
    "rope-ntk": ("rope-ntk", NoScale()),
    "yarn": ("yarn", YaRNTemperature(4.0)),
    "qwen-logn": ("rope", QwenLogN(L)),
    "llama4": ("rope", Llama4Temperature(float(L), 0.1)),
    "si-p-rope": ("p-rope", ScaleInvariant(10.0)),
    "si-rope": ("rope", ScaleInvariant(10.0)),
    "si-nope": ("nope", ScaleInvariant(10.0)),
    "si-rope-posthoc": ("rope", ScaleInvariant(si_tau(L))),  # si_tau: the last two tests
}


def test_the_registry_is_the_documented_table_in_its_order():
    assert scheme_names() == tuple(TABLE) == tuple(SCHEMES)


@pytest.mark.parametrize("name", list(TABLE))
def test_every_name_resolves_to_its_one_scheme(name):
    scheme = SCHEMES[name]
    assert isinstance(scheme, Scheme) and scheme.name == name
    assert resolve_scheme(name) is scheme and get_scheme(name) is scheme
    position, transform = TABLE[name]
    assert scheme.position == position
    assert scheme.transform_for(H, L, N) == transform


def test_logn_schemes_are_the_zoo_member_and_si_has_the_default_tau():
    assert SCHEMES["logn-p-rope"].transform is ZOO["logn"]
    assert SI_TAU == 10.0 and SCHEMES["si-p-rope"].tau == SI_TAU
    assert resolve_scheme("si-p-rope", 1.0).transform == ScaleInvariant(1.0)
    assert SCHEMES["si-p-rope"].transform == ScaleInvariant(10.0)  # the registry is unchanged


def test_aliases_name_registered_schemes_under_other_names():
    assert dict(ALIASES) == {"ntk": "rope-ntk", "scale-invariant": "si-rope-posthoc"}
    assert set(ALIASES.values()) <= set(SCHEMES) and not set(ALIASES) & set(SCHEMES)


def test_a_scheme_object_passes_through_with_its_tau():
    mine = Scheme("mine", "rope", ScaleInvariant(3.0))
    assert resolve_scheme(mine) is mine
    assert resolve_scheme(mine, 7.0).transform == ScaleInvariant(7.0)


@pytest.mark.parametrize(("target", "position"), [("zoo:logn", "p-rope"),
                                                  ("zoo:logn@rope", "rope"),
                                                  ("zoo:logn@nope", "nope")])
def test_a_user_target_becomes_a_scheme_on_its_position(target, position):
    scheme = resolve_scheme(target)
    assert scheme.name == target and scheme.position == position
    assert scheme.transform is ZOO["logn"]


def test_unknown_scheme_named():
    with pytest.raises(ValueError, match="scheme must be one of"):
        resolve_scheme("si")


@pytest.mark.parametrize("scheme, tau, match", [
    ("no-such-scheme", None, "scheme"), ("si-p-rope", 0.0, "tau"), ("si-p-rope", -1, "tau"),
    ("si-p-rope", float("inf"), "tau"), ("rope", 10.0, "tau"),
    ("no_such_module_xyz:rule", None, "scheme"), ("zoo:logn@sideways", None, "position")])
def test_bad_scheme_or_tau_is_a_value_error_naming_it(scheme, tau, match):
    with pytest.raises(ValueError, match=match):
        resolve_scheme(scheme, tau)


@pytest.mark.parametrize("scheme", ["", None, 3, ("rope",)])
def test_an_empty_or_non_string_scheme_is_a_value_error_naming_it(scheme):
    with pytest.raises(ValueError, match="^scheme must be a name"):
        resolve_scheme(scheme)


def test_si_tau_keeps_the_multiplier_within_epsilon_inside_the_training_context():
    tau = si_tau(8192, 0.1)
    a, _ = ScaleInvariant(tau).coefficients(np.array([0.0, 4096.0, 8192.0, 16384.0]))
    assert a[2] == pytest.approx(1.1, rel=1e-12) and a[1] < 1.1 < a[3]


def test_si_tau_defaults_and_scales_with_the_training_length():
    # a_L² = (1 + ε)² with a_t² = 1 + 2 log(1 + t/τ): τ = L/(exp(((1 + ε)² − 1)/2) − 1)
    assert SI_EPSILON == 0.1
    assert si_tau() == pytest.approx(8192 / math.expm1(0.105), rel=1e-14)
    assert si_tau(4096) == pytest.approx(si_tau(8192) / 2, rel=1e-14)
    a, _ = ScaleInvariant(si_tau(1000, 0.5)).coefficients(np.array([1000.0]))
    assert a[0] == pytest.approx(1.5, rel=1e-12)
