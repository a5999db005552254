"""sia_theory.training.registry_corpus, exercised by its own name and offline: the pinned table
is well formed, the committed manifest is the table's and holds what the corpus promises
(>= 30 M tokens, at least a third prose), the download step with a fake downloader (an
archive of another checksum refused), and the selection of documents from an archive."""

import hashlib
import io
import re
import shutil
import tarfile

import pytest

from sia_theory.training.registry_corpus import (
    CODE_PER_PROSE,
    PACKAGES,
    Package,
    RegistryError,
    expected_manifest,
    fetch_archives,
    registry_documents,
)
from sia_theory.training.shards import manifest_checksum


def test_every_package_is_pinned_with_a_checksum_and_a_licence():
    assert len(PACKAGES) >= 10
    assert len({p.name for p in PACKAGES}) == len(PACKAGES)
    for p in PACKAGES:
        assert re.fullmatch(r"[0-9a-f]{64}", p.sha256), p.name
        assert re.fullmatch(r"[0-9][0-9a-z.]*", p.version), p.name
        assert p.file == f"{p.name}-{p.version}.tar.gz"
        assert p.licence and p.prose_roots and p.code_roots, p.name


def test_the_committed_manifest_is_the_tables_and_meets_the_promise():
    manifest = expected_manifest()
    assert manifest is not None
    rows = manifest["extra"]["packages"]
    assert [(r["name"], r["version"], r["sha256"], r["licence"]) for r in rows] == [
        (p.name, p.version, p.sha256, p.licence) for p in PACKAGES]
    assert manifest["recipe"]["code_per_prose"] == CODE_PER_PROSE
    tokens = manifest["tokens"]
    prose = tokens["by_kind"]["prose"]["train"] + tokens["by_kind"]["prose"]["validation"]
    assert tokens["total"] >= 30_000_000 and prose >= tokens["total"] / 3
    assert manifest["tokenizer"]["vocab_size"] == 2048 and manifest["dtype"] == "uint16"
    per_package = sum(sum(r["tokens"].values()) for r in rows)
    assert per_package == tokens["total"]
    assert sum(s["tokens"] for s in manifest["train_shards"]) == tokens["train"]
    assert all(re.fullmatch(r"[0-9a-f]{64}", s["sha256"]) for s in manifest["train_shards"])
    assert len(manifest_checksum(manifest)) == 64


def _archive(folder, name="fake", version="1.0"):
    top = f"{name}-{version}"
    files = {f"{top}/docs/b.rst": "B prose. " * 200,
             f"{top}/docs/a.md": "A prose. " * 100,
             f"{top}/docs/img.png": "not text",
             f"{top}/docs/tests/data.txt": "fixture",
             f"{top}/{name}/core.py": "x = 1\n" * 300,  # 1800 characters
             f"{top}/{name}/util.py": "y = 2\n" * 200,  # 1200
             f"{top}/{name}/big.py": "z = 3\n" * 600,  # 3600
             f"{top}/{name}/Tests/test_core.py": "assert True\n",
             f"{top}/setup.py": "setup()\n"}
    return write_sdist(folder / f"{top}.tar.gz", files)


