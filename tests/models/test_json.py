"""``read_json``: every way a config.json fails to be one JSON document is one ValueError
naming the file; a key given twice is read once when the values agree and refused when not."""

import pytest

from sia_theory.models._json import read_json


def test_a_document_is_read_and_an_agreeing_repeat_is_one_key(tmp_path):
    path = tmp_path / "config.json"
    path.write_text('{"a": 1, "b": {"c": [1, 2]}, "a": 1}', encoding="utf-8")
    assert read_json(path) == {"a": 1, "b": {"c": [1, 2]}}


@pytest.mark.parametrize("text, match", [
    ('{"a": 1, "a": 2}', r"the key 'a' is given twice with different values \(1 and 2\)"),
    ('{"a": 1,}', "is not valid JSON"),
    ("[" * 100_000 + "]" * 100_000, "is not valid JSON"),
    (b"\xff\xfe{}", "is not valid JSON"),
])
def test_bad_documents_are_refused_naming_the_file(tmp_path, text, match):
    path = tmp_path / "config.json"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=match) as caught:
        read_json(path, label="config ")
    assert str(caught.value).startswith(f"config {path}")


def test_an_unreadable_path_is_refused_naming_it(tmp_path):
    with pytest.raises(ValueError, match="cannot be read"):
        read_json(tmp_path)  # a folder, not a file
