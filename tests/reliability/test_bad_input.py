"""Bad input: every malformed predictions or hidden-labels file of the corpus, through every door.

Doors: the REST API (predictions and labels), the web forms (predictions and labels) and the statistics
command line (``python -m stats score``, the parser on its own). Each malformed file gets a 400 (exit code
2 on the command line) whose message is the parser's exact ``file:line:column: message``; nothing is
stored (no Submission, Task or TaskTruth row, no file under the storage directory) and nothing is
charged (a team with a daily limit of 1 can still submit afterwards). Valid oddities (quotes, CRLF, a
UTF-8 byte-order mark, a quoted field spanning lines, Parquet) are accepted.

The corpus is in ``corpus/`` (written by ``corpus/make_corpus.py``): items it-1..it-4; task ``cls``
(accuracy, labels cat,dog), ``prob`` (log_loss: probabilities), ``reg`` (mae: numbers). A 2 GB upload is
never written anywhere: its body is generated while the server reads it, and the server must stop early.
"""

from __future__ import annotations

import html
import io
import re
import tracemalloc
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.handlers.wsgi import WSGIHandler
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from leaderboard.accounts.models import User
from leaderboard.challenges.models import Challenge, Task, TaskTruth
from leaderboard.challenges.services import challenge_create, task_create
from leaderboard.core.uploads import TOO_LARGE_STREAMED as TOO_LARGE
from leaderboard.scoring.kinds import upload_limit
from leaderboard.submissions.models import Submission
from leaderboard.web.views.common import UPLOAD_TOO_LARGE
from stats import cli as stats_cli
from stats.io import ARCHIVE_REFUSED

CORPUS = Path(__file__).resolve().parent / "corpus"
PREDICTIONS = CORPUS / "predictions"
TRUTH = CORPUS / "truth"
VALID = CORPUS / "valid"
PASSWORD = "a-long-test-password-123"
FAST_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
TASKS = {"cls": ("accuracy", ["cat", "dog"]), "prob": ("log_loss", ["neg", "pos"]), "reg": ("mae", [])}
UTF16 = "the file is UTF-16 encoded; save it as UTF-8"
LATIN1 = "byte 0x{:02X} is not valid UTF-8 (the file looks Latin-1 or Windows-1252 encoded); save it as UTF-8"
CATDOG = "(labels: cat, dog)"


@dataclass(frozen=True)
class Bad:
    task: str  # cls, prob or reg (predictions); the metric's task for labels files
    file: str
    message: str | None  # the exact message; None: accepted
    prefix: bool = False  # the message starts with this text (pyarrow's exception name follows)
    options: tuple[tuple[str, str], ...] = ()  # labels files: labels, split_column, group_column


