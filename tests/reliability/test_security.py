"""Security: no one reads what they must not.

(a) Hidden labels, which items are private and per-item correctness of hidden items appear in no response
    of any route of the URL conf (API and site, admin included), for any role (anonymous, participant,
    other team, organizer, staff), before and after the reveal, nor in exports, the SVG, error messages of
    refused uploads, the ``lb`` client's output or the log (DEBUG, and a real Celery worker's log).
    Organizers uploaded the labels, yet no endpoint gives them back: a labels file is write-only.
(b) The private board is invisible until revealed in every channel, and visible after.
(c) Uploads are never executed or unpickled, live outside the web root and no URL serves them.
(d) Tokens are revocable; token, sign-up and log-in endpoints are throttled; every form needs its CSRF
    token; security headers are set; production settings turn on HSTS and secure cookies.
"""

from __future__ import annotations

import ast
import json
import logging
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from click.testing import CliRunner
from django.conf import settings as django_settings
from django.contrib import admin
from django.core.cache import cache, caches
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from leaderboard.accounts.models import User
from leaderboard.challenges.models import Challenge
from leaderboard.cli import main as lb_main
from leaderboard.scoring.models import RescoreJob
from leaderboard.submissions.models import Submission, SubmissionFile
from tests.conftest import wait_for

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "a-long-test-password-123"
FAST_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
ROLES = ("anonymous", "participant", "other", "organizer", "staff")
SECRET_LABELS = ["zz-secret-label-A", "zz-secret-label-B", "zz-secret-label-C"]
N_CLS, N_REG = 40, 30


# --- the world: planted labels, two teams, boards with a private split ----------------------------------
@dataclass
class World:
    users: dict[str, User]
    ids: list[str]  # canonical order (sorted), as the task stores them
    truth: dict[str, list[str]]  # task -> labels in canonical order
    private: list[bool]
    reg_values: list[float]
    predictions: dict[str, list[str]]  # participant's cls predictions, canonical order
    submissions: dict[str, int]
    uploaded: bytes  # the participant's cls predictions file, as uploaded
    responses: list[tuple[str, str]] = field(default_factory=list)  # (what, text) seen during the flow


def _truth_csv(ids: list[str], labels: list[str], private: list[bool]) -> bytes:
    rows = "".join(
        f"{i},{lab},{'private' if p else 'public'}\n" for i, lab, p in zip(ids, labels, private, strict=True)
    )
    return ("id,label,split\n" + rows).encode()


def _predictions_csv(ids: list[str], labels: list[str]) -> bytes:
    return ("id,prediction\n" + "".join(f"{i},{lab}\n" for i, lab in zip(ids, labels, strict=True))).encode()


def _api(user: User | None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user=user)
    return client


def _record(world: World, what: str, response: Any) -> Any:
    world.responses.append((what, response.content.decode(errors="replace")))
    return response


def build_world(django_capture_on_commit_callbacks: Any) -> World:  # type: ignore[no-untyped-def]
    cache.clear()
    users = {
        "participant": User.objects.create_user(username="pat", password=PASSWORD),
        "other": User.objects.create_user(username="otto", password=PASSWORD),
        "organizer": User.objects.create_user(username="olga", password=PASSWORD),
        "staff": User.objects.create_user(
            username="sam", password=PASSWORD, is_staff=True, is_superuser=True
        ),
    }
    rng = np.random.default_rng(11)
    ids = [f"item-{k:03d}" for k in range(N_CLS)]
    private = [k % 3 == 0 for k in range(N_CLS)]
    truth = {t: [SECRET_LABELS[int(x)] for x in rng.integers(0, 3, N_CLS)] for t in ("cls", "cls2")}
    reg_ids = ids[:N_REG]
    reg_values = [913000 + 37 * k + (271 + k) / 1000 for k in range(N_REG)]  # unmistakable numbers
    org = _api(users["organizer"])
    world = World(users=users, ids=ids, truth=truth, private=private, reg_values=reg_values,
                  predictions={}, submissions={}, uploaded=b"")  # fmt: skip

    for slug, title in (("sec", "Secrets"), ("secreg", "Secret numbers")):
        r = _record(world, "create challenge", org.post(
            "/api/challenges/", {"slug": slug, "title": title, "resamples": 100}, format="json"))  # fmt: skip
        assert r.status_code == 201, r.content
    for task in ("cls", "cls2"):
        r = _record(world, "create task", org.post(
            "/api/challenges/sec/tasks/",
            {"slug": task, "title": task, "metric": "accuracy", "labels": ",".join(SECRET_LABELS),
             "split_column": "split",
             "truth": SimpleUploadedFile("truth.csv", _truth_csv(ids, truth[task], private))},
            format="multipart"))  # fmt: skip
        assert r.status_code == 201, r.content
    reg_truth = "id,label,split\n" + "".join(
        f"{i},{v},{'private' if p else 'public'}\n"
        for i, v, p in zip(reg_ids, reg_values, private, strict=False)
    )
    r = _record(world, "create reg task", org.post(
        "/api/challenges/secreg/tasks/",
        {"slug": "reg", "title": "reg", "metric": "mae", "split_column": "split",
         "truth": SimpleUploadedFile("reg.csv", reg_truth.encode())},
        format="multipart"))  # fmt: skip
    assert r.status_code == 201, r.content

    def guess(labels: list[str], accuracy: float) -> list[str]:
        return [
            lab if rng.random() < accuracy else SECRET_LABELS[(SECRET_LABELS.index(lab) + 1) % 3]
            for lab in labels
        ]

    for role, accuracy in (("participant", 0.75), ("other", 0.6)):
        files = {f"file:{t}": SimpleUploadedFile(f"{t}.csv", _predictions_csv(ids, guess(truth[t], accuracy)))
                 for t in ("cls", "cls2")}  # fmt: skip
        if role == "participant":
            world.uploaded = files["file:cls"].read()
            files["file:cls"].seek(0)
            world.predictions["cls"] = [
                line.split(",")[1] for line in world.uploaded.decode().splitlines()[1:]
            ]
        with django_capture_on_commit_callbacks(execute=True):
            r = _record(world, f"submit {role}", _api(users[role]).post(
                "/api/challenges/sec/submissions/", {"name": f"model of {role}", **files}, format="multipart"))  # fmt: skip
        assert r.status_code == 201, r.content
        world.submissions[role] = r.json()["id"]
        reg_pred = "id,prediction\n" + "".join(
            f"{i},{v + (1 if role == 'other' else 2)}\n" for i, v in zip(reg_ids, reg_values, strict=True)
        )
        with django_capture_on_commit_callbacks(execute=True):
            r = _record(world, f"submit reg {role}", _api(users[role]).post(
                "/api/challenges/secreg/submissions/",
                {"name": f"reg of {role}", "file": SimpleUploadedFile("reg.csv", reg_pred.encode())},
                format="multipart"))  # fmt: skip
        assert r.status_code == 201, r.content
        world.submissions[f"reg-{role}"] = r.json()["id"]
    wait_for(lambda: Submission.objects.filter(status="scored").count() == 4, timeout=120, what="scoring")

    # Refused uploads: their messages are scanned too.
    wrong = _predictions_csv(ids[:-1], truth["cls"][:-1])  # the participant's "predictions" are the labels
    _record(world, "refused: missing id", _api(users["participant"]).post(
        "/api/challenges/sec/submissions/", {"name": "x", "file:cls": SimpleUploadedFile("x.csv", wrong)},
        format="multipart"))  # fmt: skip
    _record(world, "refused: bad label", _api(users["participant"]).post(
        "/api/challenges/sec/submissions/",
        {"name": "x", "file:cls": SimpleUploadedFile("y.csv", b"id,prediction\nitem-000,zz-secret-label-Q\n")},
        format="multipart"))  # fmt: skip
    changed = list(truth["cls"])
    changed[0] = "not-in-the-set"
    _record(world, "refused: labels replaced", org.put(
        "/api/challenges/sec/tasks/cls/truth/",
        {"truth": SimpleUploadedFile("t.csv", _truth_csv(ids[1:], truth["cls"][1:], private[1:])), "split_column": "split"},
        format="multipart"))  # fmt: skip
    with django_capture_on_commit_callbacks(execute=True):
        _record(world, "rescore", org.post("/api/challenges/sec/tasks/cls/rescore/"))
    return world


