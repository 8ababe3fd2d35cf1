"""API-specific reads: submissions as the API shows them, with the visibility rules of the API.

Challenge visibility and the private board's rules live in ``challenges.selectors`` and
``rankings.selectors``; this module only combines them for submissions and their scores.
"""

from __future__ import annotations

from django.db.models import Prefetch, QuerySet

from leaderboard.challenges.models import Challenge
from leaderboard.challenges.selectors import (
    AnyUser,
    private_board_visible,
    user_is_organizer,
)
from leaderboard.core.exceptions import NotFoundError
from leaderboard.scoring.models import RescoreJob, Score, Split
from leaderboard.submissions.models import Submission, SubmissionFile
from leaderboard.submissions.selectors import submission_get_visible


def _with_related(qs: QuerySet[Submission]) -> QuerySet[Submission]:
    return qs.select_related("challenge", "team").prefetch_related(
        Prefetch("files", queryset=SubmissionFile.objects.select_related("task")),
        Prefetch(
            "scores",
            queryset=Score.objects.select_related("task")
            .only(
                "id",
                "submission_id",
                "task__slug",
                "task__decimals",
                "split",
                "value",
                "run_values",
                "scored_at",
            )
            # one order on every database (PostgreSQL returned the private split first, SQLite the public)
            .order_by("task__position", "task__slug", "-split"),
        ),
    )


def submission_list(*, challenge: Challenge, user: AnyUser) -> QuerySet[Submission]:
    """Organizers (and staff) see every submission of the challenge; a participant their team's."""
    qs = Submission.objects.filter(challenge=challenge)
    if not user_is_organizer(challenge=challenge, user=user):
        qs = qs.filter(team__members=user) if user.is_authenticated else qs.none()
    return _with_related(qs)


def submission_get(*, submission_id: int, user: AnyUser) -> Submission:
    """A submission its team, the challenge's organizers or staff may read; 404 for everyone else."""
    return submission_get_visible(
        submission_id=submission_id, user=user, queryset=_with_related(Submission.objects.all())
    )


def submission_visible_scores(*, submission: Submission, user: AnyUser) -> list[Score]:
    """Scores on the public split, and on the private split only where the private board is visible."""
    private_ok = private_board_visible(challenge=submission.challenge, user=user)
    return [s for s in submission.scores.all() if s.split == Split.PUBLIC or private_ok]


def submission_details_visible(*, submission: Submission, user: AnyUser) -> bool:
    """Per-class figures of vision scores: organizers always, everyone else once the board is revealed."""
    return private_board_visible(challenge=submission.challenge, user=user)


def rescore_job_latest(*, challenge: Challenge, task_slug: str) -> RescoreJob:
    job = (
        RescoreJob.objects.filter(task__challenge=challenge, task__slug=task_slug)
        .select_related("task")
        .first()
    )
    if job is None:
        raise NotFoundError(f"Task '{task_slug}' has not been re-scored.")
    return job