BAD_PREDICTIONS = [
    Bad("cls", "empty.csv", "empty.csv: the file is empty"),
    Bad("cls", "blank_lines_only.csv", "blank_lines_only.csv: the file is empty"),
    Bad("cls", "header_only.csv", "header_only.csv:1: the file has a header but no rows"),
    Bad("cls", "missing_column.csv", "missing_column.csv:1: missing column 'prediction' (the header must be: id,prediction)"),
    Bad("cls", "extra_columns.csv", "extra_columns.csv:1:3: unexpected column 'confidence' (the header must be: id,prediction)"),
    Bad("cls", "repeated_column.csv", "repeated_column.csv:1:3: column 'id' appears twice"),
    Bad("cls", "extra_field.csv", "extra_field.csv:3:3: expected 2 fields, found 3"),
    Bad("cls", "duplicate_ids.csv", "duplicate_ids.csv:4:1: duplicate id 'it-1' (first on line 2)"),
    Bad("cls", "missing_ids.csv", "missing_ids.csv: missing predictions for 2 of 4 ids: 'it-3', 'it-4'"),
    Bad("cls", "unknown_ids.csv", "unknown_ids.csv:3:1: unknown id 'it-9' (not an item of this task)"),
    Bad("cls", "empty_id.csv", "empty_id.csv:3:1: empty id"),
    Bad("cls", "label_outside_set.csv", f"label_outside_set.csv:3:2: unknown label 'cow' {CATDOG}"),
    Bad("cls", "number_as_label.csv", f"number_as_label.csv:2:2: unknown label '1' {CATDOG}"),
    Bad("cls", "semicolon.csv", "semicolon.csv:1: the file seems to use ';' as delimiter; use commas"),
    Bad("cls", "tab.csv", "tab.csv:1: the file seems to use tabs as delimiter; use commas"),
    Bad("cls", "utf16_bom.csv", f"utf16_bom.csv: {UTF16}"),
    Bad("cls", "utf16_no_bom.csv", f"utf16_no_bom.csv: {UTF16}"),
    Bad("cls", "latin1.csv", f"latin1.csv:3:7: {LATIN1.format(0xE9)}"),
    Bad("cls", "broken_quote.csv", "broken_quote.csv:2: malformed CSV: unexpected end of data"),
    Bad("cls", "multiline_then_error.csv", f"multiline_then_error.csv:5:2: unknown label 'cow' {CATDOG}"),
    Bad("cls", "archive.zip", "archive.zip: " + ARCHIVE_REFUSED.format(kind="zip")),
    Bad("cls", "predictions.csv.gz", "predictions.csv.gz: " + ARCHIVE_REFUSED.format(kind="gzip")),
    Bad("cls", "wrong_names.parquet", "wrong_names.parquet: missing column 'id' (the header must be: id,prediction)"),
    Bad("cls", "int_labels.parquet", f"int_labels.parquet: row 1, column 'prediction': unknown label '1' {CATDOG}"),
    Bad("cls", "damaged.parquet", "damaged.parquet: not a readable Parquet file (", prefix=True),
    Bad("prob", "score_text.csv", "score_text.csv:3:2: score 'high' is not a number"),
    Bad("prob", "score_nan.csv", "score_nan.csv:2:2: score 'NaN' is not a finite number"),
    Bad("prob", "score_inf.csv", "score_inf.csv:4:2: score 'inf' is not a finite number"),
    Bad("prob", "score_above_one.csv", "score_above_one.csv:3:2: score 1.5 is not a probability in [0, 1]"),
    Bad("prob", "score_negative.csv", "score_negative.csv:2:2: score -0.1 is not a probability in [0, 1]"),
    Bad("prob", "score_header_of_labels.csv", "score_header_of_labels.csv:1: missing column 'score' (the header must be: id,score)"),
    Bad("prob", "score_as_text.parquet", "score_as_text.parquet: row 2, column 'score': score 'high' is not a number"),
    Bad("reg", "reg_text.csv", "reg_text.csv:3:2: prediction 'cat' is not a number"),
    Bad("reg", "reg_infinity.csv", "reg_infinity.csv:4:2: prediction '-Infinity' is not a finite number"),
    Bad("reg", "reg_nan.csv", "reg_nan.csv:2:2: prediction 'nan' is not a finite number"),
]  # fmt: skip
GOOD_PREDICTIONS = [
    Bad("cls", name, None)
    for name in ("quoted_crlf.csv", "utf8_bom.csv", "multiline_valid.csv", "valid.parquet")
] + [Bad("prob", "score_valid.csv", None)]

