"""The registry corpus: the default real training corpus, built from pinned source
distributions on PyPI (documentation as prose, Python modules as code).

:data:`PACKAGES` pins each source distribution (name, version, file, SHA-256, licence) and
says where its documentation and its code are. :func:`build_registry_corpus` downloads them
with ``pip download --no-deps --no-binary :all: NAME==VERSION`` (once; kept in a download
folder), refuses an archive whose SHA-256 differs from the table, and writes a shard folder
(:mod:`.shards`) of these documents, in this order (packages in the table's order):

* **prose** (``prose:<package>/<path>``): every ``.rst``, ``.md`` and ``.txt`` file under the
  package's documentation folders (``prose_roots``), in the sorted order of their paths;
* **code** (``code:<package>/<path>``): ``.py`` files under its source folders
  (``code_roots``), taken in the order of the SHA-256 of their names, each file that still fits
  in :data:`CODE_PER_PROSE` times the package's prose characters (a file that would overflow it
  is skipped and the next, smaller one tried; all of them for a package with less code), then
  in the sorted order of their paths: the share of prose stays above a third
  (code tokenizes to about 2.9 characters a token, prose 2.7).

Files under a folder named ``test``, ``tests`` or ``testing`` (any case) are left out (test data
and fixtures), and so is every other file; text is decoded as UTF-8 (invalid bytes replaced).
The manifest's ``extra.packages`` lists every package with its version, file, SHA-256,
licence, and its prose and code token counts; :data:`EXPECTED_MANIFEST` (committed) is the
manifest of the build, and a build is checked against it (its :func:`~.shards.manifest_checksum`:
the same sources, tokenizer, shard checksums and counts), so a rebuild is byte-identical or an
error. Packages whose build requirements need compiling with ``--no-binary :all:`` (numpy,
pandas, astropy, matplotlib, scikit-learn, statsmodels) cannot be downloaded this way and are
not in the table.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

from .._infra.fileset import file_sha256
from .shards import build_from_documents, manifest_checksum

__all__ = ["Package", "PACKAGES", "CODE_PER_PROSE", "PROSE_SUFFIXES", "EXPECTED_MANIFEST",
           "RegistryError", "download", "fetch_archives", "registry_documents",
           "build_registry_corpus", "expected_manifest", "REGISTRY", "REGISTRY_FOLDER",
           "registry_folder"]

CODE_PER_PROSE = 2.0
"""Code characters taken per prose character of a package (at most)."""
PROSE_SUFFIXES = (".rst", ".md", ".txt")
"""Documentation files read as prose."""
EXPECTED_MANIFEST = Path(__file__).with_name("registry_corpus.json")
"""The committed manifest of the registry corpus (a build is checked against it)."""
REGISTRY = "registry"
"""The name ``TrainSettings(corpus=...)`` takes for the registry corpus wherever it is built: its
data are pinned by :data:`EXPECTED_MANIFEST` (so settings, and the store keys of their runs,
are the same on every machine), and the folder is found when a run reads it
(:func:`registry_folder`)."""
REGISTRY_FOLDER = "build/corpus/registry"
"""Where ``make corpus`` (``sia-theory corpus build --registry``) builds the registry corpus,
relative to the working folder (the repository's root for ``make``)."""
_TEST_DIR = re.compile(r"(^|/)(tests?|testing)(/|$)", re.IGNORECASE)


class RegistryError(RuntimeError):
    """A download failed, an archive does not match its pinned SHA-256, or a build differs
    from :data:`EXPECTED_MANIFEST`."""


@dataclass(frozen=True)
class Package:
    """One pinned source distribution: ``name``, ``version``, its ``file`` name and
    ``sha256``, its ``licence`` (SPDX, from its metadata and licence file), and the folders
    (relative to the archive's top folder) of its documentation (``prose_roots``) and of its
    code (``code_roots``)."""

    name: str
    version: str
    file: str
    sha256: str
    licence: str
    prose_roots: tuple
    code_roots: tuple


PACKAGES = (
    Package("awscli", "1.46.3", "awscli-1.46.3.tar.gz",
            "9b1146f4159bdf98688d900e2ffd0ac05c18f7fb28641c6b0817e64574e3ce1f", "Apache-2.0",
            ("awscli/examples", "awscli/topics"), ("awscli",)),
    Package("celery", "5.7.0", "celery-5.7.0.tar.gz",
            "6a5dfcf6662287204f009a02002b9e66c83d4105e47ebabdc7079108772fc6f0", "BSD-3-Clause",
            ("docs",), ("celery",)),
    Package("cython", "3.3.1", "cython-3.3.1.tar.gz",
            "e0e45989e821bef6aa9ae15c7d583ab5e055f7406c4b3624e49e06d24e90375a", "Apache-2.0",
            ("docs",), ("Cython",)),
    Package("django", "5.2.19", "django-5.2.19.tar.gz",
            "ad03d8abc51dbff95ebf34b27123cf0c26a3b62db7ba0cd520783686362533d1", "BSD-3-Clause",
            ("docs",), ("django",)),
    Package("docutils", "0.23", "docutils-0.23.tar.gz",
            "746f5060322511280a1e50eb76846ed6bf2342984b2ac04dc42caa1a8d78799e",
            "LicenseRef-Public-Domain AND BSD-2-Clause", ("docs",), ("docutils",)),
    Package("ipython", "9.18.1", "ipython-9.18.1.tar.gz",
            "6319c0f5372c196397899479e6db1783dd7937abae06815d1317e8d5d51aaaaf", "BSD-3-Clause",
            ("docs",), ("IPython",)),
    Package("networkx", "3.6.1", "networkx-3.6.1.tar.gz",
            "26b7c357accc0c8cde558ad486283728b65b6a95d85ee1cd66bafab4c8168509", "BSD-3-Clause",
            ("doc",), ("networkx",)),
    Package("pip", "26.3", "pip-26.3.tar.gz",
            "6c36ae7da8695be67e3cd9f7d87919667ced53f57ce2ede75d89b5912ed2bc4c", "MIT",
            ("docs",), ("src",)),
    Package("pytest", "9.2.0", "pytest-9.2.0.tar.gz",
            "97c4f3b1f3c7414aa36465e09b8220f1d03627993bd51b1282e193753c80557b", "MIT",
            ("doc",), ("src",)),
    Package("salt", "3008.5", "salt-3008.5.tar.gz",
            "0259deafd601d783721e5aa8ed10677d8c4d6cc12f5de17499af71590d593315", "Apache-2.0",
            ("doc",), ("salt",)),
    Package("scrapy", "2.19.0", "scrapy-2.19.0.tar.gz",
            "34130726582b64c91531162ab277c4053e558876d49ba219cb43679e71d80a87", "BSD-3-Clause",
            ("docs",), ("scrapy",)),
    Package("sphinx", "9.0.4", "sphinx-9.0.4.tar.gz",
            "594ef59d042972abbc581d8baa577404abe4e6c3b04ef61bd7fc2acbd51f3fa3", "BSD-2-Clause",
            ("doc",), ("sphinx",)),
    Package("sqlalchemy", "2.1.9", "sqlalchemy-2.1.9.tar.gz",
            "d700a8b2edfb26282a470333d6bc4a454c4acda4d201a3bea7b72fa76c217d28", "MIT",
            ("doc",), ("lib",)),
    Package("sympy", "1.14.0", "sympy-1.14.0.tar.gz",
            "d3d3fe8df1e5a0b42f0e7bdf50541697dbe7d23746e894990c030e2b05e72517", "BSD-3-Clause",
            ("doc",), ("sympy",)),
    Package("twisted", "26.10.0", "twisted-26.10.0.tar.gz",
            "5f0355403e507fc23ceea85e9dbb4bc59335aabde41dd324e8b8cea180dd38de", "MIT",
            ("docs",), ("src",)),
)
"""The pinned source distributions, in the corpus's order."""
_PINNED = PACKAGES  # the table the committed manifest was built from


def download(package: Package, folder: Path) -> Path:
    """Download ``package``'s source distribution into ``folder`` with ``pip download
    --no-deps --no-binary :all: NAME==VERSION`` (the network); returns its path."""
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
               "--quiet", f"{package.name}=={package.version}", "-d", str(folder)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        tail = " ".join(done.stderr.split()[-40:])
        raise RegistryError(f"pip download {package.name}=={package.version} failed "
                            f"(status {done.returncode}): {tail}")
    return folder / package.file


def fetch_archives(folder, packages=None, progress=None) -> list:
    """The path of every package's archive in ``folder``, downloaded (:func:`download`)
    unless a file of the pinned SHA-256 is there already; :class:`RegistryError` for an
    archive whose SHA-256 differs from the table."""
    say = progress or (lambda message: None)
    packages = PACKAGES if packages is None else packages
    folder = Path(os.fspath(folder))
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for package in packages:
        path = folder / package.file
        if not (path.is_file() and file_sha256(path) == package.sha256):
            say(f"downloading {package.name}=={package.version}")
            path = download(package, folder)
        held = file_sha256(path) if path.is_file() else "no file"
        if held != package.sha256:
            raise RegistryError(f"{package.file}: SHA-256 {held}, pinned {package.sha256}; "
                                f"the registry served another file")
        paths.append(path)
    return paths


def _under(rel: str, roots) -> bool:
    return any(rel == root or rel.startswith(root.rstrip("/") + "/") for root in roots)


def _package_documents(package: Package, archive: Path) -> list:
    """``[(name, text), ...]`` of one archive: its prose, then its code (module docstring)."""
    prose, code = [], []
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar:
            if not member.isfile() or "/" not in member.name:
                continue
            rel = member.name.split("/", 1)[1]
            if _TEST_DIR.search(rel):
                continue
            lower = rel.lower()
            if lower.endswith(PROSE_SUFFIXES) and _under(rel, package.prose_roots):
                target = prose
            elif lower.endswith(".py") and _under(rel, package.code_roots):
                target = code
            else:
                continue
            data = tar.extractfile(member).read()
            text = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace",
                                    newline="").read()
            if text.strip():
                target.append((rel, text))
    prose.sort()
    budget = CODE_PER_PROSE * sum(len(t) for _, t in prose)
    chosen, used = [], 0
    for rel, text in sorted(code, key=lambda d: hashlib.sha256(
            f"code:{package.name}/{d[0]}".encode()).digest()):
        if used + len(text) > budget:
            continue
        chosen.append((rel, text))
        used += len(text)
    return ([(f"prose:{package.name}/{rel}", t) for rel, t in prose]
            + [(f"code:{package.name}/{rel}", t) for rel, t in sorted(chosen)])


