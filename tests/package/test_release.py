"""The release: the wheel's package list is the package's, the version is one number, and a wheel
installed with its declared dependencies into a fresh environment, outside the repository,
runs the command (a claim, an analysis, one figure, the benchmark list) with nothing of the
checkout or of the development environment on its path."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

import sia_theory

ROOT = Path(__file__).resolve().parents[2]

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = None


def _pyproject() -> dict:
    if tomllib is None:
        pytest.skip("tomllib needs Python 3.11")
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_the_wheel_lists_every_package_of_the_library():
    """The explicit package list (needed to map experiments/ and benchmarks/ into the wheel)
    misses no subpackage: every folder of sia_theory/ holding an __init__.py (the claims are
    sia_theory.claims; the repository's paper_checks/ alias is not installed)."""
    config = _pyproject()["tool"]["setuptools"]
    listed = set(config["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts)
             for top in ("sia_theory",) for p in (ROOT / top).rglob("__init__.py")
             if "__pycache__" not in p.parts}
    assert found <= listed, f"add to [tool.setuptools] packages: {sorted(found - listed)}"
    assert listed - found == {"sia_theory._experiments", "sia_theory._benchmarks"}
    assert config["package-dir"] == {"sia_theory._experiments": "experiments",
                                     "sia_theory._benchmarks": "benchmarks"}


def test_one_version_number():
    """pyproject reads the version from sia_theory.__version__; the changelog has its entry and
    the command prints it."""
    project = _pyproject()["project"]
    assert project["dynamic"] == ["version"] and "version" not in project
    assert re.fullmatch(r"\d+\.\d+\.\d+", sia_theory.__version__)
    assert f"## [{sia_theory.__version__}]" in (ROOT / "CHANGELOG.md").read_text()
    out = subprocess.run([sys.executable, "-m", "sia_theory", "--version"],
                         capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == f"sia-theory {sia_theory.__version__}"


def test_the_project_addresses_share_one_base():
    """[project.urls] names the five addresses an index shows; Homepage, Changelog and Issues
    are the repository's (Source), and CITATION.cff names the same repository and
    documentation. Negative control: an address off the base is refused by the same check."""
    urls = _pyproject()["project"]["urls"]
    assert set(urls) == {"Homepage", "Documentation", "Source", "Changelog", "Issues"}
    assert all(re.fullmatch(r"https://[\w.-]+(/[\w.~/-]*)?", u) for u in urls.values()), urls
    source = urls["Source"]

    def off_base(addresses):
        return {k: v for k, v in addresses.items()
                if k != "Documentation" and not (v == source or v.startswith(source + "/"))}

    assert not off_base(urls)
    assert off_base(dict(urls, Issues="https://github.com/someone-else/sia-theory/issues"))
    assert urls["Homepage"] == source
    assert urls["Changelog"] == f"{source}/blob/main/CHANGELOG.md"
    assert urls["Issues"] == f"{source}/issues"
    cff = (ROOT / "CITATION.cff").read_text()
    assert f'repository-code: "{source}"' in cff and f'url: "{urls["Documentation"]}"' in cff


def test_licence_is_apache_2():
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert _pyproject()["project"]["license"] == "Apache-2.0"


def _run(argv, cwd, env, timeout=600):
    out = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                         timeout=timeout)
    assert out.returncode == 0, f"{argv} exited {out.returncode}:\n{out.stdout}\n{out.stderr}"
    return out.stdout


def _install_with_dependencies(python, wheel, cwd, env):
    """``pip install WHEEL`` with its dependencies, from the sources pip is configured with
    (index, local indexes, find-links, cache). Skipped, saying why, only when that fails and
    PyPI itself cannot be reached (offline, and no local source holds every dependency);
    with PyPI reachable a failed install fails the test."""
    out = subprocess.run([str(python), "-m", "pip", "install", "--quiet",
                          "--disable-pip-version-check", "--retries", "1", "--timeout", "30",
                          "--prefer-binary", str(wheel)], cwd=cwd, env=env,
                         capture_output=True, text=True, timeout=1200)
    if out.returncode == 0:
        return
    probe = subprocess.run([str(python), "-m", "pip", "download", "--isolated", "--no-deps",
                            "--no-cache-dir", "--retries", "0", "--timeout", "15", "--dest",
                            str(cwd / "probe"), "tqdm"], cwd=cwd, env=env,
                           capture_output=True, text=True, timeout=120)
    last = (out.stderr.strip().splitlines() or ["?"])[-1]
    if probe.returncode != 0:
        pytest.skip(f"the wheel's dependencies could not be installed and PyPI is not "
                    f"reachable (offline): {last}")
    raise AssertionError(f"pip install {wheel.name} exited {out.returncode}:\n{out.stderr}")


needs_source_tree = pytest.mark.skipif(
    not (ROOT / ".git").exists() and not (ROOT / "PKG-INFO").exists(),
    reason="needs the source tree")


def _build(kind: str, tmp_path) -> Path:
    """``python -m build --KIND`` (wheel or sdist) of a copy of the sources, without build/:
    setuptools never removes what an earlier build left in build/lib (a module since moved
    would ship again)."""
    pytest.importorskip("build")
    dist = tmp_path / "dist"
    source = tmp_path / "source"
    if not source.exists():
        shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
            ".venv", "build", ".git", "__pycache__", "figures", "docs", "scratch", ".hypothesis",
            "*.egg-info", "dist"))
    _run([sys.executable, "-m", "build", f"--{kind}", "--no-isolation", "--outdir", str(dist),
          str(source)], cwd=tmp_path, env=dict(os.environ))
    (built,) = dist.glob("sia_theory-*.whl" if kind == "wheel" else "sia_theory-*.tar.gz")
    return built