LABELS = (("labels", "cat,dog"),)
SPLIT = (("split_column", "split"),)
BAD_TRUTH = [
    Bad("cls", "t_empty.csv", "t_empty.csv: the file is empty"),
    Bad("cls", "t_header_only.csv", "t_header_only.csv:1: the file has a header but no rows"),
    Bad("cls", "t_missing_column.csv", "t_missing_column.csv:1: missing column 'label' (the header must be: id,label)"),
    Bad("cls", "t_extra_columns.csv", "t_extra_columns.csv:1:3: unexpected column 'note' (the header must be: id,label)"),
    Bad("cls", "t_duplicate_ids.csv", "t_duplicate_ids.csv:3:1: duplicate id 'it-1' (first on line 2)"),
    Bad("cls", "t_empty_id.csv", "t_empty_id.csv:3:1: empty id"),
    Bad("cls", "t_empty_label.csv", "t_empty_label.csv:3:2: empty label"),
    Bad("cls", "t_label_outside_set.csv", f"t_label_outside_set.csv:4:2: unknown label 'cow' {CATDOG}", options=LABELS),
    Bad("reg", "t_reg_text.csv", "t_reg_text.csv:3:2: label 'cat' is not a number"),
    Bad("reg", "t_reg_nan.csv", "t_reg_nan.csv:3:2: label 'NaN' is not a finite number"),
    Bad("reg", "t_reg_inf.csv", "t_reg_inf.csv:2:2: label 'inf' is not a finite number"),
    Bad("cls", "t_semicolon.csv", "t_semicolon.csv:1: the file seems to use ';' as delimiter; use commas"),
    Bad("cls", "t_tab.csv", "t_tab.csv:1: the file seems to use tabs as delimiter; use commas"),
    Bad("cls", "t_utf16_bom.csv", f"t_utf16_bom.csv: {UTF16}"),
    Bad("cls", "t_utf16_no_bom.csv", f"t_utf16_no_bom.csv: {UTF16}"),
    Bad("cls", "t_latin1.csv", f"t_latin1.csv:3:7: {LATIN1.format(0xF6)}"),
    Bad("cls", "t_broken_quote.csv", "t_broken_quote.csv:2: malformed CSV: unexpected end of data"),
    Bad("cls", "t_archive.zip", "t_archive.zip: " + ARCHIVE_REFUSED.format(kind="zip")),
    Bad("cls", "t_wrong_names.parquet", "t_wrong_names.parquet: missing column 'label' (the header must be: id,label)"),
    Bad("reg", "t_reg_text.parquet", "t_reg_text.parquet: row 1, column 'label': label 'high' is not a number"),
    Bad("cls", "t_group_multiline_then_error.csv", "t_group_multiline_then_error.csv:5:2: empty label",
        options=(("group_column", "writer"),)),
    # The split column is the service's (the stats CLI has none): these go through the API and the site only.
    Bad("cls", "t_split_bad_value.csv", "t_split_bad_value.csv:3:3: split 'maybe' must be 'public' or 'private'", options=SPLIT),
    Bad("cls", "t_split_all_public.csv",
        "t_split_all_public.csv: the column 'split' must mark some items 'public' and some 'private'.", options=SPLIT),
    Bad("cls", "t_split_missing.csv", "t_split_missing.csv:1: missing split column 'split'", options=SPLIT),
    Bad("cls", "t_split_multiline_then_error.csv",
        f"t_split_multiline_then_error.csv:6:3: unknown label 'cow' {CATDOG}", options=SPLIT + LABELS),
    Bad("cls", "t_split_utf16.csv", f"t_split_utf16.csv: {UTF16}", options=SPLIT),
    Bad("cls", "t_split_latin1.csv", f"t_split_latin1.csv:3:7: {LATIN1.format(0xF6)}", options=SPLIT),
    Bad("cls", "t_split_semicolon.csv", "t_split_semicolon.csv:1: the file seems to use ';' as delimiter; use commas",
        options=SPLIT),
]  # fmt: skip
GOOD_TRUTH = [
    Bad("cls", "t_utf8_bom.csv", None),
    Bad("cls", "t_quoted_crlf.csv", None),
    Bad("cls", "t_split.parquet", None, options=SPLIT),
]
SERVICE_ONLY = {"split_column"}


def _ids(cases: list[Bad]) -> list[str]:
    return [c.file for c in cases]


def where_of(message: str) -> dict[str, Any]:
    """``extra`` as the API must give it, read off the message's ``file:line:column:`` prefix."""
    m = re.match(r"^(?P<file>[^:]+?)(?::(?P<line>\d+))?(?::(?P<column>\d+))?: ", message)
    assert m, message
    out: dict[str, Any] = {"file": m["file"]}
    if m["line"]:
        out["line"] = int(m["line"])
    if m["column"]:
        out["column"] = int(m["column"])
    return out


def check_message(actual: str, case: Bad) -> None:
    assert case.message is not None
    if case.prefix:
        assert actual.startswith(case.message), actual
    else:
        assert actual == case.message


# --- the world ----------------------------------------------------------------------------------------
@dataclass
class World:
    challenge: Challenge
    organizer: User
    participant: User
    storage: Path


