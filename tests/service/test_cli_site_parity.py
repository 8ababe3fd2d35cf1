"""``lb`` does what the site does, for a participant and an organizer, with the same warnings (issue 22):
create and update a challenge with every setting, submit several runs, list my submissions, select the
counted entry, cancel, replace a task's labels, re-score (asks first), reveal (an open challenge needs
``--close`` or ``--while-open``), read the notices. Against a live server, as tests/service/test_cli.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rest_framework.authtoken.models import Token

from leaderboard.accounts.models import User
from leaderboard.challenges.models import Challenge, Task
from leaderboard.notifications.models import Notice
from leaderboard.scoring.models import RescoreJob, Score
from leaderboard.submissions import ports as submission_ports
from leaderboard.submissions.models import Submission
from tests.service.factories import predictions
from tests.service.test_cli import env, lb, login_alice

__all__ = ["env"]  # the fixture, shared with test_cli.py


def as_user(monkeypatch: pytest.MonkeyPatch, username: str) -> None:
    user = User.objects.get(username=username)
    monkeypatch.setenv("LB_TOKEN", Token.objects.get_or_create(user=user)[0].key)


def write(env: dict[str, Any], name: str, accuracy: float, seed: int) -> str:
    path: Path = env["tmp"] / name
    path.write_bytes(predictions(env["ids"], env["truth"], accuracy, seed))
    return str(path)


def split_truth(env: dict[str, Any], name: str = "split.csv", flip: int = 0) -> str:
    """The env's labels with a split column (every other item private); ``flip`` labels changed."""
    truth = list(env["truth"])
    for k in range(flip):
        truth[k] = truth[k + 1] if truth[k + 1] != truth[k] else truth[k + 2]
    parts = ["private" if k % 2 else "public" for k in range(len(truth))]
    rows = "".join(f"{i},{t},{p}\n" for i, t, p in zip(env["ids"], truth, parts, strict=True))
    path: Path = env["tmp"] / name
    path.write_text("id,label,part\n" + rows)
    return str(path)


def test_an_organizer_creates_and_updates_a_challenge_with_every_setting(env, monkeypatch) -> None:
    as_user(monkeypatch, "org")
    r = lb("create-challenge", "--title", "Held out", "--slug", "held", "--description", "About it",
           "--rules", "Be fair", "--start", "2026-01-01T00:00:00Z", "--end", "2030-01-01T00:00:00Z",
           "--visibility", "unlisted", "--daily-limit", "3", "--total-limit", "30",
           "--entry-selection", "selected", "--confidence", "0.9", "--resamples", "300",
           "--interval-method", "percentile", "--correction", "bh", "--seed", "7",
           "--requires-approval")  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "Challenge 'held' created; you organize it (unlisted, open, ends: 2030-01-01" in r.output
    c = Challenge.objects.get(slug="held")
    assert (c.title, c.description, c.rules, c.visibility, c.daily_limit, c.total_limit) == (
        "Held out", "About it", "Be fair", "unlisted", 3, 30,
    )  # fmt: skip
    assert (c.entry_selection, c.confidence, c.resamples, c.interval_method, c.correction, c.seed) == (
        "selected", 0.9, 300, "percentile", "bh", 7,
    )  # fmt: skip
    assert c.requires_approval and c.organizers.filter(username="org").exists()

    bad = lb("create-challenge", "--title", "X", "--confidence", "0.2")
    assert bad.exit_code == 2 and "0.2 is not in the range 0.5<=x<=0.999" in bad.output  # before any request
    assert lb("create-challenge").exit_code == 2  # no title

    r = lb("update-challenge", "held", "--daily-limit", "4", "--no-requires-approval", "--end", "none")
    assert r.exit_code == 0, r.output
    c.refresh_from_db()
    assert (c.daily_limit, c.requires_approval, c.end) == (4, False, None)
    assert "Changed: daily_limit=4, requires_approval=no, end=none" in r.output
    assert lb("update-challenge", "held").exit_code == 2  # nothing to change

    # The statistics settings are frozen once a submission was scored: the API's 409, printed.
    login_alice()
    assert lb("submit", "toy", write(env, "a.csv", 0.8, 1), "--wait").exit_code == 0
    as_user(monkeypatch, "org")
    frozen = lb("update-challenge", "toy", "--resamples", "400")
    assert frozen.exit_code == 1 and "Error:" in frozen.output

    as_user(monkeypatch, "alice")
    refused = lb("update-challenge", "held", "--daily-limit", "9")
    assert refused.exit_code == 1  # not an organizer


