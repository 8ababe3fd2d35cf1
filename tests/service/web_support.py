"""Helpers of the web tests: real challenges, tasks and submissions made through the services."""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

from leaderboard.accounts.models import User
from leaderboard.challenges.models import Challenge, Task
from leaderboard.challenges.services import challenge_create, task_create
from leaderboard.submissions.models import Submission
from leaderboard.submissions.services import Upload, submission_create

PASSWORD = "a-long-test-password-42"
LABELS = ["cat", "dog"]


def user(username: str, *, staff: bool = False) -> User:
    return User.objects.create_user(username=username, password=PASSWORD, is_staff=staff)


def truth_labels(n: int) -> list[str]:
    return [LABELS[(i * 7 + i // 3) % 2] for i in range(n)]


def truth_csv(n: int, *, private_every: int = 0) -> bytes:
    labels = truth_labels(n)
    if private_every:
        rows = [
            f"item{i:03d},{labels[i]},{'private' if i % private_every == 0 else 'public'}" for i in range(n)
        ]
        return ("id,label,split\n" + "\n".join(rows) + "\n").encode()
    return ("id,label\n" + "\n".join(f"item{i:03d},{labels[i]}" for i in range(n)) + "\n").encode()


def predictions_csv(n: int, *, wrong: int) -> bytes:
    """Predictions that get exactly ``wrong`` items wrong (the first ones)."""
    labels = truth_labels(n)
    rows = []
    for i in range(n):
        label = labels[i] if i >= wrong else LABELS[1 - LABELS.index(labels[i])]
        rows.append(f"item{i:03d},{label}")
    return ("id,prediction\n" + "\n".join(rows) + "\n").encode()


def challenge(organizer: User, slug: str = "pets", **fields: Any) -> Challenge:
    fields.setdefault("resamples", 200)
    return challenge_create(organizer=organizer, slug=slug, title=f"Pets {slug}", **fields)


def task(c: Challenge, slug: str = "main", *, n: int = 60, private_every: int = 0) -> Task:
    return task_create(
        challenge=c,
        slug=slug,
        title=f"Task {slug}",
        metric="accuracy",
        truth=truth_csv(n, private_every=private_every),
        truth_name="truth.csv",
        labels=LABELS,
        split_column="split" if private_every else None,
        # The page tests read four decimals; the board's default precision (1 decimal at 60 items) is
        # tested in tests/service/test_board_precision.py.
        decimals=4,
    )


def submit(
    c: Challenge, who: User, name: str, *, wrong: int, n: int = 60, task_slug: str = "main"
) -> Submission:
    data = predictions_csv(n, wrong=wrong)
    return submission_create(
        challenge=c,
        user=who,
        name=name,
        files={task_slug: [Upload(name=f"{name}.csv", size=len(data), stream=io.BytesIO(data))]},
    )


@dataclass
class Board:
    challenge: Challenge
    task: Task
    organizer: User
    alice: User
    bob: User
    carol: User


def make_board(capture, *, private_every: int = 0, two_tasks: bool = False, **challenge_fields: Any) -> Board:
    """An organizer, three participants and a scored board: alpha (5 wrong), beta (6 wrong), gamma (20)."""
    organizer = user("olga")
    alice, bob, carol = user("alice"), user("bob"), user("carol")
    c = challenge(organizer, **challenge_fields)
    t = task(c, private_every=private_every)
    with capture(execute=True):
        if two_tasks:
            task(c, "second")
    for who, name, wrong in ((alice, "alpha", 5), (bob, "beta", 6), (carol, "gamma", 20)):
        with capture(execute=True):
            if two_tasks:
                data = predictions_csv(60, wrong=wrong)
                data2 = predictions_csv(60, wrong=wrong + 2)
                submission_create(
                    challenge=c,
                    user=who,
                    name=name,
                    files={
                        "main": [Upload(name=f"{name}.csv", size=len(data), stream=io.BytesIO(data))],
                        "second": [Upload(name=f"{name}-2.csv", size=len(data2), stream=io.BytesIO(data2))],
                    },
                )
            else:
                submit(c, who, name, wrong=wrong)
    return Board(challenge=c, task=t, organizer=organizer, alice=alice, bob=bob, carol=carol)