@pytest.fixture
def world(db, settings, tmp_path: Path) -> World:  # type: ignore[no-untyped-def]
    return make_world(settings, tmp_path)


def make_world(settings: Any, tmp_path: Path) -> World:
    from django.core.cache import cache

    cache.clear()  # throttle counters outlive a test
    settings.PASSWORD_HASHERS = FAST_HASHERS
    storage = tmp_path / "uploads"
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(storage), "base_url": None},
        },
    }
    organizer = User.objects.create_user(username="olga", password=PASSWORD)
    participant = User.objects.create_user(username="pat", password=PASSWORD)
    challenge = challenge_create(
        organizer=organizer, slug="bad", title="Bad input", resamples=100, daily_limit=1, total_limit=5
    )
    for slug, (metric, labels) in TASKS.items():
        task_create(
            challenge=challenge, slug=slug, title=slug, metric=metric, labels=labels or None,
            truth=(VALID / f"{slug}.csv").read_bytes(), truth_name=f"{slug}.csv",
        )  # fmt: skip
    return World(challenge=challenge, organizer=organizer, participant=participant, storage=storage)


def stored_files(world: World) -> list[Path]:
    return [p for p in world.storage.rglob("*") if p.is_file()] if world.storage.exists() else []


def assert_nothing_stored_and_not_charged(world: World, api: APIClient) -> None:
    assert Submission.objects.count() == 0
    assert stored_files(world) == []
    # Not charged: with a daily limit of 1 the team can still submit once, and the file is stored.
    good = api.post(
        "/api/challenges/bad/submissions/",
        {"name": "good", "file:cls": SimpleUploadedFile("good.csv", (PREDICTIONS / "quoted_crlf.csv").read_bytes())},
        format="multipart",
    )  # fmt: skip
    assert good.status_code == 201, good.content
    assert len(stored_files(world)) == 1
    again = api.post(
        "/api/challenges/bad/submissions/",
        {"name": "again", "file:cls": SimpleUploadedFile("good.csv", (PREDICTIONS / "quoted_crlf.csv").read_bytes())},
        format="multipart",
    )  # fmt: skip
    assert again.status_code == 429  # the limit is real, so the check above is not vacuous


def api_for(user: User) -> APIClient:
    client = APIClient()
    client.force_authenticate(user=user)
    return client


# --- predictions through the API and the site ---------------------------------------------------------
@pytest.mark.parametrize("case", BAD_PREDICTIONS, ids=_ids(BAD_PREDICTIONS))
def test_bad_predictions_file_over_the_api_is_a_located_400_stores_nothing_and_is_not_charged(
    world: World, case: Bad
) -> None:
    api = api_for(world.participant)
    data = (PREDICTIONS / case.file).read_bytes()
    r = api.post(
        "/api/challenges/bad/submissions/",
        {"name": "bad", f"file:{case.task}": SimpleUploadedFile(case.file, data)},
        format="multipart",
    )
    assert r.status_code == 400, r.content
    body = r.json()
    check_message(body["message"], case)
    assert case.message is not None
    assert body["extra"] == where_of(case.message)
    assert_nothing_stored_and_not_charged(world, api)


@pytest.mark.parametrize("case", GOOD_PREDICTIONS, ids=_ids(GOOD_PREDICTIONS))
def test_valid_oddities_are_accepted_over_the_api(world: World, case: Bad) -> None:
    data = (PREDICTIONS / case.file).read_bytes()
    r = api_for(world.participant).post(
        "/api/challenges/bad/submissions/",
        {"name": "ok", f"file:{case.task}": SimpleUploadedFile(case.file, data)},
        format="multipart",
    )
    assert r.status_code == 201, r.content
    assert r.json()["files"][0]["name"] == case.file
    assert len(stored_files(world)) == 1


WEB_PREDICTIONS = [
    c for c in BAD_PREDICTIONS if c.file != "empty.csv"
]  # the form refuses an empty file itself


