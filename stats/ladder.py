"""The Ladder (Blum & Hardt 2015): a public board that releases a new score only on real progress.

A public board that answers every submission with an exact score can be climbed by adaptive probing: the
boosting attack submits random label vectors, keeps those that score above chance and votes them
together, gaining on the public items while learning nothing. The Ladder answers a team's new submission
with a new score only when it beats the score the team currently shows by more than a step; otherwise it
shows the previous score again.

Two modes, as in the paper (Algorithms 1 and 2; Ladder.jl is the authors' reference code):

- ``ladder`` with a fixed step ``eta``: a new score is released when ``loss < shown - eta``, rounded to the
  nearest multiple of ``eta`` (the paper's ``[x]_eta``);
- ``ladder-free`` (parameter-free): the step is one standard error of the *paired* difference between the
  new submission and the team's current best, ``sd(l_new - l_best) / sqrt(n)`` from per-item losses (a
  one-sided paired t-test at one standard error). For a metric that is not a mean of per-item losses, the
  standard error of the paired difference comes from the common bootstrap resamples (the standard
  deviation of ``theta_new - theta_best`` over resamples), which the engine has for every metric.

Losses are "lower is better"; :class:`LadderBoard` orients any metric. :func:`boosting_attack` is the
paper's attack (Section 5.1), used by ``python -m tests.benchmarks.simulate_boosting`` (a measurement
script, not shipped) to measure how far the public score of a random-label attacker rises under each mode
(docs/comparisons.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import NDArray

Mode = Literal["plain", "ladder", "ladder-free"]
MODES: tuple[Mode, ...] = ("plain", "ladder", "ladder-free")


def round_to(value: float, step: float) -> float:
    """``[value]_step``: the nearest integer multiple of ``step`` (the Ladder's rounding)."""
    if step <= 0:
        raise ValueError("the step must be positive")
    return float(np.round(value / step) * step)


@dataclass
class LadderRelease:
    """What one submission makes the board show."""

    shown: float  # the value the team's public row shows after this submission
    moved: bool  # True when this submission became the team's shown entry
    threshold: float | None  # the improvement that was needed (None for the first submission or plain)
    reason: str  # in words, for the participant


@dataclass
class LadderBoard:
    """One team's public score under a mode (state: the shown value and the current best's losses).

    Parameters
    ----------
    mode : "plain" (every score shown, rounded to ``precision``), "ladder" (fixed ``eta``) or
        "ladder-free" (one paired standard error).
    higher_is_better : the metric's direction; the Ladder works on the loss ``-value`` when True.
    eta : the step of the fixed Ladder, in the metric's units.
    precision : decimals of the plain board's shown values (and of the parameter-free Ladder's).
    z : the parameter-free Ladder's step in paired standard errors (1 in the paper).
    """

    mode: Mode
    higher_is_better: bool = True
    eta: float = 0.01
    precision: int = 4
    z: float = 1.0  # the parameter-free Ladder's step in paired standard errors (the paper: 1)
    shown: float | None = None
    _best_losses: NDArray[np.float64] | None = field(default=None, repr=False)
    _best_replicates: NDArray[np.float64] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}")
        if self.mode == "ladder" and not self.eta > 0:
            raise ValueError("the fixed Ladder needs a positive step eta")

    def _loss(self, value: float) -> float:
        return -value if self.higher_is_better else value

    def submit(
        self,
        value: float,
        *,
        item_losses: Sequence[float] | NDArray[np.float64] | None = None,
        replicates: Sequence[float] | NDArray[np.float64] | None = None,
    ) -> LadderRelease:
        """Score one submission; return what the board shows.

        ``item_losses`` (per-item losses, lower is better) or ``replicates`` (the submission's bootstrap
        replicates on the task's common resamples) give the parameter-free Ladder its paired standard
        error; one of them is required in that mode.
        """
        if not np.isfinite(value):
            raise ValueError("the submission's value must be a finite number")
        if self.mode == "plain":
            self.shown = round(float(value), self.precision)
            return LadderRelease(self.shown, True, None, "Every submission's score is shown.")
        losses = None if item_losses is None else np.asarray(item_losses, dtype=np.float64)
        reps = None if replicates is None else np.asarray(replicates, dtype=np.float64)
        if self.mode == "ladder-free" and losses is None and reps is None:
            raise ValueError("the parameter-free Ladder needs per-item losses or bootstrap replicates")
        if self.shown is None:
            threshold = None
            moved = True
        else:
            threshold = self._threshold(losses, reps)
            moved = self._loss(value) < self._loss(self.shown) - threshold
        if not moved and self.shown is not None:
            return LadderRelease(
                self.shown,
                False,
                threshold,
                f"Not shown: the score did not beat the score on the board by more than {threshold or 0:.4g} "
                f"({self._step_words()}); the board still shows {self.shown:.{self.precision}f}.",
            )
        self.shown = (
            round_to(float(value), self.eta) if self.mode == "ladder" else round(float(value), self.precision)
        )
        self._best_losses, self._best_replicates = losses, reps
        return LadderRelease(
            self.shown,
            True,
            threshold,
            "Shown: the first submission."
            if threshold is None
            else "Shown: it beat the board by more than the step.",
        )

    def _step_words(self) -> str:
        if self.mode == "ladder":
            return "the board's fixed step"
        return "one standard error of the paired difference to the entry on the board"

    def _threshold(self, losses: NDArray[np.float64] | None, reps: NDArray[np.float64] | None) -> float:
        if self.mode == "ladder":
            return self.eta
        if losses is not None and self._best_losses is not None:
            if losses.shape != self._best_losses.shape:
                raise ValueError("per-item losses must cover the same items as the entry on the board")
            n = losses.size
            return self.z * float(np.std(losses - self._best_losses, ddof=1) / np.sqrt(n)) if n > 1 else 0.0
        if reps is not None and self._best_replicates is not None:
            if reps.shape != self._best_replicates.shape:
                raise ValueError("replicates must come from the same resamples as the entry on the board")
            return self.z * float(np.std(reps - self._best_replicates, ddof=1))
        raise ValueError(
            "give the same kind of evidence (per-item losses or replicates) for every submission"
        )


