"""The fast path of :mod:`stats.io`: files read by pyarrow and checked with vectorised kernels.

A file is accepted here only when every check passes. Anything else (a parse error, a header problem, a bad
value, more rows than allowed) raises :class:`Refused`, and :mod:`stats.io` hands the file to its
line-precise reader, which finds the first problem and raises it with its ``file:line:column``. The checks
run in the line-precise reader's order (header, row width, ids, values, completeness), so ``Refused.row``
is the row at which that reader stops, and for a large file only the rows up to it are handed over:
memory stays bounded by the file's size, never by a Python object per cell (docs/benchmarks.md,
"Reading files").

Python's ``csv`` module and pyarrow differ on malformed quoting (pyarrow reads ``"x"y`` as ``xy``, the
``csv`` module in strict mode refuses it); a file with a quote character is first run through the ``csv``
module without keeping anything, so the fast path never accepts what the line-precise reader refuses.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
from numpy.typing import NDArray

#: The line-precise reader's number syntax (ASCII digits only), in RE2 syntax.
NUMBER_RE2 = r"^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$"
#: ``str.strip`` also removes these non-ASCII characters; a value that starts or ends with one is left to the
#: line-precise reader (the fast path trims ASCII whitespace only).
_UNICODE_SPACE_EDGE = r"^[\x{1c}-\x{1f}\x{85}\p{Z}]|[\x{1c}-\x{1f}\x{85}\p{Z}]$"
_ASCII_SPACE = " \t\n\r\x0b\x0c"
_SPACE_EDGE = r"^[\t\n\v\f\r \x{1c}-\x{1f}\x{85}\p{Z}]|[\t\n\v\f\r \x{1c}-\x{1f}\x{85}\p{Z}]$"
_BLOCK = 1 << 20


class Refused(Exception):
    """The fast path does not accept the file. ``row``: the 0-based data row at which the line-precise
    reader finds the first problem, when known (``None``: explain the whole file)."""

    def __init__(self, row: int | None = None, *, related: int | None = None) -> None:
        super().__init__(row)
        self.row = row
        self.related = related  # an earlier row the message names (the first of a repeated id)


class TooManyRows(Exception):
    """A Parquet file whose metadata counts more rows than allowed (nothing was read)."""

    def __init__(self, rows: int) -> None:
        super().__init__(rows)
        self.rows = rows


class TooLarge(Exception):
    """A Parquet file that holds more bytes decompressed than allowed (nothing was read)."""

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.size = size


@dataclass
class Columns:
    """Stripped header names and each column as a stripped pyarrow string array."""

    header: list[str]
    columns: list[pa.Array]
    rows: int
    over_limit: bool = False  # a CSV file with more rows than allowed: only the first max_rows + 1 are here

    def index(self) -> dict[str, int]:
        return {name: i for i, name in enumerate(self.header)}


def read_columns(data: bytes, *, max_rows: int | None, max_bytes: int) -> Columns:
    """Read CSV or Parquet bytes as string columns (raises :class:`Refused`, :class:`TooManyRows`,
    :class:`TooLarge`). Emptiness, archives and UTF-16 are checked by the caller first."""
    over_limit = False
    if data.startswith(b"PAR1"):
        table = _parquet(data, max_rows=max_rows, max_bytes=max_bytes)
    else:
        table, over_limit = _csv(data, max_rows=max_rows)
    header = [str(c) for c in table.column_names]
    if not data.startswith(b"PAR1"):
        header = [h.strip() for h in header]  # as the line-precise reader does for CSV (not Parquet)
    if table.num_rows == 0:
        raise Refused()
    if len(set(header)) != len(header):
        raise Refused(0)  # a header problem: the header and one row explain it
    columns = []
    for i in range(table.num_columns):
        column = table.column(i)
        number = pa.types.is_integer(column.type) or pa.types.is_floating(column.type)
        if not (is_text(column) or number):
            raise Refused()  # booleans, dates...: the line-precise reader's rule is str() of each value
        column = column.combine_chunks()
        if column.null_count:
            raise Refused()
        if number:  # a Parquet number column: only a score or value column may be one (the caller checks)
            columns.append(column)
            continue
        if pc.any(pc.match_substring_regex(column, _SPACE_EDGE)).as_py():  # else no copy is made
            column = pc.utf8_trim(column, characters=_ASCII_SPACE)
            if pc.any(pc.match_substring_regex(column, _UNICODE_SPACE_EDGE)).as_py():
                raise Refused()
        columns.append(column)
    return Columns(header, columns, table.num_rows, over_limit)


def _parquet(data: bytes, *, max_rows: int | None, max_bytes: int) -> pa.Table:
    try:
        file = pq.ParquetFile(pa.BufferReader(data))
        meta = file.metadata
    except Exception:  # a damaged file: the line-precise reader names it
        raise Refused() from None
    if max_rows is not None and meta.num_rows > max_rows:
        raise TooManyRows(meta.num_rows)
    size = sum(meta.row_group(g).total_byte_size for g in range(meta.num_row_groups))
    if size > max_bytes:
        raise TooLarge(size)
    try:
        return file.read()
    except Exception:
        raise Refused() from None


def _csv(data: bytes, *, max_rows: int | None) -> tuple[pa.Table, bool]:
    buffer = pa.py_buffer(data)
    if data.startswith(b"\xef\xbb\xbf"):
        buffer = buffer.slice(3)
    if b'"' in data:
        try:
            text = io.TextIOWrapper(io.BytesIO(buffer), encoding="utf-8", newline="")
            for _ in csv.reader(text, strict=True):
                pass
        except (csv.Error, UnicodeDecodeError):
            raise Refused() from None
    parse = pacsv.ParseOptions(newlines_in_values=True)
    try:
        names = pacsv.open_csv(
            pa.BufferReader(buffer), read_options=pacsv.ReadOptions(block_size=_BLOCK), parse_options=parse
        ).schema.names
        if len(set(names)) != len(names):
            raise Refused(0)
        reader = pacsv.open_csv(
            pa.BufferReader(buffer),
            read_options=pacsv.ReadOptions(block_size=_BLOCK),
            parse_options=parse,
            convert_options=pacsv.ConvertOptions(
                column_types={n: pa.string() for n in names},
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
                null_values=[],
            ),
        )
        batches = []
        rows = 0
        for batch in reader:
            if max_rows is not None and rows + batch.num_rows > max_rows:
                batches.append(batch.slice(0, max_rows + 1 - rows))  # stop reading: one row over the limit
                return pa.Table.from_batches(batches, schema=reader.schema), True
            rows += batch.num_rows
            batches.append(batch)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError):
        raise Refused() from None
    return pa.Table.from_batches(batches, schema=reader.schema), False


def release_memory() -> None:
    """Return the pages pyarrow's allocator keeps after its arrays are freed (so a refused file's
    explanation does not add its own memory on top of the fast path's)."""
    pa.default_memory_pool().release_unused()


