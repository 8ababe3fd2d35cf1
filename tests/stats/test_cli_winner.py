"""Tests of the ``winner``, ``robustness`` and ``plan`` subcommands of ``python -m stats``."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from stats.cli import main
from stats.engine import score_entries
from stats.selection import leader_adjusted

Task = tuple[Path, list[Path], np.ndarray, list[np.ndarray]]


@pytest.fixture
def task(tmp_path: Path) -> Task:
    rng = np.random.default_rng(0)
    n = 300
    truth = rng.integers(0, 3, n)
    (tmp_path / "truth.csv").write_text(
        "id,label\n" + "".join(f"i{i:03d},{'abc'[t]}\n" for i, t in enumerate(truth))
    )
    files, preds = [], []
    for name, q in (("good", 0.85), ("fair", 0.83), ("poor", 0.5)):
        pred = np.where(rng.random(n) < q, truth, rng.integers(0, 3, n))
        path = tmp_path / f"{name}.csv"
        path.write_text("id,prediction\n" + "".join(f"i{i:03d},{'abc'[t]}\n" for i, t in enumerate(pred)))
        files.append(path)
        preds.append(pred)
    return tmp_path / "truth.csv", files, truth, preds


FAST = ["--resamples", "1000"]


def test_winner_json_equals_the_library_on_the_same_resamples(
    task: Task, capsys: pytest.CaptureFixture[str]
) -> None:
    truth_path, files, truth, preds = task
    code = main(
        [
            "winner",
            "--truth",
            str(truth_path),
            "--metric",
            "accuracy",
            *FAST,
            "--format",
            "json",
            *map(str, files),
        ]
    )
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    names = [str(f) for f in files]
    scores = score_entries(
        truth, preds, metric="accuracy", labels=[0, 1, 2], names=names, resamples=1000, seed=0
    )
    adj = leader_adjusted(
        [s.value for s in scores],
        np.column_stack([s.replicates for s in scores]),
        higher_is_better=True,
        names=names,
    )
    assert data["leader"] == adj.leader == str(files[0])
    assert data["hybrid_estimate"] == pytest.approx(adj.hybrid_estimate, rel=1e-12)
    assert data["hybrid_interval"]["low"] == pytest.approx(adj.hybrid_interval.low, rel=1e-12)
    assert data["resolution"] == pytest.approx(1 / 300)
    assert data["signature"]["method"] == "akm-hybrid"


def test_winner_table(task: Task, capsys: pytest.CaptureFixture[str]) -> None:
    truth_path, files, _, _ = task
    assert main(["winner", "--truth", str(truth_path), "--metric", "accuracy", *FAST, *map(str, files)]) == 0
    out = capsys.readouterr().out
    assert "hybrid (AKM, beta 0.005)" in out and "bias-corrected" in out and "signature: " in out


def test_robustness_json_and_svg(task: Task, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    truth_path, files, _, _ = task
    svg = tmp_path / "blob.svg"
    code = main(
        ["robustness", "--truth", str(truth_path), "--metric", "accuracy", *FAST, "--svg", str(svg),
         "--format", "json", *map(str, files)]
    )  # fmt: skip
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    entries = data["robustness"]["entries"]
    assert [e["rank"] for e in entries] == [1, 2, 3]
    assert all(abs(sum(e["frequencies"]) - 1) < 1e-6 for e in entries)
    schemes = {s["scheme"]: s for s in data["schemes"]["schemes"]}
    assert set(schemes) == {"aggregate-then-rank", "rank-then-aggregate", "test-then-rank"}
    # the CLI's aggregate-then-rank bootstrap is the board's: same W (seed 0), same rank frequencies
    assert schemes["aggregate-then-rank"]["robustness"]["entries"] == entries
    root = ET.fromstring(svg.read_bytes())
    assert root.find("{http://www.w3.org/2000/svg}desc") is not None


def test_robustness_table_without_per_item_scores(task: Task, capsys: pytest.CaptureFixture[str]) -> None:
    truth_path, files, _, _ = task
    code = main(["robustness", "--truth", str(truth_path), "--metric", "macro_f1", *FAST, *map(str, files)])
    assert code == 0
    out = capsys.readouterr().out
    assert "Kendall's tau-b" in out and "no per-item score" in out


def test_plan_reference_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    # /work/shared/REFERENCE.md: gap 11/1,797, discordant 29/1,797 -> 3,379 (Connor), 3,381 (simple form)
    code = main(
        ["plan", "--metric", "accuracy", "--gap", str(11 / 1797), "--discordant", str(29 / 1797),
         "--items", "1797", "--format", "json"]
    )  # fmt: skip
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["items_for_gap"]["items"] == 3379 and data["items_for_gap"]["simple_form_items"] == 3381
    assert data["resolution"]["difference"] > 11 / 1797  # 1,797 items do not resolve that gap


def test_plan_table_and_refusals(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--family", "mean", "--items", "400", "--sd-difference", "0.5"]) == 0
    assert "400 items resolve a difference of" in capsys.readouterr().out
    assert main(["plan", "--metric", "accuracy", "--accuracy", "0.9"]) == 2
    assert "--items" in capsys.readouterr().err
    assert main(["plan", "--metric", "macro_f1", "--items", "100"]) == 2
    assert "pilot" in capsys.readouterr().err


def test_winner_needs_two_files(task: Task, capsys: pytest.CaptureFixture[str]) -> None:
    truth_path, files, _, _ = task
    assert main(["winner", "--truth", str(truth_path), "--metric", "accuracy", *FAST, str(files[0])]) == 2
    assert "at least two" in capsys.readouterr().err
