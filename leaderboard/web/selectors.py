"""Page-specific reads of the site. Everything here reads stored rows; nothing computes a statistic.

The hidden labels are never read here (they live in ``TaskTruth``, read only by scoring); scores of the
private split are returned only when the caller says the private board is visible.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from leaderboard.challenges.models import Challenge, Team
from leaderboard.challenges.selectors import AnyUser, challenge_list
from leaderboard.core.exceptions import NotFoundError
from leaderboard.rankings.models import BoardSnapshot, BoardState
from leaderboard.rankings.selectors import ReaderView, reader_view, releases_of
from leaderboard.scoring.models import RescoreJob, Score, Split
from leaderboard.submissions.models import Status, Submission
from leaderboard.submissions.selectors import submission_get_visible


@dataclass(frozen=True)
class ChallengeListing:
    open: list[Challenge]
    upcoming: list[Challenge]
    past: list[Challenge]


def home_challenges(*, user: AnyUser) -> ChallengeListing:
    """The challenges a user may see in listings, with team and scored-submission counts, by phase."""
    qs = challenge_list(user=user).annotate(
        n_teams=Count("teams", distinct=True),
        n_scored=Count("submissions", filter=Q(submissions__status=Status.SCORED), distinct=True),
    )
    now = timezone.now()
    listing = ChallengeListing(open=[], upcoming=[], past=[])
    for c in qs:
        if c.start > now:
            listing.upcoming.append(c)
        elif c.end is not None and c.end <= now:
            listing.past.append(c)
        else:
            listing.open.append(c)
    listing.open.sort(key=lambda c: (c.end is None, c.end or now))
    return listing


def challenge_phase(challenge: Challenge) -> str:
    now = timezone.now()
    if challenge.start > now:
        return "upcoming"
    if challenge.end is not None and challenge.end <= now:
        return "ended"
    return "open"


def team_submissions(*, challenge: Challenge, team: Team | None) -> QuerySet[Submission]:
    if team is None:
        return Submission.objects.none()
    return (
        Submission.objects.filter(challenge=challenge, team=team)
        .select_related("submitted_by")
        .prefetch_related("files__task")
        .order_by("-created_at", "-id")
    )


@dataclass
class ScoreCell:
    task_slug: str
    split: str
    value: float | None
    n_runs: int
    decimals: int = 4  # the board's precision the value is rounded to
    ladder: dict | None = None  # a Ladder board: the release (shown value, message); ``value`` is then None


def submission_scores(
    *, submission_ids: list[int], include_private: bool, user: AnyUser
) -> dict[int, list[ScoreCell]]:
    """Point values per submission, task and split, as ``user`` may read them (``rankings.policy``): at
    the board's precision, or, where the board releases less (a Ladder board), the release instead; the
    private split only when its board is visible."""
    qs = (
        Score.objects.filter(submission_id__in=submission_ids)
        .select_related("task")
        .defer("replicates", "jackknife", "item_statistics", "task__item_ids")
    )
    if not include_private:
        qs = qs.filter(split=Split.PUBLIC)
    out: dict[int, list[ScoreCell]] = defaultdict(list)
    releases = releases_of(submission_ids=submission_ids)
    readers: dict[tuple[int, str], ReaderView] = {}
    for s in qs.select_related("task__challenge").order_by("task__position", "task__slug", "split"):
        reader = readers.get((s.task_id, s.split))
        if reader is None:
            reader = readers[(s.task_id, s.split)] = reader_view(s.task, s.split, user)
        release = reader.release(s.submission_id, releases)
        out[s.submission_id].append(
            ScoreCell(
                task_slug=s.task.slug,
                split=s.split,
                # the board's precision (rankings.precision): the site's pages show each score rounded
                value=None if release is not None else reader.value(s.value),
                n_runs=s.n_runs,
                decimals=reader.decimals,
                ladder=release,
            )
        )
    return dict(out)


def submission_for_user(*, pk: int, user: AnyUser) -> Submission:
    """A submission its team's members and the challenge's organizers may see; 404 for everyone else."""
    queryset = Submission.objects.select_related("challenge", "team").prefetch_related("files__task")
    return submission_get_visible(submission_id=pk, user=user, queryset=queryset)


def rows_of_submission(*, submission: Submission, include_private: bool) -> list[tuple[BoardSnapshot, dict]]:
    """The submission's row on the latest board of each of its tasks (public; private when visible)."""
    found = []
    splits = [Split.PUBLIC, Split.PRIVATE] if include_private else [Split.PUBLIC]
    task_ids = sorted({f.task_id for f in submission.files.all()})
    for task_id in task_ids:
        for split in splits:
            snap = (
                BoardSnapshot.objects.filter(task_id=task_id, split=split)
                # Polled every few seconds while a participant waits: never read the K x K tables.
                .defer("rank_distribution", "pairwise")
                .select_related("task")
                .order_by("-sequence")
                .first()
            )
            if snap is None:
                continue
            for row in snap.rows:
                if row.get("submission_id") == submission.pk:
                    found.append((snap, row))
    return found


def counted_instead(*, submission: Submission) -> list[tuple[BoardSnapshot, dict | None]]:
    """For a scored submission that is on no board: each of its tasks' latest public board, with the row of
    its team's counted entry there (``None``: the team has none on it).

    Empty while any of those boards has not read the scores since the submission was scored ("the board is
    still being rebuilt"); full once every one has, and then another entry counts by the entry rule."""
    if submission.finished_at is None:
        return []
    key = f"team:{submission.team_id}"
    found: list[tuple[BoardSnapshot, dict | None]] = []
    task_ids = sorted({f.task_id for f in submission.files.all()})
    for task_id in task_ids:
        snap = (
            BoardSnapshot.objects.filter(task_id=task_id, split=Split.PUBLIC)
            .defer("rank_distribution", "pairwise")
            .select_related("task")
            .order_by("-sequence")
            .first()
        )
        # A rebuild that finds the same board writes no new snapshot, but it records when it read the scores.
        state = BoardState.objects.filter(task_id=task_id, split=Split.PUBLIC).first()
        if (
            snap is None
            or state is None
            or state.checked_at is None
            or state.checked_at < submission.finished_at
        ):
            return []
        found.append((snap, next((r for r in snap.rows if r.get("key") == key), None)))
    return found


def rescore_job_get(*, challenge: Challenge, pk: int) -> RescoreJob:
    job = RescoreJob.objects.select_related("task").filter(pk=pk, task__challenge=challenge).first()
    if job is None:
        raise NotFoundError(f"No re-score job {pk}.")
    return job


def rescore_jobs_recent(*, challenge: Challenge) -> list[RescoreJob]:
    return list(RescoreJob.objects.filter(task__challenge=challenge).select_related("task")[:10])


def organizer_counts(*, challenge: Challenge) -> dict[str, int]:
    counts = dict(
        Submission.objects.filter(challenge=challenge).values_list("status").annotate(n=Count("id"))
    )
    return {s.value: counts.get(s.value, 0) for s in Status}


DETAILS_HIDDEN = (
    "Per-class results are figures about the hidden annotations: they are shown to the organizers, and to "
    "everyone once the organizers reveal the board."
)


def score_details(*, submission_id: int, task_id: int, split: str) -> dict | None:
    """The stored details of a vision entry's score (other metrics, per-class values, curves), or None.

    The caller checks that they may be shown (organizers, or a revealed board): they are aggregates over
    the hidden annotations, so before the reveal a participant would learn more than one value per task.
    """
    score = (
        Score.objects.filter(submission_id=submission_id, task_id=task_id, split=split)
        .only("details")
        .first()
    )
    return None if score is None else score.details
