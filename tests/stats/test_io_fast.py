"""The pyarrow fast path of stats.io (issue 10 point 4, issue 14 point 5, issue 11 point 5).

- A file the fast path accepts gives exactly what the line-precise reader gives; one it refuses gets the
  line-precise reader's message (whole file when small, the rows up to the first problem when large).
- Row counts are bounded before anything is materialised: a Parquet file from its metadata, a CSV file
  while its blocks stream in; memory stays a small multiple of the file's size.
- Non-ASCII digits are not numbers; the CLI takes labels that hold commas.
"""

from __future__ import annotations

import io
import json
import tracemalloc
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stats import io as sio
from stats.cli import main
from stats.io import InputError, read_predictions, read_truth

IDS = ["a", "b", "c"]
LABELS = ["cat", "dog"]


def _outcome(call):  # type: ignore[no-untyped-def]
    try:
        out = call()
    except InputError as exc:
        return ("error", str(exc))
    return ("ok", out.dtype.str, out.tolist())


def _slow_predictions(data: bytes, **options):  # type: ignore[no-untyped-def]
    return sio._slow_predictions(sio._table(data, "p.csv"), **options)


# --- non-ASCII digits (issue 11 point 5) -------------------------------------------------------------
@pytest.mark.parametrize("digits", ["\u0663", "\u0661\u066b\u0665", "\u0967", "\uff11", "0.\u0665"])
def test_non_ascii_digits_are_not_read_as_numbers(digits: str) -> None:
    data = f"id,score\na,0.5\nb,{digits}\nc,0.25\n".encode()
    with pytest.raises(InputError) as info:
        read_predictions(data, item_ids=IDS, kind="score", name="p.csv")
    assert str(info.value) == f"p.csv:3:2: score '{digits}' is not a number (only the digits 0-9 are read)"
    truth = f"id,label\na,1\nb,{digits}\n".encode()
    with pytest.raises(InputError, match=r"label .* is not a number"):
        read_truth(truth, kind="value", name="t.csv")


# --- fast path equals the line-precise reader ----------------------------------------------------------
_FIELD = st.sampled_from(["a", "b", "c", "zz", "cat", "dog", "cow", "", " dog ", '"cat"', '"d,og"', "0.5",
                          "1e-3", "NaN", "\u0663", "\u00a0cat", "x\u2003", '"a"b', '"x\ny"', "1.5"])  # fmt: skip
_LINE = st.lists(_FIELD, min_size=1, max_size=3).map(",".join)


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(
    header=st.sampled_from(
        ["id,prediction", "id,score", "id, prediction", "id,prediction,id", "id;prediction"]
    ),
    lines=st.lists(_LINE, max_size=5),
    newline=st.sampled_from(["\n", "\r\n", "\r"]),
    kind=st.sampled_from(["label", "score"]),
)
def test_fast_path_answers_exactly_as_the_line_precise_reader(
    header: str, lines: list[str], newline: str, kind: str
) -> None:
    data = newline.join([header, *lines, ""]).encode()
    options = {
        "item_ids": IDS,
        "kind": kind,
        "label_set": LABELS,
        "probabilities": kind == "score",
        "min_ranks": 1,
    }
    fast = _outcome(lambda: read_predictions(data, name="p.csv", **options))
    slow = _outcome(lambda: _slow_predictions(data, **options))
    assert fast == slow


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    rows=st.lists(st.tuples(_FIELD, _FIELD, _FIELD), max_size=5),
    kind=st.sampled_from(["label", "value"]),
    header=st.sampled_from(["id,label,g", "id,label,grp", "label,id,g"]),
)
def test_fast_truth_equals_the_line_precise_reader(
    rows: list[tuple[str, str, str]], kind: str, header: str
) -> None:
    data = "\n".join([header] + [",".join(r) for r in rows]).encode()
    options = {"kind": kind, "label_set": None, "group_column": "g", "max_rows": None}

    def slow() -> sio.Truth:
        return sio._slow_truth(sio._table(data, "t.csv"), **options)  # type: ignore[arg-type]

    def as_tuple(call):  # type: ignore[no-untyped-def]
        try:
            t = call()
        except InputError as exc:
            return ("error", str(exc))
        return ("ok", t.ids.tolist(), t.labels.dtype.str, t.labels.tolist(), t.groups.tolist())

    assert as_tuple(lambda: read_truth(data, name="t.csv", group_column="g", kind=kind)) == as_tuple(slow)


