"""Input parsing: every malformed case gives one InputError with the exact message and position."""

from __future__ import annotations

import io
import re

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from stats.io import InputError, read_predictions, read_truth

IDS = ["a", "b", "c"]
LABELS = ["cat", "dog"]


def _pred(text: str | bytes, kind: str = "label", **kwargs) -> np.ndarray:
    data = text.encode() if isinstance(text, str) else text
    return read_predictions(data, item_ids=IDS, kind=kind, label_set=LABELS, name="p.csv", **kwargs)


def _error(text: str | bytes, kind: str = "label", **kwargs) -> str:
    with pytest.raises(InputError) as info:
        _pred(text, kind, **kwargs)
    return str(info.value)


def test_reads_labels_in_task_order() -> None:
    out = _pred("id,prediction\nc,dog\na,cat\nb,dog\n")
    assert out.tolist() == ["cat", "dog", "dog"]


def test_accepts_utf8_bom_crlf_blank_lines_and_quotes() -> None:
    out = _pred(b'\xef\xbb\xbfid,prediction\r\n"a",cat\r\n\r\nb,"dog"\r\nc,cat\r\n')
    assert out.tolist() == ["cat", "dog", "cat"]


def test_scores_and_ranked_labels() -> None:
    scores = _pred("id,score\na,0.25\nb,1e-3\nc,1\n", kind="score", probabilities=True)
    np.testing.assert_array_equal(scores, [0.25, 0.001, 1.0])
    ranked = _pred("id,prediction_1,prediction_2\na,cat,dog\nb,dog,cat\nc,cat,dog\n", kind="ranked_labels")
    assert ranked.tolist() == [["cat", "dog"], ["dog", "cat"], ["cat", "dog"]]


@pytest.mark.parametrize(
    ("text", "kind", "expected"),
    [
        ("", "label", "p.csv: the file is empty"),
        ("\n\n", "label", "p.csv: the file is empty"),
        ("id,prediction\n", "label", "p.csv:1: the file has a header but no rows"),
        (
            "id,guess\na,cat\n",
            "label",
            "p.csv:1: missing column 'prediction' (the header must be: id,prediction)",
        ),
        (
            "id,prediction,extra\na,cat,1\n",
            "label",
            "p.csv:1:3: unexpected column 'extra' (the header must be: id,prediction)",
        ),
        ("id,prediction,id\na,cat,a\n", "label", "p.csv:1:3: column 'id' appears twice"),
        ("id,prediction\na,cat\nb,dog,x\nc,cat\n", "label", "p.csv:3:3: expected 2 fields, found 3"),
        ("id,prediction\na,cat\n,dog\nc,cat\n", "label", "p.csv:3:1: empty id"),
        ("id,prediction\na,cat\nb,dog\na,dog\n", "label", "p.csv:4:1: duplicate id 'a' (first on line 2)"),
        ("id,prediction\na,cat\nzz,dog\n", "label", "p.csv:3:1: unknown id 'zz' (not an item of this task)"),
        ("id,prediction\na,cat\n", "label", "p.csv: missing predictions for 2 of 3 ids: 'b', 'c'"),
        (
            "id,prediction\na,cat\nb,cow\nc,cat\n",
            "label",
            "p.csv:3:2: unknown label 'cow' (labels: cat, dog)",
        ),
        ("id,prediction\na,cat\nb,\nc,cat\n", "label", "p.csv:3:2: empty prediction"),
        ("id,score\na,0.1\nb,high\nc,0.2\n", "score", "p.csv:3:2: score 'high' is not a number"),
        ("id,score\na,0.1\nb,NaN\nc,0.2\n", "score", "p.csv:3:2: score 'NaN' is not a finite number"),
        ("id,score\na,0.1\nb,-inf\nc,0.2\n", "score", "p.csv:3:2: score '-inf' is not a finite number"),
        ("id,score\na,0.1\nb,1e999\nc,0.2\n", "score", "p.csv:3:2: score '1e999' is not a finite number"),
        ("id;prediction\na;cat\n", "label", "p.csv:1: the file seems to use ';' as delimiter; use commas"),
        ("id\tprediction\na\tcat\n", "label", "p.csv:1: the file seems to use tabs as delimiter; use commas"),
        (
            "id,prediction\na,cat\nb;dog\n",
            "label",
            "p.csv:3:1: expected 2 fields, found 1; the row seems to use another delimiter than commas",
        ),
        (
            "id,prediction_1,prediction_2\na,cat,cat\nb,dog,cat\nc,cat,dog\n",
            "ranked_labels",
            "p.csv:2:3: label 'cat' is ranked twice",
        ),
    ],
)
def test_malformed_predictions(text: str, kind: str, expected: str) -> None:
    assert _error(text, kind) == expected


