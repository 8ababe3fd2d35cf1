"""The scoring flow through the services: submit -> score -> board, on the embedded default and on real
workers. (The HTTP flow is in test_api_*.py; the pages in test_web_*.py.)"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from leaderboard.core.exceptions import ApplicationError, LimitReachedError
from leaderboard.rankings.models import BoardSnapshot
from leaderboard.rankings.services import leaderboard_rebuild
from leaderboard.scoring import engine
from leaderboard.scoring.models import Score
from leaderboard.scoring.services import SCORER_CRASHED, submission_score
from leaderboard.submissions.models import Status, Submission
from leaderboard.submissions.services import submission_create
from stats.engine import score_entries
from tests.conftest import wait_for
from tests.service.factories import LABELS, challenge_with_task, predictions, upload, user


@pytest.fixture
def setup(transactional_db):  # type: ignore[no-untyped-def]
    # Real commits, so tasks dispatched on commit run (in-process here) as they do in production.
    organizer = user("org")
    challenge, task, ids, truth = challenge_with_task(organizer)
    return organizer, challenge, task, ids, truth


def submit(challenge, who, name, data):  # type: ignore[no-untyped-def]
    return submission_create(
        challenge=challenge, user=who, name=name, files={"main": [upload(f"{name}.csv", data)]}
    )


def test_submissions_are_scored_and_ranked_with_the_engines_numbers(setup) -> None:  # type: ignore[no-untyped-def]
    _organizer, challenge, task, ids, truth = setup
    files = {"good": predictions(ids, truth, 0.9, 1), "fair": predictions(ids, truth, 0.7, 2)}
    for name, data in files.items():
        s = submit(challenge, user(name), name, data)
        s.refresh_from_db()
        assert s.status == Status.SCORED, s.error

    board = BoardSnapshot.objects.filter(task=task, split="public").latest("sequence")
    assert board.entry_count == 2
    assert [r["name"] for r in board.rows] == ["good", "fair"]
    assert board.rows[0]["rank"] == 1

    # The same numbers as the engine on the same files, with the challenge's resamples and seed.
    truth_arr = np.array(truth)
    preds = [
        np.array([line.split(",")[1] for line in files[n].decode().splitlines()[1:]])
        for n in ("good", "fair")
    ]
    expected = score_entries(
        truth_arr, preds, metric="accuracy", resamples=500, seed=challenge.seed, labels=LABELS
    )
    for row, exp in zip(board.rows, expected, strict=True):
        assert row["value"] == pytest.approx(exp.value, abs=1e-12)
        score = Score.objects.get(submission_id=row["submission_id"], task=task)
        np.testing.assert_allclose(score.replicate_array(), exp.replicates, rtol=0, atol=1e-12)
    assert board.signature["resamples"] == 500


def test_invalid_file_is_refused_stores_nothing_and_is_not_charged(setup) -> None:  # type: ignore[no-untyped-def]
    _organizer, challenge, _task, ids, truth = setup
    participant = user("p1")
    bad = b"id,prediction\n" + "".join(f"{i},zebrafinch\n" for i in ids[:-1]).encode()  # one id missing
    with pytest.raises(ApplicationError) as err:
        submit(challenge, participant, "bad", bad)
    assert ids[-1] in err.value.message
    assert Submission.objects.count() == 0
    # Not charged: the team can still use its full daily limit.
    for k in range(challenge.daily_limit):
        submit(challenge, participant, f"ok{k}", predictions(ids, truth, 0.8, k))
    with pytest.raises(LimitReachedError):
        submit(challenge, participant, "one-too-many", predictions(ids, truth, 0.8, 99))
    assert Submission.objects.filter(team__members=participant).count() == challenge.daily_limit


def test_scoring_twice_is_idempotent_and_rebuild_writes_no_duplicate_snapshot(setup) -> None:  # type: ignore[no-untyped-def]
    _organizer, challenge, task, ids, truth = setup
    s = submit(challenge, user("p1"), "a", predictions(ids, truth, 0.8, 1))
    assert submission_score(submission_id=s.pk) == []  # already scored: nothing to do
    assert Score.objects.filter(submission=s).count() == 1
    before = BoardSnapshot.objects.filter(task=task).count()
    again = leaderboard_rebuild(task_id=task.pk, split="public")
    assert again is not None and again.sequence == before
    assert BoardSnapshot.objects.filter(task=task).count() == before


def test_a_crashing_scorer_fails_the_submission_without_charging_or_leaking(
    setup, monkeypatch, caplog
) -> None:  # type: ignore[no-untyped-def]
    _organizer, challenge, _task, ids, truth = setup

    def boom(**kwargs):  # type: ignore[no-untyped-def]
        raise RuntimeError(f"unexpected label {LABELS[0]} at item 3")

    monkeypatch.setattr(engine, "score_files", boom)
    caplog.set_level(logging.INFO)
    s = submit(challenge, user("p1"), "crash", predictions(ids, truth, 0.8, 1))
    s.refresh_from_db()
    assert s.status == Status.FAILED
    assert s.error == SCORER_CRASHED
    assert s.charged is False
    assert "RuntimeError" in caplog.text
    for label in LABELS:
        assert label not in caplog.text


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_real_worker_scores_a_submission_and_rebuilds_the_board(worker_factory) -> None:  # type: ignore[no-untyped-def]
    organizer = user("org")
    challenge, task, ids, truth = challenge_with_task(organizer)
    worker_factory()
    s = submit(challenge, user("p1"), "remote", predictions(ids, truth, 0.85, 3))
    wait_for(lambda: Submission.objects.get(pk=s.pk).status == Status.SCORED, timeout=90, what="scoring")
    board = wait_for(
        lambda: BoardSnapshot.objects.filter(task=task, split="public", entry_count=1).first(),
        timeout=60,
        what="the board snapshot",
    )
    assert board.rows[0]["name"] == "remote"
    assert Submission.objects.get(pk=s.pk).dispatched_at is not None


def test_the_board_equals_what_python_m_stats_leaderboard_prints_for_the_same_files(setup, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json
    import subprocess
    import sys

    from tests.service.factories import csv_bytes

    _organizer, challenge, task, ids, truth = setup
    files = {
        "good": predictions(ids, truth, 0.9, 1),
        "fair": predictions(ids, truth, 0.75, 2),
        "poor": predictions(ids, truth, 0.6, 3),
    }
    for name, data in files.items():
        submit(challenge, user(name), name, data)
        (tmp_path / f"{name}.csv").write_bytes(data)
    (tmp_path / "truth.csv").write_bytes(csv_bytes("id,label", list(zip(ids, truth, strict=True))))
    out = subprocess.run(
        [
            sys.executable, "-m", "stats", "leaderboard", "--truth", str(tmp_path / "truth.csv"),
            "--metric", "accuracy", "--labels", ",".join(LABELS), "--resamples", str(challenge.resamples),
            "--seed", str(challenge.seed), "--confidence", str(challenge.confidence),
            "--interval", challenge.interval_method, "--correction", challenge.correction, "--format", "json",
            *(str(tmp_path / f"{n}.csv") for n in files),
        ],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    cli = {Path(r["name"]).stem: r for r in json.loads(out.stdout)["rows"]}
    board = BoardSnapshot.objects.filter(task=task, split="public").latest("sequence")
    assert [r["name"] for r in board.rows] == sorted(cli, key=lambda n: cli[n]["rank"])
    for row in board.rows:
        expected = cli[row["name"]]
        # the snapshot's typed row (rankings.board.SnapshotRow) against stats.board's row of the CLI
        assert [row["rank"], row["in_best_set"], row["items_needed"]] == [
            expected["rank"],
            expected["in_best_set"],
            expected["items_needed"],
        ], row["name"]
        assert [row["rank_low"], row["rank_high"]] == expected["rank_interval"]
        assert [row["rank_sim_low"], row["rank_sim_high"]] == expected["simultaneous_rank_interval"]
        for field, cli_field in (
            ("value", "value"),
            ("diff", "difference"),
            ("p_value", "p_value"),
            ("p_adjusted", "adjusted_p_value"),
        ):
            assert row[field] == pytest.approx(expected[cli_field], rel=1e-9, abs=1e-12), (row["name"], field)
        assert [row["low"], row["high"]] == pytest.approx(expected["interval"], rel=1e-9)
        assert [row["diff_low"], row["diff_high"]] == pytest.approx(
            expected["difference_interval"], rel=1e-9, abs=1e-12
        )


def test_a_submission_interrupted_too_often_fails_uncharged_instead_of_crashing_workers_forever(
    setup,
) -> None:  # type: ignore[no-untyped-def]
    from leaderboard.scoring.services import MAX_ATTEMPTS, submission_claim

    _organizer, challenge, _task, ids, truth = setup
    s = submit(challenge, user("p1"), "poison", predictions(ids, truth, 0.8, 1))
    # As if a worker had been killed while scoring it MAX_ATTEMPTS times (each redelivery claims again).
    Submission.objects.filter(pk=s.pk).update(status=Status.RUNNING, attempts=MAX_ATTEMPTS)
    assert submission_claim(submission_id=s.pk) is False
    s.refresh_from_db()
    assert s.status == Status.FAILED
    assert s.charged is False
    assert f"interrupted {MAX_ATTEMPTS} times" in s.error
