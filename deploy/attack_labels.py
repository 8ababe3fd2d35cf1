"""Label extraction: an adaptive participant tries to read the hidden labels through the API.

Usage (from the repository root)::

    python deploy/attack_labels.py [--items 1000] [--days 30] [--seed 0] [--json]
    python deploy/attack_labels.py --strategy boosting --accounts 20 [--no-quota-per-address]
    python deploy/attack_labels.py --url https://host --challenge slug --task test --token KEY --truth truth.csv

Without ``--url`` it runs the whole service in this process (the embedded default: a temporary SQLite
database, Celery tasks in-process), with a clock it moves forward one day whenever the team's daily limit
answers 429, so a 30-day challenge takes a minute. An organizer makes a public challenge with the
**default settings** (limits, runs per submission, precision) and one binary accuracy task of ``--items``
items, about half of them on the private board, labels drawn at random. The attacker signs up once and uses
only what the API answers a participant:

1. **Per-run probes.** One submission carrying as many runs (files) as the task accepts: the unchanged
   predictions, and then each with one more item flipped. When the API returns each run's value at full
   precision, a run that scores higher says "flipped to the right label", lower says "was right", equal
   says "private item"; every run is one label, and a submission is charged once however many runs it
   carries. Used for as long as it works.
2. **Boundary probes** (``--strategy boundary``, the default), when run values are not returned: with single-file submissions, flip more and more
   items (bisection) until the rounded value changes between two prediction files that differ in one item.
   The first of them sits next to a rounding boundary; flipping one more item then moves the rounded value
   if and only if the flip made that item right (or, by the direction learned, wrong): one label per
   submission for public items, nothing for private ones.
   Or **boosting** (``--strategy boosting``; Blum & Hardt 2015): random prediction files, then a vote of
   each over the items, weighted by whether it scored above the median; no boundary needed.

**Many accounts** (``--accounts N``): the attacker signs up N accounts from its one address, as fast as
the sign-up throttle lets it (the fake clock waits out each 429), each a team of its own with the full
quota, and spreads the probes over them: the next account when one's daily limit answers, the next day
when every account's has. The challenge's default counts one team's quota per network address
(``quota_per_address``); ``--no-quota-per-address`` is the organizer turning that off, to measure what
the accounts would get without it. The JSON gives the submissions per account and for the challenge.

At the end the attacker's belief about every label is compared with the truth: ``recovered`` counts the
labels it has right, against ``guessing`` (the expected count of a coin flip, N/2) and the margin that
docs/reliability.md ("Label extraction") states. Output: a summary line, or JSON with ``--json``.
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import io
import json
import math
import os
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

ROOT = Path(__file__).resolve().parent.parent
PASSWORD = "attack-labels-password-123"
CHALLENGE, TASK = "extraction", "test"
#: The margin allowed above guessing: one label per submission of the team's whole quota (the challenge's
#: total limit) plus three standard deviations of a coin flip over the items (docs/reliability.md,
#: "Label extraction").
MARGIN_SD = 3.0


# --- transports ---------------------------------------------------------------------------------------
class Transport(Protocol):
    """GET/POST to the API, answering ``(status, json)``; and the passing of time."""

    def get(self, path: str) -> tuple[int, Any]: ...

    def post(self, path: str, data: dict[str, Any], files: Files = ()) -> tuple[int, Any]: ...

    def next_day(self) -> bool:
        """Move to the next day of the challenge; False if this transport cannot (a live server)."""
        ...

    def wait(self, seconds: float) -> None: ...


Files = Sequence[tuple[str, str, bytes]]


class InProcess:
    """The service in this process, with a fake clock (days pass in an instant)."""

    def __init__(self, data_dir: Path) -> None:
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "leaderboard.config.settings")
        os.environ["DATABASE_URL"] = f"sqlite:///{data_dir / 'db.sqlite3'}"
        os.environ["LEADERBOARD_DATA_DIR"] = str(data_dir)
        os.environ.pop("REDIS_URL", None)
        os.environ.setdefault("LEADERBOARD_LOG_LEVEL", "WARNING")
        import django

        django.setup()
        from django.core.management import call_command
        from django.utils import timezone
        from rest_framework.throttling import SimpleRateThrottle

        call_command("migrate", verbosity=0)
        self.offset = 0.0
        real_now, real_time = timezone.now, time.time
        timezone.now = lambda: real_now() + __import__("datetime").timedelta(seconds=self.offset)
        SimpleRateThrottle.timer = lambda _self: real_time() + self.offset  # type: ignore[method-assign]
        from rest_framework.test import APIClient

        self.client = APIClient()
        self.token: str | None = None

    def _answer(self, response: Any) -> tuple[int, Any]:
        try:
            return response.status_code, response.json()
        except ValueError:
            return response.status_code, {"message": response.content[:200].decode(errors="replace")}

    def _auth(self) -> dict[str, str]:
        return {"HTTP_AUTHORIZATION": f"Token {self.token}"} if self.token else {}

    def get(self, path: str) -> tuple[int, Any]:
        return self._answer(self.client.get(path, **self._auth()))

    def post(self, path: str, data: dict[str, Any], files: Files = ()) -> tuple[int, Any]:
        if files:
            from django.core.files.uploadedfile import SimpleUploadedFile

            body: dict[str, Any] = dict(data)
            for part, name, content in files:
                body.setdefault(part, []).append(SimpleUploadedFile(name, content, content_type="text/csv"))
            return self._answer(self.client.post(path, body, format="multipart", **self._auth()))
        return self._answer(self.client.post(path, data, format="json", **self._auth()))

    def next_day(self) -> bool:
        self.offset += 86_400 + 60
        return True

    def wait(self, seconds: float) -> None:
        self.offset += seconds


class Live:
    """A running service."""

    def __init__(self, url: str, token: str) -> None:
        import httpx

        self.http = httpx.Client(
            base_url=url.rstrip("/"), headers={"Authorization": f"Token {token}"}, timeout=120
        )

    @property
    def token(self) -> str:
        return str(self.http.headers.get("Authorization", "")).removeprefix("Token ")

    @token.setter
    def token(self, value: str) -> None:  # the next account's (--token a,b,c)
        self.http.headers["Authorization"] = f"Token {value}"

    def _answer(self, response: Any) -> tuple[int, Any]:
        try:
            return response.status_code, response.json()
        except ValueError:
            return response.status_code, {"message": response.text[:200]}

    def get(self, path: str) -> tuple[int, Any]:
        return self._answer(self.http.get(path))

    def post(self, path: str, data: dict[str, Any], files: Files = ()) -> tuple[int, Any]:
        if files:
            return self._answer(
                self.http.post(path, data=data, files=[(p, (n, c, "text/csv")) for p, n, c in files])
            )
        return self._answer(self.http.post(path, json=data))


# --- the organizer (in-process only) --------------------------------------------------------------------
def organize(
    api: InProcess,
    *,
    items: int,
    seed: int,
    accounts: int = 1,
    quota_per_address: bool = True,
    resamples: int | None = None,
) -> tuple[list[str], list[str], list[str]]:
    """A public challenge with default settings (but ``quota_per_address`` when turned off) and one binary
    task; then the attacker's ``accounts`` sign-ups. Returns (ids, hidden labels, the accounts' tokens)."""
    rng = random.Random(seed)
    ids = [f"item-{i:05d}" for i in range(items)]
    labels = [rng.choice("01") for _ in ids]
    private = [rng.random() < 0.5 for _ in ids]
    status, body = api.post("/api/auth/register/", {"username": "organizer", "password": PASSWORD})
    assert status == 201, body
    api.token = body["token"]
    settings: dict[str, Any] = {"slug": CHALLENGE, "title": "Label extraction"}
    if not quota_per_address:
        settings["quota_per_address"] = False
    if resamples is not None:
        settings["resamples"] = resamples
    status, body = api.post("/api/challenges/", settings)
    assert status == 201, body
    truth = io.StringIO()
    writer = csv.writer(truth)
    writer.writerow(["id", "label", "split"])
    writer.writerows(
        [i, lab, "private" if p else "public"] for i, lab, p in zip(ids, labels, private, strict=True)
    )
    status, body = api.post(
        f"/api/challenges/{CHALLENGE}/tasks/",
        {"slug": TASK, "title": "Test", "metric": "accuracy", "labels": "0,1", "split_column": "split"},
        files=[("truth", "truth.csv", truth.getvalue().encode())],
    )
    assert status == 201, body
    api.token = None
    tokens = [sign_up(api, "attacker" if accounts == 1 else f"attacker{k}") for k in range(accounts)]
    api.token = tokens[0]
    return ids, labels, tokens


def sign_up(api: Transport, username: str) -> str:
    """One account, waiting out the sign-up throttle (per address and over the service)."""
    for _ in range(1000):
        status, body = api.post("/api/auth/register/", {"username": username, "password": PASSWORD})
        if status == 201:
            return str(body["token"])
        wait = body.get("extra", {}).get("wait") if isinstance(body, dict) else None
        if status != 429 or wait is None:
            raise RefusedError(status, body)
        api.wait(float(wait) + 1)
    raise RuntimeError(f"could not sign {username} up")


# --- the attacker ---------------------------------------------------------------------------------------
@dataclass
class Attacker:
    api: Transport
    challenge: str
    task: str
    ids: list[str]
    submissions: int = 0
    refused: int = 0
    days: int = 1
    max_days: int = 30
    belief: dict[int, str] = field(default_factory=dict)
    method: str = ""
    log: list[str] = field(default_factory=list)
    #: The accounts' API tokens (one team each); empty: the transport's own token.
    tokens: list[str] = field(default_factory=list)
    per_account: dict[int, int] = field(default_factory=dict)
    _current: int = 0
    _spent_today: set[int] = field(default_factory=set)
    _spent: set[int] = field(default_factory=set)

    def _use(self, account: int) -> None:
        self._current = account
        if self.tokens:
            self.api.token = self.tokens[account]  # type: ignore[attr-defined]

    def _next_account(self, *, total: bool, everyone: bool) -> bool:
        """After a 429: move to an account with quota left today; False when none has any today."""
        accounts = range(max(1, len(self.tokens)))
        spent = set(accounts) if everyone else {self._current}
        (self._spent if total else self._spent_today).update(spent)
        return self._first_available()

    def _first_available(self) -> bool:
        for k in range(max(1, len(self.tokens))):
            if k not in self._spent and k not in self._spent_today:
                self._use(k)
                return True
        return False

    def file(self, predictions: list[str]) -> bytes:
        return (
            "id,prediction\n" + "".join(f"{i},{p}\n" for i, p in zip(self.ids, predictions, strict=True))
        ).encode()

    def submit(self, runs: list[list[str]]) -> dict[str, Any] | None:
        """One submission; None when the challenge's quota is spent (all days, or the total limit)."""
        part = f"file:{self.task}"
        files = [(part, f"run{k}.csv", self.file(p)) for k, p in enumerate(runs)]
        while True:
            status, body = self.api.post(
                f"/api/challenges/{self.challenge}/submissions/", {"name": f"probe {self.submissions}"}, files
            )
            if status == 201:
                self.submissions += 1
                self.per_account[self._current] = self.per_account.get(self._current, 0) + 1
                return self.scored(body)
            extra = body.get("extra", {}) if isinstance(body, dict) else {}
            everyone = extra.get("scope") == "address"  # the limit of every account from this address
            if status == 429 and extra.get("limit") == "daily":
                if self._next_account(total=False, everyone=everyone):
                    continue
                if self.days >= self.max_days or not self.api.next_day():
                    return None
                self.days += 1
                self._spent_today.clear()
                if not self._first_available():
                    return None
                continue
            if status == 429 and extra.get("limit") == "total":
                if self._next_account(total=True, everyone=everyone):
                    continue
                return None
            if status == 429 and "wait" in extra:
                self.api.wait(float(extra["wait"]) + 1)
                continue
            self.refused += 1
            raise RefusedError(status, body)

    def scored(self, body: dict[str, Any]) -> dict[str, Any]:
        for _ in range(600):
            if body.get("status") in ("scored", "failed"):
                return body
            self.api.wait(1)
            _, body = self.api.get(f"/api/submissions/{body['id']}/")
        raise RuntimeError(f"submission {body.get('id')} not scored in time")

    @staticmethod
    def public(body: dict[str, Any]) -> dict[str, Any]:
        return next(s for s in body["scores"] if s["split"] == "public")

    # 1. per-run probes ---------------------------------------------------------------------------------
    def per_run(self, order: list[int]) -> bool:
        """Probe one item per run for as long as run values come back; False if they do not."""
        base = ["0"] * len(self.ids)
        runs_per_submission = 100  # what the multipart limit allowed before the task setting
        cursor = 0
        while cursor < len(order):
            batch = order[cursor : cursor + runs_per_submission - 1]
            runs = [base] + [[("1" if i == j else p) for i, p in enumerate(base)] for j in batch]
            try:
                body = self.submit(runs)
            except RefusedError as exc:
                limit = exc.body.get("extra", {}).get("limit") if isinstance(exc.body, dict) else None
                if exc.status == 400 and isinstance(limit, int) and limit < runs_per_submission:
                    runs_per_submission = limit  # the task bounds runs; refused uploads are not charged
                    if limit < 2:
                        return False
                    continue
                raise
            if body is None:
                return cursor > 0
            values = self.public(body).get("run_values")
            if not values or len(values) != len(runs):
                self.log.append(f"per-run probes: no run values ({len(runs)} runs sent); switching")
                return cursor > 0
            self.method = "per-run probes"
            for j, value in zip(batch, values[1:], strict=True):
                if value > values[0]:
                    self.belief[j] = "1"
                elif value < values[0]:
                    self.belief[j] = "0"
                # equal: a private item; no information
            cursor += len(batch)
        return True

    # 2. boundary probes --------------------------------------------------------------------------------
    def boundary(self, order: list[int]) -> None:
        self.method = self.method or "boundary probes"
        n = len(order)
        cache: dict[int, float] = {}

        def predictions(m: int) -> list[str]:
            p = ["0"] * len(self.ids)
            for j in order[:m]:
                p[j] = "1"
            return p

        def value(m: int) -> float | None:
            if m not in cache:
                body = self.submit([predictions(m)])
                if body is None:
                    return None
                cache[m] = float(self.public(body)["value"])
            return cache[m]

        # Two prefixes whose rounded values differ, then bisection to adjacent ones.
        points = [0, n, n // 2, n // 4, 3 * n // 4, n // 8, 3 * n // 8, 5 * n // 8, 7 * n // 8]
        lo = hi = None
        for m in points:
            v = value(m)
            if v is None:
                return
            other = next((k for k in cache if cache[k] != v), None)
            if other is not None:
                lo, hi = sorted((other, m))
                break
        if lo is None or hi is None:
            self.log.append("boundary probes: every prefix rounds to the same value")
            return
        while hi - lo > 1:
            mid = (lo + hi) // 2
            v = value(mid)
            if v is None:
                return
            if v != cache[lo]:
                hi = mid
            else:
                lo = mid
        crossing = order[hi - 1]  # flipping it to '1' moved the count by +1 (right) or -1 (wrong)
        up = 1 if (cache[hi] - cache[lo]) * (1 if self.higher_is_better() else -1) > 0 else -1
        self.belief[crossing] = "1" if up == 1 else "0"
        base = predictions(lo)
        self.log.append(f"boundary found after {len(cache)} submissions at prefix {lo}")
        for j in order:
            if j == crossing or j in self.belief:
                continue
            flipped = list(base)
            flipped[j] = "1" if base[j] == "0" else "0"
            body = self.submit([flipped])
            if body is None:
                return
            moved = float(self.public(body)["value"]) != cache[lo]
            # moved: the flip changed the count by `up`; unmoved: by -up (or 0 for a private item).
            made_right = (up == 1) == moved
            self.belief[j] = flipped[j] if made_right else base[j]

    # 3. boosting (Blum & Hardt 2015, "The Ladder", section 3) -----------------------------------------
    def boosting(self, seed: int) -> None:
        """Random label vectors, each weighted by whether it scored above the median: a majority vote
        that leans towards the labels by about sqrt(k / n) with k submissions (no boundary needed)."""
        self.method = self.method or "boosting"
        rng = random.Random(seed + 2)
        vectors: list[list[str]] = []
        values: list[float] = []
        while True:
            vector = [rng.choice("01") for _ in self.ids]
            body = self.submit([vector])
            if body is None:
                break
            vectors.append(vector)
            values.append(float(self.public(body)["value"]))
        if not values:
            return
        median = sorted(values)[len(values) // 2]
        votes = [0] * len(self.ids)
        for vector, value in zip(vectors, values, strict=True):
            sign = (value > median) - (value < median)
            for j, p in enumerate(vector):
                votes[j] += sign * (1 if p == "1" else -1)
        for j, vote in enumerate(votes):
            if vote:
                self.belief[j] = "1" if vote > 0 else "0"

    def higher_is_better(self) -> bool:
        return True  # accuracy

    def run(self, seed: int, strategy: str = "boundary") -> dict[int, str]:
        order = list(range(len(self.ids)))
        random.Random(seed + 1).shuffle(order)
        if not self.per_run(order):
            if strategy == "boosting":
                self.boosting(seed)
            else:
                self.boundary([j for j in order if j not in self.belief])
        return self.belief


class RefusedError(Exception):
    def __init__(self, status: int, body: Any) -> None:
        super().__init__(f"{status}: {body}")
        self.status, self.body = status, body


# --- main -----------------------------------------------------------------------------------------------
def evaluate(belief: dict[int, str], labels: list[str]) -> tuple[list[str], int]:
    """The attacker's final answer (its belief, a guess of '0' elsewhere) and how many labels it has right."""
    answer = [belief.get(i, "0") for i in range(len(labels))]
    return answer, sum(a == t for a, t in zip(answer, labels, strict=True))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--strategy",
        choices=["boundary", "boosting"],
        default="boundary",
        help="what to do once per-run probes are closed (default: boundary probes)",
    )
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--url", help="a live service (default: in-process)")
    parser.add_argument("--challenge", default=CHALLENGE)
    parser.add_argument("--task", default=TASK)
    parser.add_argument(
        "--token", help="the attacker's API token, or its accounts' tokens comma-separated (live service)"
    )
    parser.add_argument(
        "--accounts", type=int, default=1, help="accounts the attacker signs up (in-process), a team each"
    )
    parser.add_argument(
        "--no-quota-per-address",
        dest="quota_per_address",
        action="store_false",
        help="the organizer turns the one-quota-per-address default off (in-process)",
    )
    parser.add_argument("--truth", help="id,label CSV to score the attack against (live service)")
    parser.add_argument(
        "--resamples",
        type=int,
        help="the challenge's resamples (default: the challenge default); the attacker reads only rounded "
        "values, so this changes the run's time, not what it learns (in-process)",
    )
    args = parser.parse_args(argv)

    started = time.monotonic()
    tokens: list[str] = []
    if args.url:
        tokens = [t for t in (args.token or "").split(",") if t]
        api: Transport = Live(args.url, tokens[0] if tokens else "")
        _, items = api.get(
            f"/api/challenges/{args.challenge}/tasks/{args.task}/items/?format=json&limit=1000000"
        )
        ids = [r["id"] for r in items["results"]]
        labels: list[str] = []
        if args.truth:
            with open(args.truth, newline="") as fh:
                truth = {r["id"]: r["label"] for r in csv.DictReader(fh)}
            labels = [truth[i] for i in ids]
    else:
        if importlib.util.find_spec("leaderboard") is None:  # PYTHONPATH may name another checkout
            sys.path.insert(0, str(ROOT))
        tmp = tempfile.TemporaryDirectory(prefix="attack-labels-")
        api = InProcess(Path(tmp.name))
        ids, labels, tokens = organize(
            api,
            items=args.items,
            seed=args.seed,
            accounts=args.accounts,
            quota_per_address=args.quota_per_address,
        )

    attacker = Attacker(
        api=api, challenge=args.challenge, task=args.task, ids=ids, max_days=args.days,
        tokens=tokens if len(tokens) > 1 else [],
    )  # fmt: skip
    belief = attacker.run(args.seed, args.strategy)
    result: dict[str, Any] = {
        "items": len(ids),
        "days": attacker.days,
        "submissions": attacker.submissions,
        "method": attacker.method,
        "labels_claimed": len(belief),
        "accounts": max(1, len(tokens)),
        "per_account": [attacker.per_account.get(k, 0) for k in range(max(1, len(tokens)))],
        "log": attacker.log,
        "seconds": round(time.monotonic() - started, 1),
    }
    if labels:
        _, recovered = evaluate(belief, labels)
        guessing = len(labels) / 2
        _, challenge = api.get(f"/api/challenges/{args.challenge}/")
        quota = int(challenge["total_limit"])
        result["quota_per_address"] = challenge.get("quota_per_address")
        margin = quota + MARGIN_SD * math.sqrt(len(labels)) / 2
        result.update(
            quota=quota,
            recovered=recovered,
            guessing=guessing,
            excess=recovered - guessing,
            margin=round(margin, 1),
            within_margin=recovered <= guessing + margin,
        )
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"{result.get('recovered', '?')} of {len(ids)} labels right after {attacker.submissions} submissions "
            f"from {result['accounts']} account(s) in {attacker.days} days ({attacker.method or 'no method worked'}); guessing: "
            f"{result.get('guessing', '?')}, margin {result.get('margin', '?')}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
