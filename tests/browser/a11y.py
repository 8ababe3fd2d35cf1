"""axe-core on every page state the browser tests visit (issue 22: 0 violations, run in CI).

``axe-playwright-python`` bundles axe-core's script (no browser or network download); :func:`assert_accessible`
injects it into the page as it is now and fails with axe's own report when any rule is violated. Colour
contrast that axe cannot decide ("needs review", e.g. text over an SVG heat-map cell) is not a violation.
"""

from __future__ import annotations

from typing import Any

from axe_playwright_python.sync_playwright import Axe

_AXE = Axe()
#: Every page state checked in this run, with its violations (empty when clean): the tests' record.
CHECKED: list[tuple[str, int]] = []


def assert_accessible(page: Any, state: str) -> None:
    """No axe-core violation on ``page`` as it is now; ``state`` names it in the failure (and in CHECKED)."""
    results = _AXE.run(page)
    CHECKED.append((state, results.violations_count))
    assert results.violations_count == 0, f"axe-core on {state} ({page.url}):\n{results.generate_report()}"
