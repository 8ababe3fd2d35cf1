"""The demo shows the private board, the shake-up report and the Ladder (the walk of 2026-12-02, N6): uci-digits
has a private split and is revealed; uci-digits-ladder releases its public board through a Ladder and keeps
its private split hidden. Each answers 200 to the reader it is meant for, and nothing more to the others."""

from __future__ import annotations

import functools
import re

import pytest
from django.test import Client

from leaderboard.challenges.models import Challenge
from leaderboard.demo import load
from leaderboard.demo.data import CLASSIFIERS, DemoTask, demo_task
from leaderboard.rankings.models import LadderRelease, ShakeupReport
from leaderboard.scoring.models import Score
from leaderboard.submissions.models import Status, Submission
from tests.service.test_ladder_board import _forms, _leaks


@functools.cache
def _digits() -> DemoTask:
    return demo_task("digits")


def _client(username: str | None = None) -> Client:
    client = Client()
    if username is not None:
        assert client.login(username=username, password=load.DEMO_PASSWORD)
    return client


def build_demo() -> tuple[Challenge, Challenge]:
    """The loader's uci-digits (revealed) and uci-digits-ladder, every entry scored."""
    organizer = load._user("organizer", staff=True)
    participants = {name: load._user(name) for name, baseline in CLASSIFIERS if not baseline}
    single = load._single_challenge(
        _digits(), organizer=organizer, participants=participants, say=lambda _: None
    )
    ladder = load._ladder_challenge(
        _digits(), organizer=organizer, participants=participants, say=lambda _: None
    )
    for challenge in (single, ladder):
        assert Submission.objects.filter(challenge=challenge).exclude(status=Status.SCORED).count() == 0
    return single, ladder


@pytest.fixture
def demo(transactional_db: None) -> tuple[Challenge, Challenge]:
    return build_demo()


def test_the_demo_split_halves_each_digit() -> None:
    from leaderboard.demo.data import with_split

    rows = [line.split(",") for line in with_split(_digits()).decode().splitlines()[1:]]
    assert len(rows) == 1797
    for digit in {r[1] for r in rows}:
        of = [r[2] for r in rows if r[1] == digit]
        assert of.count("private") == len(of) // 2


def test_the_revealed_demo_challenge_shows_everyone_its_private_board_and_shake_up(
    demo: tuple[Challenge, Challenge],
) -> None:
    single, _ladder = demo
    assert single.private_revealed and single.is_open
    # built by the loader, so the first visitor does not wait for its 1,000 re-splits
    assert ShakeupReport.objects.filter(task=single.tasks.get()).count() == 1
    for who in (None, "svm-rbf", "organizer"):
        client = _client(who)
        private = client.get(f"/c/{load.SINGLE}/?split=private")
        assert private.status_code == 200
        html = private.content.decode()
        assert "svm-rbf" in html and "only the organizers can see this board" not in html
        shakeup = client.get(f"/c/{load.SINGLE}/t/digits/shakeup/")
        assert shakeup.status_code == 200, who
        assert "Only the organizers see this page" not in shakeup.content.decode()
        assert client.get(f"/api/challenges/{load.SINGLE}/shakeup/?task=digits").status_code == 200
    # the submission page shows the entry on both boards of the task: each section's landmark name says
    # which (axe's landmark-unique; the walk of deploy/walk_pages.py found two sections named alike)
    mine = Submission.objects.filter(challenge=single, team__name="svm-rbf").latest("pk")
    page = _client("svm-rbf").get(f"/submissions/{mine.pk}/").content.decode()
    labels = re.findall(r'<section aria-label="([^"]*)"', page)
    assert len(labels) >= 2 and len(set(labels)) == len(labels), labels


def test_the_ladder_demo_releases_only_the_ladders_values_and_hides_the_private_board(
    demo: tuple[Challenge, Challenge],
) -> None:
    _single, ladder = demo
    task = ladder.tasks.get()
    assert task.public_mode == "ladder" and task.has_private_split and not ladder.private_revealed
    released = [r.shown for r in LadderRelease.objects.filter(task=task) if r.shown is not None]
    assert len(released) == len(CLASSIFIERS)
    assert all(abs(v / load.LADDER_ETA - round(v / load.LADDER_ETA)) < 1e-9 for v in released)
    shown = {f"{v:.{places}f}" for v in released for places in (1, 2, 3)} | {repr(v) for v in released}
    hidden = set().union(*(_forms(s.value) for s in Score.objects.filter(task=task))) - shown
    assert hidden  # the check is meaningful: the exact scores write otherwise than the released ones

    for who in (None, "svm-rbf"):
        client = _client(who)
        board = client.get(f"/c/{load.LADDER}/")
        assert board.status_code == 200
        texts = {f"/c/{load.LADDER}/": board.content.decode()}
        for path in (
            f"/c/{load.LADDER}/?split=private",
            f"/c/{load.LADDER}/t/digits/shakeup/",
            f"/api/challenges/{load.LADDER}/leaderboard/",
            f"/api/challenges/{load.LADDER}/leaderboard/?split=private",
            f"/api/challenges/{load.LADDER}/shakeup/",
        ):
            response = client.get(path)
            texts[path] = response.content.decode()
            if "private" in path or "shakeup" in path:
                assert response.status_code in (403, 404), (who, path, response.status_code)
            else:
                assert response.status_code == 200, (who, path)
        for path, text in texts.items():
            assert _leaks(text, hidden) == [], (who, path)

    organizer = _client("organizer")
    private = organizer.get(f"/c/{load.LADDER}/?split=private")
    assert private.status_code == 200
    assert "only the organizers can see this board" in private.content.decode()
    shakeup = organizer.get(f"/c/{load.LADDER}/t/digits/shakeup/")
    assert shakeup.status_code == 200
    assert "Only the organizers see this page until the private board is revealed" in shakeup.content.decode()
