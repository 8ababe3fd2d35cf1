"""``lb`` against a live server (pytest-django's ``live_server``, real HTTP), through click's CliRunner."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from leaderboard.cli.main import cli, config_path
from leaderboard.submissions.models import Submission
from tests.service.api_support import (
    FAST_HASHERS,
    PASSWORD,
    client_for,
    create_challenge_over_http,
    reset_throttles,
)
from tests.service.factories import predictions, user


@pytest.fixture
def env(live_server, transactional_db, settings, tmp_path: Path, monkeypatch) -> Iterator[dict[str, object]]:  # type: ignore[no-untyped-def]
    settings.PASSWORD_HASHERS = FAST_HASHERS
    reset_throttles()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("LB_TOKEN", raising=False)
    monkeypatch.setenv("LB_HOST", live_server.url)
    organizer = user("org")
    ids, truth = create_challenge_over_http(client_for(organizer))
    user("alice")
    yield {"ids": ids, "truth": truth, "tmp": tmp_path, "host": live_server.url}
    reset_throttles()


def lb(*args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


def login_alice() -> None:
    result = lb("login", "--username", "alice", input=f"{PASSWORD}\n")
    assert result.exit_code == 0, result.output


def test_login_stores_the_token_with_mode_0600_and_refuses_a_wrong_password(env) -> None:  # type: ignore[no-untyped-def]
    bad = lb("login", input="alice\nwrong-password\n")
    assert bad.exit_code == 1
    assert "Unable to log in with provided credentials." in bad.output
    assert not config_path().exists()

    login_alice()
    path = config_path()
    assert path.is_relative_to(env["tmp"])
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    token = json.loads(path.read_text())["tokens"][env["host"]]
    assert len(token) == 40

    assert lb("logout").exit_code == 0
    assert env["host"] not in json.loads(path.read_text())["tokens"]
    not_logged_in = lb("submit", "toy", __file__)
    assert not_logged_in.exit_code == 2 and "lb login" in not_logged_in.output


def test_login_with_a_token_and_lb_token(env, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from rest_framework.authtoken.models import Token

    from leaderboard.accounts.models import User

    key = Token.objects.create(user=User.objects.get(username="alice")).key
    assert lb("login", "--token", "not-a-token").exit_code == 1
    assert lb("login", "--token", key).exit_code == 0
    monkeypatch.setenv("LB_TOKEN", key)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(env["tmp"] / "elsewhere"))  # no stored token: LB_TOKEN is used
    data = env["tmp"] / "p.csv"
    data.write_bytes(predictions(env["ids"], env["truth"], 0.8, 1))
    assert lb("submit", "toy", str(data)).exit_code == 0


def test_submit_wait_prints_the_row_then_status_and_leaderboard(env) -> None:  # type: ignore[no-untyped-def]
    login_alice()
    data = env["tmp"] / "preds.csv"
    data.write_bytes(predictions(env["ids"], env["truth"], 0.85, 1))
    result = lb("submit", "toy", "--task", "main", str(data), "-m", "my model", "--wait")
    assert result.exit_code == 0, result.output
    submission = Submission.objects.get()
    assert submission.name == "my model" and submission.status == "scored"
    assert f"Submission {submission.pk} accepted" in result.output
    assert "main (public):" in result.output and "my model" in result.output and "alice" in result.output

    status = lb("status", str(submission.pk))
    assert status.exit_code == 0 and "scored" in status.output and "main" in status.output

    board = lb("leaderboard", "toy")
    assert board.exit_code == 0, board.output
    assert "toy / main (public board, accuracy): snapshot" in board.output
    assert "my model" in board.output
    as_json = json.loads(lb("leaderboard", "toy", "--task", "main", "--format", "json").output)
    assert as_json["rows"][0]["name"] == "my model"
    assert lb("leaderboard", "toy", "--split", "private").exit_code == 1  # no private board here
    # --format csv was always a 406 (issue 13, bug 4): the CSV download of the same board.
    as_csv = lb("leaderboard", "toy", "--task", "main", "--format", "csv")
    assert as_csv.exit_code == 0, as_csv.output
    header, first = as_csv.output.splitlines()[:2]
    assert "name" in header.split(",") and "my model" in first

    listing = lb("challenges")
    assert listing.exit_code == 0 and "toy" in listing.output and "main" in listing.output


def test_errors_are_the_apis_message_with_exit_codes(env) -> None:  # type: ignore[no-untyped-def]
    login_alice()
    bad = env["tmp"] / "bad.csv"
    bad.write_bytes(b"id,prediction\n")
    refused = lb("submit", "toy", str(bad))
    assert refused.exit_code == 1
    assert refused.output.startswith("Error: bad.csv")
    assert Submission.objects.count() == 0
    assert lb("status", "12345").exit_code == 1
    assert "No submission 12345." in lb("status", "12345").output
    assert lb("leaderboard", "nope").exit_code == 1
    unreachable = lb("--host", "http://127.0.0.1:1", "challenges")
    assert unreachable.exit_code == 2 and "cannot reach" in unreachable.output
    assert lb("leaderboard").exit_code == 2  # usage: click's own code


def test_submit_more_runs_than_the_task_takes_prints_the_api_error(env) -> None:  # type: ignore[no-untyped-def]
    login_alice()
    files = []
    for k in range(6):  # the task's default is 5 runs per submission
        path = env["tmp"] / f"seed{k}.csv"
        path.write_bytes(predictions(env["ids"], env["truth"], 0.8, k))
        files.append(str(path))
    result = lb("submit", "toy", "--task", "main", *files, "-m", "six seeds")
    assert result.exit_code == 1
    assert "Task 'main' takes at most 5 runs (files) per submission; this submission has 6." in result.output
    assert not Submission.objects.exists()


def test_lb_adds_detection_and_segmentation_tasks_submits_to_them_and_shows_details_to_organizers(
    env, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    from rest_framework.authtoken.models import Token

    from leaderboard.accounts.models import User
    from tests.service.vision_support import (
        CLASS_NAMES,
        coco_results,
        coco_truth,
        json_bytes,
        label_maps,
        noisy,
        zip_of,
    )

    tmp: Path = env["tmp"]  # type: ignore[assignment]
    truth, maps = coco_truth(10, seed=50), label_maps(6, seed=51)
    (tmp / "instances.json").write_bytes(json_bytes(truth))
    (tmp / "masks.zip").write_bytes(zip_of(maps))
    (tmp / "det.json.gz").write_bytes(json_bytes(coco_results(truth, seed=52, quality=0.8), gz=True))
    (tmp / "seg.zip").write_bytes(zip_of(noisy(maps, seed=53, error=0.2)))
    org_key = Token.objects.create(user=User.objects.get(username="org")).key
    monkeypatch.setenv("LB_TOKEN", org_key)
    r = lb("add-task", "toy", str(tmp / "instances.json"), "--slug", "boxes", "--metric", "coco_ap")
    assert r.exit_code == 0 and "Task 'boxes' added (detection, coco_ap, 10 items)." in r.output, r.output
    r = lb("add-task", "toy", str(tmp / "masks.zip"), "--slug", "ink", "--metric", "miou",
           "--labels", ",".join(CLASS_NAMES), "--ignore-index", "255")  # fmt: skip
    assert r.exit_code == 0 and "(segmentation, miou, 6 items)" in r.output, r.output
    bad = lb("add-task", "toy", str(tmp / "masks.zip"), "--slug", "ink2", "--metric", "miou")
    assert bad.exit_code == 1 and "class names" in bad.output

    alice_key = Token.objects.create(user=User.objects.get(username="alice")).key
    monkeypatch.setenv("LB_TOKEN", alice_key)
    r = lb("submit", "toy", "--task", "boxes", str(tmp / "det.json.gz"), "--wait", "--name", "det")
    assert r.exit_code == 0, r.output
    r = lb("submit", "toy", "--task", "ink", str(tmp / "seg.zip"), "--wait", "--name", "seg")
    assert r.exit_code == 0, r.output
    sub = Submission.objects.get(name="det").pk
    assert "AP per class" not in lb("status", str(sub)).output  # a participant, before the reveal
    monkeypatch.setenv("LB_TOKEN", org_key)
    shown = lb("status", str(sub)).output
    assert "boxes: all metrics" in shown and "boxes: AP per class" in shown and "zebra" in shown, shown


def test_the_account_pages_login_line_works_and_the_host_is_remembered(env, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Issue 22, B1: the Account page prints ``lb login --token T --host H``; that failed ("No such option
    '--host'"), and after ``lb --host H login`` the next command went to port 8000."""
    from rest_framework.authtoken.models import Token

    from leaderboard.accounts.models import User

    monkeypatch.delenv("LB_HOST")
    key = Token.objects.create(user=User.objects.get(username="alice")).key
    result = lb("login", "--token", key, "--host", env["host"] + "/")
    assert result.exit_code == 0, result.output
    assert f"Logged in to {env['host']}" in result.output
    assert json.loads(config_path().read_text())["host"] == env["host"]

    listing = lb("challenges")  # no --host, no LB_HOST: the host of the login
    assert listing.exit_code == 0, listing.output
    assert "toy" in listing.output
    # --host still wins over the remembered one.
    elsewhere = lb("--host", "http://127.0.0.1:9", "challenges")
    assert elsewhere.exit_code == 2 and "cannot reach http://127.0.0.1:9" in elsewhere.output


