"""The one shape of a study's settings: a frozen dataclass whose defaults are the full-fidelity
run, with ``quick()`` the seconds-long variant the tests use; figure scripts and claims pick one
with ``Settings.of(quick)``, so both always run the same settings."""

from __future__ import annotations

__all__ = ["StudySettings"]


class StudySettings:
    """Mixin for frozen settings dataclasses: ``full()`` is the defaults, ``quick()`` (which a
    subclass defines) the CI-sized run, ``of(quick)`` the one a ``--quick`` flag asks for."""

    @classmethod
    def full(cls):
        return cls()

    @classmethod
    def quick(cls):
        raise NotImplementedError(f"{cls.__name__} must define quick(), its CI-sized settings")

    @classmethod
    def of(cls, quick: bool):
        return cls.quick() if quick else cls.full()
