"""The task-kind seam: what a kind of task (tabular, detection, segmentation, ...) decides, and its registry.

A kind is one :class:`TaskKind` subclass in its own module of this package, registered with
:func:`register` (the package imports every kind module once). The rest of the service asks the kind of a
task (``get_kind(task.kind)``) or of a metric (:func:`kind_for_metric`) and never compares a task's kind to
a name: ``tests/architecture/test_kinds_seam.py`` pins that. Adding a kind: docs/adding-a-task-kind.md;
the shape was checked against pairwise-preference tasks in docs/adr/0006-task-kinds.md.

The kinds import their implementations (``scoring/engine.py``, ``scoring/vision.py``), so those two never
import this package (importing ``kinds.base`` runs the package's ``__init__``, which imports every kind).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from django.conf import settings

from leaderboard.challenges.selectors import task_kinds
from leaderboard.challenges.settings_spec import SECONDARY_METRICS
from leaderboard.core.exceptions import ApplicationError
from stats.metrics import Metric, get_metric

if TYPE_CHECKING:
    from leaderboard.challenges.models import Challenge, Task
    from leaderboard.scoring.engine import ParsedTruth, PredictionFormat, SplitScore
    from leaderboard.scoring.selectors import HiddenTruth

#: ``Task.kind``'s default (the model's field default), for a request about no task yet.
DEFAULT_KIND = "tabular"
#: One submission file of a task: its bytes, its display name and its format.
Files = list[tuple[bytes, str, str]]


@dataclass(frozen=True)
class ExampleFile:
    """A valid predictions file for a task, built from its public facts only (the submit page's link)."""

    name: str
    content_type: str
    data: bytes


class TaskKind(ABC):
    """What one kind of task decides. Subclasses set the class attributes and implement the abstract
    methods; the defaults are those of a kind scored one file at a time in one worker.

    Hidden data (the truth, the annotation file) reaches a kind only in :meth:`parse_truth`,
    :meth:`score_files` and the fan-out methods, all called from ``leaderboard.scoring``.
    """

    #: The value stored in ``Task.kind``.
    name: ClassVar[str]
    #: A short description (the admin, the docs).
    label: ClassVar[str]
    #: The setting holding the largest file of this kind (bytes), checked before a file is read whole.
    upload_setting: ClassVar[str] = "UPLOAD_MAX_BYTES"
    #: The predictions field of the submit form: its help text and the file chooser's ``accept``.
    upload_help: ClassVar[str]
    upload_accept: ClassVar[str]
    #: The template (``web/templates/``) of the format paragraph on the submit page; context: ``fmt``
    #: (``web.formats.TaskFormat``), ``task``, ``challenge``.
    format_template: ClassVar[str]
    #: What :meth:`example_file` holds, for the submit page's link (a phrase).
    example_note: ClassVar[str]
    #: Each score stores per-class values with intervals (``Score.details``): the task's per-class page
    #: and the submission page show them.
    has_score_details: ClassVar[bool] = False

    # --- which metrics -------------------------------------------------------------------------------------
    @abstractmethod
    def claims(self, metric: Metric) -> bool:
        """Whether tasks with this headline metric are of this kind (exactly one kind claims a metric)."""

    def task_metric(self, task: Task) -> Metric:
        """The task's metric as scored and compared: the registry's, or (a kind with metric options, text)
        the registry's with the task's own finalizer. The board's randomization tests finalize with it."""
        return get_metric(task.metric)

    def secondary_metrics(self, metric: str, names: Sequence[str], parsed: ParsedTruth) -> list[str]:
        """The task's secondary metrics (the setting ``secondary_metrics``), checked against its headline
        metric and truth: the metrics scored beside the primary one, whose comparisons with the leader are
        adjusted across them (issue 20). A kind scores its headline metric only unless it says otherwise:
        any name is refused here."""
        if names:
            raise ApplicationError(
                f"Tasks of this kind ({self.name}) score their headline metric only; leave "
                "`secondary_metrics` empty.",
                extra={"field": "secondary_metrics"},
            )
        return []

    def secondary_names(self, task: Task) -> list[str]:
        """The task's secondary metrics as named at its creation (``Task.vision``), in that order."""
        return list((task.vision or {}).get(SECONDARY_METRICS) or [])

    def secondary_metric(self, task: Task, name: str) -> Metric:
        """A secondary metric as scored and compared (a kind with metric options: with the task's)."""
        return get_metric(name)

    # --- files ------------------------------------------------------------------------------------------
    def upload_max_bytes(self) -> int:
        """The largest file of a task of this kind."""
        return int(getattr(settings, self.upload_setting))

    @abstractmethod
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
    ) -> ParsedTruth:
        """Read an organizer's hidden file; refuse a test set on which the metric is undefined.

        ``options`` holds the kind's own settings of the task (segmentation: ``ignore_index``,
        ``reduce_zero_label``); a kind ignores the ones it does not know."""

    def replacement_labels(self, task: Task) -> list[str] | None:
        """The label set a replacement truth file is read against (:func:`challenges.services.task_truth_replace`)."""
        return list(task.labels) or None

    def replacement_options(self, task: Task) -> dict[str, Any]:
        """The ``options`` a replacement truth file is read with, from the task's stored public settings."""
        return {}

    @abstractmethod
    def validate_predictions(self, data: bytes, *, name: str, task: Task) -> None:
        """Check a predictions file against the task's PUBLIC facts (never the hidden truth)."""

    # --- scoring ----------------------------------------------------------------------------------------
    @abstractmethod
    def score_files(
        self, *, task: Task, truth: HiddenTruth, files: Files, challenge: Challenge
    ) -> list[SplitScore]:
        """One entry's score per split (its files are runs), with the task's fixed resamples."""

    def fans_out(self, *, task: Task, runs: int, resamples: int) -> bool:
        """Whether an entry is large enough to score by chunks of resamples on several workers."""
        return False

    def fanout_prepare(
        self, *, task: Task, truth: HiddenTruth, files: Files, challenge: Challenge
    ) -> dict[str, Any] | None:
        """The state chunk tasks start from (arrays and JSON, ``scoring.state_codec``), or ``None`` to
        score the entry whole in the prepare step. The fan-out adds ``"kind": self.name``."""
        return None

    def fanout_load(self, payload: dict[str, Any]) -> dict[str, Any]:
        """A prepared state as read back (rebuild what was not stored)."""
        return payload

    def fanout_chunk(self, payload: dict[str, Any], chunks: range) -> dict[str, np.ndarray]:
        """The replicates of chunks ``chunks`` of W, as named arrays."""
        raise RuntimeError(f"{self.name} tasks are not fanned out")

    def fanout_join(
        self,
        *,
        task: Task,
        challenge: Challenge,
        payload: dict[str, Any],
        parts: list[tuple[range, dict[str, np.ndarray]]],
    ) -> list[SplitScore]:
        """The entry's scores from every chunk's arrays (in order), bit-identical to :meth:`score_files`."""
        raise RuntimeError(f"{self.name} tasks are not fanned out")

    # --- the board --------------------------------------------------------------------------------------
    def board_interval(self, metric: str, challenge: Challenge, *, has_jackknife: bool) -> str | None:
        """The board's value-interval method from the challenge's setting: ``auto`` lets the metric choose
        (``None``: ``stats.intervals.default_interval``, Clopper-Pearson for plain proportions, the same as
        the CLI's); BCa falls back to percentile without a jackknife."""
        setting: str = challenge.interval_method
        if setting == "auto":
            return None
        if setting == "bca" and not has_jackknife:
            return "percentile"
        return setting

    def board_warnings(
        self,
        task: Task,
        *,
        names: Sequence[str],
        values: np.ndarray,
        item_statistics: Sequence[np.ndarray] | None,
        groups: np.ndarray | None,
    ) -> list[str]:
        """The kind's own warnings about a board's comparisons (text: BLEU's brevity-penalty kink), shown
        with the board's other warnings; none by default."""
        return []

    def supports_breakdown(self, task: Task) -> bool:
        """Whether an entry's per-class breakdown (confusion matrix) is computed from its predictions."""
        return False

    def segment_values(self, task: Task, item_statistics: np.ndarray) -> np.ndarray | None:
        """Each item's own value of the metric from an entry's stored item statistics (the entry page's
        worst items), or ``None`` for a kind that lists none (the default)."""
        return None

    def segment_texts(self, task: Task, truth: HiddenTruth, data: bytes, name: str) -> list[tuple[str, str]]:
        """Each item's prediction and truth as text, for an organizer's list of worst items (hidden data:
        called from ``scoring.breakdown`` only); only kinds whose :meth:`segment_values` gives values."""
        raise RuntimeError(f"{self.name} tasks list no items")

    # --- the public description -------------------------------------------------------------------------
    @abstractmethod
    def prediction_format(self, metric: str) -> PredictionFormat:
        """What a predictions file looks like (public: the metric alone)."""

    @abstractmethod
    def format_text(self, fmt: PredictionFormat) -> str:
        """One phrase saying what the file holds (the submit page)."""

    @abstractmethod
    def api_format(self, task: Task, fmt: PredictionFormat) -> dict[str, Any]:
        """The task's ``prediction_format`` in the API (public facts only)."""

    @abstractmethod
    def example_file(self, task: Task) -> ExampleFile:
        """A valid predictions file from the task's public facts (ids, categories, sizes)."""