def first_true(mask: pa.Array | pa.ChunkedArray) -> int | None:
    """The index of the first true value of a boolean array, or ``None``."""
    if not pc.any(mask).as_py():
        return None
    return int(np.flatnonzero(np.asarray(mask.to_numpy(zero_copy_only=False), dtype=bool))[0])


def check_ids(column: pa.Array) -> None:
    """Non-empty, unique ids (the line-precise reader's order: the first empty or repeated id)."""
    empty = first_true(pc.equal(pc.utf8_length(column), 0))
    distinct = pc.unique(column)
    if len(distinct) != len(column):
        codes = pc.index_in(column, value_set=distinct).to_numpy()
        repeated = np.ones(len(codes), dtype=bool)
        repeated[np.unique(codes, return_index=True)[1]] = False
        duplicate = int(np.flatnonzero(repeated)[0])
        if empty is not None and empty < duplicate:
            raise Refused(empty)
        first = int(np.flatnonzero(codes == codes[duplicate])[0])
        raise Refused(duplicate, related=first)
    if empty is not None:
        raise Refused(empty)


def check_known(column: pa.Array, item_ids: pa.Array) -> None:
    unknown = first_true(pc.invert(pc.is_in(column, value_set=item_ids)))
    if unknown is not None:
        raise Refused(unknown)


