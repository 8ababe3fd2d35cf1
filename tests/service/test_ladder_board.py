"""A public board in a Ladder mode (issue 15): it releases a team's new score only when the new submission
beats the shown one by more than the step, and no channel gives away more than that.

A team submits three files whose exact public accuracies (k / 203) differ by less than the fixed step
(0.05) for the first two and by more for the third. Every response a participant, another participant or
an anonymous reader can get (API JSON and CSV, site pages and downloads, submission pages and status, my
submissions, the cross-task summary, rank and pairwise pages, the shake-up report, every earlier snapshot,
the read cache, ``lb``) is scanned for the exact values in every form a number could take (rounded or cut
at 3 or 4 decimals, at full precision); the shown value stays 0.700 after the second submission and the
participant is told why; organizers see everything; the private board at the reveal shows everything.

The same scan runs for every registered board mode (``rankings.policy.MODES``, issue 19): on a plain
board nothing finer than the board's precision may leave; under a Ladder mode nothing the Ladder did not
release.
"""

from __future__ import annotations

import csv
import html as htmllib
import io
import json
import re
from collections.abc import Iterator

import numpy as np
import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from rest_framework.throttling import SimpleRateThrottle

from leaderboard.challenges.models import Task
from leaderboard.challenges.services import challenge_create, challenge_reveal_private, task_create
from leaderboard.rankings.models import BoardSnapshot, LadderRelease
from leaderboard.rankings.policy import LADDER_COLUMNS, MODES, NOT_AVAILABLE
from leaderboard.rankings.selectors import reader_view
from leaderboard.scoring.models import Score
from tests.service.api_support import FAST_HASHERS, client_for, file, reset_throttles
from tests.service.factories import LABELS, csv_bytes, user

RATES = {
    **SimpleRateThrottle.THROTTLE_RATES,
    "submit": "1000/min",
    "anon_read": "1000/min",
    "token": "1000/min",
}
N_PUBLIC = 203  # exact accuracies k / 203 have long decimals, so any leaked digit is recognisable
ETA = 0.05


@pytest.fixture(autouse=True)
def _fresh(settings, monkeypatch) -> Iterator[None]:
    settings.PASSWORD_HASHERS = FAST_HASHERS
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", dict(RATES))
    reset_throttles()
    yield
    reset_throttles()


def _truth(n_public: int = N_PUBLIC) -> tuple[list[str], list[str], list[str]]:
    rng = np.random.default_rng(3)
    n = 2 * n_public
    ids = [f"item-{i:04d}" for i in range(n)]
    labels = [LABELS[k] for k in rng.integers(0, len(LABELS), size=n)]
    split = ["public" if i % 2 == 0 else "private" for i in range(n)]
    return ids, labels, split


def _file(
    ids: list[str], labels: list[str], split: list[str], right_public: int, right_private: int
) -> bytes:
    """Right on the first ``right_public`` public items and ``right_private`` private items."""
    rows, seen = [], {"public": 0, "private": 0}
    for i, t, s in zip(ids, labels, split, strict=True):
        limit = right_public if s == "public" else right_private
        right = seen[s] < limit
        seen[s] += 1
        rows.append((i, t if right else LABELS[(LABELS.index(t) + 1) % len(LABELS)]))
    return csv_bytes("id,prediction", rows)


def _ladder_task(mode: str = "ladder", **fields: object) -> tuple[object, Task, tuple]:
    organizer = user("org")
    challenge = challenge_create(organizer=organizer, slug="lad", title="Ladder", resamples=200)
    ids, labels, split = _truth()
    rows = "".join(f"{i},{t},{s}\n" for i, t, s in zip(ids, labels, split, strict=True))
    task = task_create(
        challenge=challenge,
        slug="main",
        title="Main task",
        metric="accuracy",
        truth=("id,label,split\n" + rows).encode(),
        truth_name="truth.csv",
        labels=LABELS,
        split_column="split",
        decimals=3,
        public_mode=mode,
        **fields,  # type: ignore[arg-type]
    )
    return organizer, task, (ids, labels, split)


