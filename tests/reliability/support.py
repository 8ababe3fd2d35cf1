"""Data of the fault tests: a ROC AUC task slow enough to be caught while scoring, and helpers."""

from __future__ import annotations

import functools
import io

import numpy as np

from leaderboard.accounts.models import User
from leaderboard.challenges.models import Challenge, Task
from leaderboard.challenges.services import challenge_create, task_create
from leaderboard.submissions.models import Submission
from leaderboard.submissions.services import Upload, submission_create
from stats.engine import EntryScore, score_entries
from tests.service.factories import csv_bytes

#: Items of the slow task. ROC AUC's leave-one-group-out jackknife evaluates one weight row per group,
#: O(G N): with every item its own group, about 3 s for one submission at 12,000 items on a 2-CPU machine,
#: so a test can see it running and kill the process doing it. (The leave-one-item-out jackknife of an
#: ungrouped task is O(N log N) since issue 11: milliseconds, too quick to be caught.) One item per group
#: and no stratification give the same resample weights as the plain item bootstrap.
SLOW_ITEMS = 12_000
SLOW_RESAMPLES = 200


@functools.cache
def slow_data(n: int = SLOW_ITEMS, seed: int = 11) -> tuple[list[str], list[int], list[float]]:
    rng = np.random.default_rng(seed)
    ids = [f"x{i:06d}" for i in range(n)]
    truth = rng.integers(0, 2, size=n)
    scores = np.clip(0.35 * truth + 0.65 * rng.random(n), 0, 1).round(5)
    return ids, truth.tolist(), scores.tolist()


def slow_truth_file(n: int = SLOW_ITEMS) -> bytes:
    ids, truth, _ = slow_data(n)
    body = "id,label,unit\n" + "".join(f"{i},{t},{i}\n" for i, t in zip(ids, truth, strict=True))
    return body.encode()


def slow_predictions_file(n: int = SLOW_ITEMS) -> bytes:
    ids, _, scores = slow_data(n)
    return csv_bytes("id,score", [(i, repr(s)) for i, s in zip(ids, scores, strict=True)])


@functools.cache
def slow_expected(n: int = SLOW_ITEMS, seed: int = 0) -> EntryScore:
    """What an undisturbed run gives: the engine on the same data with the challenge's resamples and seed."""
    ids, truth, scores = slow_data(n)
    (entry,) = score_entries(
        np.array(truth),
        [np.array(scores)],
        metric="roc_auc",
        resamples=SLOW_RESAMPLES,
        seed=seed,
        groups=np.array(ids),
    )
    return entry


def slow_challenge(organizer: User, *, slug: str = "slow", n: int = SLOW_ITEMS) -> tuple[Challenge, Task]:
    challenge = challenge_create(
        organizer=organizer, slug=slug, title=f"Slow {slug}", resamples=SLOW_RESAMPLES, seed=0
    )
    task = task_create(
        challenge=challenge,
        slug="main",
        title="Main task",
        metric="roc_auc",
        truth=slow_truth_file(n),
        truth_name="truth.csv",
        group_column="unit",
        stratify="none",
    )
    return challenge, task


def submit(challenge: Challenge, who: User, name: str, data: bytes, task: str = "main") -> Submission:
    return submission_create(
        challenge=challenge,
        user=who,
        name=name,
        files={task: [Upload(name=f"{name}.csv", size=len(data), stream=io.BytesIO(data))]},
    )
