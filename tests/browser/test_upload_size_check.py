"""The browser's size check stops an over-size upload before any byte is sent (issue 13, bug 6)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.a11y import assert_accessible
from tests.browser.test_web_flow import browser  # noqa: F401  (the fixture)
from tests.service import web_support as ws


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_an_over_size_file_is_not_uploaded(browser: Any, live_server: Any, settings: Any) -> None:  # noqa: F811
    settings.UPLOAD_MAX_BYTES = 2048
    organizer = ws.user("olga")
    c = ws.challenge(organizer)
    ws.task(c, n=20)
    participant = ws.user("alice")
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    page.set_default_timeout(20_000)
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", participant.username)
    page.fill("#id_password", ws.PASSWORD)
    page.click("form.narrow button[type=submit]")
    page.wait_for_selector("text=Log out")
    page.goto(f"{live_server.url}/c/{c.slug}/submit/")
    assert "Limit: 2 KiB (2,048 bytes) per file" in page.content()
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    page.fill("#id_name", "too big")
    big = b"id,prediction\n" + b"x" * 4096
    page.set_input_files("#id_file_main", {"name": "big.csv", "mimeType": "text/csv", "buffer": big})
    note = page.locator(".size-error")
    note.wait_for()
    assert "the limit is 2.0 KiB (2,048 bytes). Nothing was sent." in note.inner_text()
    assert_accessible(page, "submit form, file over the size limit")
    page.click("form.submit-form button[type=submit]")
    page.wait_for_timeout(500)
    assert posts == []  # nothing was sent
    assert page.url.endswith(f"/c/{c.slug}/submit/")
    assert page.evaluate("() => document.activeElement.id") == "id_file_main"
