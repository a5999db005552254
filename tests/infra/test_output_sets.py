"""A figure's files (png, csv, json) and the claims table (md, csv) are published as one set:
a process SIGKILLed after any write step leaves the complete old set or the complete new set
(as read through the manifest), the next run finishes or removes what it left, files get the
umask's permissions, and nothing of ours is hidden from git."""

import importlib.util
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from sia_theory._infra import fileset  # noqa: E402
from sia_theory._infra.io import (  # noqa: E402
    SetNotFoundError,
    read_set,
    recover_sets,
    save_experiment,
    write_text,
)

ROOT = Path(__file__).resolve().parents[2]


def load_core():
    """sia_theory/claims/core.py alone: the writer under test, without importing every claim."""
    if "paper_checks_core_io" in sys.modules:
        return sys.modules["paper_checks_core_io"]
    spec = importlib.util.spec_from_file_location("paper_checks_core_io", ROOT / "sia_theory"
                                                  / "claims" / "core.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def figure_set(folder, seed):
    """Seed 0 writes data frames a and b; seed 1 writes only a (so the new set drops a file)."""
    fig, ax = plt.subplots(figsize=(2, 2))
    ax.plot([0, 1], [seed, seed + 1])
    ax.set_title(f"seed {seed}")
    frames = {"a": pd.DataFrame({"x": [seed + 0.5]})}
    if seed == 0:
        frames["b"] = pd.DataFrame({"y": [7]})
    try:
        save_experiment(folder, "demo", fig, frames, seed=seed, quick=True)
    finally:
        plt.close(fig)


def claims_set(folder, seed, core=None):
    core = core or load_core()
    table = pd.DataFrame([{c: None for c in core.COLUMNS} | {
        "id": f"T-{seed}", "verdict": "PASS", "value": float(seed), "claim": "c",
        "alternative": "a", "measured": f"seed {seed}", "detail": "d", "seconds": 0.0}])
    core.write_table(table, folder, quick=True, seed=seed)


def comparable(files: dict) -> dict:
    """File contents, with the creation time of the figure's JSON left out."""
    out = dict(files)
    for name, data in files.items():
        if name.endswith(".json") and not name.endswith(".manifest.json"):
            record = json.loads(data)
            out[name] = record["parameters"]
    return out


def labels_of(writer, folder, seed) -> list[str]:
    labels = []
    fileset.step_hook = lambda step, label: labels.append(label)
    try:
        writer(folder, seed)
    finally:
        fileset.step_hook = None
    return labels


def killed_at(step, writer, folder, seed) -> None:
    """Run ``writer`` in a forked child that SIGKILLs itself right after write step ``step``."""
    pid = os.fork()
    if pid == 0:  # child
        try:
            fileset.step_hook = lambda k, label: k == step and os.kill(os.getpid(), signal.SIGKILL)
            writer(folder, seed)
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)  # reaps the child, so its pid is dead for the next run
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL


def visible(folder: Path, stem: str) -> dict:
    return {p.name: p.read_bytes() for p in folder.iterdir()
            if not p.name.startswith(".") and p.name.startswith(stem)}


@pytest.mark.parametrize("kind", ["figure", "claims"])
def test_sigkill_after_every_write_step_leaves_the_old_or_the_new_set(kind, tmp_path):
    core = load_core() if kind == "claims" else None
    stem = "demo" if kind == "figure" else "claims"

    def writer(folder, seed):
        return figure_set(folder, seed) if kind == "figure" else claims_set(folder, seed, core)

    writer(tmp_path / "old", 0)
    old = read_set(tmp_path / "old", stem)
    labels = labels_of(writer, shutil.copytree(tmp_path / "old", tmp_path / "steps"), 1)
    new = read_set(tmp_path / "steps", stem)
    assert comparable(old) != comparable(new)
    assert (set(old) - set(new) == {"demo_b.csv"}) if kind == "figure" else set(old) == set(new)
    commit = labels.index("committed") + 1
    assert labels[-1] == "cleaned" and commit >= 4
    for step in range(1, len(labels) + 1):
        folder = shutil.copytree(tmp_path / "old", tmp_path / f"kill{step}")
        killed_at(step, writer, folder, 1)
        expected = old if step < commit else new
        assert comparable(read_set(folder, stem)) == comparable(expected), (step, labels[step - 1])
        recover_sets(folder)  # what the next run does first
        assert comparable(read_set(folder, stem)) == comparable(expected)
        on_disk = visible(folder, stem)
        manifest = on_disk.pop(f"{stem}.manifest.json")
        assert comparable(on_disk) == comparable(expected), "plain files differ from the set"
        assert set(json.loads(manifest)["files"]) == set(expected)
        assert not [p.name for p in folder.iterdir() if p.name.startswith(".")], "litter left"


