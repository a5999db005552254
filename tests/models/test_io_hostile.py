"""Hostile-but-realistic input on the model I/O surfaces: ``from_hf_config`` (a path or a dict),
``load_pretrained`` of a Hugging Face folder or a GGUF file, and ``sia-theory analyze
--hf-config``. Wrong types, empty files, folders where files are expected, files that cannot be
read, huge, negative and NaN numbers, unicode paths, a config.json that is a list, keys given
twice. Every case asserts its outcome: a ``ValueError`` whose message names the file or the key
(the command: exit status 2, one line on stderr, no traceback, nothing written), or, for the
negative controls, success."""

import builtins
import io
import json
import os
import re
import struct

import numpy as np
import pytest

import sia_theory.cli as command
from sia_theory.models import load_pretrained
from sia_theory.models.hf_config import from_hf_config

BASE = {"hidden_size": 64, "num_attention_heads": 4}


def _unreadable(monkeypatch, path):
    """``path`` cannot be opened (PermissionError): chmod 000, and as root (who reads it
    anyway) ``open`` refusing it."""
    os.chmod(path, 0)
    real = builtins.open

    def refusing(file, *args, **kwargs):
        if os.fspath(file) == os.fspath(path):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", refusing)
    monkeypatch.setattr(io, "open", refusing)


# --- from_hf_config: a path ----------------------------------------------------------------

def _text(text, name="config.json"):
    def make(d):
        (d / name).write_text(text, encoding="utf-8")
        return d / name
    return make


def _bytes(data):
    def make(d):
        (d / "config.json").write_bytes(data)
        return d / "config.json"
    return make


def _folder(d):
    (d / "config.json").mkdir()
    return d / "config.json"


def _unicode(text):
    def make(d):
        (d / "模型 é").mkdir()
        (d / "模型 é" / "config.json").write_text(text, encoding="utf-8")
        return d / "模型 é" / "config.json"
    return make


PATHS = {
    "empty-file": (_text(""), r"config .*config\.json is not valid JSON"),
    "whitespace-only": (_text(" \n\t"), r"config .*config\.json is not valid JSON"),
    "a-folder": (_folder, r"config must be a config\.json path or a dict, got .* \(a folder\)"),
    "missing": (lambda d: d / "absent.json",
                r"config must be a config\.json path or a dict, got .* \(no such file\)"),
    "a-list": (_text("[1, 2]"), r"config must hold a JSON object, got list"),
    "a-string": (_text('"llama"'), r"config must hold a JSON object, got str"),
    "a-number": (_text("4096"), r"config must hold a JSON object, got int"),
    "null": (_text("null"), r"config must hold a JSON object, got NoneType"),
    "not-utf8": (_bytes(b'{"hidden_size": "\xff\xfe"}'), r"config\.json is not valid JSON"),
    "utf8-bom": (_bytes(b"\xef\xbb\xbf" + json.dumps(BASE).encode()),
                 r"config\.json is not valid JSON"),
    "truncated-json": (_text('{"hidden_size": 64, "num_attention'),
                       r"config\.json is not valid JSON"),
    "nested-past-recursion": (_text("[" * 100000 + "]" * 100000),
                              r"config\.json is not valid JSON: maximum recursion depth"),
    "duplicate-key-differing": (_text('{"hidden_size": 64, "num_attention_heads": 4, '
                                      '"hidden_size": 128}'),
                                r"config\.json: the key 'hidden_size' is given twice with "
                                r"different values \(64 and 128\)"),
    "duplicate-key-in-rope-dict": (_text(json.dumps(BASE)[:-1] + ', "rope_scaling": '
                                         '{"rope_type": "linear", "factor": 2.0, "factor": 4.0}}'),
                                   r"the key 'factor' is given twice"),
    "nan-literal-theta": (_text(json.dumps(BASE)[:-1] + ', "rope_theta": NaN}'),
                          r"rope_theta must be a finite real number > 1, got nan"),
    "infinity-literal-max": (_text(json.dumps(BASE)[:-1] + ', "max_position_embeddings": '
                                   'Infinity}'),
                             r"max_position_embeddings must be an integer >= 1"),
    "1e400-max": (_text(json.dumps(BASE)[:-1] + ', "max_position_embeddings": 1e400}'),
                  r"max_position_embeddings must be an integer >= 1"),
    "unicode-path-bad-content": (_unicode("[]"), r"config must hold a JSON object, got list"),
}


