"""Read truth and prediction files (CSV or Parquet) with clear, located errors.

Every problem raises one exception type, :class:`InputError`, carrying the message, the file's display
name and, for CSV, the 1-based line (as a text editor numbers lines; the header is line 1, and a quoted
field that spans lines counts every physical line) and the 1-based column (the CSV field position; for
an encoding error, the character position in the line). ``str(error)`` is ``file:line:column: message``.

Prediction files are validated only against public information: the task's item ids and its label set.
:func:`read_predictions` never sees the hidden truth, so none of its messages can carry a hidden label;
they quote only the participant's own values, the id and the position.

The formats are documented in docs/formats.md.
"""

from __future__ import annotations

import csv
import io
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

import numpy as np
from numpy.typing import NDArray

from stats import _fastio
from stats.checks import check_count
from stats.metrics import Metric, PredictionKind
from stats.metrics import truth_kind as metric_truth_kind

__all__ = [
    "DEFAULT_MAX_BYTES",
    "InputError",
    "Truth",
    "decode_text",
    "metric_labels",
    "prediction_columns",
    "read_predictions",
    "read_truth",
    "truth_kind",
]

#: Largest file read by default (checked before reading the whole file).
DEFAULT_MAX_BYTES = 256 * 1024 * 1024

Source = str | os.PathLike[str] | bytes | IO[bytes]

#: ASCII digits only: ``\d`` in a str pattern would also take Arabic-Indic and other Unicode digits, and
#: ``float()`` reads those as numbers.
_NUMBER = re.compile(r"^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$")
_NON_FINITE = re.compile(r"^[+-]?(?:nan|inf|infinity)$", re.IGNORECASE)
_MAX_LISTED = 20
#: Magic bytes of the archive formats a participant may upload by mistake; archives are never opened.
_ARCHIVES = ((b"PK\x03\x04", "zip"), (b"PK\x05\x06", "zip"), (b"\x1f\x8b", "gzip"), (b"7z\xbc\xaf", "7z"))
ARCHIVE_REFUSED = (
    "the file is a {kind} archive; archives are not accepted: upload the CSV or Parquet file itself"
)


class InputError(ValueError):
    """A malformed input file.

    Attributes
    ----------
    message : str
        What is wrong, quoting only the file's own content.
    file : str
        The file's display name.
    line, column : int or None
        1-based position (``None`` when the problem is the whole file, or for Parquet, whose messages
        name the row instead).
    """

    def __init__(self, message: str, *, file: str, line: int | None = None, column: int | None = None):
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.column = column

    def __str__(self) -> str:
        where = [self.file]
        if self.line is not None:
            where.append(str(self.line))
            if self.column is not None:
                where.append(str(self.column))
        return f"{':'.join(where)}: {self.message}"


@dataclass(frozen=True, eq=False)
class Truth:
    """Hidden labels of a task, in canonical item order (ids sorted).

    Attributes
    ----------
    name : str
        Display name of the file.
    ids : ndarray of str, shape (N,)
        Item ids, sorted (the canonical order of the task: W's columns follow it).
    labels : ndarray, shape (N,)
        Labels as strings, or float64 values for ``kind="value"``.
    groups : ndarray of str, shape (N,), or None
        The group column, when one was named.
    """

    name: str
    ids: NDArray[np.str_]
    labels: NDArray[Any]
    groups: NDArray[np.str_] | None

    def label_set(self) -> list[str]:
        """The sorted distinct labels (for classification truths)."""
        return sorted({str(x) for x in self.labels.tolist()})


@dataclass
class _Table:
    name: str
    header: list[str]
    rows: list[list[str]]
    lines: list[int]  # CSV: line where each row starts; Parquet: 1-based row number
    parquet: bool

    def error(self, message: str, row: int | None = None, column: int | None = None) -> InputError:
        if row is None:
            return InputError(message, file=self.name)
        if self.parquet:
            where = f"row {self.lines[row]}"
            if column is not None:
                where += f", column '{self.header[column - 1]}'"
            return InputError(f"{where}: {message}", file=self.name)
        return InputError(message, file=self.name, line=self.lines[row], column=column)


def _display_name(source: Source, name: str | None) -> str:
    if name is not None:
        return name
    if isinstance(source, str | os.PathLike):
        return os.fspath(source)
    return getattr(source, "name", None) or "<input>"


