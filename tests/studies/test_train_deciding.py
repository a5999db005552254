"""experiments/deciding/table1_registry.py: refuses to start without the registry corpus (exit
2, one line, nothing written), and decides TRAIN-1 and TRAIN-2 on a checkpoint frame with the
claims' own decisions, seed checks and power sizing."""

import importlib.util
from pathlib import Path

import pandas as pd

from sia_theory.claims import train as T
from sia_theory.claims import train_controls as C

ROOT = Path(__file__).resolve().parents[2]


def _script():
    path = ROOT / "experiments" / "deciding" / "table1_registry.py"
    spec = importlib.util.spec_from_file_location("table1_registry", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_without_the_corpus_it_exits_2_with_one_line(tmp_path, monkeypatch, capsys):
    script = _script()
    monkeypatch.setattr(script, "CORPUS", tmp_path / "no-corpus")
    out = tmp_path / "out"
    assert script.main(["--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "make corpus" in err
    assert not out.exists()


def _points(**change):
    """The synthetic per-seed table as a checkpoint frame: two checkpoints (the earlier one
    the same numbers), every document kind the same."""
    frame = C.synthetic_frame(noise=0.001, **change)
    parts = [frame.assign(step=step, kind=kind) for step in (180, 240)
             for kind in ("all", "prose", "code")]
    return pd.concat(parts, ignore_index=True)


def test_collect_decides_the_two_rows_as_the_claims_do(tmp_path):
    script = _script()
    verdicts = script.collect(_points(), tmp_path).set_index("row")
    assert list(verdicts["verdict"]) == ["PASS", "PASS"]
    frame = C.synthetic_frame(noise=0.001)
    assert verdicts.loc["TRAIN-1", "value"] == T.decide_train1(frame).value
    assert (tmp_path / "checkpoints.csv").is_file() and (tmp_path / "verdicts.csv").is_file()
    # NoPE 20 % short of a blow-up: TRAIN-1 FAIL, TRAIN-2 unchanged
    short = script.collect(_points(rise={("nope", None): 0.8 * T.BLOWUP}), tmp_path)
    assert list(short["verdict"]) == ["FAIL", "PASS"]
