"""experiments/gpu/train_gpu_ladder.py and its collector: the sizes' parameter counts by the
project's own counting, the deadline, and the whole pipeline (script → collector → verdict
table) on a CPU at the smallest size with quick settings."""

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("jax")
pytest.importorskip("optax")

GPU = Path(__file__).resolve().parents[2] / "experiments" / "gpu"
sys.path.insert(0, str(GPU))

import train_gpu_ladder as ladder  # noqa: E402
import train_gpu_ladder_collect as collect  # noqa: E402


def test_the_ladder_sizes_and_their_parameter_counts():
    """Small is the committed model (1.31 M); medium about 10 M, large about 40 M; every head
    a multiple of 4 wide (64), counted by parameter_count of the initialised weights."""
    counts = ladder.parameter_counts()
    assert counts == {"small": 1_310_720, "medium": 11_141_120, "large": 39_845_888}
    for size in ladder.SIZES:
        train, needle = ladder.ladder_settings(size)
        assert train.head_dim % 4 == 0 and train.head_dim == 64
        assert (train.batch_size, train.steps, needle.steps) == (64, 400, 300)
    assert getattr(ladder.ladder_settings("small")[0], "corpus", None) is None  # not given


def test_the_budget_estimate_and_the_deadline(tmp_path):
    """The estimate from the committed timings (2.3 s per pretraining of the small model,
    scaled by parameters); a deadline that allows nothing starts nothing and says so."""
    counts = ladder.parameter_counts()
    tokens = ladder.tokens_of(ladder.ladder_settings("small"))
    assert ladder.estimate("small", False, counts, {}, tokens) == pytest.approx(2.3)
    assert ladder.estimate("large", True, counts, {}, tokens) == pytest.approx(
        (2.3 + 2.2) * 39_845_888 / 1_310_720, rel=0.01)
    assert ladder.main(["--smallest-only", "--quick", "--budget-seconds", "0",
                        "--out", str(tmp_path)]) == 0
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["finished"] == [] and len(manifest["not_started"]) == len(manifest["plan"])
    assert not list(tmp_path.glob("seed*"))


@pytest.mark.slow  # 18 s on a quiet machine: in `make test-all`
def test_quick_ladder_through_the_collector(tmp_path):
    from sia_theory.training._jax import environment

    out, result = tmp_path / "ladder", tmp_path / "collected"
    assert ladder.main(["--smallest-only", "--quick", "--phases", "question,needle",
                        "--out", str(out)]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert len(manifest["finished"]) == 8 and manifest["not_started"] == []  # 4 schemes x 2
    assert manifest["sizes"]["small"]["parameters"] == ladder.parameter_counts(
        ("small",), quick=True)["small"]
    env = environment()
    assert manifest["training_environments"] == [{"environment": env, "runs": 16}]
    for seed in (0, 1):
        runs = pd.read_csv(out / f"seed{seed}" / "runs.csv")
        assert json.loads(runs["environment_pretrain"].iloc[0]) == env
        needles = pd.read_csv(out / f"seed{seed}" / "needles.csv")
        assert set(needles["multiple"]) == {1, 4, 16} and needles["depth"].between(0, 1).all()
        valid = pd.read_csv(out / f"seed{seed}" / "validation.csv")
        assert np.isfinite(valid["loss"]).all() and set(valid["size"]) == {"small"}
    assert collect.main(["--runs", str(out), "--out", str(result)]) == 0
    verdicts = pd.read_csv(result / "verdicts.csv")
    assert list(verdicts["claim_id"]) == ["TRAIN-1", "TRAIN-2", "TRAIN-3", "TRAIN-4",
                                          "TRAIN-6"]
    assert set(verdicts["verdict"]) <= {"PASS", "FAIL", "UNTESTED", "UNDERPOWERED"}
    # TRAIN-3 and TRAIN-4 need the side runs the question and needle phases do not train
    side = verdicts[verdicts["claim_id"].isin(["TRAIN-3", "TRAIN-4"])]
    assert (side["verdict"] == "UNTESTED").all()
    assert side["detail"].str.startswith("not run").all()
    retention = pd.read_csv(result / "retention.csv")
    assert list(retention["size"]) == ["small"]
    assert retention["answer"].iloc[0].startswith("unresolved")  # one size cannot answer
    assert "| small |" in (result / "answer.md").read_text()
    assert json.loads((result / "manifest.json").read_text())["training_environments"][0][
        "environment"] == env


def test_the_answer_rule():
    def table(rows):
        return pd.DataFrame(rows, columns=["size", "retention", "ci_low", "ci_high"])

    small = ("small", 0.5, 0.4, 0.6)
    assert collect.answer(table([small, ("large", 0.95, 0.85, 1.05)])).startswith("rises toward")
    assert collect.answer(table([small, ("large", 0.72, 0.65, 0.79)])).startswith("rises, short")
    assert collect.answer(table([small, ("large", 0.55, 0.45, 0.65)])).startswith("stays near")
    assert collect.answer(table([small])).startswith("unresolved")


def test_a_table2_scheme_not_run_at_a_size_is_not_a_fail():
    """The first call of the ladder trains SI + p-RoPE only: TRAIN-6 must say "not run", not
    FAIL on the schemes it has no cells of."""
    validation = pd.DataFrame([{"size": "small", "kind": "all", "step": 1, "scheme": "si-p-rope",
                                "seed": 0, "tau": 10.0, "length": 256, "multiple": 1,
                                "loss": 3.0}])
    cells = pd.DataFrame([{"size": "small", "scheme": "si-p-rope", "seed": 0, "length": 256,
                           "multiple": 1, "accuracy": 1.0, "correct": 3, "needles": 3}])
    v = collect.verdicts(validation, cells).set_index("claim_id")
    assert v.loc["TRAIN-6", "verdict"] == "UNTESTED"
    assert v.loc["TRAIN-6", "detail"] == ("not run: no needle cells of logn-p-rope, p-rope, "
                                          "nope at this size")
    assert (v["verdict"] == "UNTESTED").all()
