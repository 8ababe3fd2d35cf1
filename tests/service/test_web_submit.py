"""Participants on the site: submit through the form, inline errors, the status page, my submissions."""

from __future__ import annotations

import csv
import html as htmllib
import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from leaderboard.challenges.models import EntrySelection
from leaderboard.rankings.models import BoardSnapshot
from leaderboard.submissions.models import Status, Submission
from tests.service import web_support as ws

pytestmark = pytest.mark.django_db


@pytest.fixture
def setup(client):
    organizer = ws.user("olga")
    c = ws.challenge(organizer)
    t = ws.task(c)
    alice = ws.user("alice")
    client.force_login(alice)
    return c, t, alice


def _post(client, c, name: str, data: bytes, filename: str = "preds.csv", **extra):
    return client.post(
        reverse("submit", args=[c.slug]),
        {"name": name, "file_main": SimpleUploadedFile(filename, data, content_type="text/csv"), **extra},
    )


def test_submit_page_shows_format_and_example_file(client, setup) -> None:
    c, t, _ = setup
    html = htmllib.unescape(client.get(reverse("submit", args=[c.slug])).content.decode())
    assert "Columns: <code>id,prediction</code>" in html and "60 items" in html and "accuracy" in html
    assert 'enctype="multipart/form-data"' in html and "csrfmiddlewaretoken" in html
    assert 'data-max-bytes="' in html
    example = client.get(reverse("example", args=[c.slug, t.slug]))
    rows = list(csv.reader(io.StringIO(example.content.decode())))
    assert rows[0] == ["id", "prediction"]
    assert [r[0] for r in rows[1:]] == t.item_ids
    assert {r[1] for r in rows[1:]} == {"cat"}  # a placeholder from the public label set


def test_example_file_is_a_valid_submission(client, setup, django_capture_on_commit_callbacks) -> None:
    c, t, _ = setup
    data = client.get(reverse("example", args=[c.slug, t.slug])).content
    with django_capture_on_commit_callbacks(execute=True):
        response = _post(client, c, "example", data)
    assert response.status_code == 302


def test_submit_then_status_page_shows_the_scored_row(
    client, setup, django_capture_on_commit_callbacks
) -> None:
    c, t, _ = setup
    with django_capture_on_commit_callbacks(execute=True):
        response = _post(client, c, "my model", ws.predictions_csv(60, wrong=6))
    sub = Submission.objects.get(name="my model")
    assert response.status_code == 302 and response["Location"] == reverse("submission", args=[sub.pk])
    assert sub.status == Status.SCORED
    html = client.get(response["Location"]).content.decode()
    assert "Scored" in html and "this submission</span>" in html
    assert 'class=" mine"' in html or " mine" in html
    snap = BoardSnapshot.objects.filter(task=t).latest("sequence")
    row = snap.rows[0]
    d = t.decimals  # the board's precision: the page shows the interval rounded to it
    assert f"[{row['low']:.{d}f}, {row['high']:.{d}f}]" in html
    assert 'http-equiv="refresh"' not in html  # final: the page stops updating
    status = client.get(reverse("submission_status", args=[sub.pk])).json()
    assert status == {
        "id": sub.pk,
        "status": "scored",
        "status_display": "Scored",
        "error": "",
        "on_board": True,
        "not_counted": "",
        "final": True,
    }


@pytest.mark.parametrize("rule", [EntrySelection.BEST, EntrySelection.SELECTED])
def test_a_scored_submission_the_entry_rule_leaves_off_the_board_is_final_and_says_why(
    client, rule, django_capture_on_commit_callbacks
) -> None:
    """Issue 22, M1: under "best" (a worse submission) and "selected" (after the team selected another),
    the status page said "scored; the board is being rebuilt" and polled forever."""
    c = ws.challenge(ws.user("olga"), entry_selection=rule)
    ws.task(c)
    client.force_login(ws.user("alice"))
    with django_capture_on_commit_callbacks(execute=True):
        _post(client, c, "good", ws.predictions_csv(60, wrong=2))
    good = Submission.objects.get(name="good")
    if rule == EntrySelection.SELECTED:
        with django_capture_on_commit_callbacks(execute=True):
            client.post(reverse("submission_select", args=[good.pk]))
    with django_capture_on_commit_callbacks(execute=True):
        _post(client, c, "worse", ws.predictions_csv(60, wrong=9))
    worse = Submission.objects.get(name="worse")
    assert worse.status == Status.SCORED
    status = client.get(reverse("submission_status", args=[worse.pk])).json()
    assert status["on_board"] is False and status["final"] is True
    assert f"your team's counted entry is #{good.pk} “good”" in status["not_counted"]
    html = htmllib.unescape(client.get(reverse("submission", args=[worse.pk])).content.decode())
    assert "the board is being rebuilt" not in html and 'http-equiv="refresh"' not in html
    assert "Scored. Not on the board" in html
    if rule == EntrySelection.SELECTED:
        assert "Select this submission" in html