@pytest.mark.parametrize("case", WEB_PREDICTIONS, ids=_ids(WEB_PREDICTIONS))
def test_bad_predictions_file_in_the_web_form_shows_the_located_message_and_stores_nothing(
    world: World, case: Bad
) -> None:
    client = Client()
    client.force_login(world.participant)
    data = (PREDICTIONS / case.file).read_bytes()
    r = client.post(
        "/c/bad/submit/", {"name": "bad", f"file_{case.task}": SimpleUploadedFile(case.file, data)}
    )
    assert r.status_code == 400
    page = html.unescape(r.content.decode())
    assert case.message is not None
    assert case.message in page, page[:2000]
    assert Submission.objects.count() == 0 and stored_files(world) == []


def test_an_empty_file_in_the_web_form_is_refused_by_the_form(world: World) -> None:
    client = Client()
    client.force_login(world.participant)
    r = client.post("/c/bad/submit/", {"name": "bad", "file_cls": SimpleUploadedFile("empty.csv", b"")})
    assert r.status_code == 400
    page = html.unescape(r.content.decode())
    # one message that names the file, in the words of the API and lb (issue 22, A2)
    assert "empty.csv: the file is empty" in page and "Choose at least one" not in page
    assert Submission.objects.count() == 0 and stored_files(world) == []


@pytest.mark.parametrize("case", GOOD_PREDICTIONS, ids=_ids(GOOD_PREDICTIONS))
def test_valid_oddities_are_accepted_by_the_web_form(world: World, case: Bad) -> None:
    client = Client()
    client.force_login(world.participant)
    data = (PREDICTIONS / case.file).read_bytes()
    r = client.post(
        "/c/bad/submit/", {"name": "ok", f"file_{case.task}": SimpleUploadedFile(case.file, data)}
    )
    assert r.status_code == 302, html.unescape(r.content.decode())[:2000]
    assert Submission.objects.count() == 1


# --- hidden-labels files through the API and the site -------------------------------------------------
def _truth_fields(case: Bad, data: bytes, *, web: bool) -> dict[str, Any]:
    metric = TASKS[case.task][0]
    fields: dict[str, Any] = {"slug": "new", "title": "New", "metric": metric, **dict(case.options)}
    fields["truth"] = SimpleUploadedFile(case.file, data)
    if web:
        fields.setdefault("labels", "")
        fields.setdefault("group_column", "")
        fields.setdefault("split_column", "")
    return fields


@pytest.mark.parametrize("case", BAD_TRUTH, ids=_ids(BAD_TRUTH))
def test_bad_labels_file_over_the_api_is_a_located_400_and_creates_no_task(world: World, case: Bad) -> None:
    r = api_for(world.organizer).post(
        "/api/challenges/bad/tasks/",
        _truth_fields(case, (TRUTH / case.file).read_bytes(), web=False),
        format="multipart",
    )
    assert r.status_code == 400, r.content
    body = r.json()
    if case.file == "t_empty.csv":  # DRF's file field refuses it before the parser sees it
        assert body == {
            "message": "Invalid input. truth: The submitted file is empty.",
            "extra": {"fields": {"truth": ["The submitted file is empty."]}},
        }
        return
    check_message(body["message"], case)
    assert case.message is not None
    where = where_of(case.message)
    assert {k: body["extra"][k] for k in where} == where
    assert Task.objects.count() == 3 and TaskTruth.objects.count() == 3
    assert stored_files(world) == []


@pytest.mark.parametrize("case", BAD_TRUTH, ids=_ids(BAD_TRUTH))
def test_bad_labels_file_in_the_web_form_shows_the_located_message_and_creates_no_task(
    world: World, case: Bad
) -> None:
    if case.file == "t_empty.csv":
        pytest.skip("the form refuses an empty file itself (see the API case)")
    client = Client()
    client.force_login(world.organizer)
    r = client.post("/c/bad/tasks/new/", _truth_fields(case, (TRUTH / case.file).read_bytes(), web=True))
    assert r.status_code == 400
    assert case.message is not None
    assert case.message in html.unescape(r.content.decode())
    assert Task.objects.count() == 3 and TaskTruth.objects.count() == 3


