"""A text task's primary metric and its secondary metrics through the service (issue 20, item 5).

The organizer names the primary metric (the task's ``metric``, which ranks) and secondary metrics when the
task is created. The worker scores every metric from the same files; the board, the API and both CSV
downloads show each secondary metric's value and its paired test against the leader, adjusted across the
secondary metrics and labelled so. The p-values are recomputed here from sacreBLEU's statistics with the
library functions (``stats.compare.paired_randomization``, ``adjust_across_metrics``), the values with
sacreBLEU's ``corpus_score``.
"""

from __future__ import annotations

import csv
import io
from typing import Any

import numpy as np
import pytest
import sacrebleu
from django.test import Client

from leaderboard.challenges.models import Task
from leaderboard.rankings.exports import CSV_COLUMNS, board_csv
from leaderboard.rankings.precision import participant_rows, public_rows
from leaderboard.scoring.models import MetricScore
from leaderboard.submissions.models import Status
from stats.compare import paired_randomization
from stats.text.extract import text_metric
from stats.text.significance import adjust_across_metrics
from tests.service.api_support import client_for
from tests.service.factories import user
from tests.service.test_text_tasks import GOOD, REFS, WEAK, board, lines, make_challenge, submit

MID = [g if i % 2 else w for i, (g, w) in enumerate(zip(GOOD, WEAK, strict=True))]
SYSTEMS = {"good": GOOD, "mid": MID, "weak": WEAK}
SACREBLEU = {"bleu": sacrebleu.BLEU(), "chrf": sacrebleu.CHRF(), "ter": sacrebleu.TER()}


pytestmark = pytest.mark.usefixtures("fresh_throttles")


def add_task(client: Any, slug: str, metric: str, secondary: Any, task: str = "mt", truth: bytes = b""):
    body = {
        "slug": task,
        "title": metric,
        "metric": metric,
        "truth": _upload("ref.txt", truth or lines(REFS)),
    }
    if secondary is not None:
        body["secondary_metrics"] = secondary
    return client.post(f"/api/challenges/{slug}/tasks/", body, format="multipart")


def _upload(name: str, data: bytes) -> Any:
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile(name, data)


def _scored_challenge(slug: str = "t") -> Any:
    org = client_for(user("org"))
    make_challenge(org, slug)
    # one comma-separated value, as a form or ``lb add-task --secondary-metrics chrf,ter`` sends it
    r = add_task(org, slug, "bleu", "chrf,ter")
    assert r.status_code == 201, r.content
    assert r.json()["vision"]["secondary_metrics"] == ["chrf", "ter"]
    for name, hyps in SYSTEMS.items():
        r = submit(client_for(user(name)), slug, name, f"{name}.txt", lines(hyps))
        assert r.status_code == 201 and r.json()["status"] == Status.SCORED, r.content
    return org


def test_secondary_metrics_scored_compared_and_adjusted_end_to_end(transactional_db) -> None:
    org = _scored_challenge()
    task = Task.objects.get(slug="mt")
    snap = board("t")
    rows = snap.rows
    # the primary ranks; its values are sacreBLEU's
    names = [r["name"] for r in rows]
    assert names[0] == "good"
    for r in rows:
        hyps = SYSTEMS[r["name"]]
        assert r["value"] == pytest.approx(SACREBLEU["bleu"].corpus_score(hyps, [REFS]).score, abs=1e-9)
        assert [f["metric"] for f in r["secondary"]] == ["chrf", "ter"]
        for f in r["secondary"]:  # each secondary value is sacreBLEU's corpus score of the same file
            assert f["value"] == pytest.approx(
                SACREBLEU[f["metric"]].corpus_score(hyps, [REFS]).score, abs=1e-9
            )
    assert MetricScore.objects.filter(score__task=task).count() == 2 * len(SYSTEMS)

    _check_p_values(rows, names, task)
    _check_readers(snap, task, org)