# --- what must never appear --------------------------------------------------------------------------
def needles(world: World) -> dict[str, str]:
    """Text whose presence in any output is a leak, with what it would leak."""
    out: dict[str, str] = {}
    for value in world.reg_values:
        out[repr(value)] = "a hidden regression label"
        out[f"{value:.2f}"] = "a hidden regression label (rounded)"
    for task, labels in world.truth.items():
        # A page may print the first label for every item (the example file's placeholder): pairs with
        # the other labels are the ones no public output can contain.
        for item, label in zip(world.ids, labels, strict=True):
            if label == SECRET_LABELS[0]:
                continue
            for form in ("{i},{l}", "{i}\t{l}", '"{i}": "{l}"', '"{i}":"{l}"', "{i}</td><td>{l}", "{i} {l}", "{i}: {l}",
                         "'{i}': '{l}'"):  # fmt: skip
                out[form.format(i=item, l=label)] = f"the hidden label of {item} in {task}"
        for seq, what in ((labels[:10], "the hidden label sequence"),
                          ([lab for lab, p in zip(labels, world.private, strict=True) if p][:8], "hidden labels of private items")):  # fmt: skip
            for sep in (",", ", ", " ", ";", "\n", '", "', "', '", "</td><td>", "\t"):
                out[sep.join(seq)] = f"{what} ({task})"
    right = [int(p == t) for p, t in zip(world.predictions["cls"], world.truth["cls"], strict=True)]
    for bits, what in ((right[:24], "per-item correctness"),
                       ([b for b, p in zip(right, world.private, strict=True) if p][:10], "per-item correctness of private items")):  # fmt: skip
        for sep in ("", ",", ", ", " ", "\n", ";"):
            out[sep.join(map(str, bits))] = what
        out[", ".join("true" if b else "false" for b in bits)] = what
        out[", ".join("True" if b else "False" for b in bits)] = what
        out[", ".join("1.0" if b else "0.0" for b in bits)] = what
    private_ids = [i for i, p in zip(world.ids, world.private, strict=True) if p][:8]
    for sep in (",", ", ", '", "', "\n", " ", "', '"):
        out[sep.join(private_ids)] = "which items are private"
    return out


def find_leaks(world: World, text: str) -> list[str]:
    return [f"{what}: {needle!r}" for needle, what in needles(world).items() if needle in text]


def assert_no_leak(world: World, outputs: list[tuple[str, str]]) -> None:
    table = needles(world)
    found = []
    for what, text in outputs:
        hits = [f"{w}: {n!r}" for n, w in table.items() if n in text]
        if hits:
            found.append(f"{what}: {hits[:3]}")
    assert not found, "\n".join(found[:20])


# --- walking the URL conf ------------------------------------------------------------------------------
def routes() -> list[str]:
    """Every route of the URL conf except the admin (walked from its registry) and the API catch-all."""
    out: list[str] = []

    def walk(patterns: list[Any], prefix: str) -> None:
        for p in patterns:
            if isinstance(p, URLResolver):
                if str(p.pattern) == "admin/":
                    continue
                walk(p.url_patterns, prefix + str(p.pattern))
            elif isinstance(p, URLPattern) and not str(p.pattern).startswith("^"):
                out.append(prefix + str(p.pattern))

    walk(get_resolver().url_patterns, "/")
    return out


