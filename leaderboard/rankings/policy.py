"""What a reader may see of a task's board now: one policy class per board mode, one question every channel
asks (issue 19, item 3).

A task's ``public_mode`` names its :class:`BoardMode` in :data:`MODES`. The mode decides, for one reader of
one split of one task, whether that reader reads the board *exactly* (every row, interval, difference,
p-value, rank set, pairwise table, rank distribution, summary, each submission's score, at the board's
precision) or only what the mode *releases*; and what the released board is (its rows, signature, CSV, the
decimals of its values, the words that say why a page is not offered, a submission's release).

Every channel asks :func:`reader_view` (re-exported as ``rankings.selectors.reader_view``) and reads through
the :class:`ReaderView` it answers:

- board rows on the site and the API, both downloads, every earlier snapshot: :meth:`ReaderView.rows`,
  :meth:`ReaderView.signature`, :meth:`ReaderView.csv`, :meth:`ReaderView.entry_count`;
- a submission's score (API detail and list, ``lb``, the submission page, my submissions):
  :meth:`ReaderView.release` (``None``: the reader reads the score, as :meth:`ReaderView.value` gives it;
  else the release shown instead); the pairwise table and the rank distribution:
  :meth:`ReaderView.pairwise`, :meth:`ReaderView.distribution`;
- every page computed from the exact scores (rank distribution and its image, pairwise, entry, per-class
  details, the board rows on a submission's page, each run's value, the cross-task summary and its
  diagram, the shake-up report): :meth:`ReaderView.allows` with a :class:`Channel`, and
  :attr:`ReaderView.refusal` to say why not; a challenge-wide page asks :func:`challenge_refusal`.

Nothing outside this module decides visibility from ``public_mode`` (``tests/architecture`` greps for it).
A new mode is one subclass registered with :func:`register`; what it withholds is :meth:`BoardMode.exact_for`
and what it releases is its ``released_*`` methods. Rules that apply to every mode's exact readers (the
rounding of ``rankings.precision`` today; ranks and ties at the board's precision next) belong to
:meth:`BoardMode.exact_rows` / :meth:`BoardMode.exact_signature` / :meth:`BoardMode.exact_number`, so
every channel gets them at once.

The Ladder's releases are written by ``rankings.ladder`` (when the public board is rebuilt), with the rule
each Ladder mode gives (:meth:`LadderMode.rule`).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property
from typing import Any, ClassVar

from leaderboard.challenges.models import PublicMode, Task
from leaderboard.challenges.selectors import AnyUser, user_is_organizer
from leaderboard.rankings.board import LadderBoard, ladder_board, tied_summary
from leaderboard.rankings.exports import board_csv, csv_cell
from leaderboard.rankings.models import BoardSnapshot, ChallengeSummary, LadderRelease
from leaderboard.rankings.precision import (
    challenge_decimals,
    p_decimals,
    participant_distribution,
    participant_pairwise,
    participant_rows,
    public_distribution,
    public_pairwise,
    public_robustness,
    public_rows,
    public_signature,
    public_summary,
    round_to,
    shown_pairwise,
    task_decimals,
)
from leaderboard.scoring.models import Split


class Channel(StrEnum):
    """What a page or an answer shows, beyond the board's rows, that a mode may withhold."""

    SCORE = "score"  # a submission's own score value (API, lb, submission pages)
    RUN_VALUES = "run_values"  # each run's value of a submission
    SCORE_DETAILS = "score_details"  # per-class figures of a vision submission
    SUBMISSION_ROWS = "submission_rows"  # a submission's row(s) on the board, on its own page
    RANKS = "ranks"  # the rank distribution page and image
    PAIRWISE = "pairwise"
    ENTRY = "entry"  # the entry page: its row, runs and the team's history of scores
    SUMMARY = "summary"  # the cross-task summary and its critical-difference diagram
    SHAKEUP = "shakeup"  # public against private at the reveal