def _check_p_values(rows: list[dict[str, Any]], names: list[str], task: Task) -> None:
    """The p-values: the paired randomization test against the leader on the metrics' own statistics,
    with the challenge's resamples and seed; adjusted across the secondary metrics by the library."""
    leader = next(i for i, r in enumerate(rows) if r["is_leader"])
    p: dict[str, Any] = {"bleu": [np.nan if r["p_value"] is None else r["p_value"] for r in rows]}
    for metric in ("chrf", "ter"):
        tm = text_metric(metric)
        statistics = [tm.statistics(SYSTEMS[n], [REFS]).matrix for n in names]
        result = paired_randomization(
            statistics,
            finalize=tm.registry_metric().finalize,
            reference=leader,
            randomizations=task.challenge.resamples,
            seed=task.challenge.seed,
        )
        p[metric] = list(result.p_values)
    want = adjust_across_metrics(p, primary="bleu")
    assert all(f["p_value"] is None and f["p_adjusted"] is None for f in rows[leader]["secondary"])
    others = [(i, f) for i, r in enumerate(rows) if i != leader for f in r["secondary"]]
    for i, f in others:
        assert f["p_value"] == pytest.approx(p[f["metric"]][i], abs=1e-12)
        assert f["p_adjusted"] == pytest.approx(float(want.p_values[f["metric"]][i]), abs=1e-12)
        assert f["p_adjusted"] >= f["p_value"]
    # Holm over two metrics changes something here: the smaller p-value is doubled
    assert any(f["p_adjusted"] > f["p_value"] for _, f in others)


def _check_readers(snap: Any, task: Task, org: Any) -> None:
    """The label: in the stored signature, the API, the board page and the CSV; numbers rounded."""
    rows = snap.rows
    sig = snap.signature["secondary_metrics"]
    when = task.created_at.strftime("%Y-%m-%d %H:%M UTC")
    label = f"adjusted across 2 metrics (Holm); primary: bleu, named before {when}"
    assert sig["label"] == label and sig["primary"] == "bleu" and sig["metrics"] == ["chrf", "ter"]
    assert sig["higher_is_better"] == {"chrf": True, "ter": False}

    api = Client().get("/api/challenges/t/leaderboard/?task=mt").json()
    assert api["signature"]["secondary_metrics"]["label"] == label
    decimals = api["signature"]["decimals"]
    for shown, stored in zip(api["rows"], public_rows(rows, decimals), strict=True):
        assert shown["secondary"] == stored["secondary"]
    # before the reveal a participant reads the board's precision only, secondary values included
    for r in api["rows"]:
        for f in r["secondary"]:
            assert f["value"] == round(f["value"], decimals)
            assert f["p_adjusted"] is None or f["p_adjusted"] == round(f["p_adjusted"], max(decimals, 2))

    page = Client().get("/c/t/").content.decode()
    assert label in page and "p adj." in page

    for url, client in (
        ("/c/t/t/mt/board.csv", Client()),
        ("/api/challenges/t/leaderboard/?task=mt&format=csv", org),
    ):
        response = client.get(url, HTTP_ACCEPT="text/csv")
        assert response.status_code == 200, url
        table = list(csv.DictReader(io.StringIO(response.content.decode())))
        header = list(table[0])
        assert header[: len(CSV_COLUMNS)] == CSV_COLUMNS
        assert header[len(CSV_COLUMNS) :] == [
            "chrf", "chrf_p_vs_leader", "chrf_p_adjusted_across_metrics",
            "ter", "ter_p_vs_leader", "ter_p_adjusted_across_metrics",
        ]  # fmt: skip
        weak = next(t for t in table if t["name"] == "weak")
        weak_row = next(r for r in api["rows"] if r["name"] == "weak")
        assert float(weak["ter_p_adjusted_across_metrics"]) == weak_row["secondary"][1]["p_adjusted"]


def test_the_primary_and_secondary_metrics_cannot_silently_change(transactional_db) -> None:
    org = _scored_challenge()
    url = "/api/challenges/t/tasks/mt/"
    for body in (
        {"metric": "chrf", "public_mode": "plain"},
        {"secondary_metrics": ["bleu"], "public_mode": "plain"},
    ):
        r = org.patch(url, body, format="json")
        assert r.status_code == 400, r.content
        assert "cannot change" in r.content.decode()
    task = Task.objects.get(slug="mt")
    assert task.metric == "bleu" and task.vision["secondary_metrics"] == ["chrf", "ter"]
    # replacing the references keeps the secondary metrics (a setting, not the file's)
    r = org.put(f"{url}truth/", {"truth": _upload("ref.txt", lines(REFS))}, format="multipart")
    assert r.status_code == 200, r.content
    assert Task.objects.get(slug="mt").vision["secondary_metrics"] == ["chrf", "ter"]


@pytest.mark.parametrize(
    ("metric", "secondary", "message"),
    [
        ("bleu", "bleu", "is the task's primary metric"),
        ("bleu", "chrf,accuracy", "accuracy is not a metric of this task's references"),
        ("bleu", "nonsense", "nonsense is not a metric"),
        ("accuracy", "macro_f1", "score their headline metric only"),
    ],
)
def test_secondary_metrics_are_refused_with_the_setting_named(
    transactional_db, metric: str, secondary: str, message: str
) -> None:
    org = client_for(user("org"))
    make_challenge(org, "r")
    truth = b"id,label\n1,a\n2,b\n3,a\n4,b\n" if metric == "accuracy" else b""
    r = add_task(org, "r", metric, secondary, truth=truth)
    assert r.status_code == 400, r.content
    assert message in r.content.decode()
    assert not Task.objects.exists()