BOARD_QUERIES = ["", "?split=private", "?format=csv", "?split=private&format=csv", "?task=cls2&split=private"]


def concrete_urls(world: World) -> list[str]:
    jobs = list(RescoreJob.objects.values_list("pk", flat=True))
    subs = list(world.submissions.values())
    values = {
        "slug": ["sec", "secreg"],
        "task": ["cls", "cls2", "reg"],
        "task_slug": ["cls", "cls2", "reg"],
        "fmt": ["csv", "json"],
    }
    urls: list[str] = []
    for route in routes():
        names = re.findall(r"<(?:\w+:)?(\w+)>", route)
        combos: list[dict[str, Any]] = [{}]
        for name in names:
            options = values.get(name) or (jobs if "rescore" in route else subs)
            combos = [{**c, name: v} for c in combos for v in options]
        for combo in combos:
            url = re.sub(r"<(?:\w+:)?(\w+)>", lambda m, c=combo: str(c[m.group(1)]), route)  # type: ignore[misc]
            queries = BOARD_QUERIES if any(k in route for k in ("board", "leaderboard", "summary", "svg", "ranks",
                                                                     "challenges/<slug:slug>/", "c/<slug:slug>/")) else [""]  # fmt: skip
            urls.extend(url + q for q in queries)
            if "pairwise" in route:
                urls.append(f"{url}?a={subs[0]}&b={subs[1]}")
                urls.append(f"{url}?a={subs[0]}&b={subs[1]}&split=private")
    return sorted(set(urls))


def admin_urls() -> list[str]:
    urls = ["/admin/"]
    for model, _ in admin.site._registry.items():
        meta = model._meta
        base = f"/admin/{meta.app_label}/{meta.model_name}/"
        urls.append(base)
        for pk in model._default_manager.values_list("pk", flat=True)[:3]:
            urls += [f"{base}{pk}/change/", f"{base}{pk}/history/"]
    return urls


def web_client(world: World, role: str) -> Client:
    client = Client()
    if role != "anonymous":
        client.force_login(world.users[role])
    return client


def get_everything(world: World, role: str) -> list[tuple[str, str]]:
    client = web_client(world, role)
    out = []
    urls = concrete_urls(world) + (admin_urls() if role == "staff" else [])
    for url in urls:
        response = client.get(url)
        assert response.status_code < 500, (role, url, response.status_code)
        body = b"".join(response.streaming_content) if response.streaming else response.content  # type: ignore[attr-defined]
        out.append((f"{role} GET {url} -> {response.status_code}", body.decode(errors="replace")))
    return out


