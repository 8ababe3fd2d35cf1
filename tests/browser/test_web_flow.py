"""The site in a real browser (Debian's headless Chromium) against a live server.

An organizer signs up, creates a challenge with two tasks and uploads their hidden labels, submits two
baselines; a participant signs up, gets an inline error for a bad file, submits a good one through the
form, watches the status page until the row is on the board, sees the row with its interval and mark,
and opens the critical-difference diagram. Screenshots go to test-output/.

The first test runs on the embedded default (tasks in-process); the second on PostgreSQL, Redis and a
real Celery worker process (``worker_factory``), as CI runs it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.browser.a11y import assert_accessible
from tests.service import web_support as ws

OUTPUT = Path(__file__).resolve().parents[2] / "test-output"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
N = 60


@contextmanager
def playwright_closing_django_connections() -> Iterator[Any]:
    """``sync_playwright()``, closing on the way out the database connections Django opened inside it.

    Playwright's sync API runs its asyncio loop on this thread (in a greenlet), so while it is open
    ``asyncio.get_running_loop()`` answers on this thread too. asgiref's thread-critical ``Local``, where
    Django keeps its connections, then keeps this thread's connections in a context variable instead of
    the thread's own storage: a connection the test's ORM calls open in that time is not the one Django's
    teardown (the flush, the drop of the test database) sees. Left open, it kept PostgreSQL's test
    database from being dropped at the end of every CI run ("is being accessed by other users"; found
    by the warning ``tests/conftest.py`` gives then). ``connections.close_all()`` run inside, before the
    loop stops, closes exactly those.
    """
    from django.db import connections
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        try:
            yield p
        finally:
            connections.close_all()


@pytest.fixture
def browser(chromium_path: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    # Playwright's sync API runs an event loop in this thread; the ORM calls of the test are still sync.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with playwright_closing_django_connections() as p:
        b = p.chromium.launch(executable_path=chromium_path, headless=True, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


def _file(name: str, data: bytes) -> dict[str, Any]:
    return {"name": name, "mimeType": "text/csv", "buffer": data}


def _sign_up(page: Any, base: str, username: str) -> None:
    page.goto(f"{base}/accounts/signup/")
    assert_accessible(page, "signup")
    page.fill("#id_username", username)
    page.fill("#id_password1", ws.PASSWORD)
    page.fill("#id_password2", ws.PASSWORD)
    page.click("form.narrow button[type=submit]")
    page.wait_for_selector(f"text=Account ({username})")


def _organizer_sets_up(page: Any, base: str) -> str:
    _sign_up(page, base, "olga")
    page.click("text=New challenge")
    page.wait_for_selector("#id_title")
    assert_accessible(page, "new challenge")
    page.fill("#id_title", "Pets in the browser")
    page.fill("#id_start", "2026-01-01T00:00")
    page.fill("#id_end", "2099-01-01T00:00")
    page.fill("#id_resamples", "200")
    page.click("button:has-text('Create challenge')")
    page.wait_for_selector("h1:has-text('Add a task')")
    assert_accessible(page, "add task, after 'Challenge created' (a flash message)")
    slug = "pets-in-the-browser"
    for task_slug, title in (("main", "Main"), ("second", "Second")):
        page.goto(f"{base}/c/{slug}/tasks/new/")
        page.fill("#id_title", title)
        page.fill("#id_slug", task_slug)
        page.select_option("#id_metric", "accuracy")
        page.fill("#id_labels", "cat,dog")
        page.set_input_files("#id_truth", _file("truth.csv", ws.truth_csv(N)))
        page.click("button:has-text('Add task')")
        page.wait_for_selector(f"text=Task '{title}' added with {N} items")
        assert_accessible(page, f"task {task_slug} added")
        assert "item000,cat" not in page.content()
    for name, wrong in (("majority", 24), ("nearest", 9)):
        page.goto(f"{base}/c/{slug}/submit/")
        page.fill("#id_name", name)
        page.set_input_files("#id_file_main", _file(f"{name}.csv", ws.predictions_csv(N, wrong=wrong)))
        page.set_input_files("#id_file_second", _file(f"{name}2.csv", ws.predictions_csv(N, wrong=wrong + 3)))
        page.check("#id_is_baseline")
        assert_accessible(page, "submit form, filled")
        page.click("form.submit-form button[type=submit]")
        page.wait_for_selector("h1:has-text('Submission #')")
    page.click("header.site button:has-text('Log out')")
    page.wait_for_selector("text=Sign up")
    return slug


def _participant_flow(page: Any, base: str, slug: str, *, timeout_ms: int) -> None:
    _sign_up(page, base, "alice")
    page.goto(f"{base}/c/{slug}/submit/")
    # A bad file: an inline error at the field, with the line and column.
    bad = ws.predictions_csv(N, wrong=0).replace(b"item004,", b"item999,")
    page.fill("#id_name", "my model")
    page.set_input_files("#id_file_main", _file("bad.csv", bad))
    page.click("form.submit-form button[type=submit]")
    error = page.locator("fieldset.task-file .error").first
    error.wait_for()
    assert "bad.csv:6:1" in error.inner_text() and "unknown id 'item999'" in error.inner_text()
    OUTPUT.mkdir(exist_ok=True)
    page.screenshot(path=str(OUTPUT / "submit-error.png"), full_page=True)
    assert_accessible(page, "submit form with an inline error")
    # The good file, through the same form.
    page.fill("#id_name", "my model")
    page.set_input_files("#id_file_main", _file("good.csv", ws.predictions_csv(N, wrong=4)))
    page.set_input_files("#id_file_second", _file("good2.csv", ws.predictions_csv(N, wrong=6)))
    page.click("form.submit-form button[type=submit]")
    page.wait_for_selector("h1:has-text('Submission #')")
    # The status page updates itself until the row is on the board.
    page.wait_for_selector("tr.mine", timeout=timeout_ms)
    page.screenshot(path=str(OUTPUT / "submission-status.png"), full_page=True)
    assert page.locator("#status-text").inner_text() == "Scored"
    assert_accessible(page, "status page, scored")
    mine = page.locator("table.board tr.mine").first
    text = mine.inner_text()
    assert "my model" in text and "[" in text
    assert mine.locator(".verdict-tag").inner_text() in {"best", "leader", "tie"}  # in the best set
    assert mine.locator("td.forest svg.forest line.zero").count() == 1
    label = mine.locator("td.forest .forest-cell").get_attribute("aria-label") or ""
    assert "my model" in label and ("95% simultaneous interval" in label or "the leader" in label)

    # The board: the row with its forest plot and verdict, and its legend.
    page.goto(f"{base}/c/{slug}/?task=main")
    # the row whose entry is "my model" (other rows name it too: "not resolved from my model")
    row = page.locator("table.board tbody tr").filter(has=page.locator("th .name", has_text="my model"))
    assert row.locator("td.forest svg.forest").is_visible()
    assert row.locator(".verdict-tag").inner_text() in {"best", "leader", "tie"}
    assert row.inner_text().count("[") >= 1
    assert page.locator("table.board tbody tr").count() == 3
    assert page.locator("text=baseline").count() >= 2
    assert "max-t" in page.locator("section.legend").inner_text()  # the verdict, explained
    OUTPUT.mkdir(exist_ok=True)
    page.screenshot(path=str(OUTPUT / "board.png"), full_page=True)
    assert_accessible(page, "board")
    # Server-side sort still works in the browser.
    page.click("table.board thead a:has-text('Entry')")
    page.wait_for_url("**sort=name**")
    assert page.locator("table.board tbody tr th .name").first.inner_text() == "majority"

    # The rank distribution of the task, drawn from the snapshot.
    page.goto(f"{base}/c/{slug}/t/main/ranks/")
    assert page.locator("svg.heat rect.cell").count() == 9
    page.screenshot(path=str(OUTPUT / "rank-distribution.png"), full_page=True)
    assert_accessible(page, "rank distribution")

    # The critical-difference diagram (summary rebuilt after the last board).
    page.goto(f"{base}/c/{slug}/summary/")
    page.wait_for_selector("figure.cd img")
    loaded = page.evaluate("() => document.querySelector('figure.cd img').naturalWidth")
    assert loaded > 0
    assert "my model" in page.locator("main").inner_text()
    page.screenshot(path=str(OUTPUT / "cd-diagram.png"), full_page=True)
    assert_accessible(page, "summary")
    page.goto(f"{base}/c/{slug}/critical-difference.svg")
    page.screenshot(path=str(OUTPUT / "cd-diagram-svg.png"))

    # A phone: the board reads without horizontal page scroll outside the table.
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{base}/c/{slug}/?task=main")
    page.screenshot(path=str(OUTPUT / "board-phone.png"), full_page=True)
    assert_accessible(page, "board, phone")
    wide = page.evaluate(
        """() => Array.from(document.querySelectorAll('body *'))
            .filter(e => !e.closest('.table-scroll') && e.getBoundingClientRect().right > 400)
            .map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))"""
    )
    assert wide == []
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 400
    # The forest plot is visible on the phone too (across each card, on the same axis).
    assert page.locator("table.board tbody tr").first.locator("td.forest svg.forest").is_visible()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_site_flow_in_a_browser(browser, live_server) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(20_000)
    slug = _organizer_sets_up(page, live_server.url)
    _participant_flow(page, live_server.url, slug, timeout_ms=30_000)


@pytest.mark.browser
@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_site_flow_in_a_browser_with_real_workers(browser, live_server, worker_factory) -> None:
    worker_factory(concurrency=2)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(60_000)
    slug = _organizer_sets_up(page, live_server.url)
    _participant_flow(page, live_server.url, slug, timeout_ms=120_000)


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_copy_button_and_status_polling_without_reload_loops(browser, live_server) -> None:
    context = browser.new_context()
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    page = context.new_page()
    _sign_up(page, live_server.url, "carol")
    page.goto(f"{live_server.url}/accounts/")
    assert_accessible(page, "account")
    token = page.input_value("#api-token")
    assert len(token) == 40 and f"lb login --token {token}" in page.locator("pre").inner_text()
    page.click("button.copy")
    page.wait_for_selector("text=Copied.")
    assert page.evaluate("() => navigator.clipboard.readText()") == token
    context.close()