_KINDS: dict[str, TaskKind] = {}


def register(kind: TaskKind) -> TaskKind:
    """Add a kind to the registry (once per name)."""
    if kind.name in _KINDS:
        raise ValueError(f"Task kind {kind.name!r} is registered already.")
    _KINDS[kind.name] = kind
    return kind


def get_kind(name: str) -> TaskKind:
    """The registered kind of this name (``Task.kind``)."""
    try:
        return _KINDS[name]
    except KeyError:
        raise ValueError(f"Unknown task kind {name!r}.") from None


def all_kinds() -> list[TaskKind]:
    """The registered kinds, in registration order."""
    return list(_KINDS.values())


def kind_choices() -> list[tuple[str, str]]:
    """``(name, label)`` of the registered kinds, in registration order (the API's enum of ``Task.kind``)."""
    return [(kind.name, kind.label) for kind in _KINDS.values()]


def kind_for_metric(metric: str) -> TaskKind:
    """The kind of the tasks whose headline metric is ``metric`` (the metric decides a task's kind)."""
    try:
        metric_obj = get_metric(metric)
    except (KeyError, ValueError) as exc:
        raise ApplicationError(str(exc).strip("'\""), extra={"field": "metric"}) from exc
    claimed = [kind for kind in _KINDS.values() if kind.claims(metric_obj)]
    if len(claimed) != 1:
        raise ApplicationError(
            f"The metric {metric} is not scored by one kind of task ({len(claimed)} claim it).",
            extra={"field": "metric"},
        )
    return claimed[0]


