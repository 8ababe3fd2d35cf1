"""Server CPU per request of the board reads (issue 10, points 3 and 9), measured in-process.

Usage (from the repository root; an empty PostgreSQL database of your own and a Redis database number)::

    psql -h 127.0.0.1 -U postgres -c 'CREATE DATABASE lbcpu'
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/lbcpu REDIS_URL=redis://127.0.0.1:6379/5 \
      .venv/bin/python deploy/cpu_per_request.py [--entries 200 --items 2000 --requests 500]

The script migrates that database, creates (once; a later run reuses it) a challenge with one accuracy task
of ``--items`` items and ``--entries`` scored entries (in bulk, as ``deploy/loadtest.py`` does) and builds
its board with the real ``leaderboard_rebuild``. Then, for each read (board page, board API, rank
distribution page and its image, all anonymous as a visitor with no cookies), it sends one request to warm
the caches and ``--requests`` more straight to the WSGI application (Django's handler with every
middleware; no HTTP server, no client in the measured process), and prints the process CPU time
(``time.process_time``) and wall time per request, and the size of the answer. A web server (gunicorn)
adds its own parsing and socket work on top. Also ``--uncached``: the first request after the caches are
cleared, i.e. the cost of drawing a new snapshot. Results are printed as JSON.

``--readers anonymous participant organizer`` (default: all three): the board page and API are also read
signed in, as a participant (a session cookie for the page, an API token for the API; a user who is no
organizer) and as one of the challenge's organizers (issue 21, item 10: under 3 ms of CPU each).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--entries", type=int, default=200)
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--readers",
        nargs="+",
        choices=["anonymous", "participant", "organizer"],
        default=["anonymous", "participant", "organizer"],
    )
    args = parser.parse_args(argv)
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        raise SystemExit("set DATABASE_URL to an empty PostgreSQL database of your own")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "leaderboard.config.settings")
    # one client sends every request: the anonymous-read throttle (60/min) is raised so its cost (a counter
    # in Redis) is measured and its refusals are not
    os.environ.setdefault("LEADERBOARD_THROTTLE_ANON_READ", "1000000/min")
    os.environ.pop("DJANGO_DEBUG", None)
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "deploy"))
    import django

    django.setup()
    import loadtest
    from django.core.cache import caches
    from django.core.management import call_command
    from django.core.wsgi import get_wsgi_application
    from django.test import RequestFactory

    from leaderboard.challenges.models import Challenge, Task
    from leaderboard.rankings.services import leaderboard_rebuild

    call_command("migrate", verbosity=0)
    if not Challenge.objects.filter(slug=loadtest.CHALLENGE).exists():
        t = time.perf_counter()
        made = loadtest.create_board(
            argparse.Namespace(
                entries=args.entries, items=args.items, resamples=args.resamples, seed=args.seed, teams=1
            )
        )
        leaderboard_rebuild(task_id=made["task_id"], split="public")
        print(
            f"created a board of {args.entries} entries in {time.perf_counter() - t:.1f} s", file=sys.stderr
        )
    task = Task.objects.get(challenge__slug=loadtest.CHALLENGE, slug=loadtest.TASK)
    entries = (
        task.snapshots.filter(split="public").order_by("-sequence").values_list("entry_count", flat=True)[0]
    )

    app = get_wsgi_application()
    factory = RequestFactory()

    credentials = _credentials(Challenge.objects.get(slug=loadtest.CHALLENGE))

    def call(path: str, query: str = "", reader: str = "anonymous") -> tuple[int, int]:
        environ = factory._base_environ(PATH_INFO=path, QUERY_STRING=query, REQUEST_METHOD="GET")
        environ["wsgi.input"] = io.BytesIO(b"")
        if reader != "anonymous":
            session, token = credentials[reader]
            if path.startswith("/api/"):
                environ["HTTP_AUTHORIZATION"] = f"Token {token}"
            else:
                environ["HTTP_COOKIE"] = f"sessionid={session}"
        status: list[str] = []
        body = b"".join(app(environ, lambda s, h, e=None: status.append(s)))  # type: ignore[misc]
        return int(status[0].split()[0]), len(body)

    reads = _reads(loadtest.CHALLENGE, loadtest.TASK, args.readers)
    out: dict[str, Any] = {"entries": entries, "items": args.items, "requests": args.requests, "reads": {}}
    for label, (path, query, reader) in reads.items():
        for cache in ("boards", "default", "answers"):
            caches[cache].clear()
        c0, w0 = time.process_time(), time.perf_counter()
        status, size = call(path, query, reader)
        first = {
            "cpu_ms": round((time.process_time() - c0) * 1000, 2),
            "wall_ms": round((time.perf_counter() - w0) * 1000, 2),
        }
        if status != 200:
            out["reads"][label] = {"status": status}
            continue
        c0, w0 = time.process_time(), time.perf_counter()
        for _ in range(args.requests):
            status, size = call(path, query, reader)
            assert status == 200, (label, status)
        cpu = (time.process_time() - c0) / args.requests
        wall = (time.perf_counter() - w0) / args.requests
        out["reads"][label] = {
            "bytes": size,
            "uncached_first_request": first,
            "cached_cpu_ms_per_request": round(cpu * 1000, 3),
            "cached_wall_ms_per_request": round(wall * 1000, 3),
            "requests_per_cpu_second": round(1 / cpu) if cpu else None,
        }
    print(json.dumps(out, indent=2))
    return 0


def _reads(slug: str, task_slug: str, readers: list[str]) -> dict[str, tuple[str, str, str]]:
    """What is read, by whom: label -> (path, query, reader)."""
    reads: dict[str, tuple[str, str, str]] = {}
    for reader in readers:
        who = "" if reader == "anonymous" else f", {reader}"
        reads[f"board page{who}"] = (f"/c/{slug}/", f"task={task_slug}", reader)
        reads[f"board API{who}"] = (f"/api/challenges/{slug}/leaderboard/", f"task={task_slug}", reader)
        if reader == "anonymous":
            reads["rank distribution page"] = (f"/c/{slug}/t/{task_slug}/ranks/", "", reader)
            reads["rank distribution image"] = (f"/c/{slug}/t/{task_slug}/ranks.png", "", reader)
    return reads


def _credentials(challenge: Any) -> dict[str, tuple[str, str]]:
    """A signed-in participant and organizer of the challenge: (session key, API token) each."""
    from importlib import import_module

    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY

    from leaderboard.accounts.models import User
    from leaderboard.accounts.services import api_token_get_or_create

    out = {}
    for reader in ("participant", "organizer"):
        user, _ = User.objects.get_or_create(username=f"cpu-{reader}")
        if reader == "organizer":
            challenge.organizers.add(user)
        session = import_module(settings.SESSION_ENGINE).SessionStore()  # as a log-in makes it
        session[SESSION_KEY] = str(user.pk)
        session[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[0]
        session[HASH_SESSION_KEY] = user.get_session_auth_hash()
        session.save()
        out[reader] = (str(session.session_key), api_token_get_or_create(user=user).key)
    return out


if __name__ == "__main__":
    raise SystemExit(main())
