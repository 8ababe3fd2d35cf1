"""The database connections a browser test's ORM calls open while Playwright runs are closed with it.

Playwright's sync API keeps an asyncio loop running on the test's thread, and Django's connections then
live in a context variable instead of the thread's storage (asgiref's thread-critical ``Local``): a
connection opened there is not the one Django's teardown closes. One such connection, left open by
``test_board_page.py``, kept PostgreSQL's test database from being dropped at the end of every CI run.
"""

from __future__ import annotations

import pytest

from tests.browser.test_web_flow import playwright_closing_django_connections
from tests.conftest import wait_for


def _backend() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return int(cursor.fetchone()[0])


def _alive(pid: int) -> bool:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", [pid])
        return bool(cursor.fetchone()[0])


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_a_connection_opened_while_playwright_runs_is_closed_with_it(
    postgres: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    own = _backend()
    with playwright_closing_django_connections():
        inside = _backend()
        # the trap itself: inside, this thread's ORM calls run on another connection than the thread's own
        assert inside != own
        assert _alive(inside)
    assert _backend() == own  # the thread's own connection is Django's to close, and still open
    wait_for(lambda: not _alive(inside), timeout=10, what=f"backend {inside} to end")