def test_queued_submission_page_refreshes_itself_and_can_be_cancelled(client, setup) -> None:
    c, _, _ = setup
    # Without the commit callbacks the scoring task is never sent: the submission stays queued.
    _post(client, c, "waiting", ws.predictions_csv(60, wrong=3))
    sub = Submission.objects.get(name="waiting")
    assert sub.status == Status.QUEUED
    html = client.get(reverse("submission", args=[sub.pk])).content.decode()
    assert '<noscript><meta http-equiv="refresh" content="5"></noscript>' in html
    assert f'data-status-url="{reverse("submission_status", args=[sub.pk])}"' in html
    assert client.get(reverse("submission_status", args=[sub.pk])).json()["final"] is False
    response = client.post(reverse("submission_cancel", args=[sub.pk]), {"next": "submission"})
    assert response.status_code == 302
    sub.refresh_from_db()
    assert sub.status == Status.CANCELLED and not sub.charged
    # Cancelling twice says why, without a server error.
    again = client.post(reverse("submission_cancel", args=[sub.pk]), follow=True)
    assert "Only queued submissions can be cancelled" in again.content.decode()


def test_bad_file_gives_an_inline_error_with_line_and_column_and_stores_nothing(client, setup) -> None:
    c, _, _ = setup
    data = ws.predictions_csv(60, wrong=0).replace(b"item004,", b"item999,")
    response = _post(client, c, "broken", data, filename="broken.csv")
    assert response.status_code == 400
    html = htmllib.unescape(response.content.decode())
    field_block = html[html.index("Predictions for Task main") :]
    field_block = field_block[: field_block.index("</fieldset>")]
    assert 'class="error" role="alert"' in field_block
    assert "broken.csv:6:1" in field_block and "unknown id 'item999'" in field_block
    assert not Submission.objects.exists()
    assert 'value="broken"' in html  # the form keeps what was typed


def test_wrong_header_error_names_the_column(client, setup) -> None:
    c, _, _ = setup
    response = _post(client, c, "x", b"id,label\nitem000,cat\n", filename="h.csv")
    html = htmllib.unescape(response.content.decode())
    assert response.status_code == 400 and "h.csv:1" in html and "prediction" in html


def test_file_over_the_size_limit_is_refused(client, setup, settings) -> None:
    c, _, _ = setup
    settings.UPLOAD_MAX_BYTES = 100
    response = _post(client, c, "big", ws.predictions_csv(60, wrong=0), filename="big.csv")
    html = htmllib.unescape(response.content.decode())
    assert response.status_code == 400
    assert "big.csv: the file is" in html and "the limit is 100 bytes" in html
    assert not Submission.objects.exists()


def test_form_needs_a_file_and_a_name(client, setup) -> None:
    c, _, _ = setup
    response = client.post(reverse("submit", args=[c.slug]), {"name": ""})
    html = response.content.decode()
    assert response.status_code == 400
    assert "Choose at least one predictions file." in html and "This field is required." in html


def test_an_empty_file_gets_one_message_that_names_it(client, setup) -> None:
    """Issue 22, A2: "Choose at least one predictions file." at the top and "The submitted file is empty."
    under the input contradicted each other (a file was chosen) and named no file."""
    c, _, _ = setup
    response = _post(client, c, "empty", b"", filename="empty.csv")
    html = htmllib.unescape(response.content.decode())
    assert response.status_code == 400
    assert "empty.csv: the file is empty" in html
    assert "Choose at least one predictions file." not in html and "The submitted file is empty" not in html
    assert not Submission.objects.exists()


