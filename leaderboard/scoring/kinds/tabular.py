"""Tabular tasks: one prediction per item (classification, ranking, regression), a CSV or Parquet file.

The reading and scoring are :mod:`leaderboard.scoring.engine`'s (``stats.io`` and ``stats.engine``).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from django.conf import settings

from leaderboard.core.exports import neutralise
from leaderboard.scoring import engine
from leaderboard.scoring.kinds.base import ExampleFile, Files, TaskKind, register
from stats.metrics import Metric, get_metric

if TYPE_CHECKING:
    from leaderboard.challenges.models import Challenge, Task
    from leaderboard.scoring.selectors import HiddenTruth

#: The prediction kinds a tabular file holds (``stats.metrics.PredictionKind``), and what each says.
_WHAT = {
    "label": "one predicted label per item, from the label set",
    "ranked_labels": "the predicted labels per item, best first, one per column",
    "score": "the score (probability) of the positive class per item",
    "value": "one predicted number per item",
}
#: Predictions that are labels of the label set: an entry's per-class breakdown is computed from them.
LABEL_KINDS = ("label", "ranked_labels")


class Tabular(TaskKind):
    name = "tabular"
    label = "One prediction per item (classification, regression)"
    upload_setting = "UPLOAD_MAX_BYTES"
    upload_help = "CSV or Parquet"
    upload_accept = ".csv,.parquet,.pq,text/csv"
    format_template = "web/kinds/tabular_format.html"
    example_note = "every public item id, a placeholder prediction"
    has_score_details: ClassVar[bool] = False

    def claims(self, metric: Metric) -> bool:
        return metric.task_kind == "items" and metric.prediction_kind in _WHAT

    def parse_truth(
        self,
        data: bytes,
        *,
        name: str,
        metric: str,
        labels: Sequence[str] | None,
        group_column: str | None,
        split_column: str | None,
        positive: str | None,
        options: Mapping[str, Any],
    ) -> engine.ParsedTruth:
        return engine.parse_truth(
            data,
            name=name,
            metric=metric,
            labels=labels,
            group_column=group_column,
            split_column=split_column,
            positive=positive,
        )

    def validate_predictions(self, data: bytes, *, name: str, task: Task) -> None:
        engine.validate_predictions(data, name=name, task=task)

    def score_files(
        self, *, task: Task, truth: HiddenTruth, files: Files, challenge: Challenge
    ) -> list[engine.SplitScore]:
        return engine.score_files(task=task, truth=truth, files=files, challenge=challenge)

    # --- fan-out: items x resamples x runs -------------------------------------------------------------
    def fans_out(self, *, task: Task, runs: int, resamples: int) -> bool:
        """Items x resamples x runs at least ``FANOUT_MIN_COST`` (the product ``W @ S`` and the metric's
        finalisation grow with it)."""
        return bool(task.n_items * resamples * max(1, runs) >= settings.FANOUT_MIN_COST)

    def fanout_prepare(
        self, *, task: Task, truth: HiddenTruth, files: Files, challenge: Challenge
    ) -> dict[str, Any] | None:
        splits = []
        for plan in engine.tabular_plan(task=task, truth=truth, files=files):
            values, jackknifes = engine.tabular_fixed_parts(plan, challenge=challenge)
            splits.append({"plan": plan, "values": values, "jackknifes": jackknifes})
        return {"splits": splits, "resamples": challenge.resamples, "seed": challenge.seed}

    def fanout_chunk(self, payload: dict[str, Any], chunks: range) -> dict[str, np.ndarray]:
        """Keyed ``split:run``."""
        arrays: dict[str, np.ndarray] = {}
        for i, split in enumerate(payload["splits"]):
            plan: engine.TabularPlan = split["plan"]
            replicates = engine.tabular_chunk_replicates(
                plan, resamples=int(payload["resamples"]), seed=int(payload["seed"]), chunks=chunks
            )
            for r, values in enumerate(replicates):
                arrays[f"{i}:{r}"] = values
        return arrays

    def fanout_join(
        self,
        *,
        task: Task,
        challenge: Challenge,
        payload: dict[str, Any],
        parts: list[tuple[range, dict[str, np.ndarray]]],
    ) -> list[engine.SplitScore]:
        out = []
        for i, split in enumerate(payload["splits"]):
            runs = len(split["values"])
            out.append(
                engine.tabular_split_score(
                    split=split["plan"].split,
                    values=split["values"],
                    replicates=[np.concatenate([arr[f"{i}:{r}"] for _, arr in parts]) for r in range(runs)],
                    jackknifes=split["jackknifes"],
                    item_statistics=split["plan"].item_statistics,
                    challenge=challenge,
                )
            )
        return out

    # --- the board and the breakdown --------------------------------------------------------------------
    def supports_breakdown(self, task: Task) -> bool:
        """Tasks whose predictions are labels of a known label set."""
        return bool(task.labels) and get_metric(task.metric).prediction_kind in LABEL_KINDS

    # --- the public description -------------------------------------------------------------------------
    def prediction_format(self, metric: str) -> engine.PredictionFormat:
        return engine.prediction_format(metric)

    def format_text(self, fmt: engine.PredictionFormat) -> str:
        return _WHAT.get(fmt.kind, fmt.kind)

    def api_format(self, task: Task, fmt: engine.PredictionFormat) -> dict[str, Any]:
        return {
            "file_types": ["csv", "parquet"],
            "columns": fmt.columns,
            "prediction_kind": fmt.kind,
            "probabilities": fmt.probabilities,
            "labels": task.labels,
            "rows": task.n_items,
            "note": "One row per item id of the task, in any order: no missing, duplicate or unknown ids.",
        }

    def example_file(self, task: Task) -> ExampleFile:
        return ExampleFile(f"{task.slug}-example.csv", "text/csv; charset=utf-8", example_csv(task).encode())


def example_csv(task: Task) -> str:
    """A valid predictions file for the task's public items, with a placeholder prediction for each."""
    fmt = engine.prediction_format(task.metric)
    labels = [str(x) for x in task.labels] or ["0"]
    if fmt.kind == "label":
        values = [labels[0]]
    elif fmt.kind == "ranked_labels":
        values = [labels[i % len(labels)] for i in range(len(fmt.columns) - 1)]
    elif fmt.kind == "score":
        values = ["0.5"]
    else:
        values = ["0.0"]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(fmt.columns)
    for item in task.item_ids:
        # The download rule (core.exports): formula-like ids get an apostrophe, which upload accepts back.
        writer.writerow([neutralise(item), *values])
    return out.getvalue()


TABULAR = register(Tabular())
