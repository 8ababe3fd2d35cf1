"""`make bench` runs three modules; at tiny sizes they must run and print their ratios (no timings asserted)."""

from __future__ import annotations

import pytest

from tests.benchmarks import bench, bench_compare, bench_scale


def test_bench_compare_prints_the_baseline_ratios(capsys: pytest.CaptureFixture[str]) -> None:
    bench_compare.main(["--entries", "12", "--items", "300", "--resamples", "200", "--randomizations", "100"])
    out = capsys.readouterr().out
    assert "before issue 14 (tests.benchmarks._baseline), same run" in out
    assert "same counts: True" in out
    assert "simultaneous rank sets equal for 12 of 12 entries" in out


def test_bench_compare_runs_every_family_beside_the_search_of_before_issue_24(
    capsys: pytest.CaptureFixture[str],
) -> None:
    bench_compare.main(["--family", "nested", "--entries", "70", "--items", "300", "--resamples", "300"])
    out = capsys.readouterr().out
    assert out.count("same board: True") == 1
    assert "the boards of the first and the last the full rebuilds': True" in out and "incremental" in out
    assert "column digests: first" in out and "the next 4: median" in out
    bench_compare.main(
        ["--families", "ties,mix", "--entries", "2001", "--items", "60", "--resamples", "30", "--check", "no"]
    )
    out = capsys.readouterr().out
    assert "worst family:" in out and out.count("not checked") == 2 and "before issue 24: not run" in out
    # the summary names the new entry's figure on both paths, the service's first
    summary = out[out.index("worst family:") :]
    assert summary.index("column digests (the service's path): the first") < summary.index(
        "columns compared: the first"
    )


def test_bench_scale_prints_three_sizes_each(capsys: pytest.CaptureFixture[str]) -> None:
    bench_scale.main(
        [
            *("--entries", "5", "8", "12"),
            *("--resamples", "100", "150", "200"),
            *("--items", "200", "300", "400"),
            *("--engine-resamples", "100", "--randomizations", "50"),
        ]
    )
    out = capsys.readouterr().out
    assert out.count(" board ") == 6 and out.count("  N=") == 3


def test_bench_engine_checks_the_bytes_of_w(capsys: pytest.CaptureFixture[str]) -> None:
    bench.main(["--items", "300", "--entries", "3", "--resamples", "300"])
    assert "same bytes: True" in capsys.readouterr().out


def test_bench_text_prints_identical_sacrebleu_p_values(capsys: pytest.CaptureFixture[str]) -> None:
    from tests.benchmarks import bench_text

    bench_text.main(["--quick", "--skip-extraction"])
    assert "identical p-values: bs (B = 1000) True, ar (R = 1000) True" in capsys.readouterr().out
