"""Notices (issue 22): a submission scored or failed, a private board revealed; by e-mail (Django's locmem
outbox here) and on the site (the header's count, the Notices page, mark as read, the API), with a per-user
opt-out; once per event however often the scoring or the reveal is retried; never a number the
participant's own status page does not show (the board's precision, nothing under the Ladder, nothing
private before the reveal) and never a hidden label."""

from __future__ import annotations

import io
import re
from typing import Any

import pytest
from django.core import mail
from django.test import Client

from leaderboard.challenges.services import challenge_create, challenge_reveal_private, task_create
from leaderboard.notifications.models import Notice
from leaderboard.notifications.services import preference_set, submission_finished
from leaderboard.scoring.models import Score
from leaderboard.scoring.services import SCORER_CRASHED, submission_fail
from leaderboard.scoring.tasks import score_submission
from leaderboard.submissions.models import Status
from leaderboard.submissions.services import Upload, submission_create
from tests.service.api_support import FAST_HASHERS, client_for
from tests.service.factories import LABELS, csv_bytes, make_truth, predictions, user

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fast(settings: Any) -> None:
    settings.PASSWORD_HASHERS = FAST_HASHERS
    settings.LEADERBOARD_SITE_URL = "https://board.example.org"


def _challenge(slug: str = "toy", *, n: int = 240, private: bool = False, **task_fields: Any) -> Any:
    organizer = user(f"org-{slug}", email=f"org-{slug}@example.org")
    challenge = challenge_create(organizer=organizer, slug=slug, title=f"Toy {slug}", resamples=200)
    ids, truth = make_truth(n)
    rows = [
        f"{i},{t},{'private' if k % 3 == 0 else 'public'}"
        for k, (i, t) in enumerate(zip(ids, truth, strict=True))
    ]
    data = (
        ("id,label,split\n" + "\n".join(rows) + "\n").encode()
        if private
        else csv_bytes("id,label", list(zip(ids, truth, strict=True)))
    )
    task_create(
        challenge=challenge,
        slug="main",
        title="Main task",
        metric="accuracy",
        truth=data,
        truth_name="truth.csv",
        labels=LABELS,
        split_column="split" if private else None,
        decimals=3,
        **task_fields,
    )
    return challenge, ids, truth


def _submit(challenge: Any, who: Any, name: str, ids: list[str], truth: list[str], *, seed: int) -> Any:
    data = predictions(ids, truth, 0.8, seed=seed)
    return submission_create(
        challenge=challenge,
        user=who,
        name=name,
        files={"main": [Upload(name=f"{name}.csv", size=len(data), stream=io.BytesIO(data))]},
    )


def _numbers(text: str) -> set[str]:
    return set(re.findall(r"\d+\.\d+", text))


def test_a_scored_submission_is_emailed_and_listed_once(django_capture_on_commit_callbacks: Any) -> None:
    challenge, ids, truth = _challenge()
    alice = user("alice", email="alice@example.org")
    with django_capture_on_commit_callbacks(execute=True):
        sub = _submit(challenge, alice, "first", ids, truth, seed=1)
    sub.refresh_from_db()
    assert sub.status == Status.SCORED
    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == ["alice@example.org"]
    assert message.subject == f"Submission #{sub.pk} scored: Toy toy"
    value = Score.objects.get(submission=sub).value
    assert f"Main task (public): {value:.3f}" in message.body  # the board's precision, as the status page
    assert f"https://board.example.org/submissions/{sub.pk}/" in message.body
    assert "https://board.example.org/accounts/" in message.body  # where to opt out

    # a retried task, and the hook called again: nobody is told twice
    with django_capture_on_commit_callbacks(execute=True):
        score_submission.apply(args=[sub.pk])
    assert submission_finished(submission_id=sub.pk) == []
    assert len(mail.outbox) == 1
    assert Notice.objects.filter(user=alice).count() == 1