@dataclass(frozen=True)
class AttackResult:
    """One run of the boosting attack."""

    mode: Mode
    n: int
    k: int
    public_accuracy: float  # of the boosted vector, on the public items the attacker probed (exact)
    shown: float  # what the board shows for the attacker after it submits the boosted vector
    fresh_accuracy: float  # of the same vector on items it never saw (the truth: 0.5 in expectation)
    selected: int  # submissions the attacker kept


def boosting_attack(
    n: int,
    k: int,
    *,
    mode: Mode,
    rng: np.random.Generator,
    eta: float = 0.01,
    precision: int = 5,
    z: float = 1.0,
) -> AttackResult:
    """Blum & Hardt's boosting attack against a public board of ``n`` binary items in one mode.

    The attacker submits ``k`` uniformly random label vectors. On the plain board (scores shown to
    ``precision`` decimals) it keeps those scoring at least 0.5 (loss <= 0.5); under a Ladder it keeps
    those that lowered the shown loss. It then submits the majority vote of the kept vectors. Returns the
    boosted vector's accuracy on the public items and on ``n`` fresh items of the same distribution.
    """
    if n < 2 or k < 1:
        raise ValueError("the attack needs n >= 2 items and k >= 1 submissions")
    y = rng.integers(0, 2, n, dtype=np.int8)
    fresh = rng.integers(0, 2, n, dtype=np.int8)
    u = rng.integers(0, 2, (k, n), dtype=np.int8)
    losses = (u != y).astype(np.float64)  # per-item 0/1 losses, k x n
    board = LadderBoard(mode=mode, higher_is_better=True, eta=eta, precision=precision, z=z)
    keep = np.zeros(k, dtype=bool)
    previous: float | None = None
    for i in range(k):
        accuracy = 1.0 - float(losses[i].mean())
        release = board.submit(accuracy, item_losses=losses[i])
        if mode == "plain":
            keep[i] = release.shown >= 0.5
        else:
            keep[i] = release.moved and (previous is None or release.shown > previous)
            if i == 0:
                keep[i] = release.shown > 0.5
        previous = release.shown
    chosen = u[keep]
    if chosen.shape[0] == 0:
        vote = rng.integers(0, 2, n, dtype=np.int8)
    else:
        vote = (2 * chosen.sum(axis=0, dtype=np.int64) >= chosen.shape[0]).astype(np.int8)
    public_accuracy = float((vote == y).mean())
    final = board.submit(public_accuracy, item_losses=(vote != y).astype(np.float64))
    return AttackResult(
        mode=mode,
        n=n,
        k=k,
        public_accuracy=public_accuracy,
        shown=final.shown,
        fresh_accuracy=float((vote == fresh).mean()),
        selected=int(keep.sum()),
    )