def test_an_organizer_sets_a_tasks_board_mode_replaces_labels_and_rescores(env, monkeypatch) -> None:
    as_user(monkeypatch, "org")
    r = lb(
        "add-task",
        "toy",
        split_truth(env),
        "--slug",
        "final",
        "--metric",
        "accuracy",
        "--split-column",
        "part",
    )
    assert r.exit_code == 0, r.output
    r = lb("submit", "toy", "-t", "main", write(env, "base.csv", 0.5, 4), "-n", "majority", "--baseline")
    assert r.exit_code == 0 and Submission.objects.get(name="majority").is_baseline, r.output
    r = lb("update-task", "toy", "final", "--public-mode", "ladder", "--ladder-eta", "0.02")
    assert r.exit_code == 0, r.output
    task = Task.objects.get(slug="final")
    assert (task.public_mode, task.ladder_eta) == ("ladder", 0.02)

    as_user(monkeypatch, "alice")
    assert lb("submit", "toy", "-t", "final", write(env, "a.csv", 0.8, 1), "--wait").exit_code == 0
    as_user(monkeypatch, "org")
    frozen = lb("update-task", "toy", "final", "--public-mode", "plain")
    assert frozen.exit_code == 1  # frozen once the task has submissions, as on the site

    r = lb("replace-labels", "toy", "final", split_truth(env, "fixed.csv", flip=5), "--split-column", "part")
    assert r.exit_code == 0, r.output
    assert "Labels of 'final' replaced (240 items)." in r.output
    assert "keep the old labels until you re-score the task: lb rescore toy final" in r.output
    task.refresh_from_db()
    assert task.truth_version == 2

    # Re-score asks first, like the site's confirmation box; "no" changes nothing.
    no = lb("rescore", "toy", "final", input="n\n")
    assert no.exit_code == 2 and "Score every submission of 'final' again" in no.output
    assert not RescoreJob.objects.exists()
    yes = lb("rescore", "toy", "final", "--yes", "--wait", "--interval", "0.2")
    assert yes.exit_code == 0, yes.output
    assert "re-scored" in yes.output
    assert set(Score.objects.filter(task=task).values_list("truth_version", flat=True)) == {2}


def test_reveal_asks_close_or_while_open_on_an_open_challenge(env, monkeypatch) -> None:
    as_user(monkeypatch, "org")
    assert lb("add-task", "toy", split_truth(env), "--slug", "final", "--metric", "accuracy",
              "--split-column", "part").exit_code == 0  # fmt: skip
    refused = lb("reveal", "toy", "--yes")
    assert refused.exit_code == 2
    assert "Warning: The challenge is still open (it has no end). After the reveal, every new submission" in (
        refused.output
    )
    assert "say --close (close submissions now, then reveal) or --while-open." in refused.output
    assert lb("reveal", "toy", "--close", "--while-open", "--yes").exit_code == 2
    unconfirmed = lb("reveal", "toy", "--while-open", input="n\n")
    assert unconfirmed.exit_code == 2
    assert not Challenge.objects.get(slug="toy").private_revealed

    r = lb("reveal", "toy", "--while-open", "--yes")
    assert r.exit_code == 0, r.output
    c = Challenge.objects.get(slug="toy")
    assert c.private_revealed and c.is_open
    assert "already revealed" in lb("reveal", "toy", "--yes").output

    r = lb("create-challenge", "--title", "Second", "--slug", "second")
    assert r.exit_code == 0
    closed = lb("reveal", "second", "--close", "--yes")
    assert closed.exit_code == 0 and "Submissions are closed." in closed.output
    second = Challenge.objects.get(slug="second")
    assert second.private_revealed and not second.is_open