def test_probability_range() -> None:
    text = "id,score\na,0.1\nb,1.5\nc,0.2\n"
    assert _error(text, "score", probabilities=True) == "p.csv:3:2: score 1.5 is not a probability in [0, 1]"
    assert _pred(text, "score").tolist() == [0.1, 1.5, 0.2]


def test_quoted_newlines_keep_line_numbers_right() -> None:
    text = 'id,score\na,0.1\n"b","0.5\n\n"\nc,x\n'
    # the record of "b" spans lines 3-5; the bad score is on line 6
    assert _error(text, "score") == "p.csv:6:2: score 'x' is not a number"
    text = 'id,prediction\n"a\n\n",cat\nzz,dog\n'
    assert _error(text) == "p.csv:5:1: unknown id 'zz' (not an item of this task)"


def test_unterminated_quote() -> None:
    assert _error('id,prediction\na,"cat\n').startswith("p.csv:2: malformed CSV: ")


def test_utf16_is_named() -> None:
    data = "id,prediction\na,cat\n".encode("utf-16")
    assert _error(data) == "p.csv: the file is UTF-16 encoded; save it as UTF-8"
    assert (
        _error("id,prediction\n".encode("utf-16-le")) == "p.csv: the file is UTF-16 encoded; save it as UTF-8"
    )


def _png_bytes() -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(1, 1))
    out = io.BytesIO()
    fig.savefig(out, format="png")
    plt.close(fig)
    return out.getvalue()


def _xlsx_bytes() -> bytes:
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr("[Content_Types].xml", "<Types/>")
        zf.writestr("xl/workbook.xml", "<workbook/>")
    return out.getvalue()


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (_png_bytes(), "p.csv: the file is a PNG image, not CSV or Parquet; upload the predictions as a CSV"),
        (b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n", "p.csv: the file is a PDF document, not CSV or Parquet"),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF\x00", "p.csv: the file is a JPEG image, not CSV or Parquet"),
        (_xlsx_bytes(), "p.csv: the file is an Excel workbook (.xlsx), not CSV; export the sheet as CSV"),
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(100), "p.csv: the file is an Excel 97-2003 workbook"),
        (bytes(range(256)) * 4, "p.csv: the file is binary, not text (it contains NUL bytes)"),
    ],
    ids=["png", "pdf", "jpeg", "xlsx", "xls", "binary"],
)
def test_binary_files_renamed_csv_are_named_not_called_utf16(data: bytes, expected: str) -> None:
    # A screenshot or a PDF renamed .csv was reported as "UTF-16 encoded" (issue 13, bug 2).
    message = _error(data)
    assert message.startswith(expected), message
    assert "UTF-16" not in message


def test_latin1_is_named_with_its_position() -> None:
    data = "id,prediction\na,cat\nb,caf\u00e9\n".encode("latin-1")
    assert _error(data) == (
        "p.csv:3:6: byte 0xE9 is not valid UTF-8 (the file looks Latin-1 or Windows-1252 encoded); "
        "save it as UTF-8"
    )


