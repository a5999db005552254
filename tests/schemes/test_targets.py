"""sia_theory.schemes.targets, by its own name: a transform named on a command line
(``zoo:NAME``, ``FILE.py:OBJECT``, ``MODULE:OBJECT``; the object a Transform, a Transform class
or a bare score_mod function) is loaded with a name, and every bad target is one
:class:`TargetError` (a ``ValueError``) saying what is wrong. The command line's own handling of
targets is tested in tests/cli/test_command.py and tests/bad_input/test_hardening.py."""

import math
import sys

import numpy as np
import pytest

from sia_theory.schemes.targets import TargetError, load_transform
from sia_theory.transforms import LogN, ScaleInvariant
from sia_theory.transforms.score_mod import ScoreModTransform
from sia_theory.zoo import ZOO

RULES = """\
from dataclasses import dataclass

import numpy as np

from sia_theory.transforms import ScaleInvariant, Transform

si_three = ScaleInvariant(3.0)
not_a_transform = 42


@dataclass(frozen=True)
class HalfBias(Transform):
    c: float = 0.5
    depends_on = frozenset({"distance"})

    def affine(self, t, n, h):
        return np.ones_like(t), -self.c * np.log1p(t)


@dataclass(frozen=True)
class NeedsArgument(Transform):
    c: float

    def affine(self, t, n, h):
        return np.ones_like(t), np.zeros_like(t)


class Holder:
    inner = ScaleInvariant(4.0)
"""


@pytest.fixture
def rules(tmp_path, monkeypatch):
    path = tmp_path / "target_rules.py"
    path.write_text(RULES)
    monkeypatch.delitem(sys.modules, "_sia_user_target_rules", raising=False)
    return path


def test_target_error_is_a_value_error():
    assert issubclass(TargetError, ValueError)


def test_a_zoo_target_is_the_zoo_member():
    transform, name = load_transform("zoo:logn")
    assert transform is ZOO["logn"] and transform == LogN(0.4) and name == "logn"
    transform, name = load_transform("zoo:scale-invariant")
    assert transform == ScaleInvariant(10.0) and name == "scale-invariant"


def test_an_unknown_zoo_member_is_refused_listing_the_members():
    with pytest.raises(TargetError, match="^zoo has no member 'nope'; choose from none, "):
        load_transform("zoo:nope")


@pytest.mark.parametrize("target", ["nope", ":logn", "zoo:", ""])
def test_a_target_without_module_and_object_is_refused(target):
    with pytest.raises(TargetError, match="^TARGET must be MODULE:OBJECT, FILE.py:OBJECT or "
                                          "zoo:NAME"):
        load_transform(target)


def test_a_file_target_loads_an_instance_a_class_and_a_nested_attribute(rules):
    transform, name = load_transform(f"{rules}:si_three")
    assert transform == ScaleInvariant(3.0) and name == "si_three"
    transform, name = load_transform(f"{rules}:HalfBias")  # a class: built without arguments
    assert type(transform).__name__ == "HalfBias" and name == "HalfBias"
    a, m = transform.coefficients(np.array([0.0, 3.0]))
    np.testing.assert_array_equal(a, 1.0)
    np.testing.assert_allclose(m, [0.0, -0.5 * math.log(4.0)], rtol=1e-15)
    transform, name = load_transform(f"{rules}:Holder.inner")
    assert transform == ScaleInvariant(4.0) and name == "inner"


def test_load_transform_reads_a_module_function(tmp_path):
    (tmp_path / "mods.py").write_text(
        "import numpy as np\n\n"
        "def si(score, b, h, q_idx, kv_idx):\n"
        "    ell = np.log1p((q_idx - kv_idx) / 10.0)\n"
        "    return np.sqrt(1 + 2 * ell) * score - 2 * ell\n\n"
        "def square(score, b, h, q_idx, kv_idx):\n"
        "    return score ** 2\n")
    member, name = load_transform(f"{tmp_path / 'mods.py'}:si")
    assert isinstance(member, ScoreModTransform) and name == "si"
    a, _ = member.coefficients(np.array([0.0, 90.0]), 1000)
    np.testing.assert_allclose(a, [1.0, math.sqrt(1 + 2 * math.log(10))], rtol=1e-14)
    with pytest.raises(TargetError, match="square is not affine"):
        load_transform(f"{tmp_path / 'mods.py'}:square")


def test_a_module_target_is_imported_from_the_path(tmp_path, monkeypatch):
    (tmp_path / "sia_target_module_xyz.py").write_text(
        "from sia_theory.transforms import LogN\nrule = LogN(0.25)\n")
    monkeypatch.syspath_prepend(tmp_path)
    monkeypatch.delitem(sys.modules, "sia_target_module_xyz", raising=False)
    transform, name = load_transform("sia_target_module_xyz:rule")
    assert transform == LogN(0.25) and name == "rule"
    monkeypatch.delitem(sys.modules, "sia_target_module_xyz")


@pytest.mark.parametrize(("obj", "match"), [
    ("NeedsArgument", "NeedsArgument is a Transform class that cannot be built without "
                      "arguments .*TypeError"),
    ("not_a_transform", "not_a_transform is not a sia_theory Transform or a score_mod function "
                        r"\(got int\)"),
    ("Holder", r"Holder is not a sia_theory Transform .*\(got type\)"),
    ("missing", "has no attribute 'missing'"),
])
def test_a_file_object_that_is_no_transform_is_refused_naming_it(rules, obj, match):
    with pytest.raises(TargetError, match=match):
        load_transform(f"{rules}:{obj}")


def test_a_missing_failing_or_exiting_file_is_a_target_error(tmp_path):
    with pytest.raises(TargetError, match="^TARGET file .*absent.py' does not exist"):
        load_transform(f"{tmp_path / 'absent.py'}:rule")
    (tmp_path / "failing.py").write_text("1 / 0\n")
    with pytest.raises(TargetError, match="^cannot import .*failing.py'.*ZeroDivisionError"):
        load_transform(f"{tmp_path / 'failing.py'}:rule")
    (tmp_path / "exiting.py").write_text("import sys\nsys.exit(7)\n")
    with pytest.raises(TargetError, match=r"called sys\.exit\(7\)"):
        load_transform(f"{tmp_path / 'exiting.py'}:rule")


def test_an_object_of_a_file_travels_by_value(rules, monkeypatch):
    """A file target's objects pickle by value (for Dask workers that cannot import the file):
    they unpickle with the file's module gone."""
    cloudpickle = pytest.importorskip("cloudpickle")
    transform, _ = load_transform(f"{rules}:HalfBias")
    payload = cloudpickle.dumps(transform)
    monkeypatch.delitem(sys.modules, "_sia_user_target_rules")
    rules.unlink()
    copy = cloudpickle.loads(payload)
    t = np.array([0.0, 1.0, 9.0])
    np.testing.assert_array_equal(copy.coefficients(t)[1], transform.coefficients(t)[1])
