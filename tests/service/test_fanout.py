"""Scoring fanned out by fixed resample chunks (leaderboard.scoring.fanout), in-process (eager tasks).

The fanned-out Score rows must be the single worker's bytes: the same W rows (drawn per fixed chunk from
the seed), the same products, concatenated in chunk order. The settings force the fan-out on small tasks:
1,024 resamples are 4 chunks of 256, two chunk tasks of 2 chunks ([0, 2) and [2, 4)).
"""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from leaderboard.challenges.services import challenge_create, task_create
from leaderboard.scoring import fanout
from leaderboard.scoring.models import FanoutChunk, FanoutJob, FanoutState, Score
from leaderboard.scoring.tasks import score_chunk, sweep_stuck_submissions
from leaderboard.submissions.models import Status, Submission
from leaderboard.submissions.services import Upload, submission_create
from tests.service.factories import LABELS, csv_bytes, make_truth, predictions, user
from tests.service.vision_support import coco_results, coco_truth

RESAMPLES = 1024  # 4 chunks of 256


def _forced(settings) -> None:  # type: ignore[no-untyped-def]
    settings.FANOUT_IN_PROCESS = True  # these tests run the tasks in-process
    settings.FANOUT_MIN_COST = 1
    settings.FANOUT_DETECTION_MIN_RESAMPLES = 1
    settings.FANOUT_CHUNKS = 2


def _unforced(settings) -> None:  # type: ignore[no-untyped-def]
    settings.FANOUT_MIN_COST = 10**18
    settings.FANOUT_DETECTION_MIN_RESAMPLES = 10**9


def make_task(kind: str):  # type: ignore[no-untyped-def]
    """A challenge with one task of ``kind`` and the bytes of one predictions file for it."""
    organizer = user(f"org-{kind}")
    challenge = challenge_create(
        organizer=organizer, slug=f"fan-{kind}", title=f"Fan {kind}", resamples=RESAMPLES, seed=3
    )
    ids, truth = make_truth(300, seed=5)
    rng = np.random.default_rng(9)
    if kind == "classification":
        task = task_create(
            challenge=challenge, slug="main", title="Main", metric="accuracy",
            truth=csv_bytes("id,label", list(zip(ids, truth, strict=True))), truth_name="truth.csv",
            labels=LABELS,
        )  # fmt: skip
        return challenge, task, predictions(ids, truth, 0.8, 1), "csv"
    if kind == "auc":  # rank-based (no per-item statistics), grouped, with a private split
        y = rng.integers(0, 2, size=len(ids))
        rows = [
            f"{i},{t},g{k // 3},{'private' if k % 2 else 'public'}"
            for k, (i, t) in enumerate(zip(ids, y, strict=True))
        ]
        body = ("id,label,unit,split\n" + "\n".join(rows) + "\n").encode()
        task = task_create(
            challenge=challenge, slug="main", title="Main", metric="roc_auc", truth=body,
            truth_name="truth.csv", group_column="unit", split_column="split",
        )  # fmt: skip
        scores = np.clip(0.3 * y + 0.7 * rng.random(len(ids)), 0, 1).round(4)
        return (
            challenge,
            task,
            csv_bytes("id,score", [(i, repr(float(s))) for i, s in zip(ids, scores, strict=True)]),
            "csv",
        )
    if kind == "regression":
        y = rng.normal(10, 3, size=len(ids)).round(3)
        task = task_create(
            challenge=challenge, slug="main", title="Main", metric="rmse",
            truth=csv_bytes("id,label", [(i, repr(float(v))) for i, v in zip(ids, y, strict=True)]),
            truth_name="truth.csv",
        )  # fmt: skip
        pred = (y + rng.normal(0, 1.5, size=len(ids))).round(3)
        return (
            challenge,
            task,
            csv_bytes("id,prediction", [(i, repr(float(v))) for i, v in zip(ids, pred, strict=True)]),
            "csv",
        )
    truth_json = coco_truth(40, seed=2)
    task = task_create(
        challenge=challenge, slug="main", title="Main", metric="coco_ap",
        truth=json.dumps(truth_json).encode(), truth_name="instances.json",
    )  # fmt: skip
    return challenge, task, json.dumps(coco_results(truth_json, seed=4, quality=0.7)).encode(), "json"


