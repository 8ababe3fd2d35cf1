"""CSV exports safe to open in a spreadsheet (one rule for the API's and the site's downloads).

A cell that starts with ``=``, ``+``, ``-``, ``@`` (or a tab or carriage return) is a formula to Excel,
LibreOffice and Google Sheets; a team named ``=HYPERLINK(...)`` would run on the organizer's machine
(OWASP, "CSV Injection"). Such text cells get a leading apostrophe. Numbers are written as numbers.
"""

from __future__ import annotations

from typing import Any

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def neutralise(value: Any) -> Any:
    """``value``, with a leading apostrophe if it is text a spreadsheet would run as a formula."""
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value
