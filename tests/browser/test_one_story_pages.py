"""The board's other pages in a real browser at 1366 x 900 and 390 x 844 (issue 22): the rank page says it
is not a test and shows the board's verdict in its first screen (M3); the pairwise page puts the board's
verdict beside the single pair's test, side by side on a desktop and stacked on a phone (M3); on a phone the
rank heat map and the critical-difference diagram have a list form with readable text (A6). axe-core on
each state. Screenshots go to tmp/artifacts/."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.a11y import assert_accessible
from tests.browser.test_board_page import ARTIFACTS, _board, _wide_elements
from tests.browser.test_web_flow import browser  # noqa: F401  (the fixture)
from tests.service import web_support as ws

SIZES = ((1366, 900), (390, 844))


def _font_px(locator: Any) -> float:
    return float(locator.evaluate("e => parseFloat(getComputedStyle(e).fontSize)"))


def _in_first_screen(locator: Any, height: int) -> bool:
    box = locator.bounding_box()
    return box is not None and box["y"] + box["height"] <= height


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_rank_and_pairwise_pages_tell_the_boards_story_at_both_widths(
    browser: Any,  # noqa: F811
    live_server: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    board = _board(django_capture_on_commit_callbacks)
    base = f"{live_server.url}/c/{board.challenge.slug}/t/{board.task.slug}"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for width, height in SIZES:
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(f"{base}/ranks/")
        question = page.locator("#ranks-question")
        assert "Marginal rank probabilities, not a test." in question.inner_text()
        verdict = page.locator("#ranks-board-verdict")
        assert "The board's verdict: knn-3 leads; 1 other entry (svm-rbf)" in verdict.inner_text()
        assert _in_first_screen(question, height) and _in_first_screen(verdict, height)
        heat, listed = page.locator("svg.heat"), page.locator("ol.rank-list")
        if width == 390:  # the list form: every entry, its verdict and its ranks, in readable type
            assert not heat.is_visible() and listed.is_visible()
            items = listed.locator("li")
            assert items.count() == 5
            assert "tie" in items.nth(1).inner_text() and "rank 1:" in items.nth(1).inner_text()
            assert min(_font_px(items.nth(i).locator(".sub")) for i in range(5)) >= 12
            assert _wide_elements(page, width, ".table-scroll") == []
        else:
            assert heat.is_visible() and not listed.is_visible()
        page.screenshot(path=str(ARTIFACTS / f"ranks-{width}.png"), full_page=True)
        assert_accessible(page, f"rank distribution at {width} px")

        page.goto(f"{base}/pairwise/")
        board_box, single_box = page.locator("#pair-board-verdict"), page.locator("#pair-single-test")
        assert "The board's verdict (the answer)" in board_box.inner_text()
        assert "Not established: the board does not separate knn-3 and svm-rbf" in board_box.inner_text()
        assert "This pair alone (not the verdict)" in single_box.inner_text()
        b, s = board_box.bounding_box(), single_box.bounding_box()
        assert b is not None and s is not None
        if width == 1366:  # side by side
            assert abs(b["y"] - s["y"]) < 2 and b["x"] < s["x"], (b, s)
        else:  # the verdict first, the single test under it
            assert s["y"] >= b["y"] + b["height"], (b, s)
            assert _wide_elements(page, width, ".table-scroll") == []
        page.screenshot(path=str(ARTIFACTS / f"pairwise-{width}.png"), full_page=True)
        assert_accessible(page, f"pairwise at {width} px")
        page.close()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_critical_difference_diagram_has_a_list_form_on_a_phone(
    browser: Any,  # noqa: F811
    live_server: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    board = ws.make_board(django_capture_on_commit_callbacks, two_tasks=True)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for width, height in SIZES:
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(f"{live_server.url}/c/{board.challenge.slug}/summary/")
        image, listed = page.locator("figure.cd img"), page.locator("ol.cd-list")
        if width == 390:
            assert not image.is_visible() and listed.is_visible()
            items = listed.locator("li")
            assert items.count() == 3
            text = items.first.inner_text()
            assert "alpha" in text and "average rank" in text
            assert ("not told apart from" in text) or ("told apart from every other entry" in text)
            assert min(_font_px(items.nth(i)) for i in range(3)) >= 12
            assert _wide_elements(page, width, ".table-scroll") == []
        else:
            assert image.is_visible() and not listed.is_visible()
        page.screenshot(path=str(ARTIFACTS / f"summary-{width}.png"), full_page=True)
        assert_accessible(page, f"summary at {width} px")
        page.close()
