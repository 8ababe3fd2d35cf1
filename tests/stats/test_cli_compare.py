"""Tests of the ``leaderboard`` and ``cd`` subcommands of ``python -m stats``."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from stats.cli import main

ROOT = Path(__file__).resolve().parents[2]

# Demsar (2006), Table 6 (see test_crosstask.py for the source and the 0.9751 tie-break on "voting")
DEMSAR_CSV = """task,C4.5,C4.5+m,C4.5+cf,C4.5+m+cf
adult,0.763,0.768,0.771,0.798
breast,0.599,0.591,0.590,0.569
wisconsin,0.954,0.971,0.968,0.967
cmc,0.628,0.661,0.654,0.657
ionosphere,0.882,0.888,0.886,0.898
iris,0.936,0.931,0.916,0.931
liver,0.661,0.668,0.609,0.685
lung,0.583,0.583,0.563,0.625
lymph,0.775,0.838,0.866,0.875
mushroom,1.000,1.000,1.000,1.000
tumor,0.940,0.962,0.965,0.962
rheum,0.619,0.666,0.614,0.669
voting,0.972,0.981,0.9751,0.975
wine,0.957,0.978,0.946,0.970
"""


@pytest.fixture
def task(tmp_path: Path) -> tuple[Path, list[Path]]:
    rng = np.random.default_rng(0)
    n = 300
    truth = rng.integers(0, 3, n)
    (tmp_path / "truth.csv").write_text(
        "id,label\n" + "".join(f"i{i:03d},{'abc'[t]}\n" for i, t in enumerate(truth))
    )
    files = []
    for name, q in (("good", 0.85), ("fair", 0.8), ("poor", 0.5)):
        pred = np.where(rng.random(n) < q, truth, rng.integers(0, 3, n))
        path = tmp_path / f"{name}.csv"
        path.write_text("id,prediction\n" + "".join(f"i{i:03d},{'abc'[t]}\n" for i, t in enumerate(pred)))
        files.append(path)
    return tmp_path / "truth.csv", files


FAST = ["--resamples", "500", "--randomizations", "500"]


def test_leaderboard_table(task, capsys) -> None:  # type: ignore[no-untyped-def]
    truth, files = task
    code = main(["leaderboard", "--truth", str(truth), "--metric", "accuracy", *FAST, *map(str, files)])
    assert code == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    for column in (
        "rank",
        "name",
        "value",
        "95% clopper_pearson",
        "ranks",
        "verdict",
        "diff",
        "p holm",
        "items needed",
    ):
        assert column in lines[0]
    assert "good.csv" in lines[1] and "best" in lines[1]
    assert "poor.csv" in lines[3]
    assert "p vs leader: mcnemar" in out and "signature: metric:accuracy" in out
    assert "verdict: max-t comparisons with the best at alpha 0.05" in out


def test_leaderboard_json(task, capsys) -> None:  # type: ignore[no-untyped-def]
    truth, files = task
    argv = ["leaderboard", "--truth", str(truth), "--metric", "macro_f1", "--interval", "percentile"]
    assert main([*argv, "--format", "json", *FAST, *map(str, files)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["test"] == "randomization" and doc["leader"].endswith("good.csv")
    assert doc["signature"]["metric"] == "macro_f1" and doc["signature"]["resamples"] == 500
    row = doc["rows"][-1]
    for key in ("value", "interval", "rank", "rank_interval", "difference", "difference_interval", "p_value",
                "adjusted_p_value", "in_best_set", "items_needed"):  # fmt: skip
        assert key in row
    assert row["in_best_set"] is False


def test_leaderboard_located_error(task, capsys) -> None:  # type: ignore[no-untyped-def]
    truth, files = task
    files[1].write_text("id,prediction\ni000,a\ni000,b\n")
    code = main(["leaderboard", "--truth", str(truth), "--metric", "accuracy", *FAST, *map(str, files)])
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{files[1]}:3")


def test_cd_table_and_svg(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    scores = tmp_path / "scores.csv"
    scores.write_text(DEMSAR_CSV)
    svg = tmp_path / "cd.svg"
    assert main(["cd", "--scores", str(scores), "--alpha", "0.1", "--svg", str(svg)]) == 0
    out = capsys.readouterr().out
    # Demsar (2006), Section 3.2.4: chi2_F = 9.28, F_F = 3.69; CD at 0.10 = 1.12
    assert "Friedman chi2 = 9.279" in out and "Iman-Davenport F = 3.686" in out
    assert "Nemenyi CD = 1.118" in out
    assert "C4.5+m+cf vs C4.5" in out
    assert ET.fromstring(svg.read_bytes()).tag.endswith("svg")


def test_cd_json_and_direction(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    scores = tmp_path / "scores.csv"
    scores.write_text(DEMSAR_CSV)
    assert main(["cd", "--scores", str(scores), "--format", "json", "--posthoc", "wilcoxon-holm"]) == 0
    up = json.loads(capsys.readouterr().out)
    assert main(["cd", "--scores", str(scores), "--format", "json", "--lower-is-better"]) == 0
    down = json.loads(capsys.readouterr().out)
    assert up["posthoc"] == "wilcoxon-holm"
    assert up["entries"][0]["name"] == "C4.5+m+cf" and down["entries"][0]["name"] == "C4.5"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("task,a,b\nt1,0.5,x\nt2,1,2\n", ":2:3: 'x' is not a number"),
        ("task,a,b\nt1,0.5\nt2,1,2\n", ":2: expected 3 fields, found 2"),
        ("task,a,a\nt1,1,2\nt2,1,2\n", ":1:3: duplicate entry name 'a'"),
        ("task,a,b\nt1,1,2\n", ": at least two tasks (rows) are needed"),
        ("task,a,b\nt1,1,nan\nt2,1,2\n", ":2:3: 'nan' is not a finite number"),
    ],
)
def test_cd_located_errors(tmp_path: Path, capsys, content: str, message: str) -> None:  # type: ignore[no-untyped-def]
    scores = tmp_path / "scores.csv"
    scores.write_text(content)
    assert main(["cd", "--scores", str(scores)]) == 2
    assert capsys.readouterr().err.strip() == f"{scores}{message}"


def test_python_dash_m_stats(tmp_path: Path) -> None:
    scores = tmp_path / "scores.csv"
    scores.write_text(DEMSAR_CSV)
    done = subprocess.run(
        [sys.executable, "-m", "stats", "cd", "--scores", str(scores)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "average rank" in done.stdout