def test_submit_warns_before_replacing_the_counted_entry_and_names_the_task_option(env) -> None:  # type: ignore[no-untyped-def]
    """Issue 22, M8: ``lb submit`` replaced the team's counted entry without the web form's warning; and a
    multi-task challenge without ``--task`` answered with the HTTP field name ``file:<task>``."""
    login_alice()
    first = env["tmp"] / "first.csv"
    first.write_bytes(predictions(env["ids"], env["truth"], 0.9, 1))
    quiet = lb("submit", "toy", str(first), "-n", "first")
    assert quiet.exit_code == 0 and "replaces" not in quiet.output
    second = env["tmp"] / "second.csv"
    second.write_bytes(predictions(env["ids"], env["truth"], 0.6, 2))
    result = lb("submit", "toy", str(second), "-n", "second")
    assert result.exit_code == 0, result.output
    sub = Submission.objects.get(name="first")
    assert f"replaces #{sub.pk} 'first' on the board (latest rule), even if it scores worse" in result.output

    from leaderboard.accounts.models import User
    from tests.service.api_support import LABELS, truth_file

    truth, _, _ = truth_file(60)
    extra = client_for(User.objects.get(username="org")).post(
        "/api/challenges/toy/tasks/",
        {"slug": "extra", "title": "Extra", "metric": "accuracy", "labels": ",".join(LABELS), "truth": truth},
        format="multipart",
    )
    assert extra.status_code == 201, extra.content
    several = lb("submit", "toy", str(second))
    assert several.exit_code == 2
    assert "toy has several tasks (main, extra): say which with --task." in several.output


