"""CSV downloads of the API, safe to open in a spreadsheet (``leaderboard.core.exports.neutralise``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rest_framework.renderers import BaseRenderer

from leaderboard.core.exports import rows_to_csv


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
