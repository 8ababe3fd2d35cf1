"""Organizer pages: create and edit a challenge, add a task with hidden labels, re-score, reveal; admin."""

from __future__ import annotations

import html as htmllib

import pytest
from django.contrib import admin
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from leaderboard.challenges.models import Challenge, TaskTruth
from leaderboard.scoring.models import RescoreJob
from tests.service import web_support as ws

pytestmark = pytest.mark.django_db

CHALLENGE_POST = {
    "title": "Digits 2026",
    "slug": "",
    "description": "Recognise digits.",
    "rules": "One account per person.",
    "start": "2026-01-01T00:00",
    "end": "2099-01-01T00:00",
    "visibility": "public",
    "daily_limit": "3",
    "total_limit": "30",
    "entry_selection": "best",
    "confidence": "0.9",
    "resamples": "500",
    "interval_method": "percentile",
    "correction": "bh",
    "seed": "7",
}


def test_create_challenge_with_limits_and_statistics_options(client) -> None:
    olga = ws.user("olga")
    client.force_login(olga)
    response = client.post(reverse("challenge_new"), CHALLENGE_POST)
    assert response.status_code == 302 and response["Location"] == reverse("task_new", args=["digits-2026"])
    c = Challenge.objects.get(slug="digits-2026")
    assert (c.daily_limit, c.total_limit, c.entry_selection) == (3, 30, "best")
    assert (c.confidence, c.resamples, c.interval_method, c.correction, c.seed) == (
        0.9,
        500,
        "percentile",
        "bh",
        7,
    )
    assert list(c.organizers.all()) == [olga]


def test_create_challenge_errors_are_shown(client) -> None:
    client.force_login(ws.user("olga"))
    bad = {**CHALLENGE_POST, "end": "2025-01-01T00:00"}
    response = client.post(reverse("challenge_new"), bad)
    assert response.status_code == 400
    assert "The end of a challenge must come after its start." in response.content.decode()
    response = client.post(reverse("challenge_new"), {**CHALLENGE_POST, "resamples": "5"})
    assert (
        response.status_code == 400
        and "`resamples` must lie between 100 and 100000." in response.content.decode()
    )
    assert not Challenge.objects.exists()


def test_create_challenge_needs_login(client) -> None:
    response = client.get(reverse("challenge_new"))
    assert response.status_code == 302 and reverse("login") in response["Location"]


def test_add_task_with_hidden_labels_never_shows_them(client) -> None:
    olga = ws.user("olga")
    c = ws.challenge(olga)
    client.force_login(olga)
    response = client.post(
        reverse("task_new", args=[c.slug]),
        {
            "title": "Main",
            "slug": "main",
            "metric": "accuracy",
            "labels": "cat, dog",
            "truth": SimpleUploadedFile("truth.csv", ws.truth_csv(60)),
        },
        follow=True,
    )
    html = response.content.decode()
    assert "Task &#x27;Main&#x27; added with 60 items" in html
    task = c.tasks.get()
    assert task.labels == ["cat", "dog"] and TaskTruth.objects.filter(task=task).exists()
    assert ",".join(ws.truth_labels(60)[:20]) not in html
    assert "item000,cat" not in html and "item001,dog" not in html


def test_add_task_with_a_bad_labels_file_shows_where(client) -> None:
    olga = ws.user("olga")
    c = ws.challenge(olga)
    client.force_login(olga)
    response = client.post(
        reverse("task_new", args=[c.slug]),
        {
            "title": "Main",
            "slug": "main",
            "metric": "accuracy",
            "labels": "cat,dog",
            "truth": SimpleUploadedFile("t.csv", b"id,label\na,cat\nb,bird\n"),
        },
    )
    html = htmllib.unescape(response.content.decode())
    assert response.status_code == 400
    assert "t.csv:3:2" in html and "bird" in html and "Where: file t.csv, line 3, column 2" in html
    assert not c.tasks.exists()