def test_lb_add_task_offers_every_declared_setting_including_the_private_split(env, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from rest_framework.authtoken.models import Token

    from leaderboard.accounts.models import User
    from leaderboard.challenges.models import Task

    tmp: Path = env["tmp"]  # type: ignore[assignment]
    ids: list[str] = env["ids"]  # type: ignore[assignment]
    truth: list[str] = env["truth"]  # type: ignore[assignment]
    parts = ["private" if k % 2 else "public" for k in range(len(ids))]
    rows = "".join(f"{i},{t},{p}\n" for i, t, p in zip(ids, truth, parts, strict=True))
    (tmp / "split.csv").write_text("id,label,part\n" + rows)
    monkeypatch.setenv("LB_TOKEN", Token.objects.create(user=User.objects.get(username="org")).key)
    too_many = lb("add-task", "toy", str(tmp / "split.csv"), "--slug", "s", "--metric", "accuracy",
                  "--max-runs", "50")  # fmt: skip
    assert too_many.exit_code == 2 and "50 is not in the range 1<=x<=20" in too_many.output
    r = lb("add-task", "toy", str(tmp / "split.csv"), "--slug", "split", "--metric", "accuracy",
           "--split-column", "part", "--max-runs", "2", "--decimals", "3", "--stratify", "none")  # fmt: skip
    assert r.exit_code == 0, r.output
    task = Task.objects.get(slug="split")
    assert (task.has_private_split, task.max_runs, task.decimals, task.stratify) == (True, 2, 3, "none")
    assert task.title == "split"  # the title defaults to the slug
