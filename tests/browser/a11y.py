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


def assert_accessible(page: Any, state: str, *, skip: dict[str, str] | None = None) -> None:
    """No axe-core violation on ``page`` as it is now; ``state`` names it in the failure (and in CHECKED).

    ``skip``: rules not run on this page, each with the reason (only for markup the project does not draw,
    e.g. Swagger UI's, and the rule cannot be met without forking it; docs/api.md lists them)."""
    assert all(reason.strip() for reason in (skip or {}).values()), "every skipped rule needs its reason"
    options = {"rules": {rule: {"enabled": False} for rule in skip}} if skip else None
    results = _AXE.run(page, options=options)
    CHECKED.append((state, results.violations_count))
    assert results.violations_count == 0, f"axe-core on {state} ({page.url}):\n{results.generate_report()}"