def _read_bytes(source: Source, name: str, max_bytes: int) -> bytes:
    if isinstance(source, bytes):
        data = source
    elif isinstance(source, str | os.PathLike):
        path = Path(source)
        try:
            size = path.stat().st_size
        except OSError as exc:
            raise InputError(f"cannot read the file: {exc.strerror}", file=name) from None
        if size > max_bytes:
            raise InputError(f"the file is {size} bytes, more than the limit of {max_bytes}", file=name)
        data = path.read_bytes()
    else:
        data = source.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise InputError(f"the file is more than the limit of {max_bytes} bytes", file=name)
    return data


#: Magic bytes of files that people rename to .csv by mistake: what the file is, and what to upload instead.
_NOT_TEXT = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF87a", "a GIF image"),
    (b"GIF89a", "a GIF image"),
    (b"%PDF-", "a PDF document"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an Excel 97-2003 workbook (.xls) or another Office file"),
)
_SPREADSHEET_HINT = "export the sheet as CSV (for example File > Save As > CSV UTF-8) and upload that"


def _refuse_archive(data: bytes, name: str) -> None:
    """Refuse archives and binary files that are not CSV or Parquet, saying what the file is."""
    for magic, what in _NOT_TEXT:
        if data.startswith(magic):
            hint = _SPREADSHEET_HINT if "Excel" in what else "upload the predictions as a CSV or Parquet file"
            raise InputError(f"the file is {what}, not CSV or Parquet; {hint}", file=name)
    if data.startswith(b"PK\x03\x04") and (b"[Content_Types].xml" in data[:4096] or b"xl/" in data[:4096]):
        raise InputError(f"the file is an Excel workbook (.xlsx), not CSV; {_SPREADSHEET_HINT}", file=name)
    if data.startswith(b"PK\x03\x04") and b"opendocument.spreadsheet" in data[:4096]:
        raise InputError(
            f"the file is an OpenDocument spreadsheet (.ods), not CSV; {_SPREADSHEET_HINT}", file=name
        )
    for magic, kind in _ARCHIVES:
        if data.startswith(magic):
            raise InputError(ARCHIVE_REFUSED.format(kind=kind), file=name)


def _refuse_binary(data: bytes, name: str) -> None:
    """UTF-16 text, or other bytes with NUL in them: neither is a UTF-8 CSV file, and each gets its own word."""
    if _looks_utf16(data):
        raise InputError("the file is UTF-16 encoded; save it as UTF-8", file=name)
    if b"\x00" in data[:4096]:
        raise InputError(
            "the file is binary, not text (it contains NUL bytes); upload the predictions as a CSV or "
            "Parquet file",
            file=name,
        )