def registry_documents(archives, packages=None) -> list:
    """``[(name, text), ...]`` of every package (default :data:`PACKAGES`) from its archive,
    in the table's order (module docstring)."""
    packages = PACKAGES if packages is None else packages
    docs = []
    for package, archive in zip(packages, archives):
        docs += _package_documents(package, Path(archive))
    return docs


def _package_of(name: str) -> str:
    return name.split(":", 1)[1].split("/", 1)[0]


def expected_manifest() -> dict | None:
    """The committed manifest of the registry corpus (``None`` if absent)."""
    if not EXPECTED_MANIFEST.is_file():
        return None
    return json.loads(EXPECTED_MANIFEST.read_text())


def registry_folder() -> Path:
    """The folder holding the registry corpus: ``$SIA_THEORY_REGISTRY_CORPUS`` if set, else
    :data:`REGISTRY_FOLDER` under the working folder; ``ValueError`` naming ``corpus`` (with the
    command that builds it) if it holds no shard folder. Its data are checked against
    :data:`EXPECTED_MANIFEST` when read (:func:`.shards.shard_data`)."""
    folder = Path(os.environ.get("SIA_THEORY_REGISTRY_CORPUS") or Path.cwd() / REGISTRY_FOLDER)
    if not (folder / "manifest.json").is_file():
        raise ValueError(f"corpus {REGISTRY!r}: {str(folder)!r} holds no registry corpus; build "
                         f"it with `make corpus` (sia-theory corpus build --registry, about 2 "
                         f"minutes and 62 MiB once the archives are downloaded) or set "
                         f"SIA_THEORY_REGISTRY_CORPUS to the folder that holds it")
    return folder