@pytest.mark.parametrize("name", list(PATHS))
def test_from_hf_config_of_a_hostile_path(tmp_path, name):
    make, match = PATHS[name]
    with pytest.raises(ValueError, match=match):
        from_hf_config(make(tmp_path))


def test_from_hf_config_of_an_unreadable_file(tmp_path, monkeypatch):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(BASE))
    _unreadable(monkeypatch, path)
    with pytest.raises(ValueError, match=r"config .*config\.json cannot be read \(Permission "
                       r"denied\)"):
        from_hf_config(path)


def test_from_hf_config_of_a_path_too_long_or_with_a_nul_byte():
    with pytest.raises(ValueError, match=r"config must be a config\.json path or a dict, got "
                       r"'a+.* \(not a usable path: File name too long\)"):
        from_hf_config("a" * 5000)
    with pytest.raises(ValueError, match=r"config must be a config\.json path or a dict"):
        from_hf_config("con\0fig.json")


@pytest.mark.parametrize("good", ["unicode-path", "duplicate-key-same-value"])
def test_from_hf_config_negative_controls(tmp_path, good):
    """A unicode path reads (its folder names the model); a key given twice with one value is
    not a contradiction."""
    if good == "unicode-path":
        assert from_hf_config(_unicode(json.dumps(BASE))(tmp_path)).name == "模型 é"
    else:
        path = _text('{"hidden_size": 64, "num_attention_heads": 4, "hidden_size": 64}')(
            tmp_path)
        assert from_hf_config(path).head_dim == 16


# --- from_hf_config: a dict -----------------------------------------------------------------

DICTS = {
    "nan-string-theta": ({**BASE, "rope_theta": "NaN"},
                         r"rope_theta must be a finite real number > 1, got 'NaN'"),
    "negative-theta": ({**BASE, "rope_theta": -1e4}, r"rope_theta must be a finite real number"),
    "huge-int-max": ({**BASE, "max_position_embeddings": 10**30},
                     r"max_position_embeddings must be an integer >= 1 and <= 9223372036854775807"),
    "negative-max": ({**BASE, "max_position_embeddings": -1},
                     r"max_position_embeddings must be an integer >= 1"),
    "negative-hidden": ({**BASE, "hidden_size": -64}, r"hidden_size must be an integer >= 1"),
    "bool-hidden": ({**BASE, "hidden_size": True}, r"hidden_size must be an integer >= 1"),
    "string-hidden": ({**BASE, "hidden_size": "64"}, r"hidden_size must be an integer >= 1"),
    "list-heads": ({**BASE, "num_attention_heads": [4]},
                   r"num_attention_heads must be an integer >= 1"),
    "empty": ({}, r"config must give head_dim \(or qk_rope_head_dim\), or hidden_size and "
              r"num_attention_heads"),
    "text-config-list": ({**BASE, "text_config": [BASE]}, r"text_config must be a dict"),
    "rope-scaling-string": ({**BASE, "rope_scaling": "yarn"}, r"rope_scaling must be a dict"),
    "rope-type-list": ({**BASE, "rope_scaling": {"type": ["yarn"]}},
                       r"rope_type must be one of .*, got \['yarn'\]"),
    "rope-type-int": ({**BASE, "rope_scaling": {"rope_type": 3}},
                      r"rope_type must be one of .*, got 3"),
    "factor-string": ({**BASE, "rope_scaling": {"rope_type": "linear", "factor": "2"}},
                      r"factor must be a finite real number > 0, got '2'"),
    "factor-negative": ({**BASE, "rope_scaling": {"rope_type": "linear", "factor": -2.0}},
                        r"factor must be a finite real number > 0, got -2\.0"),
    "short-factor-string": ({**BASE, "max_position_embeddings": 8192, "rope_scaling": {
        "rope_type": "longrope", "short_factor": "abc", "long_factor": [1.0] * 8,
        "original_max_position_embeddings": 4096}},
        r"short_factor must be a non-empty list of positive numbers"),
    "short-factor-strings": ({**BASE, "max_position_embeddings": 8192, "rope_scaling": {
        "rope_type": "longrope", "short_factor": ["1"] * 8, "long_factor": [1.0] * 8,
        "original_max_position_embeddings": 4096}},
        r"short_factor must be a non-empty list of positive numbers"),
    "long-factor-ragged": ({**BASE, "max_position_embeddings": 8192, "rope_scaling": {
        "rope_type": "longrope", "short_factor": [1.0] * 8, "long_factor": [[1.0], 1.0],
        "original_max_position_embeddings": 4096}},
        r"long_factor must be a non-empty list of positive numbers"),
    "partial-above-1": ({**BASE, "partial_rotary_factor": 2.0},
                        r"partial_rotary_factor must be a finite real number > 0 and <= 1"),
    "grok-length-string": ({**BASE, "attn_temperature_len": "x"},
                           r"attn_temperature_len must be a finite real number"),
    "softcap-negative": ({**BASE, "attn_logit_softcapping": -1.0},
                         r"attn_logit_softcapping must be a finite real number > 0"),
    "multiplier-string": ({**BASE, "attention_multiplier": "0.1"},
                          r"attention_multiplier must be a finite real number > 0"),
    "bytes": (b"config.json", r"config must be a config\.json path or a dict, got b'config"),
    "none": (None, r"config must be a config\.json path or a dict, got None"),
    "a-list-object": ([BASE], r"config must be a config\.json path or a dict, got \["),
}


