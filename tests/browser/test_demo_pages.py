"""The demo's private board, shake-up report and Ladder board (the walk of 2026-12-02, N6) in a real browser at
1366 x 900 and 390 x 844, with screenshots in tmp/artifacts/ and axe-core on each page: a visitor on the
revealed uci-digits and on the Ladder, the organizer on the Ladder's private board before its reveal."""

from __future__ import annotations

from typing import Any

import pytest

from leaderboard.demo import load
from tests.browser.a11y import assert_accessible
from tests.browser.test_board_page import ARTIFACTS, _logged_in
from tests.browser.test_web_flow import browser  # noqa: F401  (the fixture)
from tests.service.test_demo_private_ladder import build_demo

SIZES = ((1366, 900), (390, 844))


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_demos_private_board_shake_up_and_ladder_at_both_widths(
    browser: Any,  # noqa: F811
    live_server: Any,
) -> None:
    build_demo()
    organizer = load._user("organizer", staff=True)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    visitor_pages = {
        "private": (f"/c/{load.SINGLE}/?split=private", "svm-rbf"),
        "shakeup": (f"/c/{load.SINGLE}/t/digits/shakeup/", "Shake-up"),
        "ladder": (f"/c/{load.LADDER}/", "svm-rbf"),
    }
    for width, height in SIZES:
        page = browser.new_page(viewport={"width": width, "height": height})
        for name, (path, expected) in visitor_pages.items():
            response = page.goto(f"{live_server.url}{path}")
            assert response is not None and response.status == 200, path
            assert expected.lower() in page.content().lower(), path
            page.screenshot(path=str(ARTIFACTS / f"demo-{name}-{width}.png"), full_page=True)
            assert_accessible(page, f"demo {name} ({path}) at {width} px")
        page.close()
        context = _logged_in(browser, live_server, organizer, {"width": width, "height": height})
        page = context.new_page()
        page.goto(f"{live_server.url}/c/{load.LADDER}/?split=private")
        assert page.locator("#private-only").is_visible()
        page.screenshot(path=str(ARTIFACTS / f"demo-ladder-private-organizer-{width}.png"), full_page=True)
        assert_accessible(page, f"demo Ladder's private board, organizer, at {width} px")
        context.close()
