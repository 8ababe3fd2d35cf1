"""The `python -m stats score` command: rows, JSON, and located errors with exit code 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from stats.cli import build_parser, main


@pytest.fixture
def task(tmp_path: Path) -> Path:
    rng = np.random.default_rng(3)
    n = 200
    truth = rng.integers(0, 3, n)
    lines = ["id,label,writer"] + [f"i{i:03d},c{truth[i]},w{i % 20}" for i in range(n)]
    (tmp_path / "truth.csv").write_text("\n".join(lines) + "\n")
    for name, acc in (("a.csv", 0.9), ("b.csv", 0.7)):
        pred = np.where(rng.random(n) < acc, truth, (truth + 1) % 3)
        rows = ["id,prediction"] + [f"i{i:03d},c{pred[i]}" for i in rng.permutation(n)]
        (tmp_path / name).write_text("\n".join(rows) + "\n")
    return tmp_path


def _run(argv: list[str], capsys) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_table_output(task: Path, capsys) -> None:
    argv = ["score", "--truth", str(task / "truth.csv"), "--group-column", "writer", "--metric", "accuracy"]
    argv += ["--resamples", "500", str(task / "a.csv"), str(task / "b.csv")]
    code, out, err = _run(argv, capsys)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["name", "value", "95%", "bca"]
    assert lines[1].startswith(str(task / "a.csv"))
    assert lines[-1] == (
        "signature: metric:accuracy|method:bca|resamples:500|seed:0|confidence:0.95|resampling:grouped|version:0.1.0"
    )


def test_json_output_matches_wilson(task: Path, capsys) -> None:
    argv = ["score", "--truth", str(task / "truth.csv"), "--group-column", "writer", "--metric", "macro_f1"]
    argv += ["--format", "json", "--interval", "percentile", "--resamples", "300", str(task / "a.csv")]
    code, out, _ = _run(argv, capsys)
    assert code == 0
    (row,) = json.loads(out)
    assert row["signature"]["method"] == "percentile"
    assert row["interval"][0] < row["value"] < row["interval"][1]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("id,prediction\ni000,c1\ni000,c2\n", "{f}:3:1: duplicate id 'i000' (first on line 2)\n"),
        ("id,prediction\ni000,c7\n", "{f}:2:2: unknown label 'c7' (labels: c0, c1, c2)\n"),
        (
            "id,prediction\ni000,c1\n",
            "{f}: missing predictions for 199 of 200 ids: 'i001', 'i002', 'i003', 'i004', 'i005', ...\n",
        ),
        ("", "{f}: the file is empty\n"),
        ("id;prediction\n", "{f}:1: the file seems to use ';' as delimiter; use commas\n"),
    ],
)
def test_malformed_prediction_exit_2(task: Path, capsys, content: str, expected: str) -> None:
    bad = task / "bad.csv"
    bad.write_text(content)
    argv = [
        "score",
        "--truth",
        str(task / "truth.csv"),
        "--group-column",
        "writer",
        "--metric",
        "accuracy",
        str(bad),
    ]
    code, out, err = _run(argv, capsys)
    assert code == 2
    assert out == ""
    assert err == expected.format(f=bad)


def test_wrong_encoding_exit_2(task: Path, capsys) -> None:
    bad = task / "bad.csv"
    bad.write_bytes("id,prediction\ni000,c1\n".encode("utf-16"))
    argv = [
        "score",
        "--truth",
        str(task / "truth.csv"),
        "--group-column",
        "writer",
        "--metric",
        "accuracy",
        str(bad),
    ]
    code, _, err = _run(argv, capsys)
    assert (code, err) == (2, f"{bad}: the file is UTF-16 encoded; save it as UTF-8\n")


def test_wilson_refuses_grouped_items(task: Path, capsys) -> None:
    argv = ["score", "--truth", str(task / "truth.csv"), "--group-column", "writer", "--metric", "accuracy"]
    argv += ["--interval", "wilson", str(task / "a.csv")]
    code, _, err = _run(argv, capsys)
    assert code == 2
    assert err.endswith(  # after the warning about few (20) groups, issue 11
        "error: `method` 'wilson' assumes independent items; use a bootstrap method with grouped items.\n"
    )


def test_parser_has_subcommands_and_validates() -> None:
    parser = build_parser()
    args = parser.parse_args(["score", "--truth", "t.csv", "--metric", "accuracy", "p.csv"])
    assert (args.resamples, args.seed, args.confidence, args.interval) == (10000, 0, 0.95, None)
    # no --interval: the metric's own default (chosen by measured coverage), the same rule as the boards
    from stats.intervals import default_interval

    assert default_interval("accuracy") == "clopper_pearson" and default_interval("macro_f1") == "bca"
    with pytest.raises(SystemExit):
        parser.parse_args(["score", "--truth", "t", "--metric", "accuracy", "--confidence", "1.5", "p"])


def test_module_entry_point(task: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "stats",
            "score",
            "--truth",
            str(task / "truth.csv"),
            "--group-column",
            "writer",
            *["--metric", "accuracy", "--resamples", "200", "--interval", "percentile", str(task / "a.csv")],
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "95% percentile" in proc.stdout