@pytest.mark.parametrize("name", list(DICTS))
def test_from_hf_config_of_a_hostile_dict(name):
    config, match = DICTS[name]
    with pytest.raises(ValueError, match=match):
        from_hf_config(config)


# --- load_pretrained(folder) ----------------------------------------------------------------

def _rewrite(path, change):
    path.write_text(change(path.read_text()))


def _two_shards(f):
    from safetensors.numpy import load_file, save_file

    tensors = load_file(f / "model.safetensors")
    save_file({"model.norm.weight": tensors["model.norm.weight"]},
              str(f / "model-00002.safetensors"))


def _config_key(**keys):
    def change(f):
        config = json.loads((f / "config.json").read_text())
        config.update(keys)
        (f / "config.json").write_text(json.dumps(config))
    return change


FOLDERS = {
    "config-empty": (lambda f: (f / "config.json").write_text(""),
                     r"config\.json is not valid JSON"),
    "config-a-folder": (lambda f: ((f / "config.json").unlink(), (f / "config.json").mkdir()),
                        r"must be a folder with config\.json and \*\.safetensors"),
    "config-a-list": (lambda f: (f / "config.json").write_text("[]"),
                      r"config\.json must hold a JSON object, got list|config must hold a JSON "
                      r"object, got list"),
    "config-duplicate-key": (lambda f: _rewrite(f / "config.json", lambda t: t[:-1] +
                                                ', "vocab_size": 21}'),
                             r"config\.json: the key 'vocab_size' is given twice"),
    "config-nan-vocab": (lambda f: _rewrite(f / "config.json", lambda t: t.replace(
        '"vocab_size": 20', '"vocab_size": NaN')), r"config\.json: vocab_size must be an integer"),
    "config-rope-scaling-string": (_config_key(rope_scaling="linear"),
                                   r"config\.json: rope_scaling must be a dict"),
    "config-sliding-window-string": (_config_key(model_type="mistral", sliding_window="4k"),
                                     r"config\.json: sliding_window must be an integer >= 1"),
    "config-model-type-missing": (lambda f: _rewrite(f / "config.json", lambda t: t.replace(
        '"model_type": "llama", ', "")), r"config\.json has model_type None; supported"),
    "no-config": (lambda f: (f / "config.json").unlink(),
                  r"must be a folder with config\.json and \*\.safetensors"),
    "no-safetensors": (lambda f: (f / "model.safetensors").unlink(),
                       r"must be a folder with config\.json and \*\.safetensors"),
    "safetensors-empty": (lambda f: (f / "model.safetensors").write_bytes(b""),
                          r"model\.safetensors is not a safetensors file \(shorter than its "
                          r"header length\)"),
    "safetensors-garbage": (lambda f: (f / "model.safetensors").write_bytes(
        np.random.default_rng(0).bytes(4096)),
        r"model\.safetensors: its header length \d+ runs past the end of the file"),
    "safetensors-empty-header": (lambda f: (f / "model.safetensors").write_bytes(
        struct.pack("<Q", 0)), r"model\.safetensors is not a safetensors file"),
    "safetensors-a-folder": (lambda f: ((f / "model.safetensors").unlink(),
                                        (f / "model.safetensors").mkdir()),
                             r"model\.safetensors cannot be read"),
    "same-tensor-in-two-shards": (_two_shards, r"tensor 'model\.norm\.weight' is in both "
                                  r"model-00002\.safetensors and model\.safetensors"),
}


