"""CSV downloads of the API, safe to open in a spreadsheet (``leaderboard.core.exports.neutralise``)."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from typing import Any

from rest_framework.renderers import BaseRenderer

from leaderboard.core.exports import neutralise


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


class CSVRenderer(BaseRenderer):
    """Renders ``{"rows": [...]}`` (or a paginated ``{"results": [...]}``, or a list) as CSV.

    Selected with ``?format=csv`` or ``Accept: text/csv``. Errors keep their JSON shape
    (see ``views.JSONErrorsMixin``).
    """

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(
        self, data: Any, accepted_media_type: str | None = None, renderer_context: Any = None
    ) -> bytes:
        if data is None:
            return b""
        rows = data.get("rows", data.get("results", [data])) if isinstance(data, Mapping) else data
        return rows_to_csv(rows).encode(self.charset)


class SVGRenderer(BaseRenderer):
    """Passes an SVG document (a string) through as ``image/svg+xml``."""

    media_type = "image/svg+xml"
    format = "svg"
    charset = "utf-8"

    def render(
        self, data: Any, accepted_media_type: str | None = None, renderer_context: Any = None
    ) -> bytes:
        return str(data).encode(self.charset)