def upload_limit(kinds: Iterable[str] | None = None) -> int:
    """The largest file limit of these kinds (all registered kinds when ``None``): the bound while a
    request body streams in, before the file's task is known (the service applies the task's own
    limit before reading the file)."""
    chosen = _KINDS.values() if kinds is None else [get_kind(k) for k in kinds]
    return max(kind.upload_max_bytes() for kind in chosen)


def stream_limit(url_kwargs: dict[str, Any], *, any_kind: bool = False) -> int:
    """The limit while a body streams in, before its fields are parsed (the doors pass it to
    ``core.uploads.SizeLimitedUploadHandler``): the largest limit of the tasks the request can be about.

    A task in the address: its kind's limit. A challenge: the largest of its tasks' kinds (a challenge of
    CSV tasks keeps the tabular limit). ``any_kind`` (a new task, whose metric is a field of the body, or
    a request that sends no file): the largest of all kinds; the service then applies the new task's own
    limit before reading the file.
    """
    slug = url_kwargs.get("slug")
    task = url_kwargs.get("task") or url_kwargs.get("task_slug")
    if any_kind or not slug:
        return upload_limit()
    kinds = task_kinds(challenge_slug=slug, task_slug=task)
    return upload_limit(kinds or [DEFAULT_KIND])


class Registry:
    """The registry as the apps below scoring reach it (``challenges.ports.task_kind_registry``): they may not
    import this package, so scoring registers this object with their port at start-up."""

    def for_metric(self, metric: str) -> TaskKind:
        return kind_for_metric(metric)

    def of_task(self, task: Task) -> TaskKind:
        return get_kind(task.kind)


REGISTRY = Registry()