def test_the_site_lists_counts_and_marks_notices_read(django_capture_on_commit_callbacks: Any) -> None:
    challenge, ids, truth = _challenge()
    alice = user("alice", email="alice@example.org")
    with django_capture_on_commit_callbacks(execute=True):
        sub = _submit(challenge, alice, "first", ids, truth, seed=1)
        second = _submit(challenge, alice, "second", ids, truth, seed=2)
    web = Client()
    web.force_login(alice)
    home = web.get("/").content.decode()
    assert re.search(r'class="bell">Notices <span class="count">2</span>', home)
    page = web.get("/notices/").content.decode()
    assert f"Submission #{sub.pk} scored" in page and f"Submission #{second.pk} scored" in page
    one = Notice.objects.get(user=alice, key=f"scored:{sub.pk}")
    mallory = Client()
    mallory.force_login(user("mallory"))
    mallory.post("/notices/read/", {"id": one.pk})  # another user's notice: untouched
    mallory.post("/notices/read/")
    assert Notice.objects.filter(user=alice, read_at__isnull=True).count() == 2
    web.post("/notices/read/", {"id": one.pk})
    assert 'class="count">1</span>' in web.get("/").content.decode()
    web.post("/notices/read/")
    assert 'class="count"' not in web.get("/").content.decode()
    assert Notice.objects.filter(user=alice, read_at__isnull=True).count() == 0


def test_the_api_lists_and_marks_notices(django_capture_on_commit_callbacks: Any) -> None:
    challenge, ids, truth = _challenge()
    alice = user("alice")
    with django_capture_on_commit_callbacks(execute=True):
        sub = _submit(challenge, alice, "first", ids, truth, seed=1)
    api = client_for(alice)
    listed = api.get("/api/notices/?unread=true").json()
    assert [(n["kind"], n["read"], n["url"]) for n in listed["results"]] == [
        ("scored", False, f"/submissions/{sub.pk}/")
    ]
    # a bare list is no object: refused, not read as "every notice" (issue 21, item 11); a form neither
    assert api.post("/api/notices/read/", [sub.pk], format="json").status_code == 400
    assert api.post("/api/notices/read/", {"ids": [1]}).status_code == 415  # multipart
    assert api.post("/api/notices/read/", {}, format="json").json() == {"marked": 1}
    assert api.get("/api/notices/?unread=true").json()["results"] == []
    assert client_for(None).get("/api/notices/").status_code in (401, 403)


def test_a_failed_submission_tells_why(django_capture_on_commit_callbacks: Any) -> None:
    challenge, ids, truth = _challenge()
    alice = user("alice", email="alice@example.org")
    sub = _submit(challenge, alice, "stuck", ids, truth, seed=1)  # on-commit not run: still queued
    with django_capture_on_commit_callbacks(execute=True):
        submission_fail(submission_id=sub.pk)
        submission_fail(submission_id=sub.pk)  # failed already: no second notice
    assert [m.subject for m in mail.outbox] == [f"Submission #{sub.pk} failed: Toy toy"]
    assert SCORER_CRASHED in mail.outbox[0].body
    assert Notice.objects.get(user=alice).kind == "failed"


def test_opt_outs_from_the_account_page(django_capture_on_commit_callbacks: Any) -> None:
    challenge, ids, truth = _challenge()
    alice = user("alice", email="alice@example.org")
    web = Client()
    web.force_login(alice)
    assert 'id="notice-email" name="email" checked' in web.get("/accounts/").content.decode()
    web.post("/accounts/notices/", {"site": "on"})  # e-mail off, site on
    with django_capture_on_commit_callbacks(execute=True):
        sub = _submit(challenge, alice, "quiet", ids, truth, seed=1)
    assert mail.outbox == []
    assert f"Submission #{sub.pk} scored" in web.get("/notices/").content.decode()

    preference_set(user=alice, email=True, site=False)
    with django_capture_on_commit_callbacks(execute=True):
        second = _submit(challenge, alice, "mailed", ids, truth, seed=2)
    assert [m.subject for m in mail.outbox] == [f"Submission #{second.pk} scored: Toy toy"]
    assert f"Submission #{second.pk}" not in web.get("/notices/").content.decode()