@pytest.mark.parametrize("name", list(FOLDERS))
def test_load_pretrained_of_a_hostile_folder(tmp_path, tiny_folder, name):
    damage, match = FOLDERS[name]
    folder = tiny_folder(tmp_path / "model")
    damage(folder)
    with pytest.raises(ValueError, match=match):
        load_pretrained(str(folder))


@pytest.mark.parametrize("which", ["config.json", "model.safetensors"])
def test_load_pretrained_of_a_folder_with_an_unreadable_file(tmp_path, tiny_folder,
                                                             monkeypatch, which):
    folder = tiny_folder(tmp_path / "model")
    _unreadable(monkeypatch, folder / which)
    with pytest.raises(ValueError, match=rf"{which.replace('.', '[.]')} cannot be read "
                       r"\(Permission denied\)"):
        load_pretrained(str(folder))


def test_load_pretrained_of_a_unicode_folder(tmp_path, tiny_folder):
    """Negative control: a folder named in another script loads."""
    model, _ = load_pretrained(str(tiny_folder(tmp_path / "модель 模型")))
    assert model.load_info["source"].endswith("модель 模型")


# --- load_pretrained(file.gguf) --------------------------------------------------------------

GGUFS = {
    "empty": (b"", r"the model file .*x\.gguf is not a GGUF file: it starts with b''"),
    "other-magic": (b"PK\x03\x04" + bytes(60), r"x\.gguf is not a GGUF file: it starts with "
                    r"b'PK"),
    "magic-then-garbage": (b"GGUF" + np.random.default_rng(1).bytes(200),
                           r"the model file .*x\.gguf is corrupt: not a readable GGUF file"),
    "magic-only": (b"GGUF", r"the model file .*x\.gguf is corrupt: not a readable GGUF file"),
}


@pytest.mark.parametrize("name", list(GGUFS))
def test_load_pretrained_of_a_hostile_gguf(tmp_path, name):
    pytest.importorskip("gguf")
    data, match = GGUFS[name]
    (tmp_path / "x.gguf").write_bytes(data)
    with pytest.raises(ValueError, match=match):
        load_pretrained(str(tmp_path / "x.gguf"))


def test_load_pretrained_of_a_missing_or_unreadable_gguf(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match=r"the model file .*absent\.gguf does not exist"):
        load_pretrained(str(tmp_path / "absent.gguf"))
    (tmp_path / "x.gguf").write_bytes(b"GGUF" + bytes(60))
    _unreadable(monkeypatch, tmp_path / "x.gguf")
    with pytest.raises(ValueError, match=r"the model file .*x\.gguf cannot be read "
                       r"\(Permission denied\)"):
        load_pretrained(str(tmp_path / "x.gguf"))


# --- sia-theory analyze --hf-config ---------------------------------------------------------

def _run(argv, capsys):
    """``(status, stderr)`` of ``sia-theory ARGV`` in this process."""
    try:
        status = command.main(argv)
    except SystemExit as stop:  # argparse: usage errors and --help
        status = stop.code
    return status, capsys.readouterr()