def test_a_participant_submits_runs_lists_selects_cancels_and_reads_notices(env, monkeypatch) -> None:
    as_user(monkeypatch, "org")
    assert lb("update-challenge", "toy", "--entry-selection", "selected").exit_code == 0
    login_alice()
    monkeypatch.delenv("LB_TOKEN")
    runs = [write(env, f"seed{k}.csv", 0.8, k) for k in range(3)]
    r = lb("submit", "toy", *runs, "-n", "three seeds", "--wait")
    assert r.exit_code == 0, r.output
    first = Submission.objects.get(name="three seeds")
    assert first.files.count() == 3 and Score.objects.get(submission=first).n_runs == 3
    r = lb("submit", "toy", write(env, "one.csv", 0.7, 9), "-n", "one run", "--wait")
    assert r.exit_code == 0, r.output
    second = Submission.objects.get(name="one run")

    listing = lb("submissions", "toy")
    assert listing.exit_code == 0, listing.output
    lines = [line.split() for line in listing.output.splitlines()]
    assert lines[2][:4] == [str(second.pk), "one", "run", "scored"]
    assert lines[3][:5] == [str(first.pk), "three", "seeds", "scored", "main"]
    assert "main (public) 0." in listing.output.splitlines()[3] and "UTC" in lines[3]
    assert lb("submissions", "toy", "--status", "failed").output.strip() == "No submissions."

    r = lb("select", str(first.pk))
    assert (
        r.exit_code == 0
        and f"Submission #{first.pk} (three seeds) now counts as your team's entry." in r.output
    )
    first.refresh_from_db()
    assert first.selected
    assert lb("submissions", "toy").output.splitlines()[3].split()[4] == "yes"  # the selected column

    # Cancel: a submission still queued (no worker takes it here), then one already scored (409).
    monkeypatch.setattr(submission_ports.submission_dispatch, "_impl", lambda **_: None)
    assert lb("submit", "toy", write(env, "late.csv", 0.6, 3), "-n", "late").exit_code == 0
    late = Submission.objects.get(name="late")
    r = lb("cancel", str(late.pk))
    assert r.exit_code == 0 and f"Submission #{late.pk} (late) cancelled" in r.output
    assert lb("cancel", str(first.pk)).exit_code == 1

    shown = lb("notices")
    assert shown.exit_code == 0, shown.output
    assert "* " in shown.output and f"Submission #{first.pk} scored: Toy toy" in shown.output
    assert f"/submissions/{first.pk}/" in shown.output
    r = lb("notices", "--mark-read")
    assert r.exit_code == 0 and "2 marked as read." in r.output
    assert not Notice.objects.filter(user__username="alice", read_at__isnull=True).exists()
    assert lb("notices").output.strip() == "No unread notices."
    assert f"Submission #{second.pk} scored" in lb("notices", "--all").output

    # the account page's opt-outs, from the command line (issue 22: the CLI does what the site does)
    from leaderboard.notifications.services import preference_of

    r = lb("notices", "--email", "off")
    assert r.exit_code == 0 and "Notices saved: on the site." in r.output, r.output
    alice = User.objects.get(username="alice")
    assert (preference_of(alice).email, preference_of(alice).site) == (False, True)
    r = lb("notices", "--site", "off")
    assert r.exit_code == 0 and "Notices saved: none." in r.output, r.output
    assert (preference_of(alice).email, preference_of(alice).site) == (False, False)
    r = lb("notices", "--email", "on", "--site", "on")
    assert "Notices saved: by e-mail, on the site." in r.output, r.output


def test_teams_and_approved_participation_from_the_command_line(env, monkeypatch) -> None:
    from tests.service.factories import user

    user("bob")
    as_user(monkeypatch, "org")
    assert lb("update-challenge", "toy", "--requires-approval").exit_code == 0
    as_user(monkeypatch, "alice")
    before = lb("submit", "toy", write(env, "a.csv", 0.8, 1))
    assert before.exit_code == 1  # not approved yet: the API's refusal
    r = lb("participate", "toy")
    assert r.exit_code == 0 and "you may submit once an organizer approves you" in r.output
    as_user(monkeypatch, "org")
    waiting = lb("participants", "toy", "--waiting")
    assert waiting.exit_code == 0 and "alice" in waiting.output, waiting.output
    assert lb("approve", "toy", "alice").output.strip() == "alice is approved and may submit."
    assert lb("approve", "toy", "bob").exit_code == 0
    assert lb("participants", "toy", "--waiting").output.strip() == "No one has asked yet."

    as_user(monkeypatch, "alice")
    founded = lb("team", "toy", "--found", "Owls")
    assert founded.exit_code == 0 and "Team 'Owls': alice." in founded.output, founded.output
    code = founded.output.rsplit(": ", 1)[1].strip()
    as_user(monkeypatch, "bob")
    joined = lb("team", "toy", "--join", code)
    assert joined.exit_code == 0 and "Team 'Owls': alice, bob." in joined.output, joined.output
    assert lb("team", "toy", "--join", "not-a-code").exit_code == 1
    assert lb("submit", "toy", write(env, "b.csv", 0.8, 2), "--wait").exit_code == 0
    as_user(monkeypatch, "org")
    assert lb("approve", "toy", "bob", "--revoke").output.strip() == "bob may no longer submit."


def test_one_submission_carries_files_of_several_tasks(env, monkeypatch) -> None:
    """The site's form takes every task's files in one submission; so does ``lb submit --task-file``."""
    as_user(monkeypatch, "org")
    r = lb(
        "add-task",
        "toy",
        split_truth(env),
        "--slug",
        "second",
        "--metric",
        "accuracy",
        "--split-column",
        "part",
    )
    assert r.exit_code == 0, r.output
    as_user(monkeypatch, "alice")
    a, b, c = (write(env, f"{k}.csv", 0.8, k) for k in range(3))
    several = lb("submit", "toy", a)
    assert several.exit_code == 2 and "--task-file TASK FILE" in several.output
    assert lb("submit", "toy").exit_code == 2
    r = lb("submit", "toy", "--task-file", "main", a, "--task-file", "second", b, "--task-file", "second", c,
           "-n", "both", "--wait")  # fmt: skip
    assert r.exit_code == 0, r.output
    sub = Submission.objects.get(name="both")
    assert sorted((f.task.slug, f.run) for f in sub.files.all()) == [
        ("main", 0),
        ("second", 0),
        ("second", 1),
    ]
    assert "main (public):" in r.output and "second (public):" in r.output