def write_sdist(path, files: dict):
    """A ``.tar.gz`` at ``path`` holding ``{member: text}`` (a fake source distribution)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tar:
        for member, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(member)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_download_with_a_fake_downloader_checks_the_pinned_checksum(tmp_path, monkeypatch):
    import sia_theory.training.registry_corpus as registry

    made = _archive(tmp_path / "src")
    sha = hashlib.sha256(made.read_bytes()).hexdigest()
    package = Package("fake", "1.0", "fake-1.0.tar.gz", sha, "MIT", ("docs",), ("fake",))
    calls = []

    def download(p, folder):
        calls.append(p.name)
        shutil.copy(made, folder / p.file)
        return folder / p.file

    monkeypatch.setattr(registry, "download", download)
    [path] = fetch_archives(tmp_path / "dl", (package,))
    assert path == tmp_path / "dl" / "fake-1.0.tar.gz" and calls == ["fake"]
    fetch_archives(tmp_path / "dl", (package,))
    assert calls == ["fake"]  # kept: not downloaded again
    other = Package("fake", "1.0", "fake-1.0.tar.gz", "f" * 64, "MIT", ("docs",), ("fake",))
    with pytest.raises(RegistryError, match="pinned f{64}"):
        fetch_archives(tmp_path / "dl2", (other,))


def test_documents_are_the_docs_as_prose_and_the_code_up_to_its_budget(tmp_path):
    path = _archive(tmp_path)
    package = Package("fake", "1.0", "fake-1.0.tar.gz", "0" * 64, "MIT", ("docs",), ("fake",))
    docs = registry_documents([path], (package,))
    names = [n for n, _ in docs]
    prose = [n for n in names if n.startswith("prose:")]
    assert prose == ["prose:fake/docs/a.md", "prose:fake/docs/b.rst"]  # sorted, tests left out
    budget = CODE_PER_PROSE * (900 + 1800)  # the prose characters × CODE_PER_PROSE
    code = {n: t for n, t in docs if n.startswith("code:")}
    assert sum(len(t) for t in code.values()) <= budget
    assert "code:fake/fake/Tests/test_core.py" not in code and "code:fake/setup.py" not in code
    # taken in the order of their names' SHA-256 while they fit the budget
    order = sorted(["core.py", "util.py", "big.py"],
                   key=lambda f: hashlib.sha256(f"code:fake/fake/{f}".encode()).digest())
    sizes = {"core.py": 1800, "util.py": 1200, "big.py": 3600}
    taken, used = [], 0
    for f in order:
        if used + sizes[f] <= budget:
            taken.append(f)
            used += sizes[f]
    assert sorted(code) == sorted(f"code:fake/fake/{f}" for f in taken)


def test_a_build_that_differs_from_the_committed_manifest_is_not_left_usable(tmp_path,
                                                                            monkeypatch):
    """The check against the committed manifest fails: RegistryError, and the folder keeps no
    manifest.json, so training refuses it (it does not look finished)."""
    import sia_theory.training.registry_corpus as registry

    made = _archive(tmp_path / "src")
    sha = hashlib.sha256(made.read_bytes()).hexdigest()
    package = Package("fake", "1.0", "fake-1.0.tar.gz", sha, "MIT", ("docs",), ("fake",))
    shutil.copytree(tmp_path / "src", tmp_path / "dl")
    monkeypatch.setattr(registry, "_PINNED", (package,))
    monkeypatch.setattr(registry, "expected_manifest", lambda: {"tokens": {"total": 1}})
    out = tmp_path / "corpus"
    with pytest.raises(RegistryError, match="differs from the committed manifest"):
        registry.build_registry_corpus(out, downloads=tmp_path / "dl", packages=(package,))
    assert out.is_dir() and not (out / "manifest.json").exists()
    from sia_theory.training.settings import TrainSettings

    with pytest.raises(ValueError, match="corpus"):
        TrainSettings.quick().with_corpus(out)


def test_the_registry_corpus_by_name_needs_no_folder_until_a_run_reads_it(tmp_path, monkeypatch):
    """``corpus="registry"``: settings (and so store keys) pinned by the committed manifest on
    every machine; reading the data without a built folder is one clear ValueError."""
    from sia_theory.training.data import settings_data
    from sia_theory.training.registry_corpus import expected_manifest
    from sia_theory.training.settings import TrainSettings
    from sia_theory.training.shards import manifest_checksum

    monkeypatch.setenv("SIA_THEORY_REGISTRY_CORPUS", str(tmp_path / "absent"))
    s = TrainSettings.full().with_corpus("registry")
    assert s.corpus == "registry" and s.tokenizer == "bpe"
    assert s.vocab_size == expected_manifest()["tokenizer"]["vocab_size"] == 2048
    assert s.corpus_checksum == manifest_checksum(expected_manifest())
    assert TrainSettings.from_dict(s.to_dict()) == s
    with pytest.raises(ValueError, match=r"^corpus 'registry': .*absent.*make corpus"):
        settings_data(s)
