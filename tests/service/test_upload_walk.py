"""The walk of one uploaded file to its stored score parses the file once for scoring and computes its
per-item statistics once (issue 13: they were computed twice, once inside ``score_entries`` and once more
for the board). Validation at upload uses the parser's fast checker (``check_only``), never a full parse.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from leaderboard.scoring.models import Score
from leaderboard.submissions.models import Status
from leaderboard.submissions.services import submission_create
from stats import io as stats_io
from stats.metrics import Metric
from tests.service.factories import challenge_with_task, predictions, upload, user

pytestmark = pytest.mark.django_db(transaction=True)


def test_one_upload_is_parsed_once_for_scoring_and_its_item_statistics_computed_once(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    challenge, task, ids, truth = challenge_with_task(user("org"), resamples=200)
    parses: list[bool] = []
    computed: list[np.ndarray] = []
    real_read, real_stats = stats_io.read_predictions, Metric.item_statistics

    def read_spy(*args: Any, **kwargs: Any) -> Any:
        parses.append(bool(kwargs.get("check_only")))
        return real_read(*args, **kwargs)

    def stats_spy(self: Metric, *args: Any, **kwargs: Any) -> Any:
        out = real_stats(self, *args, **kwargs)
        computed.append(out)
        return out

    monkeypatch.setattr(stats_io, "read_predictions", read_spy)
    monkeypatch.setattr(Metric, "item_statistics", stats_spy)

    s = submission_create(
        challenge=challenge,
        user=user("p1"),
        name="one",
        files={"main": [upload("one.csv", predictions(ids, truth, 0.8, 1))]},
    )
    s.refresh_from_db()
    assert s.status == Status.SCORED, s.error
    assert parses == [True, False]  # the fast check at upload, then one full parse at scoring
    assert len(computed) == 1  # one run, one split: the per-item statistics once
    stored = Score.objects.get(submission=s, task=task)
    assert np.array_equal(stored.item_statistics_array(), computed[0])  # the ones stored for the board
    assert stored.value == pytest.approx(float(np.mean(computed[0][:, 0])))  # accuracy: share right