def test_organizer_pages_are_forbidden_to_participants(client) -> None:
    olga = ws.user("olga")
    c = ws.challenge(olga)
    ws.task(c)
    client.force_login(ws.user("mallory"))
    for url in (
        reverse("organize", args=[c.slug]),
        reverse("challenge_edit", args=[c.slug]),
        reverse("task_new", args=[c.slug]),
        reverse("task_labels", args=[c.slug, "main"]),
    ):
        assert client.get(url).status_code == 403, url
    assert client.post(reverse("reveal", args=[c.slug]), {"confirm": "reveal"}).status_code == 403
    assert client.post(reverse("rescore", args=[c.slug, "main"])).status_code == 403
    c.refresh_from_db()
    assert not c.private_revealed


def test_edit_challenge_freezes_statistics_once_submissions_exist(
    client, django_capture_on_commit_callbacks
) -> None:
    board = ws.make_board(django_capture_on_commit_callbacks)
    client.force_login(board.organizer)
    url = reverse("challenge_edit", args=[board.challenge.slug])
    html = client.get(url).content.decode()
    assert html.count("Frozen: submissions exist.") == 5
    form = {**CHALLENGE_POST, "title": "Renamed", "resamples": "999"}
    response = client.post(url, form)
    assert response.status_code == 302
    board.challenge.refresh_from_db()
    assert board.challenge.title == "Renamed" and board.challenge.resamples == 200  # disabled field ignored


def test_rescore_shows_progress_until_done(client, django_capture_on_commit_callbacks) -> None:
    board = ws.make_board(django_capture_on_commit_callbacks)
    client.force_login(board.organizer)
    with django_capture_on_commit_callbacks(execute=True):
        refused = client.post(reverse("rescore", args=[board.challenge.slug, board.task.slug]), follow=True)
    assert "Tick the box to re-score" in refused.content.decode() and not RescoreJob.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("rescore", args=[board.challenge.slug, board.task.slug]), {"confirm": "rescore"}
        )
    job = RescoreJob.objects.get()
    assert response["Location"] == reverse("rescore_job", args=[board.challenge.slug, job.pk])
    job.refresh_from_db()
    assert job.total == 3
    html = client.get(response["Location"]).content.decode()
    assert f'<progress id="progress" max="3" value="{job.done}">' in html
    data = client.get(response["Location"], {"format": "json"}).json()
    assert data["total"] == 3 and data["done"] == job.done and data["final"] == (job.state == "done")
    organize = client.get(reverse("organize", args=[board.challenge.slug])).content.decode()
    assert f"{job.done} of 3" in organize


def test_rescore_progress_while_running(client, django_capture_on_commit_callbacks) -> None:
    board = ws.make_board(django_capture_on_commit_callbacks)
    client.force_login(board.organizer)
    client.post(  # tasks never sent
        reverse("rescore", args=[board.challenge.slug, board.task.slug]), {"confirm": "rescore"}
    )
    job = RescoreJob.objects.get()
    html = client.get(reverse("rescore_job", args=[board.challenge.slug, job.pk])).content.decode()
    assert "0 of 3 submissions re-scored (running)" in html
    assert '<noscript><meta http-equiv="refresh" content="5"></noscript>' in html


def test_reveal_needs_confirmation(client, django_capture_on_commit_callbacks) -> None:
    board = ws.make_board(django_capture_on_commit_callbacks, private_every=3)
    client.force_login(board.organizer)
    url = reverse("reveal", args=[board.challenge.slug])
    client.post(url, {})
    board.challenge.refresh_from_db()
    assert not board.challenge.private_revealed
    # Issue 22, M5: the challenge is open (no end), so the page says what a reveal would do and asks
    # whether to close it; a reveal that says neither is refused with the reason.
    page = htmllib.unescape(client.get(reverse("organize", args=[board.challenge.slug])).content.decode())
    assert "The challenge is still open" in page and "one exact reading of the private labels" in page
    assert 'value="close" checked' in page
    refused = htmllib.unescape(client.post(url, {"confirm": "reveal"}, follow=True).content.decode())
    board.challenge.refresh_from_db()
    assert not board.challenge.private_revealed and "The challenge is still open (it has no end)" in refused
    response = client.post(url, {"confirm": "reveal", "when_open": "close"}, follow=True)
    board.challenge.refresh_from_db()
    assert board.challenge.private_revealed and not board.challenge.is_open
    assert "The private board is revealed" in response.content.decode()
    assert "Submissions are closed." in response.content.decode()


