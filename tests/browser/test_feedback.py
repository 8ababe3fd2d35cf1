"""Feedback for long work in a real browser (issue 22, A1): the submit form, once sent, cannot be sent a
second time and says what is happening, with a spinner, while the upload is checked (and, in the embedded
default, scored inside the request)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.a11y import assert_accessible
from tests.browser.test_web_flow import _file, _sign_up, browser  # noqa: F401  (the fixture)
from tests.service import web_support as ws


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_submit_button_cannot_be_pressed_twice_and_says_it_is_working(
    browser: Any,  # noqa: F811
    live_server: Any,
) -> None:
    challenge = ws.challenge(ws.user("olga"))
    ws.task(challenge)
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    _sign_up(page, live_server.url, "alice")
    page.goto(f"{live_server.url}/c/{challenge.slug}/submit/")
    page.fill("#id_name", "my model")
    page.set_input_files("#id_file_main", _file("good.csv", ws.predictions_csv(60, wrong=4)))
    # Hold the request in the page (a listener after the site's own) so the busy state can be read, and
    # count how many times the form would be sent.
    page.evaluate(
        """() => { const f = document.querySelector('form.submit-form'); window.sent = 0;
             f.addEventListener('submit', e => { if (!e.defaultPrevented) { window.sent += 1; } e.preventDefault(); }); }"""
    )
    button = page.locator("form.submit-form button[type=submit]")
    button.click()
    note = page.locator("form.submit-form .busy-note")
    note.wait_for()
    assert "Uploading and checking your files" in note.inner_text()
    assert note.get_attribute("role") == "status" and page.locator(".busy-note .spinner").count() == 1
    page.wait_for_function("() => document.querySelector('form.submit-form button[type=submit]').disabled")
    assert page.locator("form.submit-form").get_attribute("aria-busy") == "true"
    assert_accessible(page, "submit form, busy")
    # a second press (a double click, Enter again) sends nothing more
    page.evaluate("() => document.querySelector('form.submit-form').requestSubmit()")
    assert page.evaluate("() => window.sent") == 1
    page.close()