def build_registry_corpus(out, *, downloads=None, vocab_size: int = 2048, packages=None,
                          check: bool = True, progress=None) -> dict:
    """Download the pinned archives and build the registry corpus into the shard folder
    ``out``.

    Parameters
    ----------
    out : str or os.PathLike
        The shard folder (e.g. ``build/corpus/registry``).
    downloads : str or os.PathLike, optional
        Where the archives are kept (default: ``sdists`` beside ``out``).
    vocab_size : int
        BPE vocabulary, ``258 … 65536`` (the committed manifest is of 2048).
    packages : tuple of Package, optional
        The table (default :data:`PACKAGES`).
    check : bool
        Compare the result with :data:`EXPECTED_MANIFEST` (for the default table and
        vocabulary).
    progress : callable, optional
        ``progress(message)`` at each stage.

    Returns
    -------
    dict
        The manifest; ``extra.packages`` lists every package with its token counts.

    Raises
    ------
    RegistryError
        A download failed, an archive differs from its pinned SHA-256, or (``check``) the
        build differs from the committed manifest.
    ValueError
        Naming ``vocab_size`` or ``out``.
    """
    packages = PACKAGES if packages is None else tuple(packages)
    out = Path(os.fspath(out))
    downloads = out.parent / "sdists" if downloads is None else Path(os.fspath(downloads))
    archives = fetch_archives(downloads, packages, progress)
    table = [{"name": p.name, "version": p.version, "file": p.file, "sha256": p.sha256,
              "licence": p.licence, "prose_roots": list(p.prose_roots),
              "code_roots": list(p.code_roots)} for p in packages]
    recipe = {"registry": table, "code_per_prose": CODE_PER_PROSE,
              "prose_suffixes": list(PROSE_SUFFIXES)}
    cache: list = []

    def documents():
        if not cache:
            cache.extend(registry_documents(archives, packages))
        return iter(cache)

    def extra(manifest):
        counts = manifest["tokens"]["by_group"]
        return {"packages": [{**{k: row[k] for k in ("name", "version", "file", "sha256",
                                                     "licence")},
                              "tokens": counts.get(row["name"], {})} for row in table]}

    manifest = build_from_documents(documents, out, vocab_size=vocab_size, recipe=recipe,
                                    group_of=_package_of, extra=extra, progress=progress)
    expected = expected_manifest()
    if check and packages == _PINNED and vocab_size == 2048 and expected is not None:
        if manifest_checksum(manifest) != manifest_checksum(expected):
            differ = [k for k in sorted(set(manifest) | set(expected))
                      if k != "created_by" and manifest.get(k) != expected.get(k)]
            # the folder must not look finished: without its manifest no run can use it
            (Path(out) / "manifest.json").unlink(missing_ok=True)
            raise RegistryError(f"the build in {out} differs from the committed manifest "
                                f"{EXPECTED_MANIFEST.name} in {', '.join(differ)} (another "
                                f"tokenizers version?); its manifest.json was removed, so the "
                                f"folder is not used for training")
    return manifest