def test_replace_labels_page(client, django_capture_on_commit_callbacks) -> None:
    board = ws.make_board(django_capture_on_commit_callbacks)
    client.force_login(board.organizer)
    url = reverse("task_labels", args=[board.challenge.slug, board.task.slug])
    fixed = ws.truth_csv(60).replace(b"item000,", b"item000x,")
    response = client.post(url, {"truth": SimpleUploadedFile("fixed.csv", fixed)})
    assert response.status_code == 400 and "same items" in response.content.decode()
    response = client.post(url, {"truth": SimpleUploadedFile("fixed.csv", ws.truth_csv(60))})
    assert response.status_code == 302
    board.task.refresh_from_db()
    assert board.task.truth_version == 2


def test_admin_for_staff_without_hidden_labels(client, django_capture_on_commit_callbacks) -> None:
    board = ws.make_board(django_capture_on_commit_callbacks)
    staff = ws.user("root", staff=True)
    staff.is_superuser = True
    staff.save()
    client.force_login(staff)
    for name in ("challenges_challenge", "challenges_task", "challenges_team", "submissions_submission",
                 "rankings_boardsnapshot"):  # fmt: skip
        assert client.get(reverse(f"admin:{name}_changelist")).status_code == 200, name
    assert client.get(reverse("admin:challenges_task_change", args=[board.task.pk])).status_code == 200
    assert TaskTruth not in admin.site._registry
    assert client.get("/admin/challenges/tasktruth/").status_code == 404
    client.force_login(board.alice)
    assert client.get(reverse("admin:challenges_challenge_changelist")).status_code == 302


def test_labels_file_over_the_limit_is_refused_before_reading(client, settings) -> None:
    olga = ws.user("olga")
    c = ws.challenge(olga)
    client.force_login(olga)
    settings.UPLOAD_MAX_BYTES = 50
    response = client.post(
        reverse("task_new", args=[c.slug]),
        {
            "title": "Main",
            "slug": "main",
            "metric": "accuracy",
            "truth": SimpleUploadedFile("t.csv", ws.truth_csv(60)),
        },
    )
    assert response.status_code == 400 and "the limit is 50 bytes" in response.content.decode()
    assert not c.tasks.exists()


def test_a_setting_left_empty_takes_its_default_and_the_form_shows_a_default_of_zero(client) -> None:  # type: ignore[no-untyped-def]
    """The browser flow's new-challenge form left the seed empty (its default 0 was not shown: 0 == False)
    and the service got seed=None: a 500 (found by tests/browser/test_web_flow.py)."""
    client.force_login(ws.user("olga"))
    form = client.get(reverse("challenge_new")).content.decode()
    assert 'name="seed" value="0"' in form
    post = {k: v for k, v in CHALLENGE_POST.items() if k != "seed"}
    response = client.post(reverse("challenge_new"), {**post, "seed": ""})
    assert response.status_code == 302
    assert Challenge.objects.get(title="Digits 2026").seed == 0


def test_a_new_challenges_start_defaults_to_now(client) -> None:  # type: ignore[no-untyped-def]
    """Issue 22, A10: the new-challenge form had an empty, required start (the API and ``lb
    create-challenge`` start a challenge now when no start is given)."""
    import re
    from datetime import UTC, datetime, timedelta

    client.force_login(ws.user("olga"))
    form = client.get(reverse("challenge_new")).content.decode()
    found = re.search(r'name="start" value="([^"]+)"', form)
    assert found, "no start value in the form"
    start = datetime.strptime(found.group(1), "%Y-%m-%dT%H:%M").replace(tzinfo=UTC)
    assert abs(datetime.now(UTC) - start) < timedelta(minutes=2), start