#: The answer of every channel that a Ladder board does not offer (pages: 404 with this text).
NOT_AVAILABLE = (
    "Not available under the Ladder: this task's public board releases only each team's shown value (it "
    "changes only when a new submission beats it by more than the Ladder's step), so intervals, "
    "differences, p-values, rank sets, pairwise comparisons and rank distributions of the exact scores "
    "are not shown until the final boards are revealed."
)
#: The columns of a Ladder board's rows (API rows, CSV downloads): nothing else leaves.
LADDER_COLUMNS = ["rank", "name", "team", "is_baseline", "value", "submission_id", "shown_from"]


class BoardMode:
    """The plain board: every reader who may read the split reads it exactly, at the board's precision."""

    name: ClassVar[str] = PublicMode.PLAIN
    #: The task fields this mode reads (declared and validated with the task's other settings).
    settings: ClassVar[tuple[str, ...]] = ()
    #: Does the public board's rebuild make releases (``rankings.ladder.releases_update``)?
    releases: ClassVar[bool] = False
    refusal: ClassVar[str] = "Not available."

    # --- who reads exactly --------------------------------------------------------------------------
    def exact_for(self, task: Task, split: str, user: AnyUser) -> bool:
        return True

    # --- what an exact reader reads (every mode) ------------------------------------------------------
    # Each gets the reader's view (its task, split, ``organizer``, the challenge's reveal): a rule that
    # depends on who reads (e.g. ranks and ties at the board's precision for participants before the
    # reveal) goes here, and every channel applies it.
    def exact_rows(
        self, view: ReaderView, snapshot: BoardSnapshot, start: int, stop: int | None
    ) -> list[Any]:
        if view.tied:
            return participant_rows(snapshot.rows, task_decimals(view.task))[start:stop]
        return list(public_rows(snapshot.rows, task_decimals(view.task), start, stop))

    def exact_signature(self, view: ReaderView, snapshot: BoardSnapshot | None) -> dict[str, Any]:
        return public_signature(snapshot.signature, task_decimals(view.task)) if snapshot is not None else {}

    def exact_csv(self, view: ReaderView, snapshot: BoardSnapshot | None) -> str:
        rows = snapshot.rows if snapshot is not None else []
        if view.tied:
            rows = participant_rows(rows, task_decimals(view.task))
        return board_csv(rows, task_decimals(view.task))

    def exact_pairwise(self, view: ReaderView, stored: Mapping[str, Any], rows: list[Any]) -> dict[str, Any]:
        decimals = task_decimals(view.task)
        if view.tied:
            return participant_pairwise(stored, rows, decimals)
        # the difference of two entries is that of their values as the page shows them (issue 22, P1);
        # organizers keep the counts of discordant items and the exact p-values
        shown = shown_pairwise(stored, rows, decimals)
        return shown if view.organizer else public_pairwise(shown, decimals)

    def exact_distribution(self, view: ReaderView, matrix: Any, rows: list[Any]) -> list[list[float]]:
        if view.tied:
            return participant_distribution(matrix, rows, task_decimals(view.task))
        return public_distribution(matrix, task_decimals(view.task))

    def exact_number(self, view: ReaderView, value: Any) -> Any:
        return round_to(value, task_decimals(view.task))

    def cache_key(self, view: ReaderView) -> str:
        """What the rendered board depends on besides the snapshot (the site's and the API's caches of a
        drawn board are keyed by it): a rule that depends on who reads must make this say so."""
        return f"{self.name}:{'tied' if view.tied else 'exact' if view.exact else 'released'}"

    # --- what a reader who may not read exactly reads (modes that withhold) ---------------------------
    def decimals(self, task: Task) -> int:
        """Decimals of the released values."""
        return task_decimals(task)

    def allows_released(self, channel: Channel) -> bool:
        return False

    def released_rows(self, task: Task, snapshot: BoardSnapshot | None) -> list[dict[str, Any]]:
        raise RuntimeError(f"The {self.name} board releases no rows of its own.")

    def released_signature(self, task: Task) -> dict[str, Any]:
        raise RuntimeError(f"The {self.name} board releases no signature of its own.")

    def released_csv(self, rows: list[dict[str, Any]]) -> str:
        raise RuntimeError(f"The {self.name} board releases no download of its own.")

    def release_view(self, task: Task, release: LadderRelease | None) -> dict[str, Any]:
        raise RuntimeError(f"The {self.name} board releases no scores of its own.")


