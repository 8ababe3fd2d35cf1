"""What a reader may read of a board must not change when the code behind it is rearranged (issue 19).

A deterministic small challenge is built three times, with a plain public board, a Ladder board (fixed
step) and a parameter-free Ladder board, each with a private split. Every board download (the site's ``board.csv`` and
``board.json``, the API's JSON and ``?format=csv``), the API's submission, summary and snapshot answers are
read by an anonymous reader, a participant and an organizer, before and after the reveal, and compared
with the texts the code wrote when the test was made (``tests/service/golden/boards.json``). Only what a
run cannot reproduce is masked: timestamps (wall clock), the hash of the inputs (it covers the submissions' times) and the
``signature``'s version of the library.

Regenerate (only when a change of what readers see is intended, and say why in the commit):
``GOLDEN_WRITE=1 PYTHONPATH=$PWD .venv/bin/python -m pytest tests/service/test_golden_boards.py``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.throttling import SimpleRateThrottle

from leaderboard.challenges.services import challenge_create, challenge_reveal_private, task_create
from tests.service.api_support import FAST_HASHERS, client_for, file, reset_throttles
from tests.service.factories import LABELS, csv_bytes, user

GOLDEN = Path(__file__).parent / "golden" / "boards.json"
RATES = {
    **SimpleRateThrottle.THROTTLE_RATES,
    "submit": "1000/min",
    "anon_read": "1000/min",
    "token": "1000/min",
}
N_PUBLIC = 61
#: (team, name, right on public items, right on private items)
ENTRIES = [
    ("alice", "first", 40, 44),
    ("alice", "second", 43, 38),  # better than "first" by less than the Ladder's step
    ("bob", "bob", 35, 41),
    ("carol", "carol", 50, 30),  # beats the step
]
TIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?")
VERSION = re.compile(r'("engine_version": ?)"[^"]*"')
INPUTS = re.compile(r'("inputs": ?)"[0-9a-f]{64}"')


@pytest.fixture(autouse=True)
def _fresh(settings, monkeypatch) -> Iterator[None]:
    settings.PASSWORD_HASHERS = FAST_HASHERS
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", dict(RATES))
    reset_throttles()
    yield
    reset_throttles()


def _truth() -> tuple[list[str], list[str], list[str]]:
    rng = np.random.default_rng(11)
    n = 2 * N_PUBLIC
    ids = [f"item-{i:04d}" for i in range(n)]
    labels = [LABELS[k] for k in rng.integers(0, len(LABELS), size=n)]
    split = ["public" if i % 2 == 0 else "private" for i in range(n)]
    return ids, labels, split


def _file(truth: tuple[list[str], list[str], list[str]], right_public: int, right_private: int) -> bytes:
    rows, seen = [], {"public": 0, "private": 0}
    for i, t, s in zip(*truth, strict=True):
        right = seen[s] < (right_public if s == "public" else right_private)
        seen[s] += 1
        rows.append((i, t if right else LABELS[(LABELS.index(t) + 1) % len(LABELS)]))
    return csv_bytes("id,prediction", rows)


def _mask(text: str) -> str:
    text = INPUTS.sub(r'\1"<hash>"', TIME.sub("<time>", text))
    return _canonical(VERSION.sub(r'\1"<version>"', text))


def _canonical(text: str) -> str:
    """A JSON body with its keys sorted: PostgreSQL's jsonb keeps no key order (its order is by key length),
    SQLite keeps the written one, so a stored signature comes back in another order on each; the values
    and every CSV's bytes are compared as they are."""
    head, sep, body = text.partition("\n")
    try:
        parsed = json.loads(body)
    except ValueError:
        return text
    return head + sep + json.dumps(parsed, sort_keys=True, ensure_ascii=False)


