"""``lb add-task`` and ``lb submit`` with a text task, against a live server (issue 20)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import sacrebleu
from click.testing import CliRunner, Result
from rest_framework.authtoken.models import Token

from leaderboard.accounts.models import User
from leaderboard.cli.main import cli
from leaderboard.rankings.models import BoardSnapshot
from tests.service.api_support import FAST_HASHERS, client_for, reset_throttles
from tests.service.factories import user
from tests.service.test_text_tasks import GOOD, REFS, WEAK, lines


@pytest.fixture
def env(live_server, transactional_db, settings, tmp_path: Path, monkeypatch) -> Iterator[Path]:
    settings.PASSWORD_HASHERS = FAST_HASHERS
    reset_throttles()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("LB_HOST", live_server.url)
    org = client_for(user("org"))
    r = org.post("/api/challenges/", {"slug": "mt", "title": "MT", "resamples": 200}, format="json")
    assert r.status_code == 201, r.content
    user("alice")
    user("bob")
    yield tmp_path
    reset_throttles()


def lb(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_lb_adds_a_text_task_and_submits_to_it(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (env / "ref.txt").write_bytes(lines(REFS))
    (env / "good.txt").write_bytes(lines(GOOD))
    (env / "weak.txt").write_bytes(lines(WEAK))
    (env / "short.txt").write_bytes(lines(GOOD[:2]))
    monkeypatch.setenv("LB_TOKEN", Token.objects.create(user=User.objects.get(username="org")).key)
    r = lb(
        "add-task",
        "mt",
        str(env / "ref.txt"),
        "--slug",
        "de",
        "--metric",
        "ter",
        "--secondary-metrics",
        "chrf,bleu",
    )
    assert r.exit_code == 0 and "(text_corpus, ter, 8 items)" in r.output, r.output
    monkeypatch.setenv("LB_TOKEN", Token.objects.create(user=User.objects.get(username="alice")).key)
    bad = lb("submit", "mt", "--task", "de", str(env / "short.txt"))
    assert (
        bad.exit_code == 1 and "short.txt:3: 2 lines, but the truth of task 'de' has 8 segments" in bad.output
    )
    for name, who in (("good", "alice"), ("weak", "bob")):
        monkeypatch.setenv(
            "LB_TOKEN", Token.objects.get_or_create(user=User.objects.get(username=who))[0].key
        )
        r = lb("submit", "mt", "--task", "de", str(env / f"{name}.txt"), "--wait", "--name", name)
        assert r.exit_code == 0, r.output
    snap = BoardSnapshot.objects.filter(task__slug="de").order_by("-sequence").first()
    assert snap is not None
    # TER is lower-is-better: the good system (lower TER) ranks first.
    assert [row["name"] for row in snap.rows] == ["good", "weak"]
    assert snap.rows[0]["value"] == pytest.approx(sacrebleu.TER().corpus_score(GOOD, [REFS]).score, abs=1e-9)
    # the secondary metrics named with --secondary-metrics, in that order, and their label in `lb leaderboard`
    assert [f["metric"] for f in snap.rows[0]["secondary"]] == ["chrf", "bleu"]
    shown = lb("leaderboard", "mt", "--task", "de")
    assert (
        "Secondary metrics: chrf, bleu; p-values vs the leader adjusted across 2 metrics (Holm); primary: ter"
        in shown.output
    )