def test_the_reveal_tells_every_participant_once_without_scores(
    django_capture_on_commit_callbacks: Any,
) -> None:
    challenge, ids, truth = _challenge(private=True)
    alice, bob = user("alice", email="alice@example.org"), user("bob", email="bob@example.org")
    with django_capture_on_commit_callbacks(execute=True):
        _submit(challenge, alice, "a", ids, truth, seed=1)
        _submit(challenge, bob, "b", ids, truth, seed=2)
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        challenge_reveal_private(challenge=challenge, close=True)
    with django_capture_on_commit_callbacks(execute=True):
        challenge_reveal_private(challenge=challenge)  # revealed already: nobody told again
    assert sorted(m.to[0] for m in mail.outbox) == ["alice@example.org", "bob@example.org"]
    body = str(mail.outbox[0].body)
    assert "revealed the private board" in body and "Submissions are closed." in body
    assert "https://board.example.org/c/toy/?split=private" in body
    assert _numbers(body) == set()


def _exact_forms(value: float) -> set[str]:
    return {f"{value:.{d}f}" for d in range(3, 9)} | {repr(value)}


def test_a_notice_never_says_more_than_the_status_page(django_capture_on_commit_callbacks: Any) -> None:
    """The leak property: before the reveal the private score is not in the notice; under the Ladder
    the public score is not either (the status page shows only the Ladder's release); no hidden label."""
    challenge, ids, truth = _challenge("ladder", private=True, public_mode="ladder", ladder_eta=0.05)
    alice = user("alice", email="alice@example.org")
    with django_capture_on_commit_callbacks(execute=True):
        sub = _submit(challenge, alice, "a", ids, truth, seed=1)
    scores = {s.split: s.value for s in Score.objects.filter(submission=sub)}
    assert set(scores) == {"public", "private"}
    texts = [str(m.body) for m in mail.outbox] + [str(m.subject) for m in mail.outbox]
    texts += list(Notice.objects.values_list("body", flat=True))
    joined = "\n".join(texts)
    assert "(private)" not in joined
    assert "Ladder" in joined  # says where the value is, not the value
    for value in scores.values():
        assert not _exact_forms(value) & set(re.findall(r"\d+\.\d+", joined))
    assert _numbers(joined) == set()
    for label in LABELS:
        assert label not in joined


def test_a_plain_board_notice_has_the_public_score_and_no_private_one(
    django_capture_on_commit_callbacks: Any,
) -> None:
    challenge, ids, truth = _challenge("plain", private=True)
    alice = user("alice", email="alice@example.org")
    with django_capture_on_commit_callbacks(execute=True):
        sub = _submit(challenge, alice, "a", ids, truth, seed=1)
    body = mail.outbox[0].body
    public = Score.objects.get(submission=sub, split="public").value
    assert f"Main task (public): {public:.3f}" in body
    assert "(private)" not in body


def test_a_mail_server_down_loses_the_email_not_the_scoring_or_the_notice(
    django_capture_on_commit_callbacks: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from leaderboard.notifications import services

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise ConnectionRefusedError("no SMTP server")

    monkeypatch.setattr(services, "send_mail", refuse)
    challenge, ids, truth = _challenge()
    alice = user("alice", email="alice@example.org")
    with django_capture_on_commit_callbacks(execute=True):
        sub = _submit(challenge, alice, "first", ids, truth, seed=1)
    sub.refresh_from_db()
    assert sub.status == Status.SCORED
    notice = Notice.objects.get(user=alice)
    assert (notice.kind, notice.emailed) == ("scored", False)
