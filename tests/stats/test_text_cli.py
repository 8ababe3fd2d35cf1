"""Text files (stats.text.io) and the text side of `python -m stats score` / `leaderboard`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sacrebleu

from stats.cli import main
from stats.io import InputError
from stats.text.io import read_hypotheses, read_tag_predictions, read_tag_truth, read_text_truth
from stats.text.synthetic import noisy_system, synthetic_corpus

FAST = ["--resamples", "300", "--randomizations", "300"]


@pytest.fixture
def texts(tmp_path: Path) -> Path:
    c = synthetic_corpus(80, seed=2, vocabulary=300)
    second = synthetic_corpus(80, seed=5, vocabulary=300).references
    (tmp_path / "ref.txt").write_text("\n".join(c.references) + "\n", encoding="utf-8")
    (tmp_path / "ref2.txt").write_text("\n".join(second) + "\n", encoding="utf-8")
    with (tmp_path / "ref.jsonl").open("w", encoding="utf-8") as f:
        for i, (r, d) in enumerate(zip(c.references, c.documents, strict=True)):
            f.write(json.dumps({"id": f"s{i}", "references": [r], "doc": d}) + "\n")
    for k, (sub, drop) in enumerate(((0.15, 0.05), (0.3, 0.05), (0.5, 0.1))):
        hyps = noisy_system(c, seed=k + 10, substitute=sub, drop=drop)
        (tmp_path / f"sys{k}.txt").write_text("\n".join(hyps) + "\n", encoding="utf-8")
        rows = ["id,text"] + [f's{i},"{h}"' for i, h in reversed(list(enumerate(hyps)))]
        (tmp_path / f"sys{k}.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return tmp_path


def _run(argv: list[str], capsys) -> tuple[int, str, str]:
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


# --------------------------------------------------------------------------------------------------
# formats


def test_plain_text_reads_as_sacrebleu_cli(tmp_path: Path) -> None:
    (tmp_path / "r.txt").write_bytes("a b  \r\n\nc\u2028d\n".encode())
    truth = read_text_truth([tmp_path / "r.txt"])
    assert truth.references == [["a b", "", "c\u2028d"]]  # trailing spaces stripped, U+2028 kept inside
    assert truth.ids == ["1", "2", "3"]


def test_line_counts_that_differ_name_both(texts: Path, tmp_path: Path) -> None:
    (tmp_path / "short.txt").write_text("x\ny\n")
    truth = read_text_truth([texts / "ref.txt"])
    with pytest.raises(InputError, match=r"short.txt:3: 2 lines, but the truth .*ref.txt has 80 segments"):
        read_hypotheses(tmp_path / "short.txt", truth)
    with pytest.raises(InputError, match=r"2 lines, but the first reference file .*ref.txt has 80"):
        read_text_truth([texts / "ref.txt", tmp_path / "short.txt"])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "the file is empty"),
        ("a\nb\n".encode("utf-16"), "UTF-16"),
        (b"\x00\x01\x02binary", "binary"),
        (b"ok\n\xff\xfe bad\n", r":2:\d+: byte 0xFF is not valid UTF-8"),
        (b"PK\x03\x04zip", "zip archive"),
    ],
)
def test_bad_files_are_refused_with_a_location(tmp_path: Path, content: bytes, message: str) -> None:
    (tmp_path / "f.txt").write_bytes(content)
    with pytest.raises(InputError, match=message):
        read_text_truth([tmp_path / "f.txt"])


def test_jsonl_and_csv_by_id(texts: Path, tmp_path: Path) -> None:
    truth = read_text_truth([texts / "ref.jsonl"])
    assert truth.documents is not None and truth.ids[0] == "s0"
    plain = read_hypotheses(texts / "sys0.txt", read_text_truth([texts / "ref.txt"]))
    assert read_hypotheses(texts / "sys0.csv", truth) == plain  # CSV rows in reverse order, read by id
    (tmp_path / "dup.jsonl").write_text('{"id": "s0", "text": "a"}\n{"id": "s0", "text": "b"}\n')
    with pytest.raises(InputError, match=r"dup.jsonl:2: duplicate id 's0' \(first on line 1\)"):
        read_hypotheses(tmp_path / "dup.jsonl", truth)
    (tmp_path / "bad.jsonl").write_text('{"id": "s0", "text": "a"}\n{"id": \n')
    with pytest.raises(InputError, match=r"bad.jsonl:2:\d+: not valid JSON"):
        read_hypotheses(tmp_path / "bad.jsonl", truth)
    (tmp_path / "few.jsonl").write_text('{"id": "s0", "text": "a"}\n')
    with pytest.raises(InputError, match="79 of 80 segments have no hypothesis"):
        read_hypotheses(tmp_path / "few.jsonl", truth)
    (tmp_path / "unknown.jsonl").write_text('{"id": "zz", "text": "a"}\n')
    with pytest.raises(InputError, match=r"unknown.jsonl:1: id 'zz' is not a segment"):
        read_hypotheses(tmp_path / "unknown.jsonl", truth)


def test_several_references_and_csv_truth(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text("id,reference,reference_2,doc\na,x y,x z,d1\nb,u v,,d1\nc,w,,d2\n")
    truth = read_text_truth([tmp_path / "t.csv"])
    assert truth.references == [["x y", "u v", "w"], ["x z", None, None]]
    assert truth.documents == ["d1", "d1", "d2"]


def test_conll_reading_and_alignment(tmp_path: Path) -> None:
    gold = "-DOCSTART- O\n\nJohn B-PER\nlives O\nin O\nParis B-LOC\n\nHe O\nleft O\n\n-DOCSTART- O\n\nAcme B-ORG\n"
    (tmp_path / "g.conll").write_text(gold)
    truth = read_tag_truth(tmp_path / "g.conll")
    assert truth.tags[0] == ["B-PER", "O", "O", "B-LOC"] and truth.documents == ["1", "1", "2"]
    assert truth.types() == ["LOC", "ORG", "PER"]
    (tmp_path / "p.conll").write_text("John B-PER\nlives O\nin O\nParis O\n\nHe O\n\nAcme B-ORG\n")
    with pytest.raises(InputError, match=r"p.conll:6: sentence 2 has 1 tokens, but 2 in the truth"):
        read_tag_predictions(tmp_path / "p.conll", truth)
    (tmp_path / "t.conll").write_text("John B-PER\nlives X-Y\n")
    with pytest.raises(InputError, match=r"t.conll:2:2: 'X-Y' is not a tag"):
        read_tag_truth(tmp_path / "t.conll")


# --------------------------------------------------------------------------------------------------
# the command line


def test_score_bleu_matches_sacrebleu_and_prints_its_signature(texts: Path, capsys) -> None:
    code, out, _ = _run(
        [
            "score",
            str(texts / "sys0.txt"),
            "--truth",
            str(texts / "ref.txt"),
            "--metric",
            "bleu",
            "--format",
            "json",
            *FAST[:2],
        ],
        capsys,
    )
    assert code == 0
    rows = json.loads(out)
    hyps = (texts / "sys0.txt").read_text().splitlines()
    refs = [(texts / "ref.txt").read_text().splitlines()]
    assert rows[0]["value"] == pytest.approx(sacrebleu.corpus_bleu(hyps, refs).score, rel=1e-12)
    assert (
        rows[0]["signature"]["extra"]["text"] == "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0"
    )
    lo, hi = rows[0]["interval"]
    assert lo < rows[0]["value"] < hi


def test_score_with_two_references_and_options(texts: Path, capsys) -> None:
    argv = [
        "score",
        str(texts / "sys1.txt"),
        "--truth",
        str(texts / "ref.txt"),
        "--truth",
        str(texts / "ref2.txt"),
    ]
    code, out, _ = _run(
        [*argv, "--metric", "bleu", "--tokenize", "intl", "--lowercase", "--format", "json", *FAST[:2]],
        capsys,
    )
    assert code == 0
    hyps = (texts / "sys1.txt").read_text().splitlines()
    refs = [(texts / f).read_text().splitlines() for f in ("ref.txt", "ref2.txt")]
    want = sacrebleu.BLEU(tokenize="intl", lowercase=True).corpus_score(hyps, refs).score
    assert json.loads(out)[0]["value"] == pytest.approx(want, rel=1e-12)


def test_repeated_truth_is_refused_for_other_metrics(texts: Path, capsys) -> None:
    code, _, err = _run(
        ["score", str(texts / "sys0.txt"), "--truth", "a.csv", "--truth", "b.csv", "--metric", "accuracy"],
        capsys,
    )
    assert code == 2 and "repeated only for text metrics" in err


@pytest.mark.parametrize("metric", ["ter", "wer", "cer"])
def test_leaderboard_ranks_error_rates_ascending(texts: Path, capsys, metric: str) -> None:
    files = [str(texts / f"sys{k}.txt") for k in (2, 0, 1)]
    code, out, _ = _run(
        [
            "leaderboard",
            *files,
            "--truth",
            str(texts / "ref.txt"),
            "--metric",
            metric,
            "--format",
            "json",
            *FAST,
        ],
        capsys,
    )
    assert code == 0
    board = json.loads(out)
    assert board["higher_is_better"] is False
    values = [r["value"] for r in sorted(board["rows"], key=lambda r: r["rank"])]
    assert values == sorted(values) and board["leader"].endswith("sys0.txt")
    assert board["test"] == "randomization"


def test_leaderboard_by_document_reports_design_effect(texts: Path, capsys) -> None:
    files = [str(texts / f"sys{k}.csv") for k in range(3)]
    code, out, _ = _run(
        [
            "leaderboard",
            *files,
            "--truth",
            str(texts / "ref.jsonl"),
            "--metric",
            "chrf",
            "--format",
            "json",
            *FAST,
        ],
        capsys,
    )
    assert code == 0
    board = json.loads(out)
    assert board["text"]["design_effect"]["documents"] >= 5
    assert "grouped:True" in board["signature_text"]


def test_leaderboard_sacrebleu_convention(texts: Path, capsys) -> None:
    from sacrebleu.significance import PairedTest

    files = [str(texts / f"sys{k}.txt") for k in range(3)]
    code, out, _ = _run(
        [
            "leaderboard",
            *files,
            "--truth",
            str(texts / "ref.txt"),
            "--metric",
            "bleu",
            "--format",
            "json",
            "--convention",
            "sacrebleu",
            "--paired-test",
            "bs",
            *FAST,
        ],
        capsys,
    )
    assert code == 0
    sb = json.loads(out)["text"]["sacrebleu"]
    systems = [(f, Path(f).read_text().splitlines()) for f in files]
    refs = [(texts / "ref.txt").read_text().splitlines()]
    _, res = PairedTest(systems, {"BLEU": sacrebleu.BLEU()}, refs, test_type="bs", n_samples=1000)()
    assert [s["p_value"] for s in sb["systems"][1:]] == [r.p_value for r in res["BLEU"][1:]]


def test_span_f1_from_conll(tmp_path: Path, capsys) -> None:
    # ten copies of three sentences: with three, too many resamples hold no entity (refused, see edges)
    (tmp_path / "g.conll").write_text(
        "A B-PER\nb I-PER\nc O\nd B-LOC\n\ne B-ORG\nf O\n\ng I-PER\nh O\n\n" * 10
    )
    (tmp_path / "p.conll").write_text("A B-PER\nb I-PER\nc O\nd O\n\ne B-ORG\nf O\n\ng I-PER\nh O\n\n" * 10)
    code, out, _ = _run(
        [
            "score",
            str(tmp_path / "p.conll"),
            "--truth",
            str(tmp_path / "g.conll"),
            "--metric",
            "span_f1",
            "--format",
            "json",
            "--resamples",
            "200",
            "--interval",
            "percentile",
        ],
        capsys,
    )
    assert code == 0
    assert json.loads(out)[0]["value"] == pytest.approx(
        2 * 3 / (3 + 4)
    )  # conlleval: I-PER after O opens a chunk
    code, out, _ = _run(
        [
            "score",
            str(tmp_path / "p.conll"),
            "--truth",
            str(tmp_path / "g.conll"),
            "--metric",
            "span_f1",
            "--tag-mode",
            "strict",
            "--format",
            "json",
            "--resamples",
            "200",
            "--interval",
            "percentile",
        ],
        capsys,
    )
    assert json.loads(out)[0]["value"] == pytest.approx(
        2 * 2 / (2 + 3)
    )  # strict IOB2: the stray I-PER is no chunk


def test_readers_take_bytes_with_a_name() -> None:
    """The service reads uploads from storage: bytes with the upload's name (format from its extension)."""
    truth = read_text_truth(
        [b'{"id": "a", "reference": "x y"}\n{"id": "b", "reference": "z"}\n'], names=["t.jsonl"]
    )
    assert truth.ids == ["a", "b"]
    assert read_hypotheses(b"id,text\nb,q\na,p\n", truth, name="up.csv") == ["p", "q"]
    with pytest.raises(InputError, match=r"^up.txt:2: 1 lines, but the truth t.jsonl has 2 segments"):
        read_hypotheses(b"only\n", truth, name="up.txt")
