"""The walk's remaining findings in a real browser at 1366 x 900 and 390 x 844 (issue 22 A9 and P1, issue
23's doubt about the leader's adjusted interval), with screenshots in tmp/artifacts/ and axe-core on each state:

- every shown difference adds up from the shown values (the leader's value minus nothing: the Difference
  cell of each row equals its value minus the value of the entry it is compared with, as printed);
- the leader's adjusted sentence states the rule (no estimate above the shown value, the ends need not nest
  in the board's interval);
- on a Ladder board under the "selected" rule the row names the entry the team selected and says whose
  released score the value is.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import User

from tests.browser.a11y import assert_accessible
from tests.browser.test_board_page import ARTIFACTS, _board, _logged_in
from tests.browser.test_web_flow import browser  # noqa: F401  (the fixture)
from tests.service.api_support import client_for
from tests.service.test_ladder_board import ETA, _file, _fresh, _ladder_task, _submit  # noqa: F401
from tests.service.web_support import user

SIZES = ((1366, 900), (390, 844))


def _number(text: str) -> float:
    match = re.search(r"[\u2212+-]?\d+\.\d+", text)
    assert match, text
    return float(match.group(0).replace("\u2212", "-"))


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_differences_add_up_and_the_adjusted_interval_states_its_rule_at_both_widths(
    browser: Any,  # noqa: F811
    live_server: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    board = _board(django_capture_on_commit_callbacks)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for width, height in SIZES:
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(f"{live_server.url}/c/{board.challenge.slug}/")
        rows = page.locator("table.board tbody tr")
        names = [rows.nth(i).locator("th .name").inner_text().strip() for i in range(rows.count())]
        values = {name: _number(rows.nth(i).locator("td.value").inner_text()) for i, name in enumerate(names)}
        checked = 0
        for i in range(1, rows.count()):
            cell = rows.nth(i).locator("td.diff").inner_text()
            versus = re.search(r" vs (\S+)", cell)
            reference = versus.group(1) if versus else names[0]
            decimals = len(rows.nth(i).locator("td.value").inner_text().split("[")[0].strip().split(".")[1])
            assert _number(cell) == pytest.approx(round(values[names[i]] - values[reference], decimals)), cell
            checked += 1
        assert checked == 4
        adjusted = page.locator("#leader-adjusted").inner_text()
        assert "their ends need not nest" in adjusted and "never above the shown value" in adjusted
        page.screenshot(path=str(ARTIFACTS / f"walk-differences-{width}.png"), full_page=True)
        assert_accessible(page, f"board, differences and adjusted rule at {width} px")
        page.close()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_ladder_row_names_the_selected_entry_at_both_widths(
    browser: Any,  # noqa: F811
    live_server: Any,
) -> None:
    _organizer, task, (ids, labels, split) = _ladder_task("ladder", ladder_eta=ETA)
    task.challenge.entry_selection = "selected"
    task.challenge.save(update_fields=["entry_selection"])
    alice: User = user("alice")
    _submit(alice, _file(ids, labels, split, 140, 150), "first")  # shown as 0.70
    second = _submit(alice, _file(ids, labels, split, 146, 120), "second")  # not beyond the step
    assert client_for(alice).post(f"/api/submissions/{second}/select/").status_code == 200
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for width, height in SIZES:
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(f"{live_server.url}/c/lad/")
        row = page.locator("table.board tbody tr").first
        assert row.locator(".name").inner_text() == "second"
        assert "the value is first's, the last score the Ladder released" in row.inner_text()
        assert row.locator("td.value").inner_text().strip() == "0.700"
        page.screenshot(path=str(ARTIFACTS / f"walk-ladder-selected-{width}.png"), full_page=True)
        assert_accessible(page, f"Ladder board with a selected entry at {width} px")
        page.close()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_account_pages_cli_lines_are_a_focusable_scroll_region_at_both_widths(
    browser: Any,  # noqa: F811
    live_server: Any,
) -> None:
    """The walk of 2026-12-02 met axe's scrollable-region-focusable (serious) on the account page at 390 px:
    the `lb login --token ... --host ...` lines scroll sideways in a <pre> that the keyboard could not reach."""
    alice = user("alice")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for width, height in SIZES:
        context = _logged_in(browser, live_server, alice, {"width": width, "height": height})
        page = context.new_page()
        page.goto(f"{live_server.url}/accounts/")
        lines = page.locator("pre.cli-lines")
        assert "lb login --token" in lines.inner_text()
        assert lines.get_attribute("tabindex") == "0"
        page.screenshot(path=str(ARTIFACTS / f"walk-account-{width}.png"), full_page=True)
        assert_accessible(page, f"account page at {width} px")
        context.close()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_organizers_pairwise_page_shows_the_difference_of_the_values_it_shows_at_both_widths(
    browser: Any,  # noqa: F811
    live_server: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    """The left item of issue 22, P1: the organizer's pairwise page printed the rounded exact difference
    (here 14/300 - 20/300 wrong: 0.00667, "+0.007") under the shown values 0.933 and 0.927 (0.006)."""
    from tests.service import web_support as ws

    organizer = ws.user("olga")
    c = ws.challenge(organizer)
    with django_capture_on_commit_callbacks(execute=True):
        task = ws.task(c, n=300)
    task.decimals = 3
    task.save(update_fields=["decimals"])
    ids = {}
    for name, wrong in (("knn-3", 20), ("svm-rbf", 22), ("random-forest", 40)):
        with django_capture_on_commit_callbacks(execute=True):
            ids[name] = ws.submit(c, ws.user(name.replace("-", "")), name, wrong=wrong, n=300).pk
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for width, height in SIZES:
        context = _logged_in(browser, live_server, organizer, {"width": width, "height": height})
        page = context.new_page()
        page.goto(f"{live_server.url}/c/{c.slug}/t/main/pairwise/?a={ids['knn-3']}&b={ids['svm-rbf']}")
        rows = page.locator("table.board tbody tr")
        shown = {
            rows.nth(i).locator("th .name").inner_text().strip(): _number(
                rows.nth(i).locator("td.value").inner_text()
            )
            for i in range(rows.count())
        }
        assert shown == {"knn-3": 0.933, "svm-rbf": 0.927}, shown
        answer = page.locator("#pair-board-verdict")
        difference = answer.locator("dt:has-text('Difference') + dd").inner_text()
        assert _number(difference) == pytest.approx(0.006), difference  # was +0.007
        low, high = (
            _number(t) for t in answer.locator("dt:has-text('interval') + dd").inner_text().split(",")
        )
        assert low <= 0.006 <= high
        assert "at the board's 3 decimals" in page.locator("#pair-precision").inner_text()
        page.screenshot(path=str(ARTIFACTS / f"walk-pairwise-organizer-{width}.png"), full_page=True)
        assert_accessible(page, f"organizer's pairwise page at {width} px")
        context.close()