class LadderMode(BoardMode):
    """The Ladder with a fixed step ``ladder_eta``: before the reveal, a non-organizer reads each team's
    shown value (it changes only when a new submission beats it by more than the step) and nothing
    computed from the exact scores; organizers, the private board and the revealed public board: exact."""

    name = PublicMode.LADDER
    settings = ("ladder_eta",)
    releases = True
    refusal = NOT_AVAILABLE
    #: Is the step in standard errors of the paired difference (read from the Scores' replicates)?
    paired: ClassVar[bool] = False
    #: The channels a Ladder reader still gets, in their released form (the board rows are always offered).
    RELEASED_CHANNELS: ClassVar[frozenset[Channel]] = frozenset()

    def exact_for(self, task: Task, split: str, user: AnyUser) -> bool:
        if split != Split.PUBLIC or task.challenge.private_revealed:
            return True
        return user_is_organizer(challenge=task.challenge, user=user)

    def decimals(self, task: Task) -> int:
        """The board's precision, or the fixed step's when that is finer."""
        decimals = task_decimals(task)
        if task.ladder_eta:
            decimals = max(decimals, math.ceil(-math.log10(task.ladder_eta) - 1e-9))
        return decimals

    def step_words(self, task: Task) -> str:
        return f"a fixed step of {task.ladder_eta:g}"

    def rule(self, task: Task, *, higher_is_better: bool, shown: float | None) -> LadderBoard:
        """One team's public value under this Ladder (a ``stats.ladder.LadderBoard``)."""
        return ladder_board(
            mode=self.name,
            higher_is_better=higher_is_better,
            eta=task.ladder_eta or 1.0,
            precision=self.decimals(task),
            z=task.ladder_z,
            shown=shown,
        )

    def allows_released(self, channel: Channel) -> bool:
        return channel in self.RELEASED_CHANNELS

    def released_rows(self, task: Task, snapshot: BoardSnapshot | None) -> list[dict[str, Any]]:
        """The released columns only, of the rows the rebuild stored (``BoardSnapshot.ladder_rows``)."""
        if snapshot is None:
            return []
        return [{c: row.get(c) for c in LADDER_COLUMNS} for row in snapshot.ladder_rows]

    def released_signature(self, task: Task) -> dict[str, Any]:
        """The signature of a Ladder board: its rule, and nothing computed from the scores."""
        return {
            "public_mode": task.public_mode,
            "ladder_eta": task.ladder_eta if "ladder_eta" in self.settings else None,
            "ladder_z": task.ladder_z if "ladder_z" in self.settings else None,
            "decimals": self.decimals(task),
            "signature_text": "Ladder board: a team's value changes only when a new submission beats it by "
            f"more than {self.step_words(task)}.",
        }

    def released_csv(self, rows: list[dict[str, Any]]) -> str:
        """A Ladder board's download: the released columns only (text cells neutralised like every CSV)."""
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\r\n")
        writer.writerow(LADDER_COLUMNS)
        for row in rows:
            writer.writerow([csv_cell(row.get(c)) for c in LADDER_COLUMNS])
        return buffer.getvalue()

    def release_view(self, task: Task, release: LadderRelease | None) -> dict[str, Any]:
        """What a participant sees of one submission's public score under the Ladder."""
        if release is None:
            return {
                "mode": task.public_mode,
                "shown": None,
                "moved": None,
                "message": "Waiting for the public board: the Ladder has not released this submission yet.",
            }
        return {
            "mode": task.public_mode,
            "shown": release.shown,
            "moved": release.moved,
            "message": release.message,
        }


class LadderFreeMode(LadderMode):
    """The parameter-free Ladder: the step is ``ladder_z`` standard errors of the paired difference between
    the new submission and the shown one (from the common bootstrap replicates every Score stores)."""

    name = PublicMode.LADDER_FREE
    settings = ("ladder_z",)
    paired = True

    def decimals(self, task: Task) -> int:
        return task_decimals(task)

    def step_words(self, task: Task) -> str:
        return f"{task.ladder_z:g} standard errors of the paired difference between the two submissions"