def test_size_limit_checked_before_reading(tmp_path) -> None:
    path = tmp_path / "big.csv"
    path.write_text("id,prediction\n" + "a,cat\n" * 100)
    with pytest.raises(InputError, match="more than the limit of 50"):
        read_predictions(path, item_ids=IDS, kind="label", label_set=LABELS, max_bytes=50)

    class Stream(io.BytesIO):
        name = "stream.csv"

    with pytest.raises(
        InputError, match=re.escape("stream.csv: the file is more than the limit of 50 bytes")
    ):
        read_predictions(
            Stream(path.read_bytes()), item_ids=IDS, kind="label", label_set=LABELS, max_bytes=50
        )


def test_path_and_file_object_sources(tmp_path) -> None:
    path = tmp_path / "p.csv"
    path.write_text("id,prediction\na,cat\nb,dog\nc,cat\n")
    from_path = read_predictions(path, item_ids=IDS, kind="label", label_set=LABELS)
    with path.open("rb") as fh:
        from_file = read_predictions(fh, item_ids=IDS, kind="label", label_set=LABELS, name="upload.csv")
    assert from_path.tolist() == from_file.tolist()


def test_parquet_predictions_and_errors() -> None:
    buf = io.BytesIO()
    pq.write_table(pa.table({"id": ["b", "a", "c"], "score": [0.5, 0.25, None]}), buf)
    with pytest.raises(InputError) as info:
        read_predictions(buf.getvalue(), item_ids=IDS, kind="score", name="p.parquet")
    assert str(info.value) == "p.parquet: row 3, column 'score': score '' is not a number"
    buf = io.BytesIO()
    pq.write_table(pa.table({"id": ["b", "a", "c"], "score": [0.5, 0.25, 1.0]}), buf)
    scores = read_predictions(buf.getvalue(), item_ids=IDS, kind="score", name="p.parquet")
    assert scores.tolist() == [0.25, 0.5, 1.0]


def test_prediction_errors_never_quote_hidden_labels(tmp_path) -> None:
    # The parser is given only public information; a wrong guess is quoted, never the truth.
    truth = read_truth(b"id,label\na,cat\nb,dog\nc,dog\n", name="truth.csv")
    message = _error("id,prediction\na,cat\nb,cat\nc,dogg\n")
    assert message == "p.csv:4:2: unknown label 'dogg' (labels: cat, dog)"
    assert "b,dog" not in message
    assert truth.labels.tolist() == ["cat", "dog", "dog"]


def test_truth_sorted_with_groups_and_values() -> None:
    truth = read_truth(b"id,label,writer\nb,dog,w1\na,cat,w2\n", name="t.csv", group_column="writer")
    assert truth.ids.tolist() == ["a", "b"]
    assert truth.labels.tolist() == ["cat", "dog"]
    assert truth.groups is not None and truth.groups.tolist() == ["w2", "w1"]
    values = read_truth(b"id,label\nx,1.5\ny,-2\n", name="t.csv", kind="value")
    assert values.labels.dtype == np.float64 and values.labels.tolist() == [1.5, -2.0]


@pytest.mark.parametrize(
    ("data", "kwargs", "expected"),
    [
        (
            b"id,label\na,cat\nb,cow\n",
            {"label_set": LABELS},
            "t.csv:3:2: unknown label 'cow' (labels: cat, dog)",
        ),
        (b"id,label\na,1\nb,x\n", {"kind": "value"}, "t.csv:3:2: label 'x' is not a number"),
        (b"id,label\na,cat\n", {"group_column": "writer"}, "t.csv:1: missing group column 'writer'"),
        (b"id,label,writer\na,cat,\n", {"group_column": "writer"}, "t.csv:2:3: empty group"),
        (b"id,label\na,cat\na,dog\n", {}, "t.csv:3:1: duplicate id 'a' (first on line 2)"),
    ],
)
def test_malformed_truth(data: bytes, kwargs: dict, expected: str) -> None:
    with pytest.raises(InputError) as info:
        read_truth(data, name="t.csv", **kwargs)
    assert str(info.value) == expected
