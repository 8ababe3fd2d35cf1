"""The public board in a Ladder mode (issue 15): its releases, written once, when the board is rebuilt.

A task's ``public_mode`` is ``plain`` (every score shown, at the board's precision), ``ladder`` (a team's
shown value changes only when a new submission beats it by more than the fixed step ``ladder_eta``; the
value is then rounded to a multiple of the step) or ``ladder-free`` (by more than ``ladder_z`` standard
errors of the paired difference between the new submission and the shown one, from the common bootstrap
replicates the engine stores per Score: the same for every metric). The rule itself is
:class:`stats.ladder.LadderBoard`, built by the task's mode (``rankings.policy.LadderMode.rule``).

This module writes the releases; who reads them, and what else a reader sees, is decided by the read
policy (``rankings.policy``: the Ladder modes are two of its policy classes).

- **Releases are computed once.** The public board's rebuild (``rankings.services.leaderboard_rebuild``,
  with the task locked) calls :func:`releases_update`, which writes one :class:`LadderRelease` per new
  scored submission, in the order the scores reach the board, and never rewrites one; then
  :func:`released_rows` (the latest release of every team) is stored on the snapshot as ``ladder_rows``.
- **Readers read only the releases.** Until the organizers reveal the final boards, a non-organizer who
  asks for the public board of a Ladder task (``rankings.policy.LadderMode.exact_for``) gets
  ``ladder_rows`` (rank, entry, team, the shown value) and nothing computed from the exact scores: no
  intervals, differences, p-values, rank sets, verdicts, pairwise tables, rank distributions, cross-task
  summary or shake-up; a submission's public score is replaced by its release
  (``LadderMode.release_view``: the shown value and, in words, why the board moved or did not). Organizers see everything; the private board at the reveal shows everything, and so
  does the public board from then on (the shake-up report publishes the public values at that point).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from leaderboard.challenges.models import EntrySelection, Task
from leaderboard.rankings.models import LadderRelease
from leaderboard.rankings.policy import LadderMode, mode_of
from leaderboard.scoring import engine
from leaderboard.scoring.models import Score, Split
from leaderboard.submissions.models import Status, Submission


def _entry_key(submission: Any) -> str:
    return f"baseline:{submission.pk}" if submission.is_baseline else f"team:{submission.team_id}"


def _replicates(score_ids: list[int]) -> dict[int, np.ndarray]:
    return {
        pk: np.frombuffer(bytes(raw), dtype=np.float64)
        for pk, raw in Score.objects.filter(pk__in=score_ids).values_list("pk", "replicates")
    }


def _message(
    task: Task, mode: LadderMode, *, moved: bool, first: bool, shown: float | None, defined: bool
) -> str:
    value = "nothing" if shown is None else f"{shown:.{mode.decimals(task)}f}"
    if not defined:
        return (
            "Not shown: the score of this submission is undefined on the public items, so the board shows "
            f"your previous score ({value})."
        )
    if first:
        return f"Shown: your first submission on this task; the public board shows {value}."
    if moved:
        return (
            "Shown: your new submission beat your shown score by more than the Ladder's step "
            f"({mode.step_words(task)}), so the board now shows {value}."
        )
    return (
        "Not shown: your new submission did not beat your shown score by more than the Ladder's step "
        f"({mode.step_words(task)}), so the board shows your previous score, {value}."
    )


def releases_update(task: Task) -> int:
    """Release every scored public submission of ``task`` not released yet; the number released.

    Call with the task locked (the public board's rebuild): releases are made in the order the scores
    reach the board and are never rewritten, so what a team was shown stays what it was shown.
    """
    mode = mode_of(task)
    if not isinstance(mode, LadderMode):
        return 0
    version = task.truth_version
    done = set(
        LadderRelease.objects.filter(task=task, truth_version=version).values_list("submission_id", flat=True)
    )
    scores = [
        s
        for s in Score.objects.filter(
            task=task, split=Split.PUBLIC, truth_version=version, submission__status=Status.SCORED
        )
        .defer("replicates", "jackknife", "item_statistics")
        .select_related("submission")
        .order_by("submission__created_at", "submission_id")
        if s.submission_id not in done
    ]
    if not scores:
        return 0
    state: dict[str, LadderRelease] = {}
    for release in (
        LadderRelease.objects.filter(task=task, truth_version=version, shown__isnull=False)
        .only("pk", "entry_key", "shown", "shown_submission_id")
        .order_by("pk")
    ):
        state[release.entry_key] = release
    free = mode.paired  # the step is in standard errors of the paired difference: read the replicates
    higher = engine.metric_higher_is_better(task.metric)
    for score in scores:
        key = _entry_key(score.submission)
        previous = state.get(key)
        board = mode.rule(task, higher_is_better=higher, shown=None if previous is None else previous.shown)
        defined = score.value is not None and math.isfinite(score.value)
        if not defined:
            moved, threshold, shown = False, None, None if previous is None else previous.shown
        else:
            replicates = None
            if free:
                reps = _replicates([score.pk])[score.pk]
                if previous is not None:
                    best_score = Score.objects.only("pk").get(
                        task=task,
                        split=Split.PUBLIC,
                        truth_version=version,
                        submission_id=int(previous.shown_submission_id or 0),
                    )
                    best = _replicates([best_score.pk])[best_score.pk]
                    # resamples on which either is undefined (a class missing) tell nothing about the pair
                    keep = np.isfinite(reps) & np.isfinite(best)
                    reps = reps[keep] if keep.sum() >= 2 else np.full(2, np.inf)
                    board._best_replicates = best[keep] if keep.sum() >= 2 else np.zeros(2)
                replicates = reps
            answer = board.submit(float(score.value), replicates=replicates)
            moved, threshold = answer.moved, answer.threshold
            if threshold is not None and not math.isfinite(threshold):
                moved, threshold = False, None  # no defined paired difference: the board does not move
            shown = (
                round(float(answer.shown), 12) if moved else (None if previous is None else previous.shown)
            )
        made = LadderRelease.objects.create(
            task=task,
            submission=score.submission,
            truth_version=version,
            entry_key=key,
            shown=shown,
            shown_submission=score.submission if moved else (previous.shown_submission if previous else None),
            moved=moved,
            threshold=threshold,
            message=_message(task, mode, moved=moved, first=previous is None, shown=shown, defined=defined),
        )
        if moved:
            state[key] = made
    return len(scores)


def released_rows(task: Task) -> list[dict[str, Any]]:
    """The Ladder board: every team's latest release, ranked by the shown value (ties share a rank)."""
    if not mode_of(task).releases:
        return []
    # each team's latest release (plain tuples: a board rebuilt after every score reads them all)
    latest: dict[str, tuple[float, int | None]] = {}
    for key, value, shown_id in (
        LadderRelease.objects.filter(task=task, truth_version=task.truth_version, shown__isnull=False)
        .order_by("pk")
        .values_list("entry_key", "shown", "shown_submission_id")
    ):
        latest[key] = (float(value or 0.0), shown_id)
    named = _counted_entries(task)  # team key -> the team's counted entry (not under "best")
    subs = Submission.objects.select_related("team").in_bulk(
        [sid for _, sid in latest.values() if sid] + list(named.values())
    )
    higher = engine.metric_higher_is_better(task.metric)
    ordered = sorted(latest.items(), key=lambda kv: (-kv[1][0] if higher else kv[1][0], kv[0]))
    rows: list[dict[str, Any]] = []
    for position, (key, (shown, sid)) in enumerate(ordered, start=1):
        source = subs.get(sid) if sid else None
        sub = subs.get(named[key]) if key in named else source  # the row names the team's entry
        rank = rows[-1]["rank"] if rows and rows[-1]["value"] == shown else position
        rows.append(
            {
                "rank": rank,
                "name": sub.name if sub else "",
                "team": sub.team.name if sub else "",
                "is_baseline": bool(sub and sub.is_baseline),
                "value": shown,
                "submission_id": sub.pk if sub else None,
                # the submission whose score the Ladder shows, when it is not the entry the row names
                "shown_from": source.name
                if source is not None and sub is not None and source.pk != sub.pk
                else None,
                "key": key,
            }
        )
    return rows


def _counted_entries(task: Task) -> dict[str, int]:
    """Each team's counted entry on this task (by entry key), the entry the row names (issue 22, A9): under
    the "selected" rule the submission the team selected, under "latest" (and for a team that selected
    nothing) its latest scored submission, as the exact board counts them (``rankings.services``). The
    value stays the Ladder's release: which entry counts says nothing of a score the Ladder did not
    release. Under "best" the row names the submission whose score is shown: the team's best exact score
    is not released, so naming another submission would tell that it scored higher."""
    if task.challenge.entry_selection == EntrySelection.BEST:
        return {}
    selected = task.challenge.entry_selection == EntrySelection.SELECTED
    latest: dict[str, int] = {}
    chosen: dict[str, int] = {}
    for team_id, submission_id, is_selected in (
        Score.objects.filter(
            task=task,
            split=Split.PUBLIC,
            truth_version=task.truth_version,
            submission__is_baseline=False,
            submission__status=Status.SCORED,
        )
        .order_by("submission__created_at", "submission_id")
        .values_list("submission__team_id", "submission_id", "submission__selected")
    ):
        latest[f"team:{team_id}"] = submission_id
        if selected and is_selected:
            chosen[f"team:{team_id}"] = submission_id
    return {key: chosen.get(key, submission_id) for key, submission_id in latest.items()}