def _submit(who, data: bytes, name: str) -> int:  # type: ignore[no-untyped-def]
    response = client_for(who).post(
        "/api/challenges/lad/submissions/",
        {"name": name, "file": file(f"{name}.csv", data)},
        format="multipart",
    )
    assert response.status_code == 201, response.content
    return int(response.json()["id"])


def _forms(value: float) -> set[str]:
    """Every way a page or file could write ``value`` to 3 or more decimals."""
    out = {repr(value)}
    for places in (3, 4):
        out.add(f"{value:.{places}f}")
        cut = int(value * 10**places) / 10**places
        out.add(f"{cut:.{places}f}")
    return out


def _fine_forms(value: float) -> set[str]:
    """The ways to write ``value`` more finely than the board's precision (3 decimals)."""
    return {f for f in _forms(value) if len(f.split(".")[-1]) > 3}


def _leaks(text: str, hidden: set[str]) -> list[str]:
    # a number, not the tail of another one (a timestamp's "10.689" is not "0.689")
    return [h for h in hidden if re.search(r"(?<![\d])" + re.escape(h) + r"(?!\d)", text)]


@pytest.fixture
def board(transactional_db):  # type: ignore[no-untyped-def]
    organizer, task, (ids, labels, split) = _ladder_task("ladder", ladder_eta=ETA)
    alice, bob = user("alice"), user("bob")
    pks = [
        _submit(alice, _file(ids, labels, split, 140, 150), "first"),  # 0.6897: shown as 0.70
        _submit(alice, _file(ids, labels, split, 146, 120), "second"),  # 0.7192: not above 0.70 + 0.05
    ]
    bob_pk = _submit(bob, _file(ids, labels, split, 120, 130), "bob")  # 0.5911: shown as 0.60
    exact = {pk: Score.objects.get(submission_id=pk, split="public").value for pk in [*pks, bob_pk]}
    private = {pk: Score.objects.get(submission_id=pk, split="private").value for pk in [*pks, bob_pk]}
    shown = {"0.700", "0.70", "0.7", "0.600", "0.60", "0.6"}
    hidden = set().union(*(_forms(v) for v in [*exact.values(), *private.values()])) - shown
    # the check is meaningful: no exact value writes like a shown one
    assert all(f"{v:.3f}" not in shown for v in [*exact.values(), *private.values()])
    return organizer, alice, bob, task, pks, bob_pk, exact, hidden


@pytest.fixture(params=sorted(MODES))
def any_mode(request, transactional_db):  # type: ignore[no-untyped-def]
    """The same submissions on a board of every registered mode, and what each mode must not let out:
    under a Ladder mode every form of an exact score that the Ladder did not release; on a plain board
    every form finer than the board's precision (its participants read rounded numbers only)."""
    mode = request.param
    organizer, task, (ids, labels, split) = _ladder_task(
        mode, **({"ladder_eta": ETA} if mode == "ladder" else {})
    )
    alice, bob = user("alice"), user("bob")
    pks = [
        _submit(alice, _file(ids, labels, split, 140, 150), "first"),
        _submit(alice, _file(ids, labels, split, 146, 120), "second"),
    ]
    bob_pk = _submit(bob, _file(ids, labels, split, 120, 130), "bob")
    values = [s.value for s in Score.objects.filter(task=task)]
    if reader_view(task, "public", AnonymousUser()).exact:
        hidden = set().union(*(_fine_forms(v) for v in values))
    else:
        released = [r.shown for r in LadderRelease.objects.filter(task=task) if r.shown is not None]
        shown = {f"{v:.{places}f}" for v in released for places in (1, 2, 3)} | {repr(v) for v in released}
        hidden = set().union(*(_forms(v) for v in values)) - shown
        unreleased = Score.objects.get(submission_id=pks[1], split="public").value  # not beyond the step
        assert _forms(unreleased) <= hidden  # the check is meaningful: nothing of it was released
    assert hidden
    return mode, organizer, alice, bob, task, pks, bob_pk, hidden