def test_a_kill_while_rolling_a_killed_publish_forward_is_rolled_forward_again(tmp_path):
    figure_set(tmp_path / "old", 0)
    labels = labels_of(figure_set, shutil.copytree(tmp_path / "old", tmp_path / "ref"), 1)
    new = comparable(read_set(tmp_path / "ref", "demo"))
    first = labels.index("committed") + 2  # killed after the first file is published
    folder = shutil.copytree(tmp_path / "old", tmp_path / "twice")
    killed_at(first, figure_set, folder, 1)
    pid = os.fork()
    if pid == 0:
        try:  # the recovering run is killed after its first move
            fileset.step_hook = lambda k, label: os.kill(os.getpid(), signal.SIGKILL)
            recover_sets(folder)
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status)
    assert comparable(read_set(folder, "demo")) == new
    recover_sets(folder)
    assert comparable(read_set(folder, "demo")) == new
    assert not [p.name for p in folder.iterdir() if p.name.startswith(".")]


def test_a_kill_inside_a_file_write_leaves_the_old_set(tmp_path):
    def half_then_kill(path):
        path.write_text("x,y\n1,")
        os.kill(os.getpid(), signal.SIGKILL)

    write_text_set = {"t.md": lambda p: p.write_text("old\n"), "t.csv": lambda p: p.write_text(
        "a\n1\n")}
    fileset.write_set(tmp_path, "t", write_text_set)
    old = read_set(tmp_path, "t")
    pid = os.fork()
    if pid == 0:
        try:
            fileset.write_set(tmp_path, "t", {"t.md": lambda p: p.write_text("new\n"),
                                              "t.csv": half_then_kill})
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    assert read_set(tmp_path, "t") == old
    assert any(p.name.startswith(".t.") for p in tmp_path.iterdir()), "staging should remain"
    fileset.write_set(tmp_path, "t", {"t.md": lambda p: p.write_text("newer\n")})
    assert read_set(tmp_path, "t") == {"t.md": b"newer\n"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.manifest.json", "t.md"]


def test_a_set_without_a_matching_manifest_is_absent(tmp_path):
    figure_set(tmp_path, 0)
    assert set(read_set(tmp_path, "demo")) == {"demo.png", "demo_a.csv", "demo_b.csv",
                                               "demo.json"}
    (tmp_path / "demo_a.csv").write_text("x\n99\n")  # a file from elsewhere
    with pytest.raises(SetNotFoundError, match="demo"):
        read_set(tmp_path, "demo", attempts=1)
    (tmp_path / "demo.manifest.json").unlink()
    with pytest.raises(SetNotFoundError):
        read_set(tmp_path, "demo", attempts=1)
    with pytest.raises(SetNotFoundError):
        read_set(tmp_path / "nowhere", "demo", attempts=1)


def test_a_set_records_the_version_of_the_code_that_wrote_it(tmp_path, monkeypatch):
    """A figure written through the public writer (``sia_theory.toolkit.save_experiment``)
    records ``sia_theory.__version__`` in its manifest and in its JSON's versions, and so does
    the claims table's manifest. Negative control: the version is read when the set is
    written, not taken from the installed distribution's metadata (an editable install keeps
    the version it was installed at), so changing it changes what the next set records."""
    import sia_theory
    from sia_theory.toolkit import save_experiment as public_save_experiment

    def figure(folder):
        fig, ax = plt.subplots(figsize=(2, 2))
        ax.plot([0, 1], [0, 1])
        try:
            return public_save_experiment(folder, "v", fig, pd.DataFrame({"x": [1.5]}), seed=3)
        finally:
            plt.close(fig)

    def recorded(folder):
        manifest = json.loads((folder / "v.manifest.json").read_text())
        versions = json.loads((folder / "v.json").read_text())["versions"]
        claims_set(folder, 0)
        claims = json.loads((folder / "claims.manifest.json").read_text())
        return manifest["sia-theory"], versions["sia-theory"], claims["sia-theory"]

    written = figure(tmp_path / "now")
    assert written["manifest"] == tmp_path / "now" / "v.manifest.json"
    assert set(json.loads(written["manifest"].read_text())["files"]) == {"v.png", "v.csv",
                                                                        "v.json"}
    assert recorded(tmp_path / "now") == (sia_theory.__version__,) * 3
    monkeypatch.setattr(sia_theory, "__version__", "9.8.7")
    figure(tmp_path / "later")
    assert recorded(tmp_path / "later") == ("9.8.7",) * 3
    assert recorded(tmp_path / "now")[0] != "9.8.7"  # an earlier set keeps its own


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_written_files_get_the_permissions_the_umask_allows(umask, tmp_path):
    previous = os.umask(umask)
    try:
        figure_set(tmp_path, 0)
        claims_set(tmp_path, 0)
        write_text(tmp_path / "single.txt", "x\n")
    finally:
        os.umask(previous)
    files = [p for p in tmp_path.iterdir()]
    assert len(files) == 9  # 4 + manifest, claims 2 + manifest, single
    for path in files:
        assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask, path.name


def dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_the_next_run_removes_what_dead_writers_left_and_only_that(tmp_path):
    dead, alive = dead_pid(), os.getpid()
    staging = tmp_path / f".demo.{dead}-0123abcd.tmp"
    staging.mkdir()
    (staging / "demo.png").write_bytes(b"half")
    (tmp_path / f".demo.csv.{dead}-89abcdef.tmp").write_text("half")
    keep = [f".demo.{alive}-fedcba98.tmp", ".keep", "notes.tmp", f".demo.{dead}-xyz.tmp",
            f"demo.{dead}-0123abcd.tmp"]
    for name in keep:
        (tmp_path / name).write_text("someone else's")
    figure_set(tmp_path, 0)
    names = {p.name for p in tmp_path.iterdir()}
    assert names == set(keep) | {"demo.png", "demo_a.csv", "demo_b.csv", "demo.json",
                                 "demo.manifest.json"}


def test_single_file_writes_also_clear_dead_temporaries(tmp_path):
    (tmp_path / f".x.txt.{dead_pid()}-00000000.tmp").write_text("half")
    write_text(tmp_path / "x.txt", "done\n")
    assert [p.name for p in tmp_path.iterdir()] == ["x.txt"]


def test_temporary_names_are_not_hidden_from_git():
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    names = [f"figures/.demo.{os.getpid()}-0123abcd.tmp", "figures/.demo.1-0123abcd.pending",
             f"paper_checks/results/.claims.md.{os.getpid()}-0123abcd.tmp"]
    proc = subprocess.run(["git", "check-ignore", "--no-index", *names], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 1 and proc.stdout == "", proc.stdout  # 1: none ignored


def test_the_next_command_line_run_finishes_a_killed_publish_before_computing(tmp_path):
    from sia_theory._infra.cli import run

    figure_set(tmp_path / "old", 0)
    labels = labels_of(figure_set, shutil.copytree(tmp_path / "old", tmp_path / "ref"), 1)
    new = comparable(read_set(tmp_path / "ref", "demo"))
    folder = shutil.copytree(tmp_path / "old", tmp_path / "killed")
    killed_at(labels.index("committed") + 2, figure_set, folder, 1)  # one file moved, rest not
    mixed = visible(folder, "demo")
    mixed.pop("demo.manifest.json")
    old = comparable(read_set(tmp_path / "old", "demo"))
    assert comparable(mixed) not in (old, new)  # what a plain reader would see meanwhile
    seen = []
    assert run(lambda **kw: seen.append(visible(kw["out_dir"], "demo")), "demo",
               argv=["--out", str(folder)]) == 0
    seen[0].pop("demo.manifest.json")
    assert comparable(seen[0]) == new