def _submit(challenge, who: str, data: bytes, ext: str) -> Submission:  # type: ignore[no-untyped-def]
    s = submission_create(
        challenge=challenge,
        user=user(who),
        name=who,
        files={"main": [Upload(name=f"{who}.{ext}", size=len(data), stream=io.BytesIO(data))]},
    )
    s.refresh_from_db()
    return s


def _score_bytes(submission: Submission) -> list[tuple[object, ...]]:
    return [
        (
            s.split,
            s.value,
            bytes(s.replicates),
            None if s.jackknife is None else bytes(s.jackknife),
            None if s.item_statistics is None else bytes(s.item_statistics),
            s.item_statistics_shape,
            s.run_values,
            json.dumps(s.details, sort_keys=True),
            s.resamples,
            s.seed,
            s.engine_version,
        )
        for s in Score.objects.filter(submission=submission).order_by("split")
    ]


@pytest.mark.parametrize("kind", ["classification", "regression", "auc", "detection"])
def test_fanned_out_scores_are_the_single_workers_bytes(transactional_db, settings, kind: str) -> None:  # type: ignore[no-untyped-def]
    challenge, _task, data, ext = make_task(kind)
    _unforced(settings)
    single = _submit(challenge, "single", data, ext)
    assert single.status == Status.SCORED, single.error
    assert not FanoutJob.objects.filter(submission=single).exists()

    _forced(settings)
    fanned = _submit(challenge, "fanned", data, ext)
    assert fanned.status == Status.SCORED, fanned.error
    job = FanoutJob.objects.get(submission=fanned)
    assert job.state == FanoutJob.State.DONE and job.done == job.total == 2
    chunks = list(FanoutChunk.objects.filter(job=job).order_by("first"))
    assert [(c.first, c.stop) for c in chunks] == [(0, 2), (2, 4)]  # [0,2) + [2,4) = [0,4)
    assert all(c.result is not None and c.worker for c in chunks)
    assert not FanoutState.objects.filter(job=job).exists()  # the prepared state is dropped at the join

    expected, got = _score_bytes(single), _score_bytes(fanned)
    assert len(got) == (2 if kind == "auc" else 1)
    assert got == expected
    assert np.frombuffer(got[0][2], dtype="<f8").shape == (RESAMPLES,)


def test_the_rule_fans_out_large_tasks_only(transactional_db, settings) -> None:  # type: ignore[no-untyped-def]
    _challenge, task, _data, _ext = make_task("classification")
    settings.FANOUT_IN_PROCESS = True
    settings.FANOUT_MIN_COST = 300 * RESAMPLES  # items x resamples x runs
    settings.FANOUT_CHUNKS = 2
    assert fanout.task_fans_out(task=task, runs=1, resamples=RESAMPLES)
    assert not fanout.task_fans_out(task=task, runs=1, resamples=RESAMPLES - 256)  # below the cost
    settings.FANOUT_CHUNKS = 4
    assert not fanout.task_fans_out(task=task, runs=1, resamples=RESAMPLES)  # one chunk task: pointless
    settings.FANOUT_CHUNKS = 2
    assert [(r.start, r.stop) for r in fanout.chunk_ranges(1300)] == [(0, 2), (2, 4), (4, 6)]
    settings.FANOUT_IN_PROCESS = False  # the embedded default: tasks in this process, nothing to share
    assert not fanout.task_fans_out(task=task, runs=1, resamples=RESAMPLES)