def _api_texts(client, task: Task, pks: list[int]) -> dict[str, str]:  # type: ignore[no-untyped-def]
    out = {}
    for path in (
        "/api/challenges/lad/leaderboard/",
        "/api/challenges/lad/leaderboard/?format=csv",
        "/api/challenges/lad/summary/",
        "/api/challenges/lad/critical-difference.svg",
        "/api/challenges/lad/shakeup/",
        "/api/challenges/lad/shakeup/?format=csv",
        "/api/challenges/lad/shakeup.svg",
        "/api/challenges/lad/submissions/",
        "/api/challenges/lad/tasks/",
        "/api/challenges/lad/tasks/main/",
        *[f"/api/submissions/{pk}/" for pk in pks],
        *[
            f"/api/challenges/lad/leaderboard/?sequence={s.sequence}"
            for s in BoardSnapshot.objects.filter(task=task, split="public")
        ],
    ):
        response = client.get(path, HTTP_ACCEPT="text/csv" if "csv" in path else "*/*")
        out[path] = response.content.decode(errors="replace")
    return out


def _site_texts(web: Client, task: Task, pks: list[int], *, member: bool) -> dict[str, str]:
    paths = [
        reverse("challenge", args=["lad"]),
        reverse("board_download", args=["lad", "main", "csv"]),
        reverse("board_download", args=["lad", "main", "json"]),
        reverse("ranks", args=["lad", "main"]),
        reverse("ranks_png", args=["lad", "main"]),
        reverse("robustness", args=["lad", "main"]),
        reverse("report", args=["lad"]),
        reverse("report", args=["lad"]) + "?format=tex",
        reverse("report", args=["lad"]) + "?format=html",
        reverse("pairwise", args=["lad", "main"]),
        reverse("summary", args=["lad"]),
        reverse("cd_svg", args=["lad"]),
        reverse("shakeup", args=["lad", "main"]),
        reverse("shakeup_csv", args=["lad", "main"]),
        reverse("shakeup_svg", args=["lad", "main"]),
        *[reverse("entry", args=["lad", "main", pk]) for pk in pks],
        *[
            reverse("challenge", args=["lad"]) + f"?sequence={s.sequence}"
            for s in BoardSnapshot.objects.filter(task=task, split="public")
        ],
    ]
    if member:
        paths += [reverse("my_submissions", args=["lad"])]
        for pk in pks:
            paths += [reverse("submission", args=[pk]), reverse("submission_status", args=[pk])]
    return {p: htmllib.unescape(web.get(p).content.decode(errors="replace")) for p in paths}


def test_the_ladder_releases_a_new_score_only_above_the_step_and_says_why(board) -> None:
    _organizer, alice, _bob, task, pks, _bob_pk, exact, _hidden = board
    releases = list(LadderRelease.objects.filter(task=task, submission__team__name="alice").order_by("pk"))
    assert [r.moved for r in releases] == [True, False]
    assert [r.shown for r in releases] == [0.7, 0.7]  # the second did not beat 0.70 + 0.05
    assert exact[pks[1]] > exact[pks[0]]  # although it was better
    mine = client_for(alice).get(f"/api/submissions/{pks[1]}/").json()["scores"]
    (public,) = [s for s in mine if s["split"] == "public"]
    assert public["value"] is None and public["ladder"]["shown"] == 0.7 and public["ladder"]["moved"] is False
    assert public["ladder"]["message"].startswith(
        "Not shown: your new submission did not beat your shown score by more than the Ladder's step "
        "(a fixed step of 0.05), so the board shows your previous score, 0.700."
    )
    rows = client_for(None).get("/api/challenges/lad/leaderboard/").json()["rows"]
    # the row names alice's counted entry under the default "latest" rule, "second" (issue 22, A9), and
    # says the value is first's: the Ladder's release, not second's unreleased score
    assert [(r["team"], r["value"], r["rank"], r["name"], r["shown_from"]) for r in rows] == [
        ("alice", 0.7, 1, "second", "first"),
        ("bob", 0.6, 2, "bob", None),
    ]
    assert all(set(r) == set(LADDER_COLUMNS) for r in rows)  # no interval, difference, p-value, rank set

    # a third submission that beats the shown value by more than the step moves the board
    ids, labels, split = _truth()
    third = _submit(alice, _file(ids, labels, split, 180, 150), "third")  # 0.8867 -> 0.90
    release = LadderRelease.objects.get(submission_id=third)
    assert release.moved and release.shown == 0.9
    assert "beat your shown score by more than the Ladder's step" in release.message
    rows = client_for(None).get("/api/challenges/lad/leaderboard/").json()["rows"]
    assert rows[0]["value"] == 0.9 and rows[0]["submission_id"] == third

    web = Client()
    web.force_login(alice)
    page = htmllib.unescape(web.get(reverse("submission", args=[pks[1]])).content.decode())
    assert "did not beat your shown score by more than the Ladder's step" in page
    mine_page = htmllib.unescape(web.get(reverse("my_submissions", args=["lad"])).content.decode())
    assert "so the board shows your previous score, 0.700" in mine_page