#: Board modes by the name a task stores in ``public_mode``.
MODES: dict[str, BoardMode] = {}


def register(mode: BoardMode) -> BoardMode:
    if mode.name in MODES:
        raise ValueError(f"A board mode named {mode.name!r} is registered already.")
    MODES[mode.name] = mode
    return mode


for _mode in (BoardMode(), LadderMode(), LadderFreeMode()):
    register(_mode)


def mode_of(task: Task) -> BoardMode:
    """The board mode of ``task`` (an unknown name is refused: a board would otherwise fall back to
    showing everything)."""
    try:
        return MODES[task.public_mode]
    except KeyError:
        raise ValueError(f"Task '{task.slug}' has an unknown board mode {task.public_mode!r}.") from None


#: Why a participant reads no rank robustness before the reveal.
ROBUSTNESS_WITHHELD = (
    "Shown once the board is revealed: the rank frequencies over the resamples order the entries by their "
    "exact values, finer than the board's rounded numbers a participant reads until then."
)


@dataclass(frozen=True)
class ReaderView:
    """What one reader may see of one split of one task, now (see the module's docstring)."""

    task: Task
    split: str
    user: AnyUser
    mode: BoardMode
    exact: bool  # the reader reads the board exactly (else: what the mode releases)

    @cached_property
    def organizer(self) -> bool:
        """Organizers read the stored numbers in full where a page offers them (the pairwise table's exact
        counts of discordant items); asked only by the pages that do."""
        return user_is_organizer(challenge=self.task.challenge, user=self.user)

    @cached_property
    def tied(self) -> bool:
        """The reader reads no more than the board's rounded values (issue 21): everyone but the
        challenge's organizers before the reveal. Entries whose values are equal at the board's precision
        share one rank, are listed by name and show the same figures (``rankings.precision.participant_rows``);
        after the reveal every reader reads the exact order."""
        return self.exact and not self.task.challenge.private_revealed and not self.organizer

    @property
    def refusal(self) -> str:
        return self.mode.refusal

    @property
    def decimals(self) -> int:
        return task_decimals(self.task) if self.exact else self.mode.decimals(self.task)

    @property
    def p_decimals(self) -> int:
        """Decimals of p-values and shares of resamples (rank probabilities) as this reader reads them."""
        return p_decimals(self.decimals)

    def allows(self, channel: Channel) -> bool:
        return self.exact or self.mode.allows_released(channel)

    @property
    def cache_key(self) -> str:
        return self.mode.cache_key(self)

    def rows(self, snapshot: BoardSnapshot | None, start: int = 0, stop: int | None = None) -> list[Any]:
        """The board's rows ``start:stop`` as this reader reads them."""
        if not self.exact:
            return self.mode.released_rows(self.task, snapshot)[start:stop]
        return self.mode.exact_rows(self, snapshot, start, stop) if snapshot is not None else []

    def value(self, value: Any) -> Any:
        """One number computed from the scores (a submission's score) as this reader reads it."""
        return self.mode.exact_number(self, value)

    def pairwise(self, snapshot: BoardSnapshot) -> dict[str, Any]:
        """The snapshot's pairwise table, in the order of :meth:`rows`: in full for organizers, else as
        ``rankings.precision`` shows it."""
        return self.mode.exact_pairwise(self, snapshot.pairwise or {}, snapshot.rows)

    def distribution(self, snapshot: BoardSnapshot, matrix: Any) -> list[list[float]]:
        """The rank distribution (shares of resamples; ``matrix``: the snapshot's, as stored), in the order of
        :meth:`rows`, rounded like p-values."""
        return self.mode.exact_distribution(self, matrix, snapshot.rows)

    def robustness(self, stored: Mapping[str, Any]) -> dict[str, Any]:
        """The snapshot's rank robustness (``rankings.board.build_robustness``; read where
        :meth:`allows` ``Channel.RANKS``): rank shares rounded like the rank distribution, the schemes'
        mean scores at the board's precision; ranks and tau-b are rank-based and stay as they are."""
        data = public_robustness(stored, task_decimals(self.task))
        if self.tied and stored.get("available", True):  # not built yet (a resolution alone) counts too
            # its rank frequencies, medians and schemes rank the entries by their exact values: before the
            # reveal a participant reads ties at the board's precision only (issue 21, item 8); what the test
            # set resolves says nothing of the order and stays
            kept = {"resolution": data["resolution"]} if "resolution" in data else {}
            return {"available": False, "reason": ROBUSTNESS_WITHHELD, **kept}
        return data

    def entry_count(self, snapshot: BoardSnapshot | None) -> int:
        if not self.exact:
            return len(self.mode.released_rows(self.task, snapshot))
        return snapshot.entry_count if snapshot is not None else 0

    def signature(self, snapshot: BoardSnapshot | None) -> dict[str, Any]:
        if not self.exact:
            return self.mode.released_signature(self.task)
        return self.mode.exact_signature(self, snapshot)

    def csv(self, snapshot: BoardSnapshot | None) -> str:
        """Every row as CSV (the one writer of the site's ``board.csv`` and the API's ``?format=csv``)."""
        if not self.exact:
            return self.mode.released_csv(self.mode.released_rows(self.task, snapshot))
        return self.mode.exact_csv(self, snapshot)

    def release(
        self, submission_id: int, releases: dict[tuple[int, int], LadderRelease] | None = None
    ) -> dict[str, Any] | None:
        """``None`` when the reader reads the submission's score; else what the mode shows instead
        (``releases``: from :func:`releases_of`, read once for many submissions)."""
        if self.allows(Channel.SCORE):
            return None
        if releases is None:
            releases = releases_of(submission_ids=[submission_id])
        return self.mode.release_view(self.task, releases.get((submission_id, self.task.pk)))


