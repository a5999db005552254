"""The trainer's corpus as text (:func:`sia_theory.training.data.texts`) and the model
studies' documents take their texts from one place, :mod:`sia_theory.models.corpus`: the
prose rule written out here as the trainer documents it (module docstring of
sia_theory/training/data.py) and as the model studies do (sia_theory/models/corpus.py,
``prose_documents``), the code documents against the standard library folder listed
another way (``glob`` rather than ``pkgutil``)."""

import hashlib
import sysconfig
from pathlib import Path
from pydoc_data.topics import topics

import numpy as np
import pytest

from sia_theory.models import corpus
from sia_theory.training import data


def _runs_written_out(sizes, threshold):
    """Consecutive runs of the sorted topics, each closed once its sizes reach ``threshold``,
    the last with what is left: ``[(keys, text)]``."""
    keys, runs, start = sorted(topics), [], 0
    while start < len(keys):
        stop, total = start, 0
        while stop < len(keys) and total < threshold:
            total += sizes[keys[stop]]
            stop += 1
        part = keys[start:stop]
        runs.append((tuple(part), "\n\n".join(topics[k] for k in part)))
        start = stop
    return runs


def test_the_trainers_prose_documents_follow_the_documented_rule():
    expected = _runs_written_out({k: len(v) for k, v in topics.items()}, data.PROSE_CHARS)
    assert list(corpus.prose_runs(len, data.PROSE_CHARS)) == expected
    prose = {name: text for name, text in data.texts() if name.startswith("prose:")}
    assert prose == {f"prose:{k[0]}..{k[-1]}": text for k, text in expected}
    assert all(len(text) >= data.PROSE_CHARS for _, text in expected[:-1])


def test_the_trainers_code_documents_are_the_standard_library_modules():
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    names = {p.stem for p in stdlib.glob("*.py") if p.stem.isidentifier()
             and not p.stem.startswith("_sysconfigdata")}
    code = {name[5:]: text for name, text in data.texts() if name.startswith("code:")}
    assert set(code) == names
    assert code["calendar"] == (stdlib / "calendar.py").read_text(encoding="utf-8")


def test_the_split_order_is_the_sha256_of_the_names():
    names = [name for name, _ in data.texts()]
    digests = [hashlib.sha256(n.encode()).hexdigest() for n in names]
    assert digests == sorted(digests) and len(set(names)) == len(names)


def test_the_model_studies_prose_runs_are_the_same_rule_in_tokens():
    def encode(text):  # an independent stand-in tokenizer: UTF-8 bytes
        return list(text.encode("utf-8"))

    n = 4096
    expected = _runs_written_out({k: len(encode(v)) for k, v in topics.items()}, n + 64)
    docs = corpus.prose_documents(encode, n, 5)
    assert [d.parts for d in docs] == [keys for keys, _ in expected[:5]]
    for d, (_, text) in zip(docs, expected, strict=False):
        np.testing.assert_array_equal(d.ids, np.asarray(encode(text)[:n]))


def test_the_old_name_of_texts_warns_and_still_works():
    with pytest.warns(DeprecationWarning, match="texts"):
        old = data.documents
    assert old is data.texts
