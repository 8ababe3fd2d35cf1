"""``/api/docs/`` (drf-spectacular's Swagger UI) under axe-core once Swagger UI has drawn the schema (the walk of
2026-12-02, N5): axe ran before Swagger UI drew its own heading, and found six violations after it, three of
them from our wrapper (a ``<main>`` around Swagger UI's own).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.a11y import assert_accessible
from tests.browser.test_board_page import ARTIFACTS
from tests.browser.test_web_flow import browser  # noqa: F401  (the fixture)

SIZES = ((1366, 900), (390, 844))
#: Rules Swagger UI's own markup breaks and no setting or stylesheet can mend (docs/api.md says so too).
SWAGGER_UI_RULES = {
    "heading-order": "Swagger UI draws the API's title as <h1> and each operation group as <h3>, with no <h2>",
    "region": "Swagger UI draws the API's title block outside the <main> it draws around the operations",
}


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_api_docs_pass_axe_once_swagger_ui_has_drawn_at_both_widths(
    browser: Any,  # noqa: F811
    live_server: Any,
) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for width, height in SIZES:
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(f"{live_server.url}/api/docs/")
        # drawn: the schema's title and its operations are on the page (not the empty wrapper)
        page.wait_for_selector("h1, h2.title", timeout=30_000)
        page.wait_for_selector(".opblock", timeout=30_000)
        assert page.locator("main").count() == 1
        page.screenshot(path=str(ARTIFACTS / f"api-docs-{width}.png"), full_page=True)
        assert_accessible(page, f"API docs (Swagger UI) at {width} px", skip=SWAGGER_UI_RULES)
        page.close()