def test_no_channel_gives_away_more_than_the_board_mode_releases(any_mode) -> None:
    """Every channel, for every mode, for a participant, another participant and an anonymous reader."""
    _mode, organizer, alice, bob, task, pks, bob_pk, hidden = any_mode
    for who, visible in ((alice, pks), (bob, [bob_pk]), (None, [])):
        for path, text in _api_texts(client_for(who), task, visible).items():
            assert not _leaks(text, hidden), (who, path, _leaks(text, hidden))
        web = Client()
        if who is not None:
            web.force_login(who)
        for path, text in _site_texts(web, task, visible, member=who is not None).items():
            assert not _leaks(text, hidden), (who, path, _leaks(text, hidden))
    # The read cache answers anonymous readers as anonymous readers, also after an organizer's visit.
    organizer_web = Client()
    organizer_web.force_login(organizer)
    assert organizer_web.get(reverse("challenge", args=["lad"])).status_code == 200
    for _ in range(2):
        assert not _leaks(Client().get(reverse("challenge", args=["lad"])).content.decode(), hidden)


def test_the_ladder_refuses_every_page_of_exact_scores_and_says_why(board) -> None:
    _organizer, alice, bob, task, pks, bob_pk, exact, hidden = board
    for who, visible in ((alice, pks), (bob, [bob_pk]), (None, [])):
        for path, text in _api_texts(client_for(who), task, visible).items():
            assert not _leaks(text, hidden), (who, path, _leaks(text, hidden))
        web = Client()
        if who is not None:
            web.force_login(who)
        for path, text in _site_texts(web, task, visible, member=who is not None).items():
            assert not _leaks(text, hidden), (who, path, _leaks(text, hidden))

    # The refusals say why, in words; the board's downloads carry the released columns only.
    web = Client()
    web.force_login(alice)
    for name, args in (
        ("ranks", ["lad", "main"]),
        ("pairwise", ["lad", "main"]),
        ("summary", ["lad"]),
        ("entry", ["lad", "main", pks[0]]),
    ):
        response = web.get(reverse(name, args=args))
        assert response.status_code == 404 and "Not available under the Ladder" in response.content.decode()
    assert client_for(alice).get("/api/challenges/lad/summary/").json()["message"] == NOT_AVAILABLE
    assert client_for(alice).get("/api/challenges/lad/shakeup/").status_code == 404  # before the reveal
    header = next(
        csv.reader(
            io.StringIO(web.get(reverse("board_download", args=["lad", "main", "csv"])).content.decode())
        )
    )
    assert header == LADDER_COLUMNS
    api_csv = client_for(alice).get("/api/challenges/lad/leaderboard/?format=csv", HTTP_ACCEPT="text/csv")
    assert next(csv.reader(io.StringIO(api_csv.content.decode()))) == LADDER_COLUMNS
    download = json.loads(web.get(reverse("board_download", args=["lad", "main", "json"])).content)
    assert all(set(r) == set(LADDER_COLUMNS) for r in download["rows"])

    # The read cache answers anonymous readers with the Ladder board, also after an organizer's visit.
    organizer_web = Client()
    organizer_web.force_login(board[0])
    assert f"{exact[pks[1]]:.3f}" in organizer_web.get(reverse("challenge", args=["lad"])).content.decode()
    for _ in range(2):
        text = Client().get(reverse("challenge", args=["lad"])).content.decode()
        assert not _leaks(text, hidden) and "0.700" in text