def _check_wheel_names(names: list[str]) -> None:
    assert "sia_theory/_experiments/si_coefficients.py" in names
    assert "sia_theory/_benchmarks/bench_cas.py" in names
    assert "sia_theory/claims/core.py" in names
    assert "sia_theory/py.typed" in names  # PEP 561: type checkers read the annotations
    assert not [n for n in names if n.startswith("paper_checks/")]  # a generic top-level name
    assert not [n for n in names if n.startswith(("tests/", "experiments/", "figures/"))
                or "__pycache__" in n]


def test_the_typing_marker_is_package_data():
    """``sia_theory/py.typed`` exists, is empty (PEP 561: a marker) and is declared package data
    of ``sia_theory`` (include-package-data is off); the only other package data is the registry
    corpus's committed manifest, which a rebuild is checked against."""
    assert (ROOT / "sia_theory" / "py.typed").read_bytes() == b""
    config = _pyproject()["tool"]["setuptools"]
    assert config["include-package-data"] is False
    assert config["package-data"] == {"sia_theory": ["py.typed"],
                                      "sia_theory.training": ["registry_corpus.json"]}
    assert (ROOT / "sia_theory" / "training" / "registry_corpus.json").is_file()


def test_a_wheel_without_the_marker_is_caught():
    """Negative control: the wheel check refuses a file list that lacks the marker."""
    names = ["sia_theory/_experiments/si_coefficients.py", "sia_theory/_benchmarks/bench_cas.py",
             "sia_theory/claims/core.py", "sia_theory/__init__.py"]
    with pytest.raises(AssertionError):
        _check_wheel_names(names)
    _check_wheel_names(names + ["sia_theory/py.typed"])


@needs_source_tree  # a wheel and an sdist built from a copy of the sources: a few seconds
def test_the_wheel_and_the_sdist_ship_the_typing_marker(tmp_path):
    """The built wheel holds the modules, the scripts and ``sia_theory/py.typed``, and nothing
    of the repository's other folders; the sdist holds the marker too."""
    _check_wheel_names(zipfile.ZipFile(_build("wheel", tmp_path)).namelist())
    with tarfile.open(_build("sdist", tmp_path)) as sdist:
        names = [n.split("/", 1)[1] for n in sdist.getnames() if "/" in n]
    assert "sia_theory/py.typed" in names and "sia_theory/claims/core.py" in names


@pytest.mark.slow  # the dependencies installed into a fresh environment: 1-2 minutes
@needs_source_tree
def test_the_wheel_works_outside_the_repository(tmp_path):
    """Build the wheel, install it WITH its declared dependencies into a fresh virtual
    environment (pip's own configuration: its index, local indexes and find-links, its cache;
    nothing borrowed from this environment, so a dependency missing from pyproject fails here),
    and run the command from a folder that is not a checkout."""
    wheel = _build("wheel", tmp_path)
    _check_wheel_names(zipfile.ZipFile(wheel).namelist())

    venv = tmp_path / "venv"
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "SIA_THEORY_REPO",
                        "SIA_QUICK_CLAIMS")}
    _run([sys.executable, "-m", "venv", str(venv)], cwd=tmp_path, env=env)
    python = venv / "bin" / "python"
    _install_with_dependencies(python, wheel, tmp_path, env)
    site = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                     cwd=tmp_path, env=env).strip())
    deps = _run([str(python), "-c", "import numpy, scipy, pandas, numba, sympy, pyarrow, tqdm; "
                 "print(numpy.__file__); print(pyarrow.__file__)"], cwd=tmp_path, env=env)
    assert all(line.startswith(str(site)) for line in deps.split()), deps
    assert sysconfig.get_path("purelib") not in _run(
        [str(python), "-c", "import sys; print(sys.path)"], cwd=tmp_path, env=env)

    work = tmp_path / "work"  # not a checkout, and none above it
    work.mkdir()
    command = [str(python), "-m", "sia_theory"]
    where = _run([str(python), "-c", "import sia_theory, sia_theory.claims as c; "
                  "print(sia_theory.__file__); print(c.__file__)"], cwd=work, env=env)
    assert all(line.startswith(str(site)) for line in where.split()), where
    assert _run(command + ["--version"], cwd=work, env=env).strip() == \
        f"sia-theory {sia_theory.__version__}"
    out = _run(command + ["check", "--quick", "--only", "SI-1", "--out", "claims"],
               cwd=work, env=env)
    assert "claims: 1 passed, 0 failed" in out
    _run(command + ["analyze", "zoo:logn", "--quick", "--no-zoo", "--out", "reports"],
         cwd=work, env=env)
    assert (work / "reports" / "analysis_logn.md").is_file()
    _run(command + ["figures", "--quick", "--only", "si_coefficients"], cwd=work, env=env)
    assert (work / "figures" / "si_coefficients.png").is_file()
    listing = subprocess.run(command + ["bench", "--only", "nope"], cwd=work, env=env,
                             capture_output=True, text=True, timeout=120)
    assert listing.returncode == 2 and "cas" in listing.stderr  # the wheel's benchmarks, found
    assert not (site / "build").exists() and not (site / "figures").exists()
