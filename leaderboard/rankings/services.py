"""Board rebuilds: stack the stored replicates of the ranked entries and snapshot the statistics.

A rebuild of one (task, split) runs with the task row locked (``select_for_update``), so rebuilds of one
task are serialised and each sees every score committed before it. A rebuild whose inputs equal those of
the latest snapshot writes nothing: rebuilding is idempotent.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from celery import current_app
from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import F, Max, Min
from django.utils import timezone

from leaderboard.challenges.models import Challenge, EntrySelection, Task
from leaderboard.challenges.selectors import task_list
from leaderboard.rankings import board as board_builder
from leaderboard.rankings import board_cache, ladder, versions
from leaderboard.rankings.models import (
    BoardSnapshot,
    BoardState,
    ChallengeSummary,
    RobustnessReport,
    ShakeupReport,
)
from leaderboard.rankings.policy import mode_of
from leaderboard.scoring import engine
from leaderboard.scoring.models import Score, Split
from leaderboard.submissions.models import Status

logger = logging.getLogger(__name__)

#: The scores' binary columns (replicates, jackknife, item statistics: ~240 KB per entry at B = N = 10,000)
#: are read only when a board is really rebuilt, not to decide whether it must be.
SCORE_DATA_FIELDS = ("replicates", "jackknife", "item_statistics")
#: How long a "rebuild queued, not started" marker lives (a lost message delays a board by this, no more).
REBUILD_PENDING_SECONDS = 300


@dataclass(frozen=True)
class Entry:
    key: str  # stable across tasks: "team:<id>" or "baseline:<submission id>"
    name: str
    team: str
    score: Score


def _choose_entries(task: Task, split: str) -> list[Entry]:
    """One entry per team (chosen by the challenge's rule) plus every baseline submission."""
    challenge = task.challenge
    scores = list(
        Score.objects.filter(
            task=task,
            split=split,
            truth_version=task.truth_version,
            submission__status=Status.SCORED,
        )
        # the binary columns are read apart (_load_score_data); a vision score's per-class details and a
        # submission's error are never read by a rebuild
        .defer(*SCORE_DATA_FIELDS, "details", "submission__error")
        .select_related("submission", "submission__team")
        .order_by("submission__created_at", "submission_id")
    )
    public_value: dict[int, float] = {}
    if challenge.entry_selection == EntrySelection.BEST:
        # "Best" is judged on the public board, as on Kaggle: the private board must not pick its own winner.
        public_value = dict(
            Score.objects.filter(task=task, split=Split.PUBLIC, truth_version=task.truth_version).values_list(
                "submission_id", "value"
            )
        )
    higher = engine.metric_higher_is_better(task.metric)
    latest: dict[int, Score] = {}
    chosen: dict[int, Score] = {}
    entries: list[Entry] = []
    for s in scores:  # oldest first
        sub = s.submission
        if sub.is_baseline:
            entries.append(Entry(f"baseline:{sub.pk}", sub.name, sub.team.name, s))
            continue
        latest[sub.team_id] = s
        rule = challenge.entry_selection
        if rule == EntrySelection.SELECTED and sub.selected:
            chosen[sub.team_id] = s
        elif rule == EntrySelection.BEST:
            best = chosen.get(sub.team_id)
            new = public_value.get(sub.pk, s.value)
            old = None if best is None else public_value.get(best.submission_id, best.value)
            if old is None or (new > old if higher else new < old):
                chosen[sub.team_id] = s
    # "latest", and teams that selected nothing, count with their latest scored submission.
    by_team = {team: chosen.get(team, s) for team, s in latest.items()}
    for s in by_team.values():
        entries.append(Entry(f"team:{s.submission.team_id}", s.submission.name, s.submission.team.name, s))
    entries.sort(key=lambda e: e.key)  # a fixed order; the statistics do not depend on it
    return entries


def _digest(task: Task, split: str, entries: list[Entry]) -> str:
    c = task.challenge
    payload = [
        task.metric,
        split,
        task.truth_version,
        c.resamples,
        c.seed,
        c.confidence,
        c.interval_method,
        c.correction,
        "verdict:max-t",  # boards written before the selection-aware verdict (issue 11) are rebuilt
        [(e.key, e.name, e.score.pk, e.score.scored_at.isoformat()) for e in entries],
    ]
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def _load_score_data(entries: list[Entry], known: dict[int, Any] | None = None) -> int:
    """Set the binary columns of the entries' scores (``_choose_entries`` defers them): from ``known``
    (``board_cache.score_data``: score id -> (``scored_at``, the columns' bytes) as a previous rebuild in
    this process read them) for a score of the same id and ``scored_at``, the others read in one query.
    The number of scores read from the database."""
    known = known or {}
    data: dict[int, Any] = {}
    digests: dict[int, str | None] = {}
    missing: list[int] = []
    for e in entries:
        pk = int(e.score.pk)
        kept = known.get(pk)
        if kept is not None and kept[0] == e.score.scored_at.isoformat():
            data[pk], digests[pk] = kept[1:4], kept[4]
        else:
            missing.append(pk)
    data.update({pk: rest for pk, *rest in _score_data_rows(missing)} if missing else {})
    for e in entries:
        for name, value in zip(SCORE_DATA_FIELDS, data[e.score.pk], strict=True):
            setattr(e.score, name, value)
        if e.score.pk in digests:
            setattr(e.score, board_builder.COLUMN_DIGEST, digests[e.score.pk])
    return len(missing)


#: The key of ``BoardSnapshot.robustness`` that lists the scores the board read (submission id -> when it was
#: scored), so the robustness built later reads the same scores or says they changed.
ROBUSTNESS_INPUTS = "scores"


def _score_stamps(entries: list[Entry]) -> dict[str, str]:
    return {str(e.score.submission_id): e.score.scored_at.isoformat() for e in entries}


def _score_data_rows(pks: list[int]) -> list[tuple[Any, ...]]:
    """``(pk, replicates, jackknife, item_statistics)`` of these scores. On PostgreSQL the rows come in the
    binary protocol: Django's cursors ask for text, in which a bytea travels hex-encoded (twice its size)
    and is decoded by the client, about 320 MB per rebuild at K = 1,000, B = N = 10,000; binary is the
    same bytes 3-4x faster (docs/benchmarks.md, "Upload to board on the real stack")."""
    query = Score.objects.filter(pk__in=pks).values_list("pk", *SCORE_DATA_FIELDS)
    if connection.vendor != "postgresql" or not pks:
        return list(query)
    sql, params = query.query.sql_with_params()
    connection.ensure_connection()
    import psycopg

    # the same session (and transaction: the task's lock) as the ORM's; psycopg's own cursor (it binds on
    # the server: Django's connections make client-side cursors, which cannot ask for binary results)
    with psycopg.Cursor(connection.connection) as cursor:
        cursor.execute(sql, params, binary=True)
        return [(pk, *(None if v is None else bytes(v) for v in rest)) for pk, *rest in cursor.fetchall()]


def _pending_key(task_id: int, split: str) -> str:
    return f"rebuild-pending:{task_id}:{split}"


def _mark_rebuild_pending(task_id: int, split: str) -> bool:
    """Mark a rebuild of this board as queued; False if one is queued already and has not started."""
    try:
        return bool(cache.add(_pending_key(task_id, split), 1, REBUILD_PENDING_SECONDS))
    except Exception:  # the cache (Redis) is unreachable: send the rebuild anyway
        logger.warning("cache unreachable; rebuild of board %s/%s sent uncoalesced", task_id, split)
        return True


def _clear_rebuild_pending(task_id: int, split: str) -> None:
    try:
        cache.delete(_pending_key(task_id, split))
    except Exception:  # the marker then expires by itself
        logger.warning("cache unreachable; rebuild marker of board %s/%s left to expire", task_id, split)


def leaderboard_rebuild(*, task_id: int, split: str) -> BoardSnapshot | None:
    """Rebuild one board from the scores committed so far; write a snapshot only if its inputs changed.

    Rebuilds are coalesced: :func:`boards_rebuild_dispatch` sends none while one is queued and not yet
    started, because that one will read every score committed before it starts. The marker is cleared
    here, with the task locked and before the scores are read, so a score committed after this read
    finds no marker and sends a new rebuild: no score is left off the board.
    """
    stages = _Stages()
    cpu = time.process_time()
    with transaction.atomic():
        # Only the task's row (of=self; a plain FOR UPDATE with select_related also locked the challenge,
        # which deadlocked with uploads), and FOR NO KEY UPDATE: rebuilds of one task wait for each other
        # but inserts that reference the task (scores, uploaded files) never wait for a rebuild.
        task = (
            Task.objects.select_for_update(of=("self",), no_key=True)
            .select_related("challenge")
            .get(pk=task_id)
        )
        _clear_rebuild_pending(task_id, split)
        read_at = timezone.now()  # every score committed before this is on the board once this succeeds
        stages.lap("lock")
        entries = _choose_entries(task, split)
        latest = (
            BoardSnapshot.objects.filter(task=task, split=split)
            .defer("rows", "rank_distribution", "pairwise")
            .order_by("-sequence")
            .first()
        )
        # never mix replicates drawn with two seeds, resample counts or engine versions (versions.py)
        weights = versions.reference(
            seed=task.challenge.seed, resamples=task.challenge.resamples, scores=[e.score for e in entries]
        )
        entries, left_off = versions.split_compatible(entries, weights)
        digest = _digest(task, split, entries)
        if left_off:
            digest = hashlib.sha256(json.dumps([digest, left_off], sort_keys=True).encode()).hexdigest()
        ladder_rows: list[dict] = []
        if split == Split.PUBLIC and mode_of(task).releases:
            # the Ladder's releases, made once, in the order scores reach the board (rankings.ladder)
            ladder.releases_update(task)
            ladder_rows = ladder.released_rows(task)
            digest = hashlib.sha256(
                f"{digest}:{json.dumps(ladder_rows, sort_keys=True)}".encode()
            ).hexdigest()
        if latest is not None and latest.signature.get("inputs") == digest:
            _record_rebuild_success(task, split, read_at)
            return latest
        stages.lap("choose")
        # only the scores this process did not read for its last rebuild of the board (board_cache)
        read = _load_score_data(entries, board_cache.score_data(task_id, split))
        stages.lap("read")
        # this process's previous board of the task when this one adds one entry to it (board_cache)
        incremental = board_cache.take(task=task, split=split, previous=latest, entries=entries)
        stages.lap("state")
        board = board_builder.build_board(task=task, split=split, entries=entries, cache=incremental)
        stages.lap("board")
        sequence = (latest.sequence if latest else 0) + 1
        snapshot = BoardSnapshot.objects.create(
            task=task,
            split=split,
            sequence=sequence,
            entry_count=len(entries),
            signature={**board.signature, "inputs": digest, **({"left_off": left_off} if left_off else {})},
            rows=board.rows,
            rank_distribution=board.rank_distribution,
            pairwise=board.pairwise,
            # the scores the board read, so its robustness (built on first read) reads the same ones
            robustness={**board.robustness, ROBUSTNESS_INPUTS: _score_stamps(entries)},
            ladder_rows=ladder_rows,
        )
        stages.lap("write")
        _record_rebuild_success(task, split, read_at)
        challenge_id = task.challenge_id
        transaction.on_commit(lambda: summary_rebuild_dispatch(challenge_id=challenge_id, split=split))
        if task.has_private_split and shakeup_after_rebuild(task):
            transaction.on_commit(lambda: shakeup_rebuild_dispatch(task_id=task_id))
        # after the dispatches: the shared state's save (on commit) does not hold them back
        board_cache.keep(task=task, split=split, board=incremental, snapshot=snapshot, entries=entries)
        board_cache.keep_score_data(task_id, split, entries)
    stages.lap("commit")
    logger.info(
        "board %s/%s rebuilt (%s): snapshot %s with %s entries; stages %s; scores read %s; board %s; cpu %.3fs",
        task_id,
        split,
        "full" if incremental is None else incremental.last,
        sequence,
        len(entries),
        stages,
        read,
        " ".join(f"{k}={v:.3f}s" for k, v in board.parts.items()),
        time.process_time() - cpu,  # this process's CPU for the whole rebuild (the wall stages are loaded)
    )
    for off in left_off:
        logger.warning(
            "board %s/%s: %s (%s) left off: %s", task_id, split, off["name"], off["key"], off["reason"]
        )
    return snapshot


class _Stages(board_builder.Laps):
    """Wall time of a rebuild's stages, for its log line (``deploy/bench_upload_to_board.py`` reads it):
    ``lock`` (the task's row), ``choose`` (the entries and the inputs digest), ``read`` (the scores'
    replicates), ``state`` (the incremental board's state: this process's or the shared store's),
    ``board`` (``build_board``), ``write`` (the snapshot row), ``commit`` (the commit and what runs on it:
    the shared state's save, the summary's and shake-up's dispatch)."""


def _record_rebuild_success(task: Task, split: str, read_at: datetime) -> None:
    BoardState.objects.update_or_create(
        task=task,
        split=split,
        defaults={"checked_at": read_at, "error": "", "failed_at": None, "failures": 0},
    )


def board_rebuild_failed(*, task_id: int, split: str, error: str) -> int:
    """Record a failed rebuild (its own transaction: the rebuild's was rolled back); the failure count."""
    with transaction.atomic():
        state, _ = BoardState.objects.select_for_update().get_or_create(task_id=task_id, split=split)
        state.error = error[:2000]
        state.failed_at = timezone.now()
        state.failures += 1
        state.save(update_fields=["error", "failed_at", "failures"])
    return state.failures


def boards_requeue_stale(*, stale_for: float, retry_after: float) -> list[tuple[int, str]]:
    """The board sweeper: re-send the rebuild of every board left behind by its scores.

    A board is left behind when a score it does not include (scored after its last successful rebuild
    read the scores) is older than ``stale_for`` seconds: the rebuild message was lost (a Redis restart),
    the coalescing marker outlived its message (so no score sends a new one), or the rebuild failed and
    its retries are spent. A board is re-sent once per ``stale_for``, and one whose last rebuild failed
    waits ``retry_after`` seconds after that failure, so a rebuild that always fails costs a bounded
    amount of work. Rebuilds are idempotent: a duplicate writes nothing.
    """
    from leaderboard.rankings.tasks import rebuild_leaderboard

    now = timezone.now()
    settled = now - timedelta(seconds=stale_for)
    scored = Score.objects.filter(submission__status=Status.SCORED, truth_version=F("task__truth_version"))
    newest = scored.values_list("task_id", "split").annotate(newest=Max("scored_at"))
    states = {(s.task_id, s.split): s for s in BoardState.objects.all()}
    snapshots = {
        (t, sp): at
        for t, sp, at in BoardSnapshot.objects.values_list("task_id", "split").annotate(at=Max("created_at"))
    }
    sent = []
    for task_id, split, newest_at in newest:
        state = states.get((task_id, split))
        checked = (
            state.checked_at if state is not None and state.checked_at else snapshots.get((task_id, split))
        )
        if checked is not None and newest_at <= checked:
            continue  # up to date
        if state is not None and state.resent_at is not None and state.resent_at > settled:
            continue  # re-sent within the last period: that rebuild may still be queued
        if (
            state is not None
            and state.failures
            and state.failed_at
            and state.failed_at > now - timedelta(seconds=retry_after)
        ):
            continue  # failed recently: wait before trying again
        missing = scored.filter(task_id=task_id, split=split)
        if checked is not None:
            missing = missing.filter(scored_at__gt=checked)
        oldest = missing.aggregate(at=Min("scored_at"))["at"]
        if oldest is None or oldest > settled:
            continue  # its rebuild is most likely on its way
        try:
            rebuild_leaderboard.apply_async(args=[task_id, split])
        except Exception:  # the broker is down: the next sweep tries again
            logger.warning("broker unreachable; board %s/%s left for the next sweep", task_id, split)
            continue
        BoardState.objects.update_or_create(task_id=task_id, split=split, defaults={"resent_at": now})
        sent.append((task_id, split))
    if sent:
        logger.warning("sweeper re-sent rebuilds of boards %s", sent)
    return sent


def challenge_summary_rebuild(*, challenge_id: int, split: str) -> ChallengeSummary | None:
    """Cross-task summary from the latest snapshot of every task: entries present on every task."""
    with transaction.atomic():
        # NO KEY UPDATE: summaries of one challenge are serialised; uploads (which reference it) do not wait.
        challenge = Challenge.objects.select_for_update(no_key=True).get(pk=challenge_id)
        tasks = list(task_list(challenge=challenge))
        snapshots = []
        for task in tasks:
            snap = BoardSnapshot.objects.filter(task=task, split=split).order_by("-sequence").first()
            if snap is not None:
                snapshots.append((task, snap))
        data, svg = board_builder.build_summary(
            challenge=challenge,
            snapshots=snapshots,
            robustness_of=lambda snap: board_robustness(snap, svg=False),  # its schemes, no blob plot
        )
        latest = (
            ChallengeSummary.objects.filter(challenge=challenge, split=split).order_by("-sequence").first()
        )
        if latest is not None and latest.data == data and latest.svg == svg:
            return latest
        sequence = (latest.sequence if latest else 0) + 1
        return ChallengeSummary.objects.create(
            challenge=challenge, split=split, sequence=sequence, data=data, svg=svg
        )


def boards_rebuild_dispatch(*, task_ids: list[int]) -> None:
    from leaderboard.rankings.tasks import rebuild_leaderboard

    for task in Task.objects.filter(pk__in=task_ids):
        for split in splits_of(task):
            if not _mark_rebuild_pending(task.pk, split):
                continue  # a queued rebuild that has not started yet will read this score too
            try:
                rebuild_leaderboard.apply_async(args=[task.pk, split])
            except Exception:
                _clear_rebuild_pending(task.pk, split)  # nothing is queued: let the next score send one
                raise


def summary_rebuild_dispatch(*, challenge_id: int, split: str) -> None:
    from leaderboard.rankings.tasks import rebuild_summary

    rebuild_summary.apply_async(args=[challenge_id, split])


def splits_of(task: Task) -> list[str]:
    return [Split.PUBLIC, Split.PRIVATE] if task.has_private_split else [Split.PUBLIC]


def shakeup_rebuild(*, task_id: int) -> ShakeupReport | None:
    """The shake-up report of the latest public and private snapshots of a task (once per pair)."""
    with transaction.atomic():
        task = (
            Task.objects.select_for_update(of=("self",), no_key=True)
            .select_related("challenge")
            .get(pk=task_id)
        )
        if not task.has_private_split:
            return None
        latest = {
            split: BoardSnapshot.objects.filter(task=task, split=split).order_by("-sequence").first()
            for split in (Split.PUBLIC, Split.PRIVATE)
        }
        public, private = latest[Split.PUBLIC], latest[Split.PRIVATE]
        if public is None or private is None:
            return None
        existing = ShakeupReport.objects.filter(
            task=task, public_sequence=public.sequence, private_sequence=private.sequence
        ).first()
        if existing is not None:
            return existing
        scores = {
            split: {
                s.submission_id: s
                for s in Score.objects.filter(
                    task=task,
                    split=split,
                    truth_version=task.truth_version,
                    submission_id__in=[r["submission_id"] for r in snap.rows],
                )
            }
            for split, snap in ((Split.PUBLIC, public), (Split.PRIVATE, private))
        }
        data, svg = board_builder.build_shakeup(
            task=task,
            public=public,
            private=private,
            public_scores=scores[Split.PUBLIC],
            private_scores=scores[Split.PRIVATE],
        )
        report = ShakeupReport.objects.create(
            task=task, public_sequence=public.sequence, private_sequence=private.sequence, data=data, svg=svg
        )
    logger.info(
        "shake-up report of task %s: public #%s, private #%s", task_id, public.sequence, private.sequence
    )
    return report


def shakeup_rebuild_dispatch(*, task_id: int) -> None:
    from leaderboard.rankings.tasks import rebuild_shakeup

    rebuild_shakeup.apply_async(args=[task_id])


# --- rank robustness, built on first read ---------------------------------------------------------------
#: Why a snapshot has no robustness: the scores it was built from were re-scored since.
ROBUSTNESS_RESCORED = (
    "The scores of this board were re-scored after it was built; the latest board has its ranking robustness."
)


def board_robustness(snapshot: BoardSnapshot, *, svg: bool = True) -> dict[str, Any]:
    """How stable the ranking of ``snapshot`` is (``rankings.board.build_robustness``) with what its test set
    resolves, as stored: not a reader's view (``rankings.policy.ReaderView.robustness`` is).

    The rebuild does not pay for it: it is built here on the first read from the scores the snapshot read,
    and kept (:class:`RobustnessReport`, one per snapshot), so every later read in any process is one query.
    The blob plot (``svg``, nearly all of the cost) is drawn only for a read that asks for it (the page
    that shows it), once; other reads (the API, the summary's schemes, the report) get ``svg`` empty. The
    numbers are those a rebuild would have stored. Snapshots written before hold it in
    ``BoardSnapshot.robustness`` and are read as stored.
    """
    stored = dict(snapshot.robustness or {})
    stamps = stored.pop(ROBUSTNESS_INPUTS, None)
    if "available" in stored or stamps is None:  # written by an older rebuild, with the robustness in it
        return stored
    report = RobustnessReport.objects.filter(snapshot=snapshot).first()
    if report is None or (svg and report.svg is None):
        report = _robustness_build(snapshot, stamps, report, draw=svg)
    return {**report.data, "svg": report.svg or "", **stored}


def stored_resolution(snapshot: BoardSnapshot) -> dict[str, Any]:
    """What the rebuild stored of ``snapshot``'s robustness, without building the rest: what its test set
    resolves (and, in snapshots written before, the whole robustness)."""
    return {k: v for k, v in (snapshot.robustness or {}).items() if k != ROBUSTNESS_INPUTS}


def _robustness_build(
    snapshot: BoardSnapshot, stamps: dict[str, str], report: RobustnessReport | None, *, draw: bool
) -> RobustnessReport:
    task = Task.objects.select_related("challenge").get(pk=snapshot.task_id)
    rows = snapshot.rows
    scores = {
        s.submission_id: s
        for s in Score.objects.filter(
            task=task, split=snapshot.split, submission_id__in=[r["submission_id"] for r in rows]
        )
    }
    current = {str(sid): s.scored_at.isoformat() for sid, s in scores.items()}
    if any(current.get(str(r["submission_id"])) != stamps.get(str(r["submission_id"])) for r in rows):
        data: dict[str, Any] = {"available": False, "reason": ROBUSTNESS_RESCORED}
    else:
        data = board_builder.build_snapshot_robustness(task=task, rows=rows, scores=scores, draw=draw)
    drawn = data.pop("svg", "")
    svg = drawn if draw or not data.get("available") or len(rows) > board_builder.BLOB_MAX_ENTRIES else None
    if report is not None:  # kept without its blob plot: draw it once (the other numbers are the same)
        RobustnessReport.objects.filter(pk=report.pk, svg__isnull=True).update(svg=svg)
        report.svg = svg
        return report
    # two first reads at once: one row is written, the other reads it (the numbers are the same)
    report, _ = RobustnessReport.objects.get_or_create(snapshot=snapshot, defaults={"data": data, "svg": svg})
    logger.info("robustness of board %s/%s #%s built", task.pk, snapshot.split, snapshot.sequence)
    return report


# --- the shake-up report, built only when someone can read it -------------------------------------------
def shakeup_after_rebuild(task: Task) -> bool:
    """Whether a rebuild of a board of ``task`` queues the shake-up report (1,000 re-splits: as long as the
    board or longer) for the workers.

    Only once the private board is revealed: before, only organizers read the report, and it is built when
    one opens it (:func:`shakeup_current`). Never when tasks run in-process (the embedded default): the
    rebuild runs inside a participant's submission request there, which must not wait for a report; the
    first read builds it.
    """
    return bool(task.challenge.private_revealed) and not current_app.conf.task_always_eager


def shakeup_current(*, task: Task) -> ShakeupReport | None:
    """The shake-up report of the latest public and private snapshots of ``task``: the stored one, or built
    now when none is stored for that pair (the caller is a reader allowed to read it). ``None`` until both
    boards exist."""
    public, private = (
        BoardSnapshot.objects.filter(task=task, split=split)
        .order_by("-sequence")
        .values_list("sequence", flat=True)
        .first()
        for split in (Split.PUBLIC, Split.PRIVATE)
    )
    if public is None or private is None:
        return None
    stored = ShakeupReport.objects.filter(task=task, public_sequence=public, private_sequence=private).first()
    return stored if stored is not None else shakeup_rebuild(task_id=task.pk)