def test_organizers_see_everything_and_the_reveal_shows_everything(board) -> None:
    organizer, alice, _bob, task, pks, _bob_pk, exact, _hidden = board
    full = client_for(organizer).get(f"/api/submissions/{pks[1]}/").json()["scores"]
    (public,) = [s for s in full if s["split"] == "public"]
    assert public["value"] == exact[pks[1]] and public["ladder"] is None
    rows = client_for(organizer).get("/api/challenges/lad/leaderboard/").json()["rows"]
    assert all("low" in r for r in rows) and any(r["value"] == round(exact[pks[1]], 3) for r in rows)
    web = Client()
    web.force_login(organizer)
    assert web.get(reverse("pairwise", args=["lad", "main"])).status_code == 200
    assert web.get(reverse("ranks", args=["lad", "main"])).status_code == 200

    challenge_reveal_private(challenge=task.challenge, while_open=True)
    private = client_for(alice).get("/api/challenges/lad/leaderboard/?split=private").json()["rows"]
    assert all(r["low"] is not None and r["high"] is not None for r in private)
    mine = client_for(alice).get(f"/api/submissions/{pks[1]}/").json()["scores"]
    assert {s["split"]: s["value"] for s in mine} == {
        "public": round(exact[pks[1]], 3),
        "private": round(Score.objects.get(submission_id=pks[1], split="private").value, 3),
    }
    public_rows = client_for(alice).get("/api/challenges/lad/leaderboard/").json()["rows"]
    assert all("low" in r for r in public_rows)  # the final boards are revealed: the Ladder has ended
    assert client_for(alice).get("/api/challenges/lad/shakeup/").status_code == 200


def test_the_mode_is_a_task_setting_frozen_once_submissions_exist(transactional_db) -> None:
    organizer = user("org")
    alice = user("alice")
    org = client_for(organizer)
    assert (
        org.post(
            "/api/challenges/", {"slug": "lad", "title": "L", "resamples": 200}, format="json"
        ).status_code
        == 201
    )
    ids, labels, _split = _truth(40)
    truth = csv_bytes("id,label", list(zip(ids, labels, strict=True)))
    created = org.post(
        "/api/challenges/lad/tasks/",
        {"slug": "main", "title": "Main", "metric": "accuracy", "labels": ",".join(LABELS),
         "public_mode": "ladder-free", "truth": file("t.csv", truth)},
        format="multipart",
    )  # fmt: skip
    assert created.status_code == 201, created.content
    body = created.json()
    assert (body["public_mode"], body["ladder_z"], body["ladder_eta"]) == ("ladder-free", 3.0, None)

    patch = org.patch("/api/challenges/lad/tasks/main/", {"public_mode": "ladder"}, format="json")
    assert patch.status_code == 400 and patch.json()["extra"]["field"] == "ladder_eta"
    patch = org.patch(
        "/api/challenges/lad/tasks/main/", {"public_mode": "ladder", "ladder_eta": 0.02}, format="json"
    )
    assert patch.status_code == 200 and patch.json()["ladder_eta"] == 0.02
    # a PATCH that leaves the mode out keeps it (only the step changes)
    patch = org.patch("/api/challenges/lad/tasks/main/", {"ladder_eta": 0.03}, format="json")
    assert patch.status_code == 200, patch.content
    assert (patch.json()["public_mode"], patch.json()["ladder_eta"]) == ("ladder", 0.03)
    patch = org.patch(
        "/api/challenges/lad/tasks/main/", {"public_mode": "ladder", "ladder_eta": 0.02}, format="json"
    )
    assert patch.status_code == 200
    assert client_for(alice).patch(
        "/api/challenges/lad/tasks/main/", {"public_mode": "plain"}, format="json"
    ).status_code in (403, 404)

    _submit(alice, csv_bytes("id,prediction", list(zip(ids, labels, strict=True))), "s")
    frozen = org.patch("/api/challenges/lad/tasks/main/", {"public_mode": "plain"}, format="json")
    assert (
        frozen.status_code == 409
        and "cannot change once the task has submissions" in frozen.json()["message"]
    )
    assert Task.objects.get(slug="main").public_mode == "ladder"
    same = org.patch(
        "/api/challenges/lad/tasks/main/", {"public_mode": "ladder", "ladder_eta": 0.02}, format="json"
    )
    assert same.status_code == 200  # setting what is already set changes nothing

    # the organizer's web form sets it at creation
    web = Client()
    web.force_login(organizer)
    response = web.post(
        reverse("task_new", args=["lad"]),
        {"title": "Second", "slug": "second", "metric": "accuracy", "labels": ",".join(LABELS),
         "public_mode": "ladder", "ladder_eta": "0.01", "truth": SimpleUploadedFile("t.csv", truth)},
    )  # fmt: skip
    assert response.status_code == 302, response.content.decode()[:2000]
    second = Task.objects.get(slug="second")
    assert (second.public_mode, second.ladder_eta) == ("ladder", 0.01)