def _fanned_out_without_running_chunks(settings, monkeypatch):  # type: ignore[no-untyped-def]
    """A fanned-out submission whose chunk messages were lost: prepared, chunks sent to nowhere."""
    challenge, _task, data, ext = make_task("classification")
    _forced(settings)
    monkeypatch.setattr(fanout, "chunks_send", lambda *, chunk_ids: [])
    s = _submit(challenge, "lost", data, ext)
    monkeypatch.undo()
    assert s.status == Status.RUNNING
    job = FanoutJob.objects.get(submission=s)
    return challenge, data, ext, s, job


def test_a_chunk_delivered_twice_is_counted_once(transactional_db, settings, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    challenge, data, ext, s, job = _fanned_out_without_running_chunks(settings, monkeypatch)
    first, second = FanoutChunk.objects.filter(job=job).order_by("first")
    score_chunk.apply(args=[first.pk])
    first.refresh_from_db()
    stored = bytes(first.result)
    score_chunk.apply(args=[first.pk])  # the same message again (a redelivery): overwrites the same row
    job.refresh_from_db()
    first.refresh_from_db()
    assert job.done == 1 and job.state == FanoutJob.State.RUNNING  # distinct chunks, not deliveries
    assert bytes(first.result) == stored and first.attempts == 2
    assert Submission.objects.get(pk=s.pk).status == Status.RUNNING

    score_chunk.apply(args=[second.pk])  # completes the count: joins once
    job.refresh_from_db()
    assert job.done == 2 and job.state == FanoutJob.State.DONE
    assert Submission.objects.get(pk=s.pk).status == Status.SCORED
    score_chunk.apply(args=[second.pk])  # a late duplicate after the join changes nothing
    assert Score.objects.filter(submission=s).count() == 1

    _unforced(settings)
    single = _submit(challenge, "single", data, ext)
    assert _score_bytes(single) == _score_bytes(s)


def test_the_sweeper_resends_a_missing_chunk_and_the_join_completes(
    transactional_db, settings, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    from datetime import timedelta

    from django.utils import timezone

    _challenge, _data, _ext, s, job = _fanned_out_without_running_chunks(settings, monkeypatch)
    first, second = FanoutChunk.objects.filter(job=job).order_by("first")
    score_chunk.apply(args=[first.pk])
    # The second chunk's worker died while computing it: its lease lapsed, nobody renews it.
    past = timezone.now() - timedelta(seconds=5)
    FanoutChunk.objects.filter(pk=second.pk).update(
        attempts=1, started_at=past, lease_expires_at=past, sent_at=past, sends=1
    )
    # The submission sweeper leaves a fanned-out submission alone; the fan-out sweeper re-sends the chunk.
    Submission.objects.filter(pk=s.pk).update(lease_expires_at=past)
    assert sweep_stuck_submissions.apply().result == [second.pk]
    assert Submission.objects.get(pk=s.pk).status == Status.SCORED
    second.refresh_from_db()
    assert second.sends == 2 and second.attempts == 2
    assert Submission.objects.get(pk=s.pk).attempts == 1  # the submission itself was not re-run
    assert sweep_stuck_submissions.apply().result == []  # done: later sweeps leave it alone


def test_a_chunk_that_never_finishes_fails_the_submission_uncharged(
    transactional_db, settings, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    from datetime import timedelta

    from django.utils import timezone

    _challenge, _data, _ext, s, job = _fanned_out_without_running_chunks(settings, monkeypatch)
    chunk = FanoutChunk.objects.filter(job=job).order_by("first").first()
    assert chunk is not None
    past = timezone.now() - timedelta(seconds=5)
    FanoutChunk.objects.filter(pk=chunk.pk).update(
        attempts=settings.FANOUT_MAX_ATTEMPTS, sends=settings.FANOUT_MAX_ATTEMPTS, lease_expires_at=past
    )
    assert fanout.fanout_resend_stuck() == []
    s.refresh_from_db()
    assert s.status == Status.FAILED and not s.charged
    assert "split into 2 parts" in s.error and "not counted against your team" in s.error
    job.refresh_from_db()
    assert job.state == FanoutJob.State.FAILED
    assert not FanoutState.objects.filter(job=job).exists()


def test_a_poison_chunk_is_given_up_after_its_attempts(transactional_db, settings, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    _challenge, _data, _ext, s, job = _fanned_out_without_running_chunks(settings, monkeypatch)
    chunk = FanoutChunk.objects.filter(job=job).order_by("first").first()
    assert chunk is not None
    # A worker was killed by this chunk every time it started it (the kernel's OOM killer, say).
    FanoutChunk.objects.filter(pk=chunk.pk).update(attempts=settings.FANOUT_MAX_ATTEMPTS)
    score_chunk.apply(args=[chunk.pk])
    s.refresh_from_db()
    assert s.status == Status.FAILED and not s.charged and "interrupted 5 times" in s.error


def test_a_crashing_chunk_fails_the_submission_without_quoting_labels(
    transactional_db, settings, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    from leaderboard.scoring.services import SCORER_CRASHED

    _challenge, _data, _ext, s, job = _fanned_out_without_running_chunks(settings, monkeypatch)

    def boom(payload, chunks):  # type: ignore[no-untyped-def]
        raise RuntimeError(f"label {LABELS[0]} leaked")

    monkeypatch.setattr(fanout, "_chunk_arrays", boom)
    chunk = FanoutChunk.objects.filter(job=job).first()
    assert chunk is not None
    score_chunk.apply(args=[chunk.pk])
    s.refresh_from_db()
    assert s.status == Status.FAILED and s.error == SCORER_CRASHED and not s.charged
    assert LABELS[0] not in s.error


def test_a_requeued_score_message_does_not_restart_a_running_fan_out(
    transactional_db, settings, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    from leaderboard.scoring.services import submission_score

    _challenge, _data, _ext, s, job = _fanned_out_without_running_chunks(settings, monkeypatch)
    assert submission_score(submission_id=s.pk) == []
    assert FanoutJob.objects.get(submission=s).pk == job.pk
    assert Submission.objects.get(pk=s.pk).attempts == 1


def test_a_submission_of_two_tasks_fans_out_the_large_one_and_scores_segmentation_whole(
    transactional_db, settings
) -> None:  # type: ignore[no-untyped-def]
    from tests.service.vision_support import CLASS_NAMES, label_maps, noisy, zip_of

    challenge, _task, data, _ext = make_task("classification")
    truth_maps = label_maps(10, seed=6)
    task_create(
        challenge=challenge, slug="seg", title="Masks", metric="miou", truth=zip_of(truth_maps),
        truth_name="labels.zip", labels=CLASS_NAMES,
    )  # fmt: skip
    masks = zip_of(noisy(truth_maps, seed=7, error=0.2))

    def both(who: str) -> Submission:
        s = submission_create(
            challenge=challenge, user=user(who), name=who,
            files={
                "main": [Upload(name=f"{who}.csv", size=len(data), stream=io.BytesIO(data))],
                "seg": [Upload(name=f"{who}.zip", size=len(masks), stream=io.BytesIO(masks))],
            },
        )  # fmt: skip
        s.refresh_from_db()
        return s

    _unforced(settings)
    single = both("single")
    _forced(settings)
    fanned = both("fanned")
    assert single.status == fanned.status == Status.SCORED, (single.error, fanned.error)
    job = FanoutJob.objects.get(submission=fanned)
    assert job.total == 2  # the classification task's two chunk tasks; segmentation has none
    assert {c.task.slug for c in FanoutChunk.objects.filter(job=job).select_related("task")} == {"main"}
    assert Score.objects.filter(submission=fanned).count() == 2

    def key(s: Submission) -> list[tuple[object, ...]]:
        rows = Score.objects.filter(submission=s).select_related("task").order_by("task__slug")
        return [
            (x.task.slug, x.split, x.value, bytes(x.replicates), json.dumps(x.details, sort_keys=True))
            for x in rows
        ]

    assert key(fanned) == key(single)