def check_labels(columns: Sequence[pa.Array], allowed: pa.Array | None) -> None:
    """Each value non-empty, in ``allowed`` (when given) and, across the columns of a row, not repeated."""
    bad: pa.Array | None = None
    for j, column in enumerate(columns):
        wrong = pc.equal(pc.utf8_length(column), 0)
        if allowed is not None:
            wrong = pc.or_(wrong, pc.invert(pc.is_in(column, value_set=allowed)))
        for earlier in columns[:j]:
            wrong = pc.or_(wrong, pc.equal(column, earlier))
        bad = wrong if bad is None else pc.or_(bad, wrong)
    row = None if bad is None else first_true(bad)
    if row is not None:
        raise Refused(row)


def is_text(column: pa.Array | pa.ChunkedArray) -> bool:
    return bool(pa.types.is_string(column.type) or pa.types.is_large_string(column.type))


def require_text(*columns: pa.Array) -> None:
    """Ids and labels must be text (the line-precise reader reads ``str()`` of other Parquet values)."""
    if not all(is_text(c) for c in columns):
        raise Refused()


def check_numbers(column: pa.Array, *, probabilities: bool = False) -> NDArray[np.float64]:
    """Finite numbers in the line-precise reader's syntax (and in [0, 1] for probabilities). A Parquet
    number column is taken as it is (``float(str(v))`` is ``v`` for every integer and float)."""
    if is_text(column):
        row = first_true(pc.invert(pc.match_substring_regex(column, NUMBER_RE2)))
        if row is not None:
            raise Refused(row)
    try:
        as_float = pc.cast(column, pa.float64(), safe=is_text(column))  # integers round to the nearest
        values = np.asarray(as_float.to_numpy(zero_copy_only=False), dtype=np.float64)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        raise Refused() from None
    wrong = ~np.isfinite(values)
    if probabilities:
        wrong |= ~((values >= 0.0) & (values <= 1.0))
    if wrong.any():
        raise Refused(int(np.flatnonzero(wrong)[0]))
    return values


def to_str_array(column: pa.Array, order: NDArray[np.intp] | None = None) -> NDArray[np.str_]:
    """``column`` (taken in ``order``, when given) as a numpy array of fixed-width strings, as
    ``np.array(list_of_str)`` gives; through the column's distinct values, so a column of a few labels
    makes no Python string per row and the wide result is made once."""
    encoded = pc.dictionary_encode(column)
    distinct = np.array(encoded.dictionary.to_pylist(), dtype=str)
    indices = encoded.indices.to_numpy()
    return distinct[indices if order is None else indices[order]]


@dataclass
class Records:
    """What :func:`records_at` found: the header, the rows asked for (``{row: (line, fields)}``) and the
    line and text of a ``csv`` parse error that stopped the stream, if one did."""

    header: list[str]
    found: dict[int, tuple[int, list[str]]]
    error: tuple[int, str] | None


def records_at(data: bytes, rows: set[int]) -> Records:
    """Stream the ``csv`` module over a CSV file's bytes (valid UTF-8; decoded block by block, never as
    one string), keeping nothing but the data rows ``rows`` (0-based, counted as the line-precise reader
    counts them), each with the line where it starts. With no ``rows``, the first row whose field count
    differs from the header's is kept instead."""
    text = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", newline="")
    reader = csv.reader(text, strict=True)
    header: list[str] | None = None
    found: dict[int, tuple[int, list[str]]] = {}
    index = -1
    prev_end = 0
    try:
        for record in reader:
            start = prev_end + 1
            prev_end = reader.line_num
            if not record or (len(record) == 1 and record[0].strip() == ""):
                continue
            if header is None:
                header = [h.strip() for h in record]
                continue
            index += 1
            if index in rows or (not rows and len(record) != len(header)):
                found[index] = (start, record)
                if len(found) == max(len(rows), 1):
                    break
    except csv.Error as exc:
        return Records(header or [], found, (prev_end + 1, str(exc)))
    return Records(header or [], found, None)