def _build(slug: str, mode: str, organizer, players: dict) -> list[int]:  # type: ignore[no-untyped-def]
    challenge = challenge_create(organizer=organizer, slug=slug, title=f"Golden {mode}", resamples=100)
    truth = _truth()
    rows = "".join(f"{i},{t},{s}\n" for i, t, s in zip(*truth, strict=True))
    task_create(
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
        **({"ladder_eta": 0.05} if mode == "ladder" else {}),  # type: ignore[arg-type]
    )
    pks = []
    for team, name, right_public, right_private in ENTRIES:
        response = client_for(players[team]).post(
            f"/api/challenges/{slug}/submissions/",
            {"name": name, "file": file(f"{name}.csv", _file(truth, right_public, right_private))},
            format="multipart",
        )
        assert response.status_code == 201, response.content
        pks.append(int(response.json()["id"]))
    return pks


def _reads(slug: str, pks: list[int], readers: dict) -> dict[str, str]:  # type: ignore[no-untyped-def]
    out: dict[str, str] = {}
    for who, reader in readers.items():
        web = Client()
        if reader is not None:
            web.force_login(reader)
        api = client_for(reader)
        if reader is not None:
            # a session, as a browser or ``lb`` has: ``force_authenticate`` alone is invisible to the
            # anonymous answer cache (``rankings.read_cache``), which would serve the anonymous answer
            api.force_login(reader)
        for split in ("public", "private"):
            for fmt in ("csv", "json"):
                url = reverse("board_download", args=[slug, "main", fmt]) + f"?split={split}"
                response = web.get(url)
                # a refusal is an HTML error page (with a fresh CSRF token): its status is what is pinned
                body = response.content.decode() if response.status_code == 200 else ""
                out[f"{who} site {url}"] = (
                    f"{response.status_code} {response.get('Content-Disposition')}\n{body}"
                )
            for query, accept in (("", "application/json"), ("&format=csv", "text/csv")):
                url = f"/api/challenges/{slug}/leaderboard/?split={split}{query}"
                response = api.get(url, HTTP_ACCEPT=accept)
                out[f"{who} api {url}"] = f"{response.status_code}\n" + response.content.decode()
            url = f"/api/challenges/{slug}/leaderboard/?split={split}&sequence=1"
            out[f"{who} api {url}"] = f"{api.get(url).status_code}\n" + api.get(url).content.decode()
            url = f"/api/challenges/{slug}/summary/?split={split}"
            out[f"{who} api {url}"] = f"{api.get(url).status_code}\n" + api.get(url).content.decode()
        for pk in pks:
            response = api.get(f"/api/submissions/{pk}/")
            out[f"{who} api submission {pks.index(pk)}"] = (
                f"{response.status_code}\n" + response.content.decode()
            )
    return {key: _mask(text) for key, text in out.items()}


@pytest.mark.django_db(transaction=True, reset_sequences=True)
def test_every_board_download_and_answer_is_byte_identical_to_the_golden_texts() -> None:
    organizer = user("org")
    players = {name: user(name) for name in ("alice", "bob", "carol")}
    readers = {"anonymous": None, "alice": players["alice"], "organizer": organizer}
    got: dict[str, str] = {}
    built = {
        mode: _build(f"golden-{mode}", mode, organizer, players)
        for mode in ("plain", "ladder", "ladder-free")
    }
    for moment in ("before", "after"):
        if moment == "after":
            for mode in built:
                from leaderboard.challenges.models import Challenge

                challenge_reveal_private(
                    challenge=Challenge.objects.get(slug=f"golden-{mode}"), while_open=True
                )
        for mode, pks in built.items():
            for key, text in _reads(f"golden-{mode}", pks, readers).items():
                got[f"{moment} {mode} {key}"] = text
    if os.environ.get("GOLDEN_WRITE"):
        GOLDEN.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
    want = json.loads(GOLDEN.read_text())
    assert sorted(got) == sorted(want)
    changed = [key for key in want if got[key] != want[key]]
    if changed and os.environ.get("GOLDEN_DIFF"):
        Path(os.environ["GOLDEN_DIFF"]).write_text(
            json.dumps({k: [want[k], got[k]] for k in changed}, indent=1)
        )
    assert not changed, (changed[:5], [(want[k][:300], got[k][:300]) for k in changed[:2]])