def test_the_parameter_free_ladder_moves_only_beyond_z_paired_standard_errors(transactional_db) -> None:
    _organizer, task, (ids, labels, split) = _ladder_task("ladder-free")  # default z = 3
    assert task.ladder_z == 3.0
    alice = user("alice")
    first = _submit(alice, _file(ids, labels, split, 140, 140), "first")
    close = _submit(alice, _file(ids, labels, split, 143, 140), "close")  # +3 items: under 3 paired SEs
    far = _submit(alice, _file(ids, labels, split, 190, 140), "far")  # +50 items: far beyond
    moved = {r.submission_id: r for r in LadderRelease.objects.filter(task=task)}
    assert moved[first].moved and not moved[close].moved and moved[far].moved
    assert moved[close].shown == moved[first].shown == round(140 / N_PUBLIC, 3)
    assert moved[close].threshold is not None and moved[close].threshold > 3 / N_PUBLIC
    text = client_for(alice).get(f"/api/submissions/{close}/").content.decode()
    assert "3 standard errors of the paired difference" in text
    assert not _leaks(text, _forms(143 / N_PUBLIC) | _forms(moved[close].threshold))


def test_lb_shows_the_release_and_never_the_exact_score(
    live_server, transactional_db, settings, tmp_path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    from click.testing import CliRunner

    from leaderboard.cli.main import cli
    from tests.service.api_support import PASSWORD

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("LB_TOKEN", raising=False)
    monkeypatch.setenv("LB_HOST", live_server.url)
    _organizer, _task, (ids, labels, split) = _ladder_task("ladder", ladder_eta=ETA)
    user("alice")

    def lb(*args: str, input: str | None = None) -> str:
        result = CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result.output

    lb("login", "--username", "alice", input=f"{PASSWORD}\n")
    outputs = []
    for name, right in (("first", 140), ("second", 146)):
        path = tmp_path / f"{name}.csv"
        path.write_bytes(_file(ids, labels, split, right, 150))
        outputs.append(lb("submit", "lad", str(path), "--name", name, "--wait"))
    second = Score.objects.get(submission__name="second", split="public")
    assert "did not beat your shown score by more than the Ladder's step" in outputs[1]
    assert "board shows 0.7" in outputs[1]
    outputs += [
        lb("status", str(second.submission_id)),
        lb("status", str(second.submission_id), "--format", "json"),
        lb("leaderboard", "lad"),
        lb("leaderboard", "lad", "--format", "json"),
        lb("leaderboard", "lad", "--format", "csv"),
    ]
    first = Score.objects.get(submission__name="first", split="public")
    hidden = _forms(second.value) | _forms(first.value)
    for text in outputs:
        assert not _leaks(text, hidden), (text, _leaks(text, hidden))

    # an organizer sets the mode with ``lb add-task``
    lb("logout")
    lb("login", "--username", "org", input=f"{PASSWORD}\n")
    truth = tmp_path / "truth.csv"
    truth.write_bytes(csv_bytes("id,label", list(zip(ids, labels, strict=True))))
    lb("add-task", "lad", str(truth), "--slug", "second", "--metric", "accuracy", "--labels", ",".join(LABELS),
       "--public-mode", "ladder", "--ladder-eta", "0.02")  # fmt: skip
    second_task = Task.objects.get(slug="second")
    assert (second_task.public_mode, second_task.ladder_eta) == ("ladder", 0.02)


def test_the_ladder_row_names_the_entry_the_team_selected(transactional_db) -> None:
    """The walk read 'logreg' on the Ladder board although the team had selected knn-copy (issue 22, A9):
    under the "selected" rule the row names the selected entry; the value stays the Ladder's release (the
    older submission's shown score), the row says whose it is, and nothing unreleased leaves."""
    _organizer, task, (ids, labels, split) = _ladder_task("ladder", ladder_eta=ETA)
    task.challenge.entry_selection = "selected"
    task.challenge.save(update_fields=["entry_selection"])
    alice, bob = user("alice"), user("bob")
    first = _submit(alice, _file(ids, labels, split, 140, 150), "first")  # 0.6897: shown as 0.70
    second = _submit(alice, _file(ids, labels, split, 146, 120), "second")  # 0.7192: not released
    response = client_for(alice).post(f"/api/submissions/{second}/select/")
    assert response.status_code == 200, response.content
    values = [s.value for s in Score.objects.filter(task=task)]
    hidden = set().union(*(_forms(v) for v in values)) - {"0.700"}
    web = Client()
    web.force_login(bob)
    page = htmllib.unescape(web.get(reverse("challenge", args=["lad"])).content.decode())
    api = client_for(bob).get("/api/challenges/lad/leaderboard/").json()
    (row,) = api["rows"]
    assert (row["name"], row["submission_id"], row["value"], row["shown_from"]) == (
        "second",
        second,
        0.7,
        "first",
    )
    assert f'data-submission="{second}"' in page and f'data-submission="{first}"' not in page
    assert "the value is first's, the last score the Ladder released" in page
    csv_text = web.get(reverse("board_download", args=["lad", "main", "csv"])).content.decode()
    (csv_row,) = list(csv.DictReader(io.StringIO(csv_text)))
    assert (csv_row["name"], csv_row["shown_from"]) == ("second", "first")
    for text in (page, json.dumps(api), csv_text):
        assert not _leaks(text, hidden), _leaks(text, hidden)


@pytest.mark.parametrize("rule", ["latest", "selected", "best"])
def test_the_ladder_row_names_the_counted_entry_under_every_rule(transactional_db, rule: str) -> None:
    """A9 under the other rules: the row names the entry the exact board counts (under "latest", and under
    "selected" for a team that selected nothing: its latest scored submission), with ``shown_from`` naming
    the submission whose released score the value is. Under "best" the row names the released submission:
    the team's best exact score was not released, and naming its submission would tell that it is higher."""
    _organizer, task, (ids, labels, split) = _ladder_task("ladder", ladder_eta=ETA)
    task.challenge.entry_selection = rule
    task.challenge.save(update_fields=["entry_selection"])
    alice = user("alice")
    first = _submit(alice, _file(ids, labels, split, 140, 150), "first")  # 0.6897: shown as 0.70
    second = _submit(alice, _file(ids, labels, split, 146, 120), "second")  # 0.7192: not released
    (row,) = client_for(user("bob")).get("/api/challenges/lad/leaderboard/").json()["rows"]
    if rule == "best":
        assert (row["name"], row["submission_id"], row["shown_from"]) == ("first", first, None)
    else:  # the exact board counts "second"; the value is still first's released 0.70
        assert (row["name"], row["submission_id"], row["shown_from"]) == ("second", second, "first")
    assert row["value"] == 0.7
    counted = BoardSnapshot.objects.filter(task=task, split="public").latest("sequence").rows
    if rule != "best":
        assert [r["submission_id"] for r in counted] == [second]  # the same entry as the exact board's
