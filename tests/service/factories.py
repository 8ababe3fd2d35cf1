"""Small real data for service tests: a classification task with a planted, recognisable label set."""

from __future__ import annotations

import io

import numpy as np

from leaderboard.accounts.models import User
from leaderboard.challenges.models import Challenge, Task
from leaderboard.challenges.services import challenge_create, task_create
from leaderboard.submissions.services import Upload

# Labels that never occur in code or messages, so a scan for them finds only leaks.
LABELS = ["zebrafinch", "quokkabear", "axolotlfish"]


def make_truth(n: int = 240, seed: int = 7) -> tuple[list[str], list[str]]:
    rng = np.random.default_rng(seed)
    ids = [f"item-{i:04d}" for i in range(n)]
    truth = [LABELS[k] for k in rng.integers(0, len(LABELS), size=n)]
    return ids, truth


def csv_bytes(header: str, rows: list[tuple[str, str]]) -> bytes:
    return (header + "\n" + "".join(f"{a},{b}\n" for a, b in rows)).encode()


def predictions(ids: list[str], truth: list[str], accuracy: float, seed: int) -> bytes:
    """Predictions that are right on about ``accuracy`` of the items."""
    rng = np.random.default_rng(seed)
    rows = []
    for i, t in zip(ids, truth, strict=True):
        if rng.random() < accuracy:
            rows.append((i, t))
        else:
            rows.append((i, LABELS[(LABELS.index(t) + 1 + int(rng.integers(0, 2))) % len(LABELS)]))
    return csv_bytes("id,prediction", rows)


def upload(name: str, data: bytes) -> Upload:
    return Upload(name=name, size=len(data), stream=io.BytesIO(data))


def user(name: str, **extra: object) -> User:
    return User.objects.create_user(username=name, password="a-long-test-password-123", **extra)  # type: ignore[arg-type]


def challenge_with_task(
    organizer: User, *, slug: str = "toy", resamples: int = 500, n: int = 240, **fields: object
) -> tuple[Challenge, Task, list[str], list[str]]:
    ids, truth = make_truth(n)
    challenge = challenge_create(
        organizer=organizer, slug=slug, title=f"Toy {slug}", resamples=resamples, **fields
    )
    task = task_create(
        challenge=challenge,
        slug="main",
        title="Main task",
        metric="accuracy",
        truth=csv_bytes("id,label", list(zip(ids, truth, strict=True))),
        truth_name="truth.csv",
        labels=LABELS,
    )
    return challenge, task, ids, truth
