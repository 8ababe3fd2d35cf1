"""Issue 23's pages as a person reads them, in headless Chromium at 1366x900 and 390x844: the leader's
selection-adjusted line on the board, the ranking robustness page (blob plot and its text, tau-b, the
schemes), the challenge report, and the organizers' planning form. Screenshots go to tmp/artifacts/."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.test_board_page import ARTIFACTS, _board, _captions_on_screen, _logged_in, _wide_elements
from tests.browser.test_web_flow import browser  # noqa: F401  (the fixture)

SIZES = ((1366, 900), (390, 844))


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_adjusted_leader_the_robustness_page_and_the_report_read_on_a_desktop_and_a_phone(
    browser: Any,  # noqa: F811
    live_server: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    board = _board(django_capture_on_commit_callbacks)
    base = f"{live_server.url}/c/{board.challenge.slug}"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    visitor = browser.new_page(viewport={"width": 1366, "height": 900})
    visitor.goto(f"{base}/t/{board.task.slug}/robustness/")
    # before the reveal the per-entry robustness orders entries by exact values: organizers only
    assert "Shown once the board is revealed" in visitor.locator("main").inner_text()
    assert visitor.locator("figure.blobplot img").count() == 0
    visitor.close()
    for width, height in SIZES:
        context = _logged_in(browser, live_server, board.organizer, {"width": width, "height": height})
        page = context.new_page()
        page.goto(f"{base}/?task={board.task.slug}")
        line = page.locator("#leader-adjusted")
        assert line.is_visible() and "knn-3" in line.inner_text() and "winner's curse" in line.inner_text()
        assert page.locator("#test-resolution").is_visible()
        page.click("a:has-text('Ranking robustness')")
        page.wait_for_selector("h1:has-text('Ranking robustness')")
        page.wait_for_function("() => document.querySelector('figure.blobplot img').naturalWidth > 0")
        img = page.locator("figure.blobplot img").bounding_box()
        assert img is not None and img["width"] <= width, img
        assert "knn-3: rank 1" in page.locator("#blob-text").inner_text()
        assert page.locator("#tau-summary").is_visible()
        assert page.locator("#schemes-table tbody tr").count() == 5
        page.screenshot(path=str(ARTIFACTS / f"robustness-{width}.png"), full_page=True)
        _captions_on_screen(page, width)
        if width == 390:
            assert _wide_elements(page, width, ".table-scroll, pre") == []
        page.goto(f"{base}/report/")
        assert page.locator(".report-checklist dt:has-text('Ranking scheme')").is_visible()
        assert page.locator("table.report-board tbody tr").count() == 5
        page.screenshot(path=str(ARTIFACTS / f"report-{width}.png"), full_page=True)
        _captions_on_screen(page, width)
        if width == 390:
            # the signature line wraps (the walk of 2026-12-02 read a page 795 px wide at 390)
            assert _wide_elements(page, width, ".table-scroll, pre, details") == []
        context.close()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_planning_form_answers_on_a_desktop_and_a_phone(
    browser: Any,  # noqa: F811
    live_server: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    board = _board(django_capture_on_commit_callbacks)
    for width, height in SIZES:
        context = _logged_in(browser, live_server, board.organizer, {"width": width, "height": height})
        page = context.new_page()
        page.goto(f"{live_server.url}/c/{board.challenge.slug}/plan/")
        page.select_option("#id_metric", "accuracy")
        page.fill("#id_gap", "0.02")
        page.fill("#id_power", "0.8")
        page.fill("#id_alpha", "0.05")
        page.fill("#id_accuracy", "0.9")
        page.fill("#id_n_items", "1000")
        page.click("#plan-form button[type=submit]")
        page.wait_for_selector("#plan-result")
        assert "items detect a difference of 0.02" in page.locator("#plan-result").inner_text()
        assert page.locator("#plan-resolves").is_visible()
        page.screenshot(path=str(ARTIFACTS / f"plan-{width}.png"), full_page=True)
        if width == 390:
            assert _wide_elements(page, width, "") == []
        context.close()