def _looks_utf16(data: bytes) -> bool:
    """A BOM, or NUL bytes in every other position of the start (ASCII text stored as UTF-16)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return True
    head = data[:4096]
    if len(head) < 4:
        return False
    even, odd = head[0::2], head[1::2]
    return max(even.count(0) / len(even), odd.count(0) / len(odd)) > 0.9


def decode_text(data: bytes, *, name: str) -> str:
    """The text of a CSV file's bytes (UTF-8, an optional BOM), or the :class:`InputError` the readers
    raise for an archive, UTF-16 or bytes that are not UTF-8 (with line and column)."""
    _refuse_archive(data, name)
    return _decode(data, name)


def _decode(data: bytes, name: str) -> str:
    _refuse_binary(data, name)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        line = data.count(b"\n", 0, exc.start) + 1
        column = len(data[line_start : exc.start].decode("utf-8", errors="replace")) + 1
        raise InputError(
            f"byte 0x{data[exc.start]:02X} is not valid UTF-8 (the file looks Latin-1 or "
            "Windows-1252 encoded); save it as UTF-8",
            file=name,
            line=line,
            column=column,
        ) from None


def _read_parquet(data: bytes, name: str) -> _Table:
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(io.BytesIO(data))
    except Exception as exc:  # pyarrow raises several types for a damaged file
        raise InputError(f"not a readable Parquet file ({type(exc).__name__})", file=name) from None
    header = [str(c) for c in table.column_names]
    columns = [table.column(i).to_pylist() for i in range(table.num_columns)]
    rows = [["" if v is None else str(v) for v in values] for values in zip(*columns, strict=True)]
    return _Table(name, header, rows, list(range(1, len(rows) + 1)), parquet=True)


def _read_csv(text: str, name: str) -> _Table:
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    header: list[str] | None = None
    rows: list[list[str]] = []
    lines: list[int] = []
    header_line = 1
    prev_end = 0
    try:
        for record in reader:
            start = prev_end + 1
            prev_end = reader.line_num
            if not record or (len(record) == 1 and record[0].strip() == ""):
                continue  # blank line
            if header is None:
                header, header_line = [h.strip() for h in record], start
                continue
            rows.append(record)
            lines.append(start)
    except csv.Error as exc:
        raise InputError(f"malformed CSV: {exc}", file=name, line=prev_end + 1) from None
    if header is None:
        raise InputError("the file is empty", file=name)
    table = _Table(name, header, rows, lines, parquet=False)
    if len(header) == 1:
        for delimiter, label in ((";", "';'"), ("\t", "tabs")):
            if delimiter in header[0]:
                raise InputError(
                    f"the file seems to use {label} as delimiter; use commas", file=name, line=header_line
                )
    return table


def _load(source: Source, name: str | None, max_bytes: int) -> tuple[str, bytes]:
    """The file's display name and bytes, after the checks both readers share (size, empty, archive,
    UTF-16)."""
    check_count(max_bytes, name="max_bytes", minimum=1)
    display = _display_name(source, name)
    data = _read_bytes(source, display, max_bytes)
    if not data.strip():
        raise InputError("the file is empty", file=display)
    _refuse_archive(data, display)
    if not data.startswith(b"PAR1"):
        _refuse_binary(data, display)
    return display, data


def _table(data: bytes, name: str) -> _Table:
    """The line-precise reader: every row as a list of strings, with its line."""
    if data.startswith(b"PAR1"):
        return _read_parquet(data, name)
    return _read_csv(_decode(data, name), name)


#: Files up to this size that the fast path refuses are explained by the line-precise reader in full;
#: larger ones only up to the row where the fast path stopped (memory stays bounded by the file's size).
EXPLAIN_WHOLE_BYTES = 1024 * 1024


def _explain(data: bytes, name: str, refused: _fastio.Refused) -> tuple[_Table, bool]:
    """The line-precise reader's table of a file the fast path refused, and whether it is the whole file.

    A large file gives only the rows that explain the refusal (the first bad row, and the first row of a
    repeated id), each with its own line, so the line-precise reader raises the same message in memory
    bounded by the file's size; the fast path checks in that reader's order, so every earlier row passes
    its checks."""
    _fastio.release_memory()  # the fast path's arrays are freed: give their pages back first
    rows = {refused.row} if refused.row is not None else set()
    if refused.related is not None:
        rows.add(refused.related)
    if len(data) <= EXPLAIN_WHOLE_BYTES or (data.startswith(b"PAR1") and not rows):
        return _table(data, name), True
    if data.startswith(b"PAR1"):
        import pyarrow as pa
        import pyarrow.parquet as pq

        order = sorted(rows)
        picked = pq.read_table(pa.BufferReader(data)).take(order)
        columns = [picked.column(i).to_pylist() for i in range(picked.num_columns)]
        cells = [["" if v is None else str(v) for v in values] for values in zip(*columns, strict=True)]
        header = [str(c) for c in picked.column_names]
        return _Table(name, header, cells, [r + 1 for r in order], parquet=True), False
    _decode(data, name)  # an encoding error is the explanation (the text itself is not kept)
    records = _fastio.records_at(data, rows)
    if records.error is not None and len(records.found) < max(len(rows), 1):
        line, message = records.error
        raise InputError(f"malformed CSV: {message}", file=name, line=line)
    if not records.found:
        return _table(data, name), True
    order = sorted(records.found)
    cells = [records.found[r][1] for r in order]
    return _Table(name, records.header, cells, [records.found[r][0] for r in order], parquet=False), False


def _check_header(table: _Table, required: Sequence[str], optional: Sequence[str] = ()) -> dict[str, int]:
    expected = ",".join(required)
    seen: dict[str, int] = {}
    for i, col in enumerate(table.header):
        if col in seen:
            raise _header_error(table, f"column '{col}' appears twice", i + 1)
        seen[col] = i
    for col in required:
        if col not in seen:
            raise _header_error(table, f"missing column '{col}' (the header must be: {expected})", None)
    for col, i in seen.items():
        if col not in required and col not in optional:
            raise _header_error(table, f"unexpected column '{col}' (the header must be: {expected})", i + 1)
    if not table.rows:
        raise _header_error(table, "the file has a header but no rows", None)
    return seen


def _header_error(table: _Table, message: str, column: int | None) -> InputError:
    if table.parquet:
        return InputError(message, file=table.name)
    return InputError(message, file=table.name, line=1, column=column)


def _check_row_width(table: _Table) -> None:
    width = len(table.header)
    for r, row in enumerate(table.rows):
        if len(row) != width:
            column = min(len(row), width) + 1 if len(row) > width else len(row)
            hint = ""
            if len(row) == 1 and (";" in row[0] or "\t" in row[0]):
                hint = "; the row seems to use another delimiter than commas"
            raise table.error(f"expected {width} fields, found {len(row)}{hint}", r, column)


#: What a spreadsheet would run as a formula; CSV downloads write such ids with a leading apostrophe.
_FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def _read_ids(table: _Table, col: int, *, known: Mapping[str, int] | None = None) -> list[str]:
    first_row: dict[str, int] = {}
    ids: list[str] = []
    for r, row in enumerate(table.rows):
        item = row[col].strip()
        if not item:
            raise table.error("empty id", r, col + 1)
        if (
            known is not None
            and item not in known
            and item.startswith("'")
            and item[1:].startswith(_FORMULA_PREFIXES)
            and item[1:] in known
        ):
            item = item[1:]  # the neutralised form of a formula-like id, as the CSV downloads write it
        if item in first_row:
            first = table.lines[first_row[item]]
            where = f"row {first}" if table.parquet else f"line {first}"
            raise table.error(f"duplicate id '{item}' (first on {where})", r, col + 1)
        first_row[item] = r
        ids.append(item)
    return ids


def _parse_number(table: _Table, text: str, r: int, col: int, what: str) -> float:
    value = text.strip()
    if _NON_FINITE.match(value):
        raise table.error(f"{what} '{value}' is not a finite number", r, col + 1)
    if not _NUMBER.match(value):
        hint = (
            " (only the digits 0-9 are read)" if any(c.isdigit() and not c.isascii() for c in value) else ""
        )
        raise table.error(f"{what} '{value}' is not a number{hint}", r, col + 1)
    number = float(value)
    if not math.isfinite(number):
        raise table.error(f"{what} '{value}' is not a finite number", r, col + 1)
    return number


def _listed(labels: Sequence[str]) -> str:
    shown = ", ".join(labels[:_MAX_LISTED])
    return shown + (", ..." if len(labels) > _MAX_LISTED else "")


def read_truth(
    source: Source,
    *,
    name: str | None = None,
    kind: PredictionKind = "label",
    label_set: Sequence[str] | None = None,
    group_column: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_rows: int | None = None,
) -> Truth:
    """Read a truth file: ``id,label`` (plus the group column if named), CSV or Parquet.

    Parameters
    ----------
    source : path, bytes or binary file object
        The file.
    name : str, optional
        Display name for messages (default: the path, or the file object's name).
    kind : {"label", "ranked_labels", "score", "value"}, default "label"
        The metric's prediction kind; for ``"value"`` the labels must be finite numbers.
    label_set : sequence of str, optional
        When given, every label must belong to it.
    group_column : str, optional
        Name of a column holding each item's group (for the grouped bootstrap).
    max_bytes : int, default 256 MiB
        Larger files are refused before being read whole.
    max_rows : int, optional
        More items are refused (a Parquet file from its metadata, before reading; a CSV file while it is
        read).

    Returns
    -------
    Truth
        Items sorted by id.

    Raises
    ------
    InputError

    Examples
    --------
    >>> import io
    >>> t = read_truth(io.BytesIO(b"id,label\\n1,cat\\n2,dog\\n3,cat\\n"), name="truth.csv")
    >>> t.ids.tolist(), t.labels.tolist()
    (['1', '2', '3'], ['cat', 'dog', 'cat'])
    """
    display, data = _load(source, name, max_bytes)
    if group_column in ("id", "label"):
        raise ValueError("`group_column` must not be 'id' or 'label'.")
    if max_rows is not None:
        check_count(max_rows, name="max_rows", minimum=1)
    options = {"kind": kind, "label_set": label_set, "group_column": group_column, "max_rows": max_rows}
    try:
        return _fast_truth(data, display, max_bytes=max_bytes, **options)  # type: ignore[arg-type]
    except _fastio.TooManyRows as exc:
        raise InputError(_TOO_MANY_ITEMS.format(rows=exc.rows, limit=max_rows), file=display) from None
    except _fastio.TooLarge as exc:
        raise InputError(_PARQUET_TOO_LARGE.format(size=exc.size, limit=max_bytes), file=display) from None
    except _fastio.Refused as exc:
        # explained after the except block, which frees the fast path's arrays (its traceback's frames)
        refused = _fastio.Refused(exc.row, related=exc.related)
    table, whole = _explain(data, display, refused)
    if not whole:
        _slow_truth(table, **options)  # type: ignore[arg-type]  # raises, or:
        table = _table(data, display)
    return _slow_truth(table, **options)  # type: ignore[arg-type]


_TOO_MANY_ITEMS = "the file has {rows:,} rows, more than the limit of {limit:,} items"
_PARQUET_TOO_LARGE = "the Parquet file holds {size:,} bytes of data, more than the limit of {limit:,}"
_TOO_MANY_ROWS = "more than the limit of {limit:,} items"
_TOO_MANY_PREDICTIONS = "the file has {rows:,} rows; this task has {items:,} items"


def _fast_truth(
    data: bytes,
    name: str,
    *,
    kind: PredictionKind,
    label_set: Sequence[str] | None,
    group_column: str | None,
    max_rows: int | None,
    max_bytes: int,
) -> Truth:
    import pyarrow as pa
    import pyarrow.compute as pc

    table = _fastio.read_columns(data, max_rows=max_rows, max_bytes=max_bytes)
    expected = {"id", "label"} | ({group_column} if group_column else set())
    if set(table.header) != expected:
        raise _fastio.Refused(0)
    if table.over_limit:
        assert max_rows is not None
        line = _fastio.records_at(data, {max_rows}).found[max_rows][0]
        raise InputError(_TOO_MANY_ROWS.format(limit=max_rows), file=name, line=line)
    index = table.index()
    ids = table.columns[index["id"]]
    labels = table.columns[index["label"]]
    text = [ids] + ([] if kind == "value" else [labels])
    _fastio.require_text(*text, *([table.columns[index[group_column]]] if group_column else []))
    _fastio.check_ids(ids)
    values: NDArray[Any] | None = None
    if kind == "value":
        values = _fastio.check_numbers(labels)
    else:
        allowed = None if label_set is None else pa.array(sorted({str(x) for x in label_set}), pa.string())
        _fastio.check_labels([labels], allowed)
    groups = None
    if group_column:
        groups = table.columns[index[group_column]]
        empty = _fastio.first_true(pc.equal(pc.utf8_length(groups), 0))
        if empty is not None:
            raise _fastio.Refused(empty)
    order = pc.sort_indices(ids)
    return Truth(
        name=name,
        ids=_fastio.to_str_array(pc.take(ids, order)),
        labels=values[order.to_numpy()]
        if values is not None
        else _fastio.to_str_array(pc.take(labels, order)),
        groups=None if groups is None else _fastio.to_str_array(pc.take(groups, order)),
    )


def _slow_truth(
    table: _Table,
    *,
    kind: PredictionKind,
    label_set: Sequence[str] | None,
    group_column: str | None,
    max_rows: int | None,
) -> Truth:
    optional = [group_column] if group_column else []
    cols = _check_header(table, ["id", "label"], optional)
    if group_column and group_column not in cols:
        raise _header_error(table, f"missing group column '{group_column}'", None)
    if max_rows is not None and len(table.rows) > max_rows:
        raise table.error(_TOO_MANY_ROWS.format(limit=max_rows), max_rows)
    _check_row_width(table)
    ids = _read_ids(table, cols["id"])
    lab_col = cols["label"]
    allowed = None if label_set is None else {str(x) for x in label_set}
    values: list[Any] = []
    for r, row in enumerate(table.rows):
        text = row[lab_col].strip()
        if kind == "value":
            values.append(_parse_number(table, text, r, lab_col, "label"))
            continue
        if not text:
            raise table.error("empty label", r, lab_col + 1)
        if allowed is not None and text not in allowed:
            raise table.error(f"unknown label '{text}' (labels: {_listed(sorted(allowed))})", r, lab_col + 1)
        values.append(text)
    groups = None
    if group_column:
        g = cols[group_column]
        for r, row in enumerate(table.rows):
            if not row[g].strip():
                raise table.error("empty group", r, g + 1)
        groups = np.array([row[g].strip() for row in table.rows])
    order = np.argsort(np.array(ids), kind="stable")
    labels_arr = np.array(values, dtype=np.float64 if kind == "value" else None)
    return Truth(
        name=table.name,
        ids=np.array(ids)[order],
        labels=labels_arr[order],
        groups=None if groups is None else groups[order],
    )


def truth_kind(metric: Metric) -> Literal["label", "value"]:
    """The kind of item truth file a metric reads (the ``kind`` of :func:`read_truth`): numbers for the
    regression metrics (``prediction_kind == "value"``), labels for every other item metric.

    The one rule for the CLI (``stats.cli.inputs``) and the service (``leaderboard.scoring.engine``): the
    item readers' view of :func:`stats.metrics.truth_kind`, which also names the text truths (references,
    tags) that ``stats.text.io`` reads; a text metric here is refused (``ValueError``).
    """
    kind = metric_truth_kind(metric)
    if kind not in ("label", "value"):
        raise ValueError(f"{metric.name} reads {kind} (stats.text.io), not an item truth file")
    return "value" if kind == "value" else "label"


def metric_labels(metric: Metric, label_set: Sequence[Any] | None) -> list[str] | None:
    """The label set a metric takes, from a task's (or a truth file's) label set.

    ``None`` for regression metrics (they read no label set) and for an empty or absent label set; a
    binary-score metric (ROC AUC, AP, log loss, Brier) needs exactly two labels, else ``ValueError``
    ("a binary metric needs exactly two labels, the label set has N"). The order is kept: which of the
    two is positive is the caller's rule (:func:`stats.checks.order_positive`).

    >>> from stats.metrics import get_metric
    >>> metric_labels(get_metric("roc_auc"), ["cat", "dog"]), metric_labels(get_metric("rmse"), ["1"])
    (['cat', 'dog'], None)
    """
    if truth_kind(metric) == "value" or not label_set:
        return None
    labels = [str(x) for x in label_set]
    if metric.prediction_kind == "score" and len(labels) != 2:
        raise ValueError(f"a binary metric needs exactly two labels, the label set has {len(labels)}")
    return labels


def prediction_columns(kind: PredictionKind, *, ranks: int = 1) -> list[str]:
    """The value columns of a prediction file for ``kind`` (after ``id``)."""
    if kind == "score":
        return ["score"]
    if kind == "ranked_labels":
        return [f"prediction_{i}" for i in range(1, ranks + 1)]
    return ["prediction"]


def read_predictions(
    source: Source,
    *,
    item_ids: Sequence[str] | NDArray[Any],
    kind: PredictionKind,
    label_set: Sequence[str] | None = None,
    probabilities: bool = False,
    min_ranks: int = 1,
    name: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    check_only: bool = False,
) -> NDArray[Any]:
    """Read and validate a prediction file against the task's public item list and label set.

    Parameters
    ----------
    source : path, bytes or binary file object
        The file, CSV or Parquet.
    item_ids : sequence of str
        The task's public item ids; the result follows this order.
    kind : {"label", "ranked_labels", "score", "value"}
        ``id,prediction`` (a label), ``id,prediction_1,...,prediction_k`` (ranked labels),
        ``id,score`` (the positive class's score) or ``id,prediction`` (a number).
    label_set : sequence of str, optional
        The task's public label set; required for label kinds.
    probabilities : bool, default False
        Scores must lie in [0, 1] (log loss, Brier score).
    min_ranks : int, default 1
        For ranked labels, the least number of ranked columns (e.g. 5 for top-5 accuracy).
    name : str, optional
        Display name for messages.
    max_bytes : int, default 256 MiB
        Larger files are refused before being read whole.
    check_only : bool, default False
        Only check the file (a web process that validates an upload): the result is an empty array, and
        the N predictions (an array of N fixed-width strings for labels) are never made.

    Returns
    -------
    ndarray
        Shape (N,) (str labels or float64 numbers) or (N, k) for ranked labels, in ``item_ids`` order.

    Raises
    ------
    InputError
        Quoting only the file's own values, ids and positions, never a hidden label.

    Examples
    --------
    >>> import io
    >>> read_predictions(io.BytesIO(b"id,prediction\\n3,dog\\n1,cat\\n2,dog\\n"), item_ids=["1", "2", "3"],
    ...                  kind="label", label_set=["cat", "dog"], name="run.csv").tolist()  # the truth's order
    ['cat', 'dog', 'dog']
    """
    if kind in ("label", "ranked_labels") and label_set is None:
        raise ValueError("`label_set` is required for label predictions.")
    display, data = _load(source, name, max_bytes)
    options = {
        "item_ids": item_ids,
        "kind": kind,
        "label_set": label_set,
        "probabilities": probabilities,
        "min_ranks": min_ranks,
    }
    try:
        return _fast_predictions(
            data,
            display,
            max_bytes=max_bytes,
            check_only=check_only,
            **options,  # type: ignore[arg-type]
        )
    except _fastio.TooManyRows as exc:
        raise InputError(
            _TOO_MANY_PREDICTIONS.format(rows=exc.rows, items=len(item_ids)), file=display
        ) from None
    except _fastio.TooLarge as exc:
        raise InputError(_PARQUET_TOO_LARGE.format(size=exc.size, limit=max_bytes), file=display) from None
    except _fastio.Refused as exc:
        # explained after the except block, which frees the fast path's arrays (its traceback's frames)
        refused = _fastio.Refused(exc.row, related=exc.related)
    table, whole = _explain(data, display, refused)
    if not whole:
        _slow_predictions(table, partial=True, **options)  # type: ignore[arg-type]  # raises, or:
        table = _table(data, display)
    return _slow_predictions(table, **options)  # type: ignore[arg-type]


def _ranks(header: Sequence[str], kind: PredictionKind, min_ranks: int) -> int:
    if kind != "ranked_labels":
        return 1
    return max(sum(1 for h in header if re.fullmatch(r"prediction_[0-9]+", h)), min_ranks)


def _fast_predictions(
    data: bytes,
    name: str,
    *,
    item_ids: Sequence[str] | NDArray[Any],
    kind: PredictionKind,
    label_set: Sequence[str] | None,
    probabilities: bool,
    min_ranks: int,
    max_bytes: int,
    check_only: bool,
) -> NDArray[Any]:
    import pyarrow as pa
    import pyarrow.compute as pc

    table = _fastio.read_columns(data, max_rows=len(item_ids), max_bytes=max_bytes)
    value_cols = prediction_columns(kind, ranks=_ranks(table.header, kind, min_ranks))
    if set(table.header) != {"id", *value_cols}:
        raise _fastio.Refused(0)
    index = table.index()
    ids = table.columns[index["id"]]
    _fastio.require_text(ids)
    as_text = isinstance(item_ids, np.ndarray) and item_ids.dtype.kind == "U"
    items = pa.array(item_ids if as_text else [str(i) for i in item_ids], pa.string())
    # One hash lookup: each row's position in the task (-1: unknown or empty). A valid file is a permutation
    # of the task's items; anything else is located by the line-precise reader's checks, in its order.
    position = pc.fill_null(pc.index_in(ids, value_set=items), -1).to_numpy()
    known = position >= 0
    counts = np.bincount(position[known], minlength=len(item_ids))
    if not known.all() or counts.max(initial=0) > 1:
        _fastio.check_ids(ids)
        _fastio.check_known(ids, items)
    if table.over_limit:  # more rows than items: a row above must repeat an id or name an unknown one
        raise _fastio.Refused()
    values = [table.columns[index[c]] for c in value_cols]
    numbers = None
    if kind in ("score", "value"):
        numbers = _fastio.check_numbers(values[0], probabilities=probabilities)
    else:
        assert label_set is not None
        _fastio.require_text(*values)
        _fastio.check_labels(values, pa.array(sorted({str(x) for x in label_set}), pa.string()))
    if table.rows != len(item_ids):
        missing = [str(item_ids[i]) for i in np.flatnonzero(counts == 0)[:5]]
        raise InputError(_missing_message(len(item_ids) - table.rows, len(item_ids), missing), file=name)
    if check_only:
        return np.empty(0)
    rows = np.empty(len(item_ids), dtype=np.intp)
    rows[position] = np.arange(len(position))
    if numbers is not None:
        return numbers[rows]
    if kind == "label":
        return _fastio.to_str_array(values[0], rows)
    return np.stack([_fastio.to_str_array(v, rows) for v in values], axis=1)


def _missing_message(count: int, total: int, first: Sequence[str]) -> str:
    shown = ", ".join(f"'{m}'" for m in first[:5]) + (", ..." if count > 5 else "")
    return f"missing predictions for {count} of {total} ids: {shown}"


def _slow_predictions(
    table: _Table,
    *,
    item_ids: Sequence[str] | NDArray[Any],
    kind: PredictionKind,
    label_set: Sequence[str] | None,
    probabilities: bool,
    min_ranks: int,
    partial: bool = False,
) -> NDArray[Any]:
    """The line-precise reader's checks; ``partial``: ``table`` holds only some rows of the file (the
    explanation of a refusal), so it is not checked for completeness."""
    if kind == "ranked_labels":
        ranks = sum(1 for h in table.header if re.fullmatch(r"prediction_\d+", h))
        ranks = max(ranks, min_ranks)
    else:
        ranks = 1
    value_cols = prediction_columns(kind, ranks=ranks)
    cols = _check_header(table, ["id", *value_cols])
    _check_row_width(table)
    if partial:  # a few rows: no map of every item of the task
        raw = [row[cols["id"]].strip() for row in table.rows]
        wanted = set(raw) | {r[1:] for r in raw if r.startswith("'")}
        position = {str(item): i for i, item in enumerate(item_ids) if str(item) in wanted}
    else:
        position = {str(item): i for i, item in enumerate(item_ids)}
    ids = _read_ids(table, cols["id"], known=position)
    for r, item in enumerate(ids):
        if item not in position:
            raise table.error(f"unknown id '{item}' (not an item of this task)", r, cols["id"] + 1)
    if kind in ("score", "value"):
        col = cols[value_cols[0]]
        what = "score" if kind == "score" else "prediction"
        numbers = np.empty(len(ids))
        for r, row in enumerate(table.rows):
            value = _parse_number(table, row[col], r, col, what)
            if probabilities and not 0.0 <= value <= 1.0:
                raise table.error(f"score {row[col].strip()} is not a probability in [0, 1]", r, col + 1)
            numbers[r] = value
        if partial:
            return numbers
        _check_complete(table, ids, item_ids)
        return numbers[_task_order(ids, position)]

    assert label_set is not None
    allowed = {str(x) for x in label_set}
    listed = _listed(sorted(allowed))
    out = np.empty((len(ids), len(value_cols)), dtype=object)
    for r, row in enumerate(table.rows):
        seen: set[str] = set()
        for j, vc in enumerate(value_cols):
            c = cols[vc]
            text = row[c].strip()
            if not text:
                raise table.error(f"empty {vc}", r, c + 1)
            if text not in allowed:
                raise table.error(f"unknown label '{text}' (labels: {listed})", r, c + 1)
            if text in seen:
                raise table.error(f"label '{text}' is ranked twice", r, c + 1)
            seen.add(text)
            out[r, j] = text
    if partial:
        return out
    _check_complete(table, ids, item_ids)
    result = out[_task_order(ids, position)].astype(str)
    return result[:, 0] if kind == "label" else result


def _check_complete(table: _Table, ids: list[str], item_ids: Sequence[str] | NDArray[Any]) -> None:
    if len(ids) == len(item_ids):
        return
    given = set(ids)
    missing = [str(i) for i in item_ids if str(i) not in given]
    raise table.error(_missing_message(len(missing), len(item_ids), missing))


def _task_order(ids: list[str], position: dict[str, int]) -> NDArray[np.intp]:
    rows = np.empty(len(ids), dtype=np.intp)
    for r, item in enumerate(ids):
        rows[position[item]] = r
    return rows
