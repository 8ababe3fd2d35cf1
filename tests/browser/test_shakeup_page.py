"""The shake-up page in a real browser at 1366 px and 390 px: the verdict line, the chart, the table, and
nothing cut off on a phone. Screenshots go to test-output/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from leaderboard.challenges.services import challenge_reveal_private
from tests.browser.a11y import assert_accessible
from tests.browser.test_web_flow import browser  # noqa: F401  (the fixture)
from tests.service import web_support as ws

OUTPUT = Path(__file__).resolve().parents[2] / "test-output"


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_shakeup_page_reads_at_desktop_and_phone_width(
    browser: Any,  # noqa: F811
    live_server: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    board = ws.make_board(django_capture_on_commit_callbacks, private_every=3)
    challenge_reveal_private(challenge=board.challenge, while_open=True)
    url = f"{live_server.url}/c/{board.challenge.slug}/t/{board.task.slug}/shakeup/"
    OUTPUT.mkdir(exist_ok=True)
    for width, height in ((1366, 900), (390, 844)):
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(url)
        verdict = page.locator("#shakeup-verdict")
        assert verdict.is_visible() and "random split" in verdict.inner_text()
        loaded = page.evaluate("() => document.querySelector('figure.shakeup-chart img').naturalWidth")
        assert loaded > 0
        assert page.locator("table.shakeup tbody tr").count() == 3
        page.screenshot(path=str(OUTPUT / f"shakeup-{width}.png"), full_page=True)
        assert_accessible(page, f"shake-up at {width} px")
        # nothing but the scrollable table is wider than the screen
        wide = page.evaluate(
            """(w) => Array.from(document.querySelectorAll('body *'))
                .filter(e => !e.closest('.table-scroll') && e.getBoundingClientRect().right > w + 1)
                .map(e => e.tagName + '.' + e.className)""",
            width,
        )
        assert wide == [], wide
        # captions of scrolling tables stay on screen (the board's caption was cut off on a phone)
        for target in (url, f"{live_server.url}/c/{board.challenge.slug}/?task={board.task.slug}"):
            page.goto(target)
            for caption in page.locator(".table-scroll > table > caption").all():
                box = caption.bounding_box()
                assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width + 1, target
        page.close()
