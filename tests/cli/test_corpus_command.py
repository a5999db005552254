"""``sia-theory corpus build`` and ``sia-theory train --corpus``: 0 with the folder built (or
trained on), 2 with one line on stderr and nothing written for bad input; the registry build
with a fake downloader (no network)."""

import json
import random

import pytest

import sia_theory.cli as command
import sia_theory.training.registry_corpus as registry
from sia_theory.training.shards import MANIFEST, read_manifest
from tests.training.test_registry_corpus import write_sdist


def _text_folder(folder, n=12):
    rng = random.Random(0)
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa".split()
    folder.mkdir()
    for i in range(n):
        size = 20_000 if i % 3 == 0 else 1500
        (folder / f"d{i}.txt").write_text(" ".join(rng.choice(words) for _ in range(size // 6)))
    return folder


def _run(argv, capsys):
    code = command.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_build_writes_a_shard_folder_and_reuses_it(tmp_path, capsys):
    source = _text_folder(tmp_path / "text")
    out = tmp_path / "shards"
    code, stdout, _ = _run(["corpus", "build", str(source), "--out", str(out), "--vocab",
                            "300", "--no-progress"], capsys)
    assert code == 0 and "tokens" in stdout and "text 100.0%" in stdout
    manifest = read_manifest(out)
    assert manifest["tokenizer"]["vocab_size"] == 300
    stamp = (out / MANIFEST).stat().st_mtime_ns
    code, _, err = _run(["corpus", "build", str(source), "--out", str(out), "--vocab", "300"],
                        capsys)
    assert code == 0 and not err and (out / MANIFEST).stat().st_mtime_ns == stamp  # reused


@pytest.mark.parametrize(("argv", "message"), [
    (["MISSING", "--out", "OUT"], "source must be an existing"),
    (["BAD.jsonl", "--out", "OUT", "--text-field", "body"], "text_field"),
    (["EMPTY", "--out", "OUT"], "holds no"),
    (["TEXT", "--out", "OUT", "--vocab", "12"], "--vocab"),
    (["TEXT"], "--out is required"),
    (["TEXT", "--registry", "--out", "OUT"], "either SOURCE"),
])
def test_bad_input_is_one_line_exit_2_nothing_written(argv, message, tmp_path, capsys):
    _text_folder(tmp_path / "TEXT", 3)
    (tmp_path / "EMPTY").mkdir()
    (tmp_path / "BAD.jsonl").write_text(json.dumps({"text": "x"}) + "\n")
    names = {"MISSING": "missing", "BAD.jsonl": "BAD.jsonl", "EMPTY": "EMPTY", "TEXT": "TEXT",
             "OUT": "out"}
    args = [str(tmp_path / names[a]) if a in names else a for a in argv]
    with pytest.raises(SystemExit) if "--vocab" in message else _no_exit() as stop:
        code, _, err = _run(["corpus", "build", *args], capsys)
    if stop is not None:
        code, err = stop.value.code, capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


class _no_exit:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def test_train_on_a_text_folder_and_on_its_shards(tmp_path, capsys):
    pytest.importorskip("jax")
    source = _text_folder(tmp_path / "text")
    store = tmp_path / "store"
    code, stdout, _ = _run(["train", "--scheme", "p-rope", "--quick", "--corpus", str(source),
                            "--out", str(store), "--no-progress"], capsys)
    assert code == 0 and "loss_1L" in stdout
    cache = tmp_path / "store-corpus"
    assert read_manifest(cache)["tokenizer"]["vocab_size"] == 320  # the quick settings' BPE
    held = json.loads((store / "training.json").read_text())["train"]
    assert held["corpus_checksum"] and held["vocab_size"] == 320
    # the same data as a shard folder: the same store cell, nothing trained again
    code, _, _ = _run(["train", "--scheme", "p-rope", "--quick", "--corpus", str(cache),
                       "--out", str(store), "--no-progress"], capsys)
    assert code == 0
    code, _, err = _run(["train", "--scheme", "p-rope", "--quick", "--corpus",
                         str(tmp_path / "nowhere"), "--out", str(tmp_path / "s2")], capsys)
    assert code == 2 and err.count("\n") == 1 and "corpus" in err
    assert not (tmp_path / "s2").exists() and not (tmp_path / "s2-corpus").exists()


def _fake_archive(tmp_path):
    """A tiny sdist: docs (prose), a module tree (code), tests (left out)."""
    files = {"fake-1.0/docs/index.rst": "Fake\n====\n\n" + "Some prose here. " * 1500,
             "fake-1.0/docs/guide.md": "# Guide\n\n" + "More words to read. " * 400,
             "fake-1.0/fake/__init__.py": "def f(x):\n    return x + 1\n" * 300,
             "fake-1.0/fake/tests/test_f.py": "assert True\n",
             "fake-1.0/setup.py": "setup()\n"}
    return write_sdist(tmp_path / "fake" / "fake-1.0.tar.gz", files)


def test_registry_build_with_a_fake_download(tmp_path, monkeypatch, capsys):
    import hashlib
    import shutil

    archive = _fake_archive(tmp_path)
    sha = hashlib.sha256(archive.read_bytes()).hexdigest()
    fake = registry.Package("fake", "1.0", "fake-1.0.tar.gz", sha, "MIT", ("docs",), ("fake",))
    fetched = []

    def download(package, folder):
        fetched.append(package.name)
        shutil.copy(archive, folder / package.file)
        return folder / package.file

    monkeypatch.setattr(registry, "download", download)
    monkeypatch.setattr(registry, "PACKAGES", (fake,))
    out = tmp_path / "corpus" / "registry"
    code, stdout, _ = _run(["corpus", "build", "--registry", "--out", str(out), "--vocab",
                            "300", "--no-progress"], capsys)
    assert code == 0 and fetched == ["fake"] and "prose" in stdout
    manifest = json.loads((out / MANIFEST).read_text())
    names = [d["name"] for d in manifest["validation"]["documents"]]
    assert names == ["prose:fake/docs/index.rst"]  # the one document of 16000 characters
    [row] = manifest["extra"]["packages"]
    assert row["name"] == "fake" and row["licence"] == "MIT" and row["sha256"] == sha
    assert set(row["tokens"]) == {"prose", "code"}
    assert set(manifest["tokens"]["by_kind"]) == {"prose", "code"}
    # the archive is kept: a rebuild downloads nothing
    assert _run(["corpus", "build", "--registry", "--out", str(out), "--vocab", "300"],
                capsys)[0] == 0 and fetched == ["fake"]
    # an archive of another checksum: one line, exit 1
    bad = registry.Package("fake", "1.0", "fake-1.0.tar.gz", "0" * 64, "MIT", ("docs",),
                           ("fake",))
    monkeypatch.setattr(registry, "PACKAGES", (bad,))
    code, _, err = _run(["corpus", "build", "--registry", "--out", str(tmp_path / "o2"),
                         "--vocab", "300"], capsys)
    assert code == 1 and "pinned " + "0" * 64 in err.strip().splitlines()[-1]