CLI = {
    "missing": (lambda d: ["--hf-config", str(d / "absent.json")], r"\(no such file\)"),
    "a-folder": (lambda d: ["--hf-config", str(d)], r"\(a folder\)"),
    "empty-file": (lambda d: ["--hf-config", str(_text("")(d))], r"is not valid JSON"),
    "a-list": (lambda d: ["--hf-config", str(_text("[]")(d))],
               r"config must hold a JSON object, got list"),
    "duplicate-key": (lambda d: ["--hf-config", str(_text('{"hidden_size": 64, "hidden_size": '
                                                         '32}')(d))],
                      r"the key 'hidden_size' is given twice"),
    "max-position-0": (lambda d: ["--hf-config", str(_text(json.dumps(
        {**BASE, "max_position_embeddings": 0}))(d))],
        r"max_position_embeddings must be an integer >= 1"),
    "rope-scaling-string": (lambda d: ["--hf-config", str(_text(json.dumps(
        {**BASE, "rope_scaling": "yarn"}))(d))], r"rope_scaling must be a dict"),
    "nan-theta": (lambda d: ["--hf-config", str(_text(json.dumps(BASE)[:-1] +
                                                      ', "rope_theta": NaN}')(d))],
                  r"rope_theta must be a finite real number > 1, got nan"),
    "nested-past-recursion": (lambda d: ["--hf-config",
                                         str(_text("[" * 100000 + "]" * 100000)(d))],
                              r"is not valid JSON: maximum recursion depth"),
    "unicode-path": (lambda d: ["--hf-config", str(_unicode("[1]")(d))],
                     r"config must hold a JSON object, got list"),
    "with-a-target": (lambda d: ["zoo:logn", "--hf-config", str(_text(json.dumps(BASE))(d))],
                      r"give a TARGET, --hf-config or --model, one of them"),
    "with-head": (lambda d: ["--hf-config", str(_text(json.dumps(BASE))(d)), "--head", "0"],
                  r"--head selects a head of a TARGET"),
    "n-ctx-negative": (lambda d: ["--hf-config", str(_text(json.dumps(BASE))(d)), "--n-ctx",
                                  "-5"], r"argument --n-ctx: expected an integer >= 256"),
    "n-ctx-huge-float": (lambda d: ["--hf-config", str(_text(json.dumps(BASE))(d)), "--n-ctx",
                                    "1e400"], r"argument --n-ctx: expected an integer"),
    "out-a-file": (lambda d: ["--hf-config", str(_text(json.dumps(BASE))(d)), "--out",
                              str(_text("x", "a-file")(d))], r"argument --out: output folder"),
}


@pytest.mark.parametrize("name", list(CLI))
def test_analyze_hf_config_of_hostile_input_is_one_line_status_2_nothing_written(
        tmp_path, capsys, name):
    args, match = CLI[name]
    out = tmp_path / "report"
    argv = ["analyze", *args(tmp_path), "--quick", "--no-progress"]
    if "--out" not in argv:
        argv += ["--out", str(out)]
    status, streams = _run(argv, capsys)
    assert status == 2, streams.err
    lines = streams.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sia-theory analyze: error: "), streams.err
    assert "Traceback" not in streams.err and streams.out == ""
    assert re.search(match, lines[0]), lines[0]
    assert not out.exists()


def test_analyze_hf_config_of_an_unreadable_file(tmp_path, capsys, monkeypatch):
    path = _text(json.dumps(BASE))(tmp_path)
    _unreadable(monkeypatch, path)
    status, streams = _run(["analyze", "--hf-config", str(path), "--quick", "--out",
                            str(tmp_path / "report")], capsys)
    assert status == 2 and len(streams.err.strip().splitlines()) == 1
    assert "cannot be read (Permission denied)" in streams.err
    assert not (tmp_path / "report").exists()


def test_analyze_help_names_hf_config(capsys):
    status, streams = _run(["analyze", "--help"], capsys)
    assert status == 0 and "--hf-config" in streams.out and streams.err == ""