def test_submit_needs_login_and_csrf(setup) -> None:
    c, _, alice = setup
    anonymous = Client()
    response = anonymous.get(reverse("submit", args=[c.slug]))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(alice)
    data = ws.predictions_csv(60, wrong=1)
    response = strict.post(
        reverse("submit", args=[c.slug]), {"name": "n", "file_main": SimpleUploadedFile("p.csv", data)}
    )
    assert response.status_code == 403
    assert not Submission.objects.exists()


def test_other_users_cannot_see_a_submission(client, setup) -> None:
    c, _, _ = setup
    _post(client, c, "mine", ws.predictions_csv(60, wrong=3))
    sub = Submission.objects.get()
    client.force_login(ws.user("eve"))
    assert client.get(reverse("submission", args=[sub.pk])).status_code == 404
    assert client.get(reverse("submission_status", args=[sub.pk])).status_code == 404
    assert client.post(reverse("submission_cancel", args=[sub.pk])).status_code == 404
    sub.refresh_from_db()
    assert sub.status == Status.QUEUED


def test_my_submissions_lists_status_errors_and_scores(
    client, setup, django_capture_on_commit_callbacks
) -> None:
    c, _, _ = setup
    with django_capture_on_commit_callbacks(execute=True):
        _post(client, c, "first", ws.predictions_csv(60, wrong=6))
    _post(client, c, "second", ws.predictions_csv(60, wrong=2))  # stays queued
    html = client.get(reverse("my_submissions", args=[c.slug])).content.decode()
    assert "first" in html and "second" in html
    assert "Scored" in html and "Queued" in html
    assert "main: 0.9000" in html  # 54 of 60 right
    assert html.count(">Cancel</button>") == 1  # only the queued one
    assert "Used 2 of 100 submissions" in html


def test_select_entry_when_the_challenge_lets_teams_choose(
    client, django_capture_on_commit_callbacks
) -> None:
    organizer = ws.user("olga")
    c = ws.challenge(organizer, entry_selection=EntrySelection.SELECTED)
    t = ws.task(c)
    alice = ws.user("alice")
    client.force_login(alice)
    with django_capture_on_commit_callbacks(execute=True):
        _post(client, c, "good", ws.predictions_csv(60, wrong=2))
    with django_capture_on_commit_callbacks(execute=True):
        _post(client, c, "later", ws.predictions_csv(60, wrong=9))
    board = BoardSnapshot.objects.filter(task=t).latest("sequence")
    assert [r["name"] for r in board.rows] == ["later"]  # latest counts until the team selects
    html = client.get(reverse("my_submissions", args=[c.slug])).content.decode()
    assert html.count("Select as entry</button>") == 2
    good = Submission.objects.get(name="good")
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("submission_select", args=[good.pk]))
    good.refresh_from_db()
    assert good.selected
    board = BoardSnapshot.objects.filter(task=t).latest("sequence")
    assert [r["name"] for r in board.rows] == ["good"]
    html = client.get(reverse("my_submissions", args=[c.slug])).content.decode()
    assert '<span class="mark">selected</span>' in html and html.count("Select as entry</button>") == 1


def test_organizer_can_submit_a_baseline_that_is_marked(client, django_capture_on_commit_callbacks) -> None:
    organizer = ws.user("olga")
    c = ws.challenge(organizer)
    ws.task(c)
    client.force_login(organizer)
    assert "Baseline" in client.get(reverse("submit", args=[c.slug])).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        _post(client, c, "majority", ws.predictions_csv(60, wrong=25), is_baseline="on")
    html = client.get(reverse("challenge", args=[c.slug])).content.decode()
    assert '<span class="mark baseline-mark">baseline</span>' in html
    assert "A reference entry of the organizers." in html


def test_flash_messages_keep_their_list_semantics(client, setup, django_capture_on_commit_callbacks) -> None:
    """Issue 22, A5: ``<ul role="status">`` removed the list's semantics (axe ``listitem``, serious) on every
    page that shows a message; the live region is a ``div`` around the list."""
    c, _, _ = setup
    _post(client, c, "waiting", ws.predictions_csv(60, wrong=3))
    sub = Submission.objects.get(name="waiting")
    html = client.post(reverse("submission_cancel", args=[sub.pk]), follow=True).content.decode()
    assert '<div role="status"><ul class="messages"><li class="msg-success">' in html
    assert 'role="status"><li' not in html