def test_wer_as_a_secondary_metric_needs_one_reference() -> None:
    from leaderboard.core.exceptions import ApplicationError
    from leaderboard.scoring.engine import ParsedTruth
    from leaderboard.scoring.kinds import get_kind

    kind = get_kind("text_corpus")
    two = ParsedTruth(ids=["1"], labels=[], label_set=[], groups=None, private=None, vision={"n_refs": 2})
    with pytest.raises(ApplicationError, match="WER takes one reference per segment"):
        kind.secondary_metrics("bleu", ["wer"], two)
    one = ParsedTruth(ids=["1"], labels=[], label_set=[], groups=None, private=None, vision={"n_refs": 1})
    assert kind.secondary_metrics("bleu", ["wer", "chrf", "wer"], one) == ["wer", "chrf"]


def test_a_tie_group_shows_its_largest_secondary_p_values_rounded() -> None:
    def row(name: str, value: float, p: float | None, sec: float) -> dict[str, Any]:
        return {
            "key": name, "name": name, "value": value, "rank": 1, "submission_id": 1,
            "secondary": [{"metric": "chrf", "value": sec, "p_value": p, "p_adjusted": p}],
        }  # fmt: skip

    rows = [row("b", 30.0004, None, 55.1234), row("a", 30.0001, 0.0412, 54.9876), row("c", 20.0, 0.001, 40.0)]
    shown = participant_rows(rows, 2)
    # "a" and "b" tie at two decimals: listed by name, the group's largest p-value for both (the leader
    # "b" would otherwise be told by its missing p-value), each its own value rounded
    assert [r["name"] for r in shown] == ["a", "b", "c"]
    assert [(r.get("secondary") or [{}])[0]["p_value"] for r in shown] == [0.04, 0.04, 0.0]
    assert [(r.get("secondary") or [{}])[0]["value"] for r in shown] == [54.99, 55.12, 40.0]
    # an organizer's exact rows: rounded, each its own
    exact = public_rows(rows, 2)
    assert [(r.get("secondary") or [{}])[0]["p_value"] for r in exact] == [None, 0.04, 0.0]


def test_a_board_without_secondary_metrics_keeps_its_csv_schema() -> None:
    text = board_csv([{"key": "a", "name": "a", "value": 0.5, "rank": 1}], 2)
    assert text.splitlines()[0].split(",") == CSV_COLUMNS


def test_a_board_of_one_entry_shows_its_secondary_values_untested(transactional_db) -> None:
    """No leader to test against: the values, no p-values (a NaN here once failed the board's build)."""
    org = client_for(user("org"))
    make_challenge(org, "one")
    assert add_task(org, "one", "bleu", ["chrf", "ter"]).status_code == 201
    r = submit(client_for(user("good")), "one", "good", "good.txt", lines(GOOD))
    assert r.status_code == 201 and r.json()["status"] == Status.SCORED, r.content
    (row,) = board("one").rows
    assert [(f["metric"], f["p_value"], f["p_adjusted"]) for f in row["secondary"]] == [
        ("chrf", None, None),
        ("ter", None, None),
    ]
    assert row["secondary"][0]["value"] == pytest.approx(SACREBLEU["chrf"].corpus_score(GOOD, [REFS]).score)


def test_the_site_form_names_secondary_metrics_comma_separated(transactional_db) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    organizer = user("org")
    make_challenge(client_for(organizer), "web")
    web = Client()
    web.force_login(organizer)
    form = web.get("/c/web/tasks/new/").content.decode()
    assert 'name="secondary_metrics"' in form
    r = web.post("/c/web/tasks/new/", {
        "title": "MT", "slug": "mt", "metric": "bleu", "ignore_index": "255", "secondary_metrics": "ter, chrf++",
        "truth": SimpleUploadedFile("ref.txt", lines(REFS)),
    })  # fmt: skip
    assert r.status_code == 302, r.content.decode()[:2000]
    assert Task.objects.get(slug="mt").vision["secondary_metrics"] == ["ter", "chrf++"]
    r = web.post("/c/web/tasks/new/", {
        "title": "MT2", "slug": "mt2", "metric": "bleu", "ignore_index": "255", "secondary_metrics": "f1",
        "truth": SimpleUploadedFile("ref.txt", lines(REFS)),
    })  # fmt: skip
    assert r.status_code == 400 and "not a metric of this task" in r.content.decode()
