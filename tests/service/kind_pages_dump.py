"""Dump the pages, downloads and board rows of a task of every kind, to compare two trees byte for byte.

Not collected by the suite (no ``test_`` prefix); run it explicitly in each tree, then ``diff -r``:

    DUMP_DIR=/tmp/pages-a PYTHONPATH=$PWD python -m pytest -q -p no:cacheprovider tests/service/kind_pages_dump.py

Timestamps, CSRF tokens and idempotency keys are masked. The segmentation example zip differs between
any two downloads in its members' mtimes only (compare the members). Used for issue 19's task-kind
registry (docs/adr/0006-task-kinds.md): every dumped file was identical before and after.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from leaderboard.rankings.models import BoardSnapshot
from leaderboard.submissions.models import Status, Submission
from tests.service.api_support import FAST_HASHERS, client_for, reset_throttles
from tests.service.factories import csv_bytes, make_truth, predictions, user
from tests.service.vision_support import (
    CLASS_NAMES,
    coco_results,
    coco_truth,
    json_bytes,
    label_maps,
    noisy,
    zip_of,
)

OUT = Path(os.environ.get("DUMP_DIR", ""))
pytestmark = pytest.mark.skipif(not os.environ.get("DUMP_DIR"), reason="set DUMP_DIR to dump the pages")
STAMP = re.compile(
    r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?(\+00:00|Z| UTC)?|csrfmiddlewaretoken\" value=\"[^\"]+|[0-9a-f]{32}|\d+ (second|minute)s? ago|value=\"[0-9a-f-]{20,}\""
)


def _dump(name: str, data: bytes) -> None:
    try:
        text = data.decode()
        data = STAMP.sub("<T>", text).encode()
    except UnicodeDecodeError:
        pass
    (OUT / name).write_bytes(data)


def test_dump(transactional_db, settings) -> None:  # type: ignore[no-untyped-def]
    settings.PASSWORD_HASHERS = FAST_HASHERS
    reset_throttles()
    OUT.mkdir(parents=True, exist_ok=True)
    org_user = user("org")
    org = client_for(org_user)
    r = org.post("/api/challenges/", {"slug": "k", "title": "k", "resamples": 200}, format="json")
    assert r.status_code == 201
    ids, truth = make_truth(120)
    bin_truth = ["pos" if t == truth[0] else "neg" for t in truth]
    for slug, metric, tr in (
        ("acc", "accuracy", truth),
        ("auc", "roc_auc", bin_truth),
        ("mae", "mae", [str(i % 7) for i in range(120)]),
    ):
        r = org.post(
            "/api/challenges/k/tasks/",
            {
                "slug": slug,
                "title": slug,
                "metric": metric,
                "truth": SimpleUploadedFile("t.csv", csv_bytes("id,label", list(zip(ids, tr, strict=True)))),
            },
            format="multipart",
        )
        assert r.status_code == 201, r.content
    ct = coco_truth(12, seed=40)
    maps = label_maps(8, seed=41)
    r = org.post(
        "/api/challenges/k/tasks/",
        {
            "slug": "det",
            "title": "det",
            "metric": "coco_ap50",
            "truth": SimpleUploadedFile("instances.json", json_bytes(ct)),
        },
        format="multipart",
    )
    assert r.status_code == 201
    r = org.post(
        "/api/challenges/k/tasks/",
        {
            "slug": "seg",
            "title": "seg",
            "metric": "miou",
            "labels": ",".join(CLASS_NAMES),
            "truth": SimpleUploadedFile("l.zip", zip_of(maps)),
        },
        format="multipart",
    )
    assert r.status_code == 201
    import numpy as np

    for k, (name, q) in enumerate((("a", 0.9), ("b", 0.6))):
        rng = np.random.default_rng(k)
        files = {
            "file:acc": SimpleUploadedFile("p.csv", predictions(ids, truth, q, seed=k)),
            "file:auc": SimpleUploadedFile(
                "p.csv", csv_bytes("id,score", [(i, f"{rng.random():.3f}") for i in ids])
            ),
            "file:mae": SimpleUploadedFile(
                "p.csv", csv_bytes("id,prediction", [(i, f"{rng.random() * 6:.3f}") for i in ids])
            ),
            "file:det": SimpleUploadedFile("d.json", json_bytes(coco_results(ct, seed=42 + k, quality=q))),
            "file:seg": SimpleUploadedFile("s.zip", zip_of(noisy(maps, seed=44 + k, error=1 - q))),
        }
        r = client_for(user(name)).post(
            "/api/challenges/k/submissions/", {"name": name, **files}, format="multipart"
        )
        assert r.status_code == 201, r.content
    assert Submission.objects.filter(status=Status.SCORED).count() == 2, list(
        Submission.objects.values("status", "error")
    )
    web = Client()
    web.force_login(org_user)
    _dump("submit.html", web.get("/c/k/submit/").content)
    _dump("challenge.html", web.get("/c/k/").content)
    for t in ("acc", "auc", "mae", "det", "seg"):
        _dump(f"challenge-{t}.html", web.get(f"/c/k/?task={t}").content)
        _dump(f"example-{t}", web.get(f"/c/k/t/{t}/example.csv").content)
        _dump(f"api-task-{t}.json", org.get(f"/api/challenges/k/tasks/{t}/").content)
        _dump(f"board-{t}.csv", web.get(f"/c/k/t/{t}/board.csv").content)
        _dump(f"classes-{t}.html", web.get(f"/c/k/t/{t}/classes/").content)
        snap = BoardSnapshot.objects.filter(task__slug=t).order_by("-sequence").first()
        _dump(f"rows-{t}.json", json.dumps(snap.rows, sort_keys=True, default=str).encode())
        for s in Submission.objects.order_by("pk"):
            _dump(f"entry-{t}-{s.pk}.html", web.get(f"/c/k/t/{t}/entries/{s.pk}/").content)
    for s in Submission.objects.order_by("pk"):
        _dump(f"submission-{s.pk}.html", web.get(f"/submissions/{s.pk}/").content)
    _dump("api-tasks.json", org.get("/api/challenges/k/tasks/").content)