@pytest.mark.parametrize("case", GOOD_TRUTH, ids=_ids(GOOD_TRUTH))
def test_valid_labels_file_oddities_are_accepted(world: World, case: Bad) -> None:
    r = api_for(world.organizer).post(
        "/api/challenges/bad/tasks/",
        _truth_fields(case, (TRUTH / case.file).read_bytes(), web=False),
        format="multipart",
    )
    assert r.status_code == 201, r.content
    assert r.json()["n_items"] == 4
    assert r.json()["has_private_split"] is (case.file == "t_split.parquet")


@pytest.mark.parametrize(
    "name", ["t_replace_missing_ids.csv", "t_replace_unknown_ids.csv", "t_duplicate_ids.csv", "t_archive.zip"]
)
def test_replacing_labels_with_a_bad_file_is_a_400_and_keeps_the_old_labels(world: World, name: str) -> None:
    before = TaskTruth.objects.get(task__slug="cls")
    r = api_for(world.organizer).put(
        "/api/challenges/bad/tasks/cls/truth/",
        {"truth": SimpleUploadedFile(name, (TRUTH / name).read_bytes())},
        format="multipart",
    )
    assert r.status_code == 400, r.content
    message = r.json()["message"]
    assert message.startswith(f"{name}:")
    if "replace" in name:
        assert "the new labels file must list the same items" in message
    after = TaskTruth.objects.get(task__slug="cls")
    assert (after.version, after.labels) == (before.version, before.labels)


# --- the parser on its own: python -m stats score ------------------------------------------------------
CLI_PREDICTIONS = BAD_PREDICTIONS + GOOD_PREDICTIONS