def test_parquet_text_columns_take_the_fast_path_and_number_ids_the_line_precise_reader(monkeypatch) -> None:
    slow_calls: list[int] = []
    original = sio._slow_predictions
    monkeypatch.setattr(sio, "_slow_predictions", lambda *a, **k: slow_calls.append(1) or original(*a, **k))
    out = io.BytesIO()
    pq.write_table(pa.table({"id": ["c", "a", "b"], "score": ["0.1", "0.2", "0.3"]}), out)
    got = read_predictions(out.getvalue(), item_ids=IDS, kind="score")
    assert got.tolist() == [0.2, 0.3, 0.1] and slow_calls == []
    out = io.BytesIO()
    pq.write_table(pa.table({"id": [3, 1, 2], "score": ["0.1", "0.2", "0.3"]}), out)  # number ids: str()
    got = read_predictions(out.getvalue(), item_ids=["1", "2", "3"], kind="score")
    assert got.tolist() == [0.2, 0.3, 0.1]
    assert slow_calls == [1]


# --- bounded rows and memory ---------------------------------------------------------------------------
def _many_rows_parquet(rows: int) -> bytes:
    out = io.BytesIO()
    table = pa.table({"id": pa.array(["a"] * rows), "prediction": pa.array(["cat"] * rows)})
    pq.write_table(table, out, compression="zstd")
    return out.getvalue()


def test_a_small_parquet_of_millions_of_rows_is_refused_from_its_metadata() -> None:
    data = _many_rows_parquet(2_000_000)
    assert len(data) < 200_000  # a tiny upload that would decode to millions of Python strings
    tracemalloc.start()
    try:
        with pytest.raises(InputError) as info:
            read_predictions(data, item_ids=IDS, kind="label", label_set=LABELS, name="p.parquet")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(info.value) == "p.parquet: the file has 2,000,000 rows; this task has 3 items"
    assert peak < 4 * 2**20, peak
    with pytest.raises(
        InputError, match=r"^p\.parquet: the file has 2,000,000 rows, more than the limit of 10 items$"
    ):
        read_truth(data, name="p.parquet", max_rows=10)


def test_a_csv_truth_with_more_rows_than_the_limit_is_refused_at_the_first_row_over_it() -> None:
    data = ("id,label\n" + "".join(f"i{i},x\n" for i in range(12))).encode()
    with pytest.raises(InputError) as info:
        read_truth(data, name="t.csv", max_rows=10)
    assert str(info.value) == "t.csv:12: more than the limit of 10 items"
    assert len(read_truth(data, name="t.csv", max_rows=12).ids) == 12


def _big_csv(n: int, bad_row: int | None = None) -> tuple[list[str], bytes]:
    ids = [f"item-{i:07d}" for i in range(n)]
    labels = ["cat" if i % 3 else "dog" for i in range(n)]
    if bad_row is not None:
        labels[bad_row] = "cow"
    body = "id,prediction\n" + "".join(f"{i},{y}\n" for i, y in zip(ids, labels, strict=True))
    return ids, body.encode()


def _traced(call):  # type: ignore[no-untyped-def]
    tracemalloc.start()
    try:
        try:
            result = call()
        except InputError as exc:
            result = exc
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_large_csv_is_read_in_memory_bounded_by_its_size_and_equal_to_the_line_precise_reader() -> None:
    ids, data = _big_csv(300_000)  # 6.3 MB
    fast, fast_peak = _traced(lambda: read_predictions(data, item_ids=ids, kind="label", label_set=LABELS))
    slow, slow_peak = _traced(
        lambda: _slow_predictions(
            data, item_ids=ids, kind="label", label_set=LABELS, probabilities=False, min_ranks=1
        )
    )
    assert fast.tolist() == slow.tolist() and fast.dtype == slow.dtype
    # the line-precise reader holds a Python list per row and a str per cell (~20x the file here)
    assert fast_peak < 8 * len(data) < slow_peak, (fast_peak, slow_peak, len(data))


