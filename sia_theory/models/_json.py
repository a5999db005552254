"""Reading a model's ``config.json``: one ``ValueError`` naming the file for every way it can
fail to be a JSON document (unreadable, not UTF-8, not JSON, nested past Python's recursion
limit) and for a key given twice with different values (``json`` would keep the last one
silently, as transformers does; a file that says two things is refused here)."""

from __future__ import annotations

import json

__all__ = ["read_json"]


class _ConflictingKey(ValueError):
    """A JSON object gives one key twice with different values."""


def _unique(pairs) -> dict:
    out = {}
    for key, value in pairs:
        if key in out and out[key] != value:
            raise _ConflictingKey(f"the key {key!r} is given twice with different values "
                                  f"({out[key]!r:.40} and {value!r:.40})")
        out[key] = value
    return out


def read_json(path, label: str = ""):
    """The JSON document at ``path``; ``ValueError`` starting ``f"{label}{path}"`` if it cannot
    be read, is not UTF-8 JSON, or gives a key twice with different values."""
    where = f"{label}{path}"
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle, object_pairs_hook=_unique)
    except OSError as err:
        raise ValueError(f"{where} cannot be read ({err.strerror or err})") from None
    except _ConflictingKey as err:
        raise ValueError(f"{where}: {err}") from None
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
        raise ValueError(f"{where} is not valid JSON: {err}") from None
