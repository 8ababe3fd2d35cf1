"""Re-score by blocks of submissions (leaderboard.scoring.rescore, issue 14 point 3), in eager mode: the
split into blocks, the counters, one board rebuild at the end, and blocks that come back."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from leaderboard.challenges import ports as challenge_ports
from leaderboard.rankings import services as rankings
from leaderboard.rankings import tasks as rankings_tasks
from leaderboard.rankings.models import BoardSnapshot
from leaderboard.scoring import rescore
from leaderboard.scoring.models import RescoreBlock, RescoreJob, Score
from leaderboard.scoring.services import rescore_job_refresh, submission_score, task_rescore
from leaderboard.submissions.models import Status, Submission
from leaderboard.submissions.services import submission_create
from tests.service.factories import challenge_with_task, predictions, upload, user


@pytest.fixture
def board(transactional_db, settings):  # type: ignore[no-untyped-def]
    settings.RESCORE_BLOCK = 2
    organizer = user("org")
    challenge, task, ids, truth = challenge_with_task(organizer, resamples=200)
    subs = []
    for k in range(5):
        s = submission_create(
            challenge=challenge,
            user=user(f"p{k}"),
            name=f"p{k}",
            files={"main": [upload(f"p{k}.csv", predictions(ids, truth, 0.6 + 0.05 * k, k))]},
        )
        s.refresh_from_db()
        assert s.status == Status.SCORED, s.error
        subs.append(s)
    return organizer, task, subs


def _scored_at(task) -> dict[int, object]:  # type: ignore[no-untyped-def]
    return dict(Score.objects.filter(task=task).values_list("submission_id", "scored_at"))


def test_a_rescore_runs_in_blocks_and_rebuilds_each_board_once(board, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    organizer, task, subs = board
    before = _scored_at(task)
    snapshots = BoardSnapshot.objects.filter(task=task).count()
    dispatched: list[list[int]] = []
    built: list[tuple[int, str]] = []
    real_dispatch, real_rebuild = rankings.boards_rebuild_dispatch, rankings.leaderboard_rebuild

    def dispatch(*, task_ids):  # type: ignore[no-untyped-def]
        dispatched.append(list(task_ids))
        return real_dispatch(task_ids=task_ids)

    def rebuild(*, task_id, split):  # type: ignore[no-untyped-def]
        built.append((task_id, split))
        return real_rebuild(task_id=task_id, split=split)

    monkeypatch.setattr(challenge_ports.boards_rebuild, "_impl", dispatch)  # as rankings registered it
    monkeypatch.setattr(rankings_tasks, "leaderboard_rebuild", rebuild)
    job = task_rescore(task=task, user=organizer)
    job.refresh_from_db()

    blocks = list(RescoreBlock.objects.filter(job=job).order_by("index"))
    ids = sorted(s.pk for s in subs)
    assert [b.submission_ids for b in blocks] == [ids[0:2], ids[2:4], ids[4:5]]
    assert all(b.state == RescoreBlock.State.DONE and b.attempts == 1 for b in blocks)
    assert (job.state, job.total, job.done, job.block_total, job.block_done) == ("done", 5, 5, 3, 3)
    assert all(s.status == Status.SCORED for s in Submission.objects.filter(pk__in=ids))
    after = _scored_at(task)
    assert all(after[pk] > before[pk] for pk in ids)  # every submission re-scored
    assert dispatched == [[task.pk]]  # one rebuild for the whole re-score, not one per submission
    assert built == [(task.pk, "public")]
    assert BoardSnapshot.objects.filter(task=task).count() == snapshots + 1
    latest = BoardSnapshot.objects.filter(task=task).latest("sequence")
    assert latest.entry_count == 5
    assert rescore_job_refresh(job=job).state == "done"


def test_a_block_that_comes_back_skips_what_is_scored_and_counts_once(board, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    organizer, task, _subs = board
    sent: list[int] = []
    monkeypatch.setattr(rescore, "block_dispatch", lambda *, block: sent.append(block.pk))  # no broker
    job = task_rescore(task=task, user=organizer)
    assert len(sent) == 3
    first = RescoreBlock.objects.get(job=job, index=0)
    a, b = first.submission_ids
    # the block's worker died after scoring its first submission
    assert submission_score(submission_id=a, rebuild=False) == [task.pk]
    a_at = Score.objects.get(submission_id=a).scored_at
    assert rescore.block_score(block_id=first.pk, renew=False) == [b]  # the rest, not ``a`` again
    assert Score.objects.get(submission_id=a).scored_at == a_at
    assert rescore.block_score(block_id=first.pk, renew=False) == []  # a duplicate message: nothing
    job.refresh_from_db()
    assert (job.block_done, job.done, job.state) == (1, 2, "running")  # counted once; others queued
    for block in RescoreBlock.objects.filter(job=job, index__gt=0):
        rescore.block_score(block_id=block.pk, renew=False)
    job.refresh_from_db()
    assert (job.block_done, job.done, job.state) == (3, 5, "done")


def test_a_submission_another_live_process_scores_is_left_to_it_and_completes_the_job(
    board, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    organizer, task, _subs = board
    monkeypatch.setattr(rescore, "block_dispatch", lambda *, block: True)
    job = task_rescore(task=task, user=organizer)
    last = RescoreBlock.objects.get(job=job, index=2)
    (c,) = last.submission_ids
    # the sweeper re-sent ``c`` on its own and a live worker is scoring it (its lease runs)
    Submission.objects.filter(pk=c).update(
        status=Status.RUNNING, lease_expires_at=timezone.now() + timedelta(minutes=5)
    )
    for block in RescoreBlock.objects.filter(job=job):
        rescore.block_score(block_id=block.pk, renew=False)
    job.refresh_from_db()
    assert job.block_done == 3 and job.state == "running"  # ``c`` is still being scored
    snapshots = BoardSnapshot.objects.filter(task=task).count()
    assert submission_score(submission_id=c) == [task.pk]  # that worker stores it: the job completes
    job.refresh_from_db()
    assert job.state == "done" and job.done == 5
    assert BoardSnapshot.objects.filter(task=task).count() == snapshots + 1


def test_a_rescore_of_a_task_without_submissions_is_done_at_once(transactional_db) -> None:
    organizer = user("org")
    _challenge, task, _ids, _truth = challenge_with_task(organizer)
    job = task_rescore(task=task, user=organizer)
    assert (job.state, job.total, job.block_total) == (RescoreJob.State.DONE, 0, 0)


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_real_workers_rescore_by_blocks_and_rebuild_the_board_once(worker_factory, settings) -> None:  # type: ignore[no-untyped-def]
    from tests.conftest import wait_for

    settings.RESCORE_BLOCK = 2  # the split is made here, in the web process
    organizer = user("org")
    challenge, task, ids, truth = challenge_with_task(organizer, resamples=200)
    worker_factory()
    worker_factory()
    for k in range(3):
        submission_create(
            challenge=challenge,
            user=user(f"p{k}"),
            name=f"p{k}",
            files={"main": [upload(f"p{k}.csv", predictions(ids, truth, 0.6 + 0.1 * k, k))]},
        )
    wait_for(
        lambda: BoardSnapshot.objects.filter(task=task, split="public", entry_count=3).exists(),
        timeout=120,
        what="the board of three",
    )
    wait_for(
        lambda: not Submission.objects.exclude(status=Status.SCORED).exists(), timeout=60, what="scoring"
    )
    snapshots = BoardSnapshot.objects.filter(task=task).count()
    job = task_rescore(task=task, user=organizer)
    done = wait_for(
        lambda: RescoreJob.objects.filter(pk=job.pk, state="done").first(), timeout=120, what="the re-score"
    )
    assert (done.block_total, done.block_done, done.done, done.total) == (2, 2, 3, 3)
    wait_for(
        lambda: BoardSnapshot.objects.filter(task=task).count() == snapshots + 1,
        timeout=60,
        what="the rebuild after the re-score",
    )
    assert RescoreBlock.objects.filter(job=job, state="done").count() == 2
    latest = BoardSnapshot.objects.filter(task=task).latest("sequence")
    assert latest.entry_count == 3