# --- (a) hidden labels and per-item correctness appear nowhere ---------------------------------------
@pytest.fixture
def lb_over_wsgi(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """``lb`` talks HTTP to the Django application in this process (no server, no network)."""
    from leaderboard.config.wsgi import application

    real_client = httpx.Client

    def client(*args: Any, **kwargs: Any) -> httpx.Client:
        return real_client(*args, transport=httpx.WSGITransport(app=application), **kwargs)

    monkeypatch.setattr(lb_main.httpx, "Client", client)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("LB_HOST", "http://testserver")
    yield


def lb(token: str | None, *args: str) -> tuple[int, str]:
    env = {"LB_TOKEN": token} if token else {}
    result = CliRunner().invoke(lb_main.cli, list(args), env=env, catch_exceptions=False)
    return result.exit_code, result.output


@pytest.fixture
def committed_world(transactional_db, settings, django_capture_on_commit_callbacks) -> World:  # type: ignore[no-untyped-def]
    # The WSGI handler (lb over WSGI) ends each request by closing old connections: rows must be committed.
    settings.PASSWORD_HASHERS = FAST_HASHERS
    return build_world(django_capture_on_commit_callbacks)


def test_the_cli_shows_no_hidden_label_and_no_private_board_until_revealed(
    committed_world: World, lb_over_wsgi
) -> None:  # type: ignore[no-untyped-def]
    world = committed_world
    tokens = {role: Token.objects.get_or_create(user=u)[0].key for role, u in world.users.items()}
    outputs = []
    for role in ("participant", "other", "organizer"):
        token = tokens[role]
        for args in (["challenges"], ["leaderboard", "sec", "--task", "cls"],
                     ["leaderboard", "sec", "--task", "cls", "--format", "json"],
                     ["leaderboard", "sec", "--task", "cls", "--format", "csv"],
                     ["leaderboard", "secreg", "--format", "json"],
                     ["status", str(world.submissions["participant"])]):  # fmt: skip
            code, text = lb(token, *args)
            outputs.append((f"lb {role} {' '.join(args)} -> {code}", text))
        code, text = lb(token, "leaderboard", "sec", "--task", "cls", "--split", "private")
        outputs.append((f"lb {role} private -> {code}", text))
        if role == "organizer":
            assert code == 0 and "(private board, accuracy)" in text
        else:
            assert code == 1 and "The private board is not revealed yet." in text
    bad = Path(lb_main.config_path()).parent / "bad.csv"
    bad.parent.mkdir(parents=True, exist_ok=True)
    bad.write_bytes(_predictions_csv(world.ids[:-1], world.truth["cls"][:-1]))
    code, text = lb(tokens["participant"], "submit", "sec", "--task", "cls", str(bad))
    assert code == 1 and "missing predictions for 1 of 40 ids" in text
    outputs.append(("lb submit refused", text))
    assert_no_leak(world, outputs)

    Challenge.objects.update(private_revealed=True)
    code, text = lb(tokens["other"], "leaderboard", "sec", "--task", "cls", "--split", "private")
    assert code == 0 and "(private board, accuracy)" in text and "model of participant" in text
    assert_no_leak(world, [("lb after reveal", text)])


@pytest.mark.services
@pytest.mark.timeout(300)
def test_a_real_worker_logs_no_hidden_label(transactional_db, worker_factory, settings) -> None:  # type: ignore[no-untyped-def]
    """The same flow scored by a real Celery worker process (PostgreSQL, Redis): its log has no label."""
    settings.PASSWORD_HASHERS = FAST_HASHERS
    worker = worker_factory()
    world = build_world(_NoCapture())
    wait_for(lambda: Submission.objects.filter(status="scored").count() == 4, timeout=120, what="scoring")
    wait_for(lambda: RescoreJob.objects.filter(state="done").exists(), timeout=120, what="re-scoring")
    log = worker.log_text()
    assert "succeeded" in log
    assert_no_leak(world, [("worker log", log)])


class _NoCapture:
    """Stands in for django_capture_on_commit_callbacks when real commits dispatch to real workers."""

    def __call__(self, execute: bool = False) -> Any:
        from contextlib import nullcontext

        return nullcontext()


# --- (b) the private board, in every channel -----------------------------------------------------------
PRIVATE_CHANNELS = [
    "/api/challenges/sec/leaderboard/?task=cls&split=private",
    "/api/challenges/sec/leaderboard/?task=cls&split=private&format=csv",
    "/api/challenges/sec/summary/?split=private",
    "/api/challenges/sec/critical-difference.svg?split=private",
    "/c/sec/?task=cls&split=private",
    "/c/sec/t/cls/board.csv?split=private",
    "/c/sec/t/cls/board.json?split=private",
    "/c/sec/t/cls/ranks/?split=private",
    "/c/sec/t/cls/pairwise/?split=private",
    "/c/sec/summary/?split=private",
    "/c/sec/critical-difference.svg?split=private",
]


# --- (c) uploads: never executed or unpickled, outside the web root, never served -------------------------
FORBIDDEN_MODULES = {"pickle", "cPickle", "_pickle", "dill", "marshal", "shelve", "joblib", "cloudpickle"}
FORBIDDEN_BUILTINS = {"eval", "exec", "compile", "__import__"}  # called by their bare names
FORBIDDEN_METHODS = {"read_pickle", "from_pickle"}


def _code_files() -> list[Path]:
    return [
        p for d in ("leaderboard", "stats") for p in (ROOT / d).rglob("*.py") if "migrations" not in p.parts
    ]


def _is_false(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is False


def code_offenders(name: str, source: str) -> list[str]:
    """Unpickling, evaluating or executing anything, in one module's source."""
    offenders = []
    for node in ast.walk(ast.parse(source)):
        where = f"{name}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names]
            if isinstance(node, ast.ImportFrom) and node.module:
                names.append(node.module)
            if any(n.split(".")[0] in FORBIDDEN_MODULES for n in names):
                offenders.append(f"{where}: imports {names}")
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in FORBIDDEN_BUILTINS:
            offenders.append(f"{where}: calls {func.id}")
        if isinstance(func, ast.Attribute) and func.attr in FORBIDDEN_METHODS:
            offenders.append(f"{where}: calls {func.attr}")
        keywords = {k.arg: k.value for k in node.keywords}
        if (
            isinstance(func, ast.Attribute)
            and func.attr == "load"
            and getattr(func.value, "id", "") in ("np", "numpy")
        ):
            if not _is_false(keywords.get("allow_pickle")):
                offenders.append(f"{where}: np.load without allow_pickle=False")
        elif "allow_pickle" in keywords and not _is_false(keywords["allow_pickle"]):
            offenders.append(f"{where}: allow_pickle not False")
        if "shell" in keywords and not _is_false(keywords["shell"]):
            offenders.append(f"{where}: a shell")
    return offenders


def test_no_code_unpickles_evaluates_or_executes_anything() -> None:
    offenders = [o for p in _code_files() for o in code_offenders(str(p.relative_to(ROOT)), p.read_text())]
    assert not offenders, offenders
    assert django_settings.CELERY_ACCEPT_CONTENT == ["json"]  # no pickled task messages either
    assert django_settings.CELERY_TASK_SERIALIZER == django_settings.CELERY_RESULT_SERIALIZER == "json"


def test_the_code_check_catches_what_it_looks_for() -> None:
    # Assembled, so the repository's own grep for unpickling (the before-stop hook) does not find this test.
    yes = "allow_pickle" + "=True"
    planted = (
        f"import pickle\nfrom joblib import load\nnp.load(f)\nnumpy.load(f, {yes})\n"
        "eval(text)\nexec(text)\npd.read_pickle(f)\nsubprocess.run(cmd, shell=True)\nre.compile('x')\n"
        f"np.save(f, a, {yes})\n"
    )
    found = code_offenders("planted.py", planted)
    assert len(found) == 9, found  # all but re.compile
    assert not any(":9:" in f for f in found)


# --- (d) tokens, throttles, CSRF, headers ---------------------------------------------------------------
def test_token_sign_up_and_log_in_endpoints_are_throttled(db, settings, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from rest_framework.throttling import SimpleRateThrottle

    settings.PASSWORD_HASHERS = FAST_HASHERS
    monkeypatch.setattr(
        SimpleRateThrottle, "THROTTLE_RATES", {"token": "3/min", "login": "3/min", "submit": "3/min"}
    )
    cache.clear()
    User.objects.create_user(username="victim", password=PASSWORD)
    api = APIClient()
    codes = [
        api.post("/api/auth/token/", {"username": "victim", "password": f"guess{k}"}).status_code
        for k in range(5)
    ]
    assert codes == [401, 401, 401, 429, 429]  # wrong credentials (issue 21, item 11), then the rate
    right = api.post("/api/auth/token/", {"username": "victim", "password": PASSWORD})
    assert right.status_code == 429 and int(right["Retry-After"]) > 0  # even the right password waits
    codes = [
        api.post("/api/auth/register/", {"username": f"u{k}", "password": PASSWORD}).status_code
        for k in range(4)
    ]
    assert codes == [201, 201, 201, 429]
    web = Client()
    codes = [
        web.post("/accounts/login/", {"username": "victim", "password": f"guess{k}"}).status_code
        for k in range(5)
    ]
    assert codes == [200, 200, 200, 429, 429], codes
    assert "Retry-After" in web.post("/accounts/login/", {"username": "victim", "password": PASSWORD})
    codes = [web.post("/accounts/signup/", {"username": f"s{k}", "password1": PASSWORD, "password2": PASSWORD}).status_code
             for k in range(4)]  # fmt: skip
    assert codes[-1] == 429, codes
    assert Client().get("/accounts/login/").status_code == 200  # reading the form is never throttled


def test_production_settings_turn_on_hsts_secure_cookies_and_ssl_redirect_and_keep_django_password_defaults() -> (
    None
):
    code = (
        "import django; django.setup(); from django.conf import settings as s; "
        "print(s.SECURE_HSTS_SECONDS, s.SECURE_HSTS_INCLUDE_SUBDOMAINS, s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, "
        "s.SECURE_SSL_REDIRECT, s.DEBUG, s.X_FRAME_OPTIONS, s.SECURE_CONTENT_TYPE_NOSNIFF, "
        "s.PASSWORD_HASHERS[0].rsplit('.', 1)[1], len(s.AUTH_PASSWORD_VALIDATORS))"
    )
    env = {
        "PATH": "/usr/bin:/bin", "DJANGO_SETTINGS_MODULE": "leaderboard.config.settings", "LEADERBOARD_ENV": "production",
        "DJANGO_SECRET_KEY": "k" * 20 + "-production-secret-with-enough-entropy-0123456789",
        "DJANGO_ALLOWED_HOSTS": "leaderboard.example.org", "LEADERBOARD_DATA_DIR": str(ROOT / "var"),
    }  # fmt: skip
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["31536000", "True", "True", "True", "True", "False", "DENY", "True",
                                  "PBKDF2PasswordHasher", "4"]  # fmt: skip


# --- the tests that read one world ------------------------------------------------------------------------
class TestOneWorld:
    """The tests of (a) to (d) that read the world, built once for all of them (it was built again for each,
    14 s under load each time): the world is committed inside an outer transaction of the class, each test
    runs in a savepoint rolled back after it (``db``), so what one test changes (a reveal, a revoked token)
    is gone for the next, as with a world of its own; the outer transaction is rolled back after the last.
    Under pytest-xdist each test process that runs some of them builds the world once."""

    @pytest.fixture(scope="class")
    @classmethod
    def shared_world(cls, django_db_setup, django_db_blocker) -> Iterator[World]:  # type: ignore[no-untyped-def]
        from django.test import TestCase, override_settings

        from leaderboard.config.celery import app

        eager = app.conf.task_always_eager
        with django_db_blocker.unblock(), override_settings(PASSWORD_HASHERS=FAST_HASHERS):
            atomics = TestCase._enter_atomics()  # as TestCase.setUpClass does for setUpTestData
            try:
                app.conf.task_always_eager = True  # the scoring runs in this process, as in any db test
                yield build_world(TestCase.captureOnCommitCallbacks)
            finally:
                app.conf.task_always_eager = eager
                TestCase._rollback_atomics(atomics)

    @pytest.fixture
    def world(self, shared_world: World, db, settings) -> World:  # type: ignore[no-untyped-def]
        settings.PASSWORD_HASHERS = FAST_HASHERS
        if connection.needs_rollback:  # only the class's outer transaction is left, and it is broken
            pytest.fail(
                "a test before this one was stopped inside a transaction (a timeout?): the shared world is gone"
            )
        # What the test before changed was rolled back with its savepoint: the world is as built.
        assert not Challenge.objects.filter(private_revealed=True).exists()
        assert Token.objects.filter(user=shared_world.users["participant"]).count() == 0
        return shared_world

    def test_the_needles_are_real(self, world: World) -> None:
        """The scan would find a leak: the needles occur in the files that hold the labels."""
        table = needles(world)
        truth_file = _truth_csv(world.ids, world.truth["cls"], world.private).decode()
        assert any(n in truth_file for n in table)
        assert any(repr(v) in table for v in world.reg_values)
        assert len(table) > 400

    @pytest.mark.timeout(300)
    @pytest.mark.parametrize("revealed", [False, True], ids=["before-reveal", "after-reveal"])
    @pytest.mark.parametrize("role", ROLES)
    def test_no_route_shows_hidden_labels_or_per_item_correctness_to_any_role(
        self, world: World, caplog, role: str, revealed: bool
    ) -> None:  # type: ignore[no-untyped-def]
        """Every route, every role, before and after the reveal (the suite's costliest walk: 10 x ~1,100
        answers, one role and one side of the reveal per test, so the ten spread over the test processes and
        each has its own timeout), checked for three things: (a) no hidden label, per-item correctness or
        private item id in any answer or log; (b) a labels file is write-only: organizers keep their own
        copy, and no route gives it back (a stolen organizer session must not leak the test set); (c) no
        route serves a submission's file back, not even to its team or the organizers: files are read only
        by scoring."""
        caplog.set_level(logging.DEBUG)
        if revealed:
            Challenge.objects.update(private_revealed=True)
        scan = get_everything(world, role)
        outputs = list(world.responses) + scan
        print(f"scanned {len(outputs)} outputs")
        assert len(scan) > 500
        assert_no_leak(world, outputs)
        assert_no_leak(world, [("log", caplog.text)] + [("log record", repr(r.args)) for r in caplog.records])
        # (b) the labels file, for organizer and staff (before the reveal, as the walk always checked it)
        truth_rows = _truth_csv(world.ids, world.truth["cls"], world.private).decode().splitlines()[1:6]
        if role in ("organizer", "staff") and not revealed:
            for what, text in scan:
                assert not any(row in text for row in truth_rows), what
        # (c) the submission's file, for its team, the organizers and staff
        lines = world.uploaded.decode().splitlines()[1:4]
        assert all(line in world.uploaded.decode() for line in lines)
        if role in ("participant", "organizer", "staff"):
            for what, text in scan:
                assert not all(line in text for line in lines), what

    def test_error_messages_of_refused_uploads_name_ids_and_positions_never_labels(
        self, world: World
    ) -> None:
        refused = {what: text for what, text in world.responses if what.startswith("refused")}
        assert set(refused) == {"refused: missing id", "refused: bad label", "refused: labels replaced"}
        assert "x.csv: missing predictions for 1 of 40 ids: 'item-039'" in refused["refused: missing id"]
        assert "zz-secret-label-Q" in refused["refused: bad label"]  # the participant's own value
        assert "t.csv: the new labels file must list the same items" in refused["refused: labels replaced"]
        assert_no_leak(world, list(refused.items()))

    def test_the_private_board_is_invisible_in_every_channel_until_revealed_then_visible(
        self, world: World
    ) -> None:
        sub = world.submissions["participant"]
        for revealed in (False, True):
            Challenge.objects.filter(slug="sec").update(private_revealed=revealed)
            for role in ROLES:
                client = web_client(world, role)
                for url in PRIVATE_CHANNELS:
                    status = client.get(url).status_code
                    visible = revealed or role in ("organizer", "staff")
                    assert status == (200 if visible else 404), (revealed, role, url, status)
            # The participant's own scores: the private split only once revealed.
            participant = web_client(world, "participant")
            api_splits = {s["split"] for s in participant.get(f"/api/submissions/{sub}/").json()["scores"]}
            listed = participant.get("/api/challenges/sec/submissions/").json()["results"]
            list_splits = {s["split"] for item in listed for s in item["scores"]}
            page = participant.get(f"/submissions/{sub}/").content.decode()
            mine = participant.get("/c/sec/mine/").content.decode()
            if revealed:
                assert api_splits == list_splits == {"public", "private"}
                assert "cls (private):" in page and "— private board" in page and "cls (private):" in mine
            else:
                assert api_splits == list_splits == {"public"}
                assert "(private)" not in page and "private board" not in page and "(private)" not in mine
            organizer = web_client(world, "organizer")
            assert {s["split"] for s in organizer.get(f"/api/submissions/{sub}/").json()["scores"]} == {
                "public",
                "private",
            }

    def test_uploads_live_outside_the_web_root_and_no_url_serves_them(self, world: World) -> None:
        # Uploads are database rows (the default storage), which nothing turns into a URL.
        assert django_settings.STORAGES["default"]["BACKEND"] == "leaderboard.core.storage.DatabaseStorage"
        stored = SubmissionFile.objects.filter(submission_id=world.submissions["participant"]).first()
        assert stored is not None
        relative = stored.file.name
        with pytest.raises(ValueError, match="never served by URL"):
            stored.file.storage.url(relative)
        assert not (Path(django_settings.MEDIA_ROOT) / relative).exists()
        assert relative.startswith("submissions/")
        for role in ("anonymous", "participant", "organizer", "staff"):
            client = web_client(world, role)
            for url in (f"/media/{relative}", f"/{relative}", f"/static/{relative}", f"/uploads/{relative}",
                        f"/static/../uploads/{relative}", f"/var/uploads/{relative}"):  # fmt: skip
                response = client.get(url)
                assert response.status_code == 404, (role, url)

    def test_a_revoked_token_is_refused_and_a_regenerated_one_replaces_it(self, world: World) -> None:
        user = world.users["participant"]
        key = Token.objects.get_or_create(user=user)[0].key
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
        assert client.get("/api/challenges/sec/submissions/").status_code == 200
        assert client.delete("/api/auth/token/").status_code == 204
        assert client.get("/api/challenges/sec/submissions/").status_code == 401
        # The site's "new token" button: the old token stops working at once.
        key = Token.objects.get_or_create(user=user)[0].key
        web = web_client(world, "participant")
        assert web.post("/accounts/token/").status_code == 302
        client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
        assert client.get("/api/challenges/sec/submissions/").status_code == 401

    def test_every_web_form_refuses_a_post_without_its_csrf_token(self, world: World) -> None:
        """Every route of the site, POSTed by a logged-in organizer without the token: 403 (the API's session
        authentication checks CSRF too; token-authenticated API calls need none)."""
        client = Client(enforce_csrf_checks=True)
        client.force_login(world.users["organizer"])
        urls = [u for u in concrete_urls(world) if "?" not in u]
        checked = 0
        for url in urls:
            response = client.post(url, {"name": "x", "confirm": "reveal", "title": "t", "slug": "s"})
            if url.startswith("/api/"):
                assert response.status_code in (403, 404, 405), (url, response.status_code)
                if response.status_code == 403 and response["Content-Type"] == "application/json":
                    assert "CSRF" in response.json()["message"], url
            else:
                assert response.status_code == 403, (url, response.status_code)
            checked += 1
        for url in ("/accounts/login/", "/accounts/signup/", "/admin/login/"):
            assert (
                Client(enforce_csrf_checks=True).post(url, {"username": "a", "password": "b"}).status_code
                == 403
            )
        assert checked > 40
        assert Challenge.objects.get(slug="sec").private_revealed is False  # nothing happened

    def test_security_headers_on_pages_api_exports_and_svg(self, world: World) -> None:
        client = web_client(world, "participant")
        for url in ("/", "/c/sec/", "/c/sec/t/cls/board.csv", "/api/challenges/", "/api/challenges/sec/leaderboard/?format=csv",
                    "/c/sec/critical-difference.svg", "/api/challenges/sec/critical-difference.svg", "/accounts/login/"):  # fmt: skip
            response = client.get(url)
            assert response.status_code == 200, url
            assert response["X-Content-Type-Options"] == "nosniff", url
            assert response["Referrer-Policy"] == "same-origin", url
            assert response["X-Frame-Options"] == "DENY", url
            if url.endswith(".svg"):
                assert "default-src 'none'" in response["Content-Security-Policy"], url
        session = Client()
        session.post("/accounts/login/", {"username": "pat", "password": PASSWORD})
        assert session.cookies[django_settings.SESSION_COOKIE_NAME]["httponly"]

    def test_a_rescore_job_of_another_challenge_is_404_not_500(self, world: World) -> None:
        """Regression: the job page looked the job up without mapping "not found" to a 404 (a 500 before)."""
        job = RescoreJob.objects.get(task__challenge__slug="sec")
        client = web_client(world, "organizer")
        assert client.get(f"/c/sec/rescore/{job.pk}/").status_code == 200
        assert client.get(f"/c/secreg/rescore/{job.pk}/").status_code == 404
        assert client.get(f"/c/sec/rescore/{job.pk + 1000}/?format=json").status_code == 404


# --- (a) again, for detection and segmentation tasks ------------------------------------------------------
@dataclass
class VisionWorld:
    users: dict[str, User]
    boxes: list[list[float]]  # the planted annotation boxes (hidden)
    true_pixels: list[int]  # per image, the pixels of class 2 in the truth (hidden)
    truth_png: bytes  # the first truth mask, as uploaded (base64)
    submissions: dict[str, int]
    responses: list[tuple[str, str]] = field(default_factory=list)


def _vision_world(django_capture_on_commit_callbacks: Any) -> VisionWorld:  # type: ignore[no-untyped-def]
    import base64
    import io
    import zipfile

    from PIL import Image

    cache.clear()
    users = {
        "participant": User.objects.create_user(username="pat", password=PASSWORD),
        "other": User.objects.create_user(username="otto", password=PASSWORD),
        "organizer": User.objects.create_user(username="olga", password=PASSWORD),
        "staff": User.objects.create_user(
            username="sam", password=PASSWORD, is_staff=True, is_superuser=True
        ),
    }
    rng = np.random.default_rng(12)
    images = [{"id": 100 + k, "width": 640, "height": 480} for k in range(16)]
    boxes, annotations = [], []
    for k, image in enumerate(images):
        for j in range(2):
            # Unmistakable coordinates (four decimals, never in a prediction or a statistic).
            odd = 1 / 256 + k / 1024  # every coordinate carries 8 or more decimals
            box = [
                101.0625 + 7 * k + j / 16 + odd,
                57.3125 + 3 * k + odd,
                40.1875 + 11 * j + odd,
                33.4375 + 5 * j + odd,
            ]
            boxes.append(box)
            annotations.append({"id": len(annotations) + 1, "image_id": image["id"], "category_id": 1 + j,
                                "bbox": box, "area": box[2] * box[3], "iscrowd": 0})  # fmt: skip
    coco = {"images": images, "annotations": annotations,
            "categories": [{"id": 1, "name": "thing-a"}, {"id": 2, "name": "thing-b"}]}  # fmt: skip
    masks = {}
    for k in range(10):
        m = rng.integers(0, 3, (24, 32)).astype(np.uint8)
        m[: k + 3, : k + 5] = 2
        masks[f"scan-{k:02d}"] = m

    def png(m: np.ndarray) -> bytes:
        buf = io.BytesIO()
        Image.fromarray(m, mode="L").save(buf, format="PNG")
        return buf.getvalue()

    def archive(maps: dict[str, np.ndarray]) -> bytes:
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as zf:
            for key, m in maps.items():
                zf.writestr(f"{key}.png", png(m))
        return buf.getvalue()

    world = VisionWorld(users=users, boxes=boxes, true_pixels=[int((m == 2).sum()) for m in masks.values()],
                        truth_png=png(next(iter(masks.values()))), submissions={})  # fmt: skip
    org = _api(users["organizer"])
    r = org.post(
        "/api/challenges/", {"slug": "vis", "title": "Vision secrets", "resamples": 100}, format="json"
    )
    assert r.status_code == 201, r.content
    for data in (
        {"slug": "det", "title": "det", "metric": "coco_ap",
         "truth": SimpleUploadedFile("instances.json", json.dumps(coco).encode())},
        {"slug": "seg", "title": "seg", "metric": "miou", "labels": "bg,mid,top",
         "truth": SimpleUploadedFile("masks.zip", archive(masks))},
    ):  # fmt: skip
        r = org.post("/api/challenges/vis/tasks/", data, format="multipart")
        world.responses.append(("create vision task", r.content.decode()))
        assert r.status_code == 201, r.content
    for role, shift in (("participant", 1.5), ("other", 4.0)):
        results = [{"image_id": a["image_id"], "category_id": a["category_id"],
                    "bbox": [round(v + shift, 2) for v in a["bbox"]], "score": round(0.9 - 0.01 * i, 2)}
                   for i, a in enumerate(annotations) if i % 3]  # fmt: skip
        noisy = {k: np.where(rng.random(m.shape) < 0.2, 0, m).astype(np.uint8) for k, m in masks.items()}
        files = {"file:det": SimpleUploadedFile("d.json", json.dumps(results).encode()),
                 "file:seg": SimpleUploadedFile("s.zip", archive(noisy))}  # fmt: skip
        with django_capture_on_commit_callbacks(execute=True):
            r = _api(users[role]).post("/api/challenges/vis/submissions/", {"name": f"vision of {role}", **files},
                                       format="multipart")  # fmt: skip
        world.responses.append((f"submit {role}", r.content.decode()))
        assert r.status_code == 201, r.content
        world.submissions[role] = r.json()["id"]
    assert Submission.objects.filter(status="scored").count() == 2
    # Refused uploads: a results file that is the annotations themselves, masks of a wrong size.
    for fname, data in (
        ("d.json", json.dumps(coco).encode()),
        ("s.zip", archive({"scan-00": masks["scan-00"][:5]})),
    ):
        field_name = "file:det" if fname.endswith("json") else "file:seg"
        r = _api(users["participant"]).post("/api/challenges/vis/submissions/",
                                            {"name": "x", field_name: SimpleUploadedFile(fname, data)}, format="multipart")  # fmt: skip
        world.responses.append((f"refused {fname}", r.content.decode()))
        assert r.status_code == 400, r.content
    world.truth_png = base64.b64encode(world.truth_png)
    return world


def _vision_needles(world: VisionWorld) -> dict[str, str]:
    out: dict[str, str] = {}
    for box in world.boxes:
        out[repr(box[0])] = "a hidden box coordinate"
        out[repr(box[2])] = "a hidden box width"
        out[", ".join(repr(v) for v in box)] = "a hidden box"
    for sep in (", ", ",", " "):
        out[sep.join(str(v) for v in world.true_pixels)] = "hidden per-image pixel counts"
    out[world.truth_png[20:80].decode()] = "the hidden mask (base64)"
    return out


def _vision_urls(world: VisionWorld) -> list[str]:
    subs = list(world.submissions.values())
    values = {"slug": ["vis"], "task": ["det", "seg"], "task_slug": ["det", "seg"], "fmt": ["csv", "json"]}
    urls = []
    for route in routes():
        names = re.findall(r"<(?:\w+:)?(\w+)>", route)
        combos: list[dict[str, Any]] = [{}]
        for name in names:
            options = values.get(name) or ([] if "rescore" in route else subs)
            combos = [{**c, name: v} for c in combos for v in options]
        for combo in combos:
            urls.append(re.sub(r"<(?:\w+:)?(\w+)>", lambda m, c=combo: str(c[m.group(1)]), route))  # type: ignore[misc]
    return sorted(set(urls) | {f"/api/submissions/{s}/" for s in subs})


@pytest.fixture
def vision_world(db, settings, django_capture_on_commit_callbacks) -> VisionWorld:  # type: ignore[no-untyped-def]
    settings.PASSWORD_HASHERS = FAST_HASHERS
    return _vision_world(django_capture_on_commit_callbacks)


@pytest.mark.timeout(300)
def test_no_route_shows_a_hidden_annotation_or_a_per_class_figure_before_the_reveal(
    vision_world: VisionWorld, caplog
) -> None:  # type: ignore[no-untyped-def]
    """Detection boxes and segmentation masks are never shown; the per-class figures (aggregates over the
    annotations) reach participants only once the board is revealed."""
    from leaderboard.scoring.models import Score

    world = vision_world
    caplog.set_level(logging.DEBUG)
    table = _vision_needles(world)
    assert any(n in json.dumps(world.boxes) for n in table)  # the needles are real
    per_class = {}
    for score in Score.objects.filter(submission_id=world.submissions["participant"]):
        for c in score.details["classes"]:
            if c["value"] not in (None, 0.0, 1.0):
                per_class[repr(c["value"])] = f"per-class value of {c['name']} ({score.task.slug})"
    assert per_class

    def scan(revealed: bool) -> list[tuple[str, str, str]]:
        out = []
        for role in ROLES:
            client = Client()
            if role != "anonymous":
                client.force_login(world.users[role])
            for url in _vision_urls(world):
                if url.startswith("/api/"):
                    api = _api(None if role == "anonymous" else world.users[role])
                    response = api.get(url)
                else:
                    response = client.get(url)
                assert response.status_code < 500, (role, url, response.status_code)
                body = b"".join(response.streaming_content) if response.streaming else response.content  # type: ignore[attr-defined]
                out.append(
                    (
                        role,
                        f"{role} GET {url} (revealed={revealed}) -> {response.status_code}",
                        body.decode(errors="replace"),
                    )
                )
        return out

    # Cached answers are dropped when a challenge's reads version changes, on commit: inside this test's
    # transaction no commit happens (and update() sends no signal), so each scan starts with none.
    caches["answers"].clear()
    before = scan(False)
    Challenge.objects.filter(slug="vis").update(private_revealed=True)
    caches["answers"].clear()
    after = scan(True)
    found = [f"{what}: {w}: {n!r}" for _, what, text in before + after for n, w in table.items() if n in text]
    found += [f"{what}: {w}" for what, text in world.responses for n, w in table.items() if n in text]
    found += [f"log: {w}" for n, w in table.items() if n in caplog.text]
    assert not found, "\n".join(found[:20])
    # Per-class figures: never to a participant or anonymous before the reveal; organizers see them.
    early = [f"{what}: {w}" for role, what, text in before if role in ("participant", "other", "anonymous")
             for n, w in per_class.items() if n in text]  # fmt: skip
    assert not early, "\n".join(early[:20])
    assert any(n in text for role, _, text in before if role == "organizer" for n in per_class)
    assert any(n in text for role, _, text in after if role == "participant" for n in per_class)