@pytest.mark.parametrize("case", CLI_PREDICTIONS, ids=_ids(CLI_PREDICTIONS))
def test_stats_score_reports_the_same_message_for_a_bad_predictions_file(
    case: Bad, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(PREDICTIONS)
    metric = TASKS[case.task][0]
    code = stats_cli.main(
        ["score", "--truth", str(VALID / f"{case.task}.csv"), "--metric", metric, "--resamples", "100",
         "--interval", "percentile", case.file]
    )  # fmt: skip
    err = capsys.readouterr().err
    if case.message is None:
        assert code == 0, err
        return
    assert code == 2
    check_message(err.rstrip("\n"), case)


CLI_TRUTH = [c for c in BAD_TRUTH + GOOD_TRUTH if not SERVICE_ONLY & dict(c.options).keys()]


@pytest.mark.parametrize("case", CLI_TRUTH, ids=_ids(CLI_TRUTH))
def test_stats_score_reports_the_same_message_for_a_bad_labels_file(
    case: Bad, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(TRUTH)
    metric = TASKS[case.task][0]
    options = dict(case.options)
    args = [
        "score",
        "--truth",
        case.file,
        "--metric",
        metric,
        "--resamples",
        "100",
        "--interval",
        "percentile",
    ]
    if "labels" in options:
        args += ["--labels", options["labels"]]
    if "group_column" in options:
        args += ["--group-column", options["group_column"]]
    prediction = PREDICTIONS / "quoted_crlf.csv" if case.task == "cls" else VALID / "reg_predictions.csv"
    code = stats_cli.main([*args, str(prediction)])
    err = capsys.readouterr().err
    if case.message is None:
        assert code == 0, err
        return
    assert code == 2, err
    check_message(err.rstrip("\n"), case)


def test_python_m_stats_score_exits_2_with_the_message_on_stderr() -> None:
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "stats", "score", "--truth", str(VALID / "cls.csv"), "--metric", "accuracy",
         "duplicate_ids.csv"],
        cwd=PREDICTIONS, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 2
    assert out.stderr == "duplicate_ids.csv:4:1: duplicate id 'it-1' (first on line 2)\n"


# --- formulas in names: accepted as text, neutralised in every CSV export --------------------------------
FORMULA = "=cmd|' /C calc'!A0"


def test_a_formula_as_submission_name_is_kept_as_text_and_neutralised_in_every_csv_export(
    world: World, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    import csv

    api = api_for(world.participant)
    with django_capture_on_commit_callbacks(execute=True):
        r = api.post(
            "/api/challenges/bad/submissions/",
            {"name": FORMULA, "description": "@SUM(1+1)*cmd|' /C calc'!A0", "link": "",
             "file:cls": SimpleUploadedFile("p.csv", (PREDICTIONS / "quoted_crlf.csv").read_bytes())},
            format="multipart",
        )  # fmt: skip
    assert r.status_code == 201, r.content
    assert r.json()["name"] == FORMULA  # JSON keeps the text as it is
    assert Submission.objects.get().status == "scored"
    board = APIClient().get("/api/challenges/bad/leaderboard/?task=cls").json()
    assert board["rows"][0]["name"] == FORMULA

    exports = {
        "api csv": APIClient().get("/api/challenges/bad/leaderboard/?task=cls&format=csv"),
        "api csv (Accept)": APIClient().get("/api/challenges/bad/leaderboard/?task=cls", HTTP_ACCEPT="text/csv"),
        "web board.csv": Client().get("/c/bad/t/cls/board.csv"),
    }  # fmt: skip
    for what, response in exports.items():
        assert response.status_code == 200, what
        rows = list(csv.reader(io.StringIO(response.content.decode())))
        cells = [cell for row in rows for cell in row]
        assert "'" + FORMULA in cells, (what, cells)
        assert not any(
            cell.startswith(("=", "+", "-", "@", "\t", "\r")) and not _is_number(cell) for cell in cells
        ), what
    page = Client().get("/c/bad/?task=cls").content.decode()
    assert html.escape(FORMULA) in page or FORMULA.replace("'", "&#x27;") in page
    web_json = Client().get("/c/bad/t/cls/board.json").json()
    assert web_json["rows"][0]["name"] == FORMULA


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


# --- a 2 GB upload, refused before it is read whole -----------------------------------------------------
TWO_GB = 2 * 1024**3
BOUNDARY = "----reliability-boundary"


class GeneratedBody:
    """A multipart body of ``size`` bytes of CSV, produced while the server reads it (never stored)."""

    def __init__(self, fields: dict[str, str], *, file_field: str, file_name: str, size: int) -> None:
        head = "".join(
            f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'
            for k, v in fields.items()
        )
        head += (
            f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{file_field}"; filename="{file_name}"\r\n'
            "Content-Type: text/csv\r\n\r\nid,prediction\n"
        )
        self.head = head.encode()
        self.tail = f"\r\n--{BOUNDARY}--\r\n".encode()
        self.size = size
        self.length = len(self.head) + size + len(self.tail)
        self.served = 0
        self.row = b"it-1,cat\n" * 7000  # ~63 KB

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0:
            raise AssertionError("the server asked for the whole 2 GB body at once")
        out = bytearray()
        while len(out) < n and self.served < self.length:
            pos = self.served
            if pos < len(self.head):
                piece = self.head[pos : pos + n - len(out)]
            elif pos < len(self.head) + self.size:
                left = len(self.head) + self.size - pos
                piece = self.row[: min(n - len(out), left, len(self.row))]
            else:
                t = pos - len(self.head) - self.size
                piece = self.tail[t : t + n - len(out)]
            out += piece
            self.served += len(piece)
        return bytes(out)

    def readline(self, n: int = -1) -> bytes:
        return self.read(min(n, 65536) if n and n > 0 else 65536)


def stream(path: str, body: GeneratedBody, headers: dict[str, str]) -> tuple[int, bytes, int]:
    """Send ``body`` to the WSGI application; answer (status, content, peak traced memory in bytes)."""
    environ = {
        "REQUEST_METHOD": "POST", "PATH_INFO": path, "SCRIPT_NAME": "", "QUERY_STRING": "",
        "SERVER_NAME": "testserver", "SERVER_PORT": "80", "SERVER_PROTOCOL": "HTTP/1.1",
        "wsgi.url_scheme": "http", "wsgi.input": body, "wsgi.errors": io.StringIO(),
        "wsgi.multithread": False, "wsgi.multiprocess": False, "wsgi.run_once": False, "wsgi.version": (1, 0),
        "CONTENT_TYPE": f"multipart/form-data; boundary={BOUNDARY}", "CONTENT_LENGTH": str(body.length),
        **headers,
    }  # fmt: skip
    status: list[str] = []
    tracemalloc.start()
    try:
        result = WSGIHandler()(environ, lambda s, h, *a: status.append(s))
        content = b"".join(result)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return int(status[0].split()[0]), content, peak


@pytest.fixture
def committed_world(transactional_db, settings, tmp_path: Path) -> Iterator[World]:  # type: ignore[no-untyped-def]
    # The WSGI handler opens its own request cycle (and closes connections): the rows must be committed.
    yield make_world(settings, tmp_path)


def _assert_stopped_early(body: GeneratedBody, peak: int, limit: int) -> None:
    print(f"read {body.served:,} of {body.length:,} bytes; peak traced memory {peak:,} bytes")
    assert body.served > limit  # the handler counted the bytes up to the limit, then stopped
    assert body.served < limit + 2 * 1024 * 1024, f"read {body.served:,} bytes of {body.length:,}"
    assert peak < 32 * 1024 * 1024, f"peak traced memory {peak:,} bytes"


def test_a_2_gb_predictions_upload_over_the_api_is_refused_while_it_streams_in(
    committed_world: World, settings
) -> None:  # type: ignore[no-untyped-def]
    import resource

    limit = settings.UPLOAD_MAX_BYTES
    token = Token.objects.create(user=committed_world.participant).key
    body = GeneratedBody({"name": "huge"}, file_field="file:cls", file_name="huge.csv", size=TWO_GB)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    status, content, peak = stream(
        "/api/challenges/bad/submissions/", body, {"HTTP_AUTHORIZATION": f"Token {token}"}
    )
    rss_growth = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before) * 1024
    assert status == 400, content[:500]
    import json

    assert json.loads(content) == {
        "message": TOO_LARGE.format(name="huge.csv", limit=limit),
        "extra": {"file": "huge.csv"},
    }
    _assert_stopped_early(body, peak, limit)
    assert rss_growth < 64 * 1024 * 1024, f"max RSS grew by {rss_growth:,} bytes"
    assert Submission.objects.count() == 0 and stored_files(committed_world) == []


def test_a_2_gb_labels_upload_over_the_api_is_refused_while_it_streams_in(
    committed_world: World, settings
) -> None:  # type: ignore[no-untyped-def]
    token = Token.objects.create(user=committed_world.organizer).key
    body = GeneratedBody(
        {"slug": "huge", "title": "Huge", "metric": "accuracy"},
        file_field="truth",
        file_name="huge.csv",
        size=TWO_GB,
    )
    status, content, peak = stream(
        "/api/challenges/bad/tasks/", body, {"HTTP_AUTHORIZATION": f"Token {token}"}
    )
    assert status == 400, content[:500]
    # A new task's metric (so its kind) is a field of the body: the file streams up to the largest limit.
    limit = upload_limit()
    assert limit >= settings.UPLOAD_MAX_BYTES
    assert TOO_LARGE.format(name="huge.csv", limit=limit).encode() in content
    _assert_stopped_early(body, peak, limit)
    assert Task.objects.count() == 3


@pytest.mark.parametrize(("path", "field", "fields"), [
    ("/c/bad/submit/", "file_cls", {"name": "huge"}),
    ("/c/bad/tasks/new/", "truth", {"slug": "huge", "title": "Huge", "metric": "accuracy"}),
])  # fmt: skip
def test_a_2_gb_upload_in_a_web_form_is_refused_while_it_streams_in(
    committed_world: World, settings, path: str, field: str, fields: dict[str, str]
) -> None:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(committed_world.organizer)
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    secret = "a" * 32
    body = GeneratedBody(
        {"csrfmiddlewaretoken": secret, **fields}, file_field=field, file_name="huge.csv", size=TWO_GB
    )
    headers = {
        "HTTP_COOKIE": f"{settings.SESSION_COOKIE_NAME}={session}; {settings.CSRF_COOKIE_NAME}={secret}"
    }
    status, content, peak = stream(path, body, headers)
    assert status == 400, content[:500]
    limit = upload_limit() if path.endswith("/tasks/new/") else settings.UPLOAD_MAX_BYTES
    expected = UPLOAD_TOO_LARGE.format(name="huge.csv", limit=limit)
    assert expected in html.unescape(content.decode())
    _assert_stopped_early(body, peak, limit)
    assert Submission.objects.count() == 0 and Task.objects.count() == 3