def test_a_large_refused_csv_gets_the_line_precise_message_from_the_rows_up_to_the_problem() -> None:
    ids, data = _big_csv(300_000, bad_row=250_000)
    assert len(data) > sio.EXPLAIN_WHOLE_BYTES
    fast, fast_peak = _traced(
        lambda: read_predictions(data, item_ids=ids, kind="label", label_set=LABELS, name="p.csv")
    )
    assert isinstance(fast, InputError)
    assert str(fast) == "p.csv:250002:2: unknown label 'cow' (labels: cat, dog)"
    assert fast_peak < 8 * len(data), fast_peak
    # one more row than the task has items: the rows past the limit are never read as rows
    more = data + b"item-9999999,cat\n"
    error, _ = _traced(
        lambda: read_predictions(more, item_ids=ids[:-1], kind="label", label_set=LABELS, name="p.csv")
    )
    assert str(error) == "p.csv:300001:1: unknown id 'item-0299999' (not an item of this task)"


# --- the CLI's label set with commas (issue 11 point 5) ------------------------------------------------
@pytest.fixture
def comma_task(tmp_path: Path) -> Path:
    labels = ["New York, NY", "Paris, FR", "Oslo"]
    rng = np.random.default_rng(5)
    truth = rng.integers(0, 3, 60)
    (tmp_path / "truth.csv").write_text(
        "id,label\n" + "".join(f'i{i:02d},"{labels[t]}"\n' for i, t in enumerate(truth))
    )
    (tmp_path / "pred.csv").write_text(
        "id,prediction\n"
        + "".join(f'i{i:02d},"{labels[(t + (i % 4 == 0)) % 3]}"\n' for i, t in enumerate(truth))
    )
    (tmp_path / "labels.txt").write_text("\n".join(labels) + "\n")
    return tmp_path


@pytest.mark.parametrize(
    "label_args",
    [
        ["--label", "New York, NY", "--label", "Paris, FR", "--label", "Oslo"],
        ["--labels-file", "{dir}/labels.txt"],
    ],
)
def test_cli_takes_labels_with_commas(comma_task: Path, label_args: list[str], capsys) -> None:
    args = [a.format(dir=comma_task) for a in label_args]
    argv = ["score", "--truth", str(comma_task / "truth.csv"), "--metric", "macro_f1", "--resamples", "200"]
    code = main([*argv, *args, "--format", "json", str(comma_task / "pred.csv")])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out)[0]["value"] > 0.5
    # the comma-separated form cannot say these labels: it splits them and the truth's labels are unknown
    code = main([*argv, "--labels", "New York, NY,Paris, FR,Oslo", str(comma_task / "pred.csv")])
    assert code == 2 and "unknown label 'New York, NY'" in capsys.readouterr().err


@settings(max_examples=100, deadline=None, derandomize=True)
@given(
    values=st.one_of(
        st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=3, max_size=3).map(pa.array),
        st.lists(st.floats(width=32), min_size=3, max_size=3).map(lambda v: pa.array(v, pa.float32())),
        st.lists(st.integers(-(2**63), 2**63 - 1), min_size=3, max_size=3).map(
            lambda v: pa.array(v, pa.int64())
        ),
    ),
)
def test_parquet_number_columns_are_read_as_the_line_precise_reader_reads_them(values: pa.Array) -> None:
    column = values
    out = io.BytesIO()
    pq.write_table(pa.table({"id": ["c", "a", "b"], "prediction": column}), out)
    data = out.getvalue()
    options = {"item_ids": IDS, "kind": "value", "label_set": None, "probabilities": False, "min_ranks": 1}
    fast = _outcome(lambda: read_predictions(data, name="p.csv", **options))
    slow = _outcome(lambda: _slow_predictions(data, **options))
    assert fast == slow


def test_a_parquet_float_column_takes_the_fast_path(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(sio, "_slow_predictions", lambda *a, **k: pytest.fail("the line-precise reader ran"))
    out = io.BytesIO()
    pq.write_table(pa.table({"id": ["c", "a", "b"], "score": [0.1, 0.2, 0.3]}), out)
    assert read_predictions(out.getvalue(), item_ids=IDS, kind="score").tolist() == [0.2, 0.3, 0.1]