def reader_view(task: Task, split: str, user: AnyUser) -> ReaderView:
    """What ``user`` may see of the ``split`` board of ``task`` now: the one question every channel asks.

    It does not check that the split is visible at all (the private board before the reveal): the
    snapshot selectors of ``rankings.selectors`` refuse that first."""
    mode = mode_of(task)
    return ReaderView(task=task, split=split, user=user, mode=mode, exact=mode.exact_for(task, split, user))


def challenge_refusal(tasks: Iterable[Task], split: str, user: AnyUser, channel: Channel) -> str | None:
    """For a page over every task of a challenge (the summary ranks entries by every task's values):
    ``None`` when ``user`` may read ``channel`` on every task's ``split`` board, else why not (the first
    task that withholds it)."""
    for task in tasks:
        view = reader_view(task, split, user)
        if not view.allows(channel):
            return view.refusal
    return None


def summary_for(
    summary: ChallengeSummary, tasks: Iterable[Task], split: str, user: AnyUser
) -> tuple[dict[str, Any], str]:
    """The cross-task summary and its diagram as ``user`` reads them (asked after
    :func:`challenge_refusal` let the reader in): organizers, and everyone after the reveal, read the
    summary of the exact values; everyone else before the reveal reads it from the values at each task's
    precision, ties sharing their average rank (``rankings.board.tied_summary``, issue 21). Either way each
    task's values are shown at its precision (``rankings.precision.public_summary``)."""
    tasks = list(tasks)
    decimals = challenge_decimals(tasks)
    data: Mapping[str, Any] = summary.data
    svg = summary.svg
    if data.get("available") and any(reader_view(t, split, user).tied for t in tasks):
        tied = data.get("tied") or tied_summary(data, decimals, title=summary.challenge.title)
        svg = str(tied.get("svg") or "")
        data = {k: v for k, v in tied.items() if k != "svg"}
    return public_summary({k: v for k, v in data.items() if k != "tied"}, decimals), svg


def releases_of(*, submission_ids: Iterable[int]) -> dict[tuple[int, int], LadderRelease]:
    """The current releases of these submissions, by (submission id, task id)."""
    out: dict[tuple[int, int], LadderRelease] = {}
    for r in LadderRelease.objects.filter(submission_id__in=list(submission_ids)).select_related("task"):
        if r.truth_version == r.task.truth_version:
            out[(r.submission_id, r.task_id)] = r
    return out
