"""CSV exports safe to open in a spreadsheet (one rule for the API's and the site's downloads).

A cell that starts with ``=``, ``+``, ``-``, ``@`` (or a tab or carriage return) is a formula to Excel,
LibreOffice and Google Sheets; a team named ``=HYPERLINK(...)`` would run on the organizer's machine
(OWASP, "CSV Injection"). Such text cells get a leading apostrophe. Numbers, and text that is a plain
number (an item id ``-7``, a value ``+0.5``), are never altered: a spreadsheet reads them as numbers and
runs nothing, and ids must survive a download exactly so that files built from it can be uploaded.

An id that is genuinely formula-like (``=10``, ``-a``) is written with the apostrophe; the predictions
reader (``stats.io.read_predictions``) accepts that written form back as the id (``'=10`` is ``=10``
when ``'=10`` itself is not an item), so a file built from any download round-trips through upload.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping, Sequence
from typing import Any

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
#: Text a spreadsheet reads as a plain number: nothing to run.
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def neutralise(value: Any) -> Any:
    """``value``, with a leading apostrophe if it is text a spreadsheet would run as a formula.

    >>> [neutralise(v) for v in ("-7", "+0.5", -7, "=10", "-a", "@SUM(A1)", "plain")]
    ['-7', '+0.5', -7, "'=10", "'-a", "'@SUM(A1)", 'plain']
    """
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def flatten(row: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested mappings become dotted columns; lists become ``;``-joined cells."""
    out: dict[str, Any] = {}
    for key, value in row.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(flatten(value, prefix=f"{name}."))
        elif isinstance(value, list | tuple):
            out[name] = ";".join("" if v is None else str(v) for v in value)
        else:
            out[name] = value
    return out


def rows_to_csv(rows: Sequence[Mapping[str, Any]]) -> str:
    """Rows as CSV, columns in first-seen order, every cell neutralised (the API's and site's writer)."""
    flat = [flatten(r) for r in rows]
    columns: list[str] = []
    for r in flat:
        columns.extend(c for c in r if c not in columns)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow([neutralise(c) for c in columns])
    for r in flat:
        writer.writerow([neutralise(r.get(c, "")) for c in columns])
    return buffer.getvalue()
